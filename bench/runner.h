/* SPDX-License-Identifier: GPL-2.0 */
/*
 * runner.h - the shared benchmark runner.
 *
 * A benchmark is one file, bench/<name>.c, that fills a `struct bench`
 * (its options, CSV columns, compare key and metric, and either the
 * repetition hooks or a function that measures one working-set size on
 * one backing) and registers it with BENCH_REGISTER().  The Makefile links
 * each such file with the runner into build/bench/<name>, and all of them
 * into benchtool, which exports the tables as JSON (`benchtool contract`).
 * The runner (runner.c) owns everything else: option parsing and usage,
 * ASLR-off re-exec, CPU pinning, the timer check, the loop (available?
 * map, touch, verify the page size, measure, unmap), the metadata lines
 * and the row protocol on stdout.
 *
 * The loop, for a benchmark with repetition hooks: every backing is
 * mapped at once (at the largest size at which they all fit: the hugetlb
 * pools' free pages, --mem-budget for the rest), and for each size and
 * point each repetition measures each backing once (after an untimed
 * warm pass of its own, --warm-pass), in the order of the next row of a
 * Williams design, so that neither drift during a run nor the backing
 * measured just before favours a backing.  Sizes beyond that, and
 * benchmarks with measure() only, run backing by backing on one mapping
 * of the largest size.  `@meta order` says which, per size and point,
 * with the order of every round.
 *
 * The line protocol on stdout (read by bench/run.py; see results/README.md)
 * is bench/rows.h's, which this header includes: a benchmark's table is
 * its name and .columns (bench_table()), and it writes its rows with
 * emit_row(), its failures with emit_error() and progress with progress().
 * The runner writes the @header, @meta and @done lines.
 */
#ifndef BENCH_RUNNER_H
#define BENCH_RUNNER_H

#include <stdint.h>
#include <stdio.h>

#include "backing.h"
#include "counters.h"
#include "layout.h"
#include "rows.h"
#include "stats.h"
#include "tlbuse.h"

#define MAX_SIZES 128

/* how an option's value is parsed into *dst */
enum opt_kind {
	OPT_SIZE,	/* size_t; "4096", "64K", "6M", "1G" */
	OPT_COUNT,	/* uint64_t; the same suffixes ("1M" hops) */
	OPT_INT,	/* int */
	OPT_STR,	/* const char * */
	OPT_CHOICE,	/* int: index into choices */
	OPT_FLAG,	/* int, incremented; takes no value */
};

struct bench_opt {
	const char *name;	/* --name */
	const char *arg;	/* the value in the usage text: "N", "SIZE" */
	const char *help;
	enum opt_kind kind;
	void *dst;
	long long min;		/* OPT_SIZE, OPT_COUNT, OPT_INT: lowest value */
	const char *const *choices;	/* OPT_CHOICE: NULL-terminated */
};

/* the runner-wide settings */
struct run_opts {
	size_t sizes[MAX_SIZES];	/* working-set sizes, ascending */
	int nsizes;
	int reps;			/* timed repetitions (>= 1) */
	int warmup;			/* untimed repetitions before them */
	int warm_pass;			/* untimed passes before each timed one */
	uint64_t seed;
	int cpu;			/* CPU we are pinned to, -1 if not */
	const char *backings;		/* comma list, NULL = all */
	size_t mem_budget;		/* bytes interleaving may map at once */
	int verbose;
};

/* what a benchmark's hooks get: one size on one mapped backing */
struct bench_ctx {
	const struct run_opts *o;
	struct counters *c;
	const struct backing *b;
	/* the backing's working set, touched and verified; NULL for maps_own */
	const struct mapping *m;
	unsigned long page_kb;		/* the verified page size */
	int si;				/* index into o->sizes */
	int pt;				/* index into points (repetition hooks) */
};

