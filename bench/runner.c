// SPDX-License-Identifier: GPL-2.0
/*
 * runner.c - the shared runner: options, method (ASLR off, pinning, timer
 * check), metadata and the row protocol.  See runner.h.
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
#include "tlbmodel.h"

static double timer_res_ns, timer_getres_ns;

double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

double timer_resolution_ns(void)
{
	return timer_res_ns;
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

void progress(const char *fmt, ...)
{
	va_list ap;

	printf("# %s: ", this_bench.name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void emit_header(void)
{
	printf("@header %s %s\n", this_bench.name, this_bench.csv_header);
	fflush(stdout);
}

void emit_row(const char *fmt, ...)
{
	va_list ap;

	printf("@row %s ", this_bench.name);
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
	printf("@error %s %s\n", this_bench.name, msg);
	fflush(stdout);
	fprintf(stderr, "%s: FAILED: %s\n", this_bench.name, msg);
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

void emit_backing_meta(const struct backing *b, const char *status,
		       const char *reason, unsigned long page_kb)
{
	char esc[600];

	json_str(esc, sizeof(esc), reason ? reason : "");
	printf("@meta backing {\"name\": \"%s\", \"bench\": \"%s\", "
	       "\"status\": \"%s\", \"reason\": %s, \"page_kb\": %lu, "
	       "\"promised_kb\": %lu}\n", b->name, this_bench.name, status,
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

int backing_selected(const struct bench_opts *o, const struct backing *b)
{
	const char *p = o->backings;
	size_t l = strlen(b->name);

	if (!p)
		return 1;
	while (p && *p) {
		if (!strncmp(p, b->name, l) && (p[l] == ',' || !p[l]))
			return 1;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return 0;
}

size_t max_size(const struct bench_opts *o)
{
	return o->nsizes ? o->sizes[o->nsizes - 1] : 0;
}

/* "64K", "6M", "1G", "4096" -> bytes */
static size_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	switch (*end) {
	case 'G': case 'g': v *= 1 << 30; break;
	case 'M': case 'm': v *= 1 << 20; break;
	case 'K': case 'k': v *= 1 << 10; break;
	}
	return (size_t)v;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

static void add_size(struct bench_opts *o, size_t s)
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
static void make_sweep(struct bench_opts *o, size_t lo, size_t hi)
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
	qsort(o->sizes, o->nsizes, sizeof(o->sizes[0]), cmp_size);
}

static void usage(FILE *f)
{
	int i;

	fprintf(f,
"usage: %s [options]    (%s)\n"
"  --sizes LIST     working sets, e.g. 16K,6M,1G (default: a sweep)\n"
"  --min SIZE, --max SIZE   bounds of the generated sweep (16K, 64M)\n"
"  --reps N         timed repetitions (5); median, min, max, cv reported\n"
"  --warmup N       untimed repetitions first (1)\n"
"  --seed N         seed of every random order (1)\n"
"  --cpu N          CPU to pin to (default: the last one allowed; a P-core\n"
"                   on hybrid Intel parts)\n"
"  --backings LIST  comma list (default: all)\n"
"  --hop line|page|both   chase: one hop per cache line or per 4K page\n"
"  --hops N         chase: hops per repetition (1M)\n"
"  --model NAME     chase: TLB model preset or spec (skylake); auto: the\n"
"                   preset that fits the pinned core\n"
"  --model-cap N    chase: model accesses counted, after as many warm (65536)\n"
"  --min-bytes SIZE stream: bytes per repetition (256M); fault: size (64M)\n"
"  -v               more progress\n"
"backings:", this_bench.name, this_bench.desc);
	for (i = 0; i < nbackings; i++)
		fprintf(f, " %s", backings[i].name);
	fprintf(f, "\nTLB model presets:");
	for (i = 0; tlb_presets[i].name; i++)
		fprintf(f, " %s", tlb_presets[i].name);
	fprintf(f, "\n");
}

