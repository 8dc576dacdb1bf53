// SPDX-License-Identifier: GPL-2.0
/*
 * hugepreload.c - back an unmodified program's large anonymous memory with
 * huge pages, chosen by environment:
 *
 *   LD_PRELOAD=build/bench/hugepreload.so HUGEPRELOAD_BACKING=B prog ...
 *
 *   B = devhugetlb[-<N>kB]  mmap(MAP_PRIVATE) of /dev/hugetlb[-<N>kB]
 *       maphugetlb[-<N>kB]  MAP_ANONYMOUS|MAP_HUGETLB (MAP_HUGE_<N>KB)
 *       hugetlbfs[-<N>kB]   an unlinked file in a hugetlbfs mount with <N> kB
 *                           pages, mapped MAP_PRIVATE (fork keeps private
 *                           memory private, as for anonymous memory)
 *       thp                 anonymous, 2 MB aligned, MADV_HUGEPAGE
 *       none                anonymous, MADV_NOHUGEPAGE: 4 KB pages whatever
 *                           the THP setting, the baseline with the same
 *                           interposition
 *   HUGEPRELOAD_MIN = a size (bench/size.h: bytes, K, M or G in either
 *       case, a fraction allowed; default 1M): smaller requests are left
 *       alone.
 *
 * What is covered.  glibc's malloc gets its big chunks from an internal
 * mmap that LD_PRELOAD cannot reach (checked on Debian 12's glibc 2.36: a
 * preloaded mmap sees none of malloc's), so the library serves the malloc
 * family itself for requests of at least HUGEPRELOAD_MIN (malloc, calloc,
 * realloc, reallocarray, memalign, aligned_alloc, posix_memalign, valloc,
 * pvalloc) and hands everything smaller to glibc (__libc_malloc and
 * friends).  It also interposes madvise, so that a program's own
 * MADV_HUGEPAGE or MADV_NOHUGEPAGE on what the library placed does not
 * undo the backing (memcached -L's), and mmap/mmap64 for private, writable,
 * anonymous requests with no address, no MAP_FIXED, MAP_NORESERVE,
 * MAP_HUGETLB, MAP_GROWSDOWN or MAP_STACK (a PROT_NONE or MAP_NORESERVE
 * reservation is sparse by intent; huge pages would commit it).  Not
 * covered: glibc's heap below the threshold (brk and its arenas), shared
 * anonymous mappings, and any memory a program gets through raw syscalls.
 *
 * What it hands out is rounded up to whole pages of the backing (2 MB for
 * thp) and kept in a table, so that munmap and mremap stay correct:
 * munmap of a backed range ending at the caller's end also takes the
 * rounding slack; a hugetlb range that does not start and end on huge-page
 * boundaries is refused with EINVAL, as the kernel refuses it for
 * MAP_HUGETLB; mremap shrinks in place, grows by mapping anew on the same
 * backing (moving 4 KB and THP pages, copying hugetlb ones, whose mappings
 * the kernel cannot grow), and refuses (EINVAL) a range that is not a
 * whole backed mapping or MREMAP_FIXED/MREMAP_DONTUNMAP on one; a plain
 * mapping moved by MREMAP_FIXED onto a backed range takes that range out
 * of the table.  Aligned allocations (memalign, aligned_alloc,
 * posix_memalign) are served up to 1 GB alignment, cut from a larger
 * block where the alignment exceeds the backing's page.
 *
 * When the pool runs out (mmap fails with ENOMEM: hugetlb reserves at
 * mmap), the request gets normal pages (glibc's, or a plain anonymous
 * mapping) and one line on stderr says so, once per process.  A bad
 * setting (unknown backing, no device or mount) is one line on stderr and
 * exit status 2: a run on the wrong pages would be worse than none.
 *
 * Thread safety: one mutex over the table (held across the mmap that
 * fills an entry), taken around fork.  Calls that touch no backed memory
 * (small allocations, others' munmap) cost one atomic load of the table's
 * address range.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * The suite's one size parser, linked in (realprog.mk): hidden, so that
 * this library exports only what it interposes and never size_parse to
 * the program it is loaded into.
 */
