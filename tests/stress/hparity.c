// SPDX-License-Identifier: GPL-2.0
/*
 * hparity: /dev/hugetlb against MAP_HUGETLB where the pool, overcommit,
 * reservations given back by MADV_DONTNEED, hugetlb cgroup limits and
 * permissions decide the outcome.  Every case
 * runs once per method and both outcomes must be equal and as expected.
 * Prints one TAP-style "ok - ..." / "not ok - ..." line per case; exits 1
 * if any failed.  Run as root in a guest with at least 8 free 2 MB pages;
 * it changes sysctls and device modes and puts them back.
 */
#include <grp.h>
#include "hutil.h"

static int failures;
static long F;			/* free, unreserved 2 MB pages at start */

struct outcome {
	int err;		/* 0: mmap worked, else its errno */
	long rsvd;		/* HugePages_Rsvd (2 MB) change while mapped */
	long surp;		/* surplus_hugepages while mapped */
	long touched;		/* pages written before SIGBUS (or all) */
	long committed;		/* Committed_AS change while mapped, kB */
	long cg_rsvd, cg_usage;	/* hugetlb cgroup counters while mapped, pages */
};

static void report(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok - ", ok ? "" : "not ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!ok)
		failures++;
}

static const char *fmt_outcome(const struct outcome *o)
{
	static char buf[2][200];
	static int i;

	i ^= 1;
	snprintf(buf[i], sizeof(buf[i]),
		 "{mmap %s, rsvd %+ld, surp %ld, touched %ld, committed %+ld kB, cg rsvd %ld usage %ld}",
		 o->err ? strerror(o->err) : "ok", o->rsvd, o->surp, o->touched,
		 o->committed, o->cg_rsvd, o->cg_usage);
	return buf[i];
}

static int same_outcome(const struct outcome *a, const struct outcome *b)
{
	return a->err == b->err && a->rsvd == b->rsvd && a->surp == b->surp &&
	       a->touched == b->touched && a->committed == b->committed &&
	       a->cg_rsvd == b->cg_rsvd && a->cg_usage == b->cg_usage;
}

/* Both methods must give the same outcome, equal to want. */
static void check_pair(const char *name, const struct outcome o[2],
		       const struct outcome *want)
{
	int same = same_outcome(&o[0], &o[1]);
	int good = same_outcome(&o[0], want);

	report(same && good, "%s: /dev/hugetlb %s, MAP_HUGETLB %s%s%s", name,
	       fmt_outcome(&o[0]), fmt_outcome(&o[1]),
	       good ? "" : ", want ", good ? "" : fmt_outcome(want));
}

static const char *cg_dir;	/* the cgroup a case runs in, or NULL */

static long cg_read(const char *file)
{
	char path[256];
	long v;

	snprintf(path, sizeof(path), "%s/%s", cg_dir, file);
	v = read_long(path);
	return v < 0 ? v : (long)(v / MB2);
}

/*
 * One mapping of npages 2 MB pages by method m with flags; touches up to
 * ntouch pages (stops at the first SIGBUS) and measures while mapped.
 */
static struct outcome map_case(enum method m, long npages, int flags,
			       long ntouch, int measure_commit)
{
	struct outcome o = { 0 };
	long rsvd0 = hp_read(MB2, "resv_hugepages");
	long com0 = measure_commit ? committed_as_exact() : 0;
	size_t len = npages * MB2;
	char *p;
	long i;

	p = hmap(m, MB2, NULL, len, PROT_READ | PROT_WRITE, flags, 0);
	if (p == MAP_FAILED) {
		o.err = errno;
		return o;
	}
	o.rsvd = hp_read(MB2, "resv_hugepages") - rsvd0;
	if (measure_commit)
		o.committed = committed_as_exact() - com0;
	for (i = 0; i < ntouch && i < npages; i++) {
		if (touch_write((uint64_t *)(p + i * MB2), i + 1))
			break;
		o.touched++;
	}
	o.surp = hp_read(MB2, "surplus_hugepages");
	if (cg_dir) {
		o.cg_rsvd = cg_read("hugetlb.2MB.rsvd.current");
		o.cg_usage = cg_read("hugetlb.2MB.current");
	}
	munmap(p, len);
	return o;
}

