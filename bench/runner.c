// SPDX-License-Identifier: GPL-2.0
/*
 * runner.c - the shared runner: options, method (ASLR off, pinning, timer
 * check), the loop over sizes, repetitions and backings, and metadata; the
 * rows go out through bench/rows.c.  See runner.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "hostfacts.h"
#include "numa.h"
#include "runner.h"
#include "size.h"

#define MAX_OPTS 32

/* the registry BENCH_REGISTER() fills; the linker provides the bounds */
extern const struct bench *const __start_bench_registry[];
extern const struct bench *const __stop_bench_registry[];

static const struct bench *cur;	/* the benchmark this binary runs */
static double timer_res_ns, timer_getres_ns;

int bench_count(void)
{
	return __stop_bench_registry - __start_bench_registry;
}

const struct bench *bench_at(int i)
{
	return __start_bench_registry[i];
}

struct row_table bench_table(const struct bench *b, char *src, size_t n)
{
	snprintf(src, n, "bench/%s.c", b->name);
	return (struct row_table){ b->name, b->columns, b->values_of,
				   b->values, src };
}

/* -- time ---------------------------------------------------------------- */

double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* the smallest step the clock shows, measured, and what clock_getres says */
static void check_timer(void)
{
	struct timespec r;
	double best = 1e18;
	int i;

	clock_getres(CLOCK_MONOTONIC, &r);
	timer_getres_ns = r.tv_sec * 1e9 + r.tv_nsec;
	for (i = 0; i < 2000; i++) {
		double a = now_ns(), b;

		while ((b = now_ns()) == a)
			;
		if (b - a < best)
			best = b - a;
	}
	/*
	 * The step readings show is what limits a measurement; clock_getres
	 * reports the tick when high-resolution timers are off even though
	 * the clocksource reads in ns, so it is only recorded.
	 */
	timer_res_ns = best;
}

void check_duration(double ns)
{
	static int warned;

	/* under 1000 clock steps the quantisation error exceeds 0.1 % */
	if (!warned && ns < 1000 * timer_res_ns) {
		warned = 1;
		progress("warning: a repetition took %.0f ns, under 1000x the "
			 "timer resolution (%.0f ns)", ns, timer_res_ns);
	}
}

/* -- output ---------------------------------------------------------------- */

static void emit_backing_meta(const struct backing *b, const char *status,
			      const char *reason, unsigned long page_kb)
{
	char esc[600];

	json_str(esc, sizeof(esc), reason ? reason : "");
	printf("@meta backing {\"name\": \"%s\", \"bench\": \"%s\", "
	       "\"status\": \"%s\", \"reason\": %s, \"page_kb\": %lu, "
	       "\"promised_kb\": %lu}\n", b->name, cur->name, status,
	       esc, page_kb, b->page_kb);
	fflush(stdout);
}

/* -- options --------------------------------------------------------------- */

static struct run_opts opts = { .reps = 5, .warmup = 1, .warm_pass = 1,
				.seed = 1, .cpu = -1 };
static const char *sizes_arg;
static const char *const numa_modes[] = { "local", "off", NULL };
static int numa_mode;		/* index into numa_modes */
static int numa_node = -1;	/* the pinned CPU's node; -1: unknown */
static size_t sweep_min = 16 << 10, sweep_max = 64 << 20;

