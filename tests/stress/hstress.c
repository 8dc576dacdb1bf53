// SPDX-License-Identifier: GPL-2.0
/*
 * hstress: randomized stress of /dev/hugetlb and MAP_HUGETLB side by side.
 *
 *   hstress [--seed S] [--procs P] [--ops N] [--seconds T] [--overcommit K]
 *
 * P slots run at once.  Each slot runs a chain of worker processes
 * ("lives"); a life performs random operations on its own table of
 * mappings until it draws "exit" (it then exits with everything still
 * mapped) and the slot starts the next life.  Operations: mmap with valid
 * and invalid arguments, at every huge page size with a pool (x86-64: 2 MB
 * and 1 GB; arm64: 64 kB, 2 MB, 32 MB and 1 GB), private and shared, with and
 * without MAP_NORESERVE, by /dev/hugetlb-<size>kB or MAP_HUGETLB; touch
 * (write, and read back what was written); munmap whole or of a head, tail
 * or middle; mremap shrink, move and (refused) grow; mprotect; madvise
 * (MADV_DONTNEED); fork, where the child checks its copy, writes the
 * shared pages, runs a few operations itself and exits, and the parent
 * then checks that it sees the child's writes to shared pages and none to
 * private ones.
 *
 * Every outcome is checked: an mmap() may fail only with ENOMEM, and only
 * when it reserves; invalid arguments must fail with the same errno on
 * both methods; SIGBUS is allowed only where nothing was reserved
 * (MAP_NORESERVE, a private page dropped by MADV_DONTNEED, a private page
 * written in a forked child); every page read holds the last value written.
 * A private page's reservation is used up by its first fault, a read as
 * much as a write; MADV_DONTNEED gives it back only if the pool has no
 * surplus page at that moment, which depends on the other slots, so a
 * zapped private page may SIGBUS (MAP_HUGETLB too; hparity checks both).
 *
 * The sequence of operations of each slot depends only on --seed (ENOMEM
 * and SIGBUS depend on the other slots too: --procs 1 replays exactly).
 * It stops after --ops operations per slot or --seconds, whichever is
 * first.  During the run nr_overcommit_hugepages is --overcommit (default
 * 8) at every size that can have surplus pages, so surplus pages come and
 * go; it is put back afterwards.
 * Output: "# ..." statistics, for each size "ok - hstress mapped ..." if
 * both methods mapped it at least once, and "ok - hstress ..." or
 * "not ok - ..." for the checks.
 */
#include "hutil.h"
#include <time.h>

#define MAXMAPS 12
#define MAXPG 8
#define FORKMASK 0x5a5a5a5a5a5a5a5aULL

/*
 * UNTOUCHED: never faulted, reserved unless noreserve.  FAULTED: read,
 * holds zeroes.  WRITTEN: holds tag.  DROPPED: a private page zapped
 * after a fault, holds zeroes and may have lost its reservation.
 */
enum { ST_UNTOUCHED, ST_FAULTED, ST_WRITTEN, ST_DROPPED };
static const char *const state_name[] = { "untouched", "faulted", "written",
	"dropped" };

struct page {
	uint64_t tag;		/* first word, when ST_WRITTEN */
	uint8_t state;
	uint8_t writable;
};

struct map {
	char *addr;
	unsigned long psize;
	int npages, method, shared, noreserve;
	int split;		/* partly mprotect()ed: maybe several vmas */
	struct page pg[MAXPG];
};

enum op { OP_MMAP, OP_MMAP_BAD, OP_TOUCH, OP_MUNMAP, OP_MUNMAP_PART,
	  OP_MREMAP, OP_MPROTECT, OP_MADVISE, OP_FORK, OP_EXIT, OP_BAD_RANGE,
	  NOPS };
static const char *const op_name[] = { "mmap", "mmap-invalid", "touch",
	"munmap", "munmap-partial", "mremap", "mprotect", "madvise-dontneed",
	"fork", "exit", "invalid-range" };
/* Relative weights of the operations a life draws. */
static const int op_weight[] = { 20, 6, 30, 6, 6, 6, 6, 6, 2, 1, 4 };

#define NMSG 16
struct stats {
	long ops[NOPS];
	long slot_ops[64];
	long mmap_ok[2][MAXSIZES];	/* [method][index in sizes] */
	long enomem, sigbus, lives, pages_touched, checks;
	long failures;
	int nmsg;
	char msg[NMSG][200];
};

