/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pmu.h - which hardware events to count, on which PMU and CPU, and how to
 * read them: no system calls, so benchtool and the tests drive it directly
 * (counters.c opens the events).
 *
 * The event table comes from perf's pmu-events JSON of the kernel tree the
 * project builds (tools/perf/pmu-events/arch/x86), turned into C at build
 * time by bench/events/gen_table.py, which documents how each role's events
 * are chosen.  perf's own tables were chosen over libpfm4 because they ship
 * in the linux-source tarball the kernel is already built from (no new
 * package), they are what `perf list` prints, and the table is compiled in,
 * so the static benchmark binaries need no library in the guest.
 */
#ifndef BENCH_PMU_H
#define BENCH_PMU_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

/*
 * l1_miss and walk are what the benchmarks count (counters.c); the rest
 * say what a walk costs, for bench/walkcost.py (gen_table.py says what
 * each counts, per vendor)
 */
enum pmu_role {
	PMU_ROLE_L1_MISS, PMU_ROLE_WALK, PMU_ROLE_STLB_HIT,
	PMU_ROLE_WALK_COMPLETED, PMU_ROLE_WALK_ACTIVE, PMU_ROLE_WALK_PENDING,
	PMU_ROLE_COALESCED, PMU_ROLE_NR
};

#define PMU_MAX_PARTS 3		/* a role is the sum of up to 3 events */
#define PMU_MAX_PMUS 2		/* cpu_core and cpu_atom on hybrid parts */

struct pmu_event {
	const char *name;	/* as perf's JSON spells it */
	uint64_t config;	/* perf_event_attr.config of a raw event */
};

struct pmu_role_events {
	int nparts;		/* 0: none, see reason */
	struct pmu_event part[PMU_MAX_PARTS];
	const char *reason;
};

struct pmu_core {
	const char *pmu;	/* "cpu", or "cpu_core"/"cpu_atom" (hybrid) */
	struct pmu_role_events role[PMU_ROLE_NR];
};

struct pmu_model {
	const char *cpuid_re;	/* mapfile.csv's Family-model (POSIX ERE) */
	const char *model;	/* its Filename: the JSON directory */
	const char *version;
	int npmus;
	struct pmu_core pmus[PMU_MAX_PMUS];
};

/* generated: build/bench/pmu-events.c; ends with a NULL cpuid_re */
extern const struct pmu_model pmu_models[];

extern const char *const pmu_role_names[PMU_ROLE_NR];

/*
 * The model of a perf-style cpuid "VENDOR-FAMILY-MODEL[-STEPPING]" (family
 * decimal, model and stepping hex, as perf writes them), matched as perf
 * does: the first row of mapfile.csv whose expression matches all of it
 * (rows that name a stepping need one).  NULL if none; why says so.
 */
const struct pmu_model *pmu_model_find(const char *cpuid, char *why,
				       size_t n);
/*
 * NULL where the table can name this build's CPU (x86), else why it
 * cannot: the counters then record the TLB roles as unavailable with it
 */
const char *pmu_arch_missing(void);
/* this CPU's id as perf writes it (GenuineIntel-6-55-4); 0, or -1 */
int pmu_host_cpuid(char *buf, size_t n);
/* the core PMU named pmu in m, or NULL */
const struct pmu_core *pmu_core_find(const struct pmu_model *m,
				     const char *pmu);
/* "NAME+NAME" and "0xCFG+0xCFG" of a role with parts */
void pmu_role_format(const struct pmu_role_events *r, char *name, size_t nn,
		     char *cfg, size_t nc);
/* the TLB-model preset that fits a core, or NULL (none modelled) */
const char *pmu_preset(const struct pmu_model *m, const char *pmu);

/*
 * The CPU to measure on and the PMU its events go to.  sysfs is the root
 * holding bus/event_source/devices ("/sys", or a fake tree in the tests);
 * allowed is the affinity mask; want is a requested CPU or -1 for any.
 * On a hybrid part (devices/cpu_core exists) the last allowed CPU of
 * cpu_core is taken (P-cores have the larger TLBs and the full event set);
 * a requested CPU keeps the PMU whose cpus file lists it.  Elsewhere the
 * PMU is "cpu" and the CPU the last allowed.  type is the PMU's perf type
 * from its sysfs "type" file, or -1 if the file is missing.
 */
struct pmu_choice {
	int cpu;		/* -1: no allowed CPU */
	char pmu[16];
	int type;
};
/* a cpulist ("0-7,16,18-19", as sysfs writes it) into set; 0, or -1 */
int pmu_parse_cpulist(const char *s, cpu_set_t *set);
void pmu_pick_cpu(const char *sysfs, const cpu_set_t *allowed, int want,
		  struct pmu_choice *out);

/*
 * One repetition's value of a counter from two group reads around it:
 * count and time_enabled/time_running before (0) and after (1).  The count
 * is scaled by enabled/running of this repetition alone (the kernel's
 * times run on across PERF_EVENT_IOC_RESET); *ok is 0 when the counter
 * never ran in it.
 */
double pmu_scale(uint64_t v0, uint64_t v1, uint64_t ena0, uint64_t ena1,
		 uint64_t run0, uint64_t run1, int *ok);

#endif
