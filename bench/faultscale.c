// SPDX-License-Identifier: GPL-2.0
/*
 * faultscale.c - fault scalability, will-it-scale style: N tasks, as
 * processes or as threads, each in a loop of map its own region, write one
 * byte to every 4 KB base page, unmap; faults per second against N.
 *
 * One loop iteration is the whole life of a mapping (backing.h's four
 * steps): prepare, attach, touch, detach, release.  Every backing thus
 * makes a new object per iteration (a fresh file in hugetlbfs, memfd,
 * shm segment, /dev/zero or /dev/hugetlb descriptor), so every iteration
 * faults freshly cleared pages and gives them back at its end.  Keeping one
 * hugetlbfs file or memfd per task instead would leave its pages in the
 * file after munmap, and from the second iteration on those backings would
 * map pages that are already there while the anonymous ones still clear
 * new pages: not the same work.  The cost of prepare and release (open,
 * mkstemp, shmget, close) is part of each iteration, as mmap and munmap
 * are part of will-it-scale's page_fault loops.
 *
 * A repetition: the tasks start (task i pinned to the i % n-th CPU this
 * process was allowed to run on at start, before the runner pinned it),
 * each runs one untimed iteration (its stack, heap and, for a process,
 * the copy-on-write faults fork leaves are taken there), says it is ready
 * and waits; when all N are ready they are released together.  Each task
 * reads its clock and its own fault count (getrusage RUSAGE_SELF in a
 * process, RUSAGE_THREAD in a thread) around its timed iterations.  The
 * window is the first task's start to the last task's end: faults per
 * second is all tasks' faults over that window.  Every task must count
 * exactly pages x iterations faults.  Fewer fail the row (the region was
 * not faulted as claimed).  More means a fault outside the region landed in
 * the window (seen once in a few hundred guest repetitions: a page of the
 * task's own the kernel unmapped meanwhile, e.g. by migration): the
 * repetition is taken again, up to STRAY_TRIES times, and said so; only
 * if every try has one does the row fail.
 *
 * Each hugetlb task holds one region at a time, so N tasks need N regions
 * of the pool at once: a task count the pool (or, for the others, the
 * free memory) cannot hold is skipped and said so (@meta skip).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner.h"

#define MAX_TASKS 256
#define MAX_COUNTS 32
#define STRAY_TRIES 3		/* takes of a repetition with stray faults */

enum { MODE_PROCESS, MODE_THREAD, MODE_BOTH };
static const char *const mode_names[] = { "process", "thread", "both", NULL };

static int mode_opt = MODE_BOTH;
static const char *tasks_arg;
static int iterations = 4;
static int oversubscribe;
static int stray_left;		/* --stray: repetitions left to add one to */

static int counts[MAX_COUNTS];	/* the task counts, ascending */
static int ncounts;
static int cpus[CPU_SETSIZE];	/* the CPUs allowed at start */
static int ncpus;

/* what one task reports; in memory shared with the parent */
struct task_res {
	double t0, t1;		/* its timed iterations, CLOCK_MONOTONIC ns */
	long faults;
	int cpu;
	int failed;
	char why[256];
};

/* one repetition's rendezvous and results (MAP_SHARED: forks see it) */
struct rep_area {
	int ready;		/* tasks done with their untimed iteration */
	int go;			/* 0 wait, 1 run, 2 give up */
	int stray;		/* task 0 adds a fault outside its region */
	struct task_res r[MAX_TASKS];
};

struct task_arg {
	const struct backing *b;
	size_t size;
	int who;		/* RUSAGE_SELF or RUSAGE_THREAD */
	int i;
	struct rep_area *a;
};

/*
 * The CPUs this process may run on, read before the runner pins it to
 * one (the runner's pin comes after option parsing); the tasks spread
 * over these.
 */
__attribute__((constructor)) static void save_cpus(void)
{
	cpu_set_t set;
	int c;

	if (sched_getaffinity(0, sizeof(set), &set)) {
		cpus[ncpus++] = 0;
		return;
	}
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			cpus[ncpus++] = c;
}

static long futex(int *w, int op, int val, const struct timespec *ts)
{
	/* not FUTEX_PRIVATE: the word is shared between processes */
	return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}

