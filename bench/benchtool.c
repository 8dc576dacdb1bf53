// SPDX-License-Identifier: GPL-2.0
/*
 * benchtool.c - exposes the runner's statistics and the TLB model to the
 * unit tests in tests/bench/ (not a benchmark; not copied to the guest).
 *
 *   benchtool stats V...        prints "median min max mean cv n"
 *   benchtool tlb SPEC|PRESET   reads "ADDR PAGE_KB" lines (ADDR in hex)
 *                               and prints "accesses N l1_misses N walks N"
 *   benchtool presets           prints "name<TAB>spec<TAB>source" lines
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "tlbmodel.h"

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "stats")) {
		int i, n = argc - 2;
		double *v = malloc(n * sizeof(*v));
		struct stats s;

		for (i = 0; i < n; i++)
			v[i] = strtod(argv[i + 2], NULL);
		stats_compute(v, n, &s);
		printf("%.9g %.9g %.9g %.9g %.9g %d\n", s.median, s.min, s.max,
		       s.mean, s.cv, s.n);
		free(v);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "tlb")) {
		struct tlb_model m;
		unsigned long long a;
		unsigned long kb;

		if (tlb_init(&m, argv[2])) {
			fprintf(stderr, "benchtool: bad TLB spec '%s'\n", argv[2]);
			return 1;
		}
		while (scanf("%llx %lu", &a, &kb) == 2)
			tlb_access(&m, a, kb);
		printf("accesses %llu l1_misses %llu walks %llu\n",
		       (unsigned long long)m.accesses,
		       (unsigned long long)m.l1_misses,
		       (unsigned long long)m.walks);
		tlb_free(&m);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "presets")) {
		int i;

		for (i = 0; tlb_presets[i].name; i++)
			printf("%s\t%s\t%s\n", tlb_presets[i].name,
			       tlb_presets[i].spec, tlb_presets[i].source);
		return 0;
	}
	fprintf(stderr, "usage: benchtool stats V... | tlb SPEC < trace | "
		"presets\n");
	return 64;
}
