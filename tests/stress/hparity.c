// SPDX-License-Identifier: GPL-2.0
/*
 * hparity: /dev/hugetlb against MAP_HUGETLB where the pool, overcommit,
 * reservations given back by MADV_DONTNEED, hugetlb cgroup limits and
 * permissions decide the outcome.  Every case
 * runs once per method and both outcomes must be equal and as expected.
 * Prints one TAP-style "ok - ..." / "not ok - ..." line per case; exits 1
 * if any failed.  Run as root in the guest; it changes sysctls and device
 * modes and puts them back.
 *
 *   hparity [--every-size]
 *
 * The cases run at every huge page size the kernel has (hp_sizes()) whose
 * pool has at least 2 free pages, each line prefixed with the size; at a
 * size with one free page only, that page is reserved and one more fails
 * (the x86 guest's 1 GB pool).  --every-size makes a size with fewer than
 * 2 free pages a failure instead (the arm64 guest: 64 kB, 2 MB, 32 MB and
 * 1 GB must all be compared).
 */
#include <grp.h>
#include "hutil.h"

/* The smallest pool the cases at one size work with (see test_cgroup()). */
#define FULL_MIN 2

static unsigned long P;		/* the huge page size under test */
static long F;			/* free, unreserved pages of size P at its start */
static int gigantic;		/* P has no surplus pages (see size_setup()) */

struct outcome {
	int err;		/* 0: mmap worked, else its errno */
	long rsvd;		/* resv_hugepages (size P) change while mapped */
	long surp;		/* surplus_hugepages while mapped */
	long touched;		/* pages written before SIGBUS (or all) */
	long committed;		/* Committed_AS change while mapped, kB */
	long cg_rsvd, cg_usage;	/* hugetlb cgroup counters while mapped, pages */
};

static const char *fmt_outcome(const struct outcome *o)
{
	static char buf[2][200];
	static int i;

	i ^= 1;
	snprintf(buf[i], sizeof(buf[i]),
		 "{mmap %s, rsvd %+ld, surp %ld, touched %ld, committed %+ld kB, cg rsvd %ld usage %ld}",
		 o->err ? strerror(o->err) : "ok", o->rsvd, o->surp, o->touched,
		 o->committed, o->cg_rsvd, o->cg_usage);
	return buf[i];
}

static int same_outcome(const struct outcome *a, const struct outcome *b)
{
	return a->err == b->err && a->rsvd == b->rsvd && a->surp == b->surp &&
	       a->touched == b->touched && a->committed == b->committed &&
	       a->cg_rsvd == b->cg_rsvd && a->cg_usage == b->cg_usage;
}

/* Both methods must give the same outcome, equal to want. */
static void check_pair(const char *name, const struct outcome o[2],
		       const struct outcome *want)
{
	int same = same_outcome(&o[0], &o[1]);
	int good = same_outcome(&o[0], want);

	report(same && good, "%s: /dev/hugetlb %s, MAP_HUGETLB %s%s%s", name,
	       fmt_outcome(&o[0]), fmt_outcome(&o[1]),
	       good ? "" : ", want ", good ? "" : fmt_outcome(want));
}

static const char *cg_dir;	/* the cgroup a case runs in, or NULL */

/* The hugetlb cgroup's counter hugetlb.<size P>.<what>, in pages. */
static long cg_read(const char *what)
{
	char path[256];
	long v;

	snprintf(path, sizeof(path), "%s/hugetlb.%s.%s", cg_dir,
		 cg_size_name(P), what);
	v = read_long(path);
	return v < 0 ? v : (long)(v / P);
}

/*
 * One mapping of npages pages of size P by method m with flags; touches up to
 * ntouch pages (stops at the first SIGBUS) and measures while mapped.
 */
static struct outcome map_case(enum method m, long npages, int flags,
			       long ntouch, int measure_commit)
{
	struct outcome o = { 0 };
	long rsvd0 = hp_read(P, "resv_hugepages");
	long com0 = measure_commit ? committed_as_exact() : 0;
	size_t len = npages * P;
	char *p;
	long i;

	p = hmap(m, P, NULL, len, PROT_READ | PROT_WRITE, flags, 0);
	if (p == MAP_FAILED) {
		o.err = errno;
		return o;
	}
	o.rsvd = hp_read(P, "resv_hugepages") - rsvd0;
	if (measure_commit)
		o.committed = committed_as_exact() - com0;
	for (i = 0; i < ntouch && i < npages; i++) {
		if (touch_write((uint64_t *)(p + i * P), i + 1))
			break;
		o.touched++;
	}
	o.surp = hp_read(P, "surplus_hugepages");
	if (cg_dir) {
		o.cg_rsvd = cg_read("rsvd.current");
		o.cg_usage = cg_read("current");
	}
	munmap(p, len);
	return o;
}

