// SPDX-License-Identifier: GPL-2.0
/*
 * tlbflush.c - TLB shootdowns, will-it-scale's tlb_flush tests in the
 * suite's form: N threads of ONE process, each on its own CPU, each in a
 * loop of write a page of its own region, drop it, read it back; the
 * process's memory map is shared by all of them, so every drop must
 * invalidate the page in the TLBs of the other CPUs running its threads
 * (on x86 an IPI to each: a "TLB shootdown").  Operations (drops) per
 * second against N, per backing.  A drop is one page of the backing's own
 * size: 4 KB for devzero, 2 MB for the 2 MB backings (one TLB entry each
 * way; bytes_per_op says which).
 *
 * The kinds (column kind), where one applies to the backing:
 *   anon    tlb_flush2: private memory with no file behind it (devzero,
 *           thp, maphugetlb, devhugetlb): MADV_DONTNEED, and the page
 *           reads back 0 (a new zero page).
 *   file    tlb_flush1: MAP_PRIVATE of the thread's file (hugetlbfs,
 *           memfd), filled with FILL before the window: the write makes
 *           a private copy, MADV_DONTNEED drops it, and the page reads
 *           back the file's FILL.
 *   shared  tlb_flush3: the thread's object mapped shared (hugetlbfs,
 *           memfd, shm): MADV_DONTNEED unmaps the page, the object keeps
 *           it, and it reads back the value just written.
 *   unmap   the munmap variant (will-it-scale's tlb_flush tests
 *           all drop with MADV_DONTNEED and munmap only between passes):
 *           each operation maps one page of the backing, writes it and
 *           unmaps it; every backing.
 * Where the kernel refuses MADV_DONTNEED on a backing (hugetlb before
 * Linux 5.18: EINVAL) the point is skipped and the reason said (@meta
 * skip), found in the untimed pass.
 *
 * Every drop is checked twice: the value read back (above), and the
 * thread's fault count (getrusage RUSAGE_THREAD): the touch after a drop
 * must fault, so a thread that counts fewer faults than operations did
 * not drop.  Either failing is an @error, no row.
 *
 * A repetition: the threads start (thread i pinned to the i % n-th CPU
 * this process was allowed to run on at start), each maps its region and
 * runs one untimed pass over its pages, then waits at a spinning barrier
 * (the last to arrive releases all).  Each then runs operations for
 * --duration-ms of its own clock, cycling over its region's pages, and
 * records its window and count.  The window is the first thread's start
 * to the last one's end: ops_per_s is all threads' operations over it;
 * overlap is the share of it in which all ran, and a row whose worst
 * repetition's overlap is below MIN_OVERLAP is marked low_overlap (the
 * threads did not contend: no scaling measured), as faultscale's rows.
 *
 * tlb_irqs_per_op: the kernel's own count of TLB shootdowns received (the
 * "TLB" line of /proc/interrupts, x86, summed over CPUs), read before the
 * threads start and after they end, over the repetition's operations
 * (untimed passes included); empty where the line is absent (arm64
 * broadcasts TLBI instructions and sends no IPI).  It includes whatever
 * else the machine flushed meanwhile.  The suite's oracle
 * (tests/bench/test_tlbflush.py) reads the same line itself around a run
 * and checks it against the operations the rows claim.
 *
 * Test-only options distort the instrument on purpose: --as-processes
 * runs the tasks as forked processes (no shared memory map: no shootdown,
 * the rows unchanged), --no-drop leaves out the drop; --stagger-ms starts
 * thread 1 late (a test of the overlap gating).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner.h"
#include "tasks.h"

#define MIN_OVERLAP 0.9		/* below: the row is marked low_overlap */
#define GOOD_OPS 100		/* per thread and repetition, or short_window */
#define FILL 0x5a		/* file: the file's byte */

enum { KIND_ANON, KIND_FILE, KIND_SHARED, KIND_UNMAP, NKINDS };
static const char *const kind_names[] = { "anon", "file", "shared", "unmap",
					  NULL };

static const char *tasks_arg;
static const char all_kinds[] = "anon,file,shared,unmap";
static const char *kinds_arg = all_kinds;
static int kind_on[NKINDS];
static int duration_ms = 200;
static int oversubscribe;
static int as_processes;	/* test only: a distorted instrument */
static int no_drop;		/* test only: a distorted instrument */
static int stagger_ms;		/* test only: thread 1 starts this late */

