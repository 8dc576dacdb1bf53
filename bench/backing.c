// SPDX-License-Identifier: GPL-2.0
/* backing.c - map, unmap and verify each backing; see backing.h. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backing.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef SHM_HUGE_SHIFT
#define SHM_HUGE_SHIFT 26
#endif
#ifndef MFD_HUGE_SHIFT
#define MFD_HUGE_SHIFT 26
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define KB_2M 2048UL
#define KB_1G 1048576UL
#define THP_ALIGN (2UL << 20)

const struct backing backings[] = {
	{ "devzero", BK_DEVZERO, 4 },
	{ "thp", BK_THP, KB_2M },
	{ "hugetlbfs", BK_HUGETLBFS, KB_2M },
	{ "shm", BK_SHM, KB_2M },
	{ "devhugetlb", BK_DEVHUGETLB, KB_2M },
	{ "maphugetlb", BK_MAPHUGETLB, KB_2M },
	{ "memfd", BK_MEMFD, KB_2M },
	{ "hugetlbfs-1G", BK_HUGETLBFS, KB_1G },
	{ "shm-1G", BK_SHM, KB_1G },
	{ "devhugetlb-1G", BK_DEVHUGETLB, KB_1G },
	{ "maphugetlb-1G", BK_MAPHUGETLB, KB_1G },
	{ "memfd-1G", BK_MEMFD, KB_1G },
};
const int nbackings = sizeof(backings) / sizeof(backings[0]);

/* log2 of the huge page size in bytes, for the *_HUGE_* flag encodings */
static int huge_shift(unsigned long page_kb)
{
	return page_kb == KB_1G ? 30 : 21;
}

static int is_hugetlb(const struct backing *b)
{
	return b->kind != BK_DEVZERO && b->kind != BK_THP;
}

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static long default_huge_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Hugepagesize: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static const char *dev_path(const struct backing *b)
{
	/* /dev/hugetlb serves the default huge page size */
	return b->page_kb == KB_1G ? "/dev/hugetlb-1048576kB" : "/dev/hugetlb";
}

/* -- hugetlbfs mounts ---------------------------------------------------- */

static char made_mount[2][64];	/* [0] 2M, [1] 1G: temp mounts we made */

static unsigned long parse_kb(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	switch (*end) {
	case 'G': case 'g': return v << 20;
	case 'M': case 'm': return v << 10;
	case 'K': case 'k': return v;
	default: return v >> 10;
	}
}

/* finds a hugetlbfs mount with pages of page_kb; 0 and path, or -1 */
static int find_mount(unsigned long page_kb, char *path, size_t n)
{
	char dev[256], dir[256], type[64], opts[512];
	FILE *f = fopen("/proc/mounts", "r");
	int found = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%255s %255s %63s %511s %*d %*d", dev, dir, type,
		      opts) == 4) {
		char *p = strstr(opts, "pagesize=");
		unsigned long kb;

		if (strcmp(type, "hugetlbfs"))
			continue;
		kb = p ? parse_kb(p + 9) : (unsigned long)default_huge_kb();
		if (kb == page_kb) {
			snprintf(path, n, "%s", dir);
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

void backing_cleanup(void)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (!made_mount[i][0])
			continue;
		/* lazy: a signal may arrive while a file there is mapped */
		if (umount2(made_mount[i], MNT_DETACH) == 0)
			rmdir(made_mount[i]);
		else
			fprintf(stderr, "bench: cannot unmount %s: %s\n",
				made_mount[i], strerror(errno));
		made_mount[i][0] = 0;
	}
}