static void both(struct outcome o[2], long npages, int flags, long ntouch,
		 int measure_commit)
{
	for (int m = 0; m < 2; m++)
		o[m] = map_case(m, npages, flags, ntouch, measure_commit);
}

static struct outcome want(int err, long rsvd, long surp, long touched)
{
	struct outcome w = { .err = err, .rsvd = rsvd, .surp = surp,
			     .touched = touched };
	return w;
}

static const char *const kind[] = { "private", "shared" };
static const int kflag[] = { MAP_PRIVATE, MAP_SHARED };

static void test_exhaustion(void)
{
	struct outcome o[2], w;
	char name[128];

	for (int k = 0; k < 2; k++) {
		snprintf(name, sizeof(name), "%s mapping of all %ld free pages reserves them all, touches without SIGBUS",
			 kind[k], F);
		both(o, F, kflag[k], F, 0);
		w = want(0, F, 0, F);
		check_pair(name, o, &w);

		snprintf(name, sizeof(name), "%s mapping of %ld pages (one more than free) fails with ENOMEM at mmap",
			 kind[k], F + 1);
		both(o, F + 1, kflag[k], F + 1, 0);
		w = want(ENOMEM, 0, 0, 0);
		check_pair(name, o, &w);

		snprintf(name, sizeof(name), "%s MAP_NORESERVE mapping of %ld pages maps, reserves nothing, SIGBUS at fault %ld",
			 kind[k], F + 1, F + 1);
		both(o, F + 1, kflag[k] | MAP_NORESERVE, F + 1, 0);
		w = want(0, 0, 0, F);
		check_pair(name, o, &w);
	}
}

/*
 * Every free page reserved by one mapping: a further reserving mmap()
 * fails with ENOMEM, one with MAP_NORESERVE maps.  Returns the three
 * errnos (0: mapped) in err, or -1 in err[0] if the first mapping failed.
 */
static void pool_taken(enum method m, int err[3])
{
	static const int flags[] = { MAP_PRIVATE, MAP_SHARED,
				     MAP_PRIVATE | MAP_NORESERVE };
	char *all = hmap(m, P, NULL, F * P, PROT_READ | PROT_WRITE, MAP_SHARED, 0);

	err[0] = -1;
	if (all == MAP_FAILED)
		return;
	for (int i = 0; i < 3; i++) {
		char *p = hmap(m, P, NULL, P, PROT_READ | PROT_WRITE, flags[i], 0);

		err[i] = p == MAP_FAILED ? errno : 0;
		if (p != MAP_FAILED)
			munmap(p, P);
	}
	munmap(all, F * P);
}

static void test_pool_taken(void)
{
	int err[2][3];

	for (int m = 0; m < 2; m++)
		pool_taken(m, err[m]);
	report(!memcmp(err[0], err[1], sizeof(err[0])) && err[0][0] == ENOMEM &&
	       err[0][1] == ENOMEM && err[0][2] == 0,
	       "all %ld free pages reserved by one mapping: another private, shared, MAP_NORESERVE mmap (/dev/hugetlb %s, %s, %s; MAP_HUGETLB %s, %s, %s), want ENOMEM, ENOMEM, ok",
	       F, strerror(err[0][0]), strerror(err[0][1]), strerror(err[0][2]),
	       strerror(err[1][0]), strerror(err[1][1]), strerror(err[1][2]));
}

static void test_surplus(void)
{
	long old = hp_read(P, "nr_overcommit_hugepages");
	struct outcome o[2], w;
	char name[160];
	const long S = 4;

	if (gigantic) {
		printf("ok - %ssurplus pages # SKIP a gigantic size: the kernel has no surplus pages of it (nr_overcommit_hugepages refuses writes with EINVAL)\n",
		       report_prefix);
		return;
	}
	if (hp_write(P, "nr_overcommit_hugepages", S)) {
		report(0, "surplus: cannot set nr_overcommit_hugepages: %s",
		       strerror(errno));
		return;
	}
	for (int k = 0; k < 2; k++) {
		snprintf(name, sizeof(name), "nr_overcommit_hugepages=%ld: %s mapping of %ld pages reserves %ld surplus pages at mmap",
			 S, kind[k], F + S, S);
		both(o, F + S, kflag[k], F + S, 0);
		w = want(0, F + S, S, F + S);
		check_pair(name, o, &w);

		snprintf(name, sizeof(name), "nr_overcommit_hugepages=%ld: %s mapping of %ld pages fails with ENOMEM",
			 S, kind[k], F + S + 1);
		both(o, F + S + 1, kflag[k], 0, 0);
		w = want(ENOMEM, 0, 0, 0);
		check_pair(name, o, &w);

		snprintf(name, sizeof(name), "nr_overcommit_hugepages=%ld: %s MAP_NORESERVE of %ld pages gets %ld surplus pages at fault, then SIGBUS",
			 S, kind[k], F + S + 2, S);
		both(o, F + S + 2, kflag[k] | MAP_NORESERVE, F + S + 2, 0);
		w = want(0, 0, S, F + S);
		check_pair(name, o, &w);
	}
	hp_write(P, "nr_overcommit_hugepages", old);
	report(hp_read(P, "surplus_hugepages") == 0,
	       "surplus pages go back to the buddy allocator after munmap (surplus_hugepages %ld)",
	       hp_read(P, "surplus_hugepages"));
}

