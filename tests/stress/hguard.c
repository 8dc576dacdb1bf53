// SPDX-License-Identifier: GPL-2.0
/*
 * hguard NAME CMD [ARGS...]: run CMD in a fresh hugetlb cgroup and check
 * that it left the system as it found it.
 *
 * Before and after CMD it reads, for every huge page size the kernel has
 * (hp_sizes()), nr/free/resv/
 * surplus/nr_overcommit_hugepages; Committed_AS (exact: see
 * committed_as_exact()); /proc/sys/kernel/tainted; vm.overcommit_memory and
 * vm.overcommit_ratio.  After CMD, the hugetlb cgroup it ran in (which
 * holds any cgroup CMD made under $HGUARD_CGROUP) must charge nothing.
 *
 * Prints TAP-style lines: "ok - NAME" or "not ok - NAME: exit ...", then
 * "ok - invariants after NAME" or "not ok - ...: what changed".  Exits 0
 * when both are ok.
 */
#include "hutil.h"
#include <time.h>
#include <dirent.h>

#define CG_ROOT "/sys/fs/cgroup"
#define CG_TOP CG_ROOT "/hguard"
#define CG_JOB CG_TOP "/job"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned long sizes[MAXSIZES];
static int nsizes;
static const char *const fields[] = { "nr_hugepages", "free_hugepages",
	"resv_hugepages", "surplus_hugepages", "nr_overcommit_hugepages" };
#define NFIELDS 5

struct snap {
	long hp[MAXSIZES][NFIELDS];
	long committed;
	long tainted;
	long overcommit_memory;
	long overcommit_ratio;
};

static void take(struct snap *s)
{
	int i, j;

	for (i = 0; i < nsizes; i++)
		for (j = 0; j < NFIELDS; j++)
			s->hp[i][j] = hp_read(sizes[i], fields[j]);
	s->committed = committed_as_exact();
	s->tainted = read_long("/proc/sys/kernel/tainted");
	s->overcommit_memory = read_long("/proc/sys/vm/overcommit_memory");
	s->overcommit_ratio = read_long("/proc/sys/vm/overcommit_ratio");
}

static char diffs[4096];

static void add_diff(const char *fmt, ...)
{
	size_t n = strlen(diffs);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(diffs + n, sizeof(diffs) - n, fmt, ap);
	va_end(ap);
}

static int cg_usage(void)
{
	static const char *const what[] = { "current", "rsvd.current" };
	char path[128];
	int bad = 0, i, j;
	long v;

	for (i = 0; i < nsizes; i++)
		for (j = 0; j < 2; j++) {
			snprintf(path, sizeof(path), CG_TOP "/hugetlb.%s.%s",
				 cg_size_name(sizes[i]), what[j]);
			v = read_long(path);
			if (v > 0) {
				add_diff(" cgroup hugetlb.%s.%s=%ld (not 0);",
					 cg_size_name(sizes[i]), what[j], v);
				bad = 1;
			}
		}
	return bad;
}

static int compare(const struct snap *a, const struct snap *b)
{
	int i, j;

	diffs[0] = 0;
	for (i = 0; i < nsizes; i++)
		for (j = 0; j < NFIELDS; j++)
			if (a->hp[i][j] != b->hp[i][j])
				add_diff(" %lukB %s %ld -> %ld;", sizes[i] >> 10,
					 fields[j], a->hp[i][j], b->hp[i][j]);
	if (a->committed != b->committed)
		add_diff(" Committed_AS %ld kB -> %ld kB;", a->committed,
			 b->committed);
	if (a->tainted != b->tainted)
		add_diff(" tainted %ld -> %ld;", a->tainted, b->tainted);
	if (a->overcommit_memory != b->overcommit_memory)
		add_diff(" overcommit_memory %ld -> %ld;", a->overcommit_memory,
			 b->overcommit_memory);
	if (a->overcommit_ratio != b->overcommit_ratio)
		add_diff(" overcommit_ratio %ld -> %ld;", a->overcommit_ratio,
			 b->overcommit_ratio);
	cg_usage();
	return diffs[0] != 0;
}

/* Kill what CMD left running in its cgroup; 1 if anything was there. */
static int reap_leftovers(void)
{
	FILE *f = fopen(CG_JOB "/cgroup.procs", "r");
	int pid, any = 0;

	if (!f)
		return 0;
	while (fscanf(f, "%d", &pid) == 1) {
		kill(pid, SIGKILL);
		any = 1;
	}
	fclose(f);
	if (any)
		write_str(CG_JOB "/cgroup.kill", "1");
	return any;
}

/* rmdir every cgroup under CG_TOP, deepest first. */
static void rm_cgroups(const char *dir)
{
	char path[512];
	struct dirent *d;
	struct stat st;
	DIR *dp = opendir(dir);

	if (!dp)
		return;
	while ((d = readdir(dp))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
			rm_cgroups(path);
			for (int i = 0; i < 50 && rmdir(path) && errno == EBUSY; i++)
				usleep(100000);
		}
	}
	closedir(dp);
}

int main(int argc, char **argv)
{
	struct snap before, after;
	int status, i, ok_run, bad;
	const char *name;
	double t0;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: hguard NAME CMD [ARGS...]\n");
		return 2;
	}
	name = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	nsizes = hp_sizes(sizes, MAXSIZES);

	write_str(CG_ROOT "/cgroup.subtree_control", "+hugetlb");
	rm_cgroups(CG_TOP);
	mkdir(CG_TOP, 0755);
	if (write_str(CG_TOP "/cgroup.subtree_control", "+hugetlb") ||
	    (mkdir(CG_JOB, 0755) && errno != EEXIST)) {
		printf("not ok - %s: cannot set up the hugetlb cgroup " CG_TOP ": %s\n",
		       name, strerror(errno));
		return 1;
	}
	setenv("HGUARD_CGROUP", CG_TOP, 1);

	take(&before);
	if (cg_usage()) {
		printf("not ok - %s: hugetlb cgroup not empty before the test:%s\n",
		       name, diffs);
		return 1;
	}
	fflush(stdout);
	t0 = now();
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (!pid) {
		char me[32];

		snprintf(me, sizeof(me), "%d", getpid());
		if (write_str(CG_JOB "/cgroup.procs", me)) {
			perror("hguard: join " CG_JOB);
			_exit(126);
		}
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	t0 = now() - t0;
	ok_run = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (WIFEXITED(status))
		printf("%sok - %s%s%.0d\n", ok_run ? "" : "not ",
		       name, ok_run ? "" : ": exit status ",
		       ok_run ? 0 : WEXITSTATUS(status));
	else
		printf("not ok - %s: killed by signal %d\n", name,
		       WTERMSIG(status));

	if (reap_leftovers())
		printf("# hguard: %s left processes running; killed them\n", name);
	/* Freed huge pages and exiting children may take a moment to settle. */
	for (i = 0; i < 50; i++) {
		take(&after);
		bad = compare(&before, &after);
		if (!bad)
			break;
		usleep(100000);
	}
	if (bad)
		printf("not ok - invariants after %s:%s\n", name, diffs);
	else
		printf("ok - invariants after %s (pool, Committed_AS %ld kB, tainted %ld, cgroup 0; ran %.1fs)\n",
		       name, after.committed, after.tainted, t0);
	rm_cgroups(CG_TOP);
	return ok_run && !bad ? 0 : 1;
}