static void cleanup_signal(int sig)
{
	backing_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* a mount for page_kb, mounting one in a temp dir if none is mounted */
static int hugetlbfs_dir(unsigned long page_kb, char *path, size_t n,
			 char *why, size_t wn)
{
	int i = page_kb == KB_1G;
	char opt[32];

	if (find_mount(page_kb, path, n) == 0)
		return 0;
	if (made_mount[i][0]) {
		snprintf(path, n, "%s", made_mount[i]);
		return 0;
	}
	snprintf(made_mount[i], sizeof(made_mount[i]),
		 "/tmp/bench-hugetlbfs-XXXXXX");
	if (!mkdtemp(made_mount[i])) {
		snprintf(why, wn, "mkdtemp: %s", strerror(errno));
		made_mount[i][0] = 0;
		return -1;
	}
	snprintf(opt, sizeof(opt), "pagesize=%luK", page_kb);
	if (mount("none", made_mount[i], "hugetlbfs", 0, opt)) {
		snprintf(why, wn, "no hugetlbfs mount for %lu kB pages and "
			 "mount failed: %s", page_kb, strerror(errno));
		rmdir(made_mount[i]);
		made_mount[i][0] = 0;
		return -1;
	}
	atexit(backing_cleanup);
	signal(SIGINT, cleanup_signal);
	signal(SIGTERM, cleanup_signal);
	signal(SIGHUP, cleanup_signal);
	snprintf(path, n, "%s", made_mount[i]);
	return 0;
}

/* -- availability, map, unmap ------------------------------------------- */

int backing_available(const struct backing *b, char *why, size_t n)
{
	char path[300];

	if (b->kind == BK_THP) {
		if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK)) {
			snprintf(why, n, "kernel has no transparent huge pages");
			return -1;
		}
		return 0;
	}
	if (!is_hugetlb(b))
		return 0;
	if (b->kind == BK_DEVHUGETLB && access(dev_path(b), F_OK)) {
		snprintf(why, n, "%s does not exist on this kernel", dev_path(b));
		return -1;
	}
	snprintf(path, sizeof(path),
		 "/sys/kernel/mm/hugepages/hugepages-%lukB/nr_hugepages",
		 b->page_kb);
	if (read_long(path) < 0) {
		snprintf(why, n, "kernel has no %lu kB huge pages", b->page_kb);
		return -1;
	}
	if (read_long(path) == 0) {
		snprintf(why, n, "no %lu kB huge pages preallocated", b->page_kb);
		return -1;
	}
	if (b->kind == BK_HUGETLBFS)
		return hugetlbfs_dir(b->page_kb, path, sizeof(path), why, n);
	return 0;
}

const char *backing_populate_via(const struct backing *b)
{
	/* MADV_*HUGEPAGE must come before the pages; shmat has no populate */
	return is_hugetlb(b) && b->kind != BK_SHM ? "MAP_POPULATE" :
						    "MADV_POPULATE_WRITE";
}

static void hint(char *why, size_t n, const struct backing *b, const char *op,
		 int e)
{
	snprintf(why, n, "%s %s: %s%s", b->name, op, strerror(e),
		 (is_hugetlb(b) && (e == ENOMEM || e == ENOSPC || e == EINVAL)) ?
		 " (insufficient huge pages in the pool?)" : "");
}

int backing_map(const struct backing *b, size_t len, int flags,
		struct mapping *m, char *why, size_t n)
{
	size_t pg = b->page_kb * 1024;
	int pop = (flags & MAP_F_POPULATE) &&
		  !strcmp(backing_populate_via(b), "MAP_POPULATE") ?
		  MAP_POPULATE : 0;
	int hflag = huge_shift(b->page_kb);
	char path[300];
	void *p = MAP_FAILED;

	len = (len + pg - 1) / pg * pg;
	if (b->kind == BK_THP)
		len = (len + THP_ALIGN - 1) / THP_ALIGN * THP_ALIGN;
	m->b = b;
	m->len = len;
	m->fd = -1;
	m->addr = NULL;

	switch (b->kind) {
	case BK_DEVZERO:
		m->fd = open("/dev/zero", O_RDWR);
		if (m->fd < 0) {
			hint(why, n, b, "open /dev/zero", errno);
			return -1;
		}
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE,
			 m->fd, 0);
		if (p != MAP_FAILED && madvise(p, len, MADV_NOHUGEPAGE)) {
			hint(why, n, b, "madvise(MADV_NOHUGEPAGE)", errno);
			munmap(p, len);
			close(m->fd);
			return -1;
		}
		break;
	case BK_THP: {
		/* over-map and trim so the region is 2 MB aligned */
		char *raw = mmap(NULL, len + THP_ALIGN, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *a;

		if (raw == MAP_FAILED)
			break;
		a = (char *)(((unsigned long)raw + THP_ALIGN - 1) &
			     ~(THP_ALIGN - 1));
		if (a > raw)
			munmap(raw, a - raw);
		if (raw + THP_ALIGN > a)
			munmap(a + len, raw + THP_ALIGN - a);
		p = a;
		if (madvise(p, len, MADV_HUGEPAGE)) {
			hint(why, n, b, "madvise(MADV_HUGEPAGE)", errno);
			munmap(p, len);
			return -1;
		}
		break;
	}
	case BK_HUGETLBFS:
		if (hugetlbfs_dir(b->page_kb, path, sizeof(path) - 24, why, n))
			return -1;
		strcat(path, "/bench-XXXXXX");
		m->fd = mkstemp(path);
		if (m->fd < 0) {
			hint(why, n, b, "mkstemp", errno);
			return -1;
		}
		unlink(path);
		if (ftruncate(m->fd, len)) {
			hint(why, n, b, "ftruncate", errno);
			close(m->fd);
			return -1;
		}
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | pop,
			 m->fd, 0);
		break;
	case BK_SHM: {
		int id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600 |
				SHM_HUGETLB | (hflag << SHM_HUGE_SHIFT));

