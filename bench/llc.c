// SPDX-License-Identifier: GPL-2.0
/*
 * llc.c - the last-level cache's size, from sysfs or CPUID, and the CPUs
 * a run's threads take by it.  See llc.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostfacts.h"
#include "llc.h"
#include "numa.h"
#include "size.h"

/* the first line of dir/name, newline stripped; 0, or -1 */
static int read_line(const char *dir, const char *name, char *buf, size_t n)
{
	char path[700];	/* a struct llc path and a name */

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return host_read_line(path, buf, n);
}

/* one cache index directory: its level and size when it holds data */
static void consider(const char *dir, struct llc *l)
{
	char level[32], type[32], size[32];
	unsigned long long bytes;
	int lv;

	if (read_line(dir, "level", level, sizeof(level)) ||
	    read_line(dir, "type", type, sizeof(type)) ||
	    read_line(dir, "size", size, sizeof(size)))
		return;
	if (strcmp(type, "Unified") && strcmp(type, "Data"))
		return;			/* instruction caches do not count */
	lv = atoi(level);
	/* sysfs writes sizes as "32768K" */
	if (!size_parse(size, &bytes) && bytes && lv > l->level) {
		l->level = lv;
		l->bytes = bytes;
		l->source = "sysfs";
		l->caches = 1;
		snprintf(l->path, sizeof(l->path), "%s", dir);
	}
}

static void from_sysfs(const char *root, int cpu, struct llc *l)
{
	char base[300], dir[600];
	struct dirent *e;
	DIR *d;

	snprintf(base, sizeof(base), "%s/sys/devices/system/cpu/cpu%d/cache",
		 root && *root ? root : "", cpu < 0 ? 0 : cpu);
	d = opendir(base);
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "index", 5))
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", base, e->d_name);
		consider(dir, l);
	}
	if (d)
		closedir(d);
}

/* glibc reads these from CPUID on x86; elsewhere there is no CPUID */
static void from_cpuid(struct llc *l)
{
#if defined(__x86_64__) || defined(__i386__)
	long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
	long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);

	if (l3 > 0) {
		l->bytes = l3;
		l->level = 3;
	} else if (l2 > 0) {
		l->bytes = l2;
		l->level = 2;
	} else {
		return;
	}
	l->source = "cpuid";
#else
	(void)l;
#endif
}

/* one last-level cache: the CPUs that share it, in the order found */
struct domain {
	char key[256];		/* its shared_cpu_list, as sysfs writes it */
	int node;		/* the node of its first CPU; -1 unknown */
	int first;		/* its lowest CPU */
	int rank;		/* its place among its node's caches */
	unsigned long long bytes;
	int level;
	int ncpus, used, planned;
	int *cpus;
};

/* domains sorted by rank, then node, then lowest CPU: round robin order */
static int cmp_domain(const void *a, const void *b)
{
	const struct domain *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank - y->rank;
	if (x->node != y->node)
		return x->node - y->node;
	return x->first - y->first;
}

/*
 * The domain of cpu in d[0..*nd): found by its LLC's shared_cpu_list, or
 * added; a CPU whose LLC sysfs does not show is a domain of its own.
 */
static struct domain *domain_of(const char *root, int cpu, struct domain *d,
				int *nd, int ncpus)
{
	struct llc l = { .source = "none" };
	char key[256] = "";
	int i;

	from_sysfs(root, cpu, &l);
	if (!l.bytes || read_line(l.path, "shared_cpu_list", key, sizeof(key)))
		snprintf(key, sizeof(key), "cpu%d alone", cpu);
	for (i = 0; i < *nd; i++)
		if (!strcmp(d[i].key, key))
			return &d[i];
	d = &d[(*nd)++];
	snprintf(d->key, sizeof(d->key), "%s", key);
	d->node = numa_node_of_cpu(root, cpu);
	d->first = cpu;
	d->bytes = l.bytes;
	d->level = l.level;
	d->cpus = calloc(ncpus, sizeof(int));
	return d;
}

/* thread t's CPU: the next free CPU of the next domain that has one */
static void place(struct domain *d, int nd, int n, int *plan)
{
	int t, g = 0, tried;

	for (t = 0; t < n; t++) {
		for (tried = 0; d[g].used == d[g].ncpus && tried < nd; tried++)
			g = (g + 1) % nd;
		if (tried == nd) {	/* more threads than CPUs: round two */
			for (g = 0; g < nd; g++)
				d[g].used = 0;
			g = 0;
		}
		plan[t] = d[g].cpus[d[g].used++];
		d[g].planned = 1;
		g = (g + 1) % nd;
	}
}

int llc_plan(const char *root, const cpu_set_t *cpus, int n, int use_cpuid,
	     int *plan, struct llc *l, char *why, size_t wn)
{
	int ncpus = CPU_COUNT(cpus), nd = 0, i, j, c, unknown = 0;
	struct domain *d = calloc(ncpus ? ncpus : 1, sizeof(*d)), *g;

	*l = (struct llc){ .source = "none" };
	if (!d || !ncpus || n < 1) {
		free(d);
		snprintf(why, wn, "%s", !d ? "out of memory" :
			 "no CPU or no thread to plan");
		return -1;
	}
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, cpus)) {
			g = domain_of(root, c, d, &nd, ncpus);
			if (!g->cpus)
				goto oom;
			g->cpus[g->ncpus++] = c;
		}
	for (i = 0; i < nd; i++)
		for (j = 0; j < i; j++)
			d[i].rank += d[j].node == d[i].node;
	qsort(d, nd, sizeof(*d), cmp_domain);
	place(d, nd, n, plan);
	for (i = 0; i < nd; i++) {
		if (!d[i].planned)
			continue;
		unknown |= !d[i].bytes;
		l->bytes += d[i].bytes;
		l->caches++;
		l->level = d[i].level > l->level ? d[i].level : l->level;
	}
	l->source = "sysfs";
	/* a CPU whose LLC sysfs does not show: CPUID's one cache, not summed */
	if (unknown)
		*l = (struct llc){ .source = "none" };
	if (!l->bytes && use_cpuid)
		from_cpuid(l);
	for (i = 0; i < nd; i++)
		free(d[i].cpus);
	free(d);
	if (l->bytes)
		return 0;
	snprintf(why, wn, "no cache size: %s/sys/devices/system/cpu/cpuN/cache "
		 "has no data or unified cache for every CPU of the run%s",
		 root && *root ? root : "", !use_cpuid ? "" :
#if defined(__x86_64__) || defined(__i386__)
		 " and CPUID reports none"
#else
		 " (no CPUID fallback on this architecture)"
#endif
		 );
	return -1;
oom:
	for (i = 0; i < nd; i++)
		free(d[i].cpus);
	free(d);
	snprintf(why, wn, "out of memory");
	return -1;
}