static struct stats *st;
static struct map maps[MAXMAPS];
static int nmaps;
static uint64_t rng;
static int in_child;		/* a forked child: private writes may SIGBUS */
static int slot;
static long slot_budget;
static double deadline;
/*
 * The sizes with a pool, smallest first.  A size of 1 GB or more is drawn
 * once in 16 mmaps, one page at a time (its fault clears 1 GB: seconds
 * under TCG); the others share the rest.
 */
static unsigned long sizes[MAXSIZES];
static int nsizes, nsmall;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int rnd(int n)
{
	return (int)(next() % (uint64_t)n);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fail(const char *fmt, ...)
{
	int i = __atomic_fetch_add(&st->nmsg, 1, __ATOMIC_RELAXED);
	char buf[200];
	va_list ap;
	int n;

	__atomic_fetch_add(&st->failures, 1, __ATOMIC_RELAXED);
	n = snprintf(buf, sizeof(buf), "slot %d pid %d: ", slot, getpid());
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	if (i < NMSG)
		memcpy(st->msg[i], buf, sizeof(buf));
}

static void count(long *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static size_t mlen(const struct map *m)
{
	return m->npages * m->psize;
}

static void drop_map(int i)
{
	maps[i] = maps[--nmaps];
}

/* A free, psize-aligned range of len bytes (nothing mapped there now). */
static char *free_range(size_t len, unsigned long psize)
{
	char *p = mmap(NULL, len + psize, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *a;

	if (p == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)p + psize - 1) & ~(psize - 1));
	munmap(p, len + psize);
	return a;
}

static int may_sigbus(const struct map *m, const struct page *pg)
{
	return m->noreserve || pg->state == ST_DROPPED ||
	       (in_child && !m->shared);
}

static void op_mmap(void)
{
	int big = nsizes > nsmall && rnd(16) == 0;
	int si = big ? nsmall + (nsizes - nsmall > 1 ? rnd(nsizes - nsmall) : 0) :
		 nsmall > 1 ? rnd(nsmall) : 0;
	unsigned long psize = sizes[si];
	struct map *m;
	int flags, short_max;
	size_t len, cut;
	char *p;

	if (nmaps == MAXMAPS)
		return;
	m = &maps[nmaps];
	memset(m, 0, sizeof(*m));
	m->psize = psize;
	m->npages = big ? 1 : 1 + rnd(6);
	m->method = rnd(2);
	m->shared = rnd(2);
	m->noreserve = rnd(10) < 3;
	flags = (m->shared ? MAP_SHARED : MAP_PRIVATE) |
		(m->noreserve ? MAP_NORESERVE : 0);
	/*
	 * Unaligned lengths, 4 kB to 64 kB short and always less than a page
	 * short (64 kB pages: 60 kB at most): MAP_HUGETLB rounds them up to
	 * the huge page size, the device refuses them with EINVAL, as a
	 * hugetlbfs file does.
	 */
	short_max = psize / 4096 - 1 < 16 ? psize / 4096 - 1 : 16;
	cut = rnd(4) ? 0 : 4096 * (1 + rnd(short_max));
	len = mlen(m) - cut;
	p = hmap(m->method, psize, NULL, len, PROT_READ | PROT_WRITE, flags, 0);
	if (cut && m->method == M_DEV) {
		count(&st->checks);
		if (p != MAP_FAILED || errno != EINVAL)
			fail("mmap %s of %zu bytes, not a multiple of %lu kB: %s, want EINVAL",
			     method_name[M_DEV], len, psize >> 10,
			     p == MAP_FAILED ? strerror(errno) : "mapped");
		if (p != MAP_FAILED)
			munmap(p, mlen(m));
		return;
	}
	if (p == MAP_FAILED) {
		if (errno == ENOMEM && !m->noreserve)
			count(&st->enomem);
		else
			fail("mmap %s %d x %lu kB %s%s: %s", method_name[m->method],
			     m->npages, psize >> 10, m->shared ? "shared" : "private",
			     m->noreserve ? " noreserve" : "", strerror(errno));
		return;
	}
	if ((uintptr_t)p & (psize - 1))
		fail("mmap %s returned %p, not %lu kB aligned",
		     method_name[m->method], p, psize >> 10);
	m->addr = p;
	for (int i = 0; i < m->npages; i++)
		m->pg[i].writable = 1;
	count(&st->mmap_ok[m->method][si]);
	nmaps++;
}

/* Invalid arguments: both methods must refuse alike. */
static void op_mmap_bad(void)
{
	char *area = free_range(2 * MB2, MB2);
	int kind = rnd(4), err[2], want;
	size_t len = MB2;
	int flags = MAP_PRIVATE;
	void *addr = NULL;
	off_t off = 0;
	char *p;

	switch (kind) {
	case 0: len = 0; want = EINVAL; break;
	case 1: flags = 0; want = EINVAL; break;
	case 2: addr = area + 4096 * (1 + rnd(511)); flags |= MAP_FIXED;
		want = EINVAL; break;
	default: len = 1UL << 47; want = ENOMEM; break;
	}
	if (!area)
		return;
	for (int m = 0; m < 2; m++) {
		p = hmap(m, MB2, addr, len, PROT_READ | PROT_WRITE, flags, off);
		err[m] = p == MAP_FAILED ? errno : 0;
		if (p != MAP_FAILED)
			munmap(p, len);
	}
	count(&st->checks);
	if (err[0] != want || err[1] != want)
		fail("invalid mmap case %d: /dev/hugetlb %s, MAP_HUGETLB %s, want %s",
		     kind, strerror(err[0]), strerror(err[1]), strerror(want));
	/* The device's own rule: offset 0 only. */
	p = hmap(M_DEV, MB2, NULL, MB2, PROT_READ, MAP_PRIVATE,
		 MB2 * (1 + rnd(4)));
	if (p != MAP_FAILED || errno != EINVAL) {
		fail("/dev/hugetlb at a nonzero offset: %s, want EINVAL",
		     p == MAP_FAILED ? strerror(errno) : "mapped");
		if (p != MAP_FAILED)
			munmap(p, MB2);
	}
}

/* Read page i of m and check it; returns 1 on SIGBUS. */
static int check_page(struct map *m, int i, const char *when)
{
	struct page *pg = &m->pg[i];
	uint64_t v;

	if (touch_read((uint64_t *)(m->addr + i * m->psize), &v)) {
		if (pg->state == ST_WRITTEN || !may_sigbus(m, pg))
			fail("%s: SIGBUS reading %s %s%s %lu kB page %d (%s)", when,
			     method_name[m->method], m->shared ? "shared" : "private",
			     m->noreserve ? " noreserve" : "", m->psize >> 10, i,
			     state_name[pg->state]);
		count(&st->sigbus);
		return 1;
	}
	count(&st->checks);
	if (pg->state == ST_UNTOUCHED)
		pg->state = ST_FAULTED;
	if (v != (pg->state == ST_WRITTEN ? pg->tag : 0))
		fail("%s: %s %s %lu kB page %d holds %#llx, want %#llx (%s)", when,
		     method_name[m->method], m->shared ? "shared" : "private",
		     m->psize >> 10, i,
		     (unsigned long long)v,
		     (unsigned long long)(pg->state == ST_WRITTEN ? pg->tag : 0),
		     state_name[pg->state]);
	return 0;
}

static void op_touch(void)
{
	struct map *m;
	int n;

	if (!nmaps)
		return;
	m = &maps[rnd(nmaps)];
	/* A 1 GB fault clears 1 GB: seconds under TCG, so only sometimes. */
	if (m->psize >= GB1 && rnd(4))
		return;
	n = m->psize >= GB1 ? 1 : 1 + rnd(m->npages);
	while (n--) {
		int i = rnd(m->npages);
		struct page *pg = &m->pg[i];
		uint64_t tag = next() | 1;

		/* Untouched reserved pages must fault in, as zeroes. */
		if (check_page(m, i, "touch"))
			continue;
		if (!pg->writable)
			continue;
		if (touch_write((uint64_t *)(m->addr + i * m->psize), tag)) {
			if (!may_sigbus(m, pg))
				fail("SIGBUS writing %s %s page %d (%s)",
				     method_name[m->method],
				     m->shared ? "shared" : "private", i,
				     state_name[pg->state]);
			count(&st->sigbus);
			continue;
		}
		pg->tag = tag;
		pg->state = ST_WRITTEN;
		count(&st->pages_touched);
	}
}

static void op_munmap(void)
{
	int i;

	if (!nmaps)
		return;
	i = rnd(nmaps);
	if (munmap(maps[i].addr, mlen(&maps[i])))
		fail("munmap: %s", strerror(errno));
	drop_map(i);
}

/* munmap of a head, tail or middle range, huge page aligned. */
static void op_munmap_part(void)
{
	struct map *m, *t;
	int a, b;

	if (!nmaps)
		return;
	m = &maps[rnd(nmaps)];
	if (m->npages < 2)
		return;
	a = rnd(m->npages);
	b = a + 1 + rnd(m->npages - a);
	if (a == 0 && b == m->npages)
		b--;
	if (a > 0 && b < m->npages && nmaps == MAXMAPS)
		b = m->npages;
	if (munmap(m->addr + a * m->psize, (b - a) * m->psize)) {
		fail("partial munmap [%d,%d) of %d: %s", a, b, m->npages,
		     strerror(errno));
		return;
	}
	if (b < m->npages && a > 0) {
		t = &maps[nmaps++];
		*t = *m;
		t->addr = m->addr + b * m->psize;
		t->npages = m->npages - b;
		memmove(t->pg, m->pg + b, t->npages * sizeof(struct page));
		m->npages = a;
	} else if (a == 0) {
		m->addr += b * m->psize;
		m->npages -= b;
		memmove(m->pg, m->pg + b, m->npages * sizeof(struct page));
	} else {
		m->npages = a;
	}
}

static void op_mremap(void)
{
	struct map *m;
	char *to, *p;
	int k;

	if (!nmaps)
		return;
	m = &maps[rnd(nmaps)];
	k = rnd(3);
	if (k == 0 && m->npages > 1) {
		int n = 1 + rnd(m->npages - 1);

		p = mremap(m->addr, mlen(m), n * m->psize, 0);
		/* mremap() wants one vma; mprotect() may have split it. */
		if (p == MAP_FAILED && errno == EFAULT && m->split)
			return;
		if (p != m->addr)
			fail("mremap shrink %d -> %d pages: %s", m->npages, n,
			     p == MAP_FAILED ? strerror(errno) : "moved");
		else
			m->npages = n;
	} else if (k == 1) {
		to = free_range(mlen(m), m->psize);
		if (!to)
			return;
		p = mremap(m->addr, mlen(m), mlen(m), MREMAP_MAYMOVE | MREMAP_FIXED, to);
		if (p == MAP_FAILED && errno == EFAULT && m->split)
			return;
		if (p != to) {
			fail("mremap move of %d pages: %s", m->npages,
			     p == MAP_FAILED ? strerror(errno) : "wrong place");
			return;
		}
		m->addr = to;
		for (int i = 0; i < m->npages; i++)
			check_page(m, i, "after mremap move");
	} else {
		/* Growing a hugetlb mapping is refused (split reservations). */
		p = mremap(m->addr, mlen(m), mlen(m) + m->psize, MREMAP_MAYMOVE);
		count(&st->checks);
		if (p == MAP_FAILED && errno == EFAULT && m->split)
			return;
		if (p != MAP_FAILED || errno != EINVAL) {
			fail("mremap grow of %s %lu kB: %s, want EINVAL",
			     method_name[m->method], m->psize >> 10,
			     p == MAP_FAILED ? strerror(errno) : "grew");
			if (p != MAP_FAILED)
				m->addr = p;	/* and leave it be */
		}
	}
}

static void op_mprotect(void)
{
	struct map *m;
	int a, b, w;

	if (!nmaps)
		return;
	m = &maps[rnd(nmaps)];
	a = rnd(m->npages);
	b = a + 1 + rnd(m->npages - a);
	w = rnd(2);
	if (mprotect(m->addr + a * m->psize, (b - a) * m->psize,
		     PROT_READ | (w ? PROT_WRITE : 0))) {
		/* Splitting needs a free vma slot: ENOMEM is not a bug. */
		if (errno != ENOMEM)
			fail("mprotect [%d,%d): %s", a, b, strerror(errno));
		return;
	}
	for (int i = a; i < b; i++)
		m->pg[i].writable = w;
	if (a > 0 || b < m->npages)
		m->split = 1;
}

static void op_madvise(void)
{
	struct map *m;
	int a, b;

	if (!nmaps)
		return;
	m = &maps[rnd(nmaps)];
	a = rnd(m->npages);
	b = a + 1 + rnd(m->npages - a);
	if (madvise(m->addr + a * m->psize, (b - a) * m->psize, MADV_DONTNEED)) {
		fail("madvise DONTNEED [%d,%d) of %lu kB pages: %s", a, b,
		     m->psize >> 10, strerror(errno));
		return;
	}
	/*
	 * Shared pages stay in the file; private ones are gone, with their
	 * reservations unless no surplus page existed (see the top).
	 */
	for (int i = a; i < b && !m->shared; i++)
		if (m->pg[i].state != ST_UNTOUCHED)
			m->pg[i].state = ST_DROPPED;
	for (int i = a; i < b && m->shared; i++)
		if (m->pg[i].state == ST_WRITTEN)
			check_page(m, i, "shared page after MADV_DONTNEED");
}

/* Ranges that split a huge page: refused with EINVAL. */
static void op_bad_range(void)
{
	struct map *m;
	int k, r = 0, i;
	long sub;
	char *p;

	if (!nmaps)
		return;
	m = &maps[rnd(nmaps)];
	i = rnd(m->npages);
	/* A 4 kB page in the first 2 MB of the huge page, past its start. */
	sub = m->psize / 4096 - 1;
	p = m->addr + i * m->psize + 4096 * (1 + rnd(sub < 511 ? sub : 511));
	k = rnd(4);
	switch (k) {
	case 0: r = munmap(p, 4096); break;
	/* A change of protection, or there is nothing to split. */
	case 1: r = mprotect(p, 4096, m->pg[i].writable ? PROT_READ :
			     PROT_READ | PROT_WRITE); break;
	case 2: r = madvise(p, 4096, MADV_DONTNEED); break;
	default: r = mremap(m->addr, mlen(m), mlen(m), MREMAP_MAYMOVE | MREMAP_FIXED,
			    p) == MAP_FAILED ? -1 : 0; break;
	}
	count(&st->checks);
	if (!r || errno != EINVAL)
		fail("%s inside a huge page of %s: %s, want EINVAL",
		     (const char *[]){ "munmap", "mprotect", "madvise", "mremap" }[k],
		     method_name[m->method], r ? strerror(errno) : "succeeded");
}

static void run_ops(long budget, int allow_fork);

static void op_fork(void)
{
	uint64_t child_seed = next();
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		if (errno != EAGAIN && errno != ENOMEM)
			fail("fork: %s", strerror(errno));
		return;
	}
	if (!pid) {
		in_child = 1;
		rng = child_seed;
		for (int j = 0; j < nmaps; j++) {
			struct map *m = &maps[j];

			for (int i = 0; i < m->npages; i++) {
				struct page *pg = &m->pg[i];

				if (pg->state != ST_WRITTEN)
					continue;
				check_page(m, i, "child after fork");
				if (!pg->writable)
					continue;
				if (touch_write((uint64_t *)(m->addr + i * m->psize),
						pg->tag ^ FORKMASK)) {
					if (!may_sigbus(m, pg))
						fail("child: SIGBUS writing shared page");
					count(&st->sigbus);
					continue;
				}
				pg->tag ^= FORKMASK;
			}
		}
		/* Forget the shared mappings (the parent checks them). */
		for (int j = nmaps - 1; j >= 0; j--)
			if (maps[j].shared) {
				if (rnd(2))
					munmap(maps[j].addr, mlen(&maps[j]));
				drop_map(j);
			}
		run_ops(20, 0);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail("forked child: status %#x", status);
	for (int j = 0; j < nmaps; j++) {
		struct map *m = &maps[j];

		for (int i = 0; i < m->npages; i++) {
			struct page *pg = &m->pg[i];

			if (pg->state == ST_WRITTEN && pg->writable && m->shared)
				pg->tag ^= FORKMASK;
			if (pg->state == ST_WRITTEN)
				check_page(m, i, "parent after the child exited");
		}
	}
}

static int draw(void)
{
	int total = 0, r;

	for (int i = 0; i < NOPS; i++)
		total += op_weight[i];
	r = rnd(total);
	for (int i = 0; i < NOPS; i++) {
		if (r < op_weight[i])
			return i;
		r -= op_weight[i];
	}
	return 0;
}

/* Returns when the life draws "exit" or a budget runs out. */
static void run_ops(long budget, int allow_fork)
{
	while (budget-- > 0) {
		long done = __atomic_fetch_add(&st->slot_ops[slot], 1,
					       __ATOMIC_RELAXED);
		int op = draw();

		if (done >= slot_budget || now() > deadline)
			return;
		count(&st->ops[op]);
		switch (op) {
		case OP_MMAP: op_mmap(); break;
		case OP_MMAP_BAD: op_mmap_bad(); break;
		case OP_TOUCH: op_touch(); break;
		case OP_MUNMAP: op_munmap(); break;
		case OP_MUNMAP_PART: op_munmap_part(); break;
		case OP_MREMAP: op_mremap(); break;
		case OP_MPROTECT: op_mprotect(); break;
		case OP_MADVISE: op_madvise(); break;
		case OP_FORK: if (allow_fork) op_fork(); break;
		case OP_EXIT: return;
		case OP_BAD_RANGE: op_bad_range(); break;
		}
	}
}

static void run_slot(uint64_t seed)
{
	for (long life = 0; st->slot_ops[slot] < slot_budget && now() < deadline;
	     life++) {
		int status;
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			fail("fork of a life: %s", strerror(errno));
			return;
		}
		if (!pid) {
			rng = seed ^ ((uint64_t)slot << 40) ^ (uint64_t)life;
			next();
			nmaps = 0;
			run_ops(slot_budget, 1);
			/* Exit with whatever is still mapped. */
			_exit(0);
		}
		waitpid(pid, &status, 0);
		count(&st->lives);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fail("life %ld: status %#x", life, status);
	}
}

