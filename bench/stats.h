/* SPDX-License-Identifier: GPL-2.0 */
/* stats.h - summary statistics of repeated measurements. */
#ifndef BENCH_STATS_H
#define BENCH_STATS_H

struct stats {
	double median;	/* middle value; mean of the two middle ones for even n */
	double min;
	double max;
	double mean;
	double cv;	/* sample standard deviation / mean; 0 when n < 2 */
	int n;
};

/* Sorts v in place. n must be >= 1. */
void stats_compute(double *v, int n, struct stats *s);

#endif