static struct task_counts counts;	/* --threads */

struct task_res {
	double t0, t1;		/* its timed operations, CLOCK_MONOTONIC ns */
	long ops;		/* timed */
	long warm_ops;		/* the untimed pass */
	long faults;		/* in the timed operations */
	int cpu;
	int failed;
	int skip;		/* the kernel refused the drop: why says */
	char why[256];
};

/* one repetition's barrier and results (MAP_SHARED: --as-processes) */
struct rep_area {
	int ready;
	int abort;
	struct task_res r[MAX_TASKS];
};

struct task_arg {
	const struct backing *b;
	size_t size;
	int kind, i, n;
	struct rep_area *a;
};

/* 1 if kind applies to b; else 0 with why */
static int kind_applies(const struct backing *b, int kind, char *why,
			size_t n)
{
	int obj = b->ops->object;

	if (kind == KIND_UNMAP ||
	    (kind == KIND_ANON && obj == OBJ_NONE) ||
	    (kind == KIND_FILE && obj == OBJ_FILE) ||
	    (kind == KIND_SHARED && obj != OBJ_NONE))
		return 1;
	if (kind == KIND_ANON)
		snprintf(why, n, "anon (tlb_flush2) is for private memory with "
			 "no file behind it (devzero, thp, maphugetlb, "
			 "devhugetlb)");
	else if (kind == KIND_FILE)
		snprintf(why, n, "file (tlb_flush1) needs a file to map "
			 "privately (hugetlbfs, memfd)");
	else
		snprintf(why, n, "shared (tlb_flush3) needs an object that "
			 "outlives the mapping (hugetlbfs, memfd, shm)");
	return 0;
}

/* /proc/interrupts' TLB line summed over CPUs; -1 where there is none */
static long long tlb_irqs(void)
{
	FILE *f = fopen("/proc/interrupts", "r");
	char line[8192], *p, *end;
	long long sum = -1, v;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		p = line + strspn(line, " ");
		if (strncmp(p, "TLB:", 4))
			continue;
		sum = 0;
		p += 4;
		for (;;) {
			v = strtoll(p, &end, 10);
			if (end == p)
				break;
			sum += v;
			p = end;
		}
		break;
	}
	fclose(f);
	return sum;
}

/* the region a thread works in: mapped for anon, file, shared */
struct region {
	struct mapping m;
	struct mapping hold;	/* unmap of a segment: an untouched attachment */
	size_t pg;
	long pages;
};

static int map_region(const struct task_arg *t, struct region *g, char *why,
		      size_t n)
{
	size_t i;
	struct mapping fill;

	g->pg = t->b->page_kb * 1024;
	if (t->kind == KIND_UNMAP) {
		/* one page, mapped and unmapped by each operation */
		if (backing_prepare(t->b, g->pg, &g->m, why, n))
			return -1;
		g->pages = 1;
		if (t->b->ops->object != OBJ_SEGMENT)
			return 0;
		/*
		 * a segment: this attachment marks it for removal and holds
		 * it, so that each operation's attachment (MAP_F_KEEP) finds
		 * it, and it goes with the region
		 */
		g->hold = g->m;
		if (backing_attach(&g->hold, 0, why, n)) {
			backing_release(&g->m);
			return -1;
		}
		return 0;
	}
	if (backing_prepare(t->b, t->size, &g->m, why, n))
		return -1;
	g->pages = g->m.len / g->pg;
	if (t->kind == KIND_FILE) {
		fill = g->m;
		if (backing_attach(&fill, MAP_F_POPULATE | MAP_F_SHARED, why,
				   n)) {
			backing_release(&g->m);
			return -1;
		}
		for (i = 0; i < fill.len; i += PAGE)
			fill.addr[i] = FILL;
		backing_detach(&fill);
	}
	if (backing_attach(&g->m, t->kind == KIND_FILE ? MAP_F_PRIVATE :
			   t->kind == KIND_SHARED ? MAP_F_SHARED : 0, why, n)) {
		backing_release(&g->m);
		return -1;
	}
	return 0;
}

