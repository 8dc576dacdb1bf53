// SPDX-License-Identifier: GPL-2.0
/*
 * chase.c - dependent random pointer chase: latency per access.
 *
 * Each element holds the address of the next, in one random cycle
 * (Sattolo's algorithm, seeded), so every load depends on the one before
 * and neither prefetcher nor out-of-order core can overlap them.  One
 * element per 64-byte line (--hop line) or one per 4 KB page (--hop page;
 * at the line page_line() picks for that page, runner.h): the page hop
 * makes every access a new base page, which isolates the TLB.  The cycle
 * is shuffled in place in the mapping, so the chase needs no memory
 * besides its working set.  The loop is unrolled 16 times and its end
 * pointer is stored to a volatile sink so the compiler keeps it.
 *
 * The same cycle is replayed through the TLB model (tlbmodel.c) with the
 * page size the kernel gave (smaps): model_cap accesses warm the model,
 * the next model_cap are counted.  Addresses are the chase's offsets from
 * a canonical 1 GB-aligned base, so backings with equal page sizes model
 * alike and the result is computed once per (page size, size, hop).
 *
 * faults: the page faults counted (software event) in all the timed
 * repetitions of a row together; the working set is faulted in before
 * them, so anything but 0 is a fault the timing includes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "runner.h"
#include "tlbcpuid.h"
#include "tlbmodel.h"

#define UNROLL 16
#define MODEL_BASE (1ULL << 40)

enum hop_mode { HOP_LINE = 1, HOP_PAGE = 2 };	/* bits of hop_mask */

static const char *const hop_names[] = { "line", "page", "both", NULL };
static int hop_choice;				/* index into hop_names */
/* the runner's points: one per hop kind, hop = index + 1 */
static const char *const hop_points[] = { "line", "page", NULL };
static uint64_t hops = 1 << 20;
static const char *model = "skylake";
static uint64_t model_cap = 1 << 16;
static int check_cycle;
static uint64_t stray;

static const struct bench_opt chase_opts[] = {
	{ .name = "hop", .arg = "line|page|both", .kind = OPT_CHOICE,
	  .help = "one hop per cache line, per 4 KB page, or both (line)",
	  .dst = &hop_choice, .choices = hop_names },
	{ .name = "hops", .arg = "N", .help = "hops per repetition (1M)",
	  .kind = OPT_COUNT, .dst = &hops, .min = UNROLL },
	{ .name = "model", .arg = "NAME", .kind = OPT_STR, .dst = &model,
	  .help = "TLB model preset or spec (skylake; bench/tlbmodel.h); "
	  "auto: the pinned core's preset, else its CPUID geometry on bare "
	  "metal, else none (bench/tlbcpuid.h)" },
	{ .name = "model-cap", .arg = "N", .kind = OPT_COUNT,
	  .help = "model accesses counted, after as many warm (65536)",
	  .dst = &model_cap, .min = 1 },
	{ .name = "check-cycle", .kind = OPT_FLAG, .dst = &check_cycle,
	  .help = "walk each cycle untimed and report its structure in "
	  "@meta cycle (the tests' check of the chase)" },
	{ .name = "stray", .arg = "N", .kind = OPT_COUNT, .dst = &stray,
	  .help = "fault a fresh page in each of the first N timed "
	  "repetitions of a row (a test of the faults column; 0)" },
	{ 0 },
};

void *volatile chase_sink;

/* the element's byte offset from the start of the working set */
static size_t elem_off(size_t i, int hop, uint64_t key)
{
	return hop == HOP_PAGE ? i * PAGE + page_line(i, key) : i * LINE;
}

/*
 * Writes one random cycle through the n elements at base.  Sattolo's
 * shuffle of the identity gives a permutation a[] that is a single cycle,
 * and element i then points at element a[i]; a[] lives in the elements
 * themselves, as indices, until the last pass turns them into addresses.
 * The same for equal seed and n, whatever the backing.
 */
