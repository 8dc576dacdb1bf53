// SPDX-License-Identifier: GPL-2.0
/*
 * tlbreach.c - TLB reach and miss cost from timing alone, where no PMU
 * counts TLB misses (cloud VMs, TCG guests, this project's hosts).
 *
 * As lmbench's `tlb` and Calibrator do, two dependent pointer chases of
 * the same length are compared at each point of a sweep:
 *
 *   page chain  N elements, one per stride unit (--stride; by default the
 *               backing's own page, so one element per page), at a line
 *               of the unit coloured so that every 64 units take each of
 *               the 64 line offsets of a 4 KB page once (unit_line()),
 *               in one random cycle;
 *   line chain  N elements in N distinct lines of as few units as hold
 *               them (every line of each unit but the page chain's own),
 *               in a random cycle of its own.
 *
 * Both touch N distinct cache lines spread evenly over the sets of a
 * virtually indexed L1D (whose set bits lie in the 4 KB page offset: 64
 * sets of 64-byte lines at most), so they miss the caches alike; only the
 * page chain needs N TLB entries.  The colouring is deterministic, as
 * lmbench's and Calibrator's placements are: a line picked by a hash of
 * the page number (the placement until issue 29) overfills some sets by
 * chance, which the line chain's consecutive lines never do (at 640
 * pages of a 48 KB 12-way L1D, 26.9 % of the page chain's lines sat in
 * sets holding more lines than ways, none of the line chain's); benchtool
 * reachlayout prints both chains' lines per set.  The
 * line chain needs N/63 of them (4 KB pages) or one (2 MB pages): it meets
 * the L1 TLB's reach only at 63 x its entries.  excess_ns, the page
 * chain's time per access less the line chain's, is then what the TLB
 * adds, and it rises in steps where N passes each level's entries: the
 * knees (bench/tlbknees.py finds them, results/README.md).  N is
 * wss_bytes / stride, so a sweep of --sizes sweeps the number of pages
 * (up to --max-pages).  On a huge-page backing the default measures two
 * strides: the page (how many entries of that size a level holds) and
 * 4 KB (whether one entry covers the whole page: where a hypervisor backs
 * the VM's memory with 4 KB pages, the knee sits where 4 KB pages' does).
 *
 * The two chains alternate within each repetition (page, line; line, page
 * the next), so load on a shared host falls on both; the minimum over the
 * repetitions is reported beside the median, because a loaded host only
 * ever adds time.  Loops are unrolled 16 times, as the chase's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "runner.h"
#include "tlbreach.h"
#include "tlbuse.h"

#define UNROLL CHASE_UNROLL
#define MIN_ELEMS 4

static uint64_t hops = 1 << 18;
static size_t stride;		/* 0: the backing's page size, and 4 KB */
static uint64_t max_pages = 1 << 15;

/*
 * The TLB model's geometry (or why there is none), so that the summary
 * can put the knees beside it (plots/benches/tlbreach.py model_reach):
 * the runner resolves --model and prints it; no replay here, so no
 * --model-cap.  A run names the model it chose on the host (bench/run.py),
 * as it does the chase's: in a TCG guest auto finds none.
 */
static struct tlb_use tlb = TLB_USE_INIT("auto");

static const struct bench_opt tlbreach_opts[] = {
	{ .name = "hops", .arg = "N", .kind = OPT_COUNT, .dst = &hops,
	  .help = "accesses per chain and repetition, at least one lap (256K)",
	  .min = UNROLL },
	{ .name = "stride", .arg = "SIZE", .kind = OPT_SIZE, .dst = &stride,
	  .help = "bytes between the page chain's elements, a power of two "
	  ">= 128; 0: the backing's page size and, on huge pages, 4 KB (0)" },
	{ .name = "max-pages", .arg = "N", .kind = OPT_COUNT,
	  .dst = &max_pages, .min = MIN_ELEMS,
	  .help = "longest chain: sizes past N units are left out (32K)" },
	{ .name = "model", .arg = "NAME", .kind = OPT_STR, .dst = &tlb.model,
	  .help = "the TLB model whose geometry the summary sets beside the "
	  "knees: " TLB_USE_HELP " (auto)" },
	{ 0 },
};