static void unmap_region(struct region *g)
{
	backing_detach(&g->m);
	if (g->hold.addr) {
		backing_detach(&g->hold);
		g->m.shmid = -1;	/* removed: no IPC_RMID of a reused id */
	}
	backing_release(&g->m);
}

/*
 * One operation on page k: write it, drop it, read it back and check.
 * 0; 1 when the kernel refused the drop (why says: a skip); -1 on a
 * wrong value (why says).
 */
static int op(const struct task_arg *t, struct region *g, long k, long seq,
	      char *why, size_t n)
{
	volatile char *p;
	char v = (char)(1 + seq % 100), want, got;

	if (t->kind == KIND_UNMAP) {
		if (backing_attach(&g->m, g->hold.addr ? MAP_F_KEEP : 0, why,
				   n))
			return -1;
		((volatile char *)g->m.addr)[0] = v;
		backing_detach(&g->m);
		return 0;
	}
	p = (volatile char *)g->m.addr + k * g->pg;
	*p = v;
	if (!no_drop && madvise((char *)p, g->pg, MADV_DONTNEED)) {
		snprintf(why, n, "madvise(MADV_DONTNEED) of a %zu kB page of "
			 "%s (%s): %s", g->pg / 1024, t->b->name,
			 kind_names[t->kind], strerror(errno));
		return 1;
	}
	got = *p;
	want = t->kind == KIND_ANON ? 0 : t->kind == KIND_FILE ? FILL : v;
	if (got != want) {
		snprintf(why, n, "page %ld read back %d after the drop, not %d "
			 "(%s)", k, got, want, t->kind == KIND_ANON ?
			 "a dropped private page reads zeros" :
			 t->kind == KIND_FILE ? "a dropped private copy reads "
			 "the file again" : "the object keeps what was written");
		return -1;
	}
	return 0;
}

static int barrier(const struct task_arg *t)
{
	struct rep_area *a = t->a;

	__atomic_add_fetch(&a->ready, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&a->ready, __ATOMIC_ACQUIRE) < t->n) {
		if (__atomic_load_n(&a->abort, __ATOMIC_ACQUIRE))
			return -1;
		if (t->n > start_cpus->n)
			sched_yield();
		else
			cpu_relax();
	}
	return 0;
}

static void *task(void *p)
{
	struct task_arg *t = p;
	struct task_res *r = &t->a->r[t->i];
	int who = as_processes ? RUSAGE_SELF : RUSAGE_THREAD;
	struct region g = { 0 };
	char why[sizeof(r->why)];
	double end;
	long k, f0, seq = 0;
	int err;

	pin_self(r->cpu);
	err = map_region(t, &g, why, sizeof(why));
	/* the untimed pass: every page once, and the code's own faults */
	for (k = 0; !err && k < g.pages; k++)
		err = op(t, &g, k, seq++, why, sizeof(why));
	r->warm_ops = seq;
	if (barrier(t) == 0 && !err) {
		if (stagger_ms && t->i == 1)
			usleep(stagger_ms * 1000);
		f0 = faults_of(who);
		r->t0 = now_ns();
		end = r->t0 + duration_ms * 1e6;
		k = 0;
		do {
			err = op(t, &g, k, seq++, why, sizeof(why));
			r->ops++;
			if (++k == g.pages)
				k = 0;
		} while (!err && ((r->ops & 15) || now_ns() < end));
		r->t1 = now_ns();
		r->faults = faults_of(who) - f0;
	} else if (!err) {
		snprintf(why, sizeof(why), "another task failed first");
		err = -1;
	}
	if (err)
		__atomic_store_n(&t->a->abort, 1, __ATOMIC_RELEASE);
	if (g.m.b)
		unmap_region(&g);
	r->failed = err < 0;
	r->skip = err > 0;
	if (err)
		snprintf(r->why, sizeof(r->why), "%s", why);
	return NULL;
}

static int run_processes(struct task_arg *t, int n)
{
	pid_t pid[MAX_TASKS];
	int i, st, rc = 0;

	fflush(stdout);
	for (i = 0; i < n; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			task(&t[i]);
			_exit(0);
		}
		if (pid[i] < 0) {
			emit_error("fork: %s", strerror(errno));
			__atomic_store_n(&t->a->abort, 1, __ATOMIC_RELEASE);
			rc = -1;
			break;
		}
	}
	while (i-- > 0)
		if (waitpid(pid[i], &st, 0) != pid[i] || !WIFEXITED(st) ||
		    WEXITSTATUS(st)) {
			emit_error("task %d (pid %d) ended with wait status %#x",
				   i, pid[i], st);
			rc = -1;
		}
	return rc;
}

