/* SPDX-License-Identifier: GPL-2.0 */
/*
 * backing.h - the memory backings under test, one name each, used
 * everywhere (CSV rows, meta.json, --backings):
 *
 *   devzero      MAP_PRIVATE of /dev/zero + MADV_NOHUGEPAGE: the 4 KB baseline
 *   thp          anonymous memory + MADV_HUGEPAGE (reference)
 *   hugetlbfs    unlinked file in a hugetlbfs mount, ftruncate, mmap
 *   shm          shmget(SHM_HUGETLB), shmat, IPC_RMID
 *   devhugetlb   mmap of /dev/hugetlb (MAP_PRIVATE by default)
 *   maphugetlb   MAP_ANONYMOUS|MAP_HUGETLB (reference)
 *   memfd        memfd_create(MFD_HUGETLB) (reference)
 *   <name>-1G    the 1 GB variants of the five hugetlb backings
 *
 * Each mapping's page size is checked against /proc/self/smaps after it
 * has been touched; a mismatch is a failure, never a measurement.
 */
#ifndef BENCH_BACKING_H
#define BENCH_BACKING_H

#include <stddef.h>

enum backing_kind { BK_DEVZERO, BK_THP, BK_HUGETLBFS, BK_SHM, BK_DEVHUGETLB,
		    BK_MAPHUGETLB, BK_MEMFD };

struct backing {
	const char *name;
	enum backing_kind kind;
	unsigned long page_kb;	/* the page size it promises */
};

struct mapping {
	const struct backing *b;
	char *addr;
	size_t len;		/* rounded up to page_kb */
	int fd;
};

#define MAP_F_POPULATE 1	/* prefault: MAP_POPULATE or MADV_POPULATE_WRITE */

extern const struct backing backings[];
extern const int nbackings;

/* 0 if the host has what b needs, else -1 and why (a skip, not a failure) */
int backing_available(const struct backing *b, char *why, size_t n);
/* 0 or -1 with why; why names the likely cause */
int backing_map(const struct backing *b, size_t len, int flags,
		struct mapping *m, char *why, size_t n);
void backing_unmap(struct mapping *m);
/* how MAP_F_POPULATE is done for b */
const char *backing_populate_via(const struct backing *b);
/*
 * Checks the page size the kernel gave m (touch it first): returns 0 and
 * sets *page_kb, or -1 with why.  For thp, *page_kb is 2048 only when
 * AnonHugePages covers the whole mapping.
 */
int backing_verify(const struct mapping *m, unsigned long *page_kb,
		   char *why, size_t n);
/* removes a hugetlbfs mount we made; safe to call more than once */
void backing_cleanup(void);
/* prints "@meta hugepages {...}" with every pool's total and free pages */
void hugepages_emit_meta(void);

#endif
