/* SPDX-License-Identifier: GPL-2.0 */
/*
 * layout.h - the measurement primitives the benchmarks share: where an
 * element sits in a page, the keyed mix that places it, and the unrolled
 * dependent chase.  A leaf that needs only libc; runner.h includes it, so
 * every benchmark has it.
 */
#ifndef BENCH_LAYOUT_H
#define BENCH_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define LINE 64
#define PAGE 4096

/*
 * The dependent chase of chase.c and tlbreach.c: blocks x CHASE_UNROLL
 * hops from p, each load the address of the next; returns where it ended
 * (store it to a volatile so the compiler keeps the loop).
 */
#define CHASE_UNROLL 16
void **chase_blocks(void **p, uint64_t blocks);

/*
 * a bijection of 64-bit integers (splitmix64's finaliser); inline, since
 * stream's stride kernel runs it once per access
 */
static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * The byte offset, inside 4 KB page `page` of a page hop, of the page's
 * one element: a line picked by a keyed mix64 of the page number, so that
 * inside a huge page (where physical address bits 6-20 or 6-29 equal the
 * virtual ones) the lines spread over the cache sets the way 4 KB pages'
 * scattered frames do.  key: page_line_key(seed); the same for every
 * backing, so comparisons stay paired.
 */
uint64_t page_line_key(uint64_t seed);
static inline size_t page_line(size_t page, uint64_t key)
{
	return (size_t)(mix64(page + key) % (PAGE / LINE)) * LINE;
}

/*
 * The chase's cycle (chase.c, multiload.c: one construction, so that
 * their rows measure the same chase).  HOP_LINE: one element per 64-byte
 * line; HOP_PAGE: one per 4 KB page, at the line page_line() picks.
 * chase_elem_off(): element i's byte offset from the working set's start
 * (key: page_line_key(seed)); chase_build_cycle(): one random cycle
 * through the n elements at base (layout.c says how).
 */
enum hop_mode { HOP_LINE = 1, HOP_PAGE = 2 };
size_t chase_elem_off(size_t i, int hop, uint64_t key);
void chase_build_cycle(char *base, size_t n, int hop, uint64_t seed);

#endif
