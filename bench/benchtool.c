// SPDX-License-Identifier: GPL-2.0
/*
 * benchtool.c - exposes the benchmarks' tables, the runner's statistics
 * and layout, and the TLB model to bench/run.py and the unit tests in
 * tests/bench/ (not a benchmark; not copied to the guest).  It links every
 * benchmark, so `contract` lists them all.
 *
 *   benchtool contract          the benchmarks, the backings and
 *                               realprog's backings and columns as JSON
 *   benchtool stats V...        prints "median min max mean cv n"
 *   benchtool tlb SPEC|PRESET   reads "ADDR PAGE_KB" lines (ADDR in hex)
 *                               and prints "accesses N l1_misses N walks N"
 *   benchtool presets           prints "name<TAB>spec<TAB>source" lines
 *   benchtool layout PAGES [SEED]   the byte offset of each page-hop
 *                               element (chase --hop page, stream stride)
 *   benchtool mlp WSS CHAINS STRIDE GROUP [SEED [STEPS]]   the parallel
 *                               chase's chains (mlp.c), one line of
 *                               offsets each; with STEPS, a last line:
 *                               where the loop left each after STEPS
 *   benchtool geometry SPEC|PRESET   the model's geometry as JSON
 *   benchtool events [--cpuid ID]   the counter events for a CPU (default
 *                               this one), from perf's pmu-events tables
 *   benchtool pickcpu --sysfs ROOT --allowed LIST [--cpu N]
 *                               the CPU and PMU the runner would measure on
 *   benchtool scale V0 V1 E0 E1 R0 R1   one repetition's scaled count
 *   benchtool llc [--sysfs ROOT] [--cpu N|--cpus LIST] [--threads N]
 *                 [--no-cpuid]  the last-level caches streamk's threads
 *                               use, summed, and their CPUs (llc.h)
 *   benchtool tlbgeometry [--model M] [--dump]   the TLB geometry the
 *                               model uses here (auto: as the chase picks
 *                               it) beside what CPUID reports, as JSON
 *                               (tlbcpuid.h); --dump: the raw leaves
 *   benchtool check BENCH [OPTION...]   BENCH's options by its binary's
 *                               own rules (exit 64 naming the bad one),
 *                               then its working sets in bytes, one a line
 *   benchtool sizes LIST        a --sizes list by the same rules, in bytes
 *   benchtool size SIZE...      each by the one size parser (size.h): its
 *                               bytes or "refused" (exit 1 if any was)
 *   benchtool meminfo ROOT KEY  a field of ROOT/proc/meminfo in kB, or -1
 *   benchtool poolfree ROOT PAGE_KB [NODE]   the pages a mapping can take
 *                               from that pool of the tree under ROOT
 *                               (hostfacts.h), or -1
 *   benchtool tlbwalks PRESET WSS_BYTES PAGE_KB [HOP_BYTES]
 *                               the TLB model's walks and L1 misses per 1000
 *                               accesses of the chase's cycle (no memory)
 *   benchtool reachlayout N UNIT L1D_BYTES WAYS [SEED]   how tlbreach's
 *                               two chains of N elements over UNIT-byte
 *                               units fill the sets of an L1D of 64-byte
 *                               lines: per set, and over-full sets
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostfacts.h"
#include "llc.h"
#include "mlp.h"
#include "pmu.h"
#include "realprog/backings.h"
#include "realprog/table.h"
#include "runner.h"
#include "size.h"
#include "stats.h"
#include "tlbcpuid.h"
#include "tlbreach.h"
#include "tlbmodel.h"
#include "tlbuse.h"

static void print_opts(const struct bench_opt *t)
{
	char esc[2][400];
	const char *sep = "";

	printf("[");
	for (; t && t->name; t++) {
		json_str(esc[0], sizeof(esc[0]), t->arg ? t->arg : "");
		json_str(esc[1], sizeof(esc[1]), t->help);
		printf("%s{\"name\": \"%s\", \"arg\": %s, \"help\": %s}", sep,
		       t->name, t->arg ? esc[0] : "null", esc[1]);
		sep = ", ";
	}
	printf("]");
}

/* "column_values": {column: [value, ...]}, of values_of if it has one */
static void print_col_values(const struct row_table *t)
{
	const char *const *v;

	printf(", \"column_values\": {");
	if (t->values_of) {
		printf("\"%s\": [", t->values_of);
		for (v = t->values; *v; v++)
			printf("%s\"%s\"", v == t->values ? "" : ", ", *v);
		printf("]");
	}
	printf("}");
}

