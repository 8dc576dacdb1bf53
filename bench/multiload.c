// SPDX-License-Identifier: GPL-2.0
/*
 * multiload.c - loaded latency, as multichase's multiload measures it
 * (its chaseload mode): the dependent random chase's ns per hop on one
 * CPU while the other CPUs stream memory, against the same chase with
 * those CPUs idle, in the same run.
 *
 * The chase is chase.c's: the same cycle (chase_build_cycle(), layout.c,
 * line or page hop) in the runner's working set, chased by the same
 * unrolled loop (chase_blocks()), on the CPU the runner pinned us to.
 * The load: one thread on each other CPU this process was allowed at
 * start (--load-threads fewer), each streaming its own buffer of
 * --load-bytes mapped from the same backing (its page size checked in
 * smaps as the runner checks the working set's), in chunks of
 * CHUNK bytes:
 *   read  a sum of every 8-byte word (multiload's stream-sum: reads only)
 *   copy  each word read, added to the sum, and written to the buffer's
 *         other half plus the pass number (a memcpy-like 1:1 read:write
 *         stream; a write the end check can see)
 * Bytes moved are the bytes read plus the bytes written.
 *
 * A repetition is one unloaded and one loaded chase of --hops hops (in
 * the order unloaded-loaded on even repetitions, loaded-unloaded on odd
 * ones); --warmup untimed repetitions and one more go first (the
 * runner's warm pass is for benchmarks with repetition hooks).  Between loaded chases the load threads block on a condition
 * variable, so an unloaded chase runs beside idle CPUs.  A loaded chase:
 * the threads are released, each stamps its start (CLOCK_MONOTONIC) and
 * streams; when all have started the chase reads each thread's byte
 * count, its clock (t0), chases, reads its clock (t1) and the counts
 * again, and stops the threads; each stamps its end after its last
 * chunk.  The load's bandwidth in the window is the bytes the threads'
 * counts moved between t0 and t1 over t1 - t0 (to a chunk per thread).
 *
 * The checks (the row's flags column; any flag and the row is not
 * drawn, as faultscale's low_overlap rows are not):
 *   uncovered       a thread's start..end did not cover t0..t1 in some
 *                   loaded repetition (coverage: the worst share of the
 *                   window all threads covered)
 *   unverified      the load's work, counted independently of its byte
 *                   counts, disagrees with them: each thread's sum must be
 *                   the sum its counted chunks hold (known from the fill,
 *                   computed untimed), and for copy, the other half must
 *                   hold what the last pass wrote
 *   below_floor     a thread moved under FLOOR_SHARE of its own solo rate
 *                   (measured untimed before the repetitions: its bytes
 *                   over its own start..end while the chase sleeps), or
 *                   nothing, in some window
 *   below_unloaded  the loaded median under the unloaded minimum by more
 *                   than NOISE: loading the other CPUs cannot speed the
 *                   chase up, so a faster "loaded" chase is an instrument
 *                   fault (or noise larger than the row claims)
 * --distort idle|fake|early|short|nowrite distorts the instrument (a test of
 * these checks: idle threads spin without loading or counting, fake ones
 * count chunks they did not read, early ones stop after one chunk; short
 * chases half the hops a loaded chase counts; nowrite: copy reads and
 * writes nothing).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runner.h"
#include "tasks.h"

#define MAX_LOAD 256
#define CHUNK (256UL << 10)	/* bytes a load thread moves between counts */
#define FLOOR_SHARE 0.10	/* of a thread's solo rate, in every window */
#define NOISE 0.05		/* below_unloaded: loaded < (1 - NOISE) x min */
#define SOLO_NS 20e6		/* the solo measurement's length, at least */

enum { LOAD_READ, LOAD_COPY, NLOADS };
static const char *const load_names[] = { "read", "copy", NULL };
static const char *const hop_names[] = { "line", "page", "both", NULL };
enum { DISTORT_NONE, DISTORT_IDLE, DISTORT_FAKE, DISTORT_EARLY,
       DISTORT_SHORT, DISTORT_NOWRITE };
