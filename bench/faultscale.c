// SPDX-License-Identifier: GPL-2.0
/*
 * faultscale.c - fault scalability, will-it-scale style: N tasks, as
 * processes or as threads, each in a loop of map its own region, write one
 * byte to every 4 KB base page (read one, in kind read), unmap; faults per
 * second against N.
 *
 * The kinds (column kind), will-it-scale's page_fault tests where one
 * applies to the backing:
 *   anon    page_fault1: a private mapping with no file pages behind it
 *           (devzero, thp, maphugetlb, devhugetlb): each fault takes a new
 *           cleared page, munmap frees it.
 *   cow     page_fault2: MAP_PRIVATE of the task's file (hugetlbfs, memfd),
 *           filled before the window: each fault copies a page.
 *   shared  page_fault3: the task's object (hugetlbfs, memfd, shm) kept
 *           across iterations and filled before the window: each fault
 *           maps a page already in it.
 *   read    page_fault4: MAP_PRIVATE, PROT_READ of the task's file
 *           (hugetlbfs, memfd), filled before the window, each 4 KB base
 *           page read: each fault maps the file's page, copying nothing
 *           (its untimed iteration checks that in /proc/self/pagemap, and
 *           every iteration that it read the file's bytes).  A private
 *           mapping of a hugetlb file reserves its length in the pool at
 *           mmap, read-only or not, and munmap gives the reservation back:
 *           both are in the window, as for cow.  Not shm (a SysV segment
 *           has no private mapping: a read-only attachment is shared's
 *           path) nor devhugetlb (each mmap is a new empty file, so a read
 *           fault of its private mapping takes a new cleared page, as anon).
 *   fresh   a new object per iteration (hugetlbfs, memfd, shm): each fault
 *           adds a new cleared page to it.  All of a repetition's objects
 *           are made before the window and destroyed after it, so their
 *           pages are freed after it too (anon frees its pages at munmap,
 *           in the window), and a task holds `iterations` regions of the
 *           pool at once.
 * In every kind the timed window holds only mmap (shmat), the writes (the
 * reads) and munmap (shmdt): no file is created, opened, sized or closed
 * in it, and no /proc file is read (pagemap is read in the untimed
 * iteration).  A segment is marked for removal at its first
 * attach and an untouched attachment of it is held until the objects are
 * destroyed, so none outlives the process.
 *
 * A repetition: the tasks start (task i pinned to the i % n-th CPU this
 * process was allowed to run on at start, before the runner pinned it),
 * each makes its objects and runs one untimed iteration (its stack, heap
 * and, for a process, the copy-on-write faults fork leaves are taken
 * there), then waits at a spinning barrier: the last to arrive releases
 * all, with no wake-up to wait for (a task that slept there is counted,
 * barrier_sleeps).  Each task reads its clock and its own fault count
 * (getrusage RUSAGE_SELF in a process, RUSAGE_THREAD in a thread) around
 * its timed iterations.  The window is the first task's start to the last
 * task's end: faults per second is all tasks' faults over that window;
 * overlap is the share of it in which all ran, and a row whose overlap is
 * below MIN_OVERLAP is marked (low_overlap) and measured no scaling.
 * The row's overlap is its worst repetition's; its other columns are
 * medians over the repetitions.  --verbose prints each timed repetition's
 * task windows and faults ("# faultscale: windows ..."), from which all of
 * that can be done again.
 *
 * Every task must count exactly pages x iterations faults.  Fewer fail the
 * row.  More: with thp, a multiple of 511 per iteration is a 2 MB range
 * that fell back to 4 KB pages (512 faults for one), counted and said
 * (thp_fallbacks); anything else is a fault outside the region in the
 * window (a page of the task's own the kernel unmapped meanwhile): the
 * repetition is taken again, up to STRAY_TRIES times, and said so.
 *
 * --iterations 0 (the default) takes enough iterations for --min-faults
 * faults per task and repetition (1000); fresh is held to what the pool
 * holds, and a row short of 1000 says why (short_window).  A task
 * count the pool (or, for the others, the free memory) cannot hold at all
 * is skipped and said so (@meta skip).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner.h"
#include "tasks.h"

#define STRAY_TRIES 3		/* takes of a repetition with stray faults */
#define MIN_OVERLAP 0.9		/* below: the row is marked low_overlap */
#define GOOD_FAULTS 1000	/* per task and repetition, or short_window */
#define THP_BYTES (2UL << 20)
#define THP_EXTRA 511		/* more faults of a 2 MB range in 4 KB pages */
#define FILL 0x5a		/* cow, shared, read: each base page's first byte */

enum { MODE_PROCESS, MODE_THREAD, MODE_BOTH };
static const char *const mode_names[] = { "process", "thread", "both", NULL };
enum { KIND_ANON, KIND_FRESH, KIND_COW, KIND_SHARED, KIND_READ, NKINDS };
static const char *const kind_names[] = { "anon", "fresh", "cow", "shared",
					  "read", NULL };