void *volatile tlbreach_sink;

/*
 * The one line of unit u (of `lines` lines) that the page chain uses.
 * Its colour, the line's offset in its 4 KB page (the L1D set), takes
 * each of the `cols` values a unit can give once per block of `cols`
 * units (cols: 64, or the unit's lines where units are under 4 KB, whose
 * colours also follow from the unit's place in its page); the block's
 * keyed rotation and, in units over 4 KB, a keyed choice among the lines
 * of that colour keep the higher address bits (the sets of a larger
 * cache) from following the colour.
 */
static size_t unit_line(size_t u, size_t lines, uint64_t key)
{
	size_t cols = lines < PAGE / LINE ? lines : PAGE / LINE;
	size_t per = lines < PAGE / LINE ? PAGE / LINE / lines : 1;
	size_t j = u / per;	/* units in one 4 KB page share a colour */
	size_t col = (j % cols + mix64(j / cols + key)) % cols;

	return col + cols * (size_t)(mix64(u ^ ~key) % (lines / cols));
}

size_t tlbreach_elem_off(size_t i, int page, size_t unit, uint64_t key)
{
	size_t lines = unit / LINE, u, s, l;

	if (page)
		return i * unit + unit_line(i, lines, key) * LINE;
	/* every line of units 0, 1, ... but the page chain's own */
	u = i / (lines - 1);
	s = i % (lines - 1);
	l = unit_line(u, lines, key);
	return u * unit + (s < l ? s : s + 1) * LINE;
}

