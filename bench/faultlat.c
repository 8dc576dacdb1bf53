// SPDX-License-Identifier: GPL-2.0
/*
 * faultlat.c - first-touch fault latency as a distribution, on fresh
 * memory and on memory a fragmenter has aged.
 *
 * For each backing a new mapping of the working-set size is made (no
 * populate), and each page of it (the backing's page: 4 KB for devzero,
 * 2 MB for thp and the 2 MB pools, 1 GB for the -1G variants) is faulted
 * in by one store, with the clock read right before and right after that
 * store: one latency per fault (wall time, now_ns(); emulated under TCG,
 * as the run's timing source says).  The row gives their count, p50, p90,
 * p99 (nearest rank), max and mean, in microseconds.
 *
 * Beside them, what explains them, read right outside the touching loop:
 * the /proc/vmstat counters thp_fault_alloc, thp_fault_fallback,
 * compact_stall, htlb_buddy_alloc_success and htlb_buddy_alloc_fail
 * (system-wide deltas: another process's faults count too; a counter this
 * kernel lacks is an empty field, and @meta faultlat_vmstat names it
 * absent), the free 2 MB blocks of the buddy allocator before the loop
 * (/proc/buddyinfo, every order >= 9 counted in 2 MB blocks), and the page
 * each fault got: smaps' KernelPageSize and AnonHugePages for the mapping,
 * and, per fault, /proc/self/pagemap's present bit of the 4 KB page after
 * the one stored to (a fault that got a huge page mapped it; one that fell
 * back to 4 KB did not): huge_faults.
 *
 * Conditions (--condition): fresh (memory as the host has it) and aged:
 * before the loop a fragmenter, in the manner of mmtests' thpscale (which
 * fills memory, punches holes in it and then faults MADV_HUGEPAGE memory
 * into the holes), maps anonymous 4 KB memory (MADV_NOHUGEPAGE), touches
 * it in 32 MB steps until MemAvailable would fall under a floor
 * (max(256 MB, MemTotal / 8) above what the measured mapping
 * takes, or --frag-max is reached) and then frees every
 * other 4 KB page of it (MADV_DONTNEED): free memory is then mostly
 * single pages between pages still held, which THP can use only by
 * compaction (or falls back) and which a preallocated hugetlb pool does
 * not need.  It is released (munmap) right after the row.  frag_bytes says
 * how much it held during the loop; where it finds no room (MemAvailable
 * at its floor) there is no aged row and @meta faultlat_aged_skipped says
 * why.
 *
 * What the oracle (plots/benches/faultlat.py check_row; tests/bench/
 * test_faultlat.py) compares, each from a source of its own:
 *   - the sum of the per-fault times against the wall time of the whole
 *     loop (two more clock readings around it), less the loop's own cost
 *     outside the timed stores, measured by the same loop over the then
 *     touched pages (loop_ns_per_iter);
 *   - the faults timed against getrusage's minor fault delta over the loop;
 *   - the page size the row claims against smaps and pagemap.
 * --distort makes the instrument lie, for the tests of that oracle.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "runner.h"

enum { C_FRESH, C_AGED, C_NR };
static const char *const cond_names[C_NR] = { "fresh", "aged" };
static const char *const cond_choices[] = { "both", "fresh", "aged", NULL };
static int cond_opt;		/* 0 both, 1 fresh, 2 aged */

enum { D_NONE, D_HALF, D_CLOCK, D_CLAIM, D_P99 };
static const char *const distort_choices[] = {
	"none", "half", "clock", "claim-huge", "p99", NULL };
static int distort;
static size_t frag_max;		/* 0: bounded by MemAvailable alone */
static int samples;

static const struct bench_opt faultlat_opts[] = {
	{ .name = "condition", .arg = "both|fresh|aged", .kind = OPT_CHOICE,
	  .dst = &cond_opt, .choices = cond_choices,
	  .help = "measure on fresh memory, after the fragmenter, or both "
	  "(both)" },
	{ .name = "frag-max", .arg = "SIZE", .kind = OPT_SIZE,
	  .dst = &frag_max,
	  .help = "the most the fragmenter fills (0: until MemAvailable "
	  "reaches max(256 MB, MemTotal / 8))" },
	{ .name = "samples", .kind = OPT_FLAG, .dst = &samples,
	  .help = "print every fault's latency in @meta faultlat_samples "
	  "(up to 65536 faults; the tests recompute the percentiles)" },
	{ .name = "distort", .arg = "KIND", .kind = OPT_CHOICE,
	  .dst = &distort, .choices = distort_choices,
	  .help = "a distorted instrument, for the tests of the oracle: "
	  "half (times every other fault), clock (per-fault clock 20 % "
	  "slow), claim-huge (every fault counted huge), p99 (the top 1 % "
	  "left out of the percentiles); none" },
	{ 0 },
};

