// SPDX-License-Identifier: GPL-2.0
/*
 * hmapping: what a mapping of /dev/hugetlb does once it exists, against
 * the same on mmap(MAP_ANONYMOUS | MAP_HUGETLB), at the default huge page
 * size: fork (copy-on-write, shared), zero fill of recycled pages,
 * MAP_POPULATE and MAP_LOCKED, MAP_SYNC, length rounding, the name in
 * /proc/PID/maps, the pool back at its baseline after munmap() and after
 * exit, mprotect(), madvise(MADV_DONTNEED) and mremap() on and off a huge
 * page boundary, and on x86-64 the ia32 mmap entry points; and the
 * device's read() and write().  These were checks of the kselftest, which
 * keeps what the device itself decides (tools/testing/selftests/mm/
 * hugetlb_dev.c in kernel/patches).
 *
 * Prints one "ok - ..." / "not ok - ..." line per case; exits 1 if any
 * failed.  Needs MIN_FREE free pages of the default size; changes nothing
 * system-wide.
 */
#include "hutil.h"

#define MIN_FREE 8
#define PROT_RW (PROT_READ | PROT_WRITE)

static unsigned long P;		/* the default huge page size */

/* The smaps field of the vma at addr (kB), or -1; its maps line into line. */
static long vma_field(const void *addr, const char *field, char *line, size_t n)
{
	unsigned long start, end, a = (unsigned long)addr;
	size_t flen = strlen(field);
	char buf[256], perms[5];
	long val = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	while (f && fgets(buf, sizeof(buf), f)) {
		/* A vma's first line; no field name is hex digits and '-' */
		if (sscanf(buf, "%lx-%lx %4s", &start, &end, perms) == 3) {
			if (in)
				break;
			in = a >= start && a < end;
			if (in && line)
				snprintf(line, n, "%.*s", (int)strcspn(buf, "\n"), buf);
		} else if (in && !strncmp(buf, field, flen) && buf[flen] == ':') {
			val = strtol(buf + flen + 1, NULL, 10);
			break;
		}
	}
	if (f)
		fclose(f);
	return val;
}

static int is_zero(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i += sizeof(long))
		if (*(const long *)(p + i))
			return 0;
	return 1;
}

/* Write 'A', fork; 1 if the child saw it and its 'B' shows iff shared. */
static int fork_case(enum method m, int flags)
{
	char *p = hmap(m, P, NULL, P, PROT_RW, flags, 0);
	int st, ok;
	pid_t pid;

	if (p == MAP_FAILED)
		return -errno;
	p[0] = 'A';
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		ok = p[0] == 'A';
		p[0] = 'B';
		_exit(!ok);
	}
	ok = pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	     !WEXITSTATUS(st) && p[0] == (flags & MAP_SHARED ? 'B' : 'A');
	munmap(p, P);
	return ok;
}

/* Fill a mapping, unmap it, map again: 1 if the new one is all zero. */
static int recycled_zero(enum method m, int flags)
{
	char *p = hmap(m, P, NULL, P, PROT_RW, flags, 0);
	int ok;

	if (p == MAP_FAILED)
		return -errno;
	memset(p, 0x5a, P);
	munmap(p, P);
	p = hmap(m, P, NULL, P, PROT_RW, flags, 0);
	if (p == MAP_FAILED)
		return -errno;
	ok = is_zero(p, P);
	munmap(p, P);
	return ok;
}

static void test_fork_and_zero(void)
{
	static const int flags[] = { MAP_PRIVATE, MAP_SHARED };
	int r[2], z[2];

	for (int k = 0; k < 2; k++) {
		const char *kind = k ? "shared" : "private";

		for (int m = 0; m < 2; m++) {
			r[m] = fork_case(m, flags[k]);
			z[m] = recycled_zero(m, flags[k]);
		}
		report(r[0] == 1 && r[1] == 1,
		       "%s mapping across fork: %s (/dev/hugetlb %d, MAP_HUGETLB %d)",
		       kind, k ? "the child's write is seen" : "copy-on-write",
		       r[0], r[1]);
		report(z[0] == 1 && z[1] == 1,
		       "%s mapping of recycled pages is zero-filled (/dev/hugetlb %d, MAP_HUGETLB %d)",
		       kind, z[0], z[1]);
	}
}