static long faults_of(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

/* one iteration: the mapping's whole life; 0, or -1 with why */
static int cycle(const struct backing *b, size_t size, char *why, size_t n)
{
	struct mapping m;
	size_t i;

	if (backing_prepare(b, size, &m, why, n))
		return -1;
	if (backing_attach(&m, 0, why, n)) {
		backing_release(&m);
		return -1;
	}
	for (i = 0; i < m.len; i += PAGE)
		((volatile char *)m.addr)[i] = 1;
	backing_detach(&m);
	backing_release(&m);
	return 0;
}

/* --stray: one fault outside the region, on a page of our own */
static void stray_fault(void)
{
	char *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED) {
		*(volatile char *)p = 1;
		munmap(p, PAGE);
	}
}

static void pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* pid 0 is the calling thread, in a process and a thread alike */
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * iters iterations between two readings of the clock and of the fault
 * count, into t0, t1 and faults; 0, or -1 with why
 */
static int timed_cycles(const struct task_arg *t, int iters, int stray,
			struct task_res *s, char *why, size_t n)
{
	long f0;
	int k, err = 0;

	f0 = faults_of(t->who);
	s->t0 = now_ns();
	if (stray)
		stray_fault();
	for (k = 0; k < iters && !err; k++)
		err = cycle(t->b, t->size, why, n);
	s->t1 = now_ns();
	s->faults = faults_of(t->who) - f0;
	return err;
}

static void *task(void *p)
{
	struct task_arg *t = p;
	struct task_res *r = &t->a->r[t->i];
	char why[sizeof(r->why)];
	int err;

	pin_self(r->cpu);
	/*
	 * The untimed iteration runs the very code of the timed ones, so what
	 * its first run faults in (a fork's first clock read maps the vDSO
	 * data; a fork's child takes a fault on each page of code and stack
	 * it reaches first, which depends on the layout) is in before the
	 * timed window, and only the region's faults are left in it.
	 */
	err = timed_cycles(t, 1, 0, r, why, sizeof(why));
	__atomic_add_fetch(&t->a->ready, 1, __ATOMIC_SEQ_CST);
	futex(&t->a->ready, FUTEX_WAKE, 1, NULL);
	while (__atomic_load_n(&t->a->go, __ATOMIC_SEQ_CST) == 0)
		futex(&t->a->go, FUTEX_WAIT, 0, NULL);
	if (t->a->go != 1)
		return NULL;
	if (!err)
		err = timed_cycles(t, iterations, t->a->stray && t->i == 0, r,
				   why, sizeof(why));
	r->failed = err;
	if (err)
		snprintf(r->why, sizeof(r->why), "%s", why);
	return NULL;
}

/* waits until all n tasks are ready (or a forked one died); 0 or -1 */
static int wait_ready(struct rep_area *a, int n, const pid_t *pid)
{
	struct timespec second = { 1, 0 };
	int seen, i, st;

	while ((seen = __atomic_load_n(&a->ready, __ATOMIC_SEQ_CST)) < n) {
		futex(&a->ready, FUTEX_WAIT, seen, &second);
		for (i = 0; pid && i < n; i++)
			if (waitpid(pid[i], &st, WNOHANG) == pid[i]) {
				emit_error("task %d (pid %d) died before it was "
					   "ready (wait status %#x)", i, pid[i],
					   st);
				return -1;
			}
	}
	return 0;
}

static void release(struct rep_area *a, int go)
{
	__atomic_store_n(&a->go, go, __ATOMIC_SEQ_CST);
	futex(&a->go, FUTEX_WAKE, MAX_TASKS, NULL);
}

static int run_processes(struct task_arg *t, int n)
{
	pid_t pid[MAX_TASKS] = { 0 };
	int i, st, rc = 0;

	fflush(stdout);
	for (i = 0; i < n; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			task(&t[i]);
			_exit(0);	/* not exit(): no atexit cleanup here */
		}
		if (pid[i] < 0) {
			emit_error("fork: %s", strerror(errno));
			break;
		}
	}
	if (i < n || wait_ready(t->a, n, pid)) {
		rc = -1;
		release(t->a, 2);
	} else {
		release(t->a, 1);
	}
	while (i-- > 0)
		if (waitpid(pid[i], &st, 0) != pid[i] ||
		    !WIFEXITED(st) || WEXITSTATUS(st)) {
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
			break;
		}
	}
	if (i < n || wait_ready(t->a, n, NULL)) {
		rc = -1;
		release(t->a, 2);
	} else {
		release(t->a, 1);
	}
	while (i-- > 0)
		pthread_join(th[i], NULL);
	return rc;
}