/* -- what explains the latencies ----------------------------------------- */

static const char *const vm_names[] = {
	"thp_fault_alloc", "thp_fault_fallback", "compact_stall",
	"htlb_buddy_alloc_success", "htlb_buddy_alloc_fail",
};
#define NVM ((int)(sizeof(vm_names) / sizeof(vm_names[0])))

struct vmstat {
	unsigned long long v[NVM];
	int have[NVM];
};

static void vmstat_read(struct vmstat *s)
{
	FILE *f = fopen("/proc/vmstat", "r");
	char name[128];
	unsigned long long v;
	int i;

	memset(s, 0, sizeof(*s));
	while (f && fscanf(f, "%127s %llu", name, &v) == 2)
		for (i = 0; i < NVM; i++)
			if (!strcmp(name, vm_names[i])) {
				s->v[i] = v;
				s->have[i] = 1;
			}
	if (f)
		fclose(f);
}

/* free blocks of at least 2 MB, counted in 2 MB blocks; -1 unreadable */
static long long free_2m_blocks(void)
{
	FILE *f = fopen("/proc/buddyinfo", "r");
	char line[1024];
	long long sum = -1;

	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "zone");
		long long c;
		int order = 0, k;

		if (!p)
			continue;
		p += 4;
		while (*p == ' ')
			p++;
		while (*p && *p != ' ')	/* the zone's name */
			p++;
		if (sum < 0)
			sum = 0;
		while (sscanf(p, "%lld%n", &c, &k) == 1) {
			if (order >= 9)
				sum += c << (order - 9);
			order++;
			p += k;
		}
	}
	if (f)
		fclose(f);
	return sum;
}

/* a /proc/meminfo field in bytes; 0 if absent */
static size_t meminfo(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	size_t kl = strlen(key), v = 0;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			v = strtoull(line + kl + 1, NULL, 10) * 1024;
			break;
		}
	if (f)
		fclose(f);
	return v;
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* KernelPageSize and AnonHugePages (kB) of the mapping holding a */
static int smaps_of(const char *a, unsigned long *kps, unsigned long *ahp)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	unsigned long start, end, v, addr = (unsigned long)a;
	char line[512];
	int in = 0, found = 0;

	*kps = *ahp = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			if (found)
				break;
			in = addr >= start && addr < end;
			found |= in;
			continue;
		}
		if (in && sscanf(line, "KernelPageSize: %lu kB", &v) == 1)
			*kps = v;
		else if (in && sscanf(line, "AnonHugePages: %lu kB", &v) == 1)
			*ahp = v;
	}
	if (f)
		fclose(f);
	return found ? 0 : -1;
}

/* 1: the 4 KB page at a is mapped (pagemap's bit 63), 0 not, -1 error */
static int present(int fd, const char *a)
{
	uint64_t e;
	off_t off = (off_t)((uintptr_t)a / PAGE) * sizeof(e);

	if (pread(fd, &e, sizeof(e), off) != (ssize_t)sizeof(e))
		return -1;
	return (int)(e >> 63);
}

/* -- the fragmenter ------------------------------------------------------ */

struct frag {
	char *p;
	size_t len;		/* mapped */
	size_t filled;		/* touched */
	size_t held;		/* still held after the holes */
	double build_s;
};

#define FRAG_STEP (32UL << 20)

static size_t frag_floor(void)
{
	size_t total = meminfo("MemTotal"), fl = 256UL << 20;

	return total / 8 > fl ? total / 8 : fl;
}

/*
 * Fills memory with 4 KB anonymous pages until MemAvailable would drop
 * below the floor plus need (what the measured mapping will take), or
 * frag_max; then frees every other page.  0, or -1 with why.
 */