const struct bench_opt runner_opts[] = {
	{ .name = "sizes", .arg = "LIST", .kind = OPT_STR, .dst = &sizes_arg,
	  .help = "working sets, e.g. 16K,6M,1G (default: a sweep from "
	  "--min to --max)" },
	{ .name = "min", .arg = "SIZE", .kind = OPT_SIZE, .dst = &sweep_min,
	  .help = "lowest size of the sweep (16K)", .min = 4096 },
	{ .name = "max", .arg = "SIZE", .kind = OPT_SIZE, .dst = &sweep_max,
	  .help = "highest size of the sweep (64M)", .min = 4096 },
	{ .name = "reps", .arg = "N", .kind = OPT_INT, .dst = &opts.reps,
	  .help = "timed repetitions (5); median, min, max, cv reported",
	  .min = 1 },
	{ .name = "warmup", .arg = "N", .kind = OPT_INT, .dst = &opts.warmup,
	  .help = "untimed repetitions first (1)" },
	{ .name = "warm-pass", .arg = "N", .kind = OPT_INT,
	  .dst = &opts.warm_pass,
	  .help = "untimed passes of each backing right before each of its "
	  "timed repetitions (1)" },
	{ .name = "seed", .arg = "N", .kind = OPT_COUNT, .dst = &opts.seed,
	  .help = "seed of every random order and layout (1)" },
	{ .name = "cpu", .arg = "N", .kind = OPT_INT, .dst = &opts.cpu,
	  .help = "CPU to pin to (default: the last one allowed; a P-core on "
	  "hybrid Intel parts)" },
	{ .name = "backings", .arg = "LIST", .kind = OPT_STR,
	  .dst = &opts.backings,
	  .help = "comma list of backings, the order of the first round "
	  "(default: all, in table order); later rounds follow a Williams "
	  "design" },
	{ .name = "mem-budget", .arg = "SIZE", .kind = OPT_SIZE,
	  .dst = &opts.mem_budget, .min = 4096,
	  .help = "memory outside the hugetlb pools the backings may map at "
	  "once to be interleaved (3/4 of MemAvailable)" },
	{ .name = "numa", .arg = "local|off", .kind = OPT_CHOICE,
	  .dst = &numa_mode, .choices = numa_modes,
	  .help = "local: bind every mapping to the pinned CPU's node "
	  "(mbind, before it is touched), but a benchmark's whose threads "
	  "touch it first (streamk); off: the default policy (local)" },
	{ .name = "verbose", .kind = OPT_FLAG, .dst = &opts.verbose,
	  .help = "more progress (also -v): a line per timed repetition" },
	{ 0 },
};

static int parse_int(const char *s, long long *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 10);
	return end == s || *end || errno || *v > 1 << 30 ? -1 : 0;
}

static int set_choice(const struct bench_opt *op, const char *val)
{
	int i;

	for (i = 0; op->choices[i]; i++)
		if (!strcmp(op->choices[i], val)) {
			*(int *)op->dst = i;
			return 0;
		}
	return -1;
}

/* parses val into op->dst; 0, or -1 with why */
static int opt_set(const struct bench_opt *op, const char *val, char *why,
		   size_t n)
{
	unsigned long long u;
	long long i;

	switch (op->kind) {
	case OPT_SIZE:
	case OPT_COUNT:
		if (size_parse(val, &u) || (long long)u < op->min)
			break;
		if (op->kind == OPT_SIZE)
			*(size_t *)op->dst = u;
		else
			*(uint64_t *)op->dst = u;
		return 0;
	case OPT_INT:
		if (parse_int(val, &i) || i < op->min)
			break;
		*(int *)op->dst = i;
		return 0;
	case OPT_STR:
		if (!*val)
			break;
		*(const char **)op->dst = val;
		return 0;
	case OPT_CHOICE:
		if (set_choice(op, val))
			break;
		return 0;
	case OPT_FLAG:
		(*(int *)op->dst)++;
		return 0;
	}
	snprintf(why, n, "--%s: '%s' is not a valid %s", op->name, val,
		 op->arg);
	if (op->kind == OPT_SIZE || op->kind == OPT_COUNT)
		snprintf(why + strlen(why), n - strlen(why), " (a number with "
			 "an optional K, M or G suffix, at least %lld)", op->min);
	else if (op->kind == OPT_INT)
		snprintf(why + strlen(why), n - strlen(why), " (an integer, at "
			 "least %lld)", op->min);
	return -1;
}

static void usage_table(FILE *f, const char *title,
			const struct bench_opt *t)
{
	char lhs[64];

	fprintf(f, "%s:\n", title);
	for (; t && t->name; t++) {
		snprintf(lhs, sizeof(lhs), "--%s%s%s", t->name,
			 t->arg ? " " : "", t->arg ? t->arg : "");
		fprintf(f, "  %-24s %s\n", lhs, t->help);
	}
}

static void usage(FILE *f)
{
	char title[64];
	int i;

	fprintf(f, "usage: %s [options]    (%s)\n", cur->name, cur->desc);
	usage_table(f, "runner options", runner_opts);
	snprintf(title, sizeof(title), "%s options", cur->name);
	if (cur->opts && cur->opts->name)
		usage_table(f, title, cur->opts);
	fprintf(f, "backings:");
	for (i = 0; i < nbackings; i++)
		fprintf(f, " %s", backings[i].name);
	fprintf(f, "\n");
}

