// SPDX-License-Identifier: GPL-2.0
/*
 * streamk.c - STREAM's four kernels, by STREAM's rules, on each backing.
 *
 * Three arrays of doubles a, b, c, laid one after another in the runner's
 * mapping of the working set (wss_bytes = the three arrays; each array is
 * a third of it, whole 64-byte lines).  Each iteration runs, timed one by
 * one, STREAM's kernels in STREAM's order:
 *
 *   copy   c[j] = a[j]                bytes counted 2 x 8 per element
 *   scale  b[j] = q * c[j]            2 x 8
 *   add    c[j] = a[j] + b[j]         3 x 8
 *   triad  a[j] = b[j] + q * c[j]     3 x 8        (q = 3.0, as STREAM)
 *
 * The loops are our own: memcpy and memset pick their strategy by size
 * (and non-temporal stores above some threshold), so they would measure
 * the C library.  gcc would turn the copy loop into a memcpy call, so the
 * kernels are built without that pattern replacement (NO_LIBCALL below;
 * tests/bench/test_streamk.py checks the binary has no call in them).
 *
 * STREAM's rule: each kernel runs --warmup + --reps times; the first
 * --warmup iterations (STREAM: one) are excluded and the best (shortest)
 * time of the rest is reported, as MB/s = 1e-6 x bytes / best time.  The
 * profile passes --warmup 1 --reps 9, STREAM's NTIMES = 10.  STREAM also
 * wants each array at least 4x the last-level cache (llc.h): the rows say
 * how many LLCs an array is (llc_x), and an @meta streamk_llc line says
 * whether the rule was met and why not.
 *
 * Validation, as STREAM's checkSTREAMresults: starting from a = 1, b = 2,
 * c = 0, one iteration maps a to (2q + q^2) a = 15 a, so after n iterations
 * a = 15^n, b = 3 x 15^(n-1), c = 4 x 15^(n-1) everywhere; every element is
 * compared with that (relative error 1e-13, STREAM's bound for doubles),
 * and a mismatch fails the backing with no rows written.
 */
#define _GNU_SOURCE
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llc.h"
#include "runner.h"

#define Q 3.0			/* STREAM's scalar */
#define GROWTH 15.0		/* 2q + q^2: a's factor per iteration */
#define EPS 1e-13		/* STREAM's relative error bound (doubles) */
#define MAX_ITERS 200		/* 4 x 15^(n-1) stays below DBL_MAX */
#define LLC_RULE 4		/* arrays at least 4x the last-level cache */

/*
 * Keeps the compiler from replacing a loop by a memcpy/memset call (gcc's
 * "loop distribution" pass does that at -O2 for copy and fill loops,
 * clang's loop idiom pass too; clang, which cross-builds the arm64 ones,
 * has no optimize attribute but no_builtin turns that pass's calls off).
 */
#ifdef __clang__
#define NO_LIBCALL __attribute__((noinline, no_builtin("memcpy", "memset")))
#else
#define NO_LIBCALL __attribute__((noinline, \
	optimize("no-tree-loop-distribute-patterns")))
#endif

enum kern { K_COPY, K_SCALE, K_ADD, K_TRIAD, K_NR };
static const char *const kname[K_NR] = { "copy", "scale", "add", "triad" };
static const int karrays[K_NR] = { 2, 2, 3, 3 };	/* arrays touched */

static const char *const corrupt_choices[] = { "none", "a", "b", "c", NULL };
static int corrupt;		/* index into corrupt_choices */

static const struct bench_opt streamk_opts[] = {
	{ .name = "corrupt", .arg = "ARRAY", .kind = OPT_CHOICE,
	  .dst = &corrupt, .choices = corrupt_choices,
	  .help = "none|a|b|c: change one element of that array before the "
	  "check, which must then fail the backing (proves the check; none)" },
	{ 0 },
};

static NO_LIBCALL void streamk_copy(double *restrict c,
				    const double *restrict a, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++)
		c[j] = a[j];
}

static NO_LIBCALL void streamk_scale(double *restrict b,
				     const double *restrict c, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++)
		b[j] = Q * c[j];
}

static NO_LIBCALL void streamk_add(double *restrict c,
				   const double *restrict a,
				   const double *restrict b, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++)
		c[j] = a[j] + b[j];
}

static NO_LIBCALL void streamk_triad(double *restrict a,
				     const double *restrict b,
				     const double *restrict c, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++)
		a[j] = b[j] + Q * c[j];
}

static NO_LIBCALL void streamk_init(double *a, double *b, double *c, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++) {
		a[j] = 1.0;
		b[j] = 2.0;
		c[j] = 0.0;
	}
}

struct arrays {
	double *a, *b, *c;
	size_t n;		/* elements per array */
};

/* one timed run of kernel k; returns ns */
static double run_kernel(enum kern k, const struct arrays *v)
{
	double t0 = now_ns();

	switch (k) {
	case K_COPY:
		streamk_copy(v->c, v->a, v->n);
		break;
	case K_SCALE:
		streamk_scale(v->b, v->c, v->n);
		break;
	case K_ADD:
		streamk_add(v->c, v->a, v->b, v->n);
		break;
	case K_TRIAD:
		streamk_triad(v->a, v->b, v->c, v->n);
		break;
	default:
		break;
	}
	return now_ns() - t0;
}

/* 0, or -1 with an @error naming the array and element that is wrong */
static int check_arrays(const struct bench_ctx *x, const struct arrays *v,
			int iters)
{
	double prev = pow(GROWTH, iters - 1);
	const double want[3] = { GROWTH * prev, Q * prev, (1 + Q) * prev };
	const double *arr[3] = { v->a, v->b, v->c };
	size_t j;
	int i;

	for (i = 0; i < 3; i++)
		for (j = 0; j < v->n; j++)
			if (fabs(arr[i][j] - want[i]) > EPS * want[i]) {
				emit_error("%s: %c[%zu] = %.17g after %d "
					   "iterations, want %.17g (STREAM's "
					   "check): the row is not written",
					   x->b->name, 'a' + i, j, arr[i][j],
					   iters, want[i]);
				return -1;
			}
	return 0;
}