int main(int argc, char **argv)
{
	long seed = 1, procs = 4, ops = 100000, seconds = 60, overcommit = 8;
	long old_overcommit[MAXSIZES], total = 0;
	unsigned long all[MAXSIZES];
	int nall = hp_sizes(all, MAXSIZES);
	double t0;

	const struct long_opt opts[] = {
		SEEDED_RUN_OPTS(seed, procs, ops, seconds),
		{ .name = "--overcommit", .dst = &overcommit },
	};

	if (parse_long_opts("hstress", argc, argv, opts,
			    sizeof(opts) / sizeof(*opts)))
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	touch_init();
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (int i = 0; i < nall; i++)
		if (have_pool(all[i])) {
			nsmall += all[i] < GB1;
			sizes[nsizes++] = all[i];
		}
	if (!nsmall) {
		printf("not ok - hstress needs a pool of huge pages smaller than 1 GB\n");
		return 1;
	}
	slot_budget = ops;
	t0 = now();
	deadline = t0 + seconds;
	/* A gigantic size refuses the write (EINVAL): it has no surplus pages. */
	for (int i = 0; i < nall; i++) {
		old_overcommit[i] = hp_read(all[i], "nr_overcommit_hugepages");
		hp_write(all[i], "nr_overcommit_hugepages", overcommit);
	}
	printf("# hstress --seed %ld --procs %ld --ops %ld --seconds %ld --overcommit %ld (sizes:",
	       seed, procs, ops, seconds, overcommit);
	for (int i = 0; i < nsizes; i++)
		printf(" %lukB", sizes[i] >> 10);
	printf(")\n");

	for (slot = 0; slot < procs; slot++)
		if (!fork()) {
			run_slot((uint64_t)seed);
			_exit(0);
		}
	slot = -1;
	while (wait(NULL) > 0)
		;
	for (int i = 0; i < nall; i++)
		hp_write(all[i], "nr_overcommit_hugepages", old_overcommit[i]);

	for (int i = 0; i < procs; i++)
		total += st->slot_ops[i] < ops ? st->slot_ops[i] : ops;
	printf("# hstress: %ld operations in %.1f s, %ld lives:", total, now() - t0,
	       st->lives);
	for (int i = 0; i < NOPS; i++)
		printf(" %s %ld", op_name[i], st->ops[i]);
	printf("\n# hstress: ENOMEM %ld, SIGBUS %ld (allowed), pages written %ld, checks %ld\n",
	       st->enomem, st->sigbus, st->pages_touched, st->checks);
	for (int i = 0; i < nsizes; i++)
		printf("%sok - hstress mapped %lukB pages both ways (mmaps that worked: /dev/hugetlb %ld, MAP_HUGETLB %ld)\n",
		       st->mmap_ok[0][i] && st->mmap_ok[1][i] ? "" : "not ",
		       sizes[i] >> 10, st->mmap_ok[0][i], st->mmap_ok[1][i]);
	for (int i = 0; i < st->nmsg && i < NMSG; i++)
		printf("# FAIL %s\n", st->msg[i]);
	printf("%sok - hstress seed %ld: %ld operations by %ld processes, %ld failures\n",
	       st->failures ? "not " : "", seed, total, procs, st->failures);
	return st->failures ? 1 : 0;
}