static int frag_build(struct frag *fr, size_t need, char *why, size_t n)
{
	size_t avail = meminfo("MemAvailable"), floor = frag_floor() + need;
	size_t cap = avail > floor ? avail - floor : 0, off, i;
	double t0 = now_ns();

	memset(fr, 0, sizeof(*fr));
	if (frag_max && cap > frag_max)
		cap = frag_max;
	cap &= ~(FRAG_STEP - 1);
	if (cap < FRAG_STEP) {
		snprintf(why, n, "fragmenter: room for %zu MB (MemAvailable "
			 "%zu MB, its floor %zu MB, --frag-max %zu MB), under "
			 "one %lu MB step", cap >> 20, avail >> 20, floor >> 20,
			 frag_max >> 20, FRAG_STEP >> 20);
		return -1;
	}
	fr->p = mmap(NULL, cap, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (fr->p == MAP_FAILED) {
		fr->p = NULL;
		snprintf(why, n, "fragmenter: mmap %zu MB: %s", cap >> 20,
			 strerror(errno));
		return -1;
	}
	fr->len = cap;
	madvise(fr->p, cap, MADV_NOHUGEPAGE);
	for (off = 0; off < cap; off += FRAG_STEP) {
		/* stop while others still have room: checked every step */
		if (meminfo("MemAvailable") < floor + FRAG_STEP)
			break;
		for (i = 0; i < FRAG_STEP; i += PAGE)
			fr->p[off + i] = 1;
		fr->filled = off + FRAG_STEP;
	}
	for (i = PAGE; i < fr->filled; i += 2 * PAGE)
		madvise(fr->p + i, PAGE, MADV_DONTNEED);
	fr->held = fr->filled / 2;
	fr->build_s = (now_ns() - t0) / 1e9;
	return 0;
}

static void frag_release(struct frag *fr)
{
	if (fr->p)
		munmap(fr->p, fr->len);
	memset(fr, 0, sizeof(*fr));
}

/* -- the measurement ----------------------------------------------------- */

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* nearest rank: the smallest value with at least p % at or below it */
static double pct(const double *s, size_t n, double p)
{
	size_t k = (size_t)((p * n + 99.999999) / 100);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return s[k - 1];
}

static void emit_samples(const struct bench_ctx *x, int cond,
			 const double *lat, size_t n)
{
	size_t i;

	if (!samples || n > 65536)
		return;
	printf("@meta faultlat_samples {\"backing\": \"%s\", \"condition\": "
	       "\"%s\", \"ns\": [", x->b->name, cond_names[cond]);
	for (i = 0; i < n; i++)
		printf("%s%.0f", i ? ", " : "", lat[i]);
	printf("]}\n");
}

static int one(const struct bench_ctx *x, int cond)
{
	const struct backing *b = x->b;
	size_t step = b->page_kb * 1024, n, i, nt = 0, k;
	struct mapping m;
	struct frag fr = { 0 };
	struct vmstat v0, v1;
	double *lat = NULL, *srt = NULL, w0, w1, sum = 0, sum2 = 0, w2, w3;
	long f0, f1;
	long long blocks;
	unsigned long kps, ahp, huge = 0;
	char why[512];
	int fd, rc = -1;

	/*
	 * no room to age memory (MemAvailable at its floor, or a --frag-max
	 * under one 32 MB step): no aged row, said, not a failed backing
	 */
	if (cond == C_AGED &&
	    frag_build(&fr, x->o->sizes[x->si], why, sizeof(why))) {
		char js[600];

		json_str(js, sizeof(js), why);
		printf("@meta faultlat_aged_skipped {\"backing\": \"%s\", "
		       "\"reason\": %s}\n", b->name, js);
		progress("%-14s aged skipped: %s", b->name, why);
		return 0;
	}
	if (backing_map(b, x->o->sizes[x->si], 0, &m, why, sizeof(why))) {
		emit_error("%s", why);
		frag_release(&fr);
		return -1;
	}
	n = m.len / step;
	lat = malloc(n * sizeof(double));
	srt = malloc(n * sizeof(double));
	fd = open("/proc/self/pagemap", O_RDONLY);
	if (!lat || !srt) {
		emit_error("%s: out of memory", b->name);
		goto out;
	}
	/*
	 * no fault of ours inside the loop: the arrays touched here (malloc,
	 * as a memset of calloc's memory may be left out by the compiler)
	 */
	memset(lat, 0, n * sizeof(double));
	memset(srt, 0, n * sizeof(double));
	now_ns();
	blocks = free_2m_blocks();
	vmstat_read(&v0);
	f0 = minflt();
	w0 = now_ns();
	for (i = 0; i < n; i++) {
		double a, z;

		if (distort == D_HALF && i % 2) {
			((volatile char *)m.addr)[i * step] = 1;
			continue;
		}
		a = now_ns();
		((volatile char *)m.addr)[i * step] = 1;
		z = now_ns();
		lat[nt++] = z - a;
	}
	w1 = now_ns();
	f1 = minflt();
	vmstat_read(&v1);
	/* the same loop over the touched pages: its cost outside the stores */
	w2 = now_ns();
	for (i = 0; i < n; i++) {
		double a, z;

		a = now_ns();
		((volatile char *)m.addr)[i * step] = 2;
		z = now_ns();
		srt[i] = z - a;
	}
	w3 = now_ns();
	for (i = 0; i < n; i++)
		sum2 += srt[i];
	if (distort == D_CLOCK)
		for (i = 0; i < nt; i++)
			lat[i] *= 0.8;
	for (i = 0; i < nt; i++)
		sum += lat[i];

	if (smaps_of(m.addr, &kps, &ahp)) {
		emit_error("%s: mapping not in /proc/self/smaps", b->name);
		goto out;
	}
	/* no pagemap (a kernel without PROC_PAGE_MONITOR): huge_faults empty */
	if (b->page_kb > 4 && fd >= 0)
		for (i = 0; i < n; i++) {
			int r = present(fd, m.addr + i * step + PAGE);

			if (r < 0) {
				emit_error("%s: cannot read /proc/self/pagemap",
					   b->name);
				goto out;
			}
			huge += r;
		}
	if (distort == D_CLAIM)
		huge = n;

	emit_samples(x, cond, lat, nt);
	memcpy(srt, lat, nt * sizeof(double));
	qsort(srt, nt, sizeof(double), cmp_dbl);
	k = distort == D_P99 ? nt - nt / 100 : nt;
	{
		struct cell row[32];
		int c = 0, j;

		row[c++] = CELL_S(b->name);
		row[c++] = CELL_U(b->page_kb);
		row[c++] = CELL_S(cond_names[cond]);
		row[c++] = CELL_U(m.len);
		row[c++] = CELL_U(nt);
		row[c++] = CELL_F(pct(srt, k, 50) / 1e3);
		row[c++] = CELL_F(pct(srt, k, 90) / 1e3);
		row[c++] = CELL_F(pct(srt, k, 99) / 1e3);
		row[c++] = CELL_F(srt[k - 1] / 1e3);
		row[c++] = CELL_F(sum / nt / 1e3);
		row[c++] = CELL_OPT_U(fd >= 0 || distort == D_CLAIM, huge);
		row[c++] = CELL_U(kps);
		row[c++] = CELL_U(ahp);
		row[c++] = CELL_D(f1 - f0);
		row[c++] = CELL_F((w1 - w0) / 1e3);
		row[c++] = CELL_F(sum / 1e3);
		row[c++] = CELL_F((w3 - w2 - sum2) / n);
		row[c++] = CELL_F(sum2 / n);
		row[c++] = CELL_OPT(blocks >= 0, (double)blocks);
		row[c++] = CELL_U(fr.held);
		row[c++] = CELL_F(fr.build_s);
		for (j = 0; j < NVM; j++)
			row[c++] = CELL_OPT_U(v0.have[j] && v1.have[j],
					      v1.v[j] - v0.v[j]);
		emit_row(row, c);
	}
	progress("%-14s %-5s %6zu faults: p50 %9.1f p99 %9.1f max %9.1f us, "
		 "%lu huge", b->name, cond_names[cond], nt,
		 pct(srt, k, 50) / 1e3, pct(srt, k, 99) / 1e3,
		 srt[k - 1] / 1e3, huge);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(lat);
	free(srt);
	backing_unmap(&m);
	frag_release(&fr);
	return rc;
}

static int measure(const struct bench_ctx *x)
{
	int c, rc = 0;

	for (c = 0; c < C_NR; c++) {
		if ((cond_opt == 1 && c != C_FRESH) ||
		    (cond_opt == 2 && c != C_AGED))
			continue;
		if (one(x, c))
			rc = -1;
	}
	return rc;
}

static void start(struct counters *c)
{
	struct vmstat v;
	int i, first = 1;
	char buf[64] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/defrag", "r");

	(void)c;
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
		buf[strcspn(buf, "\n")] = 0;
	}
	vmstat_read(&v);
	printf("@meta faultlat_vmstat {\"absent\": [");
	for (i = 0; i < NVM; i++)
		if (!v.have[i]) {
			printf("%s\"%s\"", first ? "" : ", ", vm_names[i]);
			first = 0;
		}
	printf("], \"thp_defrag\": \"%s\", \"frag_floor_bytes\": %zu}\n",
	       buf, frag_floor());
}

static const struct bench faultlat_bench = {
	.name = "faultlat",
	.desc = "per-fault first-touch latency (p50/p90/p99/max), fresh and "
		"after a fragmenter",
	.columns = "backing %s, page_kb %u, condition %s, size_bytes %u, "
		   "faults %u, p50_us %.3f, p90_us %.3f, p99_us %.3f, "
		   "max_us %.3f, mean_us %.3f, huge_faults %u, "
		   "kernel_page_kb %u, anon_huge_kb %u, minflt %d, "
		   "wall_us %.3f, sum_us %.3f, loop_ns_per_iter %.2f, "
		   "clock_ns_per_iter %.2f, free_2m_blocks %.0f, "
		   "frag_bytes %u, frag_build_s %.3f, thp_fault_alloc %u, "
		   "thp_fault_fallback %u, compact_stall %u, "
		   "htlb_buddy_alloc_success %u, htlb_buddy_alloc_fail %u",
	.key = "backing,condition,size_bytes",
	.metric = "p99_us",
	.lower_is_better = 1,
	.opts = faultlat_opts,
	.maps_own = 1,
	.start = start,
	.measure = measure,
};
BENCH_REGISTER(faultlat_bench);