static void parse_opts(int argc, char **argv, struct bench_opts *o)
{
	static const struct option lo[] = {
		{ "sizes", 1, 0, 's' }, { "min", 1, 0, 'a' },
		{ "max", 1, 0, 'b' }, { "reps", 1, 0, 'r' },
		{ "warmup", 1, 0, 'w' }, { "seed", 1, 0, 'S' },
		{ "cpu", 1, 0, 'c' }, { "backings", 1, 0, 'B' },
		{ "hop", 1, 0, 'H' }, { "hops", 1, 0, 'n' },
		{ "model", 1, 0, 'm' }, { "model-cap", 1, 0, 'M' },
		{ "min-bytes", 1, 0, 'y' }, { "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	size_t smin = 16 << 10, smax = 64 << 20;
	const char *list = NULL;
	int ch;

	memset(o, 0, sizeof(*o));
	o->reps = 5;
	o->warmup = 1;
	o->seed = 1;
	o->cpu = -1;
	o->hop = HOP_LINE;
	o->hops = 1 << 20;
	o->model = "skylake";
	o->model_cap = 1 << 16;
	o->min_bytes = 0;
	while ((ch = getopt_long(argc, argv, "vh", lo, NULL)) != -1) {
		switch (ch) {
		case 's': list = optarg; break;
		case 'a': smin = parse_size(optarg); break;
		case 'b': smax = parse_size(optarg); break;
		case 'r': o->reps = atoi(optarg); break;
		case 'w': o->warmup = atoi(optarg); break;
		case 'S': o->seed = strtoull(optarg, NULL, 0); break;
		case 'c': o->cpu = atoi(optarg); break;
		case 'B': o->backings = optarg; break;
		case 'H':
			o->hop = !strcmp(optarg, "page") ? HOP_PAGE :
				 !strcmp(optarg, "both") ? HOP_BOTH : HOP_LINE;
			break;
		case 'n': o->hops = parse_size(optarg); break;
		case 'm': o->model = optarg; break;
		case 'M': o->model_cap = parse_size(optarg); break;
		case 'y': o->min_bytes = parse_size(optarg); break;
		case 'v': o->verbose++; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(64);
		}
	}
	if (o->reps < 1)
		o->reps = 1;
	if (list) {
		char *copy = strdup(list), *t, *save = NULL;

		for (t = strtok_r(copy, ",", &save); t;
		     t = strtok_r(NULL, ",", &save))
			add_size(o, parse_size(t));
		free(copy);
		qsort(o->sizes, o->nsizes, sizeof(o->sizes[0]), cmp_size);
	} else {
		make_sweep(o, smin, smax);
	}
}

/* pins to o->cpu, or to a CPU the counters can count on (counters.h) */
static void pin(struct bench_opts *o)
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

int main(int argc, char **argv)
{
	struct bench_opts o;
	struct counters c;
	char esc[300];
	int pers, aslr_off, rc;

	/*
	 * ASLR off, so every run lays out its mappings alike and the TLB
	 * model's addresses repeat: re-exec once with ADDR_NO_RANDOMIZE.
	 */
	pers = personality(0xffffffff);
	if (pers != -1 && !(pers & ADDR_NO_RANDOMIZE) &&
	    personality(pers | ADDR_NO_RANDOMIZE) != -1)
		execv("/proc/self/exe", argv);	/* falls through on error */
	pers = personality(0xffffffff);
	aslr_off = pers != -1 && (pers & ADDR_NO_RANDOMIZE);

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_opts(argc, argv, &o);
	pin(&o);
	check_timer();
	counters_open(&c);
	if (!strcmp(o.model, "auto"))
		o.model = counters_model_preset(&c);

	emit_env_meta();
	json_str(esc, sizeof(esc), o.model);
	printf("@meta method {\"bench\": \"%s\", \"warmup\": %d, \"reps\": %d, "
	       "\"seed\": %llu, \"aslr_off\": %s, \"cpu_pinned\": %d, "
	       "\"timer_resolution_ns\": %.1f, \"timer_getres_ns\": %.1f, "
	       "\"hops\": %llu, \"model\": %s, \"model_cap\": %llu, "
	       "\"min_bytes\": %zu, \"clock\": \"CLOCK_MONOTONIC\"}\n",
	       this_bench.name, o.warmup, o.reps,
	       (unsigned long long)o.seed, aslr_off ? "true" : "false", o.cpu,
	       timer_res_ns, timer_getres_ns, (unsigned long long)o.hops, esc,
	       (unsigned long long)o.model_cap, o.min_bytes);
	hugepages_emit_meta();
	counters_emit_meta(&c);
	tlb_emit_meta(o.model);
	if (!aslr_off)
		progress("warning: ASLR is on (personality failed)");
	progress("pinned to CPU %d, timer resolution %.0f ns, %d sizes",
		 o.cpu, timer_res_ns, o.nsizes);

	emit_header();
	rc = this_bench.run(&o, &c);
	backing_cleanup();
	printf("@done %s %d\n", this_bench.name, rc);
	return rc;
}