static void both(struct outcome o[2], long npages, int flags, long ntouch,
		 int measure_commit)
{
	for (int m = 0; m < 2; m++)
		o[m] = map_case(m, npages, flags, ntouch, measure_commit);
}

static struct outcome want(int err, long rsvd, long surp, long touched)
{
	struct outcome w = { .err = err, .rsvd = rsvd, .surp = surp,
			     .touched = touched };
	return w;
}

static const char *const kind[] = { "private", "shared" };
static const int kflag[] = { MAP_PRIVATE, MAP_SHARED };

static void test_exhaustion(void)
{
	struct outcome o[2], w;
	char name[128];

	for (int k = 0; k < 2; k++) {
		snprintf(name, sizeof(name), "%s mapping of all %ld free pages reserves them all, touches without SIGBUS",
			 kind[k], F);
		both(o, F, kflag[k], F, 0);
		w = want(0, F, 0, F);
		check_pair(name, o, &w);

		snprintf(name, sizeof(name), "%s mapping of %ld pages (one more than free) fails with ENOMEM at mmap",
			 kind[k], F + 1);
		both(o, F + 1, kflag[k], F + 1, 0);
		w = want(ENOMEM, 0, 0, 0);
		check_pair(name, o, &w);

		snprintf(name, sizeof(name), "%s MAP_NORESERVE mapping of %ld pages maps, reserves nothing, SIGBUS at fault %ld",
			 kind[k], F + 1, F + 1);
		both(o, F + 1, kflag[k] | MAP_NORESERVE, F + 1, 0);
		w = want(0, 0, 0, F);
		check_pair(name, o, &w);
	}
}

static void test_surplus(void)
{
	long old = hp_read(MB2, "nr_overcommit_hugepages");
	struct outcome o[2], w;
	char name[160];
	const long S = 4;

	if (hp_write(MB2, "nr_overcommit_hugepages", S)) {
		report(0, "surplus: cannot set nr_overcommit_hugepages: %s",
		       strerror(errno));
		return;
	}
	for (int k = 0; k < 2; k++) {
		snprintf(name, sizeof(name), "nr_overcommit_hugepages=%ld: %s mapping of %ld pages reserves %ld surplus pages at mmap",
			 S, kind[k], F + S, S);
		both(o, F + S, kflag[k], F + S, 0);
		w = want(0, F + S, S, F + S);
		check_pair(name, o, &w);

		snprintf(name, sizeof(name), "nr_overcommit_hugepages=%ld: %s mapping of %ld pages fails with ENOMEM",
			 S, kind[k], F + S + 1);
		both(o, F + S + 1, kflag[k], 0, 0);
		w = want(ENOMEM, 0, 0, 0);
		check_pair(name, o, &w);

		snprintf(name, sizeof(name), "nr_overcommit_hugepages=%ld: %s MAP_NORESERVE of %ld pages gets %ld surplus pages at fault, then SIGBUS",
			 S, kind[k], F + S + 2, S);
		both(o, F + S + 2, kflag[k] | MAP_NORESERVE, F + S + 2, 0);
		w = want(0, 0, S, F + S);
		check_pair(name, o, &w);
	}
	hp_write(MB2, "nr_overcommit_hugepages", old);
	report(hp_read(MB2, "surplus_hugepages") == 0,
	       "surplus pages go back to the buddy allocator after munmap (surplus_hugepages %ld)",
	       hp_read(MB2, "surplus_hugepages"));
}