static void die_usage(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
static void die_usage(const char *fmt, ...)
{
	va_list ap;

	/* no benchmark: benchtool sizes, for bench/run.py's own --sizes */
	fprintf(stderr, "%s: ", cur ? cur->name : "benchtool");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (cur)
		fprintf(stderr, "\n(%s --help lists the options)", cur->name);
	fprintf(stderr, "\n");
	exit(64);
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

static void add_size(struct run_opts *o, size_t s)
{
	int i;

	s = (s + 4095) & ~(size_t)4095;	/* whole 4 KB pages */
	for (i = 0; i < o->nsizes; i++)
		if (o->sizes[i] == s)
			return;
	if (o->nsizes < MAX_SIZES)
		o->sizes[o->nsizes++] = s;
}

/*
 * The sweep: powers of two and the points halfway between them (x1.5),
 * plus points at 3/4, 1 and 5/4 of each TLB reach (entries x page size):
 * 4K pages: L1 64 x 4K = 256K, STLB 1536 x 4K = 6M (Skylake), 2048 x 4K =
 * 8M (Zen 2/3); 2M pages: L1 32 x 2M = 64M (Skylake), 64 x 2M = 128M (Zen),
 * STLB 1536 x 2M = 3G.
 */
static void make_sweep(struct run_opts *o, size_t lo, size_t hi)
{
	static const double knees[] = { 256 << 10, 6 << 20, 8 << 20,
					64 << 20, 128 << 20, 3.0 * (1 << 30) };
	size_t s;
	unsigned i, k;

	for (s = 4096; s <= hi; s *= 2) {
		if (s >= lo)
			add_size(o, s);
		if (s + s / 2 >= lo && s + s / 2 <= hi)
			add_size(o, s + s / 2);
	}
	for (i = 0; i < sizeof(knees) / sizeof(knees[0]); i++)
		for (k = 3; k <= 5; k++) {
			size_t v = (size_t)(knees[i] * k / 4);

			if (v >= lo && v <= hi)
				add_size(o, v);
		}
}

/*
 * A comma list of sizes; an empty item (",," or a comma at either end) is
 * refused rather than skipped: it is a typo, and a list that says less
 * than was typed would measure less than was meant.
 */
static void parse_sizes(struct run_opts *o, const char *list)
{
	char *copy = strdup(list), *rest = copy, *t;
	unsigned long long v;

	while ((t = strsep(&rest, ","))) {
		if (!*t)
			die_usage("--sizes: '%s' has an empty item (two commas "
				  "in a row, or one at either end): list sizes "
				  "as 16K,1M", list);
		if (size_parse(t, &v))
			die_usage("--sizes: '%s' is not a size: give a positive "
				  "number of bytes, optionally with a K, M or G "
				  "suffix (e.g. 64K, 6M, 1G)", t);
		if (!v)
			die_usage("--sizes: '%s' is no working set: give a "
				  "size above 0 (e.g. 4K)", t);
		add_size(o, v);
	}
	free(copy);
}

static void check_backings(const char *list)
{
	char *copy = strdup(list), *t, *save = NULL;

	char seen[nbackings];

	memset(seen, 0, sizeof(seen));
	for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const struct backing *b = backing_find(t);

		if (!b)
			die_usage("--backings: no backing '%s' (the backings "
				  "are listed under --help)", t);
		if (seen[b - backings]++)
			die_usage("--backings: '%s' is listed twice", t);
	}
	free(copy);
}

/* the runner's options, then the benchmark's, as getopt_long() takes them */
static int option_table(struct option *lo, const struct bench_opt **map)
{
	const struct bench_opt *tabs[2] = { runner_opts, cur->opts };
	const struct bench_opt *t;
	int n = 0, k;

	for (k = 0; k < 2; k++)
		for (t = tabs[k]; t && t->name && n < MAX_OPTS - 2; t++) {
			lo[n] = (struct option){ t->name, t->kind == OPT_FLAG ?
						 no_argument : required_argument,
						 NULL, 256 + n };
			map[n++] = t;
		}
	lo[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n] = (struct option){ 0 };
	return n;
}

static void parse_opts(int argc, char **argv)
{
	struct option lo[MAX_OPTS];
	const struct bench_opt *map[MAX_OPTS];
	char why[300];
	int ch;

	option_table(lo, map);
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":vh", lo, NULL)) != -1) {
		if (ch >= 256 && opt_set(map[ch - 256], optarg, why,
					 sizeof(why)))
			die_usage("%s", why);
		else if (ch == 'v')
			opts.verbose++;
		else if (ch == 'h')
			usage(stdout), exit(0);
		else if (ch == ':')
			die_usage("%s needs a value", argv[optind - 1]);
		else if (ch == '?')
			die_usage("unknown option '%s'", argv[optind - 1]);
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (opts.backings)
		check_backings(opts.backings);
	if (cur->check && cur->check(why, sizeof(why)))
		die_usage("%s", why);
	if (cur->tlb && tlb_use_check(cur->tlb->model, why, sizeof(why)))
		die_usage("%s", why);
	if (sizes_arg)
		parse_sizes(&opts, sizes_arg);
	else if (sweep_min > sweep_max)
		die_usage("--min %zu is above --max %zu", sweep_min, sweep_max);
	else
		make_sweep(&opts, sweep_min, sweep_max);
	qsort(opts.sizes, opts.nsizes, sizeof(opts.sizes[0]), cmp_size);
	if (!opts.nsizes)
		die_usage("no working-set size between --min and --max");
}

