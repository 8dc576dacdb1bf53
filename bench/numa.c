// SPDX-License-Identifier: GPL-2.0
/*
 * numa.c - binding a mapping to a node and reading back where its pages
 * are.  See numa.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "numa.h"

#define MPOL_BIND 2
#define MAX_NODES 1024

int numa_node_of_cpu(const char *root, int cpu)
{
	char path[400];
	struct dirent *e;
	DIR *d;
	int node = -1;

	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%d",
		 root ? root : "", cpu);
	d = opendir(path);
	while (d && (e = readdir(d)))
		if (sscanf(e->d_name, "node%d", &node) == 1)
			break;
	if (d)
		closedir(d);
	return node;
}

int numa_bind(void *addr, size_t len, int node, char *why, size_t n)
{
	unsigned long mask[MAX_NODES / (8 * sizeof(long))] = { 0 };
	size_t bits = 8 * sizeof(long);

	if (node < 0 || node >= MAX_NODES)
		return snprintf(why, n, "no node %d to bind to", node), -1;
	mask[node / bits] = 1UL << (node % bits);
	/* maxnode counts one more than the kernel reads (mbind(2)) */
	if (syscall(SYS_mbind, addr, len, MPOL_BIND, mask, MAX_NODES + 1, 0))
		return snprintf(why, n, "mbind to node %d: %s", node,
				strerror(errno)), -1;
	return 0;
}

/* appends the N<node>=<pages> tokens of one numa_maps line to json */
static void nodes_json(char *line, char *json, size_t n)
{
	size_t l = strlen(json);
	const char *sep = "";
	char *t, *save;
	int node;
	long pages, kb = 0;

	l += snprintf(json + l, n - l, ", \"nodes\": {");
	for (t = strtok_r(line, " \n", &save); t && l < n;
	     t = strtok_r(NULL, " \n", &save))
		if (sscanf(t, "N%d=%ld", &node, &pages) == 2) {
			l += snprintf(json + l, n - l, "%s\"%d\": %ld", sep,
				      node, pages);
			sep = ", ";
		} else {
			sscanf(t, "kernelpagesize_kB=%ld", &kb);
		}
	/* the nodes' counts are in pages of kernelpagesize_kB */
	if (l < n)
		snprintf(json + l, n - l, "}, \"page_kb\": %ld", kb);
}

int numa_placement(const void *addr, char *json, size_t n)
{
	char line[4096], policy[64];
	unsigned long start;
	FILE *f = fopen("/proc/self/numa_maps", "r");
	int rc = -1;

	snprintf(json, n, "\"policy\": null, \"nodes\": null, "
		 "\"page_kb\": null");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx %63s", &start, policy) == 2 &&
		    start == (unsigned long)addr) {
			snprintf(json, n, "\"policy\": \"%s\"", policy);
			nodes_json(line + strcspn(line, " "), json, n);
			rc = 0;
			break;
		}
	if (f)
		fclose(f);
	return rc;
}
