/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tlbcpuid.h - the data-TLB geometry a CPU reports about itself, and the
 * choice of the TLB model for --model auto.
 *
 * Intel: CPUID leaf 0x18 (deterministic address translation parameters,
 * SDM vol. 2A), one subleaf per structure: its page sizes, ways, sets,
 * type (data, unified, load-only, store-only, instruction) and level.
 * AMD: 0x80000005 (L1 4K and 2M/4M data TLB entries and associativity),
 * 0x80000006 (the same for the L2, associativity as a code) and
 * 0x80000019 (the 1G TLBs).  AMD's leaves give entries per page size, not
 * whether the sizes share one array, and their associativity codes have
 * no 12 ways; Intel's give each structure whole.
 *
 * Hypervisors may rewrite these leaves (KVM on this project's Zen 5 host
 * reports a 128-entry L2 DTLB where Zen 5 has 4096), so a geometry from
 * CPUID is cross-checked against the preset, and under a hypervisor it is
 * never used on its own.
 *
 * The leaves themselves, from the instruction or BENCH_CPUID_FILE, are
 * rawcpuid.h's.
 */
#ifndef BENCH_TLBCPUID_H
#define BENCH_TLBCPUID_H

#include <stddef.h>
#include <stdint.h>

#include "rawcpuid.h"
#include "tlbmodel.h"

/* the model name of no model: model columns stay empty */
#define TLB_NO_MODEL "none"
/* the model name of the geometry CPUID reports */
#define TLB_CPUID_MODEL "cpuid"

/* per level (l1, l2) and page size (4K, 2M, 1G): 0 entries is none */
struct tlb_sizes {
	unsigned entries[2][3], ways[2][3];
};

struct tlb_cpuid_geo {
	int have;		/* a data TLB geometry was reported */
	struct tlb_sizes t;
	char leaves[64];	/* "0x18" or "0x80000005, ..." */
	char spec[256];		/* as a tlbmodel spec; "" if none fits */
	char why[200];		/* when !have */
};

/* the data-TLB geometry the leaves report */
void tlb_cpuid_geometry(const struct cpuid_leaves *c,
			struct tlb_cpuid_geo *g);
/* a model's own table (entries of the array holding each size whole) */
int tlb_model_sizes(const char *name, struct tlb_sizes *t);
/*
 * --model auto: preset (the one that fits this core, NULL if none), else
 * the CPUID geometry on bare metal, else TLB_NO_MODEL; why says which
 * and why.  Returns the model name (a preset, TLB_CPUID_MODEL or
 * TLB_NO_MODEL).
 */
const char *tlb_auto_model(const char *preset, const char *cpu, char *why,
			   size_t n);
/*
 * tlb_init() of a preset, a spec or TLB_CPUID_MODEL: the leaves are read
 * first (once), and their geometry handed to the model under that name
 * (tlb_hand_geometry()), so that tlb_spec(), tlb_source() and
 * tlb_geometry_json() know it from then on
 */
int tlb_init_host(struct tlb_model *m, const char *name);
/*
 * The whole picture as one JSON object (benchtool tlbgeometry, and the
 * chase's "@meta tlb_geometry" with geometry: model, why, source, spec,
 * levels (per level and size: entries, ways, held_as, reach_bytes: the
 * entries times the size they are held as), geometry (the
 * model's arrays), cpu, cpuid (what the leaves say) and disagreements.
 */
int tlb_report_json(const char *model, const char *why, char *buf, size_t n);
/* prints "@meta tlb_geometry {...}" (tlb_report_json) */
void tlb_emit_model_meta(const char *model, const char *why);

#endif
