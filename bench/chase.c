// SPDX-License-Identifier: GPL-2.0
/*
 * chase.c - dependent random pointer chase: latency per access.
 *
 * Each element holds the address of the next, in one random cycle
 * (Sattolo's algorithm, seeded; layout.c builds it, for multiload too), so every load depends on the one before
 * and neither prefetcher nor out-of-order core can overlap them.  One
 * element per 64-byte line (--hop line) or one per 4 KB page (--hop page;
 * at the line page_line() picks for that page, runner.h): the page hop
 * makes every access a new base page, which isolates the TLB.  Every line
 * is in the line hop's cycle, so the adjacent-line prefetcher fetches
 * elements too (multichase spaces them 256 B apart): measured natively,
 * the line hop read within 4 % of a one-chain mlp at 256 B
 * (results/README.md, chase.csv).  The cycle
 * is shuffled in place in the mapping, so the chase needs no memory
 * besides its working set.  The loop is unrolled 16 times and its end
 * pointer is stored to a volatile sink so the compiler keeps it.
 *
 * The same cycle is replayed through the TLB model with the page size
 * the kernel gave (smaps), as tlbuse.h says, once per (page size, size,
 * hop).
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
#include "tlbuse.h"

#define UNROLL CHASE_UNROLL

/* HOP_LINE, HOP_PAGE (layout.h): bits of the hop choice + 1 */

static const char *const hop_names[] = { "line", "page", "both", NULL };
static int hop_choice;				/* index into hop_names */
/* the runner's points: one per hop kind, hop = index + 1 */
static const char *const hop_points[] = { "line", "page", NULL };
static uint64_t hops = 1 << 20;
static struct tlb_use tlb = TLB_USE_INIT("auto");
static int check_cycle;
static uint64_t stray;

static const struct bench_opt chase_opts[] = {
	{ .name = "hop", .arg = "line|page|both", .kind = OPT_CHOICE,
	  .help = "one hop per cache line, per 4 KB page, or both (line)",
	  .dst = &hop_choice, .choices = hop_names },
	{ .name = "hops", .arg = "N", .help = "hops per repetition (1M)",
	  .kind = OPT_COUNT, .dst = &hops, .min = UNROLL },
	TLB_USE_OPTS(tlb, "auto"),
	{ .name = "check-cycle", .kind = OPT_FLAG, .dst = &check_cycle,
	  .help = "walk each cycle untimed and report its structure in "
	  "@meta cycle (the tests' check of the chase)" },
	{ .name = "stray", .arg = "N", .kind = OPT_COUNT, .dst = &stray,
	  .help = "fault a fresh page in each of the first N timed "
	  "repetitions of a row (a test of the faults column; 0)" },
	{ 0 },
};

void *volatile chase_sink;

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
	chase_build_cycle(x->m->addr, n, hop, x->o->seed);
	pt->start = (void **)(x->m->addr + chase_elem_off(0, hop,
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
		pt->p = chase_blocks(pt->p, pt->blocks);
		return 0;
	}
	if ((uint64_t)r < stray)
		fresh = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	counters_start(x->c);
	t0 = now_ns();
	if (fresh != MAP_FAILED)
		*(volatile char *)fresh = 1;
	pt->p = chase_blocks(pt->p, pt->blocks);
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

	stats_compute(pt->ns, reps, &st);
	stats_compute(pt->cyc, reps, &sc);
	stats_compute(pt->l1, reps, &sl);
	stats_compute(pt->wk, reps, &sw);
	const struct cell row[] = {
		CELL_S(x->b->name), CELL_U(x->page_kb),
		CELL_U(x->o->sizes[x->si]), CELL_F(st.median), CELL_F(st.min),
		CELL_F(st.max), CELL_OPT(pt->ok[EV_L1_DTLB_MISS], sl.median),
		CELL_OPT(pt->ok[EV_WALK], sw.median),
		CELL_OPT(model_ok, ml1), CELL_OPT(model_ok, mwk),
		CELL_S(hop_names[hop - 1]), CELL_F(st.cv), CELL_D(reps),
		CELL_U(pt->blocks * UNROLL),
		CELL_OPT(pt->ok[EV_CYCLES], sc.median),
		CELL_S(tlb_use_preset(&tlb)),
		CELL_OPT_U(pt->ok[EV_PAGE_FAULTS], pt->faults),
	};

	emit_row(row, NCELLS(row));
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
		model_ok = tlb_use_replay(&tlb, x->m->addr, &pt->start, 1,
					  x->page_kb, x->o->sizes[x->si],
					  pt->hop, &ml1, &mwk);
		emit(x, pt, model_ok, ml1, mwk);
	}
	point_free(pt);
	return 0;
}

static const struct bench chase_bench = {
	.name = "chase",
	.desc = "dependent random pointer chase, ns per access",
	.columns = "backing %s, page_kb %u, wss_bytes %u, "
		   "ns_per_access %.3f, ns_min %.3f, ns_max %.3f, "
		   "l1_dtlb_misses_per_1k %.3f, walks_per_1k %.3f, "
		   "model_l1_misses_per_1k %.3f, model_walks_per_1k %.3f, "
		   "hop %s, cv %.4f, reps %d, hops %u, "
		   "cycles_per_access %.3f, model_preset %s, faults %u",
	.values_of = "hop",
	.values = hop_points,
	.key = "backing,hop,wss_bytes",
	.metric = "ns_per_access",
	.lower_is_better = 1,
	.opts = chase_opts,
	.tlb = &tlb,
	.points = hop_points,
	.prepare = prepare,
	.rep = rep,
	.finish = finish,
};
BENCH_REGISTER(chase_bench);
