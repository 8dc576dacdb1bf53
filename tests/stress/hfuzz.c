// SPDX-License-Identifier: GPL-2.0
/*
 * hfuzz: seeded randomized interface fuzzer of /dev/hugetlb against
 * MAP_HUGETLB.
 *
 *   hfuzz [--seed S] [--procs N] [--ops N] [--seconds T]
 *
 * Each process draws mmap() calls at random: node (/dev/hugetlb, or the
 * node of any size the kernel has: x86-64 2 MB and 1 GB, arm64 64 kB, 2 MB,
 * 32 MB and 1 GB; on devtmpfs or a copy on a noexec tmpfs), descriptor mode
 * (O_RDWR, O_RDONLY), mapping type (private, shared, shared-validate,
 * none), extra flags (MAP_NORESERVE, MAP_POPULATE, MAP_LOCKED, MAP_SYNC,
 * MAP_HUGETLB with no, the node's, another or an unsupported size),
 * protection (none, r, rw, rx, rwx), length (0, 1 byte, a page less one,
 * one or two pages, more than the pool), offset (0, a page, a huge page),
 * address (none, MAP_FIXED aligned or not), and, per process, whether
 * READ_IMPLIES_EXEC is set.  It maps the node, then the same call as
 * mmap(MAP_ANONYMOUS | MAP_HUGETLB | the node's size) and requires the
 * outcomes to be equal: the same errno, or two mappings of the same size,
 * alignment and permissions.  The device's own rules are applied first:
 * EINVAL for MAP_HUGETLB (the node names the size), a nonzero offset or a
 * length that is not a multiple of the node's page size (a hugetlbfs file's
 * rule; MAP_HUGETLB rounds up), EACCES for a read-only descriptor and a
 * writable shared mapping (as /dev/zero), EPERM for PROT_EXEC from a noexec
 * mount; those cases must fail with exactly that errno.
 *
 * Lengths that may allocate (MAP_POPULATE, MAP_LOCKED, writes) stay at two
 * pages.  A pair whose outcomes differ only because one side got ENOMEM
 * while other processes held reservations is run again alone (counted as
 * "rerun"); only a difference that persists is a mismatch.  hguard checks
 * the pool and Committed_AS after.  Prints "ok - hfuzz ..." or "not ok - hfuzz ...",
 * and for each size "ok - hfuzz mapped ..." if some pair of its mapped alike.
 */
#include "hutil.h"
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/sysmacros.h>
#include <pthread.h>
#include <time.h>

#define NOEXEC_DIR "/tmp/hfuzz-noexec"
#define NMSG 16
/* Huge pages of address space reserved around a MAP_FIXED call */
#define HOLE 5

struct shared {
	/*
	 * Every call pair holds it shared; a pair that differs only by ENOMEM
	 * is run again holding it exclusive, alone: whether a reservation fits
	 * depends on what the other processes hold at that instant.
	 */
	pthread_rwlock_t lock;
	long ops, mapped, failed_alike, own_rule, mismatches, nmsg, rerun;
	long mapped_size[MAXSIZES];	/* mapped alike, by index in sizes */
	char msg[NMSG][320];
};

struct call {
	char node[96];
	unsigned long hps;
	int oflag, prot, flags, noexec;
	size_t len;
	off_t off;
	int fixed;			/* 0 none, 1 aligned, 2 4 kB off */
};

static struct shared *sh;
static uint64_t rng;
static unsigned long sizes[MAXSIZES];
static int nsizes;
static int dflt;			/* index of the default size in sizes */
static int scarce[MAXSIZES];		/* fewer than 2 pages in the pool */
static int bad_bits;			/* MAP_HUGE_* bits of no size the kernel has */
static int proc_index;

static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

/* Count a mismatch of call c and keep its message (the first NMSG of them). */
static void mismatch(const struct call *c, const char *fmt, ...)
{
	long i = __atomic_fetch_add(&sh->nmsg, 1, __ATOMIC_RELAXED);
	char what[160];
	va_list ap;

	__atomic_fetch_add(&sh->mismatches, 1, __ATOMIC_RELAXED);
	if (i >= NMSG)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(sh->msg[i], sizeof(sh->msg[i]),
		 "%s o%d prot %#x flags %#x len %zu off %ld fixed %d: %s",
		 c->node, c->oflag, c->prot, c->flags, c->len, (long)c->off,
		 c->fixed, what);
}