static int run_threads(struct task_arg *t, int n)
{
	pthread_t th[MAX_TASKS];
	int i, e, rc = 0;

	for (i = 0; i < n; i++) {
		e = pthread_create(&th[i], NULL, task, &t[i]);
		if (e) {
			emit_error("pthread_create: %s", strerror(e));
			__atomic_store_n(&t->a->abort, 1, __ATOMIC_RELEASE);
			rc = -1;
			break;
		}
	}
	while (i-- > 0)
		pthread_join(th[i], NULL);
	return rc;
}

struct rep {
	double ops_per_s, us_per_op, wall_ms, overlap, skew_us;
	double faults_per_op, irqs_per_op;	/* irqs_per_op < 0: none */
	long ops;
};

struct pt {
	const struct bench_ctx *x;
	int kind, n;
	size_t len;
};

static void emit_skip(const struct bench_ctx *x, const char *point,
		      const char *why)
{
	char esc[400];

	json_str(esc, sizeof(esc), why);
	printf("@meta skip {\"bench\": \"tlbflush\", \"backing\": \"%s\", "
	       "\"point\": \"%s\", \"reason\": %s}\n", x->b->name, point, esc);
	progress("skip %s %s: %s", x->b->name, point, why);
}

/*
 * one repetition of p: 0, 1 (the kernel refused the drop: skip, why in
 * skipwhy), or -1 (error emitted)
 */
static int one_rep(const struct pt *p, int r, struct rep *out, char *skipwhy,
		   size_t sn)
{
	struct task_arg t[MAX_TASKS];
	struct rep_area *a;
	double first = 1e300, last = 0, min_end = 1e300, max_start = 0, per = 0;
	long long i0, i1;
	long all_ops = 0, faults = 0;
	int i, rc;

	a = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED) {
		emit_error("mmap of the tasks' shared area: %s",
			   strerror(errno));
		return -1;
	}
	for (i = 0; i < p->n; i++) {
		t[i] = (struct task_arg){ .b = p->x->b, .size = p->len,
					  .kind = p->kind, .i = i, .n = p->n,
					  .a = a };
		a->r[i].cpu = task_cpu(i);
	}
	i0 = tlb_irqs();
	rc = as_processes ? run_processes(t, p->n) : run_threads(t, p->n);
	i1 = tlb_irqs();
	for (i = 0; !rc && i < p->n; i++) {
		struct task_res *q = &a->r[i];

		if (q->skip) {
			snprintf(skipwhy, sn, "%s", q->why);
			rc = 1;
		} else if (q->failed) {
			emit_error("%s %s, %d threads: thread %d: %s",
				   p->x->b->name, kind_names[p->kind], p->n, i,
				   q->why);
			rc = -1;
		} else if (q->faults < q->ops) {
			emit_error("%s %s, %d threads: thread %d counted %ld "
				   "faults in %ld operations: the touch after a "
				   "drop must fault, so some drops did not "
				   "happen", p->x->b->name, kind_names[p->kind],
				   p->n, i, q->faults, q->ops);
			rc = -1;
		}
	}
	if (rc) {
		munmap(a, sizeof(*a));
		return rc;
	}
	*out = (struct rep){ 0 };
	for (i = 0; i < p->n; i++) {
		const struct task_res *q = &a->r[i];

		first = q->t0 < first ? q->t0 : first;
		max_start = q->t0 > max_start ? q->t0 : max_start;
		last = q->t1 > last ? q->t1 : last;
		min_end = q->t1 < min_end ? q->t1 : min_end;
		out->ops += q->ops;
		all_ops += q->ops + q->warm_ops;
		faults += q->faults;
		per += (q->t1 - q->t0) / 1e3 / q->ops;
	}
	out->wall_ms = (last - first) / 1e6;
	out->ops_per_s = out->ops / ((last - first) / 1e9);
	out->us_per_op = per / p->n;
	out->skew_us = (max_start - first) / 1e3;
	out->overlap = min_end > max_start ?
		       (min_end - max_start) / (last - first) : 0;
	out->faults_per_op = (double)faults / out->ops;
	out->irqs_per_op = i0 >= 0 && i1 >= i0 ? (double)(i1 - i0) / all_ops
					       : -1;
	if (r >= 0 && p->x->o->verbose) {
		char buf[MAX_TASKS * 48];
		size_t o = 0;

		for (i = 0; i < p->n && o < sizeof(buf); i++)
			o += snprintf(buf + o, sizeof(buf) - o,
				      " %.0f..%.0f:%ld", a->r[i].t0 - first,
				      a->r[i].t1 - first, a->r[i].ops);
		progress("windows %s kind=%s threads=%d rep %d:%s tlb_irqs "
			 "%lld of %ld ops", p->x->b->name, kind_names[p->kind],
			 p->n, r, buf, i0 >= 0 ? i1 - i0 : -1LL, all_ops);
	}
	munmap(a, sizeof(*a));
	return 0;
}

