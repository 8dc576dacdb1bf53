// SPDX-License-Identifier: GPL-2.0
/*
 * streamk.c - STREAM's four kernels, by STREAM's rules, on each backing.
 *
 * Three arrays of doubles a, b, c, laid one after another in the runner's
 * mapping of the working set (wss_bytes; each array is a third of it less
 * the room for the offsets below, in whole 64-byte lines).  b starts 21
 * lines (1344 B) and c 42 lines past a multiple of 4 KB from a, as
 * STREAM's OFFSET does: arrays of a power-of-two size on huge pages would
 * otherwise share their low address bits, so a[j], b[j] and c[j] would
 * fall in the same cache sets and alias in the 4 KB store-to-load check.
 * Each iteration runs, timed one by one, STREAM's kernels in STREAM's
 * order:
 *
 *   copy   c[j] = a[j]                bytes counted 2 x 8 per element
 *   scale  b[j] = q * c[j]            2 x 8
 *   add    c[j] = a[j] + b[j]         3 x 8
 *   triad  a[j] = b[j] + q * c[j]     3 x 8        (q = 3.0, as STREAM)
 *
 * Threads as STREAM's: built with -fopenmp (bench/bench.mk), each kernel
 * runs in one parallel region of OMP_NUM_THREADS threads (OpenMP's default:
 * every CPU allowed), each thread on its own contiguous slice of the
 * arrays, as STREAM's "omp parallel for" with the static schedule.  Each
 * thread is pinned to one CPU of those the run was allowed at start, by
 * llc.h's plan (round robin over the nodes and their last-level caches;
 * this pin replaces any OMP_PROC_BIND placement), so that a slice stays
 * on the CPU, and the node, that first touched it: the runner leaves the
 * first touch to streamk (its touch hook), whose threads initialise their
 * own slices in parallel, as STREAM's initialisation loop does, instead
 * of the runner's memset from its one pinned CPU, which would put every
 * page on that CPU's node.  The time is taken around the region, fork and
 * join included, as STREAM takes it.  The build's compiler
 * options (STREAMK_CFLAGS, from bench.mk: the portable build, and
 * streamk-native's -O3 -march=native for native runs, which STREAM allows)
 * and the threads are said in @meta streamk_build and the rows.
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
 * wants each array at least 4x the last-level caches the run uses: the
 * sum over the distinct LLCs of the threads' CPUs (llc.h's plan), or
 * --llc: the rows say how many such sums an array is (llc_x) and label a
 * run below it "not STREAM-valid" (stream_rule), and an @meta streamk_llc
 * line says whether the rule was met and why not.
 *
 * Validation, as STREAM's checkSTREAMresults: starting from a = 1, b = 2,
 * c = 0, one iteration maps a to (2q + q^2) a = 15 a, so after n iterations
 * a = 15^n, b = 3 x 15^(n-1), c = 4 x 15^(n-1) everywhere; every element is
 * compared with that (relative error 1e-13, STREAM's bound for doubles),
 * and a mismatch fails the backing with no rows written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <sys/resource.h>
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
#define SPREAD (PAGE / 3 / LINE * LINE)	/* b, c: 1/3, 2/3 into a page */

#ifndef STREAMK_CFLAGS
#define STREAMK_CFLAGS "unrecorded"
#endif
#ifndef STREAMK_NO_OMP		/* why a build has no OpenMP (bench.mk) */
#define STREAMK_NO_OMP "built without -fopenmp"
#endif
#ifdef _OPENMP
#define OMP_NOTE "OpenMP threads (OMP_NUM_THREADS)"
#else
#define OMP_NOTE "one thread, not STREAM's OpenMP threads: " STREAMK_NO_OMP
#endif

/*
 * libgomp's API, declared here rather than from omp.h, which the arm64
 * cross build (clang, no OpenMP runtime: bench.mk) need not find.
 */
#ifdef _OPENMP
#define OMP(directive) _Pragma(#directive)
int omp_get_max_threads(void);
int omp_get_num_threads(void);
int omp_get_thread_num(void);

/*
 * libgomp's loader of offloading plugins (GPU targets) calls dlopen, which
 * a static glibc program can do only with the shared libraries of the
 * glibc it was linked with: the guest has none, and the static link warns.
 * streamk offloads nothing: bench.mk links it with --wrap=dlopen, so that
 * libgomp's call comes here and finds no plugin.
 */
