/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tlbmodel.h - a deterministic data-TLB model.
 *
 * Hardware TLB counters do not exist under TCG (nor on the development
 * hosts), so the chase replays its own access stream through this model.
 * Every number it produces is a model, reported only in model_* columns.
 *
 * Geometry is a spec string, e.g. the Skylake preset
 *   "l1=4K:64:4,2M:32:4,1G:4:4;l2=4K+2M:1536:12,1G:16:4"
 * level l1 or l2, then arrays separated by commas; each array is
 * SIZES:ENTRIES:WAYS[:smash] where SIZES is 4K, 2M, 1G joined by '+'
 * (the page sizes it holds), ENTRIES/WAYS sets, LRU within a set, and
 * "smash" means a 1G translation is held as the 2M entry covering the
 * access (AMD's L2 DTLB).  An access looks up the L1 array(s) for its page
 * size; a miss there is an L1 miss and looks up the L2 array(s); a miss
 * there is a page walk, which fills L2 (if an array holds that size) and L1.
 */
#ifndef BENCH_TLBMODEL_H
#define BENCH_TLBMODEL_H

#include <stdint.h>

#define TLB_MAX_ARRAYS 4

struct tlb_array {
	unsigned sizes;		/* bit 0: 4K, bit 1: 2M, bit 2: 1G */
	unsigned entries, ways, sets;
	int smash;
	uint64_t *tag;		/* sets * ways; 0 = invalid */
	uint64_t *stamp;	/* LRU: last use */
};

struct tlb_model {
	struct tlb_array l1[TLB_MAX_ARRAYS], l2[TLB_MAX_ARRAYS];
	int nl1, nl2;
	uint64_t clock;
	uint64_t accesses, l1_misses, walks;
};

struct tlb_preset {
	const char *name;
	const char *spec;
	const char *source;
};

extern const struct tlb_preset tlb_presets[];

/* name is a preset name or a spec string; returns 0, or -1 if invalid */
int tlb_init(struct tlb_model *m, const char *name);
void tlb_free(struct tlb_model *m);
void tlb_access(struct tlb_model *m, uint64_t va, unsigned long page_kb);
void tlb_reset_counts(struct tlb_model *m);
/* the spec string of a preset name (or name itself if it is a spec) */
const char *tlb_spec(const char *name);

#endif