static int mode_opt = MODE_BOTH;
static const char *tasks_arg;
/* --kind; by default every kind, each where it applies (said in full) */
static const char all_kinds[] = "anon,fresh,cow,shared,read";
static const char *kinds_arg = all_kinds;
static int kind_on[NKINDS];
static int iter_opt;		/* --iterations; 0: enough for min_faults */
static int min_faults = 1000;
static int oversubscribe;
static int stray_left;		/* --stray: repetitions left to add one to */
static int fallback_left;	/* --thp-fallback: the same for a fallback */
static int copy_left;		/* --read-copy: the same for a copied page */

static struct task_counts counts;	/* --tasks */

/* what one task reports; in memory shared with the parent */
struct task_res {
	double t0, t1;		/* its timed iterations, CLOCK_MONOTONIC ns */
	long faults;
	long fallbacks;		/* thp: 2 MB ranges faulted in 4 KB pages */
	long sleeps;		/* voluntary context switches at the barrier */
	long file_pages;	/* read, cow: its untimed mapping's file pages */
	int cpu;
	int failed;
	char why[256];
};

/* one repetition's barrier and results (MAP_SHARED: forks see it) */
struct rep_area {
	int ready;		/* tasks at the barrier */
	int abort;		/* a task died or never started: leave it */
	int stray;		/* task 0 adds a fault outside its region */
	int fallback;		/* task 0 makes its first 2 MB fall back */
	int copy;		/* read: task 0 copies its first page, untimed */
	struct task_res r[MAX_TASKS];
};

struct task_arg {
	const struct backing *b;
	size_t size;
	int who;		/* RUSAGE_SELF or RUSAGE_THREAD */
	int i, n;		/* this task, of n */
	int kind, iters;
	struct rep_area *a;
};

/* a task's objects: one, or for fresh one per iteration and the warm-up */
struct objs {
	struct mapping *m;
	struct mapping *hold;	/* OBJ_SEGMENT: an untouched attachment */
	int n, made;
};

static long sleeps_of(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return ru.ru_nvcsw;
}

static int is_thp(const struct backing *b)
{
	return !b->pool_kb && b->page_kb > 4;
}

/* 1 if kind applies to b; else 0 with why */
static int kind_applies(const struct backing *b, int kind, char *why,
			size_t n)
{
	int obj = b->ops->object;

	if (kind == KIND_ANON ? obj == OBJ_NONE :
	    kind == KIND_COW || kind == KIND_READ ? obj == OBJ_FILE :
	    obj != OBJ_NONE)
		return 1;
	if (kind == KIND_ANON)
		snprintf(why, n, "anon is for backings whose pages go at "
			 "munmap (devzero, thp, maphugetlb, devhugetlb)");
	else if (kind == KIND_COW)
		snprintf(why, n, "cow needs a file backing (hugetlbfs, memfd)");
	else if (kind == KIND_READ)
		snprintf(why, n, "read needs a file with pages in it to map "
			 "privately (hugetlbfs, memfd): a segment has no private "
			 "mapping, and a private mapping of a device or of "
			 "nothing has no file pages to read");
	else
		snprintf(why, n, "%s needs an object that outlives the mapping "
			 "(hugetlbfs, memfd, shm)", kind_names[kind]);
	return 0;
}

/*
 * cow and read map a file privately (read with PROT_READ alone), every
 * other kind shares the object
 */
static int kind_flags(const struct task_arg *t)
{
	return (t->kind == KIND_COW ? MAP_F_PRIVATE :
		t->kind == KIND_READ ? MAP_F_PRIVATE | MAP_F_READONLY :
		MAP_F_SHARED) |
	       (t->b->ops->object == OBJ_SEGMENT ? MAP_F_KEEP : 0);
}

static int is_filled(int kind)
{
	return kind == KIND_COW || kind == KIND_SHARED || kind == KIND_READ;
}

/*
 * Object k of a task: prepared, a segment held by an untouched
 * attachment, and for cow, shared and read its pages filled (through a
 * shared mapping, populated, FILL written to each base page, then
 * unmapped); 0, or -1 with why.
 */
static int make_obj(const struct task_arg *t, struct objs *o, int k,
		    char *why, size_t n)
{
	struct mapping *m = &o->m[k], fill;
	size_t i;

	if (backing_prepare(t->b, t->size, m, why, n))
		return -1;
	o->made = k + 1;
	if (t->b->ops->object == OBJ_SEGMENT) {
		/* marks it for removal; the copy in m keeps the id */
		o->hold[k] = *m;
		if (backing_attach(&o->hold[k], 0, why, n))
			return -1;
	}
	if (!is_filled(t->kind))
		return 0;
	fill = *m;
	if (backing_attach(&fill, MAP_F_POPULATE | MAP_F_KEEP | MAP_F_SHARED,
			   why, n))
		return -1;
	for (i = 0; i < fill.len; i += PAGE)
		fill.addr[i] = FILL;
	backing_detach(&fill);
	return 0;
}

