/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the guest-side reliability programs: the two ways of
 * getting anonymous huge pages (/dev/hugetlb and MAP_HUGETLB), pool and
 * sysctl access, and a SIGBUS-safe touch.
 */
#ifndef HUTIL_H
#define HUTIL_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#ifndef MAP_HUGETLB
#define MAP_HUGETLB 0x40000
#endif
#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif
#define MB2 (2UL << 20)
#define GB1 (1UL << 30)

enum method { M_DEV, M_ANON };
static const char *const method_name[] = { "/dev/hugetlb", "MAP_HUGETLB" };

static inline int log2ul(unsigned long v)
{
	return 63 - __builtin_clzl(v);
}

/* The device node of a page size: /dev/hugetlb-<kB>kB. */
static inline const char *dev_path(unsigned long psize)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "/dev/hugetlb-%lukB", psize >> 10);
	return buf;
}

/*
 * mmap() of len bytes of huge pages of psize by method m, with extra flags
 * (MAP_PRIVATE/MAP_SHARED, MAP_NORESERVE, MAP_FIXED...).  Returns MAP_FAILED
 * with errno set on failure, like mmap().
 */
static inline void *hmap(enum method m, unsigned long psize, void *addr,
			 size_t len, int prot, int flags, off_t off)
{
	void *p;
	int fd, e;

	if (m == M_ANON)
		return mmap(addr, len, prot, flags | MAP_ANONYMOUS | MAP_HUGETLB |
			    (log2ul(psize) << MAP_HUGE_SHIFT), -1, off);
	fd = open(dev_path(psize), O_RDWR);
	if (fd < 0)
		return MAP_FAILED;
	p = mmap(addr, len, prot, flags, fd, off);
	e = errno;
	close(fd);
	errno = e;
	return p;
}

/* Up to n - 1 bytes of path into buf, NUL-terminated; 0 if none. */
/* one "--NAME VALUE" option of a seeded program, a count or a seed */
struct long_opt {
	const char *name;
	long *dst;
	long min, max;		/* the range when max > 0 */
};

/*
 * Parses argv as "--NAME VALUE" pairs of opts; every value a whole number,
 * zero or more, and within min..max where the option has a range.  0, or 2
 * (the usage exit status) after saying why.
 */
/*
 * The options of a seeded run, as tests/reliability.py's seeded_program()
 * gives them to hstress and hfuzz: the first entries of each one's table.
 */
#define SEEDED_RUN_OPTS(seed, procs, ops, seconds)			\
	{ .name = "--seed", .dst = &(seed) },				\
	{ .name = "--procs", .dst = &(procs), .min = 1, .max = 64 },	\
	{ .name = "--ops", .dst = &(ops) },				\
	{ .name = "--seconds", .dst = &(seconds) }

static inline int parse_long_opts(const char *prog, int argc, char **argv,
				  const struct long_opt *opts, int nopts)
{
	for (int i = 1; i < argc; i += 2) {
		const struct long_opt *o = NULL;
		char *end = NULL;
		long v = i + 1 < argc ? strtol(argv[i + 1], &end, 0) : -1;

		for (int k = 0; k < nopts; k++)
			if (!strcmp(argv[i], opts[k].name))
				o = &opts[k];
		if (!o) {
			fprintf(stderr, "%s: unknown option %s\n", prog, argv[i]);
			return 2;
		}
		if (v < 0 || !end || *end) {
			fprintf(stderr, "%s: %s needs a whole number, 0 or more\n",
				prog, argv[i]);
			return 2;
		}
		if (o->max > 0 && (v < o->min || v > o->max)) {
			fprintf(stderr, "%s: %s must be %ld..%ld\n", prog,
				argv[i], o->min, o->max);
			return 2;
		}
		*o->dst = v;
	}
	return 0;
}

static inline int read_text(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	ssize_t got;

	if (fd < 0)
		return 0;
	got = read(fd, buf, n - 1);
	close(fd);
	if (got <= 0)
		return 0;
	buf[got] = 0;
	return 1;
}

static inline long read_long(const char *path)
{
	char buf[64];

	if (!read_text(path, buf, sizeof(buf)))
		return -1;
	if (!strncmp(buf, "max", 3))
		return LONG_MAX;
	return strtol(buf, NULL, 10);
}

static inline int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;
	int e;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static inline int write_long(const char *path, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", v);
	return write_str(path, buf);
}

/* /sys/kernel/mm/hugepages/hugepages-<kB>kB/<what>, into path. */
static inline const char *hp_path(char *path, size_t n, unsigned long psize,
				  const char *what)
{
	snprintf(path, n, "/sys/kernel/mm/hugepages/hugepages-%lukB/%s",
		 psize >> 10, what);
	return path;
}

static inline long hp_read(unsigned long psize, const char *what)
{
	char path[128];

	return read_long(hp_path(path, sizeof(path), psize, what));
}

