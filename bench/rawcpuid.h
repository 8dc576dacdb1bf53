/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rawcpuid.h - the CPUID leaves the suite reads, raw, and the CPU they
 * name: a leaf that needs only libc, under the TLB geometry (tlbcpuid.h)
 * and perf's CPU id (pmu.c).
 *
 * Where the leaves come from: the cpuid instruction on the calling CPU,
 * or, when BENCH_CPUID_FILE names a file, recorded leaves, one per line
 * "LEAF SUBLEAF EAX EBX ECX EDX" in hex ('#' starts a comment), as
 * `benchtool tlbgeometry --dump` writes them.  The same file then gives
 * the CPU's vendor, family and model (pmu_host_cpuid), so a test can
 * stand in any CPU (tests/bench/fixtures/cpuid-*.txt).
 */
#ifndef BENCH_RAWCPUID_H
#define BENCH_RAWCPUID_H

#include <stddef.h>
#include <stdint.h>

#define CPUID_MAX_LEAVES 64

/* a leaf's registers, in the order of cpuid_leaves' r[] */
enum { EAX, EBX, ECX, EDX };

struct cpuid_leaves {
	int n;
	struct { uint32_t leaf, sub, r[4]; } l[CPUID_MAX_LEAVES];
	char vendor[13];
	unsigned family, model, stepping;
	char hypervisor[13];	/* leaf 0x40000000's signature; "" if none */
	char from[300];		/* "the cpuid instruction" or the file */
};

/* reads the leaves (see above); 0, or -1 with why */
int cpuid_load(struct cpuid_leaves *c, char *why, size_t n);
/* the registers of leaf l, subleaf s, as read; NULL if not read */
const uint32_t *cpuid_leaf(const struct cpuid_leaves *c, uint32_t l,
			   uint32_t s);
/* the leaves as BENCH_CPUID_FILE lines */
void cpuid_dump(const struct cpuid_leaves *c);

#endif