static void draw(struct call *c)
{
	static const int types[] = { MAP_PRIVATE, MAP_SHARED, MAP_SHARED_VALIDATE, 0 };
	static const int prots[] = { PROT_NONE, PROT_READ, PROT_READ | PROT_WRITE,
				     PROT_READ | PROT_EXEC,
				     PROT_READ | PROT_WRITE | PROT_EXEC };
	int s = rnd(nsizes + 1), size_bits;

	/* One page in the pool (1 GB): only process 0 may race for it (none) */
	if (s && scarce[s - 1] && proc_index)
		s = dflt + 1;
	c->hps = s ? sizes[s - 1] : sizes[dflt];
	c->noexec = rnd(4) == 0;
	snprintf(c->node, sizeof(c->node), "%s/%s%s",
		 c->noexec ? NOEXEC_DIR : "/dev", s ? "hugetlb-" : "hugetlb",
		 s ? dev_path(c->hps) + strlen("/dev/hugetlb-") : "");
	c->oflag = rnd(4) ? O_RDWR : O_RDONLY;
	c->prot = prots[rnd(5)];
	c->flags = types[rnd(8) < 5 ? rnd(2) : rnd(4)];
	if (!rnd(4))
		c->flags |= MAP_NORESERVE;
	if (!rnd(6))
		c->flags |= MAP_POPULATE;
	if (!rnd(8))
		c->flags |= MAP_LOCKED;
	if (!rnd(10))
		c->flags |= MAP_SYNC;
	if (!rnd(4)) {
		size_bits = (int[]){ 0, log2ul(c->hps), bad_bits,
				     log2ul(sizes[rnd(nsizes)]) }[rnd(4)];
		c->flags |= MAP_HUGETLB | size_bits << MAP_HUGE_SHIFT;
	}
	c->len = (size_t[]){ 0, 1, c->hps - 4096, c->hps, 2 * c->hps,
			     2 * c->hps + 1, 1UL << 40 }[rnd(7)];
	c->off = rnd(8) ? 0 : (off_t[]){ 4096, (off_t)c->hps }[rnd(2)];
	c->fixed = rnd(6) ? 0 : 1 + rnd(2);
	/* Calls that may allocate stay small: see the comment at the top */
	if ((c->flags & (MAP_POPULATE | MAP_LOCKED)) && c->len > 2 * c->hps)
		c->len = 2 * c->hps;
	/* MAP_FIXED stays inside the hole one() reserves for it */
	if (c->fixed && c->len > 2 * c->hps + 1)
		c->len = 2 * c->hps;
}

/* The device's own rules, in the order the kernel applies them, or 0 */
static int own_rule(const struct call *c)
{
	/* ksys_mmap_pgoff(): MAP_HUGETLB on a file that is not hugetlbfs */
	if (c->flags & MAP_HUGETLB)
		return EINVAL;
	/* the node's ->get_unmapped_area, on the length do_mmap() page-aligned */
	if (c->off || (c->len && ((c->len + 4095) & ~4095UL) % c->hps))
		return EINVAL;
	/*
	 * do_mmap() refuses a zero length, the hugetlbfs address search a
	 * misaligned MAP_FIXED, and do_mmap() a mapping type that is none of
	 * the three (EINVAL) or MAP_SYNC under MAP_SHARED_VALIDATE
	 * (EOPNOTSUPP), before or instead of the opened file's checks:
	 * compared with MAP_HUGETLB, which fails alike.
	 */
	if (!c->len || c->fixed == 2 ||
	    ((c->flags & MAP_TYPE) == MAP_SHARED_VALIDATE &&
	     (c->flags & MAP_SYNC)) ||
	    ((c->flags & MAP_TYPE) != MAP_PRIVATE &&
	     (c->flags & MAP_TYPE) != MAP_SHARED &&
	     (c->flags & MAP_TYPE) != MAP_SHARED_VALIDATE))
		return 0;
	/* As for /dev/zero: a writable shared mapping needs a writable fd */
	if (((c->flags & MAP_TYPE) == MAP_SHARED ||
	     (c->flags & MAP_TYPE) == MAP_SHARED_VALIDATE) &&
	    c->oflag == O_RDONLY && (c->prot & PROT_WRITE))
		return EACCES;
	if (c->noexec && (c->prot & PROT_EXEC))
		return EPERM;
	return 0;
}

/* "rwxp"-style permissions and length of the vma at p, or "" */
static void vma_of(void *p, char perms[5], size_t *len)
{
	unsigned long start, end, a = (unsigned long)p;
	char line[256];
	FILE *f = fopen("/proc/self/maps", "r");

	perms[0] = '\0';
	*len = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %4s", &start, &end, perms) == 3 &&
		    a >= start && a < end) {
			*len = end - start;
			break;
		}
	if (f)
		fclose(f);
}

struct outcome {
	int err;
	char perms[5];
	size_t len;
	int aligned;
};

