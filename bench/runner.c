// SPDX-License-Identifier: GPL-2.0
/*
 * runner.c - the shared runner: options, method (ASLR off, pinning, timer
 * check), the loop over backings, metadata and the row protocol.  See
 * runner.h.
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

#include "runner.h"

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

/* -- output --------------------------------------------------------------- */

/* benchtool links the library code too, and runs no benchmark */
static const char *cur_name(void)
{
	return cur ? cur->name : "benchtool";
}

void progress(const char *fmt, ...)
{
	va_list ap;

	printf("# %s: ", cur_name());
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void emit_row(const char *fmt, ...)
{
	va_list ap;

	printf("@row %s ", cur->name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void emit_error(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("@error %s %s\n", cur_name(), msg);
	fflush(stdout);
	fprintf(stderr, "%s: FAILED: %s\n", cur_name(), msg);
}

void json_str(char *dst, size_t n, const char *s)
{
	size_t o = 0;

	if (n < 3)
		return;
	dst[o++] = '"';
	for (; *s && o + 7 < n; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\') {
			dst[o++] = '\\';
			dst[o++] = ch;
		} else if (ch < 0x20) {
			o += snprintf(dst + o, n - o, "\\u%04x", ch);
		} else {
			dst[o++] = ch;
		}
	}
	dst[o++] = '"';
	dst[o] = 0;
}

void json_list(FILE *f, const char *s)
{
	const char *sep = "";

	fputc('[', f);
	while (*s) {
		size_t l = strcspn(s, ",");

		fprintf(f, "%s\"%.*s\"", sep, (int)l, s);
		sep = ", ";
		s += l + !!s[l];
	}
	fputc(']', f);
}

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

const char *fmt_opt(char *buf, size_t n, int ok, double v)
{
	if (!ok)
		return "";
	snprintf(buf, n, "%.3f", v);
	return buf;
}

/* -- layout ---------------------------------------------------------------- */

uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t page_line_key(uint64_t seed)
{
	/* a key of its own, so lines do not follow the chase's cycle order */
	return mix64(seed ^ 0x6c696e6573ULL);
}

/* -- options --------------------------------------------------------------- */

static struct run_opts opts = { .reps = 5, .warmup = 1, .seed = 1, .cpu = -1 };
static const char *sizes_arg;
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
	{ .name = "seed", .arg = "N", .kind = OPT_COUNT, .dst = &opts.seed,
	  .help = "seed of every random order and layout (1)" },
	{ .name = "cpu", .arg = "N", .kind = OPT_INT, .dst = &opts.cpu,
	  .help = "CPU to pin to (default: the last one allowed; a P-core on "
	  "hybrid Intel parts)" },
	{ .name = "backings", .arg = "LIST", .kind = OPT_STR,
	  .dst = &opts.backings,
	  .help = "comma list of backings (default: all)" },
	{ .name = "verbose", .kind = OPT_FLAG, .dst = &opts.verbose,
	  .help = "more progress (also -v)" },
	{ 0 },
};

/* "4096", "64K", "1.5M", "1G" -> *v; 0, or -1 when s is not one */
static int parse_size(const char *s, unsigned long long *v)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (end == s || errno || d < 0)
		return -1;
	switch (*end) {
	case 'G': case 'g':
		d *= 1024;
		/* fall through */
	case 'M': case 'm':
		d *= 1024;
		/* fall through */
	case 'K': case 'k':
		d *= 1024;
		end++;
	}
	if (*end || d >= 18e18)
		return -1;
	*v = (unsigned long long)d;
	return 0;
}

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
		if (parse_size(val, &u) || (long long)u < op->min)
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

	fprintf(stderr, "%s: ", cur->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(%s --help lists the options)\n", cur->name);
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

static void parse_sizes(struct run_opts *o, const char *list)
{
	char *copy = strdup(list), *t, *save = NULL;
	unsigned long long v;

	for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (parse_size(t, &v) || !v)
			die_usage("--sizes: '%s' is not a size (e.g. 64K, 6M, 1G)",
				  t);
		add_size(o, v);
	}
	free(copy);
}