static void build_cycle(char *base, size_t n, int hop, uint64_t seed)
{
	uint64_t s = seed * 0x100000001b3ULL + n, key = page_line_key(seed);
	size_t i;

	for (i = 0; i < n; i++)
		*(uintptr_t *)(base + elem_off(i, hop, key)) = i;
	for (i = n - 1; i > 0; i--) {
		/* j < i: one single cycle */
		size_t j = mix64(s += 0x9e3779b97f4a7c15ULL) % i;
		uintptr_t *x = (uintptr_t *)(base + elem_off(i, hop, key));
		uintptr_t *y = (uintptr_t *)(base + elem_off(j, hop, key));
		uintptr_t t = *x;

		*x = *y;
		*y = t;
	}
	for (i = 0; i < n; i++) {
		void **e = (void **)(base + elem_off(i, hop, key));

		*e = base + elem_off(*(uintptr_t *)e, hop, key);
	}
}

static __attribute__((noinline)) void **chase(void **p, uint64_t blocks)
{
	while (blocks--) {
		p = *p; p = *p; p = *p; p = *p;
		p = *p; p = *p; p = *p; p = *p;
		p = *p; p = *p; p = *p; p = *p;
		p = *p; p = *p; p = *p; p = *p;
	}
	return p;
}

struct model_memo {
	unsigned long page_kb;
	size_t wss;
	int hop;
	double l1, walks;
	struct model_memo *next;
};

static struct model_memo *memo;

/*
 * The model's L1 misses and walks per 1000 accesses, replaying the cycle
 * as it lies in memory from start; memoised per (page size, size, hop).
 */
static int model_run(const char *base, void **start, int hop,
		     unsigned long page_kb, size_t wss, double *l1,
		     double *walks)
{
	struct model_memo *e;
	struct tlb_model m;
	void **p = start;
	uint64_t k;
	int pass;

	for (e = memo; e; e = e->next)
		if (e->page_kb == page_kb && e->wss == wss && e->hop == hop) {
			*l1 = e->l1;
			*walks = e->walks;
			return 0;
		}
	if (tlb_init(&m, model))
		return -1;
	for (pass = 0; pass < 2; pass++) {
		tlb_reset_counts(&m);
		for (k = 0; k < model_cap; k++, p = *p)
			tlb_access(&m, MODEL_BASE + ((char *)p - base), page_kb);
	}
	*l1 = 1000.0 * m.l1_misses / m.accesses;
	*walks = 1000.0 * m.walks / m.accesses;
	tlb_free(&m);
	e = malloc(sizeof(*e));
	if (e) {
		*e = (struct model_memo){ page_kb, wss, hop, *l1, *walks, memo };
		memo = e;
	}
	return 0;
}

/* one point (size, hop) on one backing: the chase and its repetitions */
struct point {
	int hop;
	void **start, **p;	/* the first element; where the chase is */
	uint64_t blocks;	/* unrolled blocks per repetition */
	uint64_t done;		/* hops chased so far, warm passes included */
	double *ns, *cyc, *l1, *wk;	/* per access, per repetition */
	uint64_t faults;	/* in all timed repetitions */
	int ok[EV_NR];		/* which counters counted every repetition */
};

static double per_1k(const struct counter_values *v, int ev, uint64_t n)
{
	return 1000.0 * v->v[ev] / n;
}

static void point_free(struct point *pt)
{
	free(pt->ns);
	free(pt->cyc);
	free(pt->l1);
	free(pt->wk);
	free(pt);
}

/* builds the cycle of hop kind x->pt + 1 in the backing's working set */
static int prepare(const struct bench_ctx *x, void **st)
{
	int hop = x->pt + 1, reps = x->o->reps, i;
	size_t n = x->o->sizes[x->si] / (hop == HOP_PAGE ? PAGE : LINE);
	struct point *pt;

	if (!((hop_choice + 1) & hop) || n < 2)
		return 1;
	pt = calloc(1, sizeof(*pt));
	if (pt) {
		pt->ns = calloc(reps, sizeof(double));
		pt->cyc = calloc(reps, sizeof(double));
		pt->l1 = calloc(reps, sizeof(double));
		pt->wk = calloc(reps, sizeof(double));
	}
	if (!pt || !pt->ns || !pt->cyc || !pt->l1 || !pt->wk) {
		if (pt)
			point_free(pt);
		emit_error("out of memory for %d repetitions", reps);
		return -1;
	}
	pt->hop = hop;
	pt->blocks = (hops + UNROLL - 1) / UNROLL;
	build_cycle(x->m->addr, n, hop, x->o->seed);
	pt->start = (void **)(x->m->addr + elem_off(0, hop,
					page_line_key(x->o->seed)));
	pt->p = pt->start;
	for (i = 0; i < EV_NR; i++)
		pt->ok[i] = 1;
	*st = pt;
	return 0;
}