/*
 * What every table of rows exports, a benchmark's or realprog's: its name,
 * desc, binary, columns, column_values and text (its %s columns: every
 * other one holds numbers, plots/table.py), leaving the object open for
 * the caller's keys.  0, or 70 when its columns do not parse.
 */
static int print_table(const struct row_table *t, const char *desc)
{
	struct row_col cols[MAX_COLS];
	char esc[300], header[2048];
	const char *sep = "";
	int i, k = row_cols(t, cols, esc, sizeof(esc));

	if (k < 0) {
		fprintf(stderr, "benchtool: %s\n", esc);
		return 70;
	}
	json_str(esc, sizeof(esc), desc);
	row_header(cols, k, header, sizeof(header));
	printf("{\"name\": \"%s\", \"desc\": %s, \"binary\": \"%s\", "
	       "\"columns\": ", t->name, esc, t->name);
	json_list(stdout, header);
	print_col_values(t);
	printf(", \"text\": [");
	for (i = 0; i < k; i++)
		if (row_col_kind(cols[i].fmt) == 's') {
			printf("%s\"%s\"", sep, cols[i].name);
			sep = ", ";
		}
	printf("]");
	return 0;
}

static int print_bench(const struct bench *b)
{
	char src[64];
	struct row_table t = bench_table(b, src, sizeof(src));

	if (print_table(&t, b->desc))
		return 70;
	printf(", \"key\": ");
	json_list(stdout, b->key);
	printf(", \"metric\": \"%s\", \"lower_is_better\": %s, \"options\": ",
	       b->metric, b->lower_is_better ? "true" : "false");
	print_opts(b->opts);
	printf(", \"arrays\": %d}", b->arrays ? b->arrays : 1);
	return 0;
}

/*
 * the tables of runner.h and backing.h, and realprog's (its backings and
 * columns), in the schema bench/contract.py reads
 */
static int cmd_contract(int argc, char **argv)
{
	char esc[300];
	int i;

	(void)argc;
	(void)argv;
	printf("{\"benches\": [");
	for (i = 0; i < bench_count(); i++) {
		printf(i ? ",\n  " : "\n  ");
		if (print_bench(bench_at(i)))
			return 70;
	}
	printf("],\n \"runner_options\": ");
	print_opts(runner_opts);
	printf(",\n \"backings\": [");
	for (i = 0; i < nbackings; i++) {
		const struct backing *b = &backings[i];

		json_str(esc, sizeof(esc), b->desc);
		printf("%s{\"name\": \"%s\", \"page_kb\": %lu, \"colour\": "
		       "\"%s\", \"desc\": %s, \"pool_kb\": %lu, \"thp\": %s}",
		       i ? ",\n  " : "\n  ", b->name, b->page_kb, b->colour,
		       esc, b->pool_kb, b->ops->thp ? "true" : "false");
	}
	printf("],\n \"realprog_backings\": [");
	for (i = 0; i < (int)NREALPROG_BACKINGS; i++)
		printf("%s\"%s\"", i ? ", " : "", realprog_backings[i]);
	printf("],\n \"realprog\": ");
	if (print_table(&realprog_table, REALPROG_DESC))
		return 70;
	printf("}}\n");
	return 0;
}

