// SPDX-License-Identifier: GPL-2.0
/*
 * gups.c - GUPS, HPCC's RandomAccess by its rules, single-threaded (HPCC's
 * SingleRandomAccess: one process, one table; not the MPI version).
 *
 * The table: the largest power of two of 64-bit words that fits the
 * working set (HPCC sizes its table the same way from the memory it is
 * given), T[i] = i.  One pass is HPCC's timed run: 4 x table-size updates
 * (--updates N: N of them, the stream's first N elements in the same
 * lanes, a sample for tables whose full run takes minutes)
 * T[r & (size - 1)] ^= r, r the stream of HPCC's LFSR (r' = r << 1, XOR
 * POLY = 0x7 when r's top bit is set: multiplication by x modulo
 * x^64 + x^2 + x + 1), elements 1 .. 4 x size from r_0 = 1, taken as
 * HPCC's reference takes them: 128 interleaved streams, stream j starting
 * at element (updates / 128) x j (gups_starts(), x^n modulo that
 * polynomial, HPCC's starts()), which HPCC allows (lookahead of at most
 * 1024 updates).  The lanes' first elements are computed once per point,
 * untimed: HPCC times them with the updates, which is nothing at its
 * table sizes but was 8x the updates' time at 64 KB on this project's VM
 * (7.1 against 0.78 ns per update).
 *
 * The verification, after every pass, warm or timed (untimed): HPCC's
 * serial loop reruns the same updates one by one from r_0 = 1, which
 * XOR undoes, and counts the table's words that are not their index.
 * HPCC passes a run whose errors are at most 1 % of the table; a point
 * with a pass outside that bound is an @error and has no row.  Single-
 * threaded, nothing races, so any error means the timed loop did not do
 * the updates it counted; `verified` says "exact" (0) or "within_bound".
 * Since every pass is undone, each starts from T[i] = i, as HPCC's run.
 *
 * Time is wall time of the timed pass (now_ns(); emulated under TCG, as
 * the run's timing source says), per update and as GUP/s (10^9 updates
 * per second); faults and the TLB counters are counted over the timed
 * passes (software event, hardware events where the CPU has them).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "runner.h"

#define GUPS_POLY 0x0000000000000007ULL
#define GUPS_PERIOD 1317624576693539401LL
#define GUPS_LANES 128		/* HPCC's interleaved streams */

static uint64_t drop;
static uint64_t nupdates;	/* --updates; 0: HPCC's 4 x the table's words */
static int check_stream;
static size_t stream_meta_wss;	/* the size @meta gups_stream last named */

static const struct bench_opt gups_opts[] = {
	{ .name = "check-stream", .kind = OPT_FLAG, .dst = &check_stream,
	  .help = "print the stream's elements at a few positions in "
	  "@meta gups_stream (the tests' check of the LFSR)" },
	{ .name = "updates", .arg = "N", .kind = OPT_COUNT, .dst = &nupdates,
	  .help = "updates per pass, a multiple of 128: the stream's first N "
	  "elements, in HPCC's lanes (0: HPCC's 4 x the table's words)" },
	{ .name = "drop", .arg = "N", .kind = OPT_COUNT, .dst = &drop,
	  .help = "leave out every N-th update of each pass (a distorted "
	  "instrument, for the tests of the verification; 0)" },
	{ 0 },
};

static const char *const gups_points[] = { "update", NULL };

/* one step of the stream: r times x modulo x^64 + x^2 + x + 1 */
static inline uint64_t lfsr(uint64_t r)
{
	return (r << 1) ^ ((int64_t)r < 0 ? GUPS_POLY : 0);
}

/* a times b modulo the polynomial (shift-and-add, high bit first) */
static uint64_t gf_mul(uint64_t a, uint64_t b)
{
	uint64_t p = 0;
	int i;

	for (i = 63; i >= 0; i--) {
		p = lfsr(p);
		if (b >> i & 1)
			p ^= a;
	}
	return p;
}

/* element n of the stream, r_n = x^n, as HPCC's starts() gives it */
static uint64_t gups_starts(int64_t n)
{
	uint64_t r = 1, sq = 2;	/* x^0, and x^(2^k) as k goes */

	while (n < 0)
		n += GUPS_PERIOD;
	while (n > GUPS_PERIOD)
		n -= GUPS_PERIOD;
	for (; n; n >>= 1, sq = gf_mul(sq, sq))
		if (n & 1)
			r = gf_mul(r, sq);
	return r;
}

/*
 * The timed pass: n updates (a multiple of GUPS_LANES) of the table of
 * mask + 1 words, the lanes as HPCC's reference runs them, lane j from
 * start[j] = r_(n / GUPS_LANES x j).
 */
