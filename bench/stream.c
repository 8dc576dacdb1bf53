// SPDX-License-Identifier: GPL-2.0
/*
 * stream.c - sequential bandwidth (memset, a sum, memcpy), and a page-stride
 * read: best-case page-walk throughput, since its loads are independent and
 * the core overlaps their misses.  It is not latency (chase.c's dependent
 * hops are) and not STREAM bandwidth (streamk.c runs STREAM's kernels by
 * STREAM's rules).
 *
 * Kernels, over the first wss bytes of the mapping, bytes counted:
 *   write   memset of wss bytes                          wss
 *   read    sum of wss/8 64-bit words (checked)          wss
 *   copy    memcpy of the first half onto the second     wss (read + write)
 *   stride  one 8-byte load per 4 KB page, at the line page_line() picks
 *           for that page (runner.h), as the chase's page hop; every
 *           access is a new base page               64 per page (one line)
 * Each repetition repeats its kernel until --min-bytes of address range
 * have been covered, so short working sets are timed over many passes.
 * Write runs first and read checks its sum against what write stored;
 * copy checks that the halves match.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static size_t min_bytes = 256 << 20;

static const struct bench_opt stream_opts[] = {
	{ .name = "min-bytes", .arg = "SIZE", .kind = OPT_SIZE,
	  .help = "address range each repetition covers, repeating its "
	  "kernel (256M)", .dst = &min_bytes, .min = 4096 },
	{ 0 },
};

enum kern { K_WRITE, K_READ, K_COPY, K_STRIDE, K_NR };
/* the runner's points, in the order they run: read checks what write left */
static const char *const kname[K_NR + 1] = { "write", "read", "copy",
					     "stride", NULL };

volatile uint64_t stream_sink;

static __attribute__((noinline)) uint64_t read_words(const uint64_t *p,
						     size_t n)
{
	uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	size_t i;

	for (i = 0; i + 4 <= n; i += 4) {
		s0 += p[i];
		s1 += p[i + 1];
		s2 += p[i + 2];
		s3 += p[i + 3];
	}
	for (; i < n; i++)
		s0 += p[i];
	return s0 + s1 + s2 + s3;
}

static uint64_t line_key;	/* page_line_key(seed) */

static __attribute__((noinline)) uint64_t read_stride(const char *p,
						      size_t pages)
{
	uint64_t s = 0;
	size_t i;

	for (i = 0; i < pages; i++)
		s += *(const uint64_t *)(p + i * PAGE + page_line(i, line_key));
	return s;
}

/* one pass of kernel k over wss bytes; returns bytes counted */
static size_t pass(enum kern k, char *p, size_t wss, uint64_t *sum)
{
	switch (k) {
	case K_WRITE:
		memset(p, 1, wss);
		return wss;
	case K_READ:
		*sum = read_words((const uint64_t *)p, wss / 8);
		return wss;
	case K_COPY:
		memcpy(p + wss / 2, p, wss / 2);
		return wss / 2 * 2;
	case K_STRIDE:
		*sum += read_stride(p, wss / PAGE);
		return wss / PAGE * LINE;
	default:
		return 0;
	}
}

/* one kernel at one size on one backing, and its repetitions */
struct point {
	uint64_t iters;		/* passes per repetition */
	uint64_t sum;		/* read and stride's sums */
	size_t bytes;		/* counted per repetition */
	double *gb, *ns;	/* per repetition */
};

static int prepare(const struct bench_ctx *x, void **st)
{
	size_t wss = x->o->sizes[x->si];
	struct point *pt = calloc(1, sizeof(*pt));

	if (pt) {
		pt->gb = calloc(x->o->reps, sizeof(double));
		pt->ns = calloc(x->o->reps, sizeof(double));
	}
	if (!pt || !pt->gb || !pt->ns) {
		if (pt) {
			free(pt->gb);
			free(pt->ns);
		}
		free(pt);
		emit_error("out of memory");
		return -1;
	}
	pt->iters = min_bytes / wss ? min_bytes / wss : 1;
	line_key = page_line_key(x->o->seed);
	*st = pt;
	return 0;
}

/* one repetition of kernel x->pt: iters passes, timed unless r < 0 */
static int rep(const struct bench_ctx *x, void *st, int r)
{
	struct point *pt = st;
	size_t wss = x->o->sizes[x->si], bytes = 0;
	double t0, t1;
	uint64_t it;

	t0 = now_ns();
	for (it = 0; it < pt->iters; it++)
		bytes += pass(x->pt, x->m->addr, wss, &pt->sum);
	t1 = now_ns();
	pt->bytes = bytes;
	if (r < 0)
		return 0;
	check_duration(t1 - t0);
	pt->gb[r] = bytes / (t1 - t0);	/* bytes/ns = GB/s */
	pt->ns[r] = (t1 - t0) / (wss / PAGE * pt->iters);
	return 0;
}

/* 0, or -1 with an @error line when kernel k left the wrong data */
static int check_kernel(const struct bench_ctx *x, enum kern k, uint64_t sum)
{
	size_t wss = x->o->sizes[x->si];
	const char *p = x->m->addr;

	if ((k == K_READ && sum != (wss / 8) * 0x0101010101010101ULL) ||
	    (k == K_COPY && memcmp(p, p + wss / 2, wss / 2))) {
		emit_error("%s %s check failed at %zu bytes", x->b->name,
			   kname[k], wss);
		return -1;
	}
	return 0;
}

/* checks what the kernel left, then writes its row */
static int finish(const struct bench_ctx *x, void *st, int ok)
{
	struct point *pt = st;
	size_t wss = x->o->sizes[x->si];
	int k = x->pt, reps = x->o->reps, bad = 0;
	struct stats sg, sn;

	if (ok) {
		stream_sink = pt->sum;
		bad = check_kernel(x, k, pt->sum);
		stats_compute(pt->gb, reps, &sg);
		stats_compute(pt->ns, reps, &sn);
		const struct cell row[] = {
			CELL_S(x->b->name), CELL_U(x->page_kb), CELL_U(wss),
			CELL_S(kname[k]), CELL_F(sg.median), CELL_F(sg.min),
			CELL_F(sg.max), CELL_F(sg.cv), CELL_D(reps),
			CELL_U(pt->bytes), CELL_OPT(k == K_STRIDE, sn.median),
		};

		emit_row(row, NCELLS(row));
		progress("%-14s %-6s %10zu B (%d/%d): %.2f GB/s, %.2f ns/page",
			 x->b->name, kname[k], wss, x->si + 1, x->o->nsizes,
			 sg.median, sn.median);
	}
	free(pt->gb);
	free(pt->ns);
	free(pt);
	return bad;
}

static const struct bench stream_bench = {
	.name = "stream",
	.desc = "sequential read/write/copy bandwidth, and a page-stride read: "
		"best-case walk throughput with independent loads (not latency, "
		"not STREAM bandwidth: see streamk)",
	.columns = "backing %s, page_kb %u, wss_bytes %u, kernel %s, "
		   "gb_per_s %.3f, gb_min %.3f, gb_max %.3f, cv %.4f, "
		   "reps %d, bytes_per_rep %u, ns_per_access %.3f",
	.values_of = "kernel",
	.values = kname,
	.key = "backing,kernel,wss_bytes",
	.metric = "gb_per_s",
	.lower_is_better = 0,
	.opts = stream_opts,
	.min_wss = 2 * PAGE,
	.points = kname,
	.prepare = prepare,
	.rep = rep,
	.finish = finish,
};
BENCH_REGISTER(stream_bench);
