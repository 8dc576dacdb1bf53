// SPDX-License-Identifier: GPL-2.0
/*
 * chase.c - dependent random pointer chase: latency per access.
 *
 * Each element holds the address of the next, in one random cycle
 * (Sattolo's algorithm, seeded), so every load depends on the one before
 * and neither prefetcher nor out-of-order core can overlap them.  One
 * element per 64-byte line (--hop line) or one per 4 KB page (--hop page;
 * the element sits at a different line of each page so the pages do not
 * all share one cache set): the page hop makes every access a new base
 * page, which isolates the TLB.  The loop is unrolled 16 times and its end
 * pointer is stored to a volatile sink so the compiler keeps it.
 *
 * The same permutation is replayed through the TLB model (tlbmodel.c)
 * with the page size the kernel gave (smaps): model_cap accesses warm the
 * model, the next model_cap are counted.  Addresses are the chase's
 * offsets from a canonical 1 GB-aligned base, so backings with equal page
 * sizes model alike and the result is computed once per (page size, size,
 * hop).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "tlbmodel.h"

#define LINE 64
#define PAGE 4096
#define UNROLL 16
#define MODEL_BASE (1ULL << 40)

void *volatile chase_sink;

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* a random cyclic order of 0..n-1 (Sattolo); the same for equal seed, n */
static uint32_t *make_order(size_t n, uint64_t seed)
{
	uint32_t *a = malloc(n * sizeof(*a));
	uint64_t s = seed * 0x100000001b3ULL + n;
	size_t i;

	if (!a)
		return NULL;
	for (i = 0; i < n; i++)
		a[i] = i;
	for (i = n - 1; i > 0; i--) {
		size_t j = splitmix64(&s) % i;	/* j < i: one single cycle */
		uint32_t t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
	return a;
}

static size_t elem_off(size_t i, int hop)
{
	return hop == HOP_PAGE ? i * PAGE + (i % (PAGE / LINE)) * LINE :
				 i * LINE;
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

struct order_cache {
	uint32_t *order[2][MAX_SIZES];	/* [hop - 1][size index] */
};

struct model_memo {
	unsigned long page_kb;
	size_t wss;
	int hop;
	double l1, walks;
	struct model_memo *next;
};

static struct model_memo *memo;

static int model_run(const struct bench_opts *o, const uint32_t *order,
		     size_t n, int hop, unsigned long page_kb, size_t wss,
		     double *l1, double *walks)
{
	struct model_memo *e;
	struct tlb_model m;
	uint64_t k, pos = 0;
	int pass;

	for (e = memo; e; e = e->next)
		if (e->page_kb == page_kb && e->wss == wss && e->hop == hop) {
			*l1 = e->l1;
			*walks = e->walks;
			return 0;
		}
	if (tlb_init(&m, o->model))
		return -1;
	/*
	 * order[] lists the cycle: element order[k] is followed by
	 * order[k + 1], so walking k replays the chase's own stream.
	 */
	for (pass = 0; pass < 2; pass++) {
		tlb_reset_counts(&m);
		for (k = 0; k < o->model_cap; k++) {
			tlb_access(&m, MODEL_BASE + elem_off(order[pos], hop),
				   page_kb);
			if (++pos == n)
				pos = 0;
		}
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

static double per_1k(const struct counter_values *v, int ev, uint64_t n)
{
	return 1000.0 * v->v[ev] / n;
}

static void measure(const struct bench_opts *o, struct counters *c,
		    const struct mapping *m, unsigned long page_kb,
		    struct order_cache *oc, int hop, int si)
{
	size_t wss = o->sizes[si], stride = hop == HOP_PAGE ? PAGE : LINE;
	size_t n = wss / stride, k;
	uint64_t blocks = (o->hops + UNROLL - 1) / UNROLL, hops = blocks * UNROLL;
	double *ns = calloc(o->reps, sizeof(double));
	double *cyc = calloc(o->reps, sizeof(double));
	double *dl = calloc(o->reps, sizeof(double));
	double *wk = calloc(o->reps, sizeof(double));
	int ok[EV_NR], r, i;
	uint32_t *order;
	char *base = m->addr;
	void **p;
	struct stats st, sc, sdl, swk;
	double ml1 = 0, mwk = 0;
	int model_ok;
	char b[5][32];

	if (n < 2)
		goto out;
	order = oc->order[hop - 1][si];
	if (!order)
		order = oc->order[hop - 1][si] = make_order(n, o->seed);
	if (!order || !ns || !cyc || !dl || !wk) {
		emit_error("out of memory for %zu elements", n);
		goto out;
	}
	for (k = 0; k < n; k++)
		*(void **)(base + elem_off(order[k], hop)) =
			base + elem_off(order[k + 1 == n ? 0 : k + 1], hop);

	p = (void **)(base + elem_off(order[0], hop));
	for (r = 0; r < o->warmup; r++)
		p = chase(p, blocks);
	for (i = 0; i < EV_NR; i++)
		ok[i] = 1;
	for (r = 0; r < o->reps; r++) {
		struct counter_values v;
		double t0, t1;

		counters_start(c);
		t0 = now_ns();
		p = chase(p, blocks);
		t1 = now_ns();
		counters_stop(c, &v);
		check_duration(t1 - t0);
		ns[r] = (t1 - t0) / hops;
		cyc[r] = (double)v.v[EV_CYCLES] / hops;
		dl[r] = per_1k(&v, EV_L1_DTLB_MISS, hops);
		wk[r] = per_1k(&v, EV_WALK, hops);
		for (i = 0; i < EV_NR; i++)
			ok[i] &= v.ok[i];
	}
	chase_sink = p;
	stats_compute(ns, o->reps, &st);
	stats_compute(cyc, o->reps, &sc);
	stats_compute(dl, o->reps, &sdl);
	stats_compute(wk, o->reps, &swk);
	model_ok = !model_run(o, order, n, hop, page_kb, wss, &ml1, &mwk);
	if (!model_ok)
		emit_error("bad TLB model spec '%s'", o->model);

	/* backing,page_kb,wss_bytes,ns_per_access,ns_min,ns_max,
	 * l1_dtlb_misses_per_1k,walks_per_1k,model_l1_misses_per_1k,
	 * model_walks_per_1k,hop,cv,reps,hops,cycles_per_access,
	 * model_preset */
	emit_row("%s,%lu,%zu,%.3f,%.3f,%.3f,%s,%s,%s,%s,%s,%.4f,%d,%llu,%s,%s",
		 m->b->name, page_kb, wss, st.median, st.min, st.max,
		 fmt_opt(b[0], 32, ok[EV_L1_DTLB_MISS], sdl.median),
		 fmt_opt(b[1], 32, ok[EV_WALK], swk.median),
		 model_ok ? (snprintf(b[2], 32, "%.3f", ml1), b[2]) : "",
		 model_ok ? (snprintf(b[3], 32, "%.3f", mwk), b[3]) : "",
		 hop == HOP_PAGE ? "page" : "line", st.cv, o->reps,
		 (unsigned long long)hops,
		 fmt_opt(b[4], 32, ok[EV_CYCLES], sc.median),
		 tlb_spec(o->model) == o->model ? "custom" : o->model);
	progress("%-14s %-4s %10zu B (%d/%d): %8.2f ns/access  cv %.3f  "
		 "model walks/1k %.1f", m->b->name,
		 hop == HOP_PAGE ? "page" : "line", wss, si + 1, o->nsizes,
		 st.median, st.cv, mwk);
out:
	free(ns);
	free(cyc);
	free(dl);
	free(wk);
}

static int run(const struct bench_opts *o, struct counters *c)
{
	static struct order_cache oc;
	char why[512];
	int i, si, hop, rc = 0, done = 0, total = 0;

	for (i = 0; i < nbackings; i++)
		total += backing_selected(o, &backings[i]);
	for (i = 0; i < nbackings; i++) {
		const struct backing *b = &backings[i];
		struct mapping m;
		unsigned long kb;

		if (!backing_selected(o, b))
			continue;
		done++;
		if (backing_available(b, why, sizeof(why))) {
			progress("skip %s: %s", b->name, why);
			emit_backing_meta(b, "skipped", why, 0);
			continue;
		}
		progress("backing %s (%d/%d)", b->name, done, total);
		if (backing_map(b, max_size(o), 0, &m, why, sizeof(why))) {
			emit_error("%s", why);
			emit_backing_meta(b, "failed", why, 0);
			rc = 2;
			continue;
		}
		/* fault the working sets in (a 1 GB page is cleared whole) */
		memset(m.addr, 0, max_size(o));
		if (backing_verify(&m, &kb, why, sizeof(why))) {
			emit_error("%s", why);
			emit_backing_meta(b, "failed", why, 0);
			backing_unmap(&m);
			rc = 2;
			continue;
		}
		for (hop = HOP_LINE; hop <= HOP_PAGE; hop++) {
			if (!(o->hop & hop))
				continue;
			for (si = 0; si < o->nsizes; si++)
				measure(o, c, &m, kb, &oc, hop, si);
		}
		backing_unmap(&m);
		emit_backing_meta(b, "measured", "", kb);
	}
	return rc;
}

const struct bench this_bench = {
	.name = "chase",
	.desc = "dependent random pointer chase, ns per access",
	.csv_header = "backing,page_kb,wss_bytes,ns_per_access,ns_min,ns_max,"
		      "l1_dtlb_misses_per_1k,walks_per_1k,"
		      "model_l1_misses_per_1k,model_walks_per_1k,hop,cv,reps,"
		      "hops,cycles_per_access,model_preset",
	.run = run,
};
