// SPDX-License-Identifier: GPL-2.0
/*
 * pmu.c - event table lookup, CPU and PMU choice, multiplex scaling; see
 * pmu.h.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostfacts.h"
#include "pmu.h"
#include "rawcpuid.h"

const char *const pmu_role_names[PMU_ROLE_NR] = {
	[PMU_ROLE_L1_MISS] = "l1_miss",
	[PMU_ROLE_WALK] = "walk",
	[PMU_ROLE_STLB_HIT] = "stlb_hit",
	[PMU_ROLE_WALK_COMPLETED] = "walk_completed",
	[PMU_ROLE_WALK_ACTIVE] = "walk_active",
	[PMU_ROLE_WALK_PENDING] = "walk_pending",
	[PMU_ROLE_COALESCED] = "coalesced",
};

/*
 * TLB-model presets (bench/tlbmodel.c) by pmu-events model and core PMU.
 * perf's tables say nothing of TLB geometry, so this list is ours: the
 * CPUs the earlier hand-kept list in bench/run.py gave each preset, now
 * named by perf's model.  Skylake-SP and Cascade Lake share Skylake's
 * core; Raptor Lake (in perf's alderlake row), Emerald and Granite Rapids
 * keep the Golden Cove preset they had, which was not checked against
 * their own manuals.  A core missing here (Tremont and older Atoms,
 * Crestmont and later E-cores, Arrow and Lunar Lake's P-cores) has no
 * preset: --model auto then takes its CPUID geometry on bare metal, or
 * none (tlbcpuid.h).  Zen 2 keeps the zen3 preset it had (the same TLBs
 * by AMD's guides); Raptor Lake's E-cores are Gracemont.
 */
static const struct {
	const char *model, *pmu, *preset;
} presets[] = {
	{ "haswell", "cpu", "haswell" },
	{ "haswellx", "cpu", "haswell" },
	{ "broadwell", "cpu", "broadwell" },
	{ "broadwellx", "cpu", "broadwell" },
	{ "broadwellde", "cpu", "broadwell" },
	{ "skylake", "cpu", "skylake" },	/* Skylake .. Comet Lake */
	{ "skylakex", "cpu", "skylake" },
	{ "cascadelakex", "cpu", "skylake" },
	{ "icelake", "cpu", "icelake" },
	{ "icelakex", "cpu", "icelake" },
	{ "alderlake", "cpu_core", "goldencove" },	/* and Raptor Lake */
	{ "alderlake", "cpu_atom", "gracemont" },
	{ "sapphirerapids", "cpu", "goldencove" },
	{ "emeraldrapids", "cpu", "goldencove" },
	{ "graniterapids", "cpu", "goldencove" },
	{ "amdzen1", "cpu", "zen1" },
	{ "amdzen2", "cpu", "zen3" },
	{ "amdzen3", "cpu", "zen3" },
	{ "amdzen4", "cpu", "zen4" },
	{ "amdzen5", "cpu", "zen5" },
};