void *__wrap_dlopen(const char *file, int mode);
void *__wrap_dlopen(const char *file, int mode)
{
	(void)file;
	(void)mode;
	return NULL;
}
#else				/* benchtool's copy, and the arm64 build */
#define OMP(directive)
static int omp_get_max_threads(void) { return 1; }
static int omp_get_num_threads(void) { return 1; }
static int omp_get_thread_num(void) { return 0; }
#endif

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
/*
 * STREAM's kernel names, the values of the kernel column: the contract
 * exports them (column_values), where the figure and summary read them
 */
static const char *const kname[K_NR + 1] = { "copy", "scale", "add",
					     "triad", NULL };
static const int karrays[K_NR] = { 2, 2, 3, 3 };	/* arrays touched */

static const char *const corrupt_choices[] = { "none", "a", "b", "c", NULL };
static int corrupt;		/* index into corrupt_choices */
static size_t llc_opt;		/* --llc: 0 reads it (llc.h) */
static size_t spread = SPREAD;	/* --offset: b's, and half c's, from a */
/* the CPUs the process was allowed at start, before the runner pins it */
static cpu_set_t start_cpus;
static int start_cpus_ok;
/*
 * The threads' CPUs (llc.h): thread t runs on plan[t] of nplan; plan_llc
 * the caches they use, plan_known 0 where their size is unknown (why in
 * plan_why); seen[t] where thread t found itself once pinned.
 */
static int *plan, *seen, nplan, plan_known;
static struct llc plan_llc;
static char plan_why[300];

static void __attribute__((constructor)) save_start_cpus(void)
{
	start_cpus_ok = !sched_getaffinity(0, sizeof(start_cpus), &start_cpus);
}

static const struct bench_opt streamk_opts[] = {
	{ .name = "corrupt", .arg = "ARRAY", .kind = OPT_CHOICE,
	  .dst = &corrupt, .choices = corrupt_choices,
	  .help = "none|a|b|c: change one element of that array before the "
	  "check, which must then fail the backing (proves the check; none)" },
	{ .name = "offset", .arg = "BYTES", .kind = OPT_SIZE, .dst = &spread,
	  .help = "b starts this far past a multiple of 4 KB from a, c twice "
	  "as far: whole lines below 2 KB; 0 lays the arrays on page "
	  "boundaries, so that they alias (1344: a third of a page)" },
	{ .name = "llc", .arg = "SIZE", .kind = OPT_SIZE, .dst = &llc_opt,
	  .min = 1, .help = "the last-level cache STREAM's 4x rule is applied "
	  "with, where sysfs and CPUID are wrong or silent (read: benchtool "
	  "llc)" },
	{ 0 },
};

/* the kernels, each over elements [lo, hi) of a thread's slice */
static NO_LIBCALL void streamk_copy(double *restrict c,
				    const double *restrict a, size_t lo,
				    size_t hi)
{
	size_t j;

	for (j = lo; j < hi; j++)
		c[j] = a[j];
}

static NO_LIBCALL void streamk_scale(double *restrict b,
				     const double *restrict c, size_t lo,
				     size_t hi)
{
	size_t j;

	for (j = lo; j < hi; j++)
		b[j] = Q * c[j];
}

static NO_LIBCALL void streamk_add(double *restrict c,
				   const double *restrict a,
				   const double *restrict b, size_t lo,
				   size_t hi)
{
	size_t j;

	for (j = lo; j < hi; j++)
		c[j] = a[j] + b[j];
}

static NO_LIBCALL void streamk_triad(double *restrict a,
				     const double *restrict b,
				     const double *restrict c, size_t lo,
				     size_t hi)
{
	size_t j;

	for (j = lo; j < hi; j++)
		a[j] = b[j] + Q * c[j];
}

static NO_LIBCALL void streamk_init(double *a, double *b, double *c,
				    size_t lo, size_t hi)
{
	size_t j;

	for (j = lo; j < hi; j++) {
		a[j] = 1.0;
		b[j] = 2.0;
		c[j] = 0.0;
	}
}

struct arrays {
	double *a, *b, *c;
	size_t n;		/* elements per array */
};

enum { K_INIT = K_NR };

/*
 * Kernel k (or K_INIT) on this thread's slice: the threads split the
 * arrays into contiguous runs of whole lines, as STREAM's static schedule.
 */
