// SPDX-License-Identifier: GPL-2.0
/*
 * preload_probe.c - exercises what bench/realprog/hugepreload.c interposes,
 * for tests/bench/test_preload.py, which runs it under the library with
 * each backing and checks what it prints:
 *
 *   preload_probe [BIG]
 *   preload_probe conform
 *
 * Each line is "ok NAME", "not ok NAME: why" (the probe's own checks:
 * contents kept, calls succeeding), or "NAME KEY=VALUE..." with what the
 * kernel did (errno of a call, smaps' KernelPageSize and AnonHugePages of
 * the mapping at an address), which the test judges per backing.  BIG:
 * also malloc and mmap BIG bytes (the fallback test gives more than the
 * pool holds).  Exit status 1 when any "not ok" was printed.
 *
 * conform: the malloc family's answers, one "case NAME KEY=VALUE..." line
 * per call (null, errno when it failed, alignment, zeroing, usable size,
 * contents kept, and the pages of big aligned blocks), which the test
 * compares with the same probe's answers without the preload: glibc's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MB (1UL << 20)
#define RW (PROT_READ | PROT_WRITE)
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)

static int failed;

static void check(int ok, const char *name, const char *why)
{
	printf(ok ? "ok %s\n" : "not ok %s: %s\n", name, why);
	failed |= !ok;
}

/* smaps' KernelPageSize and AnonHugePages (kB) of the mapping holding p */
static void pages(const void *p, const char *name)
{
	unsigned long a = (unsigned long)p, s, e, v, kps = 0, ahp = 0;
	char line[512];
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			if (in)
				break;
			in = a >= s && a < e;
		} else if (in && sscanf(line, "KernelPageSize: %lu", &v) == 1) {
			kps = v;
		} else if (in && sscanf(line, "AnonHugePages: %lu", &v) == 1) {
			ahp = v;
		}
	}
	if (f)
		fclose(f);
	printf("%s kernel_page_kb=%lu anon_huge_kb=%lu\n", name, kps, ahp);
}

/* 1 if [p, p + len) is mapped at all (mincore fails with ENOMEM if not) */
static int mapped(const void *p, size_t len)
{
	unsigned char vec[1024];

	return mincore((void *)p, len, vec) == 0;
}

static void fill(char *p, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len; i += 4096)
		p[i] = (char)(i / 4096 + seed);
	p[len - 1] = (char)seed;
}

static int same(const char *p, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len; i += 4096)
		if (p[i] != (char)(i / 4096 + seed))
			return 0;
	return p[len - 1] == (char)seed;
}

static int pages_same(const char *p, size_t len, int seed);

static void probe_malloc(void)
{
	char *p = malloc(8 * MB), *b = malloc(100), *c;
	int *z;
	void *al = NULL;
	size_t i;

	fill(p, 8 * MB, 1);
	pages(p, "malloc8M");
	/* between the default threshold (1 MB) and one 2 MB page */
	c = malloc(3 * MB / 2);
	fill(c, 3 * MB / 2, 3);
	pages(c, "malloc1536K");
	free(c);
	check(malloc_usable_size(p) >= 8 * MB, "malloc_usable_size", "short");
	free(p);
	strcpy(b, "kept across realloc");
	b = realloc(b, 4 * MB);
	check(b && !strcmp(b, "kept across realloc"), "realloc small to big",
	      "contents lost");
	fill(b + 64, 4 * MB - 64, 2);
	pages(b, "realloc4M");
	b = realloc(b, 12 * MB);
	check(b && same(b + 64, 4 * MB - 64, 2), "realloc big to bigger",
	      "contents lost");
	c = realloc(b, 3 * MB);
	check(c == b && c[64] == (char)2, "realloc big to smaller in place",
	      "moved or lost");
	free(c);
	z = calloc(4 * MB / sizeof(int), sizeof(int));
	for (i = 0; z && i < 4 * MB / sizeof(int) && !z[i]; i++)
		;
	check(z && i == 4 * MB / sizeof(int), "calloc zeroed", "not zero");
	free(z);
	check(!posix_memalign(&al, 4096, 4 * MB) && al &&
	      !((unsigned long)al & 4095), "posix_memalign 4096", "failed");
	free(al);
}