static void drop_obj(struct objs *o, int k)
{
	if (!o->m[k].b)		/* never made */
		return;
	if (o->hold[k].addr) {
		/* the segment goes with its last attachment, here */
		backing_detach(&o->hold[k]);
		o->m[k].shmid = -1;	/* removed: no IPC_RMID of a reused id */
	}
	backing_release(&o->m[k]);
	o->m[k].b = NULL;
}

/* objects from..to-1, the array made first; 0, or -1 with why */
static int make_objs(const struct task_arg *t, struct objs *o, int from,
		     int to, char *why, size_t n)
{
	int k;

	o->n = t->kind == KIND_FRESH ? t->iters + 1 : 1;
	if (!o->m)
		o->m = calloc(2 * o->n, sizeof(*o->m));
	if (!o->m) {
		snprintf(why, n, "out of memory");
		return -1;
	}
	o->hold = o->m + o->n;
	for (k = from; k < to; k++)
		if (make_obj(t, o, k, why, n))
			return -1;
	return 0;
}

static void drop_objs(struct objs *o)
{
	while (o->made > 0)
		drop_obj(o, --o->made);
	free(o->m);
	o->m = NULL;
}

/*
 * How many of m's pages (of the backing's size) map a page of a file, not
 * an anonymous one: /proc/self/pagemap's bit 61 (PM_FILE, "file page or
 * shared anon"), which needs no privilege; a page not present (bit 63
 * clear) is an error.  The count, or -1 with why.
 */
static long file_pages(const struct mapping *m, char *why, size_t n)
{
	size_t pg = m->b->page_kb * 1024, off;
	long base = sysconf(_SC_PAGESIZE), count = 0;
	unsigned long long e;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0) {
		snprintf(why, n, "open /proc/self/pagemap: %s", strerror(errno));
		return -1;
	}
	for (off = 0; off < m->len; off += pg) {
		if (pread(fd, &e, sizeof(e), (off_t)((unsigned long)(m->addr +
			  off) / base * sizeof(e))) != (ssize_t)sizeof(e)) {
			snprintf(why, n, "read /proc/self/pagemap: %s",
				 strerror(errno));
			count = -1;
			break;
		}
		if (!(e >> 63 & 1)) {
			snprintf(why, n, "page %zu of the region not present "
				 "after the touch (pagemap)", off / pg);
			count = -1;
			break;
		}
		count += e >> 61 & 1;
	}
	close(fd);
	return count;
}

/*
 * One iteration: map, write a byte to every base page (read: read it, and
 * check that it is the file's FILL), unmap.  s (the untimed iteration of
 * cow and read): how many of the mapping's pages are the file's, into
 * s->file_pages before the unmap.  copy (--read-copy): read's mapping
 * made writable and its first byte written, so that page is a private
 * copy holding the file's bytes.  0, or -1 with why.
 */
static int cycle(const struct task_arg *t, struct mapping *m, int fallback,
		 struct task_res *s, int copy, char *why, size_t n)
{
	long sum = 0;
	size_t i;

	if (backing_attach(m, kind_flags(t) & ~(copy ? MAP_F_READONLY : 0),
			   why, n))
		return -1;
	if (fallback)	/* --thp-fallback: this range in 4 KB pages */
		madvise(m->addr, THP_BYTES, MADV_NOHUGEPAGE);
	if (copy)
		m->addr[0] = FILL;
	if (t->kind == KIND_READ)
		for (i = 0; i < m->len; i += PAGE)
			sum += ((volatile char *)m->addr)[i];
	else
		for (i = 0; i < m->len; i += PAGE)
			((volatile char *)m->addr)[i] = 1;
	if (s && (s->file_pages = file_pages(m, why, n)) < 0) {
		backing_detach(m);
		return -1;
	}
	backing_detach(m);
	if (t->kind == KIND_READ && sum != (long)FILL * (long)(m->len / PAGE)) {
		snprintf(why, n, "read faults gave bytes summing to %ld, not "
			 "the file's %d in each of its %zu base pages", sum,
			 FILL, m->len / PAGE);
		return -1;
	}
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

/*
 * iters iterations between two readings of the clock and of the fault
 * count, into t0, t1 and faults: the warm-up one on the last object (for
 * cow and read with its pages counted into file_pages, and task 0's
 * copied for --read-copy), the timed ones on object k (fresh) or 0; 0,
 * or -1 with why
 */
static int timed_cycles(const struct task_arg *t, struct objs *o, int warm,
			struct task_res *s, char *why, size_t n)
{
	int iters = warm ? 1 : t->iters, k, err = 0;
	int hooks = !warm && t->i == 0;
	int private = t->kind == KIND_COW || t->kind == KIND_READ;
	long f0;