/* one repetition: the chase, timed and counted unless a warmup (r < 0) */
static int rep(const struct bench_ctx *x, void *st, int r)
{
	struct point *pt = st;
	uint64_t n = pt->blocks * UNROLL;
	struct counter_values v;
	double t0, t1;
	char *fresh = MAP_FAILED;
	int i;

	pt->done += n;
	if (r < 0) {
		pt->p = chase(pt->p, pt->blocks);
		return 0;
	}
	if ((uint64_t)r < stray)
		fresh = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	counters_start(x->c);
	t0 = now_ns();
	if (fresh != MAP_FAILED)
		*(volatile char *)fresh = 1;
	pt->p = chase(pt->p, pt->blocks);
	t1 = now_ns();
	counters_stop(x->c, &v);
	if (fresh != MAP_FAILED)
		munmap(fresh, PAGE);
	check_duration(t1 - t0);
	pt->faults += v.v[EV_PAGE_FAULTS];
	pt->ns[r] = (t1 - t0) / n;
	pt->cyc[r] = (double)v.v[EV_CYCLES] / n;
	pt->l1[r] = per_1k(&v, EV_L1_DTLB_MISS, n);
	pt->wk[r] = per_1k(&v, EV_WALK, n);
	for (i = 0; i < EV_NR; i++)
		pt->ok[i] &= v.ok[i];
	return 0;
}

static void emit(const struct bench_ctx *x, struct point *pt, int model_ok,
		 double ml1, double mwk)
{
	struct stats st, sc, sl, sw;
	int reps = x->o->reps, hop = pt->hop;
	char b[5][32], f[24] = "";

	if (pt->ok[EV_PAGE_FAULTS])
		snprintf(f, sizeof(f), "%llu", (unsigned long long)pt->faults);
	stats_compute(pt->ns, reps, &st);
	stats_compute(pt->cyc, reps, &sc);
	stats_compute(pt->l1, reps, &sl);
	stats_compute(pt->wk, reps, &sw);
	/* the columns of chase_bench, in order */
	emit_row("%s,%lu,%zu,%.3f,%.3f,%.3f,%s,%s,%s,%s,%s,%.4f,%d,%llu,%s,%s,%s",
		 x->b->name, x->page_kb, x->o->sizes[x->si], st.median, st.min,
		 st.max, fmt_opt(b[0], 32, pt->ok[EV_L1_DTLB_MISS], sl.median),
		 fmt_opt(b[1], 32, pt->ok[EV_WALK], sw.median),
		 fmt_opt(b[2], 32, model_ok, ml1),
		 fmt_opt(b[3], 32, model_ok, mwk),
		 hop_names[hop - 1], st.cv, reps,
		 (unsigned long long)pt->blocks * UNROLL,
		 fmt_opt(b[4], 32, pt->ok[EV_CYCLES], sc.median),
		 tlb_spec(model) == model && strcmp(model, TLB_NO_MODEL) ?
		 "custom" : model, f);
	if (pt->faults)
		progress("warning: %s: %llu page faults in the timed "
			 "repetitions", x->b->name,
			 (unsigned long long)pt->faults);
	progress("%-14s %-4s %10zu B (%d/%d): %8.2f ns/access  cv %.3f  "
		 "model walks/1k %.1f", x->b->name, hop_names[hop - 1],
		 x->o->sizes[x->si], x->si + 1, x->o->nsizes, st.median, st.cv,
		 mwk);
}

/*
 * --check-cycle: walks the cycle from its start, untimed, and reports
 * what the tests check: how many elements it has before it closes, how
 * many distinct 4 KB pages they lie in and the most in one page (a page
 * hop has one element in each page of the working set, a line hop one in
 * each line), how many of a page's 64 line slots they use and how many
 * are not line-aligned, elements outside the working set, and where the
 * chase stopped (`position` steps from the start) against the hops it
 * counted.
 */