/* MAP_POPULATE and MAP_LOCKED take the pages in mmap(), as free_hugepages shows. */
static void test_populate(void)
{
	static const int flags[] = { MAP_POPULATE, MAP_LOCKED };
	static const char *const name[] = { "MAP_POPULATE", "MAP_LOCKED" };
	long taken[2];

	for (int f = 0; f < 2; f++) {
		for (int m = 0; m < 2; m++) {
			long f0 = hp_read(P, "free_hugepages");
			char *p = hmap(m, P, NULL, 2 * P, PROT_RW,
				       MAP_PRIVATE | flags[f], 0);

			taken[m] = p == MAP_FAILED ? -errno :
				   f0 - hp_read(P, "free_hugepages");
			if (p != MAP_FAILED)
				munmap(p, 2 * P);
		}
		report(taken[0] == 2 && taken[1] == 2,
		       "%s takes 2 pages in mmap() (/dev/hugetlb %ld, MAP_HUGETLB %ld)",
		       name[f], taken[0], taken[1]);
	}
}

/* MAP_SYNC, which hugetlbfs does not offer; length rounding or not; the maps name. */
static void test_flags_and_names(void)
{
	static const char name[] = "/anon_hugepage (deleted)";
	int err[2], names[2];
	long rsvd[2], size[2];
	char line[256];

	for (int m = 0; m < 2; m++) {
		long r0 = hp_read(P, "resv_hugepages");
		char *p = hmap(m, P, NULL, P, PROT_RW, MAP_SHARED_VALIDATE | MAP_SYNC, 0);

		err[m] = p == MAP_FAILED ? errno : 0;
		if (p != MAP_FAILED)
			munmap(p, P);
		p = hmap(m, P, NULL, P + 1, PROT_RW, MAP_PRIVATE, 0);
		rsvd[m] = size[m] = -errno;
		if (p != MAP_FAILED)
			rsvd[m] = hp_read(P, "resv_hugepages") - r0;
		/* The device's length is a multiple of P: 2 pages for the name */
		else if (m == M_DEV)
			p = hmap(m, P, NULL, 2 * P, PROT_RW, MAP_PRIVATE, 0);
		if (p == MAP_FAILED) {
			names[m] = 0;
			continue;
		}
		line[0] = 0;
		size[m] = vma_field(p, "Size", line, sizeof(line));
		names[m] = strlen(line) > strlen(name) &&
			   !strcmp(line + strlen(line) - strlen(name), name);
		munmap(p, 2 * P);
	}
	report(err[0] == EOPNOTSUPP && err[1] == EOPNOTSUPP,
	       "MAP_SHARED_VALIDATE | MAP_SYNC fails with EOPNOTSUPP (/dev/hugetlb %s, MAP_HUGETLB %s)",
	       strerror(err[0]), strerror(err[1]));
	report(rsvd[0] == -EINVAL && rsvd[1] == 2 && size[1] == (long)(2 * P >> 10),
	       "a page + 1 byte: /dev/hugetlb refuses it (%s), MAP_HUGETLB rounds it up to 2 pages: Size %ld kB, resv +%ld",
	       rsvd[0] < 0 ? strerror(-rsvd[0]) : "mapped", size[1], rsvd[1]);
	report(names[0] && names[1], "the name in /proc/PID/maps is %s for both", name);
}

/* Map 2 private and 2 shared pages by m and touch them all; 0 if done. */
static int map_and_touch(enum method m)
{
	char *a = hmap(m, P, NULL, 2 * P, PROT_RW, MAP_PRIVATE, 0);
	char *b = hmap(m, P, NULL, 2 * P, PROT_RW, MAP_SHARED, 0);

	if (a == MAP_FAILED || b == MAP_FAILED)
		return 1;
	a[0] = a[P] = b[0] = b[P] = 1;
	munmap(a, 2 * P);
	munmap(b, 2 * P);
	return 0;
}

static void pool(long c[3])
{
	c[0] = hp_read(P, "free_hugepages");
	c[1] = hp_read(P, "resv_hugepages");
	c[2] = hp_read(P, "surplus_hugepages");
}

/* free/resv/surplus back where they were after munmap() and after exit. */
static void test_baseline(void)
{
	long b[3], a[3];
	int st;

	for (int m = 0; m < 2; m++) {
		pool(b);
		st = map_and_touch(m);
		pool(a);
		report(!st && !memcmp(a, b, sizeof(a)),
		       "%s: free/resv/surplus %ld/%ld/%ld -> %ld/%ld/%ld after munmap",
		       method_name[m], b[0], b[1], b[2], a[0], a[1], a[2]);
		fflush(stdout);
		pid_t pid = fork();

		if (pid == 0) {
			char *p = hmap(m, P, NULL, 2 * P, PROT_RW, MAP_PRIVATE, 0);

			if (p != MAP_FAILED)
				p[0] = p[P] = 1;
			_exit(p == MAP_FAILED);
		}
		st = pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		     WEXITSTATUS(st);
		pool(a);
		report(!st && !memcmp(a, b, sizeof(a)),
		       "%s: free/resv/surplus %ld/%ld/%ld -> %ld/%ld/%ld after a child's exit",
		       method_name[m], b[0], b[1], b[2], a[0], a[1], a[2]);
	}
}