/* one repetition's numbers */
struct rep {
	double faults_per_s, us_per_fault, wall_ms, overlap;
	long faults;
};

/*
 * checks each task's faults against pages x iterations: 0; 1 when one
 * counted more (stray faults: take the repetition again); -1 on fewer or a
 * failed task (error emitted)
 */
static int check_tasks(const struct bench_ctx *x, const char *mode,
		       struct rep_area *a, int n, long pages)
{
	long want = pages * iterations;
	int i;

	for (i = 0; i < n; i++) {
		const struct task_res *r = &a->r[i];

		if (r->failed) {
			emit_error("%s %s, %d tasks: task %d: %s", x->b->name,
				   mode, n, i, r->why);
			return -1;
		}
		if (r->faults > want) {
			progress("%s %s, %d tasks: task %d counted %ld faults, "
				 "%ld outside its region: repetition taken "
				 "again", x->b->name, mode, n, i, r->faults,
				 r->faults - want);
			return 1;
		}
		if (r->faults < want) {
			emit_error("%s %s, %d tasks: task %d counted %ld faults, "
				   "not %d iterations x %ld pages of %lu kB = "
				   "%ld", x->b->name, mode, n, i, r->faults,
				   iterations, pages, x->page_kb, want);
			return -1;
		}
	}
	return 0;
}

/* the window and rates of one checked repetition */
static void summarise(struct rep_area *a, int n, struct rep *out)
{
	double first = 1e300, last = 0, min_end = 1e300, max_start = 0;
	double per = 0;
	long total = 0;
	int i;

	for (i = 0; i < n; i++) {
		const struct task_res *r = &a->r[i];

		first = r->t0 < first ? r->t0 : first;
		max_start = r->t0 > max_start ? r->t0 : max_start;
		last = r->t1 > last ? r->t1 : last;
		min_end = r->t1 < min_end ? r->t1 : min_end;
		total += r->faults;
		per += (r->t1 - r->t0) / 1e3 / r->faults;
	}
	out->faults = total;
	out->wall_ms = (last - first) / 1e6;
	out->faults_per_s = total / ((last - first) / 1e9);
	out->us_per_fault = per / n;
	/* the share of the window in which all n tasks were running */
	out->overlap = min_end > max_start ?
		       (min_end - max_start) / (last - first) : 0;
}

/* one repetition of n tasks in mode md; 0, or -1 (error emitted) */
static int one_rep(const struct bench_ctx *x, int md, int n, size_t len,
		   struct rep *out)
{
	struct task_arg t[MAX_TASKS];
	struct rep_area *a;
	long pages = len / (x->page_kb * 1024);
	int i, rc;

	a = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED) {
		emit_error("mmap of the tasks' shared area: %s",
			   strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		t[i] = (struct task_arg){ .b = x->b, .size = len, .i = i,
					  .a = a, .who = md == MODE_PROCESS ?
					  RUSAGE_SELF : RUSAGE_THREAD };
		a->r[i].cpu = cpus[i % ncpus];
	}
	if (stray_left > 0) {
		a->stray = 1;
		stray_left--;
	}
	rc = md == MODE_PROCESS ? run_processes(t, n) : run_threads(t, n);
	if (!rc)
		rc = check_tasks(x, mode_names[md], a, n, pages);
	if (!rc)
		summarise(a, n, out);
	munmap(a, sizeof(*a));
	return rc;
}

static long meminfo_kb(const char *key)
{
	char line[128];
	long v = -1;
	size_t l = strlen(key);
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, l) && line[l] == ':') {
			v = atol(line + l + 1);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

static long pool_pages(unsigned long kb, const char *file)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/"
		 "hugepages-%lukB/%s", kb, file);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/*
 * Whether n regions of len fit at once: in the backing's hugetlb pool
 * (free and not reserved), else in MemAvailable.  0, or -1 with why.
 */