	f0 = faults_of(t->who);
	s->t0 = now_ns();
	if (hooks && t->a->stray)
		stray_fault();
	for (k = 0; k < iters && !err; k++)
		err = cycle(t, &o->m[warm ? o->n - 1 :
				     t->kind == KIND_FRESH ? k : 0],
			    hooks && k == 0 && t->a->fallback,
			    warm && private ? s : NULL,
			    warm && t->i == 0 && t->a->copy, why, n);
	s->t1 = now_ns();
	s->faults = faults_of(t->who) - f0;
	return err;
}

/*
 * The start: each task says it is here and spins until all n are (the
 * last to come releases all at once, no wake-up in between); it yields
 * while spinning only when tasks share CPUs.  0, or -1 to give up.
 */
static int barrier(const struct task_arg *t, struct task_res *r)
{
	struct rep_area *a = t->a;
	long s0 = sleeps_of(t->who);

	__atomic_add_fetch(&a->ready, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&a->ready, __ATOMIC_ACQUIRE) < t->n) {
		if (__atomic_load_n(&a->abort, __ATOMIC_ACQUIRE))
			return -1;
		if (t->n > start_cpus->n)
			sched_yield();
		else
			cpu_relax();
	}
	r->sleeps = sleeps_of(t->who) - s0;
	return 0;
}

static void *task(void *p)
{
	struct task_arg *t = p;
	struct task_res *r = &t->a->r[t->i];
	struct objs o = { 0 };
	char why[sizeof(r->why)];
	int err;

	pin_self(r->cpu);
	/*
	 * The untimed iteration runs the very code of the timed ones, so what
	 * its first run faults in (a fork's first clock read maps the vDSO
	 * data; a fork's child takes a fault on each page of code and stack
	 * it reaches first, which depends on the layout) is in before the
	 * timed window, and only the region's faults are left in it.  fresh
	 * runs it on an object of its own, the last, gone before the others
	 * are made: a task holds at most `iterations` regions at once.
	 */
	if (t->kind == KIND_FRESH) {
		err = make_objs(t, &o, t->iters, t->iters + 1, why,
				sizeof(why)) ||
		      timed_cycles(t, &o, 1, r, why, sizeof(why));
		if (!err) {
			drop_obj(&o, t->iters);
			o.made = 0;
			err = make_objs(t, &o, 0, t->iters, why, sizeof(why));
		}
	} else {
		err = make_objs(t, &o, 0, 1, why, sizeof(why)) ||
		      timed_cycles(t, &o, 1, r, why, sizeof(why));
	}
	if (barrier(t, r) == 0 && !err)
		err = timed_cycles(t, &o, 0, r, why, sizeof(why));
	drop_objs(&o);
	r->failed = err;
	if (err)
		snprintf(r->why, sizeof(r->why), "%s", why);
	return NULL;
}

/*
 * waits until all n tasks are at the barrier, or one died before it: 0 or
 * -1.  A task may end as soon as all are there, so an ended one counts as
 * dead only while the count is still short (WNOWAIT: reaped later).
 */
static int watch_ready(struct rep_area *a, int n, const pid_t *pid)
{
	struct timespec tick = { 0, 2000000 };
	siginfo_t si;
	int i;

	while (__atomic_load_n(&a->ready, __ATOMIC_ACQUIRE) < n) {
		nanosleep(&tick, NULL);
		for (i = 0; i < n; i++) {
			si.si_pid = 0;
			if (waitid(P_PID, pid[i], &si, WEXITED | WNOHANG |
				   WNOWAIT) || !si.si_pid ||
			    __atomic_load_n(&a->ready, __ATOMIC_ACQUIRE) >= n)
				continue;
			emit_error("task %d (pid %d) died before it was ready "
				   "(status %d)", i, pid[i], si.si_status);
			return -1;
		}
	}
	return 0;
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
	if (i < n || watch_ready(t->a, n, pid)) {
		rc = -1;
		__atomic_store_n(&t->a->abort, 1, __ATOMIC_RELEASE);
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
			rc = -1;
			__atomic_store_n(&t->a->abort, 1, __ATOMIC_RELEASE);
			break;
		}
	}
	while (i-- > 0)
		pthread_join(th[i], NULL);
	return rc;
}

/* one repetition's numbers */
struct rep {
	double faults_per_s, us_per_fault, wall_ms, overlap, skew_us;
	long faults, sleeps, fallbacks;
};

/*
 * checks each task's faults against pages x iterations: 0; 1 when one
 * counted more that is no thp fallback (stray faults: take the repetition
 * again); -1 on fewer, a failed task, or (cow, read) an untimed mapping
 * whose pages were not what the kind says: read's all the file's own, no
 * copy taken; cow's none, each a copy (error emitted)
 */
static int check_tasks(const struct bench_ctx *x, const struct task_arg *t,
		       struct rep_area *a, long pages)
{
	const char *md = mode_names[t->who == RUSAGE_SELF ? MODE_PROCESS :
				    MODE_THREAD];
	long want = pages * t->iters, extra;
	int i;