static void emit(const struct pt *p, struct rep *rp)
{
	const struct bench_ctx *x = p->x;
	int reps = x->o->reps, r, n = p->n, irq_ok = 1;
	double v[6][reps], overlap = 1;
	struct stats st, su, sw, sk, sf, si, so;
	size_t pg = x->b->page_kb * 1024;
	char cl[1024];
	double ops_v[reps];

	for (r = 0; r < reps; r++) {
		v[0][r] = rp[r].ops_per_s;
		v[1][r] = rp[r].us_per_op;
		v[2][r] = rp[r].wall_ms;
		v[3][r] = rp[r].skew_us;
		v[4][r] = rp[r].faults_per_op;
		v[5][r] = rp[r].irqs_per_op;
		ops_v[r] = rp[r].ops;
		irq_ok &= rp[r].irqs_per_op >= 0;
		overlap = rp[r].overlap < overlap ? rp[r].overlap : overlap;
	}
	overlap = round(overlap * 1000) / 1000;
	stats_compute(v[0], reps, &st);
	stats_compute(v[1], reps, &su);
	stats_compute(v[2], reps, &sw);
	stats_compute(v[3], reps, &sk);
	stats_compute(v[4], reps, &sf);
	stats_compute(v[5], reps, &si);
	stats_compute(ops_v, reps, &so);
	cpu_list(cl, sizeof(cl), n);
	const struct cell row[] = {
		CELL_S(x->b->name), CELL_U(x->page_kb),
		CELL_S(kind_names[p->kind]), CELL_D(n), CELL_F(st.median),
		CELL_F(st.median / n), CELL_F(su.median),
		CELL_U(p->kind == KIND_UNMAP ? pg : p->len), CELL_U(pg),
		CELL_D((long long)so.median), CELL_F(sf.median),
		CELL_OPT(irq_ok, si.median), CELL_F(sw.median),
		CELL_F(overlap), CELL_F(st.min), CELL_F(st.max),
		CELL_F(st.cv), CELL_D(reps), CELL_D(n > start_cpus->n), CELL_S(cl),
		CELL_F(sk.median), CELL_D(overlap < MIN_OVERLAP),
		CELL_D(so.median / n < GOOD_OPS),
	};

	emit_row(row, NCELLS(row));
	progress("%-14s %-6s %3d threads%s: %12.0f ops/s (%.0f per thread), "
		 "%.2f us/op, %.2f faults/op, overlap %.2f%s",
		 x->b->name, kind_names[p->kind], n,
		 n > start_cpus->n ? " (oversubscribed)" : "", st.median,
		 st.median / n, su.median, sf.median, overlap,
		 overlap < MIN_OVERLAP ? " (low: no scaling measured)" : "");
	if (irq_ok)
		progress("  %.3f TLB shootdowns per op (/proc/interrupts)",
			 si.median);
}