static int fits(const struct backing *b, int n, size_t len, char *why,
		size_t wn)
{
	unsigned long need_kb = n * (len / 1024);
	long have_kb;

	if (b->pool_kb) {
		have_kb = (pool_pages(b->pool_kb, "free_hugepages") -
			   pool_pages(b->pool_kb, "resv_hugepages")) *
			  (long)b->pool_kb;
		snprintf(why, wn, "%d tasks x %zu kB need %lu pages of %lu kB; "
			 "the pool has %ld free", n, len / 1024,
			 need_kb / b->pool_kb, b->pool_kb,
			 have_kb / (long)b->pool_kb);
	} else {
		have_kb = meminfo_kb("MemAvailable");
		snprintf(why, wn, "%d tasks x %zu kB need %lu kB; MemAvailable "
			 "is %ld kB", n, len / 1024, need_kb, have_kb);
	}
	return have_kb >= 0 && (unsigned long)have_kb >= need_kb ? 0 : -1;
}

static void emit_skip(const struct bench_ctx *x, int md, int n,
		      const char *why)
{
	char esc[400];

	json_str(esc, sizeof(esc), why);
	printf("@meta skip {\"bench\": \"faultscale\", \"backing\": \"%s\", "
	       "\"point\": \"mode=%s tasks=%d\", \"reason\": %s}\n",
	       x->b->name, mode_names[md], n, esc);
	progress("skip %s %s %d tasks: %s", x->b->name, mode_names[md], n, why);
}

/* "0;1;0": the CPU of each task, as the row records it */
static void cpu_list(char *dst, size_t sz, int n)
{
	size_t o = 0;
	int i;

	dst[0] = 0;
	for (i = 0; i < n && o + 8 < sz; i++)
		o += snprintf(dst + o, sz - o, "%s%d", i ? ";" : "",
			      cpus[i % ncpus]);
}

static void emit(const struct bench_ctx *x, int md, int n, size_t len,
		 struct rep *rp)
{
	int reps = x->o->reps, r;
	double v[3][reps];
	double overlap = 1;
	struct stats st, su, sw;
	char cl[1024];

	for (r = 0; r < reps; r++) {
		v[0][r] = rp[r].faults_per_s;
		v[1][r] = rp[r].us_per_fault;
		v[2][r] = rp[r].wall_ms;
		if (rp[r].overlap < overlap)
			overlap = rp[r].overlap;
	}
	stats_compute(v[0], reps, &st);
	stats_compute(v[1], reps, &su);
	stats_compute(v[2], reps, &sw);
	cpu_list(cl, sizeof(cl), n);
	/* the columns of faultscale_bench, in order */
	emit_row("%s,%lu,%s,%d,%.1f,%.1f,%.4f,%zu,%d,%ld,%.3f,%.3f,%.1f,%.1f,"
		 "%.4f,%d,%d,%s", x->b->name, x->page_kb, mode_names[md], n,
		 st.median, st.median / n, su.median, len, iterations,
		 rp[0].faults, sw.median, overlap, st.min, st.max, st.cv, reps,
		 n > ncpus, cl);
	progress("%-14s %-7s %3d tasks%s: %12.0f faults/s (%.0f per task), "
		 "%.3f us/fault, overlap %.2f", x->b->name, mode_names[md], n,
		 n > ncpus ? " (oversubscribed)" : "", st.median,
		 st.median / n, su.median, overlap);
}

/* warmup + reps repetitions of n tasks in mode md, then the row */
static int point(const struct bench_ctx *x, int md, int n, size_t len)
{
	struct rep *rp = calloc(x->o->reps, sizeof(*rp));
	struct rep scratch;
	int r, rc = 0;

	if (!rp) {
		emit_error("out of memory");
		return -1;
	}
	for (r = -x->o->warmup; r < x->o->reps && !rc; r++) {
		int tries = 0;

		do
			rc = one_rep(x, md, n, len, r >= 0 ? &rp[r] : &scratch);
		while (rc == 1 && ++tries < STRAY_TRIES);
		if (rc == 1) {
			emit_error("%s %s, %d tasks: faults outside the region "
				   "in %d takes in a row", x->b->name,
				   mode_names[md], n, STRAY_TRIES);
			rc = -1;
		}
	}
	if (!rc) {
		check_duration(rp[0].wall_ms * 1e6);
		emit(x, md, n, len, rp);
	}
	free(rp);
	return rc;
}