/*
 * Refault after MADV_DONTNEED, with the rest of the pool taken by another
 * mapping.  A private page's first fault (a read too) uses up its
 * reservation; zapping the page gives it back, but only while the pool
 * has no surplus pages (6.12 __unmap_hugepage_range()), so the refault
 * SIGBUSes if a surplus page existed at the zap.  A shared page stays in
 * the file and reads back.  Returns 1 on SIGBUS, -1 if a step failed;
 * *avail is the free, unreserved page count just after the zap.
 */
static int refault(enum method m, int flags, int with_surplus, long *avail)
{
	long old = hp_read(P, "nr_overcommit_hugepages");
	char *p, *q = MAP_FAILED;
	long qpages = F - 1;
	int ret = -1;
	uint64_t v;

	*avail = -1;
	p = hmap(m, P, NULL, P, PROT_READ | PROT_WRITE, flags, 0);
	if (p == MAP_FAILED)
		return -1;
	if (touch_read((uint64_t *)p, &v))
		goto out;
	/* F - 1 free pages and one surplus page: reserved by q. */
	if (with_surplus) {
		qpages = F;
		if (hp_write(P, "nr_overcommit_hugepages", 1))
			goto out;
		q = hmap(m, P, NULL, qpages * P, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE, 0);
		hp_write(P, "nr_overcommit_hugepages", old);
		if (q == MAP_FAILED || hp_read(P, "surplus_hugepages") != 1)
			goto out;
	}
	if (madvise(p, P, MADV_DONTNEED))
		goto out;
	*avail = hp_avail(P);
	if (!with_surplus) {
		qpages = *avail;
		q = hmap(m, P, NULL, qpages * P, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE, 0);
		if (q == MAP_FAILED)
			goto out;
	}
	ret = touch_read((uint64_t *)p, &v);
out:
	if (q != MAP_FAILED)
		munmap(q, qpages * P);
	munmap(p, P);
	return ret;
}

static void test_refault(void)
{
	static const struct {
		int flags, with_surplus, sigbus;
		const char *what;
	} c[] = {
		{ MAP_PRIVATE, 0, 0, "private page read, MADV_DONTNEED: reservation given back, refault works with the pool taken" },
		{ MAP_PRIVATE, 1, 1, "private page read, MADV_DONTNEED while a surplus page exists: reservation lost, refault SIGBUSes with the pool taken" },
		{ MAP_SHARED, 0, 0, "shared page read, MADV_DONTNEED: page stays in the file, refault reads it with the pool taken" },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		if (c[i].with_surplus && gigantic) {
			printf("ok - %s%s # SKIP a gigantic size has no surplus pages\n",
			       report_prefix, c[i].what);
			continue;
		}
		/*
		 * Unreserved after the zap: all but p's page (reserved again,
		 * or still in the file), or none where q holds the rest.
		 */
		long avail[2], want = c[i].with_surplus ? 0 : F - 1;
		int sigbus[2];

		for (int m = 0; m < 2; m++)
			sigbus[m] = refault(m, c[i].flags, c[i].with_surplus,
					    &avail[m]);
		report(sigbus[0] == c[i].sigbus && sigbus[1] == c[i].sigbus &&
		       avail[0] == want && avail[1] == want,
		       "%s (/dev/hugetlb: %ld free after the zap, SIGBUS %d; MAP_HUGETLB: %ld, %d; want %ld, %d)",
		       c[i].what, avail[0], sigbus[0], avail[1], sigbus[1],
		       want, c[i].sigbus);
	}
}