/*
 * Refault after MADV_DONTNEED, with the rest of the pool taken by another
 * mapping.  A private page's first fault (a read too) uses up its
 * reservation; zapping the page gives it back, but only while the pool
 * has no surplus pages (6.12 __unmap_hugepage_range()), so the refault
 * SIGBUSes if a surplus page existed at the zap.  A shared page stays in
 * the file and reads back.  Returns 1 on SIGBUS, -1 if a step failed;
 * *avail is the free, unreserved page count just after the zap.
 */
static int refault(enum method m, int flags, int with_surplus, long *avail)
{
	long old = hp_read(MB2, "nr_overcommit_hugepages");
	char *p, *q = MAP_FAILED;
	long qpages = F - 1;
	int ret = -1;
	uint64_t v;

	*avail = -1;
	p = hmap(m, MB2, NULL, MB2, PROT_READ | PROT_WRITE, flags, 0);
	if (p == MAP_FAILED)
		return -1;
	if (touch_read((uint64_t *)p, &v))
		goto out;
	/* F - 1 free pages and one surplus page: reserved by q. */
	if (with_surplus) {
		qpages = F;
		if (hp_write(MB2, "nr_overcommit_hugepages", 1))
			goto out;
		q = hmap(m, MB2, NULL, qpages * MB2, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE, 0);
		hp_write(MB2, "nr_overcommit_hugepages", old);
		if (q == MAP_FAILED || hp_read(MB2, "surplus_hugepages") != 1)
			goto out;
	}
	if (madvise(p, MB2, MADV_DONTNEED))
		goto out;
	*avail = hp_avail(MB2);
	if (!with_surplus) {
		qpages = *avail;
		q = hmap(m, MB2, NULL, qpages * MB2, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE, 0);
		if (q == MAP_FAILED)
			goto out;
	}
	ret = touch_read((uint64_t *)p, &v);
out:
	if (q != MAP_FAILED)
		munmap(q, qpages * MB2);
	munmap(p, MB2);
	return ret;
}

static void test_refault(void)
{
	static const struct {
		int flags, with_surplus, sigbus;
		const char *what;
	} c[] = {
		{ MAP_PRIVATE, 0, 0, "private page read, MADV_DONTNEED: reservation given back, refault works with the pool taken" },
		{ MAP_PRIVATE, 1, 1, "private page read, MADV_DONTNEED while a surplus page exists: reservation lost, refault SIGBUSes with the pool taken" },
		{ MAP_SHARED, 0, 0, "shared page read, MADV_DONTNEED: page stays in the file, refault reads it with the pool taken" },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		/*
		 * Unreserved after the zap: all but p's page (reserved again,
		 * or still in the file), or none where q holds the rest.
		 */
		long avail[2], want = c[i].with_surplus ? 0 : F - 1;
		int sigbus[2];

		for (int m = 0; m < 2; m++)
			sigbus[m] = refault(m, c[i].flags, c[i].with_surplus,
					    &avail[m]);
		report(sigbus[0] == c[i].sigbus && sigbus[1] == c[i].sigbus &&
		       avail[0] == want && avail[1] == want,
		       "%s (/dev/hugetlb: %ld free after the zap, SIGBUS %d; MAP_HUGETLB: %ld, %d; want %ld, %d)",
		       c[i].what, avail[0], sigbus[0], avail[1], sigbus[1],
		       want, c[i].sigbus);
	}
}