static void cycle_meta(const struct bench_ctx *x, const struct point *pt)
{
	size_t wss = x->o->sizes[x->si], npages = wss / PAGE, limit = wss / LINE;
	unsigned short *per_page = calloc(npages, sizeof(*per_page));
	size_t steps = 0, pages = 0, most = 0, outside = 0, pos = SIZE_MAX;
	size_t unaligned = 0;
	uint64_t slots = 0;	/* bit k: some element at line k of its page */
	void **p = pt->start;

	if (!per_page) {
		emit_error("--check-cycle: out of memory");
		return;
	}
	do {
		size_t off = (char *)p - x->m->addr;

		if (p == pt->p && pos == SIZE_MAX)
			pos = steps;
		if (off >= wss) {
			outside++;
			break;
		}
		pages += !per_page[off / PAGE]++;
		slots |= 1ULL << (off % PAGE / LINE);
		unaligned += off % LINE != 0;
		if (per_page[off / PAGE] > most)
			most = per_page[off / PAGE];
		p = *p;
	} while (p != pt->start && ++steps <= limit);
	printf("@meta cycle {\"backing\": \"%s\", \"wss_bytes\": %zu, "
	       "\"hop\": \"%s\", \"closed\": %s, \"elements\": %zu, "
	       "\"pages\": %zu, \"most_in_a_page\": %zu, \"line_slots\": %d, "
	       "\"unaligned\": %zu, \"outside\": %zu, "
	       "\"position\": %lld, \"hops_done\": %llu}\n", x->b->name, wss,
	       hop_names[pt->hop - 1], p == pt->start ? "true" : "false",
	       steps + 1, pages, most, __builtin_popcountll(slots), unaligned,
	       outside,
	       pos == SIZE_MAX ? -1LL : (long long)pos,
	       (unsigned long long)pt->done);
	free(per_page);
}

/* the row from the repetitions, with the model's replay of the cycle */
static int finish(const struct bench_ctx *x, void *st, int ok)
{
	struct point *pt = st;
	double ml1 = 0, mwk = 0;
	int model_ok;

	if (ok) {
		chase_sink = pt->p;
		if (check_cycle)
			cycle_meta(x, pt);
		/* no model fits (--model auto): its columns stay empty */
		model_ok = strcmp(model, TLB_NO_MODEL) &&
			   !model_run(x->m->addr, pt->start, pt->hop,
				      x->page_kb, x->o->sizes[x->si], &ml1,
				      &mwk);
		if (!model_ok && strcmp(model, TLB_NO_MODEL))
			emit_error("TLB model: out of memory");
		emit(x, pt, model_ok, ml1, mwk);
	}
	point_free(pt);
	return 0;
}

static int check(char *why, size_t n)
{
	struct tlb_model m;
	int i, l;

	if (!strcmp(model, "auto"))
		return 0;
	if (!tlb_init(&m, model)) {
		tlb_free(&m);
		return 0;
	}
	l = snprintf(why, n, "--model: '%s' is not auto, a preset (",
		     model);
	for (i = 0; tlb_presets[i].name && l < (int)n; i++)
		l += snprintf(why + l, n - l, "%s%s", i ? ", " : "",
			      tlb_presets[i].name);
	if (l < (int)n)
		snprintf(why + l, n - l, ") or a valid spec (see "
			 "bench/tlbmodel.h)");
	return -1;
}

/* --model auto: the model of the core the counters run on, or none */
static void start(struct counters *c)
{
	char why[600] = "";

	if (!strcmp(model, "auto"))
		model = counters_model_preset(c, why, sizeof(why));
	tlb_emit_model_meta(model, why);
}

static const struct bench chase_bench = {
	.name = "chase",
	.desc = "dependent random pointer chase, ns per access",
	.columns = "backing,page_kb,wss_bytes,ns_per_access,ns_min,ns_max,"
		   "l1_dtlb_misses_per_1k,walks_per_1k,"
		   "model_l1_misses_per_1k,model_walks_per_1k,hop,cv,reps,"
		   "hops,cycles_per_access,model_preset,faults",
	.key = "backing,hop,wss_bytes",
	.metric = "ns_per_access",
	.lower_is_better = 1,
	.opts = chase_opts,
	.check = check,
	.start = start,
	.points = hop_points,
	.prepare = prepare,
	.rep = rep,
	.finish = finish,
};
BENCH_REGISTER(chase_bench);