static __attribute__((noinline)) void update_pass(uint64_t *t, uint64_t mask,
						  uint64_t n,
						  const uint64_t *start)
{
	uint64_t ran[GUPS_LANES], per = n / GUPS_LANES, i;
	int j;

	for (j = 0; j < GUPS_LANES; j++)
		ran[j] = start[j];
	for (i = 0; i < per; i++)
		for (j = 0; j < GUPS_LANES; j++) {
			ran[j] = lfsr(ran[j]);
			t[ran[j] & mask] ^= ran[j];
		}
}

/*
 * --drop: the same pass, leaving out every drop-th update; a copy of its
 * own so that the timed loop of a real run carries no test's branch
 */
static __attribute__((noinline)) void update_pass_drop(uint64_t *t,
						       uint64_t mask,
						       uint64_t n,
						       const uint64_t *start)
{
	uint64_t ran[GUPS_LANES], per = n / GUPS_LANES, i, k = 0;
	int j;

	for (j = 0; j < GUPS_LANES; j++)
		ran[j] = start[j];
	for (i = 0; i < per; i++)
		for (j = 0; j < GUPS_LANES; j++) {
			ran[j] = lfsr(ran[j]);
			if (++k % drop)
				t[ran[j] & mask] ^= ran[j];
		}
}

/*
 * HPCC's verification: the n updates again, serially from r_0 = 1, then
 * the words that are not their index; returns their count.
 */
static uint64_t verify(uint64_t *t, uint64_t mask, uint64_t n)
{
	uint64_t r = 1, i, bad = 0;

	for (i = 0; i < n; i++) {
		r = lfsr(r);
		t[r & mask] ^= r;
	}
	for (i = 0; i <= mask; i++)
		bad += t[i] != i;
	return bad;
}

/* the table's words: the largest power of two that fits wss bytes */
static uint64_t table_words(size_t wss)
{
	uint64_t w = 1;

	while (w * 2 * sizeof(uint64_t) <= wss)
		w *= 2;
	return w;
}

struct point {
	uint64_t *t, mask, updates;
	uint64_t start[GUPS_LANES];	/* each lane's first element */
	double *ns, *l1, *wk;		/* per update, per repetition */
	uint64_t faults;		/* in all timed passes */
	uint64_t errors;		/* the most of any pass's verification */
	uint64_t passes;		/* verified, warm passes included */
	int ok[EV_NR];
};

static void point_free(struct point *pt)
{
	free(pt->ns);
	free(pt->l1);
	free(pt->wk);
	free(pt);
}

/* @meta gups_stream: r_n at a few n, for the tests' own LFSR */
static void stream_meta(uint64_t updates)
{
	const int64_t at[] = { 0, 1, 2, 63, 64, 65, 1000, 123456,
			       (int64_t)updates / GUPS_LANES,
			       (int64_t)updates, -1, GUPS_PERIOD };
	size_t i;

	printf("@meta gups_stream {\"poly\": %llu, \"period\": %lld, "
	       "\"updates\": %llu, \"at\": [", (unsigned long long)GUPS_POLY,
	       GUPS_PERIOD, (unsigned long long)updates);
	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		printf("%s[%lld, \"%016llx\"]", i ? ", " : "",
		       (long long)at[i],
		       (unsigned long long)gups_starts(at[i]));
	printf("]}\n");
}

static int prepare(const struct bench_ctx *x, void **st)
{
	size_t wss = x->o->sizes[x->si];
	int reps = x->o->reps, i;
	struct point *pt = calloc(1, sizeof(*pt));
	uint64_t w = table_words(wss), k;

	if (pt) {
		pt->ns = calloc(reps, sizeof(double));
		pt->l1 = calloc(reps, sizeof(double));
		pt->wk = calloc(reps, sizeof(double));
	}
	if (!pt || !pt->ns || !pt->l1 || !pt->wk) {
		if (pt)
			point_free(pt);
		emit_error("out of memory for %d repetitions", reps);
		return -1;
	}
	pt->t = (uint64_t *)x->m->addr;
	pt->mask = w - 1;
	pt->updates = nupdates ? nupdates : 4 * w;
	for (k = 0; k < w; k++)
		pt->t[k] = k;
	for (i = 0; i < GUPS_LANES; i++)
		pt->start[i] = gups_starts((int64_t)(pt->updates /
						     GUPS_LANES * i));
	for (i = 0; i < EV_NR; i++)
		pt->ok[i] = 1;
	if (check_stream && stream_meta_wss != wss) {
		stream_meta_wss = wss;
		stream_meta(pt->updates);
	}
	*st = pt;
	return 0;
}

