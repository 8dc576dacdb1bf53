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
 * SIZES:ENTRIES:WAYS[:splinter][:pde][:lru|:plru|:random] where SIZES is 4K,
 * 64K, 2M, 32M, 512M, 1G joined by '+' (the page sizes it holds),
 * ENTRIES/WAYS sets (rounded up: where ENTRIES is no multiple of WAYS
 * the last set has the remainder's ways, so zen3's 2048 entries 12-way
 * are 170 sets of 12 and one of 8), and the last token overrides the
 * policy for that array.  The sizes are x86's 4K, 2M, 1G plus arm64's
 * with 4 KB granules, 64K (16 contiguous 4K PTEs, CONT_PTE) and 32M (16
 * contiguous 2M blocks, CONT_PMD); 512M is there because Arm L1 data TLBs
 * hold 512M entries.
 * (16K, arm64's 16 KB granule, is not modelled.)
 * A PAGE_KB between two sizes counts as the smaller one (4M as 2M).
 *
 * Which entry holds a page: the first array of the level that holds the
 * page's size.  If none does, a "splinter" array holds it as the entry of
 * the largest size it holds below the page's, the one covering the access
 * (an Arm L1 holding 4K+64K+2M+512M caches a 32M page as a 2M entry and a
 * 1G page as a 512M entry; AMD's L2 caches 1G pages as 2M entries, which
 * AMD calls smashing, so "smash" is accepted for "splinter"); the
 * splintering array with the largest such size wins, the first on a tie.
 * If no array holds or splinters it, the level does not cache the page at
 * all (an Intel STLB without 1G entries): every access to it misses there.
 * tlb_access(m, va, 64) on an x86 preset therefore misses both levels:
 * x86 has no 64 KB pages.
 *
 * ":pde" (an L2 array): a walk for a 4K page also caches the page-directory
 * entry of its 2 MB region there, as AMD's L2 DTLBs do, so PDEs take
 * entries from the pages (a PDE hit still counts as a walk).
 *
 * Replacement within a set: an empty way is filled first; otherwise
 *   lru     true LRU (the default of a spec that names no policy)
 *   plru    tree-PLRU: one bit per node of a binary tree over the ways
 *           points to the half to evict from, and a hit or fill turns the
 *           bits on its path away from it (the classic tree for a power of
 *           two ways; for other counts the tree over the ways is padded to
 *           the next power of two and empty subtrees are never chosen)
 *   random  a way drawn from a fixed-seed xorshift generator, so a run
 *           repeats exactly
 * Vendors do not publish their TLB replacement: every preset says so in
 * its source and is modelled as seeded random (";policy=random" in its
 * spec, as is the CPUID geometry); true LRU, and tree-PLRU with a
 * power-of-two way count, turn a cycle just past a level's reach into a
 * miss on every access at steady state, a cliff no real TLB shows
 * (tlbmodel.c says where that was measured).
 *
 * An access looks up the L1 entry for its page; a miss there is an L1
 * miss and looks up the L2 entry; a miss there is a page walk, which fills
 * the L2 and L1 entries (where the level caches the page).
 *
 * Left out (TLB_LEAVES_OUT, also written into meta.json): page-walk caches
 * (paging-structure caches; every walk counts the same however much of it
 * they would serve), the coalescing of contiguous pages into one entry
 * (AMD's of 4 KB pages, the Arm L2 TLB's of up to four pages), cores that
 * ignore arm64's contiguous bit (a 64K or 32M page is always one page of
 * that size, held whole wherever an array holds the size), instruction
 * TLBs, the skewed associativity of AMD's L2 (modelled as plain sets),
 * how an array of several sizes indexes them (here: each entry's own page
 * number modulo the sets), prefetch (also Arm's translation-table
 * prefetcher) and wrong-path fills.
 */
#ifndef BENCH_TLBMODEL_H
#define BENCH_TLBMODEL_H

#include <stddef.h>
#include <stdint.h>

#define TLB_MAX_ARRAYS 4
#define TLB_NSIZES 6		/* 4K, 64K, 2M, 32M, 512M, 1G */

#define TLB_LEAVES_OUT "page-walk caches (every walk counts the same), " \
	"coalescing of contiguous pages into one entry (AMD's of 4 KB " \
	"pages, the Arm L2 TLB's of up to four), cores ignoring the " \
	"contiguous bit (a 64K or 32M page is always one page), " \
	"instruction TLBs, skewed associativity (modelled as plain sets), " \
	"how multi-size arrays index (own page number modulo sets), " \
	"any partition of ways by page size (none documented), " \
	"prefetch and wrong-path fills"

enum tlb_policy { TLB_LRU, TLB_PLRU, TLB_RANDOM };

struct tlb_array {
	unsigned sizes;		/* bit i: tlb_page_kb[i] */
	unsigned entries, ways, sets;
	int splinter;
	int pde;		/* also holds the PDE of each 4K page walked */
	int policy;		/* enum tlb_policy; -1 until parsed */
	unsigned tree;		/* plru: ways rounded up to a power of two */
	uint64_t *tag;		/* sets * ways; 0 = invalid */
	uint64_t *stamp;	/* lru: last use */
	uint8_t *bits;		/* plru: sets * tree node bits (1..tree-1) */
};

struct tlb_model {
	struct tlb_array l1[TLB_MAX_ARRAYS], l2[TLB_MAX_ARRAYS];
	int nl1, nl2;
	int policy;		/* the spec's default (enum tlb_policy) */
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
/* the page sizes of a spec's SIZES, ascending, in kB */
extern const unsigned long tlb_page_kb[TLB_NSIZES];

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
 * page sizes, policy and whether it holds 1G pages as 2M entries
 * ("1g_as_2m") per array, "held_as": per level and page size the entry
 * size that caches it (null: not cached), and what the model leaves out.
 * Returns 0, or -1 if buf was too small.
 */
int tlb_geometry_json(const struct tlb_model *m, const char *name,
		      char *buf, size_t n);
/*
 * The index of the array of arr[0..n) caching a page of page_kb, and as
 * which size index (*eff; tlb_size_name names it); -1 if none does.
 */
int tlb_holder(const struct tlb_array *arr, int n, unsigned long page_kb,
	       int *eff);
const char *tlb_size_name(int sz);
/* a preset's source, the handed geometry's, or "custom" */
const char *tlb_source(const char *name);
/*
 * Hands the model a geometry under a name of its own, beside the presets:
 * the model reads no CPU itself, so tlbcpuid.c hands it the geometry this
 * CPU's CPUID reports (TLB_CPUID_MODEL, tlb_init_host()).  spec: a spec as
 * above, given the presets' replacement policies (LRU in the L1); NULL:
 * the name has none here (tlb_init() refuses it).  source: where it is
 * from, for tlb_source().  A later call replaces it.
 */
void tlb_hand_geometry(const char *name, const char *spec,
		       const char *source);

#endif