static void test_overcommit_never(void)
{
	const char *pol = "/proc/sys/vm/overcommit_memory";
	long old = read_long(pol), com0, d;
	struct outcome o[2], w;
	char name[160];
	void *p;

	if (write_long(pol, 2)) {
		report(0, "overcommit_memory=2: cannot set it: %s", strerror(errno));
		return;
	}
	/* The measurement itself: a private anonymous mapping is charged. */
	com0 = committed_as_exact();
	p = mmap(NULL, 8 * MB2, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	d = committed_as_exact() - com0;
	if (p != MAP_FAILED)
		munmap(p, 8 * MB2);
	report(p != MAP_FAILED && d == 8 * MB2 / 1024,
	       "overcommit_memory=2: a 16 MB private anonymous mapping charges Committed_AS 16384 kB (got %+ld kB)",
	       d);

	for (int k = 0; k < 2; k++) {
		snprintf(name, sizeof(name), "overcommit_memory=2: %s mapping of %ld pages: reserved from the pool, not charged to Committed_AS",
			 kind[k], F);
		both(o, F, kflag[k], 1, 1);
		w = want(0, F, 0, 1);
		check_pair(name, o, &w);

		snprintf(name, sizeof(name), "overcommit_memory=2: %s mapping of %ld pages fails with ENOMEM",
			 kind[k], F + 1);
		both(o, F + 1, kflag[k], 0, 1);
		w = want(ENOMEM, 0, 0, 0);
		check_pair(name, o, &w);

		snprintf(name, sizeof(name), "overcommit_memory=2: %s MAP_NORESERVE of %ld pages is honoured (no reservation, no charge)",
			 kind[k], 4 * F);
		both(o, 4 * F, kflag[k] | MAP_NORESERVE, 1, 1);
		w = want(0, 0, 0, 1);
		check_pair(name, o, &w);
	}
	write_long(pol, old);
}

/*
 * Runs map_case() for both methods in a child process that joined a new
 * cgroup under base with the given limits (pages; -1: no limit).
 */
static void cg_case(const char *base, const char *name, long npages, int flags,
		    long ntouch, long rsvd_max, long max, const struct outcome *w)
{
	struct outcome o[2];
	char dir[256], path[300];
	int fds[2];

	for (int m = 0; m < 2; m++) {
		snprintf(dir, sizeof(dir), "%s/hparity", base);
		mkdir(dir, 0755);
		snprintf(path, sizeof(path), "%s/hugetlb.2MB.rsvd.max", dir);
		if (rsvd_max >= 0)
			write_long(path, rsvd_max * MB2);
		snprintf(path, sizeof(path), "%s/hugetlb.2MB.max", dir);
		if (max >= 0)
			write_long(path, max * MB2);
		if (pipe(fds))
			return;
		if (!fork()) {
			char me[32];

			snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
			snprintf(me, sizeof(me), "%d", getpid());
			if (write_str(path, me))
				_exit(1);
			cg_dir = dir;
			o[m] = map_case(m, npages, flags, ntouch, 0);
			if (write(fds[1], &o[m], sizeof(o[m])) != sizeof(o[m]))
				_exit(1);
			_exit(0);
		}
		close(fds[1]);
		memset(&o[m], 0xff, sizeof(o[m]));
		if (read(fds[0], &o[m], sizeof(o[m])) != sizeof(o[m]))
			o[m].err = -1;
		close(fds[0]);
		wait(NULL);
		cg_dir = dir;
		if (cg_read("hugetlb.2MB.current") || cg_read("hugetlb.2MB.rsvd.current"))
			report(0, "%s (%s): cgroup still charged after exit: usage %ld rsvd %ld pages",
			       name, method_name[m], cg_read("hugetlb.2MB.current"),
			       cg_read("hugetlb.2MB.rsvd.current"));
		cg_dir = NULL;
		for (int i = 0; i < 50 && rmdir(dir) && errno == EBUSY; i++)
			usleep(100000);
	}
	check_pair(name, o, w);
}

static void test_cgroup(void)
{
	const char *base = getenv("HGUARD_CGROUP");
	struct outcome w;
	char name[200];

	if (!base) {
		base = "/sys/fs/cgroup";
		write_str("/sys/fs/cgroup/cgroup.subtree_control", "+hugetlb");
	}
	for (int k = 0; k < 2; k++) {
		snprintf(name, sizeof(name), "cgroup hugetlb.2MB.rsvd.max=4 pages: %s mapping of 5 pages fails with ENOMEM",
			 kind[k]);
		w = want(ENOMEM, 0, 0, 0);
		cg_case(base, name, 5, kflag[k], 5, 4, -1, &w);

		snprintf(name, sizeof(name), "cgroup hugetlb.2MB.rsvd.max=4 pages: %s mapping of 4 pages charges rsvd 4, then usage 4 when touched",
			 kind[k]);
		w = want(0, 4, 0, 4);
		w.cg_rsvd = 4;
		w.cg_usage = 4;
		cg_case(base, name, 4, kflag[k], 4, 4, -1, &w);

		/* A fault that consumes no reservation charges rsvd then. */
		snprintf(name, sizeof(name), "cgroup hugetlb.2MB.rsvd.max=0: %s MAP_NORESERVE mapping maps, SIGBUS at the first fault",
			 kind[k]);
		w = want(0, 0, 0, 0);
		cg_case(base, name, 4, kflag[k] | MAP_NORESERVE, 2, 0, -1, &w);

		snprintf(name, sizeof(name), "cgroup hugetlb.2MB.max=3 pages: %s mapping of 5 pages maps, SIGBUS at the 4th fault",
			 kind[k]);
		w = want(0, 5, 0, 3);
		w.cg_rsvd = 5;
		w.cg_usage = 3;
		cg_case(base, name, 5, kflag[k], 5, -1, 3, &w);

		snprintf(name, sizeof(name), "cgroup hugetlb.2MB.max=3 pages: %s MAP_NORESERVE of 5 pages, SIGBUS at the 4th fault",
			 kind[k]);
		w = want(0, 0, 0, 3);
		w.cg_rsvd = 3;
		w.cg_usage = 3;
		cg_case(base, name, 5, kflag[k] | MAP_NORESERVE, 5, -1, 3, &w);
	}
}

/* As uid/gid 1000 (the guest's "tester"): open mode, then mmap flags. */
static int as_tester(const char *path, int omode, int mflags, int *open_err)
{
	int fds[2], res[2] = { -1, -1 };

	if (pipe(fds))
		return -1;
	if (!fork()) {
		int fd;
		void *p;

		if (setgroups(0, NULL) || setgid(1000) || setuid(1000))
			_exit(1);
		res[1] = 0;
		fd = path ? open(path, omode) : -1;
		res[0] = path && fd < 0 ? errno : 0;
		if (!res[0]) {
			p = path ? mmap(NULL, MB2, PROT_READ, mflags, fd, 0)
				 : hmap(M_ANON, MB2, NULL, MB2, PROT_READ | PROT_WRITE,
					mflags, 0);
			res[1] = p == MAP_FAILED ? errno : 0;
			if (p != MAP_FAILED && (mflags & MAP_PRIVATE) &&
			    !mprotect(p, MB2, PROT_READ | PROT_WRITE))
				*(volatile char *)p = 1;
		}
		if (write(fds[1], res, sizeof(res)) != sizeof(res))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], res, sizeof(res)) != sizeof(res))
		res[0] = res[1] = -1;
	close(fds[0]);
	wait(NULL);
	*open_err = res[0];
	return res[1];
}

