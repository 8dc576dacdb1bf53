// SPDX-License-Identifier: GPL-2.0
/*
 * stream.c - sequential bandwidth, and a page-stride read that isolates
 * TLB cost from bandwidth.
 *
 * Kernels, over the first wss bytes of the mapping, bytes counted:
 *   write   memset of wss bytes                          wss
 *   read    sum of wss/8 64-bit words (checked)          wss
 *   copy    memcpy of the first half onto the second     wss (read + write)
 *   stride  one 8-byte load per 4 KB page, at a rotating 64 (one line each)
 *           line offset; every access is a new base page
 * Each repetition repeats its kernel until min_bytes of address range have
 * been covered, so short working sets are timed over many passes.  Write
 * runs first and read checks its sum against what write stored.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

#define PAGE 4096
#define LINE 64

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

static __attribute__((noinline)) uint64_t read_stride(const char *p,
						      size_t pages)
{
	uint64_t s = 0;
	size_t i;

	for (i = 0; i < pages; i++)
		s += *(const uint64_t *)(p + i * PAGE +
					 (i % (PAGE / LINE)) * LINE);
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

static int measure(const struct bench_opts *o, const struct mapping *m,
		   unsigned long kb, int si)
{
	size_t wss = o->sizes[si], min = o->min_bytes ? o->min_bytes : 256 << 20;
	uint64_t iters = min / wss ? min / wss : 1, it, sum = 0;
	double *gb = calloc(o->reps, sizeof(double));
	double *ns = calloc(o->reps, sizeof(double));
	struct stats st, sn;
	int k, r, bad = 0;
	char buf[32];
	double read_gb = 0;

	if (!gb || !ns) {
		emit_error("out of memory");
		free(gb);
		free(ns);
		return -1;
	}
	for (k = 0; k < K_NR; k++) {
		size_t bytes = 0, acc = wss / PAGE * iters;

		for (r = -o->warmup; r < o->reps; r++) {
			double t0, t1;

			bytes = 0;
			t0 = now_ns();
			for (it = 0; it < iters; it++)
				bytes += pass(k, m->addr, wss, &sum);
			t1 = now_ns();
			if (r < 0)
				continue;
			check_duration(t1 - t0);
			gb[r] = bytes / (t1 - t0);	/* bytes/ns = GB/s */
			ns[r] = acc ? (t1 - t0) / acc : 0;
		}
		stream_sink = sum;
		if (k == K_READ &&
		    sum != (wss / 8) * 0x0101010101010101ULL) {
			emit_error("%s read check failed at %zu bytes",
				   m->b->name, wss);
			bad = 1;
		}
		if (k == K_COPY && memcmp(m->addr, m->addr + wss / 2, wss / 2)) {
			emit_error("%s copy check failed at %zu bytes",
				   m->b->name, wss);
			bad = 1;
		}
		stats_compute(gb, o->reps, &st);
		stats_compute(ns, o->reps, &sn);
		if (k == K_READ)
			read_gb = st.median;
		/* backing,page_kb,wss_bytes,kernel,gb_per_s,gb_min,gb_max,cv,
		 * reps,bytes_per_rep,ns_per_access */
		emit_row("%s,%lu,%zu,%s,%.3f,%.3f,%.3f,%.4f,%d,%zu,%s",
			 m->b->name, kb, wss, kname[k], st.median, st.min,
			 st.max, st.cv, o->reps, bytes,
			 fmt_opt(buf, sizeof(buf), k == K_STRIDE, sn.median));
	}
	progress("%-14s %10zu B (%d/%d): read %.2f GB/s, stride %.2f ns/page",
		 m->b->name, wss, si + 1, o->nsizes, read_gb, sn.median);
	free(gb);
	free(ns);
	return bad;
}

static int run(const struct bench_opts *o, struct counters *c)
{
	char why[512];
	int i, si, rc = 0;

	(void)c;
	for (i = 0; i < nbackings; i++) {
		const struct backing *b = &backings[i];
		struct mapping m;
		unsigned long kb;

		if (!backing_selected(o, b))
			continue;
		if (backing_available(b, why, sizeof(why))) {
			progress("skip %s: %s", b->name, why);
			emit_backing_meta(b, "skipped", why, 0);
			continue;
		}
		progress("backing %s", b->name);
		if (backing_map(b, max_size(o), 0, &m, why, sizeof(why))) {
			emit_error("%s", why);
			emit_backing_meta(b, "failed", why, 0);
			rc = 2;
			continue;
		}
		memset(m.addr, 1, max_size(o));
		if (backing_verify(&m, &kb, why, sizeof(why))) {
			emit_error("%s", why);
			emit_backing_meta(b, "failed", why, 0);
			backing_unmap(&m);
			rc = 2;
			continue;
		}
		for (si = 0; si < o->nsizes; si++)
			if (o->sizes[si] >= 2 * PAGE && measure(o, &m, kb, si))
				rc = 2;
		backing_unmap(&m);
		emit_backing_meta(b, "measured", "", kb);
	}
	return rc;
}

const struct bench this_bench = {
	.name = "stream",
	.desc = "sequential read/write/copy bandwidth and page-stride read",
	.csv_header = "backing,page_kb,wss_bytes,kernel,gb_per_s,gb_min,gb_max,"
		      "cv,reps,bytes_per_rep,ns_per_access",
	.run = run,
};