static const char *const distort_names[] = { "none", "idle", "fake", "early",
					     "short", "nowrite", NULL };

static int hop_choice;			/* line */
static const char all_loads[] = "read,copy";
static const char *loads_arg = all_loads;
static int load_on[NLOADS];
static size_t load_bytes = 64UL << 20;
static int load_threads;		/* 0: every other allowed CPU */
static uint64_t hops = 1 << 20;
static int distort;

enum { PH_WAIT, PH_GO, PH_EXIT };

/* one load thread */
struct loader {
	pthread_t th;
	int cpu, kind, i;
	struct mapping m;
	uint64_t *buf;			/* the read half */
	uint64_t *out;			/* copy: the written half */
	size_t words;			/* in the read half */
	size_t chunks;			/* CHUNK-sized chunks of the read half */
	uint64_t *chunk_sum;		/* the fill's sum of each chunk */
	uint64_t pass_sum;		/* of them all */
	/* written by the thread, read by the chase */
	uint64_t done;			/* chunks moved, all phases (atomic) */
	double t0, t1;			/* its last phase's start and end */
	uint64_t sum;			/* its loads' sum, all phases */
	uint64_t last_pass;		/* copy: the pass of its last chunk */
	size_t last_chunk;		/* copy: its last chunk's index */
	int started, stopped;		/* in the current phase (atomic) */
	struct group *g;
};

struct group {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int phase, gen;			/* under mu; gen counts releases */
	int stop;			/* atomic: leave the phase */
	int n;
	struct loader *l;
};

/* bytes one chunk moves: read, or read and written */
static uint64_t chunk_bytes(int kind)
{
	return kind == LOAD_COPY ? 2 * CHUNK : CHUNK;
}

/* streams chunk c of pass p; returns the sum of its words */
static uint64_t stream_chunk(struct loader *l, size_t c, uint64_t p)
{
	size_t w = CHUNK / 8, i, o = c * w;
	const uint64_t *src = l->buf + o;
	uint64_t s = 0;

	if (l->kind == LOAD_COPY && distort != DISTORT_NOWRITE) {
		uint64_t *dst = l->out + o;

		for (i = 0; i < w; i++) {
			s += src[i];
			dst[i] = src[i] + p;
		}
	} else {
		for (i = 0; i < w; i++)
			s += src[i];
	}
	return s;
}

