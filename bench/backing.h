/* SPDX-License-Identifier: GPL-2.0 */
/*
 * backing.h - the memory backings under test.  Each backing is one row of
 * the table in backing.c (name, page size, colour, description, pool and
 * its functions), and that row is the only place it is defined: the CSV
 * rows, meta.json, --backings, bench/run.py and the plots take the list
 * from there (`benchtool contract`).
 *
 * A mapping goes through four steps, so that a measurement can time
 * exactly the calls it claims:
 *   prepare   create what the mapping maps (open a device, an unlinked
 *             hugetlbfs file or a memfd and size it, shmget); untimed
 *   attach    mmap (shmat), the advice the backing needs, and populate
 *   detach    munmap (shmdt)
 *   release   close the descriptor: a shared file's pages are freed here
 *
 * Each mapping's page size is checked against /proc/self/smaps after it
 * has been touched; a mismatch is a failure, never a measurement.
 */
#ifndef BENCH_BACKING_H
#define BENCH_BACKING_H

#include <stddef.h>

struct mapping;

struct backing_ops {
	/* 0, or -1 and why the host lacks what it needs; NULL: nothing */
	int (*available)(unsigned long page_kb, char *why, size_t n);
	/* 0, or -1 with why; NULL: nothing to prepare */
	int (*prepare)(struct mapping *m, char *why, size_t n);
	/* sets m->addr; pop is MAP_POPULATE or 0; 0, or -1 with why */
	int (*attach)(struct mapping *m, int pop, char *why, size_t n);
	void (*detach)(struct mapping *m);	/* NULL: munmap */
	/*
	 * how MAP_F_POPULATE is done: MAP_POPULATE at mmap, or
	 * MADV_POPULATE_WRITE after it where advice must come first
	 * (MADV_*HUGEPAGE) or there is no mmap (shmat)
	 */
	const char *populate_via;
	/*
	 * what holds the pages besides the mapping: OBJ_NONE (they go at
	 * munmap), OBJ_FILE (a file: they stay after munmap until release,
	 * and a MAP_PRIVATE mapping of it copies them on write) or
	 * OBJ_SEGMENT (a SysV segment: no descriptor, no private mapping)
	 */
	int object;
	/* 1: it advises MADV_HUGEPAGE, so the host's THP knobs must allow it */
	int thp;
};

enum { OBJ_NONE, OBJ_FILE, OBJ_SEGMENT };

struct backing {
	const char *name;
	unsigned long page_kb;	/* the page size it promises */
	unsigned long pool_kb;	/* the hugetlb pool it draws on; 0: none */
	const char *colour;	/* in figures (a -1G variant is dashed) */
	const struct backing_ops *ops;
	const char *desc;
};

struct mapping {
	const struct backing *b;
	char *addr;
	size_t len;		/* rounded up to page_kb */
	int fd;
	int shmid;
	int flags;		/* the MAP_F_* of the last attach */
};

#define MAP_F_POPULATE 1	/* prefault: the backing's populate_via */
/*
 * OBJ_SEGMENT: attach again to a segment that an attachment still held
 * has marked for removal already (no IPC_RMID here, the id is kept): it
 * goes with its last attachment and never outlives the process
 */
#define MAP_F_KEEP 2
/*
 * OBJ_FILE: map MAP_PRIVATE (copy on write: writes stay out of the file)
 * or MAP_SHARED (writes go into the file), whatever the backing's own way
 * (its row's description says which that is)
 */
#define MAP_F_PRIVATE 4
#define MAP_F_SHARED 8
/* OBJ_FILE: map PROT_READ alone (faultscale's read kind); else read-write */
#define MAP_F_READONLY 16

extern const struct backing backings[];
extern const int nbackings;

const struct backing *backing_find(const char *name);
/* 0 if the host has what b needs, else -1 and why (a skip, not a failure) */
int backing_available(const struct backing *b, char *why, size_t n);

/* the length a mapping of len bytes has: whole pages of the backing */
size_t backing_len(const struct backing *b, size_t len);
/* the four steps (see above); each failing step undoes what it did */
int backing_prepare(const struct backing *b, size_t len, struct mapping *m,
		    char *why, size_t n);
int backing_attach(struct mapping *m, int flags, char *why, size_t n);
void backing_detach(struct mapping *m);
void backing_release(struct mapping *m);
/* prepare + attach, and detach + release */
int backing_map(const struct backing *b, size_t len, int flags,
		struct mapping *m, char *why, size_t n);
void backing_unmap(struct mapping *m);

/*
 * Checks the page size the kernel gave m (touch it first): returns 0 and
 * sets *page_kb, or -1 with why.  For thp, *page_kb is 2048 only when
 * AnonHugePages covers the whole mapping.
 */
int backing_verify(const struct mapping *m, unsigned long *page_kb,
		   char *why, size_t n);
/*
 * backing_verify's verdict on what smaps said of a mapping of len bytes
 * on b: its KernelPageSize and AnonHugePages in kB
 */
int backing_page_verdict(const struct backing *b, size_t len,
			 unsigned long kps, unsigned long anon_huge,
			 unsigned long *page_kb, char *why, size_t n);
/* removes a hugetlbfs mount we made; safe to call more than once */
void backing_cleanup(void);
/* prints "@meta hugepages {...}" with every pool's total and free pages */
void hugepages_emit_meta(void);

#endif