/*
 * A split whose tail ends in rounding slack: 7M+5 asked, 8M backed on 2 MB
 * pages.  After a hole is punched the tail still ends at the caller's end,
 * so an munmap up to there takes the slack with it, as for the whole
 * mapping; a tail the table lost is a plain mapping to the preload, and
 * the kernel then leaves the slack (thp) or refuses the unaligned end
 * (MAP_HUGETLB).
 */
static void probe_split_slack(void)
{
	char *r = mmap(NULL, 7 * MB + 5, RW, ANON, -1, 0);
	int rc;

	check(r != MAP_FAILED, "mmap 7M+5", strerror(errno));
	if (r == MAP_FAILED)
		return;
	fill(r, 7 * MB + 5, 5);
	check(!munmap(r + 2 * MB, 2 * MB), "munmap 2M in 7M+5", strerror(errno));
	rc = munmap(r + 4 * MB, 3 * MB + 5);
	printf("split_tail_slack rc=%d mapped=%d\n", rc,
	       mapped(r + 7 * MB + 4096, 4096));
	munmap(r, 2 * MB);
}

static void probe_munmap(void)
{
	char *q = mmap(NULL, 3 * MB + 5, RW, ANON, -1, 0), *r, *t;
	int rc, e;

	check(q != MAP_FAILED, "mmap 3M+5", strerror(errno));
	if (q == MAP_FAILED)
		return;
	fill(q, 3 * MB + 5, 3);
	pages(q, "mmap3M");
	check(!munmap(q, 3 * MB + 5), "munmap 3M+5", strerror(errno));
	check(!mapped(q, 4096), "munmap 3M+5 unmaps", "still mapped");
	/* on 2 MB pages the rounding slack up to 4 MB is the mapping's too */
	printf("munmap_slack mapped=%d\n", mapped(q + 3 * MB + 4096, 4096));
	r = mmap(NULL, 8 * MB, RW, ANON, -1, 0);
	check(r != MAP_FAILED, "mmap 8M", strerror(errno));
	if (r == MAP_FAILED)
		return;
	fill(r, 8 * MB, 4);
	rc = munmap(r + 4096, 4096);
	e = errno;
	printf("munmap_unaligned rc=%d errno=%d\n", rc, rc ? e : 0);
	rc = munmap(r + 2 * MB, 2 * MB);
	check(!rc, "munmap 2M in the middle", strerror(errno));
	check(!mapped(r + 2 * MB, 2 * MB) && mapped(r, 4096) &&
	      mapped(r + 4 * MB, 4 * MB) && r[0] == (char)4 &&
	      same(r + 4 * MB, 4 * MB, 4 + 4 * MB / 4096),
	      "the rest of a split mapping stays", "lost or still mapped");
	/* the split's tail is still a backed mapping: it shrinks as one */
	t = mremap(r + 4 * MB, 4 * MB, MB, 0);
	check(t == r + 4 * MB && pages_same(t, MB, 4 + 4 * MB / 4096) &&
	      !mapped(r + 6 * MB, 4096), "the split's tail shrinks in place",
	      t == MAP_FAILED ? strerror(errno) : "moved, lost or tail left");
	check(!munmap(r, 8 * MB) && !mapped(r, 4096) &&
	      !mapped(r + 4 * MB, 4096), "munmap across the hole",
	      strerror(errno));
	probe_split_slack();
}

/*
 * A plain mapping moved by mremap(MREMAP_FIXED) onto the first 2 MB of a
 * backed one replaces them: afterwards it is a plain mapping like any
 * other, which a shrink in place must find so.
 */