static void *loader_main(void *arg)
{
	struct loader *l = arg;
	struct group *g = l->g;
	uint64_t pos = 0;		/* chunks streamed in all: pass, chunk */
	int gen = 0;

	pin_self(l->cpu);
	for (;;) {
		int ph;

		pthread_mutex_lock(&g->mu);
		while (g->gen == gen && g->phase != PH_EXIT)
			pthread_cond_wait(&g->cv, &g->mu);
		ph = g->phase;
		gen = g->gen;
		pthread_mutex_unlock(&g->mu);
		if (ph == PH_EXIT)
			break;
		l->t0 = now_ns();
		__atomic_store_n(&l->started, 1, __ATOMIC_RELEASE);
		do {
			size_t c = pos % l->chunks;

			if (distort == DISTORT_IDLE) {
				cpu_relax();
				continue;
			}
			if (distort != DISTORT_FAKE)
				l->sum += stream_chunk(l, c, pos / l->chunks);
			l->last_pass = pos / l->chunks;
			l->last_chunk = c;
			pos++;
			__atomic_store_n(&l->done, pos, __ATOMIC_RELEASE);
			if (distort == DISTORT_EARLY)
				break;
		} while (!__atomic_load_n(&g->stop, __ATOMIC_ACQUIRE));
		l->t1 = now_ns();
		__atomic_store_n(&l->stopped, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* releases the threads into phase ph and waits until each has started */
static void release(struct group *g, int ph)
{
	int i;

	for (i = 0; i < g->n; i++) {
		g->l[i].started = 0;
		g->l[i].stopped = 0;
	}
	__atomic_store_n(&g->stop, 0, __ATOMIC_RELEASE);
	pthread_mutex_lock(&g->mu);
	g->phase = ph;
	g->gen++;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	if (ph == PH_EXIT)
		return;
	for (i = 0; i < g->n; i++)
		while (!__atomic_load_n(&g->l[i].started, __ATOMIC_ACQUIRE))
			cpu_relax();
}

/* stops the phase and waits until each thread has stamped its end */
static void halt(struct group *g)
{
	int i;

	__atomic_store_n(&g->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < g->n; i++)
		while (!__atomic_load_n(&g->l[i].stopped, __ATOMIC_ACQUIRE))
			cpu_relax();
}

static void snap(const struct group *g, uint64_t *v)
{
	int i;

	for (i = 0; i < g->n; i++)
		v[i] = __atomic_load_n(&g->l[i].done, __ATOMIC_ACQUIRE);
}

/*
 * Fills thread l's buffer (untimed): word i of the read half a keyed
 * mix64, the copy half zero, and each chunk's sum kept for the check.
 */
static int fill(struct loader *l, uint64_t seed)
{
	size_t c, i, w = CHUNK / 8;

	l->chunk_sum = calloc(l->chunks, sizeof(uint64_t));
	if (!l->chunk_sum)
		return -1;
	l->pass_sum = 0;
	for (c = 0; c < l->chunks; c++) {
		uint64_t s = 0;

		for (i = 0; i < w; i++) {
			uint64_t v = mix64(seed + (c * w + i) * 2 + l->i);

			l->buf[c * w + i] = v;
			s += v;
		}
		l->chunk_sum[c] = s;
		l->pass_sum += s;
	}
	if (l->out)
		memset(l->out, 0, l->words * 8);
	return 0;
}

/*
 * The independent check of thread l's count: the sum its loads should
 * have (its counted chunks' sums from the fill) against the sum they
 * had, and for copy the other half against what each chunk's last pass
 * wrote.  1 if they agree.
 */
static int verify(const struct loader *l, char *why, size_t n)
{
	uint64_t done = l->done, want = (done / l->chunks) * l->pass_sum;
	size_t c, i, w = CHUNK / 8;

	for (c = 0; c < done % l->chunks; c++)
		want += l->chunk_sum[c];
	if (want != l->sum) {
		snprintf(why, n, "load thread %d: the sum of its loads is not "
			 "that of the %llu chunks it counted", l->i,
			 (unsigned long long)done);
		return 0;
	}
	if (l->kind != LOAD_COPY || !done)
		return 1;
	for (c = 0; c < l->chunks; c++) {
		/* chunks up to the last one took the last pass, the rest the one before */
		uint64_t p = c <= l->last_chunk ? l->last_pass :
			     l->last_pass - 1;

		if (c > l->last_chunk && l->last_pass == 0)
			break;	/* never written */
		for (i = 0; i < w; i += 61)
			if (l->out[c * w + i] != l->buf[c * w + i] + p) {
				snprintf(why, n, "load thread %d: chunk %zu of "
					 "its copy does not hold pass %llu's "
					 "writes", l->i, c,
					 (unsigned long long)p);
				return 0;
			}
	}
	return 1;
}

/* everything one (backing, load kind) needs: the threads and buffers */
static int group_start(const struct bench_ctx *x, struct group *g, int kind,
		       int n, char *why, size_t wn)
{
	size_t half = backing_len(x->b, load_bytes) / (kind == LOAD_COPY ? 2 : 1);
	int i, k = 0, e;

	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	g->l = calloc(n, sizeof(*g->l));
	if (!g->l) {
		snprintf(why, wn, "out of memory");
		return -1;
	}
	half = half / CHUNK * CHUNK;
	if (!half) {
		snprintf(why, wn, "--load-bytes %zu holds no %lu-byte chunk%s",
			 load_bytes, CHUNK, kind == LOAD_COPY ?
			 " in each half" : "");
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct loader *l = &g->l[i];
		unsigned long kb;

		while (task_cpu(k) == x->o->cpu)
			k++;
		l->cpu = task_cpu(k++);
		l->kind = kind;
		l->i = i;
		l->g = g;
		l->m.addr = NULL;
		if (backing_map(x->b, load_bytes, 0, &l->m, why, wn))
			return -1;
		memset(l->m.addr, 1, l->m.len);
		if (backing_verify(&l->m, &kb, why, wn))
			return -1;
		if (kb != x->page_kb) {
			snprintf(why, wn, "load thread %d's buffer has %lu kB "
				 "pages, the working set %lu kB", i, kb,
				 x->page_kb);
			return -1;
		}
		l->buf = (uint64_t *)l->m.addr;
		l->out = kind == LOAD_COPY ? (uint64_t *)(l->m.addr + half) :
			 NULL;
		l->words = half / 8;
		l->chunks = half / CHUNK;
		if (fill(l, x->o->seed)) {
			snprintf(why, wn, "out of memory");
			return -1;
		}
	}
	g->n = n;
	for (i = 0; i < n; i++) {
		e = pthread_create(&g->l[i].th, NULL, loader_main, &g->l[i]);
		if (e) {
			snprintf(why, wn, "pthread_create: %s", strerror(e));
			g->n = i;
			return -1;
		}
	}
	return 0;
}

static void group_end(struct group *g, int n)
{
	int i;

	if (g->n)
		release(g, PH_EXIT);
	for (i = 0; i < g->n; i++)
		pthread_join(g->l[i].th, NULL);
	for (i = 0; g->l && i < n; i++) {
		if (g->l[i].m.addr)
			backing_unmap(&g->l[i].m);
		free(g->l[i].chunk_sum);
	}
	free(g->l);
}

/* one row: its measurements, per repetition */
struct row {
	double *un, *ld, *gbps;
	double coverage, thread_share_min, solo_gbps;
	int uncovered, below_floor, unverified;
	char why[300];
};

/*
 * The untimed solo measurement: every thread streams alone for at least
 * SOLO_NS, the chase sleeping; sets solo[i] (bytes/ns of each thread over
 * its own start..end) and the row's sum of them.
 */
static void solo(struct group *g, double *solo_rate, struct row *rw)
{
	uint64_t before[MAX_LOAD], after[MAX_LOAD];
	struct timespec ts = { 0, (long)SOLO_NS };
	int i;

	snap(g, before);
	release(g, PH_GO);
	nanosleep(&ts, NULL);
	halt(g);
	snap(g, after);
	rw->solo_gbps = 0;
	for (i = 0; i < g->n; i++) {
		struct loader *l = &g->l[i];
		double d = l->t1 - l->t0;

		solo_rate[i] = d > 0 ? (after[i] - before[i]) *
			       (double)chunk_bytes(l->kind) / d : 0;
		rw->solo_gbps += solo_rate[i];
	}
}

/* one loaded chase: its ns per hop, and the load's window checks */
static double loaded(struct group *g, void ***p,
		     uint64_t blocks, const double *solo_rate, struct row *rw,
		     double *gbps)
{
	uint64_t before[MAX_LOAD], after[MAX_LOAD], n = blocks * CHASE_UNROLL;
	double t0, t1, lo = 0, hi = 1e300, bytes = 0, cov;
	int i;

	release(g, PH_GO);
	snap(g, before);
	t0 = now_ns();
	*p = chase_blocks(*p, distort == DISTORT_SHORT ? blocks / 2 : blocks);
	t1 = now_ns();
	snap(g, after);
	halt(g);
	check_duration(t1 - t0);
	for (i = 0; i < g->n; i++) {
		const struct loader *l = &g->l[i];
		double b = (after[i] - before[i]) * (double)chunk_bytes(l->kind);
		double share = solo_rate[i] > 0 ?
			       b / (t1 - t0) / solo_rate[i] : 0;

		bytes += b;
		lo = l->t0 > lo ? l->t0 : lo;
		hi = l->t1 < hi ? l->t1 : hi;
		if (l->t0 > t0 || l->t1 < t1)
			rw->uncovered = 1;
		if (share < rw->thread_share_min)
			rw->thread_share_min = share;
		if (b <= 0 || share < FLOOR_SHARE)
			rw->below_floor = 1;
	}
	/* the share of t0..t1 in which every thread ran */
	lo = lo > t0 ? lo : t0;
	hi = hi < t1 ? hi : t1;
	cov = hi > lo ? (hi - lo) / (t1 - t0) : 0;
	if (cov < rw->coverage)
		rw->coverage = cov;
	*gbps = bytes / (t1 - t0);	/* bytes per ns = GB/s */
	return (t1 - t0) / n;
}

static double unloaded(void ***p, uint64_t blocks)
{
	double t0, t1;

	t0 = now_ns();
	*p = chase_blocks(*p, blocks);
	t1 = now_ns();
	check_duration(t1 - t0);
	return (t1 - t0) / (blocks * CHASE_UNROLL);
}

void *volatile multiload_sink;

static void emit(const struct bench_ctx *x, int hop, int kind,
		 const struct group *g, struct row *rw, uint64_t blocks,
		 int verified)
{
	struct stats su, sl, sg;
	int reps = x->o->reps, below, nthreads = g->n;
	char flags[80] = "", cl[512];
	size_t o = 0;
	int i;

	stats_compute(rw->un, reps, &su);
	stats_compute(rw->ld, reps, &sl);
	stats_compute(rw->gbps, reps, &sg);
	below = sl.median < (1 - NOISE) * su.min;
	if (rw->uncovered)
		o += snprintf(flags + o, sizeof(flags) - o, "uncovered;");
	if (!verified)
		o += snprintf(flags + o, sizeof(flags) - o, "unverified;");
	if (rw->below_floor)
		o += snprintf(flags + o, sizeof(flags) - o, "below_floor;");
	if (below)
		o += snprintf(flags + o, sizeof(flags) - o, "below_unloaded;");
	if (o)
		flags[o - 1] = 0;
	else
		snprintf(flags, sizeof(flags), "ok");
	cl[0] = 0;
	for (i = 0, o = 0; i < nthreads && o + 8 < sizeof(cl); i++)
		o += snprintf(cl + o, sizeof(cl) - o, "%s%d", i ? ";" : "",
			      g->l[i].cpu);
	const struct cell row[] = {
		CELL_S(x->b->name), CELL_U(x->page_kb),
		CELL_U(x->o->sizes[x->si]), CELL_S(hop_names[hop - 1]),
		CELL_S(load_names[kind]), CELL_D(nthreads),
		CELL_F(su.median), CELL_F(sl.median),
		CELL_F(sl.median / su.median), CELL_F(sg.median),
		CELL_F(rw->solo_gbps), CELL_F(rw->coverage),
		CELL_F(rw->thread_share_min), CELL_D(verified),
		CELL_S(flags), CELL_D(strcmp(flags, "ok") != 0),
		CELL_F(su.min), CELL_F(su.max), CELL_F(sl.min), CELL_F(sl.max),
		CELL_F(su.cv), CELL_F(sl.cv), CELL_D(reps),
		CELL_U(blocks * CHASE_UNROLL), CELL_U(load_bytes),
		CELL_D(x->o->cpu), CELL_S(cl),
	};

	emit_row(row, NCELLS(row));
	progress("%-14s %-4s %-4s %10zu B, %d load threads: unloaded %.2f, "
		 "loaded %.2f ns/hop (x%.2f), load %.2f GB/s%s%s",
		 x->b->name, hop_names[hop - 1], load_names[kind],
		 x->o->sizes[x->si], nthreads, su.median, sl.median,
		 sl.median / su.median, sg.median,
		 strcmp(flags, "ok") ? ", flagged: " : "",
		 strcmp(flags, "ok") ? flags : "");
}

/*
 * One row: backing x, hop, load kind.  The cycle is built in the working
 * set, the load's threads and buffers made, the solo rate measured, then
 * the warmups (--warmup and one more) and repetitions (each an unloaded
 * and a loaded chase).
 */
static int point(const struct bench_ctx *x, int hop, int kind, int n)
{
	int reps = x->o->reps, r, i, rc = 0, verified = 1;
	size_t cnt = x->o->sizes[x->si] / (hop == HOP_PAGE ? PAGE : LINE);
	uint64_t blocks = (hops + CHASE_UNROLL - 1) / CHASE_UNROLL;
	double solo_rate[MAX_LOAD], scratch, g1;
	struct row rw = { .coverage = 1, .thread_share_min = 1e300 };
	struct group g;
	char why[300];
	void **p;

	if (cnt < 2)
		return 0;
	rw.un = calloc(reps, sizeof(double));
	rw.ld = calloc(reps, sizeof(double));
	rw.gbps = calloc(reps, sizeof(double));
	if (!rw.un || !rw.ld || !rw.gbps) {
		emit_error("out of memory for %d repetitions", reps);
		rc = -1;
		goto out;
	}
	chase_build_cycle(x->m->addr, cnt, hop, x->o->seed);
	p = (void **)(x->m->addr +
		      chase_elem_off(0, hop, page_line_key(x->o->seed)));
	if (group_start(x, &g, kind, n, why, sizeof(why))) {
		emit_error("%s %s load: %s", x->b->name, load_names[kind], why);
		group_end(&g, n);
		rc = -1;
		goto out;
	}
	solo(&g, solo_rate, &rw);
	for (r = -x->o->warmup - 1; r < reps; r++) {
		double *u = r < 0 ? &scratch : &rw.un[r];
		double *l = r < 0 ? &scratch : &rw.ld[r];
		double *gb = r < 0 ? &g1 : &rw.gbps[r];
		struct row tmp = rw;
		struct row *w = r < 0 ? &tmp : &rw;	/* warmups check nothing */

		if (r & 1) {
			*l = loaded(&g, &p, blocks, solo_rate, w, gb);
			*u = unloaded(&p, blocks);
		} else {
			*u = unloaded(&p, blocks);
			*l = loaded(&g, &p, blocks, solo_rate, w, gb);
		}
	}
	multiload_sink = p;
	for (i = 0; i < g.n; i++)
		if (!verify(&g.l[i], why, sizeof(why))) {
			progress("%s %s load: %s", x->b->name, load_names[kind],
				 why);
			verified = 0;
		}
	emit(x, hop, kind, &g, &rw, blocks, verified);
	group_end(&g, n);
out:
	free(rw.un);
	free(rw.ld);
	free(rw.gbps);
	return rc;
}

static void emit_skip(const struct bench_ctx *x, const char *why)
{
	char esc[400];

	json_str(esc, sizeof(esc), why);
	printf("@meta skip {\"bench\": \"multiload\", \"backing\": \"%s\", "
	       "\"point\": \"load\", \"reason\": %s}\n", x->b->name, esc);
	progress("skip %s: %s", x->b->name, why);
}

/* the load threads: --load-threads, else every allowed CPU but the chase's */
static int nloaders(const struct bench_ctx *x)
{
	int i, others = 0;

	for (i = 0; i < start_cpus->n; i++)
		others += start_cpus->cpu[i] != x->o->cpu;
	return load_threads && load_threads < others ? load_threads : others;
}

static int measure(const struct bench_ctx *x)
{
	int n = nloaders(x), hop, kind, rc = 0;
	long free_kb;
	char why[300];

	if (n < 1) {
		emit_skip(x, "no CPU but the chase's to load: multiload needs "
			  "two CPUs");
		return 0;
	}
	if (n > MAX_LOAD)
		n = MAX_LOAD;
	/* the load's buffers come from the backing's pool (or memory) too */
	free_kb = avail_kb(x->b);
	if (free_kb >= 0 && (unsigned long)free_kb <
	    n * (backing_len(x->b, load_bytes) / 1024)) {
		snprintf(why, sizeof(why), "%d load threads x %zu kB of "
			 "--load-bytes need more than the %ld kB free for "
			 "%s", n, backing_len(x->b, load_bytes) / 1024,
			 free_kb, x->b->name);
		emit_skip(x, why);
		return 0;
	}
	for (hop = HOP_LINE; hop <= HOP_PAGE; hop++) {
		if (!((hop_choice + 1) & hop))
			continue;
		for (kind = 0; kind < NLOADS; kind++)
			if (load_on[kind] && point(x, hop, kind, n))
				rc = -1;
	}
	return rc;
}

/* --load: "read,copy"; 0, or -1 with why */
static int check_opts(char *why, size_t n)
{
	char *copy = strdup(loads_arg), *t, *save = NULL;
	int k;

	for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < NLOADS && strcmp(t, load_names[k]); k++)
			;
		if (k == NLOADS) {
			snprintf(why, n, "--load: '%s' is not a load (a comma "
				 "list of read, copy)", t);
			free(copy);
			return -1;
		}
		load_on[k] = 1;
	}
	free(copy);
	if (load_threads > MAX_LOAD) {
		snprintf(why, n, "--load-threads: at most %d", MAX_LOAD);
		return -1;
	}
	return 0;
}

static void start(struct counters *c)
{
	(void)c;
	printf("@meta multiload {\"allowed_cpus\": %d, \"chunk_bytes\": %lu, "
	       "\"floor_share\": %.2f, \"noise\": %.2f, \"solo_ns\": %.0f, "
	       "\"clock\": \"CLOCK_MONOTONIC, wall time\", \"distort\": "
	       "\"%s\", \"load_bytes\": \"read and written\"}\n",
	       start_cpus->n, CHUNK, FLOOR_SHARE, NOISE, SOLO_NS,
	       distort_names[distort]);
}

static const struct bench_opt multiload_opts[] = {
	{ .name = "hop", .arg = "line|page|both", .kind = OPT_CHOICE,
	  .help = "the chase's hop, as chase's --hop (line)",
	  .dst = &hop_choice, .choices = hop_names },
	{ .name = "hops", .arg = "N", .help = "hops per chase (1M)",
	  .kind = OPT_COUNT, .dst = &hops, .min = CHASE_UNROLL },
	{ .name = "load", .arg = "LIST", .kind = OPT_STR, .dst = &loads_arg,
	  .help = "the load threads' stream: read (a sum), copy (read and "
	  "written); a comma list (read,copy)" },
	{ .name = "load-bytes", .arg = "SIZE", .kind = OPT_SIZE,
	  .dst = &load_bytes, .min = 2 * CHUNK,
	  .help = "each load thread's buffer, of the same backing (64M)" },
	{ .name = "load-threads", .arg = "N", .kind = OPT_INT,
	  .dst = &load_threads, .min = 0,
	  .help = "load threads (0: one on every allowed CPU but the "
	  "chase's)" },
	{ .name = "distort", .arg = "none|idle|fake|early|short|nowrite",
	  .kind = OPT_CHOICE, .dst = &distort, .choices = distort_names,
	  .help = "a test of the checks: idle threads load nothing, fake ones "
	  "count chunks they did not read, early ones stop after one, short "
	  "loaded chases run half their hops, nowrite copies read only "
	  "(none)" },
	{ 0 },
};

static const struct bench multiload_bench = {
	.name = "multiload",
	.desc = "loaded latency: the chase's ns per hop while the other CPUs "
		"stream memory, against idle, as multichase's multiload",
	.columns = "backing %s, page_kb %u, wss_bytes %u, hop %s, load %s, "
		   "load_threads %d, ns_unloaded %.3f, ns_loaded %.3f, "
		   "ratio %.4f, load_gbps %.3f, solo_gbps %.3f, coverage %.4f, "
		   "thread_share_min %.4f, load_verified %d, flags %s, "
		   "flagged %d, ns_unloaded_min %.3f, ns_unloaded_max %.3f, "
		   "ns_loaded_min %.3f, ns_loaded_max %.3f, cv_unloaded %.4f, "
		   "cv_loaded %.4f, reps %d, hops %u, load_bytes %u, "
		   "chase_cpu %d, load_cpus %s",
	.values_of = "load",
	.values = load_names,
	.key = "backing,hop,load,wss_bytes,load_threads",
	.metric = "ns_loaded",
	.lower_is_better = 1,
	.opts = multiload_opts,
	.check = check_opts,
	.start = start,
	.measure = measure,
};
BENCH_REGISTER(multiload_bench);
