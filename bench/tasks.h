/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tasks.h - what the benchmarks that run N tasks of their own on the CPUs
 * this process may use have in common (faultscale's processes or threads,
 * tlbflush's threads, multiload's load threads): the CPUs they were
 * allowed at start, pinning a task to one, a spin-wait's pause, the task
 * count list of --tasks/--threads, a task's fault count and the memory
 * free for a backing.  One copy here, so that their tasks are placed,
 * counted and refused alike.
 *
 * Needs _GNU_SOURCE before the first system header (CPU_SETSIZE), as
 * every file of bench/ defines it.
 */
#ifndef BENCH_TASKS_H
#define BENCH_TASKS_H

#include <sched.h>
#include <stddef.h>

struct backing;

#define MAX_TASKS 256		/* a task count's largest */
#define MAX_COUNTS 32		/* task counts in one list */

/* a spinning wait's pause: lets the sibling hyperthread run, saves power */
#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ volatile("yield" ::: "memory")
#else
#define cpu_relax() __asm__ volatile("" ::: "memory")
#endif

/*
 * The CPUs this process may run on, read by a constructor before the
 * runner pins it to one (the runner's pin comes after option parsing);
 * the tasks spread over these.  CPU 0 alone if they cannot be read.
 */
struct start_cpus {
	int cpu[CPU_SETSIZE];
	int n;
};
extern const struct start_cpus *const start_cpus;

/* task i's CPU: the (i % n)-th of start_cpus, so tasks wrap round them */
int task_cpu(int i);

/* pins the caller, a process or a thread, to cpu */
void pin_self(int cpu);

/* "0;1;0": the CPU of each of n tasks, as the rows record it */
void cpu_list(char *dst, size_t sz, int n);

/* the task counts of a list, ascending */
struct task_counts {
	int v[MAX_COUNTS];
	int n;
	char dflt[MAX_COUNTS * 4];	/* the default list, spelt out */
};

/*
 * *arg, a comma list of task counts ("1,2,4"), into c; by default 1 to the
 * number of CPUs allowed (spelt out into c->dflt and *arg pointed at it,
 * so that the method metadata shows the list).  opt and noun name the
 * option and what it counts in the messages ("--threads", "thread"); a
 * count over start_cpus->n is refused unless oversubscribe, note said
 * after "add --oversubscribe to measure that".  0, or -1 with why.
 */
int parse_counts(const char **arg, const char *opt, const char *noun,
		 int oversubscribe, const char *note, struct task_counts *c,
		 char *why, size_t n);

/* faults so far, minor and major, of who (RUSAGE_SELF, RUSAGE_THREAD) */
long faults_of(int who);

/*
 * kB free for b: its hugetlb pool's free and unreserved pages (the whole
 * pool: none of these binds a node), or MemAvailable; -1 unknown
 */
long avail_kb(const struct backing *b);

#endif