/* One call on a touched private mapping, and what came of it. */
struct presult {
	int err;		/* 0, or the call's errno */
	long freed;		/* free_hugepages change across the call */
	long size_kb;		/* smaps Size of the vma afterwards */
	int data_ok;		/* the op's own content check */
};

enum pop_kind { MPROTECT, DONTNEED, MREMAP };

struct pop {
	const char *what;
	enum pop_kind kind;
	int npages;		/* mapped and touched before the call */
	long len_pages, len_extra;	/* the call's length: pages * P + extra */
	int must_work;		/* also require success and data_ok */
	long want_freed;	/* or -1 */
};

static const struct pop pops[] = {
	{ "mprotect(PROT_READ) of the whole range", MPROTECT, 2, 2, 0, 1, -1 },
	{ "mprotect(PROT_READ) of a page + 4 kB", MPROTECT, 2, 1, 4096, 0, -1 },
	{ "madvise(MADV_DONTNEED) of touched pages", DONTNEED, 2, 2, 0, 1, 2 },
	{ "madvise(MADV_DONTNEED) of a page + 4 kB", DONTNEED, 2, 1, 4096, 0, -1 },
	{ "mremap() shrinking 4 pages to 2", MREMAP, 4, 2, 0, 0, -1 },
	{ "mremap() of 3 pages to a page + 4 kB", MREMAP, 3, 1, 4096, 0, -1 },
};

static int pop_call(const struct pop *op, char *p, size_t len)
{
	switch (op->kind) {
	case MPROTECT:
		return mprotect(p, len, PROT_READ);
	case DONTNEED:
		return madvise(p, len, MADV_DONTNEED);
	default:
		/* Unmapping the original range afterwards covers what is left. */
		return mremap(p, op->npages * P, len, 0) == MAP_FAILED ? -1 : 0;
	}
}

static int pop_run(const struct pop *op, enum method m, struct presult *r)
{
	size_t maplen = op->npages * P, len = op->len_pages * P + op->len_extra;
	char *p = hmap(m, P, NULL, maplen, PROT_RW, MAP_PRIVATE, 0);
	long f0;

	if (p == MAP_FAILED)
		return -1;
	for (int i = 0; i < op->npages; i++)
		p[i * P] = 0x5a;
	f0 = hp_read(P, "free_hugepages");
	r->err = pop_call(op, p, len) ? errno : 0;
	r->freed = hp_read(P, "free_hugepages") - f0;
	r->data_ok = op->kind == DONTNEED && !op->len_extra ? is_zero(p, maplen) :
		     p[0] == 0x5a;
	r->size_kb = vma_field(p, "Size", NULL, 0);
	munmap(p, maplen);
	return 0;
}

static void test_ops(void)
{
	struct presult r[2];

	for (size_t i = 0; i < sizeof(pops) / sizeof(pops[0]); i++) {
		const struct pop *op = &pops[i];
		int mapped = !pop_run(op, M_DEV, &r[0]) && !pop_run(op, M_ANON, &r[1]);
		int same = mapped && r[0].err == r[1].err && r[0].freed == r[1].freed &&
			   r[0].size_kb == r[1].size_kb && r[0].data_ok == r[1].data_ok;
		int good = !op->must_work || (!r[0].err && r[0].data_ok);

		good = good && (op->want_freed < 0 || r[0].freed == op->want_freed);
		report(same && good,
		       "%s: /dev/hugetlb %s, freed %ld, Size %ld kB, data %d; MAP_HUGETLB %s, %ld, %ld kB, %d",
		       op->what, strerror(r[0].err), r[0].freed, r[0].size_kb, r[0].data_ok,
		       strerror(r[1].err), r[1].freed, r[1].size_kb, r[1].data_ok);
	}
}

/* The device has no read() or write(): both fail with EINVAL. */
static void test_read_write(void)
{
	char buf[16] = { 0 };
	int fd = open("/dev/hugetlb", O_RDWR);
	ssize_t r = fd < 0 ? 0 : read(fd, buf, sizeof(buf));
	int re = errno;
	ssize_t w = fd < 0 ? 0 : write(fd, buf, sizeof(buf));
	int we = errno;

	if (fd >= 0)
		close(fd);
	report(r == -1 && re == EINVAL && w == -1 && we == EINVAL,
	       "/dev/hugetlb: read() and write() fail with EINVAL (%zd %s, %zd %s)",
	       r, strerror(re), w, strerror(we));
}

