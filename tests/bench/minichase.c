// SPDX-License-Identifier: GPL-2.0
/*
 * minichase.c - the chase's independent oracle (issue 19, point 9).
 *
 *     minichase [-p] 4k|2m|1g SIZE HOPS [WARM]
 *
 * One mapping of SIZE bytes (4k: private anonymous memory with
 * MADV_NOHUGEPAGE; 2m, 1g: MAP_HUGETLB from the 2 MB or 1 GB pool), one
 * random single cycle (Sattolo) over every 64-byte line of it (-p: over
 * every 4 KB page of it, one element per page at a random line of the
 * page, lmbench's tlb chain: the chase's page hop), WARM untimed hops
 * (default 0), then HOPS timed ones.  Prints
 * "ns_per_hop X" (CLOCK_MONOTONIC wall time / HOPS).  No pinning, no
 * other mapping, nothing shared with bench/: kept this small on purpose,
 * so that where it and bench/chase.c disagree one of them is wrong.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)		/* xorshift64 */
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static unsigned long long size_arg(const char *s)
{
	char *e;
	unsigned long long v = strtoull(s, &e, 10);

	if (*e == 'G')
		v <<= 30;
	else if (*e == 'M')
		v <<= 20;
	else if (*e == 'K')
		v <<= 10;
	return v;
}

static void *map(const char *kind, size_t len)
{
	int huge = strcmp(kind, "4k") ? MAP_HUGETLB : 0;
	void *p;

	if (!strcmp(kind, "1g"))
		huge |= 30 << MAP_HUGE_SHIFT;
	else if (huge)
		huge |= 21 << MAP_HUGE_SHIFT;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | huge, -1, 0);
	if (p == MAP_FAILED) {
		perror(huge ? "mmap MAP_HUGETLB (is the pool big enough?)"
		       : "mmap");
		exit(1);
	}
	if (!huge)
		madvise(p, len, MADV_NOHUGEPAGE);
	return p;
}

static void **walk(void **p, uint64_t n)
{
	while (n--)
		p = *p;
	return p;
}

int main(int argc, char **argv)
{
	size_t len, n, i, j, *idx, *at, step = 64;
	uint64_t hops, warm;
	void **p;
	char *base;
	double t0, t1;

	if (argc > 1 && !strcmp(argv[1], "-p")) {
		step = 4096;
		argv++;
		argc--;
	}
	if (argc < 4 || (strcmp(argv[1], "4k") && strcmp(argv[1], "2m") &&
			 strcmp(argv[1], "1g"))) {
		fprintf(stderr, "usage: minichase [-p] 4k|2m|1g SIZE HOPS "
			"[WARM]\n");
		return 64;
	}
	len = size_arg(argv[2]);
	hops = size_arg(argv[3]);
	warm = argc > 4 ? size_arg(argv[4]) : 0;
	n = len / step;
	base = map(argv[1], len);
	idx = malloc(n * sizeof(*idx));
	at = malloc(n * sizeof(*at));
	if (!idx || !at || n < 2) {
		fprintf(stderr, "minichase: SIZE too small or out of memory\n");
		return 1;
	}
	for (i = 0; i < n; i++)
		idx[i] = i;
	for (i = n - 1; i > 0; i--) {	/* Sattolo: j < i, one cycle */
		size_t t = idx[i];

		j = next() % i;
		idx[i] = idx[j];
		idx[j] = t;
	}
	for (i = 0; i < n; i++)		/* element i's byte offset */
		at[i] = i * step + (step > 64 ? next() % (step / 64) * 64 : 0);
	for (i = 0; i < n; i++)
		*(void **)(base + at[i]) = base + at[idx[i]];
	p = walk((void **)(base + at[0]), warm);
	free(idx);
	free(at);
	t0 = now();
	p = walk(p, hops);
	t1 = now();
	printf("ns_per_hop %.3f\n", (t1 - t0) / hops);
	return p == NULL;
}