/* pins to o->cpu, or to a CPU the counters can count on (counters.h) */
static void pin(struct run_opts *o)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set)) {
		o->cpu = -1;
		return;
	}
	o->cpu = counters_pick_cpu(&set, o->cpu);
	CPU_ZERO(&set);
	CPU_SET(o->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		progress("warning: cannot pin to CPU %d: %s", o->cpu,
			 strerror(errno));
		o->cpu = -1;
	}
	numa_node = o->cpu < 0 ? -1 : numa_node_of_cpu(NULL, o->cpu);
}
/*
 * The CPU's name from /proc/cpuinfo: x86's "model name"; arm64 has none,
 * so its "CPU implementer" and "CPU part" (the MIDR fields) stand for it.
 */
static void cpu_model(char *model, size_t n)
{
	char line[512], impl[32] = "", part[32] = "";
	FILE *f = fopen("/proc/cpuinfo", "r");

	model[0] = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model name", 10)) {
			snprintf(model, n, "%s", strchr(line, ':') + 2);
			model[strcspn(model, "\n")] = 0;
			break;
		}
		if (!impl[0])
			sscanf(line, "CPU implementer : %31s", impl);
		if (!part[0])
			sscanf(line, "CPU part : %31s", part);
	}
	if (f)
		fclose(f);
	if (!model[0] && impl[0] && part[0])
		snprintf(model, n, "CPU implementer %s part %s", impl, part);
}

static void emit_env_meta(void)
{
	struct utsname u;
	char esc[3][300], model[256];
	const char *s = getenv("HUGETLB_SERIES");

	cpu_model(model, sizeof(model));
	uname(&u);
	json_str(esc[0], sizeof(esc[0]), u.release);
	json_str(esc[1], sizeof(esc[1]), model);
	json_str(esc[2], sizeof(esc[2]), s ? s : "");
	printf("@meta env {\"kernel\": %s, \"cpu\": %s, \"series_id\": %s, "
	       "\"accel\": \"%s\", \"icount\": \"%s\"}\n", esc[0], esc[1],
	       s ? esc[2] : "null",
	       getenv("HUGETLB_ACCEL") ? getenv("HUGETLB_ACCEL") : "",
	       getenv("HUGETLB_ICOUNT") ? getenv("HUGETLB_ICOUNT") : "");
}

/* the benchmark's own options, as more members of @meta method */
static void emit_bench_opts(void)
{
	const struct bench_opt *t;
	char key[64], esc[300];
	size_t i;

	for (t = cur->opts; t && t->name; t++) {
		for (i = 0; t->name[i] && i < sizeof(key) - 1; i++)
			key[i] = t->name[i] == '-' ? '_' : t->name[i];
		key[i] = 0;
		printf(", \"%s\": ", key);
		switch (t->kind) {
		case OPT_SIZE:
			printf("%zu", *(size_t *)t->dst);
			break;
		case OPT_COUNT:
			printf("%llu", (unsigned long long)*(uint64_t *)t->dst);
			break;
		case OPT_INT:
		case OPT_FLAG:
			printf("%d", *(int *)t->dst);
			break;
		case OPT_STR:
		case OPT_CHOICE:
			json_str(esc, sizeof(esc), t->kind == OPT_STR ?
				 *(const char **)t->dst :
				 t->choices[*(int *)t->dst]);
			printf("%s", esc);
			break;
		}
	}
}

static void emit_method_meta(int aslr_off)
{
	printf("@meta method {\"bench\": \"%s\", \"warmup\": %d, "
	       "\"warm_pass\": %d, \"reps\": %d, "
	       "\"seed\": %llu, \"aslr_off\": %s, \"cpu_pinned\": %d, "
	       "\"timer_resolution_ns\": %.1f, \"timer_getres_ns\": %.1f, "
	       "\"clock\": \"CLOCK_MONOTONIC\", \"numa\": \"%s\", "
	       "\"numa_node\": %d", cur->name, opts.warmup,
	       opts.warm_pass, opts.reps, (unsigned long long)opts.seed,
	       aslr_off ? "true" : "false", opts.cpu, timer_res_ns,
	       timer_getres_ns, numa_modes[numa_mode], numa_node);
	emit_bench_opts();
	printf("}\n");
}

