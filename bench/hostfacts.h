/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hostfacts.h - the one reader of each fact the host's /proc and /sys
 * state: a one-value file, a file's first line, a /proc/meminfo field and
 * the free pages of a hugetlb pool.  selftests/mm's vm_util.c is the
 * model.  A leaf: libc only.
 *
 * root prefixes the absolute paths it reads (NULL or "": the host's own),
 * so that the tests hand it a made-up tree (benchtool meminfo, poolfree).
 */
#ifndef BENCH_HOSTFACTS_H
#define BENCH_HOSTFACTS_H

#include <stddef.h>

/* the number a file starts with (sysfs, proc); -1 if no file or none */
long host_read_long(const char *path);

/* the first line of a file into buf, newline stripped; 0, or -1 */
int host_read_line(const char *path, char *buf, size_t n);

/*
 * /proc/meminfo's field key (exactly: "Active" is not "Active(anon)"), in
 * kB; -1 when the file or the field is missing
 */
long host_meminfo_kb(const char *root, const char *key);

/*
 * Pages of the hugetlb pool of kb kB pages a mapping can still take:
 * free less reserved; with node >= 0 also no more than that node has
 * free (a mapping bound there must get its pages there; a node has no
 * reserved count of its own).  -1 when a file is missing: the kernel
 * has no such pool, or no such node, and "unknown" is not "none".
 */
long host_pool_free(const char *root, unsigned long kb, int node);

#endif
