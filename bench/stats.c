// SPDX-License-Identifier: GPL-2.0
/* stats.c - median, min, max and coefficient of variation. */
#include <math.h>
#include <stdlib.h>

#include "stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void stats_compute(double *v, int n, struct stats *s)
{
	double sum = 0, sq = 0;
	int i;

	qsort(v, n, sizeof(*v), cmp_double);
	s->n = n;
	s->min = v[0];
	s->max = v[n - 1];
	s->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	for (i = 0; i < n; i++)
		sum += v[i];
	s->mean = sum / n;
	for (i = 0; i < n; i++)
		sq += (v[i] - s->mean) * (v[i] - s->mean);
	s->cv = (n > 1 && s->mean != 0) ? sqrt(sq / (n - 1)) / s->mean : 0;
}