/* STREAM's rule on array size, said once per size as @meta streamk_llc */
static double llc_meta(const struct bench_ctx *x, size_t array_bytes)
{
	struct llc l;
	char why[300], esc[400], note[400];
	int known = !llc_read(NULL, x->o->cpu, 1, &l, why, sizeof(why));
	int met = known && array_bytes >= LLC_RULE * l.bytes;

	if (!known)
		snprintf(note, sizeof(note), "LLC size unknown (%s): STREAM's "
			 "rule cannot be checked", why);
	else if (!met)
		snprintf(note, sizeof(note), "arrays of %zu B are below %dx the "
			 "last-level cache (%llu B, %s): not STREAM's rule; the "
			 "run used what its profile and memory allow", array_bytes,
			 LLC_RULE, l.bytes, l.source);
	else
		snprintf(note, sizeof(note), "arrays of %zu B are at least %dx "
			 "the last-level cache (%llu B, %s)", array_bytes,
			 LLC_RULE, l.bytes, l.source);
	json_str(esc, sizeof(esc), note);
	printf("@meta streamk_llc {\"llc_bytes\": %llu, \"level\": %d, "
	       "\"source\": \"%s\", \"cpu\": %d, \"array_bytes\": %zu, "
	       "\"need_bytes\": %llu, \"rule_met\": %s, \"note\": %s}\n",
	       l.bytes, l.level, l.source, x->o->cpu, array_bytes,
	       LLC_RULE * l.bytes, met ? "true" : "false", esc);
	if (!met)
		progress("warning: %s", note);
	return known ? (double)array_bytes / l.bytes : -1;
}

/*
 * One row per kernel from its iteration times (ns), the first --warmup
 * skipped; returns the triad's MB/s.
 */
static double emit_rows(const struct bench_ctx *x, const struct arrays *v,
		      double *t[K_NR], double llc_x)
{
	int warm = x->o->warmup, reps = x->o->reps, k, r;
	double mb = 0;
	char buf[32];

	for (k = 0; k < K_NR; k++) {
		size_t bytes = karrays[k] * sizeof(double) * v->n;
		double best = 1e300, sum = 0, worst = 0;

		for (r = warm; r < warm + reps; r++) {
			check_duration(t[k][r]);
			best = t[k][r] < best ? t[k][r] : best;
			worst = t[k][r] > worst ? t[k][r] : worst;
			sum += t[k][r];
		}
		mb = 1e-6 * bytes / (best * 1e-9);
		/* the columns of streamk_bench, in order */
		emit_row("%s,%lu,%zu,%s,%.1f,%zu,%zu,%.9f,%.9f,%.9f,%d,%s",
			 x->b->name, x->page_kb, x->o->sizes[x->si], kname[k],
			 mb, v->n * sizeof(double),
			 bytes, best * 1e-9, sum / reps * 1e-9, worst * 1e-9,
			 reps, fmt_opt(buf, sizeof(buf), llc_x >= 0, llc_x));
	}
	return mb;
}

static int measure(const struct bench_ctx *x)
{
	size_t wss = x->o->sizes[x->si];
	int iters = x->o->warmup + x->o->reps, it, k, bad = 0;
	struct arrays v = { .n = wss / 3 / LINE * (LINE / sizeof(double)) };
	double *t[K_NR] = { 0 }, llc_x;

	if (iters > MAX_ITERS) {
		emit_error("--warmup + --reps is %d, above %d: the arrays grow "
			   "15x per iteration and would overflow a double; use "
			   "fewer (STREAM: --warmup 1 --reps 9)", iters,
			   MAX_ITERS);
		return -1;
	}
	v.a = (double *)x->m->addr;
	v.b = v.a + v.n;
	v.c = v.b + v.n;
	for (k = 0; k < K_NR; k++)
		if (!(t[k] = calloc(iters, sizeof(double))))
			bad = -1;
	if (bad) {
		emit_error("out of memory");
		goto out;
	}
	llc_x = llc_meta(x, v.n * sizeof(double));
	streamk_init(v.a, v.b, v.c, v.n);
	for (it = 0; it < iters; it++)
		for (k = 0; k < K_NR; k++)
			t[k][it] = run_kernel(k, &v);
	if (corrupt)		/* 1, 2, 3: a, b, c */
		(corrupt == 1 ? v.a : corrupt == 2 ? v.b : v.c)[v.n / 2] += 1.0;
	bad = check_arrays(x, &v, iters);
	if (!bad)
		progress("%-14s %10zu B (%d/%d): triad %.0f MB/s", x->b->name,
			 wss, x->si + 1, x->o->nsizes, emit_rows(x, &v, t, llc_x));
out:
	for (k = 0; k < K_NR; k++)
		free(t[k]);
	return bad;
}

static const struct bench streamk_bench = {
	.name = "streamk",
	.desc = "STREAM's copy, scale, add and triad by STREAM's rules (best "
		"of the iterations after the first, MB/s)",
	.columns = "backing,page_kb,wss_bytes,kernel,mb_per_s,array_bytes,"
		   "bytes_per_iter,best_s,avg_s,max_s,reps,llc_x",
	.key = "backing,kernel,wss_bytes",
	.metric = "mb_per_s",
	.lower_is_better = 0,
	.opts = streamk_opts,
	.min_wss = 3 * LINE,
	.measure = measure,
};
BENCH_REGISTER(streamk_bench);
