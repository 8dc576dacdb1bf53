/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tlbuse.h - the TLB model (tlbmodel.h) as a benchmark uses it, one piece
 * for every benchmark that models (chase, mlp) or reports the model's
 * geometry (tlbreach): the --model and --model-cap options, their check
 * and its error message, --model auto, the model_preset column, and the
 * replay of a benchmark's own chains through the model.  A benchmark
 * names its struct tlb_use in its struct bench (.tlb), and the runner
 * calls the check and the start; the benchmark, the rest.
 *
 * The replay follows the chains as they lie in memory, interleaved as the
 * benchmark's loop runs them (one chain: the chase's cycle), model_cap
 * accesses to warm the model and the next model_cap counted.  Addresses
 * are offsets from the working set's start added to a 1 TB base, aligned
 * to every page size, so backings with equal page sizes model alike and
 * a result is computed once per (page size, working set, point).
 */
#ifndef BENCH_TLBUSE_H
#define BENCH_TLBUSE_H

#include <stddef.h>
#include <stdint.h>

#include "counters.h"

#define TLB_USE_MAX_CHAINS 16

struct tlb_memo;

struct tlb_use {
	const char *model;	/* auto, a preset or a spec; after start() */
				/* a preset, cpuid or none (TLB_NO_MODEL) */
	uint64_t cap;		/* accesses counted, after as many warm */
	struct tlb_memo *memo;
};

/* a benchmark's defaults: the model it names when given no --model */
#define TLB_USE_INIT(dflt) { .model = (dflt), .cap = 1 << 16 }

#define TLB_USE_HELP "TLB model: auto, none, a preset or a spec " \
	"(bench/tlbmodel.h); auto: the pinned core's preset, else its " \
	"CPUID geometry on bare metal, else none (bench/tlbcpuid.h)"

/* the two options, in a benchmark's bench_opt table; dflt as a string */
#define TLB_USE_OPTS(u, dflt)						\
	{ .name = "model", .arg = "NAME", .kind = OPT_STR,		\
	  .dst = &(u).model, .help = TLB_USE_HELP " (" dflt ")" },	\
	{ .name = "model-cap", .arg = "N", .kind = OPT_COUNT,		\
	  .dst = &(u).cap, .min = 1,					\
	  .help = "model accesses counted, after as many warm (65536)" }

/* 0 if name is auto or a model tlb_init() takes, else -1 and why */
int tlb_use_check(const char *name, char *why, size_t n);
/* resolves auto on the counters' core, and prints @meta tlb_geometry */
void tlb_use_start(struct tlb_use *u, const struct counters *c);
/* the model_preset column: the model's name, or "custom" for a spec */
const char *tlb_use_preset(const struct tlb_use *u);
/*
 * The model's L1 misses and walks per 1000 accesses of the n chains
 * (n <= TLB_USE_MAX_CHAINS) from starts[] in the working set at base:
 * 1, or 0 when there is no model (the model columns stay empty) or it
 * failed (said in an @error).  point tells apart the curves of one size.
 */
int tlb_use_replay(struct tlb_use *u, const char *base,
		   void **const starts[], int n, unsigned long page_kb,
		   size_t wss, int point, double *l1, double *walks);

#endif
