// SPDX-License-Identifier: GPL-2.0
/*
 * backing.c - the backings: one table row each, with small functions for
 * the steps that differ; map, unmap and verify.  See backing.h.
 *
 * Adding a backing is adding its functions and its row here.
 */
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
#include "hostfacts.h"
#include "size.h"

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

#define KB_64K 64UL
#define KB_2M 2048UL
#define KB_32M 32768UL
#define KB_1G 1048576UL
#define THP_ALIGN (2UL << 20)
#define RW (PROT_READ | PROT_WRITE)

/*
 * log2 of the huge page size in bytes, for the *_HUGE_* flag encodings
 * (16 for 64 KB, 21 for 2 MB, 25 for 32 MB, 30 for 1 GB); every size is a
 * power of two
 */
static int huge_shift(unsigned long page_kb)
{
	return __builtin_ctzl(page_kb) + 10;
}

/* why = "<backing> <op>: <error>", with the likely cause for a pool */
static int fail(char *why, size_t n, const struct mapping *m, const char *op)
{
	int e = errno;

	snprintf(why, n, "%s %s: %s%s", m->b->name, op, strerror(e),
		 (m->b->pool_kb && (e == ENOMEM || e == ENOSPC || e == EINVAL)) ?
		 " (insufficient huge pages in the pool?)" : "");
	return -1;
}

/* m->addr from an mmap result */
static int mapped(struct mapping *m, void *p, char *why, size_t n)
{
	if (p == MAP_FAILED)
		return fail(why, n, m, "mmap");
	m->addr = p;
	return 0;
}

/* -- hugetlbfs mounts ---------------------------------------------------- */

/* temp mounts we made, one per page size (the sizes of the table) */
#define MAX_MOUNTS 4
static struct {
	unsigned long kb;
	char dir[64];
} made_mount[MAX_MOUNTS];

/* a mount's "pagesize=2M[,...]" option in kB; 0 if it is no size */
static unsigned long parse_kb(const char *s)
{
	char num[32];
	unsigned long long v;

	snprintf(num, sizeof(num), "%.*s", (int)strcspn(s, ","), s);
	return size_parse(num, &v) ? 0 : v >> 10;
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
		kb = p ? parse_kb(p + 9) :
			 (unsigned long)host_meminfo_kb(NULL, "Hugepagesize");
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

	for (i = 0; i < MAX_MOUNTS; i++) {
		char *dir = made_mount[i].dir;

		if (!dir[0])
			continue;
		/* lazy: a signal may arrive while a file there is mapped */
		if (umount2(dir, MNT_DETACH) == 0)
			rmdir(dir);
		else
			fprintf(stderr, "bench: cannot unmount %s: %s\n",
				dir, strerror(errno));
		dir[0] = 0;
	}
}