/* one random cycle (Sattolo) through the n elements of a chain */
static void **build(char *base, size_t n, int page, size_t unit,
		    uint64_t seed)
{
	uint64_t s = seed * 0x100000001b3ULL + n * 2 + page;
	uint64_t key = page_line_key(seed);
	size_t *a = malloc(n * sizeof(*a)), i;

	if (!a)
		return NULL;
	for (i = 0; i < n; i++)
		a[i] = i;
	for (i = n - 1; i > 0; i--) {
		size_t j = mix64(s += 0x9e3779b97f4a7c15ULL) % i, t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
	for (i = 0; i < n; i++)
		*(void **)(base + tlbreach_elem_off(i, page, unit, key)) =
			base + tlbreach_elem_off(a[i], page, unit, key);
	free(a);
	return (void **)(base + tlbreach_elem_off(0, page, unit, key));
}

/* ns per access of one timed run of blocks x UNROLL hops from *p */
static double timed(void ***p, uint64_t blocks)
{
	double t0 = now_ns(), t1;

	*p = chase_blocks(*p, blocks);
	t1 = now_ns();
	check_duration(t1 - t0);
	return (t1 - t0) / (blocks * UNROLL);
}

/* the reps of both chains, alternating which goes first */
static void run_reps(void **p[2], uint64_t blocks, int reps, double *t[2])
{
	int r, k;

	for (r = 0; r < reps; r++)
		for (k = 0; k < 2; k++) {
			int c = (r + k) % 2;

			t[c][r] = timed(&p[c], blocks);
		}
	tlbreach_sink = (char *)p[0] + (size_t)p[1];
}

static void emit(const struct bench_ctx *x, size_t n, size_t unit,
		 uint64_t blocks, double *t[2])
{
	struct stats sp, sl;
	int reps = x->o->reps;
	size_t line_units = (n + unit / LINE - 2) / (unit / LINE - 1);

	stats_compute(t[0], reps, &sp);
	stats_compute(t[1], reps, &sl);
	const struct cell row[] = {
		CELL_S(x->b->name), CELL_U(x->page_kb),
		CELL_U(x->o->sizes[x->si]), CELL_U(n), CELL_U(unit),
		CELL_F(sp.median - sl.median), CELL_F(sp.min - sl.min),
		CELL_F(sp.median), CELL_F(sp.min), CELL_F(sp.max),
		CELL_F(sl.median), CELL_F(sl.min), CELL_F(sl.max),
		CELL_F(sp.cv), CELL_F(sl.cv), CELL_D(reps),
		CELL_U(blocks * UNROLL), CELL_U(line_units),
	};

	emit_row(row, NCELLS(row));
	progress("%-14s %7zu units of %7zu B: page %7.2f line %7.2f excess "
		 "%6.2f ns (min %6.2f)", x->b->name, n, unit, sp.median,
		 sl.median, sp.median - sl.median, sp.min - sl.min);
}

/* one curve point: both chains over the n units of unit bytes */
static int measure_unit(const struct bench_ctx *x, size_t unit)
{
	size_t n = x->o->sizes[x->si] / unit;
	uint64_t want = hops < n ? n : hops;
	uint64_t blocks = (want + UNROLL - 1) / UNROLL;
	int reps = x->o->reps, w;
	double *t[2];
	void **p[2];

	/* no point under MIN_ELEMS units or past --max-pages, none twice */
	if (n < MIN_ELEMS || n > max_pages ||
	    (x->si && x->o->sizes[x->si - 1] / unit == n))
		return 0;
	t[0] = calloc(reps, sizeof(double));
	t[1] = calloc(reps, sizeof(double));
	p[0] = t[0] && t[1] ? build(x->m->addr, n, 1, unit, x->o->seed) : NULL;
	p[1] = p[0] ? build(x->m->addr, n, 0, unit, x->o->seed) : NULL;
	if (!p[1]) {
		emit_error("out of memory for %d repetitions of a cycle of %zu "
			   "elements", reps, n);
		free(t[0]);
		free(t[1]);
		return -1;
	}
	for (w = 0; w < x->o->warmup; w++) {
		p[0] = chase_blocks(p[0], blocks);
		p[1] = chase_blocks(p[1], blocks);
	}
	run_reps(p, blocks, reps, t);
	emit(x, n, unit, blocks, t);
	free(t[0]);
	free(t[1]);
	return 0;
}

/*
 * The stride is the backing's page (how many entries of that size the
 * TLB holds) and, on huge pages, also 4 KB: whether one entry covers the
 * whole huge page, or the page is held as 4 KB entries (a hypervisor
 * backing a VM's memory with 4 KB pages; a TLB that splinters).
 */
static int measure(const struct bench_ctx *x)
{
	size_t page = x->page_kb * 1024;

	if (stride)
		return measure_unit(x, stride);
	if (measure_unit(x, page))
		return -1;
	return page > PAGE ? measure_unit(x, PAGE) : 0;
}

static int check(char *why, size_t n)
{
	if (stride && (stride < 2 * LINE || (stride & (stride - 1))))
		return snprintf(why, n, "--stride %zu: give a power of two of "
				"at least %d bytes, or 0 for the backing's page "
				"size", stride, 2 * LINE), -1;
	return 0;
}


static const struct bench tlbreach_bench = {
	.name = "tlbreach",
	.desc = "TLB reach and miss cost from timing: a chain with one "
		"access per page against one over few pages",
	.columns = "backing %s, page_kb %u, wss_bytes %u, pages %u, "
		   "stride_bytes %u, excess_ns %.3f, excess_min_ns %.3f, "
		   "page_ns %.3f, page_ns_min %.3f, page_ns_max %.3f, "
		   "line_ns %.3f, line_ns_min %.3f, line_ns_max %.3f, "
		   "page_cv %.4f, line_cv %.4f, reps %d, hops %u, "
		   "line_pages %u",
	.key = "backing,stride_bytes,pages",
	.metric = "excess_ns",
	.lower_is_better = 1,
	.opts = tlbreach_opts,
	.check = check,
	.tlb = &tlb,
	.measure = measure,
};
BENCH_REGISTER(tlbreach_bench);
