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

#include <stddef.h>

struct llc {
	unsigned long long bytes;	/* 0: unknown */
	int level;			/* 0: unknown */
	const char *source;		/* "sysfs", "cpuid" or "none" */
	char path[600];			/* the sysfs index directory read */
};

/*
 * Fills l for CPU cpu (cpu < 0: cpu0) under sysfs root (NULL or "": "/");
 * use_cpuid: fall back to CPUID when sysfs has nothing.  Returns 0, or -1
 * with l->source "none" and why in why when neither knows.
 */
int llc_read(const char *root, int cpu, int use_cpuid, struct llc *l,
	     char *why, size_t n);

#endif