static void test_permissions(void)
{
	const char *nodes[] = { "/dev/hugetlb", "/dev/hugetlb-2048kB",
				"/dev/hugetlb-1048576kB" };
	int oe, me;
	struct stat st;

	for (int i = 0; i < 3; i++) {
		if (stat(nodes[i], &st)) {
			report(0, "%s exists: %s", nodes[i], strerror(errno));
			continue;
		}
		report(S_ISCHR(st.st_mode) && (st.st_mode & 07777) == 0666,
		       "%s is a character device of mode 0666 (mode %04o)",
		       nodes[i], st.st_mode & 07777);
	}
	me = as_tester("/dev/hugetlb", O_RDWR, MAP_SHARED, &oe);
	report(oe == 0 && me == 0,
	       "mode 0666: uid 1000 opens /dev/hugetlb read-write and maps it shared (open %s, mmap %s)",
	       strerror(oe), strerror(me));
	me = as_tester("/dev/hugetlb", O_RDONLY, MAP_PRIVATE, &oe);
	report(oe == 0 && me == 0,
	       "mode 0666: uid 1000, read-only descriptor: MAP_PRIVATE works (mmap %s)",
	       strerror(me));
	me = as_tester("/dev/hugetlb", O_RDONLY, MAP_SHARED, &oe);
	report(oe == 0 && me == EACCES,
	       "mode 0666: uid 1000, read-only descriptor: MAP_SHARED fails with EACCES (mmap %s)",
	       strerror(me));
	me = as_tester(NULL, 0, MAP_PRIVATE, &oe);
	report(me == 0, "uid 1000 may map MAP_HUGETLB too, the parity reference (mmap %s)",
	       strerror(me));

	if (chmod("/dev/hugetlb", 0600)) {
		report(0, "chmod 0600 /dev/hugetlb: %s", strerror(errno));
		return;
	}
	as_tester("/dev/hugetlb", O_RDWR, MAP_SHARED, &oe);
	report(oe == EACCES, "mode 0600: uid 1000 cannot open /dev/hugetlb read-write (open %s)",
	       strerror(oe));
	as_tester("/dev/hugetlb", O_RDONLY, MAP_PRIVATE, &oe);
	report(oe == EACCES, "mode 0600: uid 1000 cannot open /dev/hugetlb read-only (open %s)",
	       strerror(oe));
	{
		int fd = open("/dev/hugetlb", O_RDWR);
		void *p = fd < 0 ? MAP_FAILED :
			mmap(NULL, MB2, PROT_READ, MAP_PRIVATE, fd, 0);

		report(p != MAP_FAILED, "mode 0600: root still maps it (%s)",
		       p == MAP_FAILED ? strerror(errno) : "ok");
		if (p != MAP_FAILED)
			munmap(p, MB2);
		if (fd >= 0)
			close(fd);
	}
	chmod("/dev/hugetlb", 0666);
}