/* The measurement test_overcommit_never() relies on, once for all sizes. */
static void test_committed_measure(void)
{
	const char *pol = "/proc/sys/vm/overcommit_memory";
	long old = read_long(pol), com0, d;
	void *p;

	if (write_long(pol, 2)) {
		report(0, "overcommit_memory=2: cannot set it: %s", strerror(errno));
		return;
	}
	/* A private anonymous mapping is charged. */
	com0 = committed_as_exact();
	p = mmap(NULL, 8 * MB2, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	d = committed_as_exact() - com0;
	if (p != MAP_FAILED)
		munmap(p, 8 * MB2);
	report(p != MAP_FAILED && d == 8 * MB2 / 1024,
	       "overcommit_memory=2: a 16 MB private anonymous mapping charges Committed_AS 16384 kB (got %+ld kB)",
	       d);
	write_long(pol, old);
}

static void test_overcommit_never(void)
{
	const char *pol = "/proc/sys/vm/overcommit_memory";
	long old = read_long(pol);
	struct outcome o[2], w;
	char name[160];

	if (write_long(pol, 2)) {
		report(0, "overcommit_memory=2: cannot set it: %s", strerror(errno));
		return;
	}
	for (int k = 0; k < 2; k++) {
		snprintf(name, sizeof(name), "overcommit_memory=2: %s mapping of %ld pages: reserved from the pool, not charged to Committed_AS",
			 kind[k], F);
		both(o, F, kflag[k], 1, 1);
		w = want(0, F, 0, 1);
		check_pair(name, o, &w);

		snprintf(name, sizeof(name), "overcommit_memory=2: %s mapping of %ld pages fails with ENOMEM",
			 kind[k], F + 1);
		both(o, F + 1, kflag[k], 0, 1);
		w = want(ENOMEM, 0, 0, 0);
		check_pair(name, o, &w);

		snprintf(name, sizeof(name), "overcommit_memory=2: %s MAP_NORESERVE of %ld pages is honoured (no reservation, no charge)",
			 kind[k], 4 * F);
		both(o, 4 * F, kflag[k] | MAP_NORESERVE, 1, 1);
		w = want(0, 0, 0, 1);
		check_pair(name, o, &w);
	}
	write_long(pol, old);
}

/*
 * Runs map_case() for both methods in a child process that joined a new
 * cgroup under base with the given limits on size P (pages; -1: no limit).
 */
static void cg_case(const char *base, const char *name, long npages, int flags,
		    long ntouch, long rsvd_max, long max, const struct outcome *w)
{
	struct outcome o[2];
	char dir[256], path[300];
	int fds[2];

	for (int m = 0; m < 2; m++) {
		snprintf(dir, sizeof(dir), "%s/hparity", base);
		mkdir(dir, 0755);
		snprintf(path, sizeof(path), "%s/hugetlb.%s.rsvd.max", dir,
			 cg_size_name(P));
		if (rsvd_max >= 0)
			write_long(path, rsvd_max * P);
		snprintf(path, sizeof(path), "%s/hugetlb.%s.max", dir,
			 cg_size_name(P));
		if (max >= 0)
			write_long(path, max * P);
		if (pipe(fds))
			return;
		if (!fork()) {
			char me[32];

			snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
			snprintf(me, sizeof(me), "%d", getpid());
			if (write_str(path, me))
				_exit(1);
			cg_dir = dir;
			o[m] = map_case(m, npages, flags, ntouch, 0);
			if (write(fds[1], &o[m], sizeof(o[m])) != sizeof(o[m]))
				_exit(1);
			_exit(0);
		}
		close(fds[1]);
		memset(&o[m], 0xff, sizeof(o[m]));
		if (read(fds[0], &o[m], sizeof(o[m])) != sizeof(o[m]))
			o[m].err = -1;
		close(fds[0]);
		wait(NULL);
		cg_dir = dir;
		if (cg_read("current") || cg_read("rsvd.current"))
			report(0, "%s (%s): cgroup still charged after exit: usage %ld rsvd %ld pages",
			       name, method_name[m], cg_read("current"),
			       cg_read("rsvd.current"));
		cg_dir = NULL;
		for (int i = 0; i < 50 && rmdir(dir) && errno == EBUSY; i++)
			usleep(100000);
	}
	check_pair(name, o, w);
}

static const char *ordinal(long n)
{
	static char buf[2][24];
	static int i;

	i ^= 1;
	snprintf(buf[i], sizeof(buf[i]), "%ld%s", n,
		 n == 1 ? "st" : n == 2 ? "nd" : n == 3 ? "rd" : "th");
	return buf[i];
}

/*
 * Whether a cgroup made under base has the hugetlb controller's files for
 * size P: without them (no cgroup v2, no CONFIG_CGROUP_HUGETLB, controller
 * not enabled) the cases cannot run, which is the environment's, not a
 * failure of either method.
 */
static int cg_has_hugetlb(const char *base)
{
	char dir[256], path[320];
	int ok;

	snprintf(dir, sizeof(dir), "%s/hparity", base);
	if (mkdir(dir, 0755) && errno != EEXIST)
		return 0;
	snprintf(path, sizeof(path), "%s/hugetlb.%s.rsvd.max", dir, cg_size_name(P));
	ok = !access(path, W_OK);
	rmdir(dir);
	return ok;
}

/*
 * Limits of L pages (4, or F - 1 where the pool is smaller, FULL_MIN at
 * least), so that L + 1 pages fit the pool and only the cgroup refuses.
 */
static void test_cgroup(void)
{
	const char *base = getenv("HGUARD_CGROUP");
	const char *cg = cg_size_name(P);
	long L = F > 4 ? 4 : F - 1;
	struct outcome w;
	char name[200];

	if (!base) {
		base = "/sys/fs/cgroup";
		write_str("/sys/fs/cgroup/cgroup.subtree_control", "+hugetlb");
	}
	if (!cg_has_hugetlb(base)) {
		printf("ok - %scgroup hugetlb.%s limits # SKIP no hugetlb.%s.rsvd.max in a cgroup made under %s: needs cgroup v2 there with the hugetlb controller (CONFIG_CGROUP_HUGETLB; hguard enables it)\n",
		       report_prefix, cg, cg, base);
		return;
	}
	for (int k = 0; k < 2; k++) {
		snprintf(name, sizeof(name), "cgroup hugetlb.%s.rsvd.max=%ld pages: %s mapping of %ld pages fails with ENOMEM",
			 cg, L, kind[k], L + 1);
		w = want(ENOMEM, 0, 0, 0);
		cg_case(base, name, L + 1, kflag[k], L + 1, L, -1, &w);

		snprintf(name, sizeof(name), "cgroup hugetlb.%s.rsvd.max=%ld pages: %s mapping of %ld pages charges rsvd %ld, then usage %ld when touched",
			 cg, L, kind[k], L, L, L);
		w = want(0, L, 0, L);
		w.cg_rsvd = L;
		w.cg_usage = L;
		cg_case(base, name, L, kflag[k], L, L, -1, &w);

		/* A fault that consumes no reservation charges rsvd then. */
		snprintf(name, sizeof(name), "cgroup hugetlb.%s.rsvd.max=0: %s MAP_NORESERVE mapping maps, SIGBUS at the first fault",
			 cg, kind[k]);
		w = want(0, 0, 0, 0);
		cg_case(base, name, L, kflag[k] | MAP_NORESERVE, (L + 1) / 2, 0, -1, &w);

		snprintf(name, sizeof(name), "cgroup hugetlb.%s.max=%ld pages: %s mapping of %ld pages maps, SIGBUS at the %s fault",
			 cg, L - 1, kind[k], L + 1, ordinal(L));
		w = want(0, L + 1, 0, L - 1);
		w.cg_rsvd = L + 1;
		w.cg_usage = L - 1;
		cg_case(base, name, L + 1, kflag[k], L + 1, -1, L - 1, &w);

		snprintf(name, sizeof(name), "cgroup hugetlb.%s.max=%ld pages: %s MAP_NORESERVE of %ld pages, SIGBUS at the %s fault",
			 cg, L - 1, kind[k], L + 1, ordinal(L));
		w = want(0, 0, 0, L - 1);
		w.cg_rsvd = L - 1;
		w.cg_usage = L - 1;
		cg_case(base, name, L + 1, kflag[k] | MAP_NORESERVE, L + 1, -1, L - 1, &w);
	}
}

/*
 * As uid/gid 1000 (the guest's "tester"): open mode, then mmap flags, of
 * one page of size P (the default size: /dev/hugetlb is its node).
 */
static int as_tester(const char *path, int omode, int mflags, int *open_err)
{
	int fds[2], res[2] = { -1, -1 };

	if (pipe(fds))
		return -1;
	if (!fork()) {
		int fd;
		void *p;

		if (setgroups(0, NULL) || setgid(1000) || setuid(1000))
			_exit(1);
		res[1] = 0;
		fd = path ? open(path, omode) : -1;
		res[0] = path && fd < 0 ? errno : 0;
		if (!res[0]) {
			p = path ? mmap(NULL, P, PROT_READ, mflags, fd, 0)
				 : hmap(M_ANON, P, NULL, P, PROT_READ | PROT_WRITE,
					mflags, 0);
			res[1] = p == MAP_FAILED ? errno : 0;
			if (p != MAP_FAILED && (mflags & MAP_PRIVATE) &&
			    !mprotect(p, P, PROT_READ | PROT_WRITE))
				*(volatile char *)p = 1;
		}
		if (write(fds[1], res, sizeof(res)) != sizeof(res))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], res, sizeof(res)) != sizeof(res))
		res[0] = res[1] = -1;
	close(fds[0]);
	wait(NULL);
	*open_err = res[0];
	return res[1];
}

