// SPDX-License-Identifier: GPL-2.0
/*
 * minigups.c - bench/gups.c's independent oracle (issue 34, point 3).
 *
 *     minigups 4k|2m SIZE [UPDATES]
 *
 * One mapping of SIZE bytes (a power of two; 4k: private anonymous memory
 * with MADV_NOHUGEPAGE; 2m: MAP_HUGETLB from the 2 MB pool), a table of
 * SIZE / 8 words w[i] = i, and HPCC RandomAccess's updates: 4 x the
 * table's words (or UPDATES, a multiple of 128), w[v & (words - 1)] ^= v,
 * v the LFSR stream (v = v * 2, XOR 7 when its top bit was set), split
 * into 128 lanes as HPCC's reference splits it.  The lanes' first values
 * are found by stepping the stream from 1 one value at a time (no jump
 * ahead), untimed.  One untimed pass, then one timed pass; after each,
 * the same updates again one by one, which undoes them, and a count of
 * the words that are not their index.  Prints "ns_per_update X"
 * (CLOCK_MONOTONIC wall time of the timed pass / its updates) and
 * "errors N" (the most of the two passes).  No pinning, nothing shared
 * with bench/: kept small on purpose, so that where it and bench/gups.c
 * disagree one of them is wrong.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define LANES 128

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

/* without a branch: a branch on the top bit mispredicts half the time */
static uint64_t step(uint64_t v)
{
	return (v << 1) ^ (7 & -(v >> 63));
}

static void lanes(uint64_t *w, uint64_t mask, uint64_t n, const uint64_t *s)
{
	uint64_t v[LANES], k;
	int l;

	memcpy(v, s, sizeof(v));
	for (k = 0; k < n / LANES; k++)
		for (l = 0; l < LANES; l++) {
			v[l] = step(v[l]);
			w[v[l] & mask] ^= v[l];
		}
}

/* the updates again, one by one, then the words that are wrong */
static uint64_t undo(uint64_t *w, uint64_t mask, uint64_t n)
{
	uint64_t v = 1, k, wrong = 0;

	for (k = 0; k < n; k++) {
		v = step(v);
		w[v & mask] ^= v;
	}
	for (k = 0; k <= mask; k++)
		wrong += w[k] != k;
	return wrong;
}

int main(int argc, char **argv)
{
	uint64_t *w, words, n, start[LANES], v = 1, k, e1, e2;
	unsigned long long len;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	double t0, t1;

	if (argc < 3 || argc > 4 ||
	    (strcmp(argv[1], "4k") && strcmp(argv[1], "2m"))) {
		fprintf(stderr, "usage: minigups 4k|2m SIZE [UPDATES]\n");
		return 64;
	}
	len = strtoull(argv[2], NULL, 10);
	if (len < 4096 || (len & (len - 1))) {
		fprintf(stderr, "minigups: SIZE must be a power of two, at "
			"least 4096\n");
		return 64;
	}
	if (!strcmp(argv[1], "2m"))
		flags |= MAP_HUGETLB | 21 << MAP_HUGE_SHIFT;
	w = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (w == MAP_FAILED) {
		perror(flags & MAP_HUGETLB ?
		       "mmap MAP_HUGETLB (is the 2 MB pool big enough?)" :
		       "mmap");
		return 1;
	}
	if (!(flags & MAP_HUGETLB))
		madvise(w, len, MADV_NOHUGEPAGE);
	words = len / 8;
	n = argc == 4 ? strtoull(argv[3], NULL, 10) : 4 * words;
	if (!n || n % LANES) {
		fprintf(stderr, "minigups: UPDATES must be a positive multiple "
			"of %d\n", LANES);
		return 64;
	}
	for (k = 0; k < words; k++)
		w[k] = k;
	for (k = 0; k < n; k++) {	/* lane l starts at value l * n / LANES */
		if (k % (n / LANES) == 0)
			start[k / (n / LANES)] = v;
		v = step(v);
	}
	lanes(w, words - 1, n, start);
	e1 = undo(w, words - 1, n);
	t0 = now();
	lanes(w, words - 1, n, start);
	t1 = now();
	e2 = undo(w, words - 1, n);
	printf("ns_per_update %.3f\nerrors %llu\n", (t1 - t0) / n,
	       (unsigned long long)(e1 > e2 ? e1 : e2));
	return e1 || e2;
}