/* -- the order of the backings in a round --------------------------------- */

int order_rows(int n)
{
	return n % 2 ? 2 * n : n;
}

/*
 * Row `row` of a Williams design for n backings: out[i] is the index (in
 * the given order) of the backing measured i-th.  Its first row is
 * 0, 1, n-1, 2, n-2, ...; row j adds j to each label (mod n); for odd n
 * the rows n..2n-1 are rows 0..n-1 reversed.  Over any order_rows(n)
 * consecutive rows each backing takes each position equally often and
 * follows each other backing equally often (once for even n, twice for
 * odd).  The labels are renamed so that row 0 is the given order.
 */
void order_row(int n, uint64_t row, int *out)
{
	int first[n], name[n], i, j = row % order_rows(n) % n;
	int rev = row % order_rows(n) >= (uint64_t)n;

	for (i = 0; i < n; i++) {
		first[i] = i % 2 ? (i + 1) / 2 : (n - i / 2) % n;
		name[first[i]] = i;
	}
	for (i = 0; i < n; i++)
		out[rev ? n - 1 - i : i] = name[(first[i] + j) % n];
}

/* -- the loop ---------------------------------------------------------------- */

/* one selected, available backing: its context, mapping and point state */
struct slot {
	struct bench_ctx x;
	struct mapping m;
	void *st;
	int failed;
};

static struct slot *slots;
static int nslots;
static uint64_t rounds;	/* timed rounds so far: the next design row */

static void slot_failed(struct slot *s, const char *why)
{
	emit_error("%s", why);
	emit_backing_meta(s->x.b, "failed", why, s->x.page_kb);
	s->failed = 1;
}

/* "@meta numa": where the kernel put the pages of s's mapping */
static void emit_numa_meta(const struct slot *s)
{
	char place[1024];

	numa_placement(s->m.addr, place, sizeof(place));
	printf("@meta numa {\"bench\": \"%s\", \"backing\": \"%s\", "
	       "\"bytes\": %zu, \"bound_to\": %d, %s}\n", cur->name,
	       s->x.b->name, s->m.len, numa_mode || cur->touch ? -1 :
	       numa_node, place);
}

/*
 * Maps s at size, binds it to the pinned CPU's node (--numa local, where
 * the kernel shows nodes, unless the benchmark touches it itself),
 * touches it and verifies its page size; 0 or -1.
 */
static int slot_map(struct slot *s, size_t size)
{
	char why[512];

	if (backing_map(s->x.b, size, 0, &s->m, why, sizeof(why))) {
		slot_failed(s, why);
		return -1;
	}
	if (!numa_mode && numa_node >= 0 && !cur->touch &&
	    numa_bind(s->m.addr, s->m.len, numa_node, why, sizeof(why))) {
		backing_unmap(&s->m);
		slot_failed(s, why);
		return -1;
	}
	/* fault the working sets in (a 1 GB page is cleared whole) */
	if (cur->touch)
		cur->touch(&s->x, s->m.addr, size);
	else
		memset(s->m.addr, 0, size);
	if (backing_verify(&s->m, &s->x.page_kb, why, sizeof(why))) {
		backing_unmap(&s->m);
		slot_failed(s, why);
		return -1;
	}
	emit_numa_meta(s);
	s->x.m = &s->m;
	return 0;
}

static void slot_unmap(struct slot *s)
{
	if (s->x.m)
		backing_unmap(&s->m);
	s->x.m = NULL;
}

static void add_slot(const struct backing *b, struct counters *c)
{
	char why[512];

	if (backing_available(b, why, sizeof(why))) {
		progress("skip %s: %s", b->name, why);
		emit_backing_meta(b, "skipped", why, 0);
		return;
	}
	slots[nslots++].x = (struct bench_ctx){ .o = &opts, .c = c, .b = b };
}

/*
 * The selected backings that are available, in the order --backings
 * gives (check_backings() has checked every name), else in table order.
 */
