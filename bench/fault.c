// SPDX-License-Identifier: GPL-2.0
/*
 * fault.c - the cost of first touch, and of setting a mapping up.
 *
 * Every repetition makes a new mapping of the working-set size in the four
 * steps of backing.h.  The backing's prepare step (opening /dev/zero or
 * /dev/hugetlb, creating, unlinking and sizing a file in the hugetlbfs
 * mount, memfd_create and ftruncate, shmget; nothing for thp and
 * maphugetlb) is outside the modes' window and timed on its own, in every
 * row's prepare_us_per_call: where a backing does that work matters for a
 * like-for-like setup cost (devhugetlb makes its hugetlbfs file inside
 * mmap, in the window; hugetlbfs's file is made in prepare), so the
 * summary sets both parts side by side.  The modes time:
 *   demand    attach, write one byte to every 4 KB base page, detach,
 *             release
 *   populate  the same with the mapping prefaulted at attach: MAP_POPULATE,
 *             or MADV_POPULATE_WRITE where advice must come first or there
 *             is no mmap (devzero, thp, shm; column populate_via)
 *   setup     the same with no touch: attach, detach, release.  Reported
 *             per call, as it does not grow with the size.
 * Every mode times the release, so every backing's huge pages and
 * reservation are dropped inside the window, wherever the kernel drops
 * them: at munmap (private mappings: devhugetlb, maphugetlb), at shmdt
 * (shm, removed at attach) or at the last close (hugetlbfs files,
 * memfds).  The reservation is made at mmap inside the window, except
 * shm's, which shmget makes in the untimed prepare step.
 * attach includes the advice a backing needs (devzero MADV_NOHUGEPAGE;
 * thp over-maps, trims to 2 MB alignment and MADV_HUGEPAGE).
 *
 * Faults are the process's minor + major fault counts (getrusage), read
 * right outside the two clock readings.  They count faults taken on
 * access and the ones populate takes on the process's behalf (which
 * perf's page-faults event does not count); a hugetlb or THP page is one
 * fault.  Sizes round up to whole pages of the backing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "runner.h"

enum mode { M_DEMAND, M_POPULATE, M_SETUP, M_NR };
static const char *const mname[M_NR] = { "demand", "populate", "setup" };

static long faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

static void touch(char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += PAGE)
		((volatile char *)p)[i] = 1;
}

/*
 * One timed call of mode md: *ns and *nf its time and faults, *pns its
 * prepare step's time; 0 or -1.
 */
static int one_call(const struct backing *b, size_t size, int md,
		    size_t *len, double *ns, long *nf, double *pns)
{
	struct mapping m;
	char why[512];
	double t0, t1;
	long f0, f1;

	t0 = now_ns();
	if (backing_prepare(b, size, &m, why, sizeof(why))) {
		emit_error("%s", why);
		return -1;
	}
	*pns = now_ns() - t0;
	f0 = faults();
	t0 = now_ns();
	if (backing_attach(&m, md == M_POPULATE ? MAP_F_POPULATE : 0, why,
			   sizeof(why))) {
		backing_release(&m);
		emit_error("%s", why);
		return -1;
	}
	if (md != M_SETUP)
		touch(m.addr, m.len);
	backing_detach(&m);
	backing_release(&m);
	t1 = now_ns();
	f1 = faults();
	check_duration(t1 - t0);
	*len = m.len;
	*ns = t1 - t0;
	*nf = f1 - f0;
	return 0;
}

static void emit(const struct bench_ctx *x, int md, size_t len, double *us,
		 double *fl, double *pus)
{
	struct stats st, sf, sp;
	double mb = len / 1048576.0;
	int setup = md == M_SETUP;

	stats_compute(us, x->o->reps, &st);
	stats_compute(fl, x->o->reps, &sf);
	stats_compute(pus, x->o->reps, &sp);
	const struct cell row[] = {
		CELL_S(x->b->name), CELL_U(x->page_kb), CELL_S(mname[md]),
		CELL_OPT(!setup, st.median / mb), CELL_F(sf.median / mb),
		CELL_U(len), CELL_OPT(!setup, st.min / mb),
		CELL_OPT(!setup, st.max / mb), CELL_F(st.cv), CELL_D(x->o->reps),
		CELL_OPT(sf.median > 0, st.median / sf.median),
		CELL_S(md == M_POPULATE ? x->b->ops->populate_via : ""),
		CELL_F(st.median), CELL_F(sp.median),
	};

	emit_row(row, NCELLS(row));
	progress("%-14s %-8s %8.1f MB: %10.1f us/call  %8.1f faults/MB",
		 x->b->name, mname[md], mb, st.median, sf.median / mb);
}

static int measure(const struct bench_ctx *x)
{
	int reps = x->o->reps, md, r, rc = 0;
	double *us = calloc(reps, sizeof(double));
	double *fl = calloc(reps, sizeof(double));
	double *pus = calloc(reps, sizeof(double));
	size_t len = 0;

	if (!us || !fl || !pus) {
		emit_error("out of memory");
		rc = -1;
	}
	for (md = 0; md < M_NR && !rc; md++) {
		for (r = -x->o->warmup; r < reps && !rc; r++) {
			double ns, pns;
			long nf;

			rc = one_call(x->b, x->o->sizes[x->si], md, &len, &ns,
				      &nf, &pns);
			if (!rc && r >= 0) {
				us[r] = ns / 1e3;
				fl[r] = nf;
				pus[r] = pns / 1e3;
			}
		}
		if (!rc)
			emit(x, md, len, us, fl, pus);
	}
	free(us);
	free(fl);
	free(pus);
	return rc;
}

static const struct bench fault_bench = {
	.name = "fault",
	.desc = "first-touch (demand, populate) cost per MB, setup per call",
	.columns = "backing %s, page_kb %u, mode %s, us_per_mb %.3f, "
		   "faults_per_mb %.6g, size_bytes %u, us_min_per_mb %.3f, "
		   "us_max_per_mb %.3f, cv %.4f, reps %d, "
		   "us_per_fault %.3f, populate_via %s, us_per_call %.3f, "
		   "prepare_us_per_call %.3f",
	.key = "backing,mode,size_bytes",
	.metric = "us_per_call",
	.lower_is_better = 1,
	.maps_own = 1,
	.measure = measure,
};
BENCH_REGISTER(fault_bench);
