/* SPDX-License-Identifier: GPL-2.0 */
/*
 * runner.h - the shared benchmark runner.
 *
 * One benchmark is one file (chase.c, stream.c, fault.c) that defines
 * `const struct bench this_bench`.  The runner (runner.c) owns everything
 * else: option parsing, ASLR-off re-exec, CPU pinning, the timer check,
 * the metadata lines and the row protocol on stdout.
 *
 * Line protocol on stdout (read by bench/run.py; see results/README.md):
 *   @header <bench> <csv header>     once, before the first row
 *   @row <bench> <csv fields>        one per completed measurement
 *   @meta <key> <json>               metadata (method, counters, backing, ...)
 *   @error <bench> <text>            a loud failure (also on stderr)
 *   anything else                    progress, echoed by the host
 */
#ifndef BENCH_RUNNER_H
#define BENCH_RUNNER_H

#include <stddef.h>
#include <stdint.h>

#include "backing.h"
#include "counters.h"
#include "stats.h"

#define MAX_SIZES 128

enum hop_mode { HOP_LINE = 1, HOP_PAGE = 2, HOP_BOTH = 3 };

struct bench_opts {
	size_t sizes[MAX_SIZES];	/* working-set sizes, ascending */
	int nsizes;
	int reps;			/* timed repetitions (>= 1) */
	int warmup;			/* untimed repetitions before them */
	uint64_t seed;
	int cpu;			/* CPU we are pinned to, -1 if not */
	const char *backings;		/* comma list, NULL = all */
	int hop;			/* chase: enum hop_mode */
	uint64_t hops;			/* chase: hops per repetition */
	const char *model;		/* chase: TLB model preset */
	uint64_t model_cap;		/* chase: replayed accesses counted */
	size_t min_bytes;		/* stream: bytes moved per repetition */
	int verbose;
};

struct bench {
	const char *name;
	const char *desc;
	const char *csv_header;
	/* returns 0, or 2 when some backing failed its page-size check */
	int (*run)(const struct bench_opts *o, struct counters *c);
};

extern const struct bench this_bench;

/* time */
double now_ns(void);
double timer_resolution_ns(void);

/* output */
void emit_header(void);
void emit_row(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void emit_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void json_str(char *dst, size_t n, const char *s);
void emit_backing_meta(const struct backing *b, const char *status,
		       const char *reason, unsigned long page_kb);

/* helpers for benchmarks */
int backing_selected(const struct bench_opts *o, const struct backing *b);
size_t max_size(const struct bench_opts *o);
/* warn once per run when a repetition is shorter than the clock resolves */
void check_duration(double ns);
/* "", or "%.3f" of v when ok: for optional CSV fields */
const char *fmt_opt(char *buf, size_t n, int ok, double v);

#endif
