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
static const char *const kname[K_NR] = { "write", "read", "copy", "stride" };

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

/* one kernel: warmup, then reps timed repetitions of iters passes */
static size_t time_kernel(const struct bench_ctx *x, enum kern k,
			  uint64_t iters, uint64_t *sum, double *gb, double *ns)
{
	size_t wss = x->o->sizes[x->si], bytes = 0, acc = wss / PAGE * iters;
	uint64_t it;
	int r;

	for (r = -x->o->warmup; r < x->o->reps; r++) {
		double t0, t1;

		bytes = 0;
		t0 = now_ns();
		for (it = 0; it < iters; it++)
			bytes += pass(k, x->m->addr, wss, sum);
		t1 = now_ns();
		if (r < 0)
			continue;
		check_duration(t1 - t0);
		gb[r] = bytes / (t1 - t0);	/* bytes/ns = GB/s */
		ns[r] = (t1 - t0) / acc;
	}
	return bytes;
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

static int measure(const struct bench_ctx *x)
{
	size_t wss = x->o->sizes[x->si], bytes;
	uint64_t iters = min_bytes / wss ? min_bytes / wss : 1, sum = 0;
	int reps = x->o->reps, k, bad = 0;
	double *gb = calloc(reps, sizeof(double));
	double *ns = calloc(reps, sizeof(double));
	double read_gb = 0;
	struct stats st, sn;
	char buf[32];

	if (!gb || !ns) {
		emit_error("out of memory");
		bad = -1;
		goto out;
	}
	line_key = page_line_key(x->o->seed);
	for (k = 0; k < K_NR; k++) {
		bytes = time_kernel(x, k, iters, &sum, gb, ns);
		stream_sink = sum;
		bad |= check_kernel(x, k, sum);
		stats_compute(gb, reps, &st);
		stats_compute(ns, reps, &sn);
		if (k == K_READ)
			read_gb = st.median;
		/* the columns of stream_bench, in order */
		emit_row("%s,%lu,%zu,%s,%.3f,%.3f,%.3f,%.4f,%d,%zu,%s",
			 x->b->name, x->page_kb, wss, kname[k], st.median,
			 st.min, st.max, st.cv, reps, bytes,
			 fmt_opt(buf, sizeof(buf), k == K_STRIDE, sn.median));
	}
	progress("%-14s %10zu B (%d/%d): read %.2f GB/s, stride %.2f ns/page",
		 x->b->name, wss, x->si + 1, x->o->nsizes, read_gb, sn.median);
out:
	free(gb);
	free(ns);
	return bad;
}

static const struct bench stream_bench = {
	.name = "stream",
	.desc = "sequential read/write/copy bandwidth, and a page-stride read: "
		"best-case walk throughput with independent loads (not latency, "
		"not STREAM bandwidth: see streamk)",
	.columns = "backing,page_kb,wss_bytes,kernel,gb_per_s,gb_min,gb_max,"
		   "cv,reps,bytes_per_rep,ns_per_access",
	.key = "backing,kernel,wss_bytes",
	.metric = "gb_per_s",
	.lower_is_better = 0,
	.opts = stream_opts,
	.min_wss = 2 * PAGE,
	.measure = measure,
};
BENCH_REGISTER(stream_bench);