	for (i = 0; i < t->n; i++) {
		struct task_res *r = &a->r[i];

		extra = r->faults - want;
		if (r->failed) {
			emit_error("%s %s %s, %d tasks: task %d: %s", x->b->name,
				   kind_names[t->kind], md, t->n, i, r->why);
			return -1;
		}
		if (extra > 0 && is_thp(x->b) && extra % THP_EXTRA == 0) {
			r->fallbacks = extra / THP_EXTRA;
			progress("%s %s, %d tasks: task %d: %ld range(s) of 2 MB "
				 "fell back to 4 KB pages (%ld more faults)",
				 x->b->name, md, t->n, i, r->fallbacks, extra);
		} else if (extra > 0) {
			progress("%s %s %s, %d tasks: task %d counted %ld "
				 "faults, %ld outside its region: repetition "
				 "taken again", x->b->name, kind_names[t->kind],
				 md, t->n, i, r->faults, extra);
			return 1;
		} else if (extra < 0) {
			emit_error("%s %s %s, %d tasks: task %d counted %ld "
				   "faults, not %d iterations x %ld pages of "
				   "%lu kB = %ld", x->b->name,
				   kind_names[t->kind], md, t->n, i, r->faults,
				   t->iters, pages, x->page_kb, want);
			return -1;
		}
		if ((t->kind == KIND_READ && r->file_pages != pages) ||
		    (t->kind == KIND_COW && r->file_pages != 0)) {
			emit_error("%s %s %s, %d tasks: task %d: %ld of the %ld "
				   "pages of its private mapping were the file's "
				   "own after the %s (pagemap PM_FILE), not %ld: "
				   "%s", x->b->name, kind_names[t->kind], md,
				   t->n, i, r->file_pages, pages,
				   t->kind == KIND_READ ? "reads" : "writes",
				   t->kind == KIND_READ ? pages : 0,
				   t->kind == KIND_READ ?
				   "a read fault took a page of its own" :
				   "a write fault left the file's page mapped");
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
	int i;

	*out = (struct rep){ 0 };
	for (i = 0; i < n; i++) {
		const struct task_res *r = &a->r[i];

		first = r->t0 < first ? r->t0 : first;
		max_start = r->t0 > max_start ? r->t0 : max_start;
		last = r->t1 > last ? r->t1 : last;
		min_end = r->t1 < min_end ? r->t1 : min_end;
		out->faults += r->faults;
		out->sleeps += r->sleeps;
		out->fallbacks += r->fallbacks;
		per += (r->t1 - r->t0) / 1e3 / r->faults;
	}
	out->wall_ms = (last - first) / 1e6;
	out->faults_per_s = out->faults / ((last - first) / 1e9);
	out->us_per_fault = per / n;
	out->skew_us = (max_start - first) / 1e3;
	/* the share of the window in which all n tasks were running */
	out->overlap = min_end > max_start ?
		       (min_end - max_start) / (last - first) : 0;
}

/* one point: a backing, kind, mode and task count, and its plan */
struct pt {
	const struct bench_ctx *x;
	int md, kind, n, iters;
	size_t len;
	long pages;		/* of the backing's page size, per region */
	char short_why[200];	/* why a task faults fewer than GOOD_FAULTS */
};

/*
 * --verbose: each task's window of a timed repetition, in ns from the
 * first start, and its faults: the row's arithmetic (window, rate,
 * overlap, skew) can be done again from these alone (the tests do)
 */
static void print_windows(const struct pt *p, int r, const struct rep_area *a)
{
	char buf[MAX_TASKS * 48];
	double first = 1e300;
	size_t o = 0;
	int i;

	for (i = 0; i < p->n; i++)
		first = a->r[i].t0 < first ? a->r[i].t0 : first;
	for (i = 0; i < p->n && o < sizeof(buf); i++)
		o += snprintf(buf + o, sizeof(buf) - o, " %.0f..%.0f:%ld",
			      a->r[i].t0 - first, a->r[i].t1 - first,
			      a->r[i].faults);
	progress("windows %s kind=%s mode=%s tasks=%d rep %d:%s",
		 p->x->b->name, kind_names[p->kind], mode_names[p->md], p->n,
		 r, buf);
}

/*
 * --verbose, cow and read: how many pages of each task's untimed private
 * mapping were the file's own after its writes (cow: 0, each a copy) or
 * its reads (read: all, none copied), from /proc/self/pagemap
 */
static void print_pagemap(const struct pt *p, int r, const struct rep_area *a)
{
	char buf[MAX_TASKS * 24];
	size_t o = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < p->n && o < sizeof(buf); i++)
		o += snprintf(buf + o, sizeof(buf) - o, " %ld",
			      a->r[i].file_pages);
	progress("pagemap %s kind=%s mode=%s tasks=%d rep %d: file pages of "
		 "%ld per task:%s", p->x->b->name, kind_names[p->kind],
		 mode_names[p->md], p->n, r, p->pages, buf);
}

/*
 * one repetition of point p (r: its number, negative for a warm-up); 0,
 * 1 (stray faults), or -1 (error emitted)
 */
static int one_rep(const struct pt *p, int r, struct rep *out)
{
	struct task_arg t[MAX_TASKS];
	struct rep_area *a;
	int i, rc;

	a = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED) {
		emit_error("mmap of the tasks' shared area: %s",
			   strerror(errno));
		return -1;
	}
	for (i = 0; i < p->n; i++) {
		t[i] = (struct task_arg){ .b = p->x->b, .size = p->len, .i = i,
					  .n = p->n, .kind = p->kind,
					  .iters = p->iters, .a = a,
					  .who = p->md == MODE_PROCESS ?
					  RUSAGE_SELF : RUSAGE_THREAD };
		a->r[i].cpu = task_cpu(i);
		a->r[i].file_pages = -1;	/* until the untimed iteration's */
	}
	if (stray_left > 0) {
		a->stray = 1;
		stray_left--;
	}
	if (fallback_left > 0 && is_thp(p->x->b)) {
		a->fallback = 1;
		fallback_left--;
	}
	if (copy_left > 0 && p->kind == KIND_READ) {
		a->copy = 1;
		copy_left--;
	}
	rc = p->md == MODE_PROCESS ? run_processes(t, p->n) :
				     run_threads(t, p->n);
	if (!rc)
		rc = check_tasks(p->x, t, a, p->pages);
	if (!rc)
		summarise(a, p->n, out);
	if (!rc && r >= 0 && p->x->o->verbose)
		print_windows(p, r, a);
	if (!rc && r >= 0 && p->x->o->verbose &&
	    (p->kind == KIND_READ || p->kind == KIND_COW))
		print_pagemap(p, r, a);
	munmap(a, sizeof(*a));
	return rc;
}