static void probe_mremap_fixed(void)
{
	char *m = mmap(NULL, 4 * MB, RW, ANON, -1, 0), *x, *y, *z;

	/* MAP_NORESERVE: left to the kernel, not backed */
	x = mmap(NULL, 2 * MB, RW, ANON | MAP_NORESERVE, -1, 0);
	check(m != MAP_FAILED && x != MAP_FAILED, "mmap for mremap FIXED",
	      strerror(errno));
	if (m == MAP_FAILED || x == MAP_FAILED)
		return;
	fill(m, 4 * MB, 7);
	fill(x, 2 * MB, 8);
	y = mremap(x, 2 * MB, 2 * MB, MREMAP_MAYMOVE | MREMAP_FIXED, m);
	check(y == m && same(y, 2 * MB, 8) && pages_same(m + 2 * MB, 2 * MB,
							 7 + 512),
	      "mremap FIXED onto a backed range", y == MAP_FAILED ?
	      strerror(errno) : "moved elsewhere or contents lost");
	if (y != m)
		return;
	z = mremap(y, 2 * MB, MB, 0);
	check(z == y && mapped(y, MB) && !mapped(y + MB, 4096),
	      "the mapping moved there shrinks in place", z == MAP_FAILED ?
	      strerror(errno) : "moved or tail left");
	check(!munmap(y, MB) && !munmap(m + 2 * MB, 2 * MB) &&
	      !mapped(m + 2 * MB, 4096), "munmap both after mremap FIXED",
	      strerror(errno));
}

static void probe_mremap(void)
{
	char *s = mmap(NULL, 2 * MB, RW, ANON, -1, 0), *s2, *s3, *u, *v;

	check(s != MAP_FAILED, "mmap 2M", strerror(errno));
	if (s == MAP_FAILED)
		return;
	fill(s, 2 * MB, 5);
	s2 = mremap(s, 2 * MB, 6 * MB, MREMAP_MAYMOVE);
	check(s2 != MAP_FAILED && same(s2, 2 * MB, 5), "mremap grow",
	      s2 == MAP_FAILED ? strerror(errno) : "contents lost");
	if (s2 == MAP_FAILED)
		return;
	fill(s2 + 2 * MB, 4 * MB, 6);
	pages(s2 + 5 * MB, "mremap6M");
	s3 = mremap(s2, 6 * MB, 2 * MB, 0);
	check(s3 == s2 && same(s3, 2 * MB, 5) && !mapped(s2 + 4 * MB, 4096),
	      "mremap shrink in place", "moved, lost or tail left");
	check(!munmap(s3, 2 * MB), "munmap after mremap", strerror(errno));
	/* a mapping trimmed at its end grows from what is left of it (a
	 * hugetlb one by a copy of its user part, which the trim shortened) */
	u = mmap(NULL, 4 * MB, RW, ANON, -1, 0);
	check(u != MAP_FAILED, "mmap 4M to trim", strerror(errno));
	if (u == MAP_FAILED)
		return;
	fill(u, 4 * MB, 9);
	check(!munmap(u + 2 * MB, 2 * MB), "munmap a mapping's end", strerror(errno));
	v = mremap(u, 2 * MB, 6 * MB, MREMAP_MAYMOVE);
	check(v != MAP_FAILED && pages_same(v, 2 * MB, 9), "a trimmed mapping grows",
	      v == MAP_FAILED ? strerror(errno) : "contents lost");
	check(v == MAP_FAILED || !munmap(v, 6 * MB), "munmap the grown mapping",
	      strerror(errno));
	probe_mremap_fixed();
}

