// SPDX-License-Identifier: GPL-2.0
/*
 * preload_probe.c - exercises what bench/realprog/hugepreload.c interposes,
 * for tests/bench/test_preload.py, which runs it under the library with
 * each backing and checks what it prints:
 *
 *   preload_probe [BIG]
 *
 * Each line is "ok NAME", "not ok NAME: why" (the probe's own checks:
 * contents kept, calls succeeding), or "NAME KEY=VALUE..." with what the
 * kernel did (errno of a call, smaps' KernelPageSize and AnonHugePages of
 * the mapping at an address), which the test judges per backing.  BIG:
 * also malloc and mmap BIG bytes (the fallback test gives more than the
 * pool holds).  Exit status 1 when any "not ok" was printed.
 */
#define _GNU_SOURCE
#include <errno.h>
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

static void probe_malloc(void)
{
	char *p = malloc(8 * MB), *b = malloc(100), *c;
	int *z;
	void *al = NULL;
	size_t i;

	fill(p, 8 * MB, 1);
	pages(p, "malloc8M");
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

static void probe_munmap(void)
{
	char *q = mmap(NULL, 3 * MB + 5, RW, ANON, -1, 0), *r;
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
	check(!munmap(r, 8 * MB) && !mapped(r, 4096) &&
	      !mapped(r + 4 * MB, 4096), "munmap across the hole",
	      strerror(errno));
}

static void probe_mremap(void)
{
	char *s = mmap(NULL, 2 * MB, RW, ANON, -1, 0), *s2, *s3;

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

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1)
		probe_big(strtoull(argv[1], NULL, 0));
	probe_malloc();
	probe_munmap();
	probe_mremap();
	probe_fork();
	probe_threads();
	return failed;
}