static int measure(const struct bench_ctx *x)
{
	size_t pg = x->page_kb * 1024, len;
	char why[300];
	int md, k, rc = 0;

	len = (x->o->sizes[x->si] + pg - 1) / pg * pg;
	for (md = MODE_PROCESS; md <= MODE_THREAD; md++) {
		if (mode_opt != MODE_BOTH && mode_opt != md)
			continue;
		for (k = 0; k < ncounts; k++) {
			if (fits(x->b, counts[k], len, why, sizeof(why)))
				emit_skip(x, md, counts[k], why);
			else if (point(x, md, counts[k], len))
				rc = -1;	/* the row failed; go on */
		}
	}
	return rc;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/*
 * --tasks: "1,2,4", by default 1 to the number of CPUs allowed (spelt
 * out, so that the method metadata shows the list); 0, or -1 with why
 */
static int parse_counts(char *why, size_t n)
{
	static char dflt[MAX_COUNTS * 4];
	char *copy, *t, *save = NULL, *end;
	size_t o = 0;
	long v;

	for (v = 1; !tasks_arg && v <= ncpus && v <= MAX_COUNTS; v++)
		o += snprintf(dflt + o, sizeof(dflt) - o, "%s%ld", o ? "," : "",
			      v);
	if (!tasks_arg)
		tasks_arg = dflt;
	ncounts = 0;
	copy = strdup(tasks_arg);
	for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		v = strtol(t, &end, 10);
		if (end == t || *end || v < 1 || v > MAX_TASKS ||
		    ncounts == MAX_COUNTS) {
			snprintf(why, n, "--tasks: '%s' is not a task count "
				 "(a comma list of at most %d counts, each 1 to "
				 "%d, e.g. 1,2,4)", t, MAX_COUNTS, MAX_TASKS);
			free(copy);
			return -1;
		}
		if (v > ncpus && !oversubscribe) {
			snprintf(why, n, "--tasks: %ld tasks on the %d CPU(s) "
				 "this process may use would share CPUs: add "
				 "--oversubscribe to measure that (rows say "
				 "oversubscribed=1), or ask for at most %d",
				 v, ncpus, ncpus);
			free(copy);
			return -1;
		}
		counts[ncounts++] = v;
	}
	free(copy);
	qsort(counts, ncounts, sizeof(counts[0]), cmp_int);
	return 0;
}

static void start(struct counters *c)
{
	char cl[1024];

	(void)c;
	cpu_list(cl, sizeof(cl), ncpus);
	printf("@meta faultscale {\"allowed_cpus\": \"%s\", \"pinning\": "
	       "\"task i on CPU allowed_cpus[i %% %d]\", \"fault_count\": "
	       "\"getrusage minflt+majflt: RUSAGE_SELF in each process, "
	       "RUSAGE_THREAD in each thread\", \"window\": \"first task's "
	       "start to last task's end\"}\n", cl, ncpus);
}

static const struct bench_opt faultscale_opts[] = {
	{ .name = "tasks", .arg = "LIST", .kind = OPT_STR, .dst = &tasks_arg,
	  .help = "task counts, e.g. 1,2,4 (default 1 to the number of CPUs "
	  "allowed); --sizes gives each task's region" },
	{ .name = "mode", .arg = "MODE", .kind = OPT_CHOICE, .dst = &mode_opt,
	  .choices = mode_names,
	  .help = "process, thread or both (both)" },
	{ .name = "iterations", .arg = "N", .kind = OPT_INT,
	  .dst = &iterations, .min = 1,
	  .help = "timed map-touch-unmap iterations per task and repetition "
	  "(4)" },
	{ .name = "oversubscribe", .kind = OPT_FLAG, .dst = &oversubscribe,
	  .help = "allow more tasks than CPUs (rows say oversubscribed=1)" },
	{ .name = "stray", .arg = "N", .kind = OPT_INT, .dst = &stray_left,
	  .min = 0,
	  .help = "add one fault outside the region to the first N "
	  "repetitions (a test of the recount; 0)" },
	{ 0 },
};

static const struct bench faultscale_bench = {
	.name = "faultscale",
	.desc = "faults per second of N tasks (processes, threads) each "
		"mapping, touching and unmapping its own region",
	.columns = "backing,page_kb,mode,tasks,faults_per_s,"
		   "faults_per_s_per_task,us_per_fault,region_bytes,iterations,"
		   "faults,wall_ms,overlap,faults_per_s_min,faults_per_s_max,cv,"
		   "reps,oversubscribed,cpus",
	.key = "backing,mode,tasks,region_bytes",
	.metric = "faults_per_s",
	.lower_is_better = 0,
	.opts = faultscale_opts,
	.min_wss = 4096,
	.maps_own = 1,
	.check = parse_counts,
	.start = start,
	.measure = measure,
};
BENCH_REGISTER(faultscale_bench);