static int cmd_stats(int argc, char **argv)
{
	int i, n = argc - 2;
	double *v;
	struct stats s;

	if (n < 1)
		return -1;
	v = malloc(n * sizeof(*v));
	for (i = 0; i < n; i++)
		v[i] = strtod(argv[i + 2], NULL);
	stats_compute(v, n, &s);
	printf("%.9g %.9g %.9g %.9g %.9g %d\n", s.median, s.min, s.max,
	       s.mean, s.cv, s.n);
	free(v);
	return 0;
}

static int cmd_tlb(int argc, char **argv)
{
	struct tlb_model m;
	unsigned long long a;
	unsigned long kb;

	if (argc != 3)
		return -1;
	if (tlb_init_host(&m, argv[2])) {
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

static int cmd_presets(int argc, char **argv)
{
	int i;

	(void)argv;
	if (argc != 2)
		return -1;
	for (i = 0; tlb_presets[i].name; i++)
		printf("%s\t%s\t%s\n", tlb_presets[i].name,
		       tlb_presets[i].spec, tlb_presets[i].source);
	return 0;
}

static int cmd_layout(int argc, char **argv)
{
	unsigned long long pages, seed = 1, i;
	uint64_t key;

	if (argc < 3 || argc > 4)
		return -1;
	pages = strtoull(argv[2], NULL, 0);
	if (argc == 4)
		seed = strtoull(argv[3], NULL, 0);
	key = page_line_key(seed);
	for (i = 0; i < pages; i++)
		printf("%llu\n", i * PAGE + (unsigned long long)page_line(i, key));
	return 0;
}

static int cmd_mlp(int argc, char **argv)
{
	char why[300];

	if (argc < 6 || argc > 8)
		return -1;
	if (mlp_layout(stdout, strtoull(argv[2], NULL, 0), atoi(argv[3]),
		       strtoull(argv[4], NULL, 0), strtoull(argv[5], NULL, 0),
		       argc >= 7 ? strtoull(argv[6], NULL, 0) : 1,
		       argc == 8 ? strtoull(argv[7], NULL, 0) : 0, why,
		       sizeof(why))) {
		fprintf(stderr, "benchtool mlp: %s\n", why);
		return 1;
	}
	return 0;
}

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
			"vendor, family, model and stepping (no cpuid instruction)\n"
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
static int cmd_geometry(int argc, char **argv)
{
	const char *name = argv[2];
	struct tlb_model m;
	char buf[4096];
	int rc;

	if (argc != 3)
		return -1;
	if (tlb_init_host(&m, name)) {
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
static int cmd_scale(int argc, char **argv)
{
	uint64_t a[6];
	double v;
	int i, ok;

	if (argc != 8)
		return -1;
	for (i = 0; i < 6; i++)
		a[i] = strtoull(argv[i + 2], NULL, 0);
	v = pmu_scale(a[0], a[1], a[2], a[3], a[4], a[5], &ok);
	printf("%.1f %d\n", v, ok);
	return 0;
}

/*
 * pagecheck: the page-size verdict on a mapping of BYTES on BACKING of
 * which smaps said KERNEL_PAGE_KB and ANON_HUGE_KB: "ok PAGE_KB", or
 * "refused WHY" and exit 1 (what a kernel here never does, fed by hand)
 */
static int cmd_pagecheck(int argc, char **argv)
{
	const struct backing *b;
	unsigned long kb;
	char why[300];

	if (argc != 6)
		return -1;
	b = backing_find(argv[2]);
	if (!b) {
		fprintf(stderr, "benchtool: no backing %s\n", argv[2]);
		return 1;
	}
	if (backing_page_verdict(b, strtoull(argv[3], NULL, 0),
				 strtoul(argv[4], NULL, 0),
				 strtoul(argv[5], NULL, 0), &kb, why,
				 sizeof(why))) {
		printf("refused %s\n", why);
		return 1;
	}
	printf("ok %lu\n", kb);
	return 0;
}

/*
 * llc: {"llc_bytes": N, "level": L, "source": S, "caches": K, "plan":
 * [CPU...]}: the caches streamk's threads use, summed (llc.h's
 * llc_plan()), or why on stderr, exit 1.  The CPUs: --cpus LIST, or
 * --cpu N alone; else those this process may use, or with --sysfs the
 * tree's online list (cpu0 where it has none).  The threads: --threads N,
 * else OMP_NUM_THREADS, else one per CPU, as OpenMP's default.
 */
static int cmd_llc(int argc, char **argv)
{
	const char *root = NULL, *list = NULL, *omp = getenv("OMP_NUM_THREADS");
	int i, t, threads = 0, use_cpuid = 1, *plan;
	char why[400], online[4096];
	cpu_set_t cpus;
	struct llc l;

	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--sysfs") && i + 1 < argc)
			root = argv[++i];
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			list = argv[++i];
		else if (!strcmp(argv[i], "--cpus") && i + 1 < argc)
			list = argv[++i];
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--no-cpuid"))
			use_cpuid = 0;
		else
			return -1;
	}
	if (!list && root) {
		snprintf(why, sizeof(why), "%s/sys/devices/system/cpu/online",
			 root);
		if (host_read_line(why, online, sizeof(online)))
			snprintf(online, sizeof(online), "0");
		list = online;
	}
	if (list ? pmu_parse_cpulist(list, &cpus) :
	    sched_getaffinity(0, sizeof(cpus), &cpus))
		return -1;
	if (!threads)
		threads = omp && atoi(omp) > 0 ? atoi(omp) : CPU_COUNT(&cpus);
	plan = calloc(threads > 0 ? threads : 1, sizeof(int));
	if (!plan || llc_plan(root, &cpus, threads, use_cpuid, plan, &l, why,
			      sizeof(why))) {
		fprintf(stderr, "benchtool: %s\n", plan ? why : "out of memory");
		free(plan);
		return 1;
	}
	printf("{\"llc_bytes\": %llu, \"level\": %d, \"source\": \"%s\", "
	       "\"caches\": %d, \"plan\": [", l.bytes, l.level, l.source,
	       l.caches);
	for (t = 0; t < threads; t++)
		printf("%s%d", t ? ", " : "", plan[t]);
	printf("]}\n");
	free(plan);
	return 0;
}

/*
 * tlbwalks: what the TLB model says of a random pointer chase over
 * WSS_BYTES with one element per HOP_BYTES (64, chase's default --hop
 * line; 4096, --hop page) on PAGE_KB pages, without a working set.
 *
 * The order is chase.c's cycle at the runner's default --seed 1:
 * Sattolo's shuffle with the same generator, element i pointing at a[i],
 * the chase starting at element 0.  chase.c cannot lend its
 * build_cycle(): that shuffles inside the mapped working set itself, so
 * this rebuilds the order in an index array (4 bytes per element);
 * tests/bench/test_tlbwalks.py checks it against the chase binary's
 * model columns.
 */
static uint32_t *chase_order(uint32_t n)
{
	const uint64_t seed = 1;
	uint64_t s = seed * 0x100000001b3ULL + n;
	uint32_t *a = malloc((size_t)n * sizeof(*a)), i, j, t;

	for (i = 0; a && i < n; i++)
		a[i] = i;
	for (i = n - 1; a && i > 0; i--) {
		j = mix64(s += 0x9e3779b97f4a7c15ULL) % i;
		t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
	return a;
}

/* a whole decimal argument, or -1 with why on stderr */
static int tlbwalks_arg(const char *s, const char *what,
			unsigned long long *v)
{
	char *end;

	*v = strtoull(s, &end, 10);
	if (*s >= '0' && *s <= '9' && !*end)
		return 0;
	fprintf(stderr, "benchtool tlbwalks: %s '%s' is not a whole number; "
		"give it in decimal, e.g. 1073741824 for 1 GB\n", what, s);
	return -1;
}

/*
 * Replays one full cycle to warm the model, then counts the next.
 * Addresses are offsets from 1 TB, aligned to every page size, as in
 * chase.c; chase's in-page line for --hop page changes no page number, so
 * it is left out.
 */
static int cmd_tlbwalks(int argc, char **argv)
{
	unsigned long long wss, kb, hop = LINE, n = 0, k;
	struct tlb_model m;
	uint32_t *a, p = 0;
	int i, pass, rc = 0;

	if (argc != 5 && argc != 6)
		return -1;
	if (tlbwalks_arg(argv[3], "WSS_BYTES", &wss) ||
	    tlbwalks_arg(argv[4], "PAGE_KB", &kb) ||
	    (argc == 6 && tlbwalks_arg(argv[5], "HOP_BYTES", &hop)))
		return 1;
	for (i = 0; i < TLB_NSIZES && tlb_page_kb[i] != kb; i++)
		;
	if (i == TLB_NSIZES) {
		fprintf(stderr, "benchtool tlbwalks: PAGE_KB %llu is not a "
			"page size of the model; give 4, 64, 2048, 32768, "
			"524288 or 1048576\n", kb);
		return 1;
	}
	if (hop)
		n = wss / hop;
	if (n < 2 || n > UINT32_MAX) {
		fprintf(stderr, "benchtool tlbwalks: WSS_BYTES / HOP_BYTES is "
			"%llu hops; give sizes with 2 to 2^32-1 hops in the "
			"working set\n", n);
		return 1;
	}
	if (tlb_init_host(&m, argv[2])) {
		fprintf(stderr, "benchtool: bad TLB spec '%s'\n", argv[2]);
		return 1;
	}
	a = chase_order(n);
	for (pass = 0; a && pass < 2; pass++) {
		tlb_reset_counts(&m);
		for (k = 0; k < n; k++, p = a[p])
			tlb_access(&m, (1ULL << 40) + p * hop, kb);
	}
	if (a) {
		printf("model %s: walks_per_1k %.3f l1_misses_per_1k %.3f "
		       "accesses %llu (the TLB model, not measured)\n", argv[2],
		       1000.0 * m.walks / m.accesses,
		       1000.0 * m.l1_misses / m.accesses,
		       (unsigned long long)m.accesses);
	} else {
		fprintf(stderr, "benchtool tlbwalks: no memory for %llu hops; "
			"give a larger HOP_BYTES\n", n);
		rc = 1;
	}
	free(a);
	tlb_free(&m);
	return rc;
}

/* one chain's lines in over-full sets (more lines than ways), and its max */
static void reach_summary(const char *name, const unsigned *per, size_t sets,
			  unsigned ways, size_t n)
{
	size_t s, over = 0;
	unsigned max = 0;

	for (s = 0; s < sets; s++) {
		if (per[s] > ways)
			over += per[s];
		if (per[s] > max)
			max = per[s];
	}
	printf("%s chain: %zu lines, %zu (%.1f %%) in over-full sets, at most "
	       "%u in a set\n", name, n, over, 100.0 * over / n, max);
}

/*
 * tlbreach's chains against an L1D's sets: lines per set of the page
 * chain and the line chain, then one summary line each.  The set of a
 * line is its address bits above the line offset modulo the sets, as in
 * a virtually indexed L1D (set bits inside the 4 KB page offset).
 */
static int cmd_reachlayout(int argc, char **argv)
{
	unsigned long long n, unit, l1d, ways, seed = 1;
	size_t sets, i, s;
	unsigned *per[2];
	uint64_t key;
	int c;

	if (argc != 6 && argc != 7)
		return -1;
	if (tlbwalks_arg(argv[2], "N", &n) ||
	    tlbwalks_arg(argv[3], "UNIT", &unit) ||
	    tlbwalks_arg(argv[4], "L1D_BYTES", &l1d) ||
	    tlbwalks_arg(argv[5], "WAYS", &ways) ||
	    (argc == 7 && tlbwalks_arg(argv[6], "SEED", &seed)))
		return 1;
	if (n < 1 || unit < 2 * LINE || (unit & (unit - 1)) || !ways ||
	    l1d % (ways * LINE) || !l1d) {
		fprintf(stderr, "benchtool reachlayout: give N >= 1, UNIT a power "
			"of two >= %d and L1D_BYTES a multiple of WAYS x %d\n",
			2 * LINE, LINE);
		return 1;
	}
	sets = l1d / (ways * LINE);
	per[0] = calloc(sets, sizeof(unsigned));
	per[1] = calloc(sets, sizeof(unsigned));
	if (!per[0] || !per[1]) {
		free(per[0]);
		free(per[1]);
		return 1;
	}
	key = page_line_key(seed);
	for (c = 0; c < 2; c++)
		for (i = 0; i < n; i++)
			per[c][tlbreach_elem_off(i, !c, unit, key) / LINE %
			       sets]++;
	printf("# set page_chain_lines line_chain_lines (L1D %llu B, %llu-way, "
	       "%zu sets of %d B lines)\n", l1d, ways, sets, LINE);
	for (s = 0; s < sets; s++)
		printf("%zu %u %u\n", s, per[0][s], per[1][s]);
	reach_summary("page", per[0], sets, ways, n);
	reach_summary("line", per[1], sets, ways, n);
	free(per[0]);
	free(per[1]);
	return 0;
}

/* --model auto as the chase resolves it on the CPU it would pin to */
static const char *auto_model(char *why, size_t n)
{
	const struct pmu_model *pm = NULL;
	struct pmu_choice ch;
	char id[128], cpu[200], w[256];
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		CPU_ZERO(&set);
	pmu_pick_cpu("/sys", &set, -1, &ch);
	if (!pmu_host_cpuid(id, sizeof(id)))
		pm = pmu_model_find(id, w, sizeof(w));
	else
		snprintf(id, sizeof(id), "an unidentified CPU");
	snprintf(cpu, sizeof(cpu), "%s (perf model %s, PMU %s)", id,
		 pm ? pm->model : "none", ch.pmu);
	return tlb_auto_model(pm ? pmu_preset(pm, ch.pmu) : NULL, cpu, why, n);
}

static int cmd_tlbgeometry(int argc, char **argv)
{
	const char *model = "auto";
	char why[600], buf[16384];
	struct cpuid_leaves c;
	int i;

	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--model") && i + 1 < argc) {
			model = argv[++i];
		} else if (!strcmp(argv[i], "--dump") && argc == 3) {
			if (cpuid_load(&c, why, sizeof(why)))
				return fprintf(stderr, "benchtool: %s\n", why), 1;
			cpuid_dump(&c);
			return 0;
		} else {
			return -1;
		}
	}
	if (!strcmp(model, "auto")) {
		model = auto_model(why, sizeof(why));
	} else if (tlb_use_check(model, why, sizeof(why))) {
		fprintf(stderr, "benchtool: %s\n", why);
		return 1;
	} else {
		snprintf(why, sizeof(why), "--model %s", model);
	}
	if (tlb_report_json(model, why, buf, sizeof(buf)))
		return fprintf(stderr, "benchtool: report too long\n"), 1;
	printf("%s\n", buf);
	return 0;
}

/* argv[2] is the benchmark, and stands for its binary's argv[0] */
static int cmd_check(int argc, char **argv)
{
	int i;

	if (argc < 3)
		return -1;
	for (i = 0; i < bench_count(); i++)
		if (!strcmp(bench_at(i)->name, argv[2]))
			return runner_check(bench_at(i), argc - 2, argv + 2);
	fprintf(stderr, "benchtool: no benchmark '%s' (benchtool contract "
		"lists them)\n", argv[2]);
	return 64;
}

static int cmd_sizes(int argc, char **argv)
{
	return argc == 3 ? runner_sizes(argv[2]) : -1;
}

/* each size by size.h's one rule: its bytes, or "refused"; 1 if any was */
static int cmd_size(int argc, char **argv)
{
	unsigned long long v;
	int i, rc = 0;

	if (argc < 3)
		return -1;
	for (i = 2; i < argc; i++) {
		if (size_parse(argv[i], &v)) {
			printf("refused\n");
			rc = 1;
		} else {
			printf("%llu\n", v);
		}
	}
	return rc;
}

/* a /proc/meminfo field of the tree under ROOT, in kB (-1: none) */
static int cmd_meminfo(int argc, char **argv)
{
	if (argc != 4)
		return -1;
	printf("%ld\n", host_meminfo_kb(argv[2], argv[3]));
	return 0;
}

/* the pages a mapping can take from a pool of the tree under ROOT */
static int cmd_poolfree(int argc, char **argv)
{
	char *end;
	unsigned long kb;
	long node = -1;

	if (argc != 4 && argc != 5)
		return -1;
	kb = strtoul(argv[3], &end, 10);
	if (*end || !kb)
		return -1;
	if (argc == 5) {
		node = strtol(argv[4], &end, 10);
		if (*end || node < 0)
			return -1;
	}
	printf("%ld\n", host_pool_free(argv[2], kb, node));
	return 0;
}

static const struct {
	const char *name, *usage;
	int (*fn)(int argc, char **argv);
} cmds[] = {
	{ "contract", "contract", cmd_contract },
	{ "stats", "stats V...", cmd_stats },
	{ "tlb", "tlb SPEC < trace", cmd_tlb },
	{ "presets", "presets", cmd_presets },
	{ "layout", "layout PAGES [SEED]", cmd_layout },
	{ "mlp", "mlp WSS CHAINS STRIDE GROUP [SEED [STEPS]]", cmd_mlp },
	{ "geometry", "geometry SPEC|PRESET", cmd_geometry },
	{ "events", "events [--cpuid VENDOR-FAMILY-MODEL[-STEPPING]]",
	  cmd_events },
	{ "pickcpu", "pickcpu --sysfs ROOT --allowed CPULIST [--cpu N]",
	  cmd_pickcpu },
	{ "scale", "scale V0 V1 E0 E1 R0 R1", cmd_scale },
	{ "pagecheck", "pagecheck BACKING BYTES KERNEL_PAGE_KB ANON_HUGE_KB",
	  cmd_pagecheck },
	{ "llc", "llc [--sysfs ROOT] [--cpu N|--cpus LIST] [--threads N] "
	  "[--no-cpuid]", cmd_llc },
	{ "tlbwalks", "tlbwalks PRESET WSS_BYTES PAGE_KB [HOP_BYTES]",
	  cmd_tlbwalks },
	{ "reachlayout", "reachlayout N UNIT L1D_BYTES WAYS [SEED]",
	  cmd_reachlayout },
	{ "check", "check BENCH [OPTION...]", cmd_check },
	{ "sizes", "sizes LIST", cmd_sizes },
	{ "size", "size SIZE...", cmd_size },
	{ "meminfo", "meminfo ROOT KEY", cmd_meminfo },
	{ "poolfree", "poolfree ROOT PAGE_KB [NODE]", cmd_poolfree },
	{ "tlbgeometry", "tlbgeometry [--model auto|cpuid|PRESET|SPEC] "
	  "[--dump]", cmd_tlbgeometry },
};

int main(int argc, char **argv)
{
	size_t i;
	int rc;

	for (i = 0; argc >= 2 && i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		rc = cmds[i].fn(argc, argv);
		if (rc >= 0)
			return rc;
		fprintf(stderr, "usage: benchtool %s\n", cmds[i].usage);
		return 64;
	}
	fprintf(stderr, "usage: benchtool COMMAND, one of:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(stderr, "  benchtool %s\n", cmds[i].usage);
	return 64;
}
