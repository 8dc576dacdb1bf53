// SPDX-License-Identifier: GPL-2.0
/*
 * tasks.c - the task scaffolding faultscale, tlbflush and multiload share.
 * See tasks.h.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "backing.h"
#include "hostfacts.h"
#include "tasks.h"

static struct start_cpus saved;
const struct start_cpus *const start_cpus = &saved;

/* before main: the runner pins the process once it has parsed options */
__attribute__((constructor)) static void save_cpus(void)
{
	cpu_set_t set;
	int c;

	if (sched_getaffinity(0, sizeof(set), &set)) {
		saved.cpu[saved.n++] = 0;
		return;
	}
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			saved.cpu[saved.n++] = c;
}

int task_cpu(int i)
{
	return saved.cpu[i % saved.n];
}

void pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* pid 0 is the calling thread, in a process and a thread alike */
	sched_setaffinity(0, sizeof(set), &set);
}

void cpu_list(char *dst, size_t sz, int n)
{
	size_t o = 0;
	int i;

	dst[0] = 0;
	for (i = 0; i < n && o + 8 < sz; i++)
		o += snprintf(dst + o, sz - o, "%s%d", i ? ";" : "",
			      task_cpu(i));
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int parse_counts(const char **arg, const char *opt, const char *noun,
		 int oversubscribe, const char *note, struct task_counts *c,
		 char *why, size_t n)
{
	char *copy, *t, *save = NULL, *end;
	size_t o = 0;
	long v;

	for (v = 1; !*arg && v <= saved.n && v <= MAX_COUNTS; v++)
		o += snprintf(c->dflt + o, sizeof(c->dflt) - o, "%s%ld",
			      o ? "," : "", v);
	if (!*arg)
		*arg = c->dflt;
	c->n = 0;
	copy = strdup(*arg);
	for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		v = strtol(t, &end, 10);
		if (end == t || *end || v < 1 || v > MAX_TASKS ||
		    c->n == MAX_COUNTS) {
			snprintf(why, n, "%s: '%s' is not a %s count (a comma "
				 "list of at most %d counts, each 1 to %d, e.g. "
				 "1,2,4)", opt, t, noun, MAX_COUNTS, MAX_TASKS);
			free(copy);
			return -1;
		}
		if (v > saved.n && !oversubscribe) {
			snprintf(why, n, "%s: %ld %ss on the %d CPU(s) this "
				 "process may use would share CPUs: add "
				 "--oversubscribe to measure that%s, or ask for "
				 "at most %d", opt, v, noun, saved.n, note,
				 saved.n);
			free(copy);
			return -1;
		}
		c->v[c->n++] = v;
	}
	free(copy);
	qsort(c->v, c->n, sizeof(c->v[0]), cmp_int);
	return 0;
}

long faults_of(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

long avail_kb(const struct backing *b)
{
	long f;

	if (!b->pool_kb)
		return host_meminfo_kb(NULL, "MemAvailable");
	f = host_pool_free(NULL, b->pool_kb, -1);
	return f < 0 ? -1 : f * (long)b->pool_kb;
}
