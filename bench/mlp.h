/* SPDX-License-Identifier: GPL-2.0 */
/* mlp.h - the parallel chase's layout, for benchtool (mlp.c). */
#ifndef BENCH_MLP_H
#define BENCH_MLP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Builds the n chains the parallel chase would build in a wss-byte working
 * set with --stride stride and --tlb-group group, and prints each as one
 * line: the byte offsets of its elements in the order the chain visits
 * them, from its first.  With steps (a multiple of 4, the loop's pass),
 * runs the benchmark's loop that many steps from the first elements and
 * prints one more line: the offset each chain reached.  0, or -1 with why
 * when the options are refused or memory is short.
 */
int mlp_layout(FILE *out, size_t wss, int n, size_t stride, size_t group,
	       uint64_t seed, uint64_t steps, char *why, size_t wn);

#endif