/* a backed region is private: a child's writes stay in the child */
static void probe_fork(void)
{
	char *p = malloc(4 * MB);
	int st = 0;
	pid_t pid;

	memset(p, 7, 4 * MB);
	pid = fork();
	if (!pid) {
		memset(p, 9, 4 * MB);
		free(p);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	check(WIFEXITED(st) && !WEXITSTATUS(st) && p[0] == 7 &&
	      p[4 * MB - 1] == 7, "fork keeps memory private",
	      "child failed or its write showed in the parent");
	free(p);
}

/*
 * Shared anonymous memory stays shared with a child: the preload takes
 * private anonymous mappings only (a private huge mapping in its place
 * would hide the child's write).
 */
static void probe_shared(void)
{
	char *p = mmap(NULL, 4 * MB, RW, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int st = 0;
	pid_t pid;

	if (p == MAP_FAILED) {
		check(0, "shared anonymous mmap", "mmap failed");
		return;
	}
	memset(p, 7, 4 * MB);
	pid = fork();
	if (!pid) {
		p[4 * MB - 1] = 9;
		_exit(0);
	}
	waitpid(pid, &st, 0);
	check(WIFEXITED(st) && !WEXITSTATUS(st) && p[4 * MB - 1] == 9,
	      "shared anonymous mapping stays shared with a child",
	      "the child's write did not show in the parent");
	munmap(p, 4 * MB);
}

static void *worker(void *arg)
{
	long t = (long)arg, bad = 0;
	int i;

	for (i = 0; i < 50; i++) {
		char *p = malloc(2 * MB + t * 4096);
		char *q = mmap(NULL, MB + t * 4096, RW, ANON, -1, 0);

		if (!p || q == MAP_FAILED) {
			bad++;
			continue;
		}
		p[0] = p[2 * MB - 1] = (char)t;
		q[0] = (char)t;
		bad += p[0] != (char)t || munmap(q, MB + t * 4096);
		free(p);
	}
	return (void *)bad;
}

static void probe_threads(void)
{
	pthread_t th[4];
	long t, bad = 0;
	void *r;

	for (t = 0; t < 4; t++)
		pthread_create(&th[t], NULL, worker, (void *)t);
	for (t = 0; t < 4; t++) {
		pthread_join(th[t], &r);
		bad += (long)r;
	}
	check(!bad, "4 threads malloc/free and mmap/munmap", "a call failed");
}

static void probe_big(size_t big)
{
	char *p = malloc(big), *q = mmap(NULL, big, RW, ANON, -1, 0);

	check(p && q != MAP_FAILED, "malloc and mmap beyond the pool",
	      "failed");
	if (!p || q == MAP_FAILED)
		return;
	p[0] = p[big - 1] = q[0] = q[big - 1] = 1;
	pages(p, "big_malloc");
	pages(q, "big_mmap");
	free(p);
	check(!munmap(q, big), "munmap beyond the pool", strerror(errno));
}

/* -- conform: the malloc family as glibc answers it ------------------------ */

/* the cases ask for impossible sizes and read a block a failed realloc kept */
#pragma GCC diagnostic ignored "-Walloc-size-larger-than="
#pragma GCC diagnostic ignored "-Wuse-after-free"

/*
 * One line per case.  null: the call returned NULL (posix_memalign: its
 * return value, as err=); errno only when it failed, since a success may
 * leave anything there; aligned: the block is a multiple of align; usable:
 * malloc_usable_size covers the request; zero: calloc's block reads zero;
 * kept: a realloc kept the old contents.
 */
static void say_case(const char *name, void *p, int err, size_t align,
		     size_t n)
{
	printf("case %s null=%d", name, !p);
	if (!p)
		printf(" errno=%d", err);
	else
		printf(" aligned=%d usable=%d",
		       !((uintptr_t)p % (align ? align : 1)),
		       malloc_usable_size(p) >= n);
	printf("\n");
}

/* the page-stride pattern fill() left, without fill()'s last byte */
static int pages_same(const char *p, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len; i += 4096)
		if (p[i] != (char)(i / 4096 + seed))
			return 0;
	return 1;
}

/* smaps' pages of a block, once touched (THP fills in only then) */
static void touched_pages(void *p, size_t n, const char *name)
{
	memset(p, 1, n);
	pages(p, name);
}

/* a block of n bytes that reads zero everywhere, sampled per page */
static int all_zero(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i += 4096)
		if (p[i])
			return 0;
	return !p[n - 1];
}

static void conform_malloc(void)
{
	void *p;
	char *d;

	errno = 0;
	p = malloc(SIZE_MAX);
	say_case("malloc_SIZE_MAX", p, errno, 0, 0);
	p = malloc(8 * MB);
	say_case("malloc_8M", p, errno, 16, 8 * MB);
	free(p);
	printf("case usable_NULL n=%zu\n", malloc_usable_size(NULL));
	free(NULL);
	errno = 0;
	p = calloc(SIZE_MAX / 2, 4);
	say_case("calloc_overflow", p, errno, 0, 0);
	/* a block freed dirty, then calloc of the same size: zero again */
	d = malloc(8 * MB);
	memset(d, 0x5a, 8 * MB);
	free(d);
	d = calloc(8 * MB, 1);
	say_case("calloc_8M", d, errno, 16, 8 * MB);
	printf("case calloc_8M_zero zero=%d\n", d && all_zero(d, 8 * MB));
	free(d);
	errno = 0;
	p = reallocarray(NULL, SIZE_MAX / 2, 4);
	say_case("reallocarray_overflow", p, errno, 0, 0);
}

