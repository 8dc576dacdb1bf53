/* SPDX-License-Identifier: GPL-2.0 */
/*
 * llc.h - the size of the last-level cache a CPU uses, for STREAM's rule
 * that each array be at least 4 times the last-level cache (streamk.c).
 *
 * Read from sysfs first: /sys/devices/system/cpu/cpuN/cache/indexN/
 * {level,type,size}, the highest level whose type is Unified or Data.
 * Where sysfs has no cache directory (some virtual machines) it falls back
 * to what glibc reads from CPUID (sysconf _SC_LEVEL3/_SC_LEVEL2_CACHE_SIZE),
 * which on AMD parts is the whole processor's L3 rather than one CCX's:
 * larger, so the rule stays on the safe side.  Only x86 has that fallback:
 * an arm64 build reads sysfs alone (the guest's device tree describes its
 * caches there, or nothing).  The source is recorded.
 */
#ifndef BENCH_LLC_H
#define BENCH_LLC_H

#include <sched.h>
#include <stddef.h>

struct llc {
	unsigned long long bytes;	/* 0: unknown */
	int level;			/* 0: unknown */
	int caches;			/* how many caches bytes sums; 0: CPUID's */
	const char *source;		/* "sysfs", "cpuid" or "none" */
	char path[600];			/* the sysfs index directory read */
};

/*
 * STREAM's rule counts every last-level cache the run's threads use, not
 * the one of the CPU the runner pins to: on a part with one L3 per CCD
 * (Zen: 12 x 32 MB on a 96-core Zen 5) or per socket, arrays 4x one L3
 * are not 4x what the threads cache.
 *
 * llc_plan() places n threads, one per CPU of cpus (more threads than
 * CPUs: round again): round robin over the NUMA nodes, and inside a node
 * over its last-level caches (the CPUs one cache's shared_cpu_list
 * names), so that fewer threads than CPUs spread over the memory
 * controllers and caches instead of filling one CCD first; plan[t] is
 * thread t's CPU (room for n).  l gets the sum of the distinct caches the
 * plan's CPUs use (caches: how many).  Where sysfs shows no cache for one
 * of them it falls back to CPUID (use_cpuid), one cache for the part,
 * not summed (caches 0).  root as llc.h's other readers (NULL: "/").
 * Returns 0, or -1 with why; the plan is filled even then, unless cpus
 * or n is empty or memory ran out (streamk pins its threads whether or
 * not it knows the caches' size).
 */
int llc_plan(const char *root, const cpu_set_t *cpus, int n, int use_cpuid,
	     int *plan, struct llc *l, char *why, size_t wn);

#endif
