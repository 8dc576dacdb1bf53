// SPDX-License-Identifier: GPL-2.0
/*
 * tlbuse.c - the TLB model's options, check, auto resolution and replay,
 * shared by the benchmarks that use it.  See tlbuse.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rows.h"
#include "tlbcpuid.h"
#include "tlbmodel.h"
#include "tlbuse.h"

#define MODEL_BASE (1ULL << 40)

struct tlb_memo {
	unsigned long page_kb;
	size_t wss;
	int point;
	double l1, walks;
	struct tlb_memo *next;
};

int tlb_use_check(const char *name, char *why, size_t n)
{
	struct tlb_model m;
	int i, l;

	if (!strcmp(name, "auto") || !strcmp(name, TLB_NO_MODEL))
		return 0;
	if (!tlb_init_host(&m, name)) {
		tlb_free(&m);
		return 0;
	}
	l = snprintf(why, n, "--model: '%s' is not auto, none, a preset (",
		     name);
	for (i = 0; tlb_presets[i].name && l < (int)n; i++)
		l += snprintf(why + l, n - l, "%s%s", i ? ", " : "",
			      tlb_presets[i].name);
	if (l < (int)n)
		snprintf(why + l, n - l, ") or a valid spec (see "
			 "bench/tlbmodel.h)");
	return -1;
}

/*
 * --model auto for the pinned core: its preset (bench/pmu.c's list), else
 * the geometry its CPUID reports on bare metal, else TLB_NO_MODEL
 * (tlb_auto_model, bench/tlbcpuid.h); why says which and why.
 */
static const char *auto_model(const struct counters *c, char *why, size_t n)
{
	const char *p = c->model ? pmu_preset(c->model, c->pmu) : NULL;
	const char *m;
	char cpu[160];

	snprintf(cpu, sizeof(cpu), "%s (perf model %s, PMU %s)",
		 c->cpuid[0] ? c->cpuid : "an unidentified CPU",
		 c->model ? c->model->model : "none", c->pmu);
	m = tlb_auto_model(p, cpu, why, n);
	if (!p)
		progress("warning: %s", why);
	return m;
}

void tlb_use_start(struct tlb_use *u, const struct counters *c)
{
	char why[600] = "";

	if (!strcmp(u->model, "auto"))
		u->model = auto_model(c, why, sizeof(why));
	else if (!strcmp(u->model, TLB_NO_MODEL))
		snprintf(why, sizeof(why), "--model none: no preset fits the "
			 "CPU the run was planned on (bench/run.py says why)");
	tlb_emit_model_meta(u->model, why);
}

const char *tlb_use_preset(const struct tlb_use *u)
{
	return tlb_spec(u->model) == u->model &&
	       strcmp(u->model, TLB_NO_MODEL) ? "custom" : u->model;
}

/* the replay itself: 0, or -1 when the model cannot be made */
static int replay(const struct tlb_use *u, const char *base,
		  void **const starts[], int n, unsigned long page_kb,
		  double *l1, double *walks)
{
	void **p[TLB_USE_MAX_CHAINS];
	struct tlb_model m;
	uint64_t k;
	int pass, i;

	if (n < 1 || n > TLB_USE_MAX_CHAINS || tlb_init_host(&m, u->model))
		return -1;
	memcpy(p, starts, n * sizeof(p[0]));
	for (pass = 0; pass < 2; pass++) {
		tlb_reset_counts(&m);
		for (k = 0; k < u->cap; k++) {
			i = k % n;
			tlb_access(&m, MODEL_BASE + ((char *)p[i] - base),
				   page_kb);
			p[i] = *p[i];
		}
	}
	*l1 = 1000.0 * m.l1_misses / m.accesses;
	*walks = 1000.0 * m.walks / m.accesses;
	tlb_free(&m);
	return 0;
}

int tlb_use_replay(struct tlb_use *u, const char *base,
		   void **const starts[], int n, unsigned long page_kb,
		   size_t wss, int point, double *l1, double *walks)
{
	struct tlb_memo *e;

	if (!strcmp(u->model, TLB_NO_MODEL))
		return 0;
	for (e = u->memo; e; e = e->next)
		if (e->page_kb == page_kb && e->wss == wss &&
		    e->point == point) {
			*l1 = e->l1;
			*walks = e->walks;
			return 1;
		}
	if (replay(u, base, starts, n, page_kb, l1, walks)) {
		emit_error("TLB model: out of memory");
		return 0;
	}
	e = malloc(sizeof(*e));
	if (e) {
		*e = (struct tlb_memo){ page_kb, wss, point, *l1, *walks,
					u->memo };
		u->memo = e;
	}
	return 1;
}