static void cleanup_signal(int sig)
{
	backing_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * cleanup_signal on SIGINT, SIGTERM and SIGHUP, run on a stack of its
 * own: mlp's 16-chain loop lends rsp to a chain (bench/mlp.c).
 */
static void catch_signals(void)
{
	static char alt[64 << 10];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
	struct sigaction sa = { .sa_handler = cleanup_signal,
				.sa_flags = SA_ONSTACK | SA_RESTART };

	sigaltstack(&ss, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* the made_mount slot for page_kb: its own, else a free one; -1: full */
static int mount_slot(unsigned long page_kb)
{
	int i, free_slot = -1;

	for (i = 0; i < MAX_MOUNTS; i++) {
		if (made_mount[i].dir[0] && made_mount[i].kb == page_kb)
			return i;
		if (!made_mount[i].dir[0] && free_slot < 0)
			free_slot = i;
	}
	return free_slot;
}

/*
 * A mount for page_kb, mounting one in a temp dir if none is mounted.  A
 * mount found or made is remembered for the process: a program knows its
 * mount, and the lookup (a read of /proc/mounts) is no part of making a
 * file there, which fault times (prepare_us_per_call).
 */
static int hugetlbfs_dir(unsigned long page_kb, char *path, size_t n,
			 char *why, size_t wn)
{
	static struct {
		unsigned long kb;
		char dir[256];
	} found[MAX_MOUNTS];
	int i = mount_slot(page_kb), j;
	char opt[32], *dir;

	for (j = 0; j < MAX_MOUNTS && found[j].kb; j++)
		if (found[j].kb == page_kb) {
			snprintf(path, n, "%s", found[j].dir);
			return 0;
		}
	if (i >= 0 && made_mount[i].dir[0]) {	/* i is its own slot */
		snprintf(path, n, "%s", made_mount[i].dir);
		return 0;
	}
	if (find_mount(page_kb, path, n) == 0) {
		if (j < MAX_MOUNTS) {
			found[j].kb = page_kb;
			snprintf(found[j].dir, sizeof(found[j].dir), "%s", path);
		}
		return 0;
	}
	if (i < 0) {
		snprintf(why, wn, "no hugetlbfs mount for %lu kB pages and "
			 "%d temporary mounts made already", page_kb,
			 MAX_MOUNTS);
		return -1;
	}
	dir = made_mount[i].dir;
	made_mount[i].kb = page_kb;
	snprintf(dir, sizeof(made_mount[i].dir), "/tmp/bench-hugetlbfs-XXXXXX");
	if (!mkdtemp(dir)) {
		snprintf(why, wn, "mkdtemp: %s", strerror(errno));
		dir[0] = 0;
		return -1;
	}
	snprintf(opt, sizeof(opt), "pagesize=%luK", page_kb);
	if (mount("none", dir, "hugetlbfs", 0, opt)) {
		snprintf(why, wn, "no hugetlbfs mount for %lu kB pages and "
			 "mount failed: %s", page_kb, strerror(errno));
		rmdir(dir);
		dir[0] = 0;
		return -1;
	}
	atexit(backing_cleanup);
	catch_signals();
	snprintf(path, n, "%s", dir);
	return 0;
}


/* -- the backings ------------------------------------------------------- */

static int devzero_prepare(struct mapping *m, char *why, size_t n)
{
	m->fd = open("/dev/zero", O_RDWR);
	return m->fd < 0 ? fail(why, n, m, "open /dev/zero") : 0;
}

static int devzero_attach(struct mapping *m, int pop, char *why, size_t n)
{
	(void)pop;
	if (mapped(m, mmap(NULL, m->len, RW, MAP_PRIVATE, m->fd, 0), why, n))
		return -1;
	if (madvise(m->addr, m->len, MADV_NOHUGEPAGE))
		return fail(why, n, m, "madvise(MADV_NOHUGEPAGE)");
	return 0;
}

static int thp_available(unsigned long page_kb, char *why, size_t n)
{
	(void)page_kb;
	if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK)) {
		snprintf(why, n, "kernel has no transparent huge pages");
		return -1;
	}
	return 0;
}

/* over-maps and trims so the region is 2 MB aligned */
static int thp_attach(struct mapping *m, int pop, char *why, size_t n)
{
	char *raw = mmap(NULL, m->len + THP_ALIGN, RW,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *a;

	(void)pop;
	if (raw == MAP_FAILED)
		return fail(why, n, m, "mmap");
	a = (char *)(((unsigned long)raw + THP_ALIGN - 1) & ~(THP_ALIGN - 1));
	if (a > raw)
		munmap(raw, a - raw);
	if (raw + THP_ALIGN > a)
		munmap(a + m->len, raw + THP_ALIGN - a);
	m->addr = a;
	if (madvise(a, m->len, MADV_HUGEPAGE))
		return fail(why, n, m, "madvise(MADV_HUGEPAGE)");
	return 0;
}

static int hugetlbfs_available(unsigned long page_kb, char *why, size_t n)
{
	char path[300];

	return hugetlbfs_dir(page_kb, path, sizeof(path), why, n);
}

/* an unlinked file of m->len bytes in a hugetlbfs mount */
static int hugetlbfs_prepare(struct mapping *m, char *why, size_t n)
{
	char path[300];

	if (hugetlbfs_dir(m->b->page_kb, path, sizeof(path) - 16, why, n))
		return -1;
	strcat(path, "/bench-XXXXXX");
	m->fd = mkstemp(path);
	if (m->fd < 0)
		return fail(why, n, m, "mkstemp");
	unlink(path);
	return ftruncate(m->fd, m->len) ? fail(why, n, m, "ftruncate") : 0;
}

/*
 * a file's mapping: share (the backing's way) unless the flags choose,
 * read-write unless they say MAP_F_READONLY
 */
static int file_attach(struct mapping *m, int pop, int share, char *why,
		       size_t n)
{
	int prot = m->flags & MAP_F_READONLY ? PROT_READ : RW;

	if (m->flags & (MAP_F_PRIVATE | MAP_F_SHARED))
		share = m->flags & MAP_F_PRIVATE ? MAP_PRIVATE : MAP_SHARED;
	return mapped(m, mmap(NULL, m->len, prot, share | pop, m->fd, 0),
		      why, n);
}

static int shared_attach(struct mapping *m, int pop, char *why, size_t n)
{
	return file_attach(m, pop, MAP_SHARED, why, n);
}

static int private_attach(struct mapping *m, int pop, char *why, size_t n)
{
	return file_attach(m, pop, MAP_PRIVATE, why, n);
}

static int shm_prepare(struct mapping *m, char *why, size_t n)
{
	m->shmid = shmget(IPC_PRIVATE, m->len, IPC_CREAT | 0600 | SHM_HUGETLB |
			  (huge_shift(m->b->page_kb) << SHM_HUGE_SHIFT));
	return m->shmid < 0 ? fail(why, n, m, "shmget(SHM_HUGETLB)") : 0;
}

static int shm_attach(struct mapping *m, int pop, char *why, size_t n)
{
	void *p = shmat(m->shmid, NULL, 0);

	(void)pop;
	if (p == (void *)-1)
		return fail(why, n, m, "shmat");
	m->addr = p;
	if (m->flags & MAP_F_KEEP)	/* marked at an earlier attach */
		return 0;
	/* freed at the last shmdt */
	shmctl(m->shmid, IPC_RMID, NULL);
	m->shmid = -1;
	return 0;
}

static void shm_detach(struct mapping *m)
{
	shmdt(m->addr);
}

/*
 * The 2 MB rows use /dev/hugetlb, which serves the default huge page size
 * (2 MB on x86_64 and on arm64 with 4 KB granules, what the project's
 * kernels boot with); every other size its /dev/hugetlb-<size>kB node.
 */
static void dev_path(unsigned long page_kb, char *path, size_t n)
{
	if (page_kb == KB_2M)
		snprintf(path, n, "/dev/hugetlb");
	else
		snprintf(path, n, "/dev/hugetlb-%lukB", page_kb);
}

static int devhugetlb_available(unsigned long page_kb, char *why, size_t n)
{
	char path[64];

	dev_path(page_kb, path, sizeof(path));
	if (access(path, F_OK)) {
		snprintf(why, n, "%s does not exist on this kernel", path);
		return -1;
	}
	return 0;
}

static int devhugetlb_prepare(struct mapping *m, char *why, size_t n)
{
	char path[64];

	dev_path(m->b->page_kb, path, sizeof(path));
	m->fd = open(path, O_RDWR);
	return m->fd < 0 ? fail(why, n, m, "open") : 0;
}

static int devhugetlb_attach(struct mapping *m, int pop, char *why, size_t n)
{
	return mapped(m, mmap(NULL, m->len, RW, MAP_PRIVATE | pop, m->fd, 0),
		      why, n);
}

static int maphugetlb_attach(struct mapping *m, int pop, char *why, size_t n)
{
	int fl = MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | pop |
		 (huge_shift(m->b->page_kb) << MAP_HUGE_SHIFT);

	return mapped(m, mmap(NULL, m->len, RW, fl, -1, 0), why, n);
}

static int memfd_prepare(struct mapping *m, char *why, size_t n)
{
	m->fd = memfd_create("bench", MFD_HUGETLB |
			     (huge_shift(m->b->page_kb) << MFD_HUGE_SHIFT));
	if (m->fd < 0)
		return fail(why, n, m, "memfd_create(MFD_HUGETLB)");
	return ftruncate(m->fd, m->len) ? fail(why, n, m, "ftruncate") : 0;
}

static const struct backing_ops devzero_ops = {
	.prepare = devzero_prepare, .attach = devzero_attach,
	.populate_via = "MADV_POPULATE_WRITE",
};
static const struct backing_ops thp_ops = {
	.available = thp_available, .attach = thp_attach,
	.populate_via = "MADV_POPULATE_WRITE", .thp = 1,
};
static const struct backing_ops hugetlbfs_ops = {
	.available = hugetlbfs_available, .prepare = hugetlbfs_prepare,
	.attach = private_attach, .populate_via = "MAP_POPULATE",
	.object = OBJ_FILE,
};
static const struct backing_ops shm_ops = {
	.prepare = shm_prepare, .attach = shm_attach, .detach = shm_detach,
	.populate_via = "MADV_POPULATE_WRITE", .object = OBJ_SEGMENT,
};
static const struct backing_ops devhugetlb_ops = {
	.available = devhugetlb_available, .prepare = devhugetlb_prepare,
	.attach = devhugetlb_attach, .populate_via = "MAP_POPULATE",
};
static const struct backing_ops maphugetlb_ops = {
	.attach = maphugetlb_attach, .populate_via = "MAP_POPULATE",
};
static const struct backing_ops memfd_ops = {
	.prepare = memfd_prepare, .attach = shared_attach,
	.populate_via = "MAP_POPULATE", .object = OBJ_FILE,
};

/*
 * In display order.  Colours: the Okabe-Ito palette, devzero black as the
 * 4 KB baseline; a size variant (-1G, -64K, -32M) keeps its base colour and
 * the figures tell the sizes apart by dash and point (plots/common.gp).
 * Every row is here on every architecture: a kernel without the pool skips
 * the row, saying so (backing_available), and bench/run.py leaves out of
 * its default list the sizes the target architecture never has.
 */
const struct backing backings[] = {
	{ "devzero", 4, 0, "#000000", &devzero_ops,
	  "MAP_PRIVATE of /dev/zero, MADV_NOHUGEPAGE: the 4 KB baseline" },
	{ "thp", KB_2M, 0, "#009E73", &thp_ops,
	  "anonymous, 2 MB aligned, MADV_HUGEPAGE (reference)" },
	{ "hugetlbfs", KB_2M, KB_2M, "#0072B2", &hugetlbfs_ops,
	  "unlinked file in a hugetlbfs mount, ftruncate, mmap(MAP_PRIVATE)" },
	{ "shm", KB_2M, KB_2M, "#56B4E9", &shm_ops,
	  "shmget(SHM_HUGETLB), shmat, IPC_RMID" },
	{ "devhugetlb", KB_2M, KB_2M, "#D55E00", &devhugetlb_ops,
	  "mmap(MAP_PRIVATE) of /dev/hugetlb" },
	{ "maphugetlb", KB_2M, KB_2M, "#E69F00", &maphugetlb_ops,
	  "MAP_ANONYMOUS|MAP_HUGETLB (reference)" },
	{ "memfd", KB_2M, KB_2M, "#CC79A7", &memfd_ops,
	  "memfd_create(MFD_HUGETLB), ftruncate, mmap(MAP_SHARED) (reference)" },
	{ "hugetlbfs-1G", KB_1G, KB_1G, "#0072B2", &hugetlbfs_ops,
	  "hugetlbfs with 1 GB pages" },
	{ "shm-1G", KB_1G, KB_1G, "#56B4E9", &shm_ops,
	  "shm with 1 GB pages" },
	{ "devhugetlb-1G", KB_1G, KB_1G, "#D55E00", &devhugetlb_ops,
	  "mmap(MAP_PRIVATE) of /dev/hugetlb-1048576kB" },
	{ "maphugetlb-1G", KB_1G, KB_1G, "#E69F00", &maphugetlb_ops,
	  "maphugetlb with MAP_HUGE_1GB" },
	{ "memfd-1G", KB_1G, KB_1G, "#CC79A7", &memfd_ops,
	  "memfd with MFD_HUGE_1GB" },
	{ "hugetlbfs-64K", KB_64K, KB_64K, "#0072B2", &hugetlbfs_ops,
	  "hugetlbfs with 64 KB pages (arm64: contiguous PTEs)" },
	{ "shm-64K", KB_64K, KB_64K, "#56B4E9", &shm_ops,
	  "shm with 64 KB pages" },
	{ "devhugetlb-64K", KB_64K, KB_64K, "#D55E00", &devhugetlb_ops,
	  "mmap(MAP_PRIVATE) of /dev/hugetlb-64kB" },
	{ "maphugetlb-64K", KB_64K, KB_64K, "#E69F00", &maphugetlb_ops,
	  "maphugetlb with MAP_HUGE_64KB" },
	{ "memfd-64K", KB_64K, KB_64K, "#CC79A7", &memfd_ops,
	  "memfd with MFD_HUGE_64KB" },
	{ "hugetlbfs-32M", KB_32M, KB_32M, "#0072B2", &hugetlbfs_ops,
	  "hugetlbfs with 32 MB pages (arm64: contiguous PMDs)" },
	{ "shm-32M", KB_32M, KB_32M, "#56B4E9", &shm_ops,
	  "shm with 32 MB pages" },
	{ "devhugetlb-32M", KB_32M, KB_32M, "#D55E00", &devhugetlb_ops,
	  "mmap(MAP_PRIVATE) of /dev/hugetlb-32768kB" },
	{ "maphugetlb-32M", KB_32M, KB_32M, "#E69F00", &maphugetlb_ops,
	  "maphugetlb with MAP_HUGE_32MB" },
	{ "memfd-32M", KB_32M, KB_32M, "#CC79A7", &memfd_ops,
	  "memfd with MFD_HUGE_32MB" },
};
const int nbackings = sizeof(backings) / sizeof(backings[0]);

/* -- the steps ---------------------------------------------------------- */

const struct backing *backing_find(const char *name)
{
	int i;

	for (i = 0; i < nbackings; i++)
		if (!strcmp(backings[i].name, name))
			return &backings[i];
	return NULL;
}

int backing_available(const struct backing *b, char *why, size_t n)
{
	char path[128];
	long pages;

	if (b->pool_kb) {
		snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/"
			 "hugepages-%lukB/nr_hugepages", b->pool_kb);
		pages = host_read_long(path);
		if (pages <= 0) {
			if (pages < 0)
				snprintf(why, n, "kernel has no %lu kB huge "
					 "pages (no %.*s: a size this "
					 "architecture lacks?)", b->pool_kb,
					 (int)(strrchr(path, '/') - path),
					 path);
			else
				snprintf(why, n, "no %lu kB huge pages "
					 "preallocated", b->pool_kb);
			return -1;
		}
	}
	return b->ops->available ? b->ops->available(b->page_kb, why, n) : 0;
}

size_t backing_len(const struct backing *b, size_t len)
{
	size_t pg = b->page_kb * 1024;

	len = (len + pg - 1) / pg * pg;
	if (!b->pool_kb && b->page_kb > 4)	/* transparent: whole pages */
		len = (len + THP_ALIGN - 1) / THP_ALIGN * THP_ALIGN;
	return len;
}

int backing_prepare(const struct backing *b, size_t len, struct mapping *m,
		    char *why, size_t n)
{
	len = backing_len(b, len);
	*m = (struct mapping){ .b = b, .len = len, .fd = -1, .shmid = -1 };
	if (b->ops->prepare && b->ops->prepare(m, why, n)) {
		backing_release(m);
		return -1;
	}
	return 0;
}

int backing_attach(struct mapping *m, int flags, char *why, size_t n)
{
	const struct backing_ops *ops = m->b->ops;
	int madv = !strcmp(ops->populate_via, "MADV_POPULATE_WRITE");
	int pop = (flags & MAP_F_POPULATE) && !madv ? MAP_POPULATE : 0;

	m->flags = flags;
	if (ops->attach(m, pop, why, n) ||
	    ((flags & MAP_F_POPULATE) && madv &&
	     madvise(m->addr, m->len, MADV_POPULATE_WRITE) &&
	     fail(why, n, m, "madvise(MADV_POPULATE_WRITE)"))) {
		backing_detach(m);
		return -1;
	}
	return 0;
}

void backing_detach(struct mapping *m)
{
	if (!m->addr)
		return;
	if (m->b->ops->detach)
		m->b->ops->detach(m);
	else
		munmap(m->addr, m->len);
	m->addr = NULL;
}

void backing_release(struct mapping *m)
{
	if (m->fd >= 0)
		close(m->fd);
	if (m->shmid >= 0)
		shmctl(m->shmid, IPC_RMID, NULL);
	m->fd = -1;
	m->shmid = -1;
}

int backing_map(const struct backing *b, size_t len, int flags,
		struct mapping *m, char *why, size_t n)
{
	if (backing_prepare(b, len, m, why, n))
		return -1;
	if (backing_attach(m, flags, why, n)) {
		backing_release(m);
		return -1;
	}
	return 0;
}

void backing_unmap(struct mapping *m)
{
	backing_detach(m);
	backing_release(m);
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
	return backing_page_verdict(m->b, m->len, kps, anon_huge, page_kb, why, n);
}

int backing_page_verdict(const struct backing *b, size_t len,
			 unsigned long kps, unsigned long anon_huge,
			 unsigned long *page_kb, char *why, size_t n)
{
	*page_kb = kps;
	if (!b->pool_kb && b->page_kb > 4) {	/* transparent */
		if (kps == 4 && anon_huge * 1024 >= len) {
			*page_kb = KB_2M;
			return 0;
		}
		snprintf(why, n, "%s: only %lu of %zu kB in huge pages "
			 "(AnonHugePages); THP disabled or memory fragmented?",
			 b->name, anon_huge, len / 1024);
		return -1;
	}
	if (b->page_kb == 4 && anon_huge) {
		snprintf(why, n, "%s: %lu kB in transparent huge pages "
			 "despite MADV_NOHUGEPAGE", b->name, anon_huge);
		return -1;
	}
	if (kps != b->page_kb) {
		snprintf(why, n, "%s promised %lu kB pages but smaps says "
			 "KernelPageSize %lu kB", b->name, b->page_kb, kps);
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
		printf("\"total\": %ld, ", host_read_long(path));
		snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/%s/"
			 "free_hugepages", e->d_name);
		printf("\"free\": %ld, ", host_read_long(path));
		snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/%s/"
			 "resv_hugepages", e->d_name);
		printf("\"resv\": %ld}", host_read_long(path));
		first = 0;
	}
	if (d)
		closedir(d);
	printf("}\n");
	fflush(stdout);
}