#pragma GCC visibility push(hidden)
#include "size.h"
#pragma GCC visibility pop

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

#define BASE_PAGE 4096UL
#define THP_SIZE (2UL << 20)
#define MAX_REGIONS 4096

enum kind { K_NONE, K_THP, K_MAPHUGETLB, K_DEVHUGETLB, K_HUGETLBFS };

static const char *const kind_names[] = {
	"none", "thp", "maphugetlb", "devhugetlb", "hugetlbfs",
};

/* one backed mapping: [start, end) is mapped, [start, user_end) asked for */
struct region {
	uintptr_t start, end, user_end;
	int from_malloc;
};

static struct {
	enum kind kind;
	size_t page;		/* the backing's page: what lengths round to */
	size_t min;		/* smaller requests are left alone */
	char path[256];		/* the device, or the hugetlbfs directory */
	char name[64];		/* HUGEPRELOAD_BACKING as given */
} cfg;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct region table[MAX_REGIONS];
static int nregions;
/* the table's address range, for a lock-free "not ours" */
static uintptr_t lo_addr = UINTPTR_MAX, hi_addr;
static int fallback_said;

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);
void __libc_free(void *p);

/* -- small helpers that never allocate ------------------------------------ */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(2, buf, n) < 0)
		return;
}

static void __attribute__((noreturn)) die(const char *what)
{
	say("hugepreload: %s", what);
	_exit(2);
}

static void *sys_mmap(void *a, size_t len, int prot, int fl, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, a, len, prot, fl, fd, off);
}

static int sys_munmap(void *a, size_t len)
{
	return syscall(SYS_munmap, a, len);
}

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

/*
 * Calls fn on each line of a /proc file, read without stdio (which would
 * allocate, from inside malloc); stops when fn returns nonzero.
 */
static int each_line(const char *path, int (*fn)(const char *line, void *arg),
		     void *arg)
{
	static char buf[8192];
	size_t have = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = 0;
	ssize_t got;

	if (fd < 0)
		return 0;
	while (!r && (got = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		char *line = buf, *nl;

		have += got;
		buf[have] = 0;
		while (!r && (nl = strchr(line, '\n'))) {
			*nl = 0;
			r = fn(line, arg);
			line = nl + 1;
		}
		have -= line - buf;
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)	/* a line longer than buf */
			have = 0;
	}
	close(fd);
	return r;
}

static int meminfo_line(const char *line, void *arg)
{
	return sscanf(line, "Hugepagesize: %zu kB", (size_t *)arg) == 1;
}

/* page size (bytes) of a hugetlbfs mount's options, default if none */
static size_t mount_page(const char *opts, size_t dflt)
{
	const char *p = strstr(opts, "pagesize=");
	unsigned long long v;
	char num[32];
	int i;

	if (!p)
		return dflt;
	p += strlen("pagesize=");
	for (i = 0; i < 31 && p[i] && p[i] != ','; i++)
		num[i] = p[i];
	num[i] = 0;
	return size_parse(num, &v) ? 0 : v;
}

static int mounts_line(const char *line, void *arg)
{
	char dir[256], type[64], opts[512];
	size_t dflt = *(size_t *)arg;

	if (sscanf(line, "%*s %255s %63s %511s", dir, type, opts) != 3 ||
	    strcmp(type, "hugetlbfs") || mount_page(opts, dflt) != cfg.page)
		return 0;
	snprintf(cfg.path, sizeof(cfg.path), "%s", dir);
	return 1;
}

/* -- configuration --------------------------------------------------------- */

