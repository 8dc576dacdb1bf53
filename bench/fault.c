// SPDX-License-Identifier: GPL-2.0
/*
 * fault.c - the cost of first touch, and of setting a mapping up.
 *
 * Modes, each timed from before mmap to after munmap:
 *   demand    map, write one byte to every 4 KB base page, unmap
 *   populate  map prefaulted (MAP_POPULATE, or MADV_POPULATE_WRITE where
 *             the advice must come first or there is no mmap: devzero,
 *             thp, shm; column populate_via says which), touch, unmap
 *   setup     map and unmap, no touch: the setup cost of the backing
 * Faults come from the software page-faults counter over the same region
 * (getrusage minor faults where perf_event_open is unavailable).  Sizes
 * round up to whole pages of the backing.  Before timing, one mapping is
 * touched and its page size checked against smaps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "runner.h"

#define PAGE 4096

enum mode { M_DEMAND, M_POPULATE, M_SETUP, M_NR };
static const char *const mname[M_NR] = { "demand", "populate", "setup" };

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static void touch(char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += PAGE)
		((volatile char *)p)[i] = 1;
}

static int measure(const struct bench_opts *o, struct counters *c,
		   const struct backing *b, unsigned long kb, size_t size)
{
	double *us = calloc(o->reps, sizeof(double));
	double *fl = calloc(o->reps, sizeof(double));
	struct stats st, sf;
	char why[512];
	int md, r;

	if (!us || !fl) {
		emit_error("out of memory");
		return -1;
	}
	for (md = 0; md < M_NR; md++) {
		double mb = 0;

		for (r = -o->warmup; r < o->reps; r++) {
			struct counter_values v;
			struct mapping m;
			double t0, t1;
			long f0;

			f0 = minflt();
			counters_start(c);
			t0 = now_ns();
			if (backing_map(b, size, md == M_POPULATE ?
					MAP_F_POPULATE : 0, &m, why,
					sizeof(why))) {
				counters_stop(c, &v);
				emit_error("%s", why);
				free(us);
				free(fl);
				return -1;
			}
			if (md != M_SETUP)
				touch(m.addr, m.len);
			backing_unmap(&m);
			t1 = now_ns();
			counters_stop(c, &v);
			if (r < 0)
				continue;
			check_duration(t1 - t0);
			mb = m.len / 1048576.0;
			us[r] = (t1 - t0) / 1e3 / mb;
			fl[r] = (v.ok[EV_PAGE_FAULTS] ? (double)v.v[EV_PAGE_FAULTS] :
				 (double)(minflt() - f0)) / mb;
		}
		stats_compute(us, o->reps, &st);
		stats_compute(fl, o->reps, &sf);
		/* backing,page_kb,mode,us_per_mb,faults_per_mb,size_bytes,
		 * us_min_per_mb,us_max_per_mb,cv,reps,us_per_fault,
		 * populate_via */
		emit_row("%s,%lu,%s,%.3f,%.3f,%zu,%.3f,%.3f,%.4f,%d,%.3f,%s",
			 b->name, kb, mname[md], st.median, sf.median,
			 (size_t)(mb * 1048576), st.min, st.max, st.cv, o->reps,
			 sf.median > 0 ? st.median / sf.median : 0,
			 md == M_POPULATE ? backing_populate_via(b) : "");
		progress("%-14s %-8s %8.0f MB: %10.1f us/MB  %8.1f faults/MB",
			 b->name, mname[md], mb, st.median, sf.median);
	}
	free(us);
	free(fl);
	return 0;
}

static int run(const struct bench_opts *o, struct counters *c)
{
	char why[512];
	int i, si, rc = 0;

	for (i = 0; i < nbackings; i++) {
		const struct backing *b = &backings[i];
		struct mapping m;
		unsigned long kb;
		int bad = 0;

		if (!backing_selected(o, b))
			continue;
		if (backing_available(b, why, sizeof(why))) {
			progress("skip %s: %s", b->name, why);
			emit_backing_meta(b, "skipped", why, 0);
			continue;
		}
		if (backing_map(b, max_size(o), 0, &m, why, sizeof(why))) {
			emit_error("%s", why);
			emit_backing_meta(b, "failed", why, 0);
			rc = 2;
			continue;
		}
		touch(m.addr, m.len);
		bad = backing_verify(&m, &kb, why, sizeof(why));
		backing_unmap(&m);
		if (bad) {
			emit_error("%s", why);
			emit_backing_meta(b, "failed", why, 0);
			rc = 2;
			continue;
		}
		for (si = 0; si < o->nsizes && !bad; si++)
			bad = measure(o, c, b, kb, o->sizes[si]);
		emit_backing_meta(b, bad ? "failed" : "measured",
				  bad ? "mapping failed during timing" : "", kb);
		if (bad)
			rc = 2;
	}
	return rc;
}

const struct bench this_bench = {
	.name = "fault",
	.desc = "first-touch (demand, populate) and setup cost per MB",
	.csv_header = "backing,page_kb,mode,us_per_mb,faults_per_mb,size_bytes,"
		      "us_min_per_mb,us_max_per_mb,cv,reps,us_per_fault,"
		      "populate_via",
	.run = run,
};