/* whether p's threads' regions fit at once; 0, or -1 with why */
static int fits(const struct pt *p, char *why, size_t wn)
{
	const struct backing *b = p->x->b;
	size_t pg = b->page_kb * 1024;
	/* file: the file and the private copies (a private hugetlb mapping
	 * reserves its length), unmap: one page */
	unsigned long per = p->kind == KIND_UNMAP ? pg :
			    p->kind == KIND_FILE ? 2 * p->len : p->len;
	unsigned long need_kb = (unsigned long)p->n * (per / 1024);
	long have_kb = avail_kb(b);

	snprintf(why, wn, "%d threads x %lu kB need %lu kB; %s has %ld kB "
		 "free", p->n, per / 1024, need_kb, b->pool_kb ? "the pool" :
		 "MemAvailable", have_kb);
	return have_kb >= 0 && (unsigned long)have_kb >= need_kb ? 0 : -1;
}

static int point(struct pt *p)
{
	const struct bench_ctx *x = p->x;
	struct rep *rp, scratch;
	char why[300], at[64];
	int r, rc = 0;

	snprintf(at, sizeof(at), "kind=%s threads=%d", kind_names[p->kind],
		 p->n);
	if (fits(p, why, sizeof(why))) {
		emit_skip(x, at, why);
		return 0;
	}
	rp = calloc(x->o->reps, sizeof(*rp));
	if (!rp) {
		emit_error("out of memory");
		return -1;
	}
	for (r = -x->o->warmup; r < x->o->reps && !rc; r++)
		rc = one_rep(p, r, r >= 0 ? &rp[r] : &scratch, why,
			     sizeof(why));
	if (rc == 1) {
		/* the kernel refused the drop on this backing: said, no row */
		emit_skip(x, at, why);
		rc = 0;
	} else if (!rc) {
		check_duration(rp[0].wall_ms * 1e6);
		emit(p, rp);
	}
	free(rp);
	return rc;
}

static int measure(const struct bench_ctx *x)
{
	size_t pg = x->page_kb * 1024;
	struct pt p;
	char why[300], at[32];
	int kind, k, rc = 0;

	for (kind = 0; kind < NKINDS; kind++) {
		if (!kind_on[kind])
			continue;
		if (!kind_applies(x->b, kind, why, sizeof(why))) {
			snprintf(at, sizeof(at), "kind=%s", kind_names[kind]);
			if (kinds_arg != all_kinds)
				emit_skip(x, at, why);
			continue;
		}
		for (k = 0; k < counts.n; k++) {
			p = (struct pt){ .x = x, .kind = kind, .n = counts.v[k],
					 .len = (x->o->sizes[x->si] + pg - 1) /
						pg * pg };
			if (point(&p))
				rc = -1;
		}
	}
	return rc;
}

static int check_opts(char *why, size_t n)
{
	char *copy, *t, *save = NULL;
	int k;

	/* --threads: "1,2,4", by default 1 to the number of CPUs allowed */
	if (parse_counts(&tasks_arg, "--threads", "thread", oversubscribe, "",
			 &counts, why, n))
		return -1;
	copy = strdup(kinds_arg);
	for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < NKINDS && strcmp(t, kind_names[k]); k++)
			;
		if (k == NKINDS) {
			snprintf(why, n, "--kind: '%s' is not a kind (a comma "
				 "list of anon, file, shared, unmap)", t);
			free(copy);
			return -1;
		}
		kind_on[k] = 1;
	}
	free(copy);
	return 0;
}

/*
 * How this kernel sends remote flushes, as far as user space can tell:
 * "kvm_pv" where KVM offers its paravirtual flush (CPUID 0x40000001 EAX
 * bit 9, KVM_FEATURE_PV_TLB_FLUSH, and no realtime hint, EDX bit 0): a
 * Linux guest then flags a preempted vCPU to flush at its next entry
 * instead of sending it an IPI, so the TLB line counts only the IPIs to
 * running vCPUs, fewer than the flushes; "ipi" otherwise on x86 (bare
 * metal, a TCG guest); "broadcast" elsewhere (arm64's TLBI).  AMD's
 * INVLPGB (Linux 6.15 on) also flushes with no IPI: its cpuinfo flag is
 * for the Python side to read.
 */
static const char *flush_via(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	char sig[13];

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 : "a"(1), "c"(0));
	if (!(c >> 31 & 1))
		return "ipi";
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 : "a"(0x40000000), "c"(0));
	memcpy(sig, &b, 4);
	memcpy(sig + 4, &c, 4);
	memcpy(sig + 8, &d, 4);
	sig[12] = 0;
	if (strcmp(sig, "KVMKVMKVM") || a < 0x40000001)
		return "ipi";
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 : "a"(0x40000001), "c"(0));
	return (a >> 9 & 1) && !(d & 1) ? "kvm_pv" : "ipi";