/* Argument errors: both methods must fail alike (or succeed alike). */
static void test_arguments(void)
{
	static const struct {
		const char *what;
		size_t len;
		int flags;
		long fixed_off;		/* MAP_FIXED at aligned base + this */
		int want;
	} cases[] = {
		{ "length 0", 0, MAP_PRIVATE, -1, EINVAL },
		{ "length 2^47", 1UL << 47, MAP_PRIVATE, -1, ENOMEM },
		{ "neither MAP_PRIVATE nor MAP_SHARED", MB2, 0, -1, EINVAL },
		{ "MAP_FIXED at an address 4 kB past a huge page boundary",
		  MB2, MAP_PRIVATE | MAP_FIXED, 4096, EINVAL },
		{ "MAP_FIXED at a huge page aligned address", MB2,
		  MAP_SHARED | MAP_FIXED, 0, 0 },
		{ "length 2 MB + 4 kB (rounded up to 4 MB)", MB2 + 4096,
		  MAP_PRIVATE, -1, 0 },
	};
	char *area = mmap(NULL, 8 * MB2, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *base = (char *)(((uintptr_t)area + MB2 - 1) & ~(MB2 - 1));
	int err[2];
	long rsvd[2];

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int m = 0; m < 2; m++) {
			long r0 = hp_read(MB2, "resv_hugepages");
			void *addr = cases[i].fixed_off >= 0 ?
				base + MB2 + cases[i].fixed_off : NULL;
			char *p = hmap(m, MB2, addr, cases[i].len,
				       PROT_READ | PROT_WRITE, cases[i].flags, 0);

			err[m] = p == MAP_FAILED ? errno : 0;
			rsvd[m] = hp_read(MB2, "resv_hugepages") - r0;
			/* A length that ends inside a huge page cannot be unmapped. */
			if (p != MAP_FAILED)
				munmap(p, (cases[i].len + MB2 - 1) & ~(MB2 - 1));
		}
		report(err[0] == err[1] && err[0] == cases[i].want && rsvd[0] == rsvd[1],
		       "%s: /dev/hugetlb %s (rsvd %+ld), MAP_HUGETLB %s (rsvd %+ld), want %s",
		       cases[i].what, strerror(err[0]), rsvd[0], strerror(err[1]),
		       rsvd[1], strerror(cases[i].want));
	}

	/* Splitting a huge page: munmap/mprotect off a huge page boundary. */
	for (int m = 0; m < 2; m++) {
		char *p = hmap(m, MB2, NULL, 2 * MB2, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE, 0);

		err[m] = p == MAP_FAILED ? -errno : 0;
		if (p == MAP_FAILED)
			continue;
		err[m] = munmap(p + 4096, 4096) ? errno : 0;
		rsvd[m] = mprotect(p + MB2 + 4096, MB2 - 4096, PROT_READ) ? errno : 0;
		munmap(p, 2 * MB2);
	}
	report(err[0] == EINVAL && err[1] == EINVAL && rsvd[0] == EINVAL &&
	       rsvd[1] == EINVAL,
	       "munmap and mprotect inside a huge page fail with EINVAL (/dev/hugetlb %s/%s, MAP_HUGETLB %s/%s)",
	       strerror(err[0]), strerror(rsvd[0]), strerror(err[1]),
	       strerror(rsvd[1]));

	/* Device-only rule: every mapping is a new object at offset 0. */
	{
		char *p = hmap(M_DEV, MB2, NULL, MB2, PROT_READ, MAP_PRIVATE, MB2);

		report(p == MAP_FAILED && errno == EINVAL,
		       "/dev/hugetlb at a nonzero offset fails with EINVAL (%s)",
		       p == MAP_FAILED ? strerror(errno) : "mapped");
		if (p != MAP_FAILED)
			munmap(p, MB2);
	}
	munmap(area, 8 * MB2);
}