static void run_slice(int k, const struct arrays *v)
{
	size_t per = LINE / sizeof(double), lines = v->n / per;
	size_t t = omp_get_thread_num(), nt = omp_get_num_threads();
	size_t lo = lines * t / nt * per, hi = lines * (t + 1) / nt * per;

	switch (k) {
	case K_COPY:
		streamk_copy(v->c, v->a, lo, hi);
		break;
	case K_SCALE:
		streamk_scale(v->b, v->c, lo, hi);
		break;
	case K_ADD:
		streamk_add(v->c, v->a, v->b, lo, hi);
		break;
	case K_TRIAD:
		streamk_triad(v->a, v->b, v->c, lo, hi);
		break;
	default:
		streamk_init(v->a, v->b, v->c, lo, hi);
		break;
	}
}

/* one timed run of kernel k on every thread; returns ns */
static double run_kernel(int k, const struct arrays *v)
{
	double t0 = now_ns();

	OMP(omp parallel)
	run_slice(k, v);
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

/*
 * Plans the threads once (llc.h: one CPU each, of those allowed at
 * start); 0, or -1 with an @error when there is no CPU or memory.
 */
static int make_plan(void)
{
	if (plan)
		return 0;
	nplan = omp_get_max_threads();
	plan = calloc(nplan, sizeof(int));
	seen = calloc(nplan, sizeof(int));
	if (!plan || !seen || !start_cpus_ok) {
		emit_error("streamk: %s", !start_cpus_ok ? "cannot read the "
			   "CPUs allowed at start" : "out of memory");
		free(plan);
		free(seen);
		plan = seen = NULL;
		return -1;
	}
	plan_known = !llc_plan(NULL, &start_cpus, nplan, 1, plan, &plan_llc,
			       plan_why, sizeof(plan_why));
	return 0;
}

/*
 * Pins every thread to its CPU of the plan, and notes where each finds
 * itself (seen: sched_getcpu, after the pin).  Threads keep their number
 * from one parallel region to the next (libgomp reuses its pool in
 * order; seen, said in @meta streamk_build, is taken after the timed
 * iterations so that a change would show).
 */
static void pin_threads(void)
{
	OMP(omp parallel)
	{
		int t = omp_get_thread_num();
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(plan[t % nplan], &one);
		sched_setaffinity(0, sizeof(one), &one);
		seen[t % nplan] = sched_getcpu();
	}
}

/* where each thread runs now, into seen */
static void where_threads_are(void)
{
	OMP(omp parallel)
	seen[omp_get_thread_num() % nplan] = sched_getcpu();
}

/* the LLC the rule is applied with: --llc, else the plan's; 0 or -1 */
static int read_llc(struct llc *l, char *why, size_t n)
{
	if (!llc_opt) {
		*l = plan_llc;
		snprintf(why, n, "%s", plan_why);
		return plan_known ? 0 : -1;
	}
	*l = (struct llc){ .bytes = llc_opt, .level = 0, .source = "option" };
	return 0;
}

/*
 * STREAM's rule on array size, said once per size as @meta streamk_llc;
 * returns llc_x (arrays per LLC; -1 unknown) and sets *rule, the rows'
 * stream_rule: "met", "not STREAM-valid" or "LLC unknown".
 */
static double llc_meta(size_t array_bytes, const char **rule)
{
	struct llc l;
	char why[300], esc[400], note[400];
	int known = !read_llc(&l, why, sizeof(why));
	int met = known && array_bytes >= LLC_RULE * l.bytes;

	*rule = !known ? "LLC unknown" : met ? "met" : "not STREAM-valid";
	if (!known)
		snprintf(note, sizeof(note), "LLC size unknown (%s): STREAM's "
			 "rule cannot be checked", why);
	else if (!met)
		snprintf(note, sizeof(note), "not STREAM-valid: arrays of %zu B "
			 "are below %dx the last-level caches the threads use "
			 "(%llu B in %d, %s): not STREAM's rule; the run used "
			 "what its profile and memory allow", array_bytes,
			 LLC_RULE, l.bytes, l.caches, l.source);
	else
		snprintf(note, sizeof(note), "arrays of %zu B are at least %dx "
			 "the last-level caches the threads use (%llu B in %d, "
			 "%s)", array_bytes, LLC_RULE, l.bytes, l.caches,
			 l.source);
	json_str(esc, sizeof(esc), note);
	printf("@meta streamk_llc {\"llc_bytes\": %llu, \"level\": %d, "
	       "\"source\": \"%s\", \"caches\": %d, \"array_bytes\": %zu, "
	       "\"need_bytes\": %llu, \"rule_met\": %s, \"note\": %s}\n",
	       l.bytes, l.level, l.source, l.caches, array_bytes,
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
			double *t[K_NR], double llc_x, int threads,
			const char *rule)
{
	int warm = x->o->warmup, reps = x->o->reps, k, r;
	double mb = 0;

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
		const struct cell row[] = {
			CELL_S(x->b->name), CELL_U(x->page_kb),
			CELL_U(x->o->sizes[x->si]), CELL_S(kname[k]), CELL_F(mb),
			CELL_U(v->n * sizeof(double)), CELL_U(bytes),
			CELL_F(best * 1e-9), CELL_F(sum / reps * 1e-9),
			CELL_F(worst * 1e-9), CELL_D(reps),
			CELL_OPT(llc_x >= 0, llc_x), CELL_D(threads), CELL_S(rule),
		};

		emit_row(row, NCELLS(row));
	}
	return mb;
}

/*
 * a, b and c in the mapping at base: each a whole number of lines, b and
 * c starting spread and 2 x spread past a page multiple from a (the gaps
 * take at most two pages, which the arrays leave over).
 */
static void lay_out(struct arrays *v, char *base, size_t wss)
{
	size_t per = LINE / sizeof(double), bytes, b_off, c_off;

	v->n = wss > 2 * PAGE ? (wss - 2 * PAGE) / 3 / LINE * per : 0;
	bytes = v->n * sizeof(double);
	b_off = (bytes + PAGE - spread - 1) / PAGE * PAGE + spread;
	c_off = (b_off + bytes + PAGE - 2 * spread - 1) / PAGE * PAGE +
		2 * spread;
	v->a = (double *)base;
	v->b = (double *)(base + b_off);
	v->c = (double *)(base + c_off);
}

/* the layout, once per size: @meta streamk_layout (offsets from a) */
static void say_layout(const struct arrays *v, size_t wss)
{
	printf("@meta streamk_layout {\"wss_bytes\": %zu, \"array_bytes\": "
	       "%zu, \"offset\": %zu, \"a\": 0, \"b\": %td, \"c\": %td}\n",
	       wss, v->n * sizeof(double), spread,
	       (char *)v->b - (char *)v->a, (char *)v->c - (char *)v->a);
}

/* a JSON array of n ints */
static void print_ints(const int *v, int n)
{
	int i;

	printf("[");
	for (i = 0; i < n; i++)
		printf("%s%d", i ? ", " : "", v[i]);
	printf("]");
}

/*
 * The build, the threads, the runner's CPU, the plan and where each
 * thread ran (seen) as @meta streamk_build; returns the threads.
 */
static int say_build(const struct bench_ctx *x)
{
	int threads = 1;

	OMP(omp parallel)
	{
		OMP(omp single)
		threads = omp_get_num_threads();
	}
	printf("@meta streamk_build {\"cflags\": \"%s\", \"openmp\": %s, "
	       "\"note\": \"%s\", \"threads\": %d, \"pinned_cpu\": %d, "
	       "\"plan\": ", STREAMK_CFLAGS,
#ifdef _OPENMP
	       "true",
#else
	       "false",
#endif
	       OMP_NOTE, threads, x->o->cpu);
	print_ints(plan, nplan);
	printf(", \"seen\": ");
	print_ints(seen, nplan);
	printf("}\n");
	return threads;
}

/* the runner's pin again on the main thread, for its checks and counters */
static void stop_threads(const struct bench_ctx *x)
{
	cpu_set_t one;

	if (x->o->cpu < 0)
		return;
	CPU_ZERO(&one);
	CPU_SET(x->o->cpu, &one);
	sched_setaffinity(0, sizeof(one), &one);
}

static int check(char *why, size_t n)
{
	if (spread % LINE || 2 * spread >= PAGE) {
		snprintf(why, n, "--offset %zu: give whole lines (a multiple of "
			 "%d) below %d, e.g. %d", spread, LINE, PAGE / 2,
			 SPREAD);
		return -1;
	}
	return 0;
}

static int measure(const struct bench_ctx *x)
{
	size_t wss = x->o->sizes[x->si];
	int iters = x->o->warmup + x->o->reps, it, k, bad = 0, threads;
	struct arrays v;
	double *t[K_NR] = { 0 }, llc_x;
	const char *rule;

	if (iters > MAX_ITERS) {
		emit_error("--warmup + --reps is %d, above %d: the arrays grow "
			   "15x per iteration and would overflow a double; use "
			   "fewer (STREAM: --warmup 1 --reps 9)", iters,
			   MAX_ITERS);
		return -1;
	}
	lay_out(&v, x->m->addr, wss);
	say_layout(&v, wss);
	for (k = 0; k < K_NR; k++)
		if (!(t[k] = calloc(iters, sizeof(double))))
			bad = -1;
	if (bad || make_plan()) {
		if (bad)
			emit_error("out of memory");
		bad = -1;
		goto out;
	}
	llc_x = llc_meta(v.n * sizeof(double), &rule);
	pin_threads();
	run_kernel(K_INIT, &v);
	for (it = 0; it < iters; it++)
		for (k = 0; k < K_NR; k++)
			t[k][it] = run_kernel(k, &v);
	where_threads_are();
	threads = say_build(x);
	stop_threads(x);
	if (corrupt)		/* 1, 2, 3: a, b, c */
		(corrupt == 1 ? v.a : corrupt == 2 ? v.b : v.c)[v.n / 2] += 1.0;
	bad = check_arrays(x, &v, iters);
	if (!bad)
		progress("%-14s %10zu B (%d/%d): triad %.0f MB/s, %d threads",
			 x->b->name, wss, x->si + 1, x->o->nsizes,
			 emit_rows(x, &v, t, llc_x, threads, rule), threads);
out:
	for (k = 0; k < K_NR; k++)
		free(t[k]);
	return bad;
}

/*
 * STREAM's parallel first touch, in place of the runner's memset (runner.h
 * touch): the threads, pinned by the plan, initialise their own slices of
 * a, b and c at the mapping's size, so that each slice's pages come from
 * the node of the CPU that will stream them; the main thread touches the
 * few pages between and after the arrays.  Each thread's minor faults
 * during it (getrusage RUSAGE_THREAD) are said as @meta streamk_touch.
 */
static void touch(const struct bench_ctx *x, char *addr, size_t len)
{
	struct arrays v;
	size_t bytes;
	long *faults;
	int t;

	lay_out(&v, addr, len);
	bytes = v.n * sizeof(double);
	faults = make_plan() ? NULL : calloc(nplan, sizeof(long));
	if (!faults) {
		memset(addr, 0, len);	/* still faulted in, by this thread */
		return;
	}
	pin_threads();
	OMP(omp parallel)
	{
		struct rusage r0, r1;

		getrusage(RUSAGE_THREAD, &r0);
		run_slice(K_INIT, &v);
		getrusage(RUSAGE_THREAD, &r1);
		faults[omp_get_thread_num() % nplan] = r1.ru_minflt -
						       r0.ru_minflt;
	}
	memset(addr + bytes, 0, (char *)v.b - addr - bytes);
	memset((char *)v.b + bytes, 0, (char *)v.c - (char *)v.b - bytes);
	memset((char *)v.c + bytes, 0, addr + len - (char *)v.c - bytes);
	stop_threads(x);
	printf("@meta streamk_touch {\"backing\": \"%s\", \"bytes\": %zu, "
	       "\"faults\": [", x->b->name, len);
	for (t = 0; t < nplan; t++)
		printf("%s%ld", t ? ", " : "", faults[t]);
	printf("]}\n");
	free(faults);
}

static const struct bench streamk_bench = {
	.name = "streamk",
	.desc = "STREAM's copy, scale, add and triad by STREAM's rules (best "
		"of the iterations after the first, MB/s)",
	.columns = "backing %s, page_kb %u, wss_bytes %u, kernel %s, "
		   "mb_per_s %.1f, array_bytes %u, bytes_per_iter %u, "
		   "best_s %.9f, avg_s %.9f, max_s %.9f, reps %d, "
		   "llc_x %.3f, threads %d, stream_rule %s",
	.values_of = "kernel",
	.values = kname,
	.key = "backing,kernel,wss_bytes",
	.metric = "mb_per_s",
	.lower_is_better = 0,
	.opts = streamk_opts,
	.check = check,
	.min_wss = 3 * LINE + 2 * PAGE,
	.arrays = 3,
	.touch = touch,
	.measure = measure,
};
BENCH_REGISTER(streamk_bench);