static void select_backings(struct counters *c)
{
	char *copy = opts.backings ? strdup(opts.backings) : NULL, *t, *save;
	int i;

	slots = calloc(nbackings, sizeof(*slots));
	if (!slots || (opts.backings && !copy)) {
		fprintf(stderr, "%s: out of memory\n", cur->name);
		exit(70);
	}
	if (!copy)
		for (i = 0; i < nbackings; i++)
			add_slot(&backings[i], c);
	for (t = copy ? strtok_r(copy, ",", &save) : NULL; t;
	     t = strtok_r(NULL, ",", &save))
		add_slot(backing_find(t), c);
	free(copy);
}

/* -- interleaving: the order and whether the backings fit at once --------- */

/*
 * Pages of the hugetlb pool of kb kB pages a mapping can take: free less
 * reserved, and on the node the mappings are bound to (--numa local),
 * where they must come from, when fewer are free there; -1 unknown.
 */
static long pool_free(unsigned long kb)
{
	return host_pool_free(NULL, kb, numa_mode ? -1 : numa_node);
}

/*
 * 3/4 of MemAvailable: what the mappings of one size may take at once;
 * none when it cannot be read (so nothing is interleaved on a guess)
 */
static size_t mem_budget(void)
{
	long kb;

	if (opts.mem_budget)
		return opts.mem_budget;
	kb = host_meminfo_kb(NULL, "MemAvailable");
	return kb < 0 ? 0 : (size_t)kb * 1024 / 4 * 3;
}

/*
 * Whether every live backing can be mapped at wss at once: each hugetlb
 * pool has the pages (free, less reserved), and the others' bytes fit in
 * the memory budget.  0, or -1 with why.
 */
static int all_fit(size_t wss, char *why, size_t n)
{
	unsigned long pool_kb[4] = { 0 };
	long need[4] = { 0 };
	size_t bytes = 0, budget = mem_budget();
	int i, k;

	for (i = 0; i < nslots; i++) {
		const struct backing *b = slots[i].x.b;
		size_t len = backing_len(b, wss);

		if (slots[i].failed)
			continue;
		if (!b->pool_kb) {
			bytes += len;
			continue;
		}
		for (k = 0; k < 3 && pool_kb[k] && pool_kb[k] != b->pool_kb; k++)
			;
		pool_kb[k] = b->pool_kb;
		need[k] += len / (b->pool_kb * 1024);
	}
	for (k = 0; pool_kb[k]; k++)
		if (need[k] > pool_free(pool_kb[k]))
			return snprintf(why, n, "the backings need %ld %lu kB "
					"huge pages at once, %ld are free%s",
					need[k], pool_kb[k],
					pool_free(pool_kb[k]),
					pool_free(pool_kb[k]) < 0 ? " (-1: its "
					"sysfs files are missing)" : ""), -1;
	if (bytes > budget)
		return snprintf(why, n, "the backings need %zu MB outside the "
				"hugetlb pools at once, over the budget of %zu "
				"MB (--mem-budget)", bytes >> 20, budget >> 20), -1;
	return 0;
}

/* the backings' names of round r: l in the order of design row r */
static void emit_round(struct slot **l, int n, uint64_t row)
{
	int k[n], i;

	order_row(n, row, k);
	printf("[");
	for (i = 0; i < n; i++)
		printf("%s\"%s\"", i ? ", " : "", l[k[i]]->x.b->name);
	printf("]");
}

static void emit_order_meta(struct slot **l, int n, int si, int pt,
			    const uint64_t *row, const char *reason)
{
	char esc[600];
	int i;

	json_str(esc, sizeof(esc), reason ? reason : "");
	printf("@meta order {\"bench\": \"%s\", \"wss_bytes\": %zu, "
	       "\"point\": \"%s\", \"interleaved\": %s, \"reason\": %s, "
	       "\"design\": \"williams\", \"design_rows\": %d, "
	       "\"warm_pass\": %d, \"backings\": [", cur->name, opts.sizes[si],
	       cur->points[pt], reason ? "false" : "true", esc,
	       order_rows(n), opts.warm_pass);
	for (i = 0; i < n; i++)
		printf("%s\"%s\"", i ? ", " : "", l[i]->x.b->name);
	printf("], \"rows\": [");
	for (i = 0; i < opts.reps; i++)
		printf("%s%llu", i ? ", " : "", (unsigned long long)row[i]);
	printf("], \"rounds\": [");
	for (i = 0; i < opts.reps; i++) {
		printf("%s", i ? ", " : "");
		emit_round(l, n, row[i]);
	}
	printf("]}\n");
}

/* -- the repetition hooks ---------------------------------------------------- */