const char *pmu_preset(const struct pmu_model *m, const char *pmu)
{
	size_t i;

	for (i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (!strcmp(presets[i].model, m->model) &&
		    !strcmp(presets[i].pmu, pmu))
			return presets[i].preset;
	return NULL;
}

static int dashes(const char *s)
{
	int n = 0;

	while ((s = strchr(s, '-'))) {
		n++;
		s++;
	}
	return n;
}

/*
 * perf's rule: the match must cover the id (less the stepping if the row
 * names none)
 */
static int row_matches(const char *re_src, const char *id)
{
	size_t want = strlen(id);
	regmatch_t pm;
	regex_t re;
	int hit;

	if (dashes(re_src) == 3 && dashes(id) != 3)
		return 0;
	if (dashes(re_src) != 3 && dashes(id) == 3)
		want = strrchr(id, '-') - id;
	if (regcomp(&re, re_src, REG_EXTENDED))
		return 0;
	hit = !regexec(&re, id, 1, &pm, 0) && pm.rm_so == 0 &&
	      (size_t)pm.rm_eo == want;
	regfree(&re);
	return hit;
}

/* 1 if some stepping of a cpuid without one matches a row that needs it */
static int needs_stepping(const char *re_src, const char *cpuid)
{
	char id[96];
	int step;

	if (dashes(re_src) != 3 || dashes(cpuid) != 2)
		return 0;
	for (step = 0; step < 16; step++) {
		snprintf(id, sizeof(id), "%s-%X", cpuid, step);
		if (row_matches(re_src, id))
			return 1;
	}
	return 0;
}

const struct pmu_model *pmu_model_find(const char *cpuid, char *why,
				       size_t n)
{
	const struct pmu_model *m;
	char id[80], *p;
	int stepped = 0;

	/* perf writes model and stepping in upper-case hex */
	snprintf(id, sizeof(id), "%s", cpuid);
	p = strchr(id, '-');
	for (p = p ? strchr(p + 1, '-') : NULL; p && *p; p++)
		*p = toupper((unsigned char)*p);
	for (m = pmu_models; m->cpuid_re; m++) {
		if (row_matches(m->cpuid_re, id))
			return m;
		stepped |= needs_stepping(m->cpuid_re, id);
	}
	if (stepped)
		snprintf(why, n, "perf's mapfile.csv tells models of %s apart "
			 "by stepping: give VENDOR-FAMILY-MODEL-STEPPING", id);
	else
		snprintf(why, n, "no row of perf's mapfile.csv matches %s "
			 "(VENDOR-FAMILY-MODEL[-STEPPING], family decimal, "
			 "model hex, e.g. GenuineIntel-6-8F)", id);
	return NULL;
}

const char *pmu_arch_missing(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return NULL;
#else
	return "no hardware TLB events on this architecture: the compiled-in "
	       "table is perf's pmu-events for x86 "
	       "(tools/perf/pmu-events/arch/x86), none for Arm cores (and a "
	       "TCG guest has no TLB to count)";
#endif
}

/*
 * perf's x86 CPU id, VENDOR-FAMILY-MODEL-STEPPING with the family in
 * decimal and the rest in hex, from the cpuid instruction as perf reads
 * it (or BENCH_CPUID_FILE's recorded leaves, rawcpuid.h, so tests can
 * stand in any CPU).
 */
int pmu_host_cpuid(char *buf, size_t n)
{
	struct cpuid_leaves c;
	char why[300];

	if (cpuid_load(&c, why, sizeof(why)) || !c.vendor[0])
		return -1;
	snprintf(buf, n, "%s-%u-%X-%X", c.vendor, c.family, c.model,
		 c.stepping);
	return 0;
}

const struct pmu_core *pmu_core_find(const struct pmu_model *m,
				     const char *pmu)
{
	int i;

	for (i = 0; i < m->npmus; i++)
		if (!strcmp(m->pmus[i].pmu, pmu))
			return &m->pmus[i];
	return NULL;
}

void pmu_role_format(const struct pmu_role_events *r, char *name, size_t nn,
		     char *cfg, size_t nc)
{
	size_t a = 0, b = 0;
	int i;

	name[0] = cfg[0] = 0;
	for (i = 0; i < r->nparts; i++) {
		a += snprintf(name + a, a < nn ? nn - a : 0, "%s%s",
			      i ? "+" : "", r->part[i].name);
		b += snprintf(cfg + b, b < nc ? nc - b : 0, "%s0x%llx",
			      i ? "+" : "",
			      (unsigned long long)r->part[i].config);
	}
}

/* reads a sysfs file of PMU pmu under root into buf; 0, or -1 */
static int pmu_file(const char *root, const char *pmu, const char *file,
		    char *buf, size_t n)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/%s",
		 root, pmu, file);
	return host_read_line(path, buf, n);
}

int pmu_parse_cpulist(const char *s, cpu_set_t *set)
{
	CPU_ZERO(set);
	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s || a < 0)
			return -1;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a)
				return -1;
		}
		for (; a <= b && a < CPU_SETSIZE; a++)
			CPU_SET(a, set);
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	return 0;
}

static int last_cpu(const cpu_set_t *a, const cpu_set_t *b)
{
	int i;

	for (i = CPU_SETSIZE - 1; i >= 0; i--)
		if (CPU_ISSET(i, a) && (!b || CPU_ISSET(i, b)))
			return i;
	return -1;
}

void pmu_pick_cpu(const char *sysfs, const cpu_set_t *allowed, int want,
		  struct pmu_choice *out)
{
	static const char *const hybrid[] = { "cpu_core", "cpu_atom" };
	char buf[4096];
	cpu_set_t cpus;
	size_t i;

	out->cpu = want >= 0 ? want : last_cpu(allowed, NULL);
	snprintf(out->pmu, sizeof(out->pmu), "cpu");
	for (i = 0; i < sizeof(hybrid) / sizeof(hybrid[0]); i++) {
		int c;

		if (pmu_file(sysfs, hybrid[i], "cpus", buf, sizeof(buf)) ||
		    pmu_parse_cpulist(buf, &cpus))
			continue;
		c = want >= 0 ? (CPU_ISSET(want, &cpus) ? want : -1) :
				last_cpu(allowed, &cpus);
		if (c >= 0) {
			out->cpu = c;
			snprintf(out->pmu, sizeof(out->pmu), "%s", hybrid[i]);
			break;
		}
	}
	out->type = pmu_file(sysfs, out->pmu, "type", buf, sizeof(buf)) ? -1 :
		    atoi(buf);
}

double pmu_scale(uint64_t v0, uint64_t v1, uint64_t ena0, uint64_t ena1,
		 uint64_t run0, uint64_t run1, int *ok)
{
	uint64_t v = v1 - v0, ena = ena1 - ena0, run = run1 - run0;

	*ok = run > 0;
	if (!*ok)
		return 0;
	return run < ena ? (double)v * ena / run : (double)v;
}