/* one pass, timed and counted unless a warm one (r < 0), then verified */
static int rep(const struct bench_ctx *x, void *st, int r)
{
	struct point *pt = st;
	struct counter_values v;
	uint64_t bad, k;
	double t0, t1;
	int i;

	if (r >= 0)
		counters_start(x->c);
	t0 = now_ns();
	if (drop)
		update_pass_drop(pt->t, pt->mask, pt->updates, pt->start);
	else
		update_pass(pt->t, pt->mask, pt->updates, pt->start);
	t1 = now_ns();
	if (r >= 0) {
		counters_stop(x->c, &v);
		check_duration(t1 - t0);
		pt->faults += v.v[EV_PAGE_FAULTS];
		pt->ns[r] = (t1 - t0) / pt->updates;
		pt->l1[r] = 1000.0 * v.v[EV_L1_DTLB_MISS] / pt->updates;
		pt->wk[r] = 1000.0 * v.v[EV_WALK] / pt->updates;
		for (i = 0; i < EV_NR; i++)
			pt->ok[i] &= v.ok[i];
	}
	bad = verify(pt->t, pt->mask, pt->updates);
	pt->passes++;
	if (bad > pt->errors)
		pt->errors = bad;
	if (bad) {
		/* HPCC runs once; here the next pass starts from T[i] = i */
		for (k = 0; k <= pt->mask; k++)
			pt->t[k] = k;
	}
	return 0;
}

static int finish(const struct bench_ctx *x, void *st, int ok)
{
	struct point *pt = st;
	size_t wss = x->o->sizes[x->si];
	uint64_t words = pt->mask + 1, bound = words / 100;
	struct stats s, sl, sw;
	int reps = x->o->reps, bad = 0;

	if (!ok)
		goto out;
	if (pt->errors > bound) {
		emit_error("%s: gups verification failed at %zu bytes: %llu of "
			   "%llu table words wrong after a pass, over HPCC's "
			   "bound of 1 %% (%llu): no row", x->b->name, wss,
			   (unsigned long long)pt->errors,
			   (unsigned long long)words,
			   (unsigned long long)bound);
		bad = -1;
		goto out;
	}
	stats_compute(pt->ns, reps, &s);
	stats_compute(pt->l1, reps, &sl);
	stats_compute(pt->wk, reps, &sw);
	const struct cell row[] = {
		CELL_S(x->b->name), CELL_U(x->page_kb), CELL_U(wss),
		CELL_U(words * sizeof(uint64_t)), CELL_U(pt->updates),
		CELL_F(s.median), CELL_F(s.min), CELL_F(s.max),
		CELL_F(s.median > 0 ? 1 / s.median : 0), CELL_F(s.cv),
		CELL_D(reps), CELL_U(pt->errors), CELL_U(bound),
		CELL_S(pt->errors ? "within_bound" : "exact"),
		CELL_U(pt->passes),
		CELL_OPT(pt->ok[EV_L1_DTLB_MISS], sl.median),
		CELL_OPT(pt->ok[EV_WALK], sw.median),
		CELL_OPT_U(pt->ok[EV_PAGE_FAULTS], pt->faults),
	};

	emit_row(row, NCELLS(row));
	if (pt->faults)
		progress("warning: %s: %llu page faults in the timed passes",
			 x->b->name, (unsigned long long)pt->faults);
	progress("%-14s %10zu B (%d/%d): %8.2f ns/update  %.4f GUP/s  "
		 "errors %llu", x->b->name, wss, x->si + 1, x->o->nsizes,
		 s.median, s.median > 0 ? 1 / s.median : 0,
		 (unsigned long long)pt->errors);
out:
	point_free(pt);
	return bad;
}

static int check(char *why, size_t n)
{
	if (nupdates % GUPS_LANES == 0)
		return 0;
	snprintf(why, n, "--updates %llu is not a multiple of %d (HPCC's "
		 "lanes, each the same length): give a multiple of %d, or 0 for "
		 "HPCC's 4 x the table's words", (unsigned long long)nupdates,
		 GUPS_LANES, GUPS_LANES);
	return -1;
}

static const struct bench gups_bench = {
	.name = "gups",
	.desc = "HPCC RandomAccess (GUPS), single-threaded: random XOR "
		"updates of a power-of-two table, verified by HPCC's rule",
	.columns = "backing %s, page_kb %u, wss_bytes %u, table_bytes %u, "
		   "updates %u, ns_per_update %.3f, ns_min %.3f, ns_max %.3f, "
		   "gups %.5f, cv %.4f, reps %d, errors %u, error_bound %u, "
		   "verified %s, passes_verified %u, "
		   "l1_dtlb_misses_per_1k %.3f, walks_per_1k %.3f, faults %u",
	.key = "backing,wss_bytes",
	.metric = "ns_per_update",
	.lower_is_better = 1,
	.opts = gups_opts,
	.min_wss = 2 * PAGE,
	.check = check,
	.points = gups_points,
	.prepare = prepare,
	.rep = rep,
	.finish = finish,
};
BENCH_REGISTER(gups_bench);