static int backing_selected(const struct backing *b)
{
	const char *p = opts.backings;
	size_t l = strlen(b->name);

	while (p && *p) {
		if (!strncmp(p, b->name, l) && (p[l] == ',' || !p[l]))
			return 1;
		p += strcspn(p, ",");
		p += !!*p;
	}
	return !opts.backings;
}

static void check_backings(const char *list)
{
	char *copy = strdup(list), *t, *save = NULL;

	for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (!backing_find(t))
			die_usage("--backings: no backing '%s' (the backings "
				  "are listed under --help)", t);
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
}
static void emit_env_meta(void)
{
	struct utsname u;
	char esc[3][300], model[256] = "";
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");
	const char *s = getenv("HUGETLB_SERIES");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10)) {
			snprintf(model, sizeof(model), "%s",
				 strchr(line, ':') + 2);
			model[strcspn(model, "\n")] = 0;
			break;
		}
	if (f)
		fclose(f);
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
	printf("@meta method {\"bench\": \"%s\", \"warmup\": %d, \"reps\": %d, "
	       "\"seed\": %llu, \"aslr_off\": %s, \"cpu_pinned\": %d, "
	       "\"timer_resolution_ns\": %.1f, \"timer_getres_ns\": %.1f, "
	       "\"clock\": \"CLOCK_MONOTONIC\"", cur->name, opts.warmup,
	       opts.reps, (unsigned long long)opts.seed,
	       aslr_off ? "true" : "false", opts.cpu, timer_res_ns,
	       timer_getres_ns);
	emit_bench_opts();
	printf("}\n");
}

/* -- the loop ---------------------------------------------------------------- */

static int backing_failed(const struct backing *b, const char *why,
			  unsigned long page_kb)
{
	emit_error("%s", why);
	emit_backing_meta(b, "failed", why, page_kb);
	return 2;
}

/*
 * One backing: map the largest working set, touch it, verify its page
 * size, then measure every size on it (or, for maps_own, unmap it first
 * and let measure() map its own).
 */
static int run_backing(const struct backing *b, struct counters *c)
{
	struct bench_ctx x = { .o = &opts, .c = c, .b = b };
	size_t top = opts.sizes[opts.nsizes - 1];
	struct mapping m;
	char why[512];
	int si, bad = 0;

	if (backing_available(b, why, sizeof(why))) {
		progress("skip %s: %s", b->name, why);
		emit_backing_meta(b, "skipped", why, 0);
		return 0;
	}
	if (backing_map(b, top, 0, &m, why, sizeof(why)))
		return backing_failed(b, why, 0);
	/* fault the working sets in (a 1 GB page is cleared whole) */
	memset(m.addr, 0, top);
	if (backing_verify(&m, &x.page_kb, why, sizeof(why))) {
		backing_unmap(&m);
		return backing_failed(b, why, 0);
	}
	if (cur->maps_own)
		backing_unmap(&m);
	else
		x.m = &m;
	for (si = 0; si < opts.nsizes && !bad; si++) {
		x.si = si;
		if (opts.sizes[si] >= cur->min_wss)
			bad = cur->measure(&x);
	}
	if (!cur->maps_own)
		backing_unmap(&m);
	if (bad)
		return backing_failed(b, "a measurement failed (the @error "
				      "lines before this say which)", x.page_kb);
	emit_backing_meta(b, "measured", "", x.page_kb);
	return 0;
}

static int run_all(struct counters *c)
{
	int i, rc = 0, done = 0, total = 0;

	for (i = 0; i < nbackings; i++)
		total += backing_selected(&backings[i]);
	for (i = 0; i < nbackings; i++) {
		if (!backing_selected(&backings[i]))
			continue;
		progress("backing %s (%d/%d)", backings[i].name, ++done, total);
		if (run_backing(&backings[i], c))
			rc = 2;
	}
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

int runner_main(int argc, char **argv)
{
	struct counters c;
	int off, rc;

	if (bench_count() != 1) {
		fprintf(stderr, "runner: built with %d benchmarks, not one\n",
			bench_count());
		return 70;
	}
	cur = bench_at(0);
	off = aslr_off(argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_opts(argc, argv);
	pin(&opts);
	check_timer();
	counters_open(&c);
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

	printf("@header %s %s\n", cur->name, cur->columns);
	rc = run_all(&c);
	backing_cleanup();
	printf("@done %s %d\n", cur->name, rc);
	return rc;
}
