/* SPDX-License-Identifier: GPL-2.0 */
/*
 * counters.h - perf_event_open counters read as one group around the
 * measured region only.  The TLB events come from perf's pmu-events tables
 * for this CPU and the PMU of the core the runner pins to (bench/pmu.h).
 * Every event that cannot be opened, or was opened but never ran (no PMU
 * on this CPU or under this hypervisor, no event in the tables), is marked
 * unavailable with the reason, and the run goes on without it.
 */
#ifndef BENCH_COUNTERS_H
#define BENCH_COUNTERS_H

#include <sched.h>
#include <stdint.h>

#include "pmu.h"

enum counter_ev {
	EV_CYCLES,
	EV_INSTRUCTIONS,
	EV_PAGE_FAULTS,
	EV_L1_DTLB_MISS,	/* loads that missed the L1 dTLB */
	EV_WALK,		/* completed page walks caused by loads */
	EV_NR
};

/* every event opened: the three fixed ones and each role's parts */
#define COUNTERS_MAX_FDS (3 + 2 * PMU_MAX_PARTS)

struct counters {
	int nfd;
	int fd[COUNTERS_MAX_FDS];
	uint32_t type[COUNTERS_MAX_FDS];	/* as opened, to share parts */
	uint64_t cfg[COUNTERS_MAX_FDS];
	uint64_t id[COUNTERS_MAX_FDS];
	uint64_t base[COUNTERS_MAX_FDS];	/* counts at counters_start */
	uint64_t base_ena, base_run;		/* group times at start */
	int leader;		/* fd of the group leader, -1 if none */
	int nparts[EV_NR];	/* 0: unavailable */
	int part[EV_NR][PMU_MAX_PARTS];	/* indices into fd[] */
	char name[EV_NR][256];	/* as perf's tables spell it, "+" for sums */
	char config[EV_NR][64];
	char reason[EV_NR][400];
	char cpuid[64];
	const struct pmu_model *model;	/* NULL: not in perf's tables */
	const char *pmu;		/* the picked PMU ("cpu", "cpu_core") */
};

struct counter_values {
	uint64_t v[EV_NR];
	int ok[EV_NR];		/* the event counted (and was scheduled) */
};

/*
 * The CPU to pin to (see pmu_pick_cpu: a P-core on hybrid parts) from the
 * allowed set, or want if >= 0; remembers the PMU for counters_open().
 */
int counters_pick_cpu(const cpu_set_t *allowed, int want);
/* opens the group on the picked PMU and checks that it runs */
void counters_open(struct counters *c);
void counters_start(struct counters *c);
/* this repetition's counts, each scaled by this repetition's times */
void counters_stop(struct counters *c, struct counter_values *out);
/* prints "@meta counters {...}" and "@meta pmu {...}" */
void counters_emit_meta(const struct counters *c);

#endif