static inline int hp_write(unsigned long psize, const char *what, long v)
{
	char path[128];

	return write_long(hp_path(path, sizeof(path), psize, what), v);
}

/* Free pages nobody has reserved: what a reserving mmap() can get. */
static inline long hp_avail(unsigned long psize)
{
	return hp_read(psize, "free_hugepages") - hp_read(psize, "resv_hugepages");
}

/* A /proc/meminfo field, in kB. */
static inline long meminfo(const char *key)
{
	static char buf[8192];
	size_t kl = strlen(key);
	char *p;

	if (!read_text("/proc/meminfo", buf, sizeof(buf)))
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, kl) && p[kl] == ':')
			return strtol(p + kl + 1, NULL, 10);
	return -1;
}

/*
 * Committed_AS is a per-cpu counter and /proc/meminfo shows only its
 * folded part.  Switching to overcommit_memory=2 folds every CPU's delta
 * (overcommit_policy_handler), so this reads the exact value at the moment
 * of the write, then puts the policy back.
 */
static inline long committed_as_exact(void)
{
	static const char *const pol = "/proc/sys/vm/overcommit_memory";
	long old = read_long(pol), v;

	write_long(pol, 2);
	v = meminfo("Committed_AS");
	write_long(pol, old);
	return v;
}

/* Touch with SIGBUS caught: 0 done, 1 SIGBUS. */
static sigjmp_buf touch_jmp;
static volatile sig_atomic_t touch_armed;

static void touch_sigbus(int sig)
{
	(void)sig;
	if (touch_armed)
		siglongjmp(touch_jmp, 1);
	signal(SIGBUS, SIG_DFL);
	raise(SIGBUS);
}

static inline void touch_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = touch_sigbus;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGBUS, &sa, NULL);
}

/* Write *val at p (write) or read p into *val (one word); 1 if that raised SIGBUS. */
static inline int touch_word(volatile uint64_t *p, uint64_t *val, int write)
{
	if (sigsetjmp(touch_jmp, 1)) {
		touch_armed = 0;
		return 1;
	}
	touch_armed = 1;
	if (write)
		*p = *val;
	else
		*val = *p;
	touch_armed = 0;
	return 0;
}

static inline int touch_write(volatile uint64_t *p, uint64_t val)
{
	return touch_word(p, &val, 1);
}

static inline int touch_read(volatile uint64_t *p, uint64_t *val)
{
	return touch_word(p, val, 0);
}

/*
 * The TAP lines of hmapping and hparity: "ok - " or "not ok - ", then
 * report_prefix (what the line is about, "" unless set), then the message.
 */
static int failures __attribute__((unused));
static char report_prefix[32] __attribute__((unused));

static __attribute__((format(printf, 2, 3))) void report(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok - %s", ok ? "" : "not ", report_prefix);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!ok)
		failures++;
}

/* Some huge page sizes the kernel has a pool for (size > 0 pages). */
static inline int have_pool(unsigned long psize)
{
	return hp_read(psize, "nr_hugepages") > 0;
}

#define MAXSIZES 8

/*
 * The huge page sizes the kernel has, smallest first, from the directories
 * of /sys/kernel/mm/hugepages (x86-64: 2 MB and 1 GB; arm64 with 4 kB
 * pages: 64 kB, 2 MB, 32 MB and 1 GB).  Returns how many, up to max.
 */
static inline int hp_sizes(unsigned long *out, int max)
{
	DIR *d = opendir("/sys/kernel/mm/hugepages");
	struct dirent *e;
	unsigned long kb, v;
	int n = 0, i;

	while (d && (e = readdir(d)) && n < max) {
		if (sscanf(e->d_name, "hugepages-%lukB", &kb) != 1)
			continue;
		v = kb << 10;
		for (i = n++; i > 0 && out[i - 1] > v; i--)
			out[i] = out[i - 1];
		out[i] = v;
	}
	if (d)
		closedir(d);
	return n;
}

/* The default huge page size, the one /dev/hugetlb maps (Hugepagesize). */
static inline unsigned long hp_default_size(void)
{
	long kb = meminfo("Hugepagesize");

	return kb > 0 ? (unsigned long)kb << 10 : MB2;
}

/* How the hugetlb cgroup names a size in its files: 64KB, 2MB, 1GB. */
static inline const char *cg_size_name(unsigned long psize)
{
	static char buf[4][16];
	static int i;

	i = (i + 1) % 4;
	if (psize >= GB1)
		snprintf(buf[i], sizeof(buf[i]), "%luGB", psize >> 30);
	else if (psize >= (1UL << 20))
		snprintf(buf[i], sizeof(buf[i]), "%luMB", psize >> 20);
	else
		snprintf(buf[i], sizeof(buf[i]), "%luKB", psize >> 10);
	return buf[i];
}

#endif