static void conform_realloc(void)
{
	char *p = malloc(100), *q;

	strcpy(p, "kept");
	p = realloc(p, 8 * MB);
	say_case("realloc_small_to_8M", p, errno, 16, 8 * MB);
	printf("case realloc_small_to_8M_kept kept=%d\n", !strcmp(p, "kept"));
	fill(p, 8 * MB, 11);
	p = realloc(p, 16 * MB);
	printf("case realloc_8M_to_16M_kept kept=%d\n",
	       p && same(p, 8 * MB, 11));
	q = realloc(p, 2 * MB);
	printf("case realloc_16M_to_2M_kept kept=%d\n",
	       q && pages_same(q, 2 * MB, 11));
	errno = 0;
	p = realloc(q, SIZE_MAX);
	say_case("realloc_SIZE_MAX", p, errno, 0, 0);
	printf("case realloc_SIZE_MAX_old_kept kept=%d\n",
	       pages_same(q, 2 * MB, 11));
	p = realloc(q, 0);
	printf("case realloc_to_0 null=%d\n", !p);
	free(p);
}

/* Says case <fn>_<a> of p, 8 MB from fn at alignment a (errno err), touches and frees it. */
static void aligned_case(const char *fn, size_t a, void *p, int err, size_t want)
{
	char name[64];

	snprintf(name, sizeof(name), "%s_%zu", fn, a);
	say_case(name, p, err, want, 8 * MB);
	if (p)
		touched_pages(p, 8 * MB, name);
	free(p);
}

static void conform_aligned(void)
{
	static const size_t aligns[] = { 4096, 64 << 10, 2 * MB, 3000 };
	char name[64];
	void *p;
	size_t i;
	int e;

	for (i = 0; i < sizeof(aligns) / sizeof(*aligns); i++) {
		size_t a = aligns[i], want = a & (a - 1) ? 4096 : a;

		errno = 0;
		p = memalign(a, 8 * MB);
		aligned_case("memalign", a, p, errno, want);
		errno = 0;
		p = aligned_alloc(a, 8 * MB);
		aligned_case("aligned_alloc", a, p, errno, want);
		p = NULL;
		e = posix_memalign(&p, a, 8 * MB);
		printf("case posix_memalign_%zu err=%d", a, e);
		if (!e) {
			printf(" aligned=%d usable=%d\n", !((uintptr_t)p % a),
			       malloc_usable_size(p) >= 8 * MB);
			snprintf(name, sizeof(name), "posix_memalign_%zu", a);
			touched_pages(p, 8 * MB, name);
		} else {
			printf("\n");
		}
		free(p);
	}
	p = NULL;
	e = posix_memalign(&p, 64 << 10, SIZE_MAX - 100);
	printf("case posix_memalign_SIZE_MAX err=%d null=%d\n", e, !p);
	errno = 0;
	p = memalign(64 << 10, SIZE_MAX - 100);
	say_case("memalign_SIZE_MAX", p, errno, 0, 0);
}

static void conform_pages(void)
{
	void *p;

	p = valloc(8 * MB + 5);
	say_case("valloc_8M+5", p, errno, 4096, 8 * MB + 5);
	free(p);
	p = pvalloc(8 * MB + 5);
	say_case("pvalloc_8M+5", p, errno, 4096, 8 * MB + 4096);
	free(p);
	errno = 0;
	p = pvalloc(SIZE_MAX - 100);
	say_case("pvalloc_SIZE_MAX-100", p, errno, 0, 0);
	errno = 0;
	p = valloc(SIZE_MAX - 100);
	say_case("valloc_SIZE_MAX-100", p, errno, 0, 0);
}

static void conform(void)
{
	conform_malloc();
	conform_realloc();
	conform_aligned();
	conform_pages();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "conform")) {
		conform();
		return 0;
	}
	if (argc > 1)
		probe_big(strtoull(argv[1], NULL, 0));
	probe_malloc();
	probe_munmap();
	probe_mremap();
	probe_fork();
	probe_shared();
	probe_threads();
	return failed;
}