static void test_1g(void)
{
	long avail = hp_avail(GB1);
	int err[2], err2[2];
	long rsvd[2];

	if (avail < 1) {
		printf("ok - 1 GB pages # SKIP no free 1 GB page in the pool\n");
		return;
	}
	for (int m = 0; m < 2; m++) {
		long r0 = hp_read(GB1, "resv_hugepages");
		void *p = hmap(m, GB1, NULL, avail * GB1, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE, 0);

		err[m] = p == MAP_FAILED ? errno : 0;
		rsvd[m] = hp_read(GB1, "resv_hugepages") - r0;
		if (p != MAP_FAILED)
			munmap(p, avail * GB1);
		p = hmap(m, GB1, NULL, (avail + 1) * GB1, PROT_READ | PROT_WRITE,
			 MAP_SHARED, 0);
		err2[m] = p == MAP_FAILED ? errno : 0;
		if (p != MAP_FAILED)
			munmap(p, (avail + 1) * GB1);
	}
	report(!err[0] && !err[1] && rsvd[0] == avail && rsvd[1] == avail &&
	       err2[0] == ENOMEM && err2[1] == ENOMEM,
	       "1 GB pages: %ld free reserve (/dev/hugetlb-1048576kB %s rsvd %+ld, MAP_HUGE_1GB %s rsvd %+ld); one more: ENOMEM (%s, %s)",
	       avail, strerror(err[0]), rsvd[0], strerror(err[1]), rsvd[1],
	       strerror(err2[0]), strerror(err2[1]));
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	touch_init();
	F = hp_avail(MB2);
	if (F < 8 || hp_read(MB2, "surplus_hugepages") != 0) {
		printf("not ok - hparity needs >= 8 free 2 MB pages and no surplus (free %ld)\n",
		       F);
		return 1;
	}
	test_arguments();
	test_permissions();
	test_exhaustion();
	test_surplus();
	test_refault();
	test_overcommit_never();
	test_cgroup();
	test_1g();
	printf("# hparity: %d failed\n", failures);
	return failures ? 1 : 0;
}