/* name[-<N>kB]: the kind and, for the hugetlb kinds, cfg.page */
static void parse_backing(const char *b, size_t dflt)
{
	size_t i, kb;
	const char *dash;
	char end;

	for (i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
		size_t n = strlen(kind_names[i]);

		if (strncmp(b, kind_names[i], n) || (b[n] && b[n] != '-'))
			continue;
		cfg.kind = i;
		dash = b[n] ? b + n : NULL;
		cfg.page = cfg.kind == K_NONE ? BASE_PAGE :
			   cfg.kind == K_THP ? THP_SIZE : dflt;
		if (!dash)
			return;
		if (cfg.kind >= K_MAPHUGETLB &&
		    sscanf(dash, "-%zukB%c", &kb, &end) == 1 && kb &&
		    !(kb & (kb - 1))) {
			cfg.page = kb << 10;
			return;
		}
		break;
	}
	say("hugepreload: unknown HUGEPRELOAD_BACKING '%s': use devhugetlb, "
	    "maphugetlb or hugetlbfs (each optionally -<N>kB, e.g. "
	    "devhugetlb-1048576kB), thp or none", b);
	_exit(2);
}

/* checks that the backing can work here, and finds its path */
static void check_backing(size_t dflt)
{
	char why[400];

	if (cfg.kind == K_DEVHUGETLB) {
		if (cfg.page == dflt)
			snprintf(cfg.path, sizeof(cfg.path), "/dev/hugetlb");
		else
			snprintf(cfg.path, sizeof(cfg.path),
				 "/dev/hugetlb-%zukB", cfg.page >> 10);
		if (access(cfg.path, R_OK | W_OK)) {
			snprintf(why, sizeof(why), "%s: %s (a kernel without "
				 "the /dev/hugetlb series, or no pool of "
				 "that size)", cfg.path, strerror(errno));
			die(why);
		}
	} else if (cfg.kind == K_HUGETLBFS &&
		   !each_line("/proc/mounts", mounts_line, &dflt)) {
		snprintf(why, sizeof(why), "no hugetlbfs mount with %zu kB "
			 "pages in /proc/mounts: mount one (mount -t hugetlbfs "
			 "-o pagesize=%zuK none DIR)", cfg.page >> 10,
			 cfg.page >> 10);
		die(why);
	}
}

static void init(void)
{
	const char *b = getenv("HUGEPRELOAD_BACKING");
	const char *m = getenv("HUGEPRELOAD_MIN");
	unsigned long long min = 1UL << 20;
	size_t dflt = 0;

	if (!b || !*b)
		die("HUGEPRELOAD_BACKING is not set: set it to devhugetlb, "
		    "maphugetlb, hugetlbfs, thp or none");
	snprintf(cfg.name, sizeof(cfg.name), "%s", b);
	each_line("/proc/meminfo", meminfo_line, &dflt);
	parse_backing(b, dflt << 10);
	if (cfg.kind >= K_MAPHUGETLB && !cfg.page)
		die("the kernel has no huge pages (no Hugepagesize in "
		    "/proc/meminfo)");
	check_backing(dflt << 10);
	if (m && size_parse(m, &min))
		die("HUGEPRELOAD_MIN is not a size: give bytes, optionally "
		    "with K, M or G (e.g. 1M)");
	cfg.min = min ? min : 1;
}

static void ready(void)
{
	pthread_once(&once, init);
}

static void fork_lock(void)
{
	pthread_mutex_lock(&lock);
}

static void fork_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

/*
 * Runs after libc is up: pthread_atfork allocates, so it cannot run from
 * init(), which may be called from inside malloc.
 */
static void __attribute__((constructor)) setup(void)
{
	ready();
	pthread_atfork(fork_lock, fork_unlock, fork_unlock);
}

/* -- the table (callers hold the lock) ------------------------------------- */

static void update_range(void)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	int i;

	for (i = 0; i < nregions; i++) {
		if (table[i].start < lo)
			lo = table[i].start;
		if (table[i].end > hi)
			hi = table[i].end;
	}
	__atomic_store_n(&lo_addr, lo, __ATOMIC_RELEASE);
	__atomic_store_n(&hi_addr, hi, __ATOMIC_RELEASE);
}

static int maybe_ours(uintptr_t a, uintptr_t e)
{
	return a < __atomic_load_n(&hi_addr, __ATOMIC_ACQUIRE) &&
	       e > __atomic_load_n(&lo_addr, __ATOMIC_ACQUIRE);
}

static struct region *find(uintptr_t a)
{
	int i;

	for (i = 0; i < nregions; i++)
		if (a >= table[i].start && a < table[i].end)
			return &table[i];
	return NULL;
}