/* prepare() on each backing of l; returns how many are left in l */
static int prepare_all(struct slot **l, int n, int si, int pt)
{
	int i, k = 0, rc;

	for (i = 0; i < n; i++) {
		l[i]->x.si = si;
		l[i]->x.pt = pt;
		rc = cur->prepare(&l[i]->x, &l[i]->st);
		if (rc < 0)
			slot_failed(l[i], "a measurement failed (the @error "
				    "lines before this say which)");
		else if (!rc)
			l[k++] = l[i];
	}
	return k;
}

/*
 * Repetition r (untimed when < 0) of each backing of l, in the order of
 * design row `row`; in a timed round each backing first gets opts.warm_pass
 * untimed passes of its own, right before its timed one, so that what it
 * measures does not start from the caches its predecessor left.
 */
static int one_round(struct slot **l, int n, int r, uint64_t row)
{
	int order[n], i, w, k = 0, rc;

	order_row(n, row, order);
	for (i = 0; i < n; i++) {
		struct slot *s = l[order[i]];

		if (opts.verbose && r >= 0)
			progress("rep %d %s %zu %s", r, cur->points[s->x.pt],
				 opts.sizes[s->x.si], s->x.b->name);
		for (rc = 0, w = 0; r >= 0 && !rc && w < opts.warm_pass; w++)
			rc = cur->rep(&s->x, s->st, -1);
		if (rc || cur->rep(&s->x, s->st, r)) {
			cur->finish(&s->x, s->st, 0);
			slot_failed(s, "a repetition failed (the @error lines "
				    "before this say which)");
		}
	}
	for (i = 0; i < n; i++)		/* keep the ones still measuring */
		if (!l[i]->failed)
			l[k++] = l[i];
	return k;
}

/*
 * One point at one size on the backings of l (already mapped): prepare
 * each, the warmup rounds, then the timed rounds, each in the order of the
 * next row of the Williams design (order_row(); the design goes on across
 * points), then each backing's row from its own repetitions.
 * reason: why l is one backing although more were selected, or NULL.
 */
static void run_point(struct slot **l, int n, int si, int pt,
		      const char *reason)
{
	uint64_t *rot = calloc(opts.reps, sizeof(*rot));
	int r, i;

	n = prepare_all(l, n, si, pt);
	for (i = 0; !rot && i < n; i++) {
		cur->finish(&l[i]->x, l[i]->st, 0);
		slot_failed(l[i], "out of memory for the repetitions' order");
	}
	if (!rot || !n) {
		free(rot);
		return;
	}
	/*
	 * Warmup rounds take the first timed round's order.  A backing that
	 * fails leaves the others to the design of one fewer.
	 */
	for (r = -opts.warmup; r < opts.reps && n; r++) {
		if (r >= 0)
			rot[r] = rounds % order_rows(n);
		n = one_round(l, n, r, rounds % order_rows(n));
		rounds += r >= 0;
	}
	for (i = 0; i < n; i++)
		if (cur->finish(&l[i]->x, l[i]->st, 1))
			slot_failed(l[i], "a measurement failed (the @error "
				    "lines before this say which)");
	emit_order_meta(l, n, si, pt, rot, reason);
	free(rot);
}

/* the live backings, into l; returns how many */
static int live(struct slot **l)
{
	int i, n = 0;

	for (i = 0; i < nslots; i++)
		if (!slots[i].failed)
			l[n++] = &slots[i];
	return n;
}

/*
 * Sizes up to sizes[top] with every backing mapped at once (at that size,
 * touched once) and the repetitions interleaved.
 */
static void run_interleaved(int top)
{
	struct slot *l[nslots ? nslots : 1];
	int i, n, si, pt;

	n = live(l);
	for (i = 0; i < n; i++)
		slot_map(l[i], opts.sizes[top]);
	for (si = 0; si <= top; si++) {
		if (opts.sizes[si] < cur->min_wss)
			continue;
		for (pt = 0; cur->points[pt]; pt++)
			run_point(l, live(l), si, pt, NULL);
	}
	for (i = 0; i < n; i++)
		slot_unmap(l[i]);
}

/*
 * Sizes from sizes[from] on, backing by backing, each mapped once at the
 * largest: what the runner does for benchmarks with measure() only, and
 * for sizes whose backings do not fit at once (why says so).
 */