/*
 * regions a task of p holds at once: fresh its iterations' objects, cow
 * its file and its private copies, read its file and what its private
 * mapping reserves at mmap (the pool reserves a private mapping's length,
 * whether it is written or not), else one
 */
static int regions(const struct pt *p)
{
	return p->kind == KIND_FRESH ? p->iters :
	       p->kind == KIND_COW || p->kind == KIND_READ ? 2 : 1;
}

/* whether p's regions fit at once; 0, or -1 with why */
static int fits(const struct pt *p, char *why, size_t wn)
{
	const struct backing *b = p->x->b;
	unsigned long need_kb = (unsigned long)p->n * regions(p) *
				(p->len / 1024);
	long have_kb = avail_kb(b);
	char regs[64] = "";

	if (regions(p) > 1)
		snprintf(regs, sizeof(regs), "%d regions of ", regions(p));
	if (b->pool_kb)
		snprintf(why, wn, "%d tasks x %s%zu kB need %lu pages of %lu "
			 "kB; the pool has %ld free", p->n, regs,
			 p->len / 1024, need_kb / b->pool_kb, b->pool_kb,
			 have_kb / (long)b->pool_kb);
	else
		snprintf(why, wn, "%d tasks x %s%zu kB need %lu kB; "
			 "MemAvailable is %ld kB", p->n, regs, p->len / 1024,
			 need_kb, have_kb);
	return have_kb >= 0 && (unsigned long)have_kb >= need_kb ? 0 : -1;
}

/*
 * p's iterations: --iterations, else enough for min_faults per task;
 * fresh as many as the pool holds at once.  Says in short_why why a task
 * faults fewer than GOOD_FAULTS.  0, or -1 with why (skip the point).
 */
static int plan(struct pt *p, char *why, size_t wn)
{
	long want = iter_opt ? iter_opt :
		    (min_faults + p->pages - 1) / p->pages, fit;

	p->iters = want;
	p->short_why[0] = 0;
	if (p->kind == KIND_FRESH && !iter_opt) {
		fit = avail_kb(p->x->b) /
		      ((long)p->n * (long)(p->len / 1024));
		if (fit < want) {
			p->iters = fit < 1 ? 1 : fit;
			snprintf(p->short_why, sizeof(p->short_why),
				 "fresh holds an object per iteration; the "
				 "pool holds %ld regions per task",
				 fit < 0 ? 0 : fit);
		}
	}
	if (p->iters * p->pages < GOOD_FAULTS && !p->short_why[0])
		snprintf(p->short_why, sizeof(p->short_why), iter_opt ?
			 "--iterations %d" : "--min-faults %d",
			 iter_opt ? iter_opt : min_faults);
	return fits(p, why, wn);
}

static void emit_skip(const struct bench_ctx *x, const char *point,
		      const char *why)
{
	char esc[400];

	json_str(esc, sizeof(esc), why);
	printf("@meta skip {\"bench\": \"faultscale\", \"backing\": \"%s\", "
	       "\"point\": \"%s\", \"reason\": %s}\n", x->b->name, point, esc);
	progress("skip %s %s: %s", x->b->name, point, why);
}