/* /dev/hugetlb and a node per size in sizes[n]; P is the default size. */
static void test_permissions(const unsigned long *sizes, int n)
{
	int oe, me;
	struct stat st;

	for (int i = -1; i < n; i++) {
		const char *node = i < 0 ? "/dev/hugetlb" : dev_path(sizes[i]);

		if (stat(node, &st)) {
			report(0, "%s exists: %s", node, strerror(errno));
			continue;
		}
		report(S_ISCHR(st.st_mode) && (st.st_mode & 07777) == 0666,
		       "%s is a character device of mode 0666 (mode %04o)",
		       node, st.st_mode & 07777);
	}
	me = as_tester("/dev/hugetlb", O_RDWR, MAP_SHARED, &oe);
	report(oe == 0 && me == 0,
	       "mode 0666: uid 1000 opens /dev/hugetlb read-write and maps it shared (open %s, mmap %s)",
	       strerror(oe), strerror(me));
	me = as_tester("/dev/hugetlb", O_RDONLY, MAP_PRIVATE, &oe);
	report(oe == 0 && me == 0,
	       "mode 0666: uid 1000, read-only descriptor: MAP_PRIVATE works (mmap %s)",
	       strerror(me));
	me = as_tester("/dev/hugetlb", O_RDONLY, MAP_SHARED, &oe);
	{
		int ze, zme = as_tester("/dev/zero", O_RDONLY, MAP_SHARED, &ze);

		report(oe == 0 && me == zme && ze == 0,
		       "mode 0666: uid 1000, read-only descriptor: MAP_SHARED, PROT_READ as /dev/zero (mmap %s, /dev/zero %s)",
		       strerror(me), strerror(zme));
	}
	me = as_tester(NULL, 0, MAP_PRIVATE, &oe);
	report(me == 0, "uid 1000 may map MAP_HUGETLB too, the parity reference (mmap %s)",
	       strerror(me));

	if (chmod("/dev/hugetlb", 0600)) {
		report(0, "chmod 0600 /dev/hugetlb: %s", strerror(errno));
		return;
	}
	as_tester("/dev/hugetlb", O_RDWR, MAP_SHARED, &oe);
	report(oe == EACCES, "mode 0600: uid 1000 cannot open /dev/hugetlb read-write (open %s)",
	       strerror(oe));
	as_tester("/dev/hugetlb", O_RDONLY, MAP_PRIVATE, &oe);
	report(oe == EACCES, "mode 0600: uid 1000 cannot open /dev/hugetlb read-only (open %s)",
	       strerror(oe));
	{
		int fd = open("/dev/hugetlb", O_RDWR);
		void *p = fd < 0 ? MAP_FAILED :
			mmap(NULL, P, PROT_READ, MAP_PRIVATE, fd, 0);

		report(p != MAP_FAILED, "mode 0600: root still maps it (%s)",
		       p == MAP_FAILED ? strerror(errno) : "ok");
		if (p != MAP_FAILED)
			munmap(p, P);
		if (fd >= 0)
			close(fd);
	}
	chmod("/dev/hugetlb", 0666);
}