static void run_serial(int from, const char *why)
{
	size_t top = opts.sizes[opts.nsizes - 1];
	struct slot *l[nslots ? nslots : 1];
	int i, n = live(l), si, pt;

	for (i = 0; i < n; i++) {
		struct slot *s = l[i];

		if (slot_map(s, top))
			continue;
		if (cur->maps_own)
			slot_unmap(s);
		for (si = from; si < opts.nsizes && !s->failed; si++) {
			s->x.si = si;
			if (opts.sizes[si] < cur->min_wss)
				continue;
			if (!cur->rep && cur->measure(&s->x))
				slot_failed(s, "a measurement failed (the "
					    "@error lines before this say "
					    "which)");
			for (pt = 0; cur->rep && cur->points[pt]; pt++)
				run_point(&s, 1, si, pt, why);
		}
		slot_unmap(s);
	}
}

static int run_all(struct counters *c)
{
	char why[512] = "";
	int i, top = -1, rc = 0;

	select_backings(c);
	/* the largest size at which every backing fits at once */
	while (cur->rep && top + 1 < opts.nsizes &&
	       !all_fit(opts.sizes[top + 1], why, sizeof(why)))
		top++;
	if (top >= 0)
		run_interleaved(top);
	if (top + 1 < opts.nsizes) {
		if (cur->rep)
			progress("from %zu B on, backing by backing: %s",
				 opts.sizes[top + 1], why);
		run_serial(top + 1, why);
	}
	for (i = 0; i < nslots; i++)
		if (slots[i].failed)
			rc = 2;
		else
			emit_backing_meta(slots[i].x.b, "measured", "",
					  slots[i].x.page_kb);
	free(slots);
	return rc;
}

/*
 * ASLR off, so every run places its mappings at the same virtual
 * addresses: a working set then starts at the same offset from 2 MB and
 * 1 GB boundaries (which page-table pages a 4 KB working set spans, which
 * TLB sets its pages index), so repeated runs measure the same layout.
 * Re-exec once with ADDR_NO_RANDOMIZE; returns whether it is off.  (The
 * TLB model does not depend on it: it replays canonical offsets.)
 */
static int aslr_off(char **argv)
{
	int pers = personality(0xffffffff);

	if (pers != -1 && !(pers & ADDR_NO_RANDOMIZE) &&
	    personality(pers | ADDR_NO_RANDOMIZE) != -1)
		execv("/proc/self/exe", argv);	/* falls through on error */
	pers = personality(0xffffffff);
	return pers != -1 && (pers & ADDR_NO_RANDOMIZE);
}

/*
 * benchtool check BENCH ARGS: b's options parsed as its binary parses them
 * (the same rules, messages and exit status 64), then the working sets
 * they select, in bytes, one a line.  Nothing is mapped, pinned or run:
 * bench/run.py checks a plan with it before anything is built or booted.
 */
int runner_check(const struct bench *b, int argc, char **argv)
{
	int i;

	cur = b;
	parse_opts(argc, argv);
	for (i = 0; i < opts.nsizes; i++)
		printf("%zu\n", opts.sizes[i]);
	return 0;
}

/* benchtool sizes LIST: a --sizes list by the runner's rules, as above */
int runner_sizes(const char *list)
{
	int i;

	parse_sizes(&opts, list);
	qsort(opts.sizes, opts.nsizes, sizeof(opts.sizes[0]), cmp_size);
	for (i = 0; i < opts.nsizes; i++)
		printf("%zu\n", opts.sizes[i]);
	return 0;
}

int runner_main(int argc, char **argv)
{
	static struct row_table table;
	static char src[64];
	struct counters c;
	char why[300];
	int off, rc;

	if (bench_count() != 1) {
		fprintf(stderr, "runner: built with %d benchmarks, not one\n",
			bench_count());
		return 70;
	}
	cur = bench_at(0);
	table = bench_table(cur, src, sizeof(src));
	if (rows_begin(&table, why, sizeof(why))) {
		fprintf(stderr, "runner: %s\n", why);
		return 70;
	}
	off = aslr_off(argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_opts(argc, argv);
	pin(&opts);
	check_timer();
	counters_open(&c);
	if (cur->tlb)
		tlb_use_start(cur->tlb, &c);
	if (cur->start)
		cur->start(&c);

	emit_env_meta();
	emit_method_meta(off);
	hugepages_emit_meta();
	counters_emit_meta(&c);
	if (!off)
		progress("warning: ASLR is on (personality failed)");
	progress("pinned to CPU %d, timer resolution %.0f ns, %d sizes",
		 opts.cpu, timer_res_ns, opts.nsizes);

	emit_header();
	rc = run_all(&c);
	backing_cleanup();
	emit_done(rc);
	return rc;
}