struct bench {
	const char *name;
	const char *desc;
	/*
	 * The CSV columns, in order, separated by commas, each its name and
	 * the printf conversion of its value: "%s", "%d", "%u", or
	 * "%.<digits>f" / "%.<digits>g" of a double ("wss_bytes %u, cv
	 * %.4f").  The header, the contract and every row's fields come
	 * from it alone (emit_row(), bench/rows.h).
	 */
	const char *columns;
	/*
	 * a %s column that takes only the values listed (NULL-terminated:
	 * stream's kernels), which the contract exports; NULL: none
	 */
	const char *values_of;
	const char *const *values;
	const char *key;		/* the columns that identify a point */
	const char *metric;		/* the column compare compares */
	int lower_is_better;
	const struct bench_opt *opts;	/* its own options, {NULL}-terminated */
	size_t min_wss;			/* smaller working sets are skipped */
	/*
	 * maps_own: measure() maps and unmaps the backing itself (each
	 * repetition), so the runner's mapping only checks the page size and
	 * is gone before measure() runs.
	 */
	int maps_own;
	/*
	 * arrays: a working set is this many equal arrays, each whole 4 KB
	 * pages (streamk: STREAM's a, b, c); 0 means one.  Exported, so that
	 * bench/run.py sizes and cuts it without knowing the benchmark.
	 */
	int arrays;
	/* checks the parsed options: 0, or -1 with why and how to fix it */
	int (*check)(char *why, size_t n);
	/* once the counters are open, before the metadata; may be NULL */
	void (*start)(struct counters *c);
	/*
	 * The TLB model it replays or reports (tlbuse.h), or NULL.  The
	 * runner checks its --model with the other options, and once the
	 * counters are open resolves auto and prints its geometry.
	 */
	struct tlb_use *tlb;
	/*
	 * Faults a new mapping's first len bytes in, in place of the
	 * runner's memset from its pinned thread; with it the runner binds
	 * the mapping to no node (--numa local is for the one pinned
	 * thread), so that pages land where the benchmark's own threads
	 * first touch them (streamk: STREAM's parallel initialisation).
	 * NULL: the runner's memset.  x->m is not yet set.
	 */
	void (*touch)(const struct bench_ctx *x, char *addr, size_t len);
	/*
	 * Either measure(), which writes one size's rows on one backing and
	 * runs backing by backing: 0, or -1 when the backing failed ...
	 */
	int (*measure)(const struct bench_ctx *x);
	/*
	 * ... or the repetition hooks, with which the runner interleaves the
	 * backings (runner.c, run_interleaved): for one size every backing is
	 * mapped, and for each of the points (a NULL-terminated list of
	 * names: chase's hop kinds, stream's kernels) prepare() runs once per
	 * backing, then rep() once per repetition and backing (with untimed
	 * warm passes before each timed one), the backing order following a
	 * Williams design, then finish() writes the row.
	 * prepare: 0 with *st set, 1 when the point does not apply to this
	 * size (no rep or finish follow), -1 failed (with an @error line).
	 * rep: r < 0 is an untimed warmup, else the r-th timed repetition;
	 * 0 or -1.  finish: writes the rows from the repetitions, frees st
	 * (also after a failure, with ok 0, writing nothing); 0 or -1.
	 */
	const char *const *points;
	int (*prepare)(const struct bench_ctx *x, void **st);
	int (*rep)(const struct bench_ctx *x, void *st, int r);
	int (*finish)(const struct bench_ctx *x, void *st, int ok);
};

#define BENCH_REGISTER(b)						\
	static const struct bench *const bench_reg_##b			\
	__attribute__((used, section("bench_registry"),			\
		       aligned(sizeof(void *)))) = &(b)

/* the registered benchmarks, in link order (build/bench/<name> has one) */
int bench_count(void);
const struct bench *bench_at(int i);
/*
 * b's table of rows (bench/rows.h); src, n: a buffer for the file it
 * names when a row does not fit ("bench/<name>.c")
 */
struct row_table bench_table(const struct bench *b, char *src, size_t n);
/* the runner-wide options, {NULL}-terminated */
extern const struct bench_opt runner_opts[];

/*
 * The order of the backings in each round: a Williams design, balanced for
 * position and for first-order carry-over over order_rows(n) rounds;
 * out[i] is the index of the backing measured i-th in round `row`.
 */
int order_rows(int n);
void order_row(int n, uint64_t row, int *out);

/* main() of build/bench/<name> */
int runner_main(int argc, char **argv);
/* bench/run.py's checks through benchtool (runner.c): exit 64 on bad input */
int runner_check(const struct bench *b, int argc, char **argv);
int runner_sizes(const char *list);

/* time */
double now_ns(void);
/* warn once per run when a repetition is shorter than the clock resolves */
void check_duration(double ns);

#endif