/* Map by the device (dev) or MAP_HUGETLB, record, touch, unmap */
static void one(const struct call *c, int dev, struct outcome *o)
{
	int flags = c->flags, fd = -1;
	char *p, *hole = NULL;
	void *addr = NULL;

	if (c->fixed) {
		hole = mmap(NULL, HOLE * c->hps, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		addr = (char *)(((unsigned long)hole + c->hps - 1) & ~(c->hps - 1)) +
		       (c->fixed == 2 ? 4096 : 0);
		flags |= MAP_FIXED;
	}
	if (dev) {
		fd = open(c->node, c->oflag);
		if (fd < 0) {
			o->err = -errno;
			goto out;
		}
		p = mmap(addr, c->len, c->prot, flags, fd, c->off);
	} else {
		flags &= ~(0x3f << MAP_HUGE_SHIFT);
		p = mmap(addr, c->len, c->prot, flags | MAP_ANONYMOUS | MAP_HUGETLB |
			 log2ul(c->hps) << MAP_HUGE_SHIFT, -1, c->off);
	}
	o->err = p == MAP_FAILED ? errno : 0;
	if (!o->err) {
		vma_of(p, o->perms, &o->len);
		o->aligned = !((unsigned long)p & (c->hps - 1));
		if ((c->prot & PROT_WRITE) && !(c->flags & MAP_NORESERVE) &&
		    c->len <= 2 * c->hps)
			p[0] = 1;
		/*
		 * The whole mapping: a length that is not a multiple of the
		 * huge page size fails with EINVAL, and the mapping and its
		 * reservation would stay until the process exits.
		 */
		if (munmap(p, o->len))
			mismatch(c, "%s: munmap of the %zu bytes mapped: %s",
			       dev ? "device" : "MAP_HUGETLB", o->len, strerror(errno));
	}
	if (fd >= 0)
		close(fd);
out:
	if (hole)
		munmap(hole, HOLE * c->hps);
}

/* Compare one call pair; 1 if it differs only by an ENOMEM */
static int compare(const struct call *c, int quiet)
{
	struct outcome d = { 0 }, h = { 0 };
	int rule = own_rule(c), anon_first = !rule && rnd(2);

	/* Either order: a difference due to the order shows as both kinds */
	if (anon_first)
		one(c, 0, &h);
	one(c, 1, &d);
	if (d.err < 0) {
		mismatch(c, "open: %s", strerror(-d.err));
		return 0;
	}
	if (rule) {
		__atomic_fetch_add(&sh->own_rule, 1, __ATOMIC_RELAXED);
		/*
		 * As for /dev/zero, do_mmap() may find an argument error
		 * (length 0, a misplaced MAP_FIXED) before the access and
		 * noexec checks: then MAP_HUGETLB fails alike.
		 */
		if (d.err == EINVAL && rule != EINVAL)
			one(c, 0, &h);
		if (d.err != rule && !(d.err == EINVAL && h.err == EINVAL))
			mismatch(c, "device: %s, its own rule says %s",
			       strerror(d.err), strerror(rule));
		return 0;
	}
	/* Anonymous memory has no offset: off is 0 here */
	if (!anon_first)
		one(c, 0, &h);
	/* From a noexec node READ_IMPLIES_EXEC adds no x, unlike MAP_HUGETLB */
	if (c->noexec && !d.err && !h.err) {
		if (d.perms[2] == 'x')
			mismatch(c, "device mapping from a noexec node is %s", d.perms);
		h.perms[2] = d.perms[2];
	}
	if (d.err != h.err) {
		if (quiet && (d.err == ENOMEM || h.err == ENOMEM))
			return 1;
		mismatch(c, "device: %s, MAP_HUGETLB: %s (pool now: %ld free, %ld reserved)",
		       strerror(d.err), strerror(h.err),
		       hp_read(c->hps, "free_hugepages"),
		       hp_read(c->hps, "resv_hugepages"));
	} else if (!d.err && (strcmp(d.perms, h.perms) || d.len != h.len ||
			      !d.aligned || !h.aligned)) {
		mismatch(c, "device %s %zu aligned %d, MAP_HUGETLB %s %zu aligned %d",
		       d.perms, d.len, d.aligned, h.perms, h.len, h.aligned);
	} else {
		__atomic_fetch_add(d.err ? &sh->failed_alike : &sh->mapped, 1,
				   __ATOMIC_RELAXED);
		for (int i = 0; i < nsizes && !d.err; i++)
			if (sizes[i] == c->hps)
				__atomic_fetch_add(&sh->mapped_size[i], 1,
						   __ATOMIC_RELAXED);
	}
	return 0;
}

static void fuzz_one(void)
{
	struct call c;
	int again;

	draw(&c);
	__atomic_fetch_add(&sh->ops, 1, __ATOMIC_RELAXED);
	pthread_rwlock_rdlock(&sh->lock);
	again = compare(&c, 1);
	pthread_rwlock_unlock(&sh->lock);
	if (!again)
		return;
	__atomic_fetch_add(&sh->rerun, 1, __ATOMIC_RELAXED);
	pthread_rwlock_wrlock(&sh->lock);
	compare(&c, 0);
	pthread_rwlock_unlock(&sh->lock);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void run_proc(uint64_t seed, int i, long ops, double deadline)
{
	rng = seed * 0x9e3779b97f4a7c15ULL + i + 1;
	proc_index = i;
	if (i % 2 && personality(PER_LINUX | READ_IMPLIES_EXEC) == -1)
		_exit(2);
	for (long n = 0; n < ops && now() < deadline; n++)
		fuzz_one();
	_exit(0);
}

/* A noexec tmpfs with copies of the nodes */
static int noexec_setup(void)
{
	char path[96];
	struct stat st;

	mkdir(NOEXEC_DIR, 0700);
	if (mount("hfuzz", NOEXEC_DIR, "tmpfs", MS_NOEXEC | MS_NOSUID, "size=16k"))
		return -1;
	if (stat("/dev/hugetlb", &st) ||
	    mknod(NOEXEC_DIR "/hugetlb", S_IFCHR | 0666, st.st_rdev))
		return -1;
	for (int i = 0; i < nsizes; i++) {
		snprintf(path, sizeof(path), NOEXEC_DIR "/%s", dev_path(sizes[i]) + 5);
		if (stat(dev_path(sizes[i]), &st) ||
		    mknod(path, S_IFCHR | 0666, st.st_rdev))
			return -1;
	}
	return 0;
}

/* sizes[], the default one, the scarce ones and bad_bits; -1 on no default */
static int sizes_setup(void)
{
	unsigned long d = hp_default_size();

	nsizes = hp_sizes(sizes, MAXSIZES);
	dflt = -1;
	for (int i = 0; i < nsizes; i++) {
		scarce[i] = hp_read(sizes[i], "nr_hugepages") < 2;
		if (sizes[i] == d)
			dflt = i;
	}
	/* x86-64: 16 (64 kB); arm64, where 64 kB is a size: 17 */
	for (bad_bits = 16; bad_bits < 40; bad_bits++) {
		int taken = 0;

		for (int i = 0; i < nsizes; i++)
			taken |= sizes[i] == 1UL << bad_bits;
		if (!taken)
			break;
	}
	return dflt < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	long seed = 1, procs = 4, ops = 100000, seconds = 60;
	int status, bad_procs = 0;
	pthread_rwlockattr_t attr;
	double t0;

	const struct long_opt opts[] = {
		SEEDED_RUN_OPTS(seed, procs, ops, seconds),
	};

	if (parse_long_opts("hfuzz", argc, argv, opts,
			    sizeof(opts) / sizeof(*opts)))
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (sizes_setup()) {
		fprintf(stderr, "hfuzz: the default huge page size is not in /sys/kernel/mm/hugepages\n");
		return 1;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || noexec_setup()) {
		perror("hfuzz: setup");
		umount(NOEXEC_DIR);
		return 1;
	}
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_rwlock_init(&sh->lock, &attr);
	printf("# hfuzz --seed %ld --procs %ld --ops %ld --seconds %ld (sizes:",
	       seed, procs, ops, seconds);
	for (int i = 0; i < nsizes; i++)
		printf(" %lukB%s", sizes[i] >> 10, i == dflt ? " (default)" : "");
	printf(")\n");
	t0 = now();
	for (int i = 0; i < procs; i++)
		if (!fork())
			run_proc(seed, i, ops, t0 + seconds);
	/* A process that could not run (2: personality() refused) is a failure */
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			printf("# FAIL a fuzzing process ended with status %#x\n", status);
			bad_procs++;
		}
	umount(NOEXEC_DIR);
	rmdir(NOEXEC_DIR);
	for (int i = 0; i < sh->nmsg && i < NMSG; i++)
		printf("# FAIL %s\n", sh->msg[i]);
	printf("# hfuzz: %ld operations in %.1f s: %ld mapped alike, %ld failed alike, %ld by the device's own rules, %ld run again alone after an ENOMEM race\n",
	       sh->ops, now() - t0, sh->mapped, sh->failed_alike, sh->own_rule,
	       sh->rerun);
	for (int i = 0; i < nsizes; i++)
		printf("%sok - hfuzz mapped %lukB pages alike (%ld pairs)\n",
		       sh->mapped_size[i] ? "" : "not ", sizes[i] >> 10,
		       sh->mapped_size[i]);
	printf("%sok - hfuzz seed %ld: %ld operations by %ld processes, %ld mismatches, %d processes failed\n",
	       sh->mismatches || bad_procs ? "not " : "", seed, sh->ops, procs,
	       sh->mismatches, bad_procs);
	return sh->mismatches || bad_procs ? 1 : 0;
}
