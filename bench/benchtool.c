// SPDX-License-Identifier: GPL-2.0
/*
 * benchtool.c - exposes the runner's statistics and the TLB model to the
 * unit tests in tests/bench/ (not a benchmark; not copied to the guest).
 *
 *   benchtool stats V...        prints "median min max mean cv n"
 *   benchtool tlb SPEC|PRESET   reads "ADDR PAGE_KB" lines (ADDR in hex)
 *                               and prints "accesses N l1_misses N walks N"
 *   benchtool presets           prints "name<TAB>spec<TAB>source" lines
 *   benchtool geometry SPEC|PRESET   the model's geometry as JSON
 *   benchtool events [--cpuid ID]   the counter events for a CPU (default
 *                               this one), from perf's pmu-events tables
 *   benchtool pickcpu --sysfs ROOT --allowed LIST [--cpu N]
 *                               the CPU and PMU the runner would measure on
 *   benchtool scale V0 V1 E0 E1 R0 R1   one repetition's scaled count
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmu.h"
#include "stats.h"
#include "tlbmodel.h"

/*
 * events: a line "model NAME VERSION MAPFILE-ROW", then per core PMU
 *   ROLE NAME CONFIG PMU          (NAME and CONFIG "+"-joined for a sum)
 *   ROLE none PMU REASON          when the role has no event
 *   preset NAME PMU               the TLB-model preset ("none" if none)
 */
static int cmd_events(int argc, char **argv)
{
	char id[128], why[256], name[512], cfg[128];
	const struct pmu_model *m;
	int i, r;

	if (argc == 4 && !strcmp(argv[2], "--cpuid")) {
		snprintf(id, sizeof(id), "%s", argv[3]);
	} else if (argc != 2 || pmu_host_cpuid(id, sizeof(id))) {
		fprintf(stderr, argc == 2 ? "benchtool: cannot read this CPU's "
			"vendor, family, model and stepping from /proc/cpuinfo\n"
			: "usage: benchtool events [--cpuid VENDOR-FAMILY-MODEL"
			"[-STEPPING]]\n");
		return argc == 2 ? 1 : 64;
	}
	m = pmu_model_find(id, why, sizeof(why));
	if (!m) {
		fprintf(stderr, "benchtool: %s\n", why);
		return 1;
	}
	printf("model %s %s %s\n", m->model, m->version, m->cpuid_re);
	for (i = 0; i < m->npmus; i++) {
		const struct pmu_core *p = &m->pmus[i];
		const char *preset = pmu_preset(m, p->pmu);

		for (r = 0; r < PMU_ROLE_NR; r++) {
			if (!p->role[r].nparts) {
				printf("%s none %s %s\n", pmu_role_names[r],
				       p->pmu, p->role[r].reason);
				continue;
			}
			pmu_role_format(&p->role[r], name, sizeof(name), cfg,
					sizeof(cfg));
			printf("%s %s %s %s\n", pmu_role_names[r], name, cfg,
			       p->pmu);
		}
		printf("preset %s %s\n", preset ? preset : "none", p->pmu);
	}
	return 0;
}

/* pickcpu: "cpu N pmu NAME type T" */
static int cmd_pickcpu(int argc, char **argv)
{
	const char *sysfs = NULL, *allowed = NULL;
	struct pmu_choice ch;
	cpu_set_t set;
	int i, want = -1;

	for (i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--sysfs"))
			sysfs = argv[i + 1];
		else if (!strcmp(argv[i], "--allowed"))
			allowed = argv[i + 1];
		else if (!strcmp(argv[i], "--cpu"))
			want = atoi(argv[i + 1]);
		else
			break;
	}
	if (i != argc || !sysfs || !allowed ||
	    pmu_parse_cpulist(allowed, &set)) {
		fprintf(stderr, "usage: benchtool pickcpu --sysfs ROOT "
			"--allowed CPULIST [--cpu N]\n");
		return 64;
	}
	pmu_pick_cpu(sysfs, &set, want, &ch);
	printf("cpu %d pmu %s type %d\n", ch.cpu, ch.pmu, ch.type);
	return 0;
}

/* geometry: the JSON line the runner writes as "@meta tlb_geometry" */
static int cmd_geometry(const char *name)
{
	struct tlb_model m;
	char buf[4096];
	int rc;

	if (tlb_init(&m, name)) {
		fprintf(stderr, "benchtool: bad TLB spec '%s'\n", name);
		return 1;
	}
	rc = tlb_geometry_json(&m, name, buf, sizeof(buf));
	if (!rc)
		printf("%s\n", buf);
	tlb_free(&m);
	return rc ? 1 : 0;
}

/* scale: "VALUE OK" */
static int cmd_scale(char **argv)
{
	uint64_t a[6];
	double v;
	int i, ok;

	for (i = 0; i < 6; i++)
		a[i] = strtoull(argv[i + 2], NULL, 0);
	v = pmu_scale(a[0], a[1], a[2], a[3], a[4], a[5], &ok);
	printf("%.1f %d\n", v, ok);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "stats")) {
		int i, n = argc - 2;
		double *v = malloc(n * sizeof(*v));
		struct stats s;

		for (i = 0; i < n; i++)
			v[i] = strtod(argv[i + 2], NULL);
		stats_compute(v, n, &s);
		printf("%.9g %.9g %.9g %.9g %.9g %d\n", s.median, s.min, s.max,
		       s.mean, s.cv, s.n);
		free(v);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "tlb")) {
		struct tlb_model m;
		unsigned long long a;
		unsigned long kb;

		if (tlb_init(&m, argv[2])) {
			fprintf(stderr, "benchtool: bad TLB spec '%s'\n", argv[2]);
			return 1;
		}
		while (scanf("%llx %lu", &a, &kb) == 2)
			tlb_access(&m, a, kb);
		printf("accesses %llu l1_misses %llu walks %llu\n",
		       (unsigned long long)m.accesses,
		       (unsigned long long)m.l1_misses,
		       (unsigned long long)m.walks);
		tlb_free(&m);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "presets")) {
		int i;

		for (i = 0; tlb_presets[i].name; i++)
			printf("%s\t%s\t%s\n", tlb_presets[i].name,
			       tlb_presets[i].spec, tlb_presets[i].source);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "geometry"))
		return cmd_geometry(argv[2]);
	if (argc >= 2 && !strcmp(argv[1], "events"))
		return cmd_events(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "pickcpu"))
		return cmd_pickcpu(argc, argv);
	if (argc == 8 && !strcmp(argv[1], "scale"))
		return cmd_scale(argv);
	fprintf(stderr, "usage: benchtool stats V... | tlb SPEC < trace | "
		"presets | geometry SPEC | events [--cpuid ID] | pickcpu ... | "
		"scale V0 V1 E0 E1 R0 R1\n");
	return 64;
}