static void emit(const struct pt *p, struct rep *rp)
{
	const struct bench_ctx *x = p->x;
	int reps = x->o->reps, r, n = p->n;
	double v[4][reps];
	double overlap = 1;
	long sleeps = 0, fallbacks = 0;
	struct stats st, su, sw, sk;
	char cl[1024];

	for (r = 0; r < reps; r++) {
		v[0][r] = rp[r].faults_per_s;
		v[1][r] = rp[r].us_per_fault;
		v[2][r] = rp[r].wall_ms;
		v[3][r] = rp[r].skew_us;
		overlap = rp[r].overlap < overlap ? rp[r].overlap : overlap;
		sleeps += rp[r].sleeps;
		fallbacks += rp[r].fallbacks;
	}
	/*
	 * To the precision the row prints it with, so that low_overlap is
	 * what the rule gives on the column (0.8996 prints as 0.900: not low).
	 */
	overlap = round(overlap * 1000) / 1000;
	stats_compute(v[0], reps, &st);
	stats_compute(v[1], reps, &su);
	stats_compute(v[2], reps, &sw);
	stats_compute(v[3], reps, &sk);
	cpu_list(cl, sizeof(cl), n);
	const struct cell row[] = {
		CELL_S(x->b->name), CELL_U(x->page_kb),
		CELL_S(mode_names[p->md]), CELL_D(n), CELL_F(st.median),
		CELL_F(st.median / n), CELL_F(su.median), CELL_U(p->len),
		CELL_D(p->iters), CELL_D(rp[0].faults), CELL_F(sw.median),
		CELL_F(overlap), CELL_F(st.min), CELL_F(st.max), CELL_F(st.cv),
		CELL_D(reps), CELL_D(n > start_cpus->n), CELL_S(cl),
		CELL_S(kind_names[p->kind]), CELL_D(p->iters * p->pages),
		CELL_D(!!p->short_why[0]), CELL_F(sk.median), CELL_D(sleeps),
		CELL_D(overlap < MIN_OVERLAP), CELL_D(fallbacks),
	};

	emit_row(row, NCELLS(row));
	progress("%-14s %-6s %-7s %3d tasks%s: %12.0f faults/s (%.0f per "
		 "task), %.3f us/fault, overlap %.2f%s", x->b->name,
		 kind_names[p->kind], mode_names[p->md], n,
		 n > start_cpus->n ? " (oversubscribed)" : "", st.median,
		 st.median / n, su.median, overlap,
		 overlap < MIN_OVERLAP ? " (low: no scaling measured)" : "");
}

/* warmup + reps repetitions of point p, then the row; 0 or -1 */
static int point(struct pt *p)
{
	const struct bench_ctx *x = p->x;
	struct rep *rp, scratch;
	char why[300], at[64];
	int r, rc = 0;

	snprintf(at, sizeof(at), "kind=%s mode=%s tasks=%d",
		 kind_names[p->kind], mode_names[p->md], p->n);
	if (plan(p, why, sizeof(why))) {
		emit_skip(x, at, why);
		return 0;
	}
	if (p->short_why[0])
		progress("%s %s: %ld faults per task, short of %d (%s)",
			 x->b->name, at, p->iters * p->pages, GOOD_FAULTS,
			 p->short_why);
	rp = calloc(x->o->reps, sizeof(*rp));
	if (!rp) {
		emit_error("out of memory");
		return -1;
	}
	for (r = -x->o->warmup; r < x->o->reps && !rc; r++) {
		int tries = 0;

		do
			rc = one_rep(p, r, r >= 0 ? &rp[r] : &scratch);
		while (rc == 1 && ++tries < STRAY_TRIES);
		if (rc == 1) {
			emit_error("%s %s: faults outside the region in %d "
				   "takes in a row", x->b->name, at,
				   STRAY_TRIES);
			rc = -1;
		}
	}
	if (!rc) {
		check_duration(rp[0].wall_ms * 1e6);
		emit(p, rp);
	}
	free(rp);
	return rc;
}

static int measure(const struct bench_ctx *x)
{
	size_t pg = x->page_kb * 1024, len;
	struct pt p = { .x = x };
	char why[300], at[32];
	int kind, md, k, rc = 0;

	len = (x->o->sizes[x->si] + pg - 1) / pg * pg;
	for (kind = 0; kind < NKINDS; kind++) {
		if (!kind_on[kind])
			continue;
		if (!kind_applies(x->b, kind, why, sizeof(why))) {
			snprintf(at, sizeof(at), "kind=%s", kind_names[kind]);
			if (kinds_arg != all_kinds)	/* asked for by name */
				emit_skip(x, at, why);
			continue;
		}
		for (md = MODE_PROCESS; md <= MODE_THREAD; md++) {
			if (mode_opt != MODE_BOTH && mode_opt != md)
				continue;
			for (k = 0; k < counts.n; k++) {
				p = (struct pt){ .x = x, .md = md, .kind = kind,
						 .n = counts.v[k], .len = len,
						 .pages = len / pg };
				if (point(&p))
					rc = -1;	/* the row failed; go on */
			}
		}
	}
	return rc;
}