#else
	return "broadcast";
#endif
}

static void start(struct counters *c)
{
	char cl[1024];

	(void)c;
	cpu_list(cl, sizeof(cl), start_cpus->n);
	printf("@meta tlbflush {\"allowed_cpus\": \"%s\", \"pinning\": "
	       "\"thread i on CPU allowed_cpus[i %% %d]\", \"duration_ms\": %d, "
	       "\"op\": \"write a page, drop it (anon, file, shared: "
	       "MADV_DONTNEED; unmap: munmap), read it back\", "
	       "\"shootdowns\": \"%s\", \"flush_via\": \"%s\", "
	       "\"min_overlap\": %.2f}\n", cl, start_cpus->n, duration_ms,
	       tlb_irqs() >= 0 ? "/proc/interrupts TLB line, "
	       "summed over CPUs, around each repetition" : "none: no TLB "
	       "line in /proc/interrupts (arm64 broadcasts TLBI, no IPI)",
	       flush_via(), MIN_OVERLAP);
	if (as_processes || no_drop)
		progress("DISTORTED (test only):%s%s",
			 as_processes ? " tasks are processes, no shared mm" :
			 "", no_drop ? " no drop" : "");
}

static const struct bench_opt tlbflush_opts[] = {
	{ .name = "threads", .arg = "LIST", .kind = OPT_STR, .dst = &tasks_arg,
	  .help = "thread counts, e.g. 1,2,4 (default 1 to the number of CPUs "
	  "allowed); --sizes gives each thread's region" },
	{ .name = "kind", .arg = "LIST", .kind = OPT_STR, .dst = &kinds_arg,
	  .help = "anon, file, shared, unmap (will-it-scale's tlb_flush2, 1, "
	  "3, and munmap; default every kind that applies to the backing)" },
	{ .name = "duration-ms", .arg = "MS", .kind = OPT_INT,
	  .dst = &duration_ms, .min = 1,
	  .help = "each thread's timed operations last this long (200)" },
	{ .name = "oversubscribe", .kind = OPT_FLAG, .dst = &oversubscribe,
	  .help = "allow more threads than CPUs (rows say oversubscribed=1)" },
	{ .name = "as-processes", .kind = OPT_FLAG, .dst = &as_processes,
	  .help = "test only: run the tasks as processes (no shared memory "
	  "map, so no shootdown; a distorted instrument)" },
	{ .name = "stagger-ms", .arg = "MS", .kind = OPT_INT,
	  .dst = &stagger_ms, .min = 0,
	  .help = "test only: thread 1 starts its timed operations this late "
	  "(a test of the overlap gating; 0)" },
	{ .name = "no-drop", .kind = OPT_FLAG, .dst = &no_drop,
	  .help = "test only: leave out MADV_DONTNEED (a distorted "
	  "instrument)" },
	{ 0 },
};

static const struct bench tlbflush_bench = {
	.name = "tlbflush",
	.desc = "TLB shootdowns: drops per second of N threads of one process "
		"each writing and dropping pages of its own region",
	.columns = "backing %s, page_kb %u, kind %s, threads %d, "
		   "ops_per_s %.1f, ops_per_s_per_thread %.1f, us_per_op %.4f, "
		   "region_bytes %u, bytes_per_op %u, ops %d, "
		   "faults_per_op %.3f, tlb_irqs_per_op %.3f, wall_ms %.3f, "
		   "overlap %.3f, ops_per_s_min %.1f, ops_per_s_max %.1f, "
		   "cv %.4f, reps %d, oversubscribed %d, cpus %s, "
		   "start_skew_us %.1f, low_overlap %d, short_window %d",
	.key = "backing,kind,threads,region_bytes",
	.metric = "ops_per_s",
	.lower_is_better = 0,
	.opts = tlbflush_opts,
	.min_wss = 4096,
	.maps_own = 1,
	.check = check_opts,
	.start = start,
	.measure = measure,
};
BENCH_REGISTER(tlbflush_bench);