/*
 * Argument errors at size P: both methods must fail alike (or succeed alike),
 * except for a length that is not a multiple of P, which MAP_HUGETLB rounds
 * up and the device refuses, as a hugetlbfs file does (see
 * test_fixed_neighbours()).
 */
static void test_arguments(void)
{
	static const struct {
		const char *what;
		unsigned long pages, bytes;	/* length: pages * P + bytes */
		int flags;
		long fixed_off;		/* MAP_FIXED at aligned base + this */
		int want[2];		/* per method */
	} cases[] = {
		{ "length 0", 0, 0, MAP_PRIVATE, -1, { EINVAL, EINVAL } },
		{ "length 2^47", 0, 1UL << 47, MAP_PRIVATE, -1, { ENOMEM, ENOMEM } },
		{ "neither MAP_PRIVATE nor MAP_SHARED", 1, 0, 0, -1, { EINVAL, EINVAL } },
		{ "MAP_FIXED at an address 4 kB past a huge page boundary",
		  1, 0, MAP_PRIVATE | MAP_FIXED, 4096, { EINVAL, EINVAL } },
		{ "shared, MAP_FIXED at an address 4 kB past a huge page boundary",
		  1, 0, MAP_SHARED | MAP_FIXED, 4096, { EINVAL, EINVAL } },
		{ "MAP_FIXED at a huge page aligned address", 1, 0,
		  MAP_SHARED | MAP_FIXED, 0, { 0, 0 } },
		{ "length of a page + 4 kB (device: EINVAL; MAP_HUGETLB rounds up)",
		  1, 4096, MAP_PRIVATE, -1, { EINVAL, 0 } },
		{ "shared, length of a page + 4 kB (device: EINVAL; MAP_HUGETLB rounds up)",
		  1, 4096, MAP_SHARED, -1, { EINVAL, 0 } },
	};
	char *area = mmap(NULL, 8 * P, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *base = (char *)(((uintptr_t)area + P - 1) & ~(P - 1));
	int err[2];
	long rsvd[2];

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = cases[i].pages * P + cases[i].bytes;

		for (int m = 0; m < 2; m++) {
			long r0 = hp_read(P, "resv_hugepages");
			void *addr = cases[i].fixed_off >= 0 ?
				base + P + cases[i].fixed_off : NULL;
			char *p = hmap(m, P, addr, len, PROT_READ | PROT_WRITE,
				       cases[i].flags, 0);

			err[m] = p == MAP_FAILED ? errno : 0;
			rsvd[m] = hp_read(P, "resv_hugepages") - r0;
			/* A length that ends inside a huge page cannot be unmapped. */
			if (p != MAP_FAILED)
				munmap(p, (len + P - 1) & ~(P - 1));
		}
		report(err[0] == cases[i].want[0] && err[1] == cases[i].want[1] &&
		       (err[0] != err[1] || rsvd[0] == rsvd[1]) && (!err[0] || !rsvd[0]),
		       "%s: /dev/hugetlb %s (rsvd %+ld), MAP_HUGETLB %s (rsvd %+ld), want %s, %s",
		       cases[i].what, strerror(err[0]), rsvd[0], strerror(err[1]),
		       rsvd[1], strerror(cases[i].want[0]), strerror(cases[i].want[1]));
	}

	/* Splitting a huge page: munmap/mprotect off a huge page boundary. */
	for (int m = 0; m < 2; m++) {
		char *p = hmap(m, P, NULL, 2 * P, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE, 0);

		err[m] = p == MAP_FAILED ? -errno : 0;
		if (p == MAP_FAILED)
			continue;
		err[m] = munmap(p + 4096, 4096) ? errno : 0;
		rsvd[m] = mprotect(p + P + 4096, P - 4096, PROT_READ) ? errno : 0;
		munmap(p, 2 * P);
	}
	report(err[0] == EINVAL && err[1] == EINVAL && rsvd[0] == EINVAL &&
	       rsvd[1] == EINVAL,
	       "munmap and mprotect inside a huge page fail with EINVAL (/dev/hugetlb %s/%s, MAP_HUGETLB %s/%s)",
	       strerror(err[0]), strerror(rsvd[0]), strerror(err[1]),
	       strerror(rsvd[1]));

	/* Device-only rule: every mapping is a new object at offset 0. */
	{
		char *p = hmap(M_DEV, P, NULL, P, PROT_READ, MAP_PRIVATE, P);

		report(p == MAP_FAILED && errno == EINVAL,
		       "%s at a nonzero offset fails with EINVAL (%s)", dev_path(P),
		       p == MAP_FAILED ? strerror(errno) : "mapped");
		if (p != MAP_FAILED)
			munmap(p, P);
	}
	munmap(area, 8 * P);
}

