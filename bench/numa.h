/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numa.h - where the backings' memory lies (issue 19, point 8).  On a
 * host with more than one node the runner binds each mapping to the node
 * of the CPU it is pinned to (mbind(MPOL_BIND), before the mapping is
 * touched), so a hugetlb backing mapped after the others cannot take its
 * pages from the remote node; after the touch it reads the mapping's
 * pages per node back from /proc/self/numa_maps for meta.json.  No
 * libnuma: two system calls and two files.
 */
#ifndef BENCH_NUMA_H
#define BENCH_NUMA_H

#include <stddef.h>

/* the node of cpu from sysfs under root (NULL: "/"); -1 when none shown */
int numa_node_of_cpu(const char *root, int cpu);
/* binds [addr, addr + len) to node; 0, or -1 with why */
int numa_bind(void *addr, size_t len, int node, char *why, size_t n);
/*
 * The mapping at addr in /proc/self/numa_maps as JSON members:
 * "policy": "bind:0", "nodes": {"0": 512}, "page_kb": 4 (the unit of
 * the nodes' counts); 0, or -1 when the kernel has
 * no numa_maps (no CONFIG_NUMA) or no line for addr (json says null).
 */
int numa_placement(const void *addr, char *json, size_t n);

#endif