#ifdef __x86_64__
/*
 * The ia32 mmap entry points, old_mmap (90) and mmap2 (192), reached with
 * int $0x80 from this 64-bit process: the kernel's compat path, the one a
 * 32-bit program's mmap() takes (CONFIG_IA32_EMULATION).
 */
struct ia32_mmap_args {
	unsigned int addr, len, prot, flags, fd, offset;
};

static unsigned int ia32_syscall(unsigned long nr, unsigned long a1,
				 unsigned long a2, unsigned long a3,
				 unsigned long a4, unsigned long a5,
				 unsigned long a6)
{
	unsigned long ret;

	/* The sixth argument goes in ebp; skip the red zone to save it */
	asm volatile("sub $128, %%rsp\n\t"
		     "push %%rbp\n\t"
		     "mov %7, %%rbp\n\t"
		     "int $0x80\n\t"
		     "pop %%rbp\n\t"
		     "add $128, %%rsp"
		     : "=a" (ret)
		     : "a" (nr), "b" (a1), "c" (a2), "d" (a3), "S" (a4),
		       "D" (a5), "r" (a6)
		     : "memory", "cc", "r8", "r9", "r10", "r11");
	return ret;
}

/* An ia32 mmap result: one page reserved, huge, below 4 GB; 0 if so. */
static int ia32_check(unsigned int ret, const char *what)
{
	long r0 = hp_read(P, "resv_hugepages") - 1;
	char *p = (char *)(unsigned long)ret;
	long kps;

	if (ret > -4096U) {
		printf("# %s: %s\n", what, strerror(-(int)ret));
		return 1;
	}
	p[0] = 1;
	kps = vma_field(p, "KernelPageSize", NULL, 0);
	munmap(p, P);
	if (hp_read(P, "resv_hugepages") != r0 || kps != (long)(P >> 10)) {
		printf("# %s: KernelPageSize %ld kB, resv not given back\n", what, kps);
		return 1;
	}
	return 0;
}

static void __attribute__((noreturn)) ia32_child(void)
{
	struct ia32_mmap_args *a;
	int fd, bad;

	a = mmap(NULL, 4096, PROT_RW, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	fd = open("/dev/hugetlb", O_RDWR);
	if (a == MAP_FAILED || fd < 0)
		_exit(1);
	*a = (struct ia32_mmap_args){ 0, P, PROT_RW, MAP_PRIVATE, fd, 0 };
	bad = ia32_check(ia32_syscall(90, (unsigned long)a, 0, 0, 0, 0, 0), "old_mmap");
	bad |= ia32_check(ia32_syscall(192, 0, P, PROT_RW, MAP_PRIVATE, fd, 0), "mmap2");
	if (ia32_syscall(192, 0, P, PROT_RW, MAP_PRIVATE, fd, 1) != (unsigned int)-EINVAL) {
		printf("# mmap2 at offset 1 did not fail with EINVAL\n");
		bad = 1;
	}
	_exit(bad);
}

static void test_ia32(void)
{
	int st = -1;
	pid_t pid;

	/* Without IA32_EMULATION, int $0x80 kills the process */
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(ia32_syscall(20, 0, 0, 0, 0, 0, 0) != (unsigned int)getpid());
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("ok - ia32 old_mmap and mmap2 # SKIP no ia32 system calls: a kernel without CONFIG_IA32_EMULATION\n");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		ia32_child();
	report(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
	       "ia32 old_mmap and mmap2 map /dev/hugetlb like mmap, offset 1 fails with EINVAL");
}
#else
static void test_ia32(void)
{
	printf("ok - ia32 old_mmap and mmap2 # SKIP not x86-64: no ia32 entry points\n");
}
#endif

int main(void)
{
	long avail;

	setvbuf(stdout, NULL, _IOLBF, 0);
	P = hp_default_size();
	avail = hp_avail(P);
	if (avail < MIN_FREE) {
		printf("not ok - hmapping needs %d free pages of %lu kB, has %ld: preallocate more (run-qemu.sh --hugepages)\n",
		       MIN_FREE, P >> 10, avail);
		return 1;
	}
	test_fork_and_zero();
	test_populate();
	test_flags_and_names();
	test_baseline();
	test_ops();
	test_read_write();
	test_ia32();
	printf("# hmapping: %d failed\n", failures);
	return failures ? 1 : 0;
}
