/* SPDX-License-Identifier: GPL-2.0 */
/*
 * size.h - the one parser of a size typed by a user or written by the
 * kernel: every benchmark's size options and --sizes (runner.c), realprog's
 * --corpus, hugepreload's HUGEPRELOAD_MIN and a hugetlbfs mount's pagesize=,
 * and sysfs's cache sizes (llc.c).
 *
 * A leaf: no allocation, no stdio, no locale (hugepreload.so calls it from
 * inside malloc, and links size.c alone: bench/realprog/realprog.mk).
 */
#ifndef BENCH_SIZE_H
#define BENCH_SIZE_H

/*
 * "4096", "64K", "1.5m", "1G" -> *v bytes; 0, or -1 when s is none.
 * Decimal digits with an optional fraction, then at most one suffix K, M
 * or G in either case (binary: 1K = 1024); nothing else: no sign, space,
 * exponent or T.  A fraction is exact, rounded down to a whole byte
 * ("1.5" is 1).  A value past 64 bits is refused, not wrapped.
 */
int size_parse(const char *s, unsigned long long *v);

#endif
