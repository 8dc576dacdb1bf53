/* SPDX-License-Identifier: GPL-2.0 */
/*
 * counters.h - perf_event_open counters read as one group around the
 * measured region only.  Every event that cannot be opened (no PMU on this
 * CPU or under this hypervisor, no known raw event) is marked unavailable
 * with the reason, and the run goes on without it.
 */
#ifndef BENCH_COUNTERS_H
#define BENCH_COUNTERS_H

#include <stdint.h>

enum counter_ev {
	EV_CYCLES,
	EV_INSTRUCTIONS,
	EV_PAGE_FAULTS,
	EV_L1_DTLB_MISS,	/* loads that missed the L1 dTLB */
	EV_WALK,		/* completed page walks caused by loads */
	EV_NR
};

struct counters {
	int fd[EV_NR];		/* -1 when unavailable */
	int leader;		/* fd of the group leader, -1 if none */
	uint64_t id[EV_NR];
	char name[EV_NR][64];
	char reason[EV_NR][160];
};

struct counter_values {
	uint64_t v[EV_NR];
	int ok[EV_NR];		/* the event counted (and was scheduled) */
};

void counters_open(struct counters *c);
void counters_start(struct counters *c);
void counters_stop(struct counters *c, struct counter_values *out);
/* prints "@meta counters {...}" */
void counters_emit_meta(const struct counters *c);

#endif
