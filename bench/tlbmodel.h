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
 * items separated by ';': a level l1= or l2=, a default replacement
 * policy=lru|plru|random, or a preset name standing for its spec (so
 * "skylake;policy=plru" is Skylake's geometry under tree-PLRU).  A level
 * lists arrays separated by commas; each array is
 * SIZES:ENTRIES:WAYS[:smash][:lru|:plru|:random] where SIZES is 4K, 2M, 1G
 * joined by '+' (the page sizes it holds), ENTRIES/WAYS sets, "smash"
 * means a 1G translation is held as the 2M entry covering the access
 * (AMD's L2 DTLB), and the last token overrides the policy for that array.
 *
 * Replacement within a set: an empty way is filled first; otherwise
 *   lru     true LRU (the default, and what every preset uses)
 *   plru    tree-PLRU: one bit per node of a binary tree over the ways
 *           points to the half to evict from, and a hit or fill turns the
 *           bits on its path away from it (the classic tree for a power of
 *           two ways; for other counts the tree over the ways is padded to
 *           the next power of two and empty subtrees are never chosen)
 *   random  a way drawn from a fixed-seed xorshift generator, so a run
 *           repeats exactly
 * Vendors do not publish their TLB replacement; LRU is the default because
 * it gives the sharpest, easiest to read knee at each reach, while plru
 * and random show how much a real policy can soften it.
 *
 * An access looks up the L1 array(s) for its page size; a miss there is an
 * L1 miss and looks up the L2 array(s); a miss there is a page walk, which
 * fills L2 (if an array holds that size) and L1.
 *
 * Left out (TLB_LEAVES_OUT, also written into meta.json): page-walk caches
 * (paging-structure caches; every walk counts the same however much of it
 * they would serve), AMD's coalescing of contiguous 4 KB pages into one
 * entry, instruction TLBs, the skewed associativity of AMD's L2 (modelled
 * as plain sets), prefetch and wrong-path fills.
 */
#ifndef BENCH_TLBMODEL_H
#define BENCH_TLBMODEL_H

#include <stddef.h>
#include <stdint.h>

#define TLB_MAX_ARRAYS 4

#define TLB_LEAVES_OUT "page-walk caches (every walk counts the same), " \
	"AMD's coalescing of contiguous 4 KB pages into one entry, " \
	"instruction TLBs, skewed associativity (modelled as plain sets), " \
	"prefetch and wrong-path fills"

enum tlb_policy { TLB_LRU, TLB_PLRU, TLB_RANDOM };

struct tlb_array {
	unsigned sizes;		/* bit 0: 4K, bit 1: 2M, bit 2: 1G */
	unsigned entries, ways, sets;
	int smash;
	int policy;		/* enum tlb_policy; -1 until parsed */
	unsigned tree;		/* plru: ways rounded up to a power of two */
	uint64_t *tag;		/* sets * ways; 0 = invalid */
	uint64_t *stamp;	/* lru: last use */
	uint8_t *bits;		/* plru: sets * tree node bits (1..tree-1) */
};

struct tlb_model {
	struct tlb_array l1[TLB_MAX_ARRAYS], l2[TLB_MAX_ARRAYS];
	int nl1, nl2;
	uint64_t clock;
	uint64_t rng;		/* random: xorshift64 state */
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
/*
 * The whole geometry of an initialised model as one JSON object: name,
 * spec, source (preset's or "custom"), levels with entries, ways, sets,
 * page sizes, smash and policy per array, and what the model leaves out.
 * Returns 0, or -1 if buf was too small.
 */
int tlb_geometry_json(const struct tlb_model *m, const char *name,
		      char *buf, size_t n);
/* prints "@meta tlb_geometry {...}" for name; nothing if it is invalid */
void tlb_emit_meta(const char *name);

#endif