/*
 * MAP_FIXED with a length that is not a multiple of P, as a program written
 * for /dev/zero asks: the device fails with EINVAL before anything at the
 * address is unmapped, so the caller's mappings there and beyond the length
 * survive with their contents.  (Rounding, as MAP_HUGETLB does, would replace
 * them up to the next huge page boundary.)  MAP_HUGETLB is not compared: it
 * rounds by design.
 */
/* One word at p through a pipe: 0 if readable, without SIGSEGV if not. */
static int peek(const void *p, uint64_t *v)
{
	int fd[2], ok;

	if (pipe(fd))
		return -1;
	ok = write(fd[1], p, sizeof(*v)) == sizeof(*v) &&
	     read(fd[0], v, sizeof(*v)) == sizeof(*v);
	close(fd[0]);
	close(fd[1]);
	return ok ? 0 : -1;
}

static void test_fixed_neighbours(void)
{
	static const int kflags[] = { MAP_PRIVATE, MAP_SHARED };
	char *area = mmap(NULL, 4 * P, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *base = (char *)(((uintptr_t)area + P - 1) & ~(P - 1));
	unsigned long off[] = { 0, 4096, P, P + 4096 }; /* 4 kB pages from base */

	if (area == MAP_FAILED) {
		report(0, "MAP_FIXED neighbours: no room (%s)", strerror(errno));
		return;
	}
	for (unsigned int k = 0; k < 2; k++) {
		long r0 = hp_read(P, "resv_hugepages");
		int intact = 1, err;
		char *p;

		/* the caller's own 4 kB pages in and past the rounded length */
		for (unsigned int i = 0; i < 4; i++) {
			char *q = mmap(base + off[i], 4096, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

			if (q != MAP_FAILED)
				memset(q, 0x5a + i, 4096);
		}
		p = hmap(M_DEV, P, base, P + 4096, PROT_READ | PROT_WRITE,
			 kflags[k] | MAP_FIXED, 0);
		err = p == MAP_FAILED ? errno : 0;
		for (unsigned int i = 0; i < 4; i++) {
			uint64_t v = 0;

			if (peek(base + off[i], &v) ||
			    v != 0x0101010101010101ULL * (0x5a + i))
				intact = 0;
		}
		report(err == EINVAL && intact && hp_read(P, "resv_hugepages") == r0,
		       "%s MAP_FIXED, length a page + 4 kB: %s (want EINVAL), the mappings at +0, +4 kB, +%lu kB, +%lu kB %s",
		       kind[k], strerror(err), P >> 10, (P >> 10) + 4,
		       intact ? "intact" : "CLOBBERED");
		/* back to PROT_NONE for the next round */
		mmap(base, 2 * P, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	}
	munmap(area, 4 * P);
}

/* A size with one free page (the x86 guest's 1 GB pool): reserve it, one more fails. */
static void test_one_page(void)
{
	int err[2], err2[2];
	long rsvd[2];

	for (int m = 0; m < 2; m++) {
		long r0 = hp_read(P, "resv_hugepages");
		void *p = hmap(m, P, NULL, F * P, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE, 0);

		err[m] = p == MAP_FAILED ? errno : 0;
		rsvd[m] = hp_read(P, "resv_hugepages") - r0;
		if (p != MAP_FAILED)
			munmap(p, F * P);
		p = hmap(m, P, NULL, (F + 1) * P, PROT_READ | PROT_WRITE,
			 MAP_SHARED, 0);
		err2[m] = p == MAP_FAILED ? errno : 0;
		if (p != MAP_FAILED)
			munmap(p, (F + 1) * P);
	}
	report(!err[0] && !err[1] && rsvd[0] == F && rsvd[1] == F &&
	       err2[0] == ENOMEM && err2[1] == ENOMEM,
	       "%ld free reserve (%s %s rsvd %+ld, MAP_HUGE_%s %s rsvd %+ld); one more: ENOMEM (%s, %s)",
	       F, dev_path(P), strerror(err[0]), rsvd[0], cg_size_name(P),
	       strerror(err[1]), rsvd[1], strerror(err2[0]), strerror(err2[1]));
}

/* Size P's pool, gigantic or not, and report_prefix; 0 if P has surplus pages. */
static int size_setup(unsigned long psize)
{
	long oc;

	P = psize;
	F = hp_avail(P);
	if (P >= GB1)
		snprintf(report_prefix, sizeof(report_prefix), "%lu GB pages: ", P >> 30);
	else if (P >= (1UL << 20))
		snprintf(report_prefix, sizeof(report_prefix), "%lu MB pages: ", P >> 20);
	else
		snprintf(report_prefix, sizeof(report_prefix), "%lu kB pages: ", P >> 10);
	/*
	 * The kernel refuses nr_overcommit_hugepages for a size beyond the
	 * buddy allocator's largest block (arm64's 32 MB and 1 GB, x86's
	 * 1 GB): writing the value it has tells which sizes those are.
	 */
	oc = hp_read(P, "nr_overcommit_hugepages");
	gigantic = hp_write(P, "nr_overcommit_hugepages", oc) && errno == EINVAL;
	return hp_read(P, "surplus_hugepages") == 0;
}

/* Every case at size P. */
static void test_size(void)
{
	test_arguments();
	test_fixed_neighbours();
	test_exhaustion();
	test_pool_taken();
	test_surplus();
	test_refault();
	test_overcommit_never();
	test_cgroup();
}

int main(int argc, char **argv)
{
	unsigned long sizes[MAXSIZES];
	int n = hp_sizes(sizes, MAXSIZES);
	int every = argc == 2 && !strcmp(argv[1], "--every-size");

	if (argc > 2 || (argc == 2 && !every)) {
		fprintf(stderr, "usage: hparity [--every-size]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	touch_init();
	if (!n) {
		printf("not ok - hparity: no huge page sizes in /sys/kernel/mm/hugepages\n");
		return 1;
	}
	test_committed_measure();
	P = hp_default_size();
	test_permissions(sizes, n);
	for (int i = 0; i < n; i++) {
		if (!size_setup(sizes[i]))
			report(0, "hparity needs a pool without surplus pages (surplus_hugepages %ld)",
			       hp_read(P, "surplus_hugepages"));
		else if (F >= FULL_MIN)
			test_size();
		else if (every)
			report(0, "hparity --every-size needs >= %d free pages of each size, the pool has %ld free: preallocate more (run-qemu.sh --hugepages*)",
			       FULL_MIN, F);
		else if (F == 1)
			test_one_page();
		else
			printf("ok - %sthe cases # SKIP no free page in the pool\n", report_prefix);
	}
	printf("# hparity: %d failed\n", failures);
	return failures ? 1 : 0;
}