static void drop(struct region *r)
{
	*r = table[--nregions];
}

/*
 * Takes [a, e) out of the table after the kernel unmapped or replaced it:
 * entries are trimmed, split or dropped.  A split needs a free slot; when
 * there is none the tail is forgotten, so it is treated as a normal mapping
 * from then on (its munmap then rounds as the kernel does for it).
 */
static void carve(uintptr_t a, uintptr_t e)
{
	int i;

	for (i = 0; i < nregions; i++) {
		struct region *r = &table[i], tail = *r;

		if (e <= r->start || a >= r->end)
			continue;
		if (a <= r->start && e >= r->end) {
			drop(r);
			i--;
			continue;
		}
		if (a > r->start && e < r->end && nregions < MAX_REGIONS) {
			tail.start = e;
			table[nregions++] = tail;
		}
		if (a > r->start) {
			r->end = a;
			if (r->user_end > a)
				r->user_end = a;
		} else {
			r->start = e;
		}
	}
	update_range();
}

/* -- mapping on the backing ------------------------------------------------ */

static int huge_shift(size_t page)
{
	return __builtin_ctzl(page);
}

/* an unlinked file in the hugetlbfs mount, or -1 */
static int hugetlbfs_file(size_t len)
{
	char path[300];
	int fd;

	snprintf(path, sizeof(path), "%s/hugepreload-XXXXXX", cfg.path);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -1;
	unlink(path);
	if (ftruncate(fd, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void *map_thp(size_t len, int prot, int fl)
{
	char *raw = sys_mmap(NULL, len + THP_SIZE, prot, fl, -1, 0), *a;

	if (raw == MAP_FAILED)
		return raw;
	a = (char *)round_up((uintptr_t)raw, THP_SIZE);
	if (a > raw)
		sys_munmap(raw, a - raw);
	sys_munmap(a + len, raw + THP_SIZE - a);
	syscall(SYS_madvise, a, len, MADV_HUGEPAGE);
	return a;
}

/* len is rounded to cfg.page; MAP_FAILED with errno on failure */
static void *map_kind(size_t len, int prot, int extra)
{
	int fl = MAP_PRIVATE | extra, fd, e;
	void *p;

	switch (cfg.kind) {
	case K_NONE:
		p = sys_mmap(NULL, len, prot, fl | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED)
			syscall(SYS_madvise, p, len, MADV_NOHUGEPAGE);
		return p;
	case K_THP:
		return map_thp(len, prot, fl | MAP_ANONYMOUS);
	case K_MAPHUGETLB:
		return sys_mmap(NULL, len, prot, fl | MAP_ANONYMOUS |
				MAP_HUGETLB | (huge_shift(cfg.page) <<
					       MAP_HUGE_SHIFT), -1, 0);
	case K_DEVHUGETLB:
		fd = open(cfg.path, O_RDWR | O_CLOEXEC);
		break;
	default:
		fd = hugetlbfs_file(len);
		break;
	}
	if (fd < 0)
		return MAP_FAILED;
	p = sys_mmap(NULL, len, prot, fl, fd, 0);
	e = errno;
	close(fd);
	errno = e;
	return p;
}

/*
 * A mapping of len bytes on the backing, entered in the table; or NULL,
 * and the caller maps normally: when the pool is out (ENOMEM, the usual
 * case) or the mapping fails otherwise, after one line on stderr per
 * process.  MAP_FAILED (ENOMEM) only when len cannot be rounded.
 */
static void *map_backed(size_t len, int prot, int extra, int from_malloc)
{
	size_t rl = round_up(len, cfg.page);
	void *p = MAP_FAILED;

	if (rl < len)
		return errno = ENOMEM, MAP_FAILED;
	pthread_mutex_lock(&lock);
	if (nregions == MAX_REGIONS) {
		pthread_mutex_unlock(&lock);
		return NULL;
	}
	p = map_kind(rl, prot, extra);
	if (p != MAP_FAILED) {
		table[nregions++] = (struct region){
			(uintptr_t)p, (uintptr_t)p + rl, (uintptr_t)p + len,
			from_malloc };
		update_range();
	} else {
		if (!fallback_said && errno == ENOMEM)
			say("hugepreload: %s: no free %zu kB huge pages for "
			    "%zu kB (ENOMEM): using normal pages for it and "
			    "any later request that does not fit",
			    cfg.name, cfg.page >> 10, rl >> 10);
		else if (!fallback_said)
			say("hugepreload: %s: mapping %zu kB failed: %s: "
			    "using normal pages for it and any later request "
			    "that fails", cfg.name, rl >> 10, strerror(errno));
		fallback_said = 1;
		p = NULL;
	}
	pthread_mutex_unlock(&lock);
	return p;
}

/* -- mmap, munmap, mremap -------------------------------------------------- */

static int eligible(void *addr, size_t len, int prot, int fl, int fd)
{
	return !addr && fd == -1 && len >= cfg.min && (prot & PROT_WRITE) &&
	       (fl & MAP_TYPE) == MAP_PRIVATE && (fl & MAP_ANONYMOUS) &&
	       !(fl & (MAP_FIXED | MAP_FIXED_NOREPLACE | MAP_NORESERVE |
		       MAP_HUGETLB | MAP_GROWSDOWN | MAP_STACK));
}

void *mmap(void *addr, size_t len, int prot, int fl, int fd, off_t off)
{
	void *p;

	ready();
	if (eligible(addr, len, prot, fl, fd)) {
		p = map_backed(len, prot, fl & (MAP_POPULATE | MAP_LOCKED), 0);
		if (p)
			return p;
	}
	p = sys_mmap(addr, len, prot, fl, fd, off);
	if (p != MAP_FAILED && (fl & MAP_FIXED) &&
	    maybe_ours((uintptr_t)p, (uintptr_t)p + len)) {
		pthread_mutex_lock(&lock);
		carve((uintptr_t)p, (uintptr_t)p + round_up(len, BASE_PAGE));
		pthread_mutex_unlock(&lock);
	}
	return p;
}

void *mmap64(void *addr, size_t len, int prot, int fl, int fd, off_t off)
	__attribute__((alias("mmap")));

/*
 * The end of an munmap of [a, e): where e reaches the caller's end of a
 * backed mapping (or into its rounding slack), the slack goes too.
 */
static uintptr_t unmap_end(uintptr_t a, uintptr_t e)
{
	int i;

	for (i = 0; i < nregions; i++) {
		struct region *r = &table[i];

		if (a < r->end && e >= round_up(r->user_end, BASE_PAGE) &&
		    e < r->end)
			e = r->end;
	}
	return e;
}

int munmap(void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, e = a + round_up(len, BASE_PAGE);
	int ret;

	if (!maybe_ours(a, e))
		return sys_munmap(addr, len);
	pthread_mutex_lock(&lock);
	e = unmap_end(a, e);
	/* the kernel refuses a hugetlb range off huge-page boundaries */
	ret = sys_munmap(addr, e - a);
	if (!ret)
		carve(a, e);
	pthread_mutex_unlock(&lock);
	return ret;
}

/* grows r to new_len on the backing; callers hold the lock */
static void *move_grow(struct region *r, size_t new_len)
{
	struct region old = *r;
	size_t rl = round_up(new_len, cfg.page);
	void *p = map_kind(rl, PROT_READ | PROT_WRITE, 0);

	if (p == MAP_FAILED)
		return p;
	if (cfg.kind <= K_THP) {	/* 4 KB and THP pages move */
		if (syscall(SYS_mremap, old.start, old.end - old.start,
			    old.end - old.start, MREMAP_MAYMOVE | MREMAP_FIXED,
			    p) == -1) {
			sys_munmap(p, rl);
			return MAP_FAILED;
		}
	} else {		/* a hugetlb mapping cannot grow: copy */
		memcpy(p, (void *)old.start, old.user_end - old.start);
		sys_munmap((void *)old.start, old.end - old.start);
	}
	*r = (struct region){ (uintptr_t)p, (uintptr_t)p + rl,
			      (uintptr_t)p + new_len, old.from_malloc };
	update_range();
	return p;
}

/* mremap of a whole backed mapping r; callers hold the lock */
static void *remap_region(struct region *r, size_t new_len, int flags)
{
	uintptr_t new_end = r->start + round_up(new_len, cfg.page);

	if (!new_len || (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)))
		return errno = EINVAL, MAP_FAILED;
	if (new_end <= r->end) {
		if (new_end < r->end &&
		    sys_munmap((void *)new_end, r->end - new_end))
			return MAP_FAILED;
		r->end = new_end;
		r->user_end = r->start + new_len;
		update_range();
		return (void *)r->start;
	}
	if (!(flags & MREMAP_MAYMOVE))
		return errno = ENOMEM, MAP_FAILED;
	return move_grow(r, new_len);
}

/*
 * mremap of a mapping that is not ours.  With MREMAP_FIXED the kernel
 * unmaps whatever was at the target first, which may be (part of) one of
 * ours: that part leaves the table, or a later munmap or mremap of the
 * moved mapping would be judged by a stale entry.
 */
static void *plain_mremap(void *old, size_t old_len, size_t new_len,
			  int flags, void *new_addr)
{
	uintptr_t n = (uintptr_t)new_addr, e = n + round_up(new_len, BASE_PAGE);
	void *p = (void *)syscall(SYS_mremap, old, old_len, new_len, flags,
				  new_addr);

	if (p != MAP_FAILED && (flags & MREMAP_FIXED) && maybe_ours(n, e)) {
		pthread_mutex_lock(&lock);
		carve(n, e);
		pthread_mutex_unlock(&lock);
	}
	return p;
}

void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	uintptr_t a = (uintptr_t)old;
	void *new_addr = NULL, *p;
	struct region *r;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (!maybe_ours(a, a + (old_len ? old_len : 1)))
		return plain_mremap(old, old_len, new_len, flags, new_addr);
	pthread_mutex_lock(&lock);
	r = find(a);
	if (!r) {
		pthread_mutex_unlock(&lock);
		return plain_mremap(old, old_len, new_len, flags, new_addr);
	}
	if (a != r->start || round_up(old_len, BASE_PAGE) !=
	    round_up(r->user_end - r->start, BASE_PAGE)) {
		errno = EINVAL;
		p = MAP_FAILED;
	} else {
		p = remap_region(r, new_len, flags);
	}
	pthread_mutex_unlock(&lock);
	return p;
}

/*
 * Page-size advice (MADV_HUGEPAGE, MADV_NOHUGEPAGE) on memory this library
 * placed is the backing's to decide, not the program's: memcached -L
 * advises MADV_HUGEPAGE on its item cache, which would turn "none" into
 * THP.  Such advice on a range inside one backed mapping succeeds and does
 * nothing; any other advice, or a range that is not all ours, goes to the
 * kernel.
 */
int madvise(void *addr, size_t len, int advice)
{
	uintptr_t a = (uintptr_t)addr, e = a + len;
	struct region *r;
	int ours = 0;

	if ((advice == MADV_HUGEPAGE || advice == MADV_NOHUGEPAGE) && len &&
	    maybe_ours(a, e)) {
		pthread_mutex_lock(&lock);
		r = find(a);
		ours = r && e <= r->end;
		pthread_mutex_unlock(&lock);
	}
	if (ours)
		return 0;
	return syscall(SYS_madvise, addr, len, advice);
}

/* -- the malloc family ----------------------------------------------------- */

/* a backed block for a large request; NULL: let glibc serve it */
static void *big_alloc(size_t n)
{
	void *p;

	ready();
	if (n < cfg.min)
		return NULL;
	p = map_backed(n, PROT_READ | PROT_WRITE, 0, 1);
	return p == MAP_FAILED ? NULL : p;
}

/* the size of backed block p, or 0 if p is glibc's */
static size_t block_size(void *p, int release)
{
	uintptr_t a = (uintptr_t)p;
	struct region *r;
	size_t n = 0;

	if (!p || !maybe_ours(a, a + 1))
		return 0;
	pthread_mutex_lock(&lock);
	r = find(a);
	if (r && r->start == a && r->from_malloc) {
		n = r->end - r->start;
		if (release) {
			sys_munmap(p, n);
			drop(r);
			update_range();
		}
	}
	pthread_mutex_unlock(&lock);
	return n;
}

void *malloc(size_t n)
{
	void *p = big_alloc(n);

	return p ? p : __libc_malloc(n);
}

void free(void *p)
{
	if (!block_size(p, 1))
		__libc_free(p);
}

void *calloc(size_t n, size_t m)
{
	size_t t;
	void *p;

	if (__builtin_mul_overflow(n, m, &t))
		return errno = ENOMEM, NULL;
	p = big_alloc(t);	/* a new mapping is zeroed */
	return p ? p : __libc_calloc(n, m);
}

size_t malloc_usable_size(void *p)
{
	static size_t (*glibc_usable)(void *);
	size_t n = block_size(p, 0);

	if (n || !p)
		return n;
	/* looked up only here: dlsym may allocate */
	if (!glibc_usable)
		glibc_usable = dlsym(RTLD_NEXT, "malloc_usable_size");
	return glibc_usable(p);
}

void *realloc(void *p, size_t n)
{
	size_t have = block_size(p, 0);
	void *q;

	if (!p)
		return malloc(n);
	if (!have) {
		q = big_alloc(n);
		if (!q)
			return __libc_realloc(p, n);
		memcpy(q, p, malloc_usable_size(p) < n ?
		       malloc_usable_size(p) : n);
		__libc_free(p);
		return q;
	}
	if (!n) {
		free(p);
		return NULL;
	}
	if (n <= have)
		return p;
	q = malloc(n);
	if (q) {
		memcpy(q, p, have);
		free(p);
	}
	return q;
}

void *reallocarray(void *p, size_t n, size_t m)
{
	size_t t;

	if (__builtin_mul_overflow(n, m, &t))
		return errno = ENOMEM, NULL;
	return realloc(p, t);
}

/*
 * A backed block of n bytes aligned to align (a power of two above the
 * backing's page, at most MAX_ALIGN): align - page bytes more are mapped,
 * then the head before the aligned start and the tail past its last page
 * go back.  Both cuts fall on the backing's pages, as hugetlb needs.
 * NULL: let glibc serve it.
 */
#define MAX_ALIGN (1UL << 30)

static void *big_aligned(size_t align, size_t n)
{
	size_t extra = align - cfg.page;
	uintptr_t p, a, e;
	struct region *r;

	if (n > SIZE_MAX - extra || !(p = (uintptr_t)big_alloc(n + extra)))
		return NULL;
	a = round_up(p, align);
	pthread_mutex_lock(&lock);
	r = find(p);
	e = r->end;
	*r = (struct region){ a, a + round_up(n, cfg.page), a + n, 1 };
	if (a > p)
		sys_munmap((void *)p, a - p);
	if (e > r->end)
		sys_munmap((void *)r->end, e - r->end);
	update_range();
	pthread_mutex_unlock(&lock);
	return (void *)a;
}

/*
 * Backed blocks start on a page of the backing, so any alignment up to it
 * is free; larger powers of two are cut from a larger block.  What else
 * (not a power of two: glibc rounds it up; huge or overflowing) glibc
 * answers.
 */
void *memalign(size_t align, size_t n)
{
	void *p = NULL;

	ready();
	if (align <= cfg.page)
		p = big_alloc(n);
	else if (!(align & (align - 1)) && align <= MAX_ALIGN)
		p = big_aligned(align, n);
	return p ? p : __libc_memalign(align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	return memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	if (!align || (align & (align - 1)) || align % sizeof(void *))
		return EINVAL;
	p = memalign(align, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *valloc(size_t n)
{
	return memalign(BASE_PAGE, n);
}

/* n rounded up to whole pages; ENOMEM where that overflows, as glibc */
void *pvalloc(size_t n)
{
	if (n > SIZE_MAX - (BASE_PAGE - 1))
		return errno = ENOMEM, NULL;
	return memalign(BASE_PAGE, round_up(n, BASE_PAGE));
}