		if (id < 0) {
			hint(why, n, b, "shmget(SHM_HUGETLB)", errno);
			return -1;
		}
		p = shmat(id, NULL, 0);
		if (p == (void *)-1) {
			hint(why, n, b, "shmat", errno);
			shmctl(id, IPC_RMID, NULL);
			return -1;
		}
		shmctl(id, IPC_RMID, NULL);	/* freed at shmdt */
		break;
	}
	case BK_DEVHUGETLB:
		m->fd = open(dev_path(b), O_RDWR);
		if (m->fd < 0) {
			hint(why, n, b, "open", errno);
			return -1;
		}
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | pop,
			 m->fd, 0);
		break;
	case BK_MAPHUGETLB:
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | pop |
			 (hflag << MAP_HUGE_SHIFT), -1, 0);
		break;
	case BK_MEMFD:
		m->fd = memfd_create("bench", MFD_HUGETLB |
				     (hflag << MFD_HUGE_SHIFT));
		if (m->fd < 0) {
			hint(why, n, b, "memfd_create(MFD_HUGETLB)", errno);
			return -1;
		}
		if (ftruncate(m->fd, len)) {
			hint(why, n, b, "ftruncate", errno);
			close(m->fd);
			return -1;
		}
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | pop,
			 m->fd, 0);
		break;
	}
	if (p == MAP_FAILED) {
		int e = errno;

		hint(why, n, b, "mmap", e);
		if (m->fd >= 0)
			close(m->fd);
		m->fd = -1;
		return -1;
	}
	m->addr = p;
	if ((flags & MAP_F_POPULATE) && !pop &&
	    madvise(p, len, MADV_POPULATE_WRITE)) {
		hint(why, n, b, "madvise(MADV_POPULATE_WRITE)", errno);
		backing_unmap(m);
		return -1;
	}
	return 0;
}

void backing_unmap(struct mapping *m)
{
	if (!m->addr)
		return;
	if (m->b->kind == BK_SHM)
		shmdt(m->addr);
	else
		munmap(m->addr, m->len);
	if (m->fd >= 0)
		close(m->fd);
	m->addr = NULL;
	m->fd = -1;
}

/* -- verification --------------------------------------------------------- */

int backing_verify(const struct mapping *m, unsigned long *page_kb,
		   char *why, size_t n)
{
	unsigned long start, end, v;
	unsigned long kps = 0, anon_huge = 0, a = (unsigned long)m->addr;
	char line[512];
	int in = 0, found = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f) {
		snprintf(why, n, "cannot read /proc/self/smaps: %s",
			 strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			if (found)
				break;
			in = a >= start && a < end;
			found |= in;
			continue;
		}
		if (!in)
			continue;
		if (sscanf(line, "KernelPageSize: %lu kB", &v) == 1)
			kps = v;
		else if (sscanf(line, "AnonHugePages: %lu kB", &v) == 1)
			anon_huge = v;
	}
	fclose(f);
	if (!found || !kps) {
		snprintf(why, n, "%s: mapping %p not found in /proc/self/smaps",
			 m->b->name, m->addr);
		return -1;
	}
	*page_kb = kps;
	if (m->b->kind == BK_THP) {
		if (kps == 4 && anon_huge * 1024 >= m->len) {
			*page_kb = KB_2M;
			return 0;
		}
		snprintf(why, n, "thp: only %lu of %zu kB in huge pages "
			 "(AnonHugePages); THP disabled or memory fragmented?",
			 anon_huge, m->len / 1024);
		return -1;
	}
	if (m->b->kind == BK_DEVZERO && anon_huge) {
		snprintf(why, n, "devzero: %lu kB in transparent huge pages "
			 "despite MADV_NOHUGEPAGE", anon_huge);
		return -1;
	}
	if (kps != m->b->page_kb) {
		snprintf(why, n, "%s promised %lu kB pages but smaps says "
			 "KernelPageSize %lu kB", m->b->name, m->b->page_kb, kps);
		return -1;
	}
	return 0;
}

void hugepages_emit_meta(void)
{
	DIR *d = opendir("/sys/kernel/mm/hugepages");
	struct dirent *e;
	char path[512];
	int first = 1;

	printf("@meta hugepages {");
	while (d && (e = readdir(d))) {
		unsigned long kb;

		if (sscanf(e->d_name, "hugepages-%lukB", &kb) != 1)
			continue;
		printf("%s\"%lu\": {", first ? "" : ", ", kb);
		snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/%s/"
			 "nr_hugepages", e->d_name);
		printf("\"total\": %ld, ", read_long(path));
		snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/%s/"
			 "free_hugepages", e->d_name);
		printf("\"free\": %ld, ", read_long(path));
		snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/%s/"
			 "resv_hugepages", e->d_name);
		printf("\"resv\": %ld}", read_long(path));
		first = 0;
	}
	if (d)
		closedir(d);
	printf("}\n");
	fflush(stdout);
}