/* --kind: "anon,shared"; 0, or -1 with why */
static int parse_kinds(char *why, size_t n)
{
	char *copy, *t, *save = NULL;
	int k;

	copy = strdup(kinds_arg);
	for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < NKINDS && strcmp(t, kind_names[k]); k++)
			;
		if (k == NKINDS) {
			snprintf(why, n, "--kind: '%s' is not a kind (a comma "
				 "list of anon, fresh, cow, shared, read)", t);
			free(copy);
			return -1;
		}
		kind_on[k] = 1;
	}
	free(copy);
	return 0;
}

static int check_opts(char *why, size_t n)
{
	if (parse_counts(&tasks_arg, "--tasks", "task", oversubscribe,
			 " (rows say oversubscribed=1)", &counts, why, n))
		return -1;
	return parse_kinds(why, n);
}

static void start(struct counters *c)
{
	char cl[1024];

	(void)c;
	cpu_list(cl, sizeof(cl), start_cpus->n);
	printf("@meta faultscale {\"allowed_cpus\": \"%s\", \"pinning\": "
	       "\"task i on CPU allowed_cpus[i %% %d]\", \"fault_count\": "
	       "\"getrusage minflt+majflt: RUSAGE_SELF in each process, "
	       "RUSAGE_THREAD in each thread\", \"window\": \"first task's "
	       "start to last task's end; in it only mmap (shmat), the "
	       "writes (read: the reads) and munmap (shmdt)\", \"barrier\": \"spinning: the "
	       "last task to arrive releases all; barrier_sleeps counts "
	       "voluntary context switches there\", \"min_faults\": %d, "
	       "\"min_overlap\": %.2f}\n", cl, start_cpus->n, min_faults,
	       MIN_OVERLAP);
}

static const struct bench_opt faultscale_opts[] = {
	{ .name = "tasks", .arg = "LIST", .kind = OPT_STR, .dst = &tasks_arg,
	  .help = "task counts, e.g. 1,2,4 (default 1 to the number of CPUs "
	  "allowed); --sizes gives each task's region" },
	{ .name = "mode", .arg = "MODE", .kind = OPT_CHOICE, .dst = &mode_opt,
	  .choices = mode_names,
	  .help = "process, thread or both (both)" },
	{ .name = "kind", .arg = "LIST", .kind = OPT_STR, .dst = &kinds_arg,
	  .help = "anon, fresh, cow, shared, read (will-it-scale's "
	  "page_fault1, -, 2, 3, 4; default every kind that applies to the "
	  "backing)" },
	{ .name = "iterations", .arg = "N", .kind = OPT_INT,
	  .dst = &iter_opt, .min = 0,
	  .help = "timed map-touch-unmap iterations per task and repetition "
	  "(0: enough for --min-faults)" },
	{ .name = "min-faults", .arg = "N", .kind = OPT_INT,
	  .dst = &min_faults, .min = 1,
	  .help = "faults per task and repetition that --iterations 0 aims "
	  "at (1000)" },
	{ .name = "oversubscribe", .kind = OPT_FLAG, .dst = &oversubscribe,
	  .help = "allow more tasks than CPUs (rows say oversubscribed=1)" },
	{ .name = "stray", .arg = "N", .kind = OPT_INT, .dst = &stray_left,
	  .min = 0,
	  .help = "add one fault outside the region to the first N "
	  "repetitions (a test of the recount; 0)" },
	{ .name = "thp-fallback", .arg = "N", .kind = OPT_INT,
	  .dst = &fallback_left, .min = 0,
	  .help = "thp: fault the first 2 MB of task 0 in 4 KB pages in the "
	  "first N repetitions (a test of the fallback count; 0)" },
	{ .name = "read-copy", .arg = "N", .kind = OPT_INT, .dst = &copy_left,
	  .min = 0,
	  .help = "read: task 0 maps its untimed iteration writable and "
	  "writes its first page, a private copy, in the first N repetitions "
	  "(a test of the pagemap check; 0)" },
	{ 0 },
};

static const struct bench faultscale_bench = {
	.name = "faultscale",
	.desc = "faults per second of N tasks (processes, threads) each "
		"mapping, touching and unmapping its own region",
	.columns = "backing %s, page_kb %u, mode %s, tasks %d, "
		   "faults_per_s %.1f, faults_per_s_per_task %.1f, "
		   "us_per_fault %.4f, region_bytes %u, iterations %d, "
		   "faults %d, wall_ms %.3f, overlap %.3f, "
		   "faults_per_s_min %.1f, faults_per_s_max %.1f, cv %.4f, "
		   "reps %d, oversubscribed %d, cpus %s, kind %s, "
		   "faults_per_task %d, short_window %d, "
		   "start_skew_us %.1f, barrier_sleeps %d, low_overlap %d, "
		   "thp_fallbacks %d",
	.key = "backing,kind,mode,tasks,region_bytes",
	.metric = "faults_per_s",
	.lower_is_better = 0,
	.opts = faultscale_opts,
	.min_wss = 4096,
	.maps_own = 1,
	.check = check_opts,
	.start = start,
	.measure = measure,
};
BENCH_REGISTER(faultscale_bench);
