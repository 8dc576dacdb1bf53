// SPDX-License-Identifier: GPL-2.0
/*
 * mlp.c - memory-level parallelism: N independent pointer chases
 * interleaved in one loop, so that the core has up to N misses (and page
 * walks) in flight at once.  This is multichase's parallel chase, with its
 * two layout options:
 *
 *   --stride S     elements S bytes apart (a power of two, 8..4096; 256 by
 *                  default, as multichase, which keeps the adjacent-line
 *                  prefetcher from fetching another element's line).  At
 *                  4096 each page's element sits at the line page_line()
 *                  picks for it (runner.h), as the chase's page hop.
 *   --tlb-group T  TLB locality (multichase -T): the working set is cut
 *                  into groups of T bytes; a chain visits every one of its
 *                  elements in a group, in random order, before it moves on
 *                  to the next group, in a random order of groups.  0 (the
 *                  default): one group, the whole working set.
 *
 * The N chains are disjoint and each is one cycle: inside every group,
 * element j of the group belongs to chain j % N, so each chain spans the
 * whole working set and holds 1/N of its elements.  Each chain's orders
 * come from its own seeded stream (mix64), the same for every backing.
 *
 * The loop keeps every chain's pointer in a register of its own (see "the
 * loop" below).  ns_per_access is the repetition's time over all accesses
 * of all chains; chain_ns (ns_per_access x N) is the time one chain takes
 * per step, the latency each miss sees while N are in flight.  The TLB model replays the
 * N chains interleaved as the loop runs them (as the chase does, chase.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlp.h"
#include "runner.h"
#include "tlbuse.h"

#define MAX_CHAINS TLB_USE_MAX_CHAINS

/* powers of two up to MAX_CHAINS: the figure's x axis is log2 */
static const char *chains_arg = "1,2,4,8,16";
static size_t stride = 256;
static size_t tlb_group;
static uint64_t hops = 1 << 20;
static struct tlb_use tlb = TLB_USE_INIT("auto");

static const struct bench_opt mlp_opts[] = {
	{ .name = "chains", .arg = "LIST", .kind = OPT_STR, .dst = &chains_arg,
	  .help = "chain counts to measure, each 1..16 (1,2,4,8,16)" },
	{ .name = "stride", .arg = "SIZE", .kind = OPT_SIZE, .dst = &stride,
	  .help = "bytes between elements, a power of two from 8 to 4096 (256)",
	  .min = 8 },
	{ .name = "tlb-group", .arg = "SIZE", .kind = OPT_SIZE,
	  .dst = &tlb_group, .help = "visit a group of this many bytes (a "
	  "multiple of 4096) before the next; 0: no locality (0)" },
	{ .name = "hops", .arg = "N", .kind = OPT_COUNT, .dst = &hops,
	  .help = "accesses per repetition, all chains together (1M)",
	  .min = MAX_CHAINS },
	TLB_USE_OPTS(tlb, "auto"),
	{ 0 },
};

/* the runner's points: one per chain count, "1", "2", ... */
static char chain_names[MAX_CHAINS][4];
static const char *points[MAX_CHAINS + 1];
static int nchains[MAX_CHAINS];

void *volatile mlp_sink;

/* -- layout ----------------------------------------------------------------- */

static size_t elem_off(size_t e, uint64_t key)
{
	return stride == PAGE ? e * PAGE + page_line(e, key) : e * stride;
}

/* a seeded random permutation of 0..n-1 into a[] (Fisher-Yates) */
static void shuffle(uint32_t *a, size_t n, uint64_t *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		a[i] = i;
	for (i = n; i > 1; i--) {
		size_t j = mix64(*s += 0x9e3779b97f4a7c15ULL) % i;
		uint32_t t = a[i - 1];

		a[i - 1] = a[j];
		a[j] = t;
	}
}

/* the elements and groups of a working set, for n chains */
struct layout {
	size_t elems, per_group, groups;
	int n;
};

static struct layout layout_of(size_t wss, int n)
{
	struct layout l = { .elems = wss / stride, .n = n };

	l.per_group = tlb_group ? tlb_group / stride : l.elems;
	if (l.per_group > l.elems)
		l.per_group = l.elems;
	l.groups = l.per_group ? (l.elems + l.per_group - 1) / l.per_group : 0;
	return l;
}

/*
 * Links chain c through base: its groups in a random order, in each its
 * elements (group element j with j % n == c) in a random order, the last
 * back to the first.  gord and idx are scratch of l->groups and
 * l->per_group / n + 1 entries.  Returns the chain's first element.
 */
static void **link_chain(char *base, const struct layout *l, int c,
			 uint64_t seed, uint32_t *gord, uint32_t *idx)
{
	uint64_t s = mix64(seed * 0x100000001b3ULL + l->elems * 131 + l->n * 17
			   + c), key = page_line_key(seed);
	void **first = NULL, **prev = NULL;
	size_t g, k;

	shuffle(gord, l->groups, &s);
	for (g = 0; g < l->groups; g++) {
		size_t lo = gord[g] * l->per_group, len = l->elems - lo, m;

		if (len > l->per_group)
			len = l->per_group;
		m = len > (size_t)c ? (len - c + l->n - 1) / l->n : 0;
		shuffle(idx, m, &s);
		for (k = 0; k < m; k++) {
			void **e = (void **)(base + elem_off(lo + c + (size_t)
							     idx[k] * l->n, key));

			if (prev)
				*prev = e;
			else
				first = e;
			prev = e;
		}
	}
	*prev = first;
	return first;
}

/* writes n chains into base; starts[] their first elements; 0 or -1 */
static int build_chains(char *base, size_t wss, int n, uint64_t seed,
			void **starts[])
{
	struct layout l = layout_of(wss, n);
	uint32_t *gord = malloc(l.groups * sizeof(*gord));
	uint32_t *idx = malloc((l.per_group / n + 1) * sizeof(*idx));
	int c, rc = -1;

	if (gord && idx) {
		for (c = 0; c < n; c++)
			starts[c] = link_chain(base, &l, c, seed, gord, idx);
		rc = 0;
	}
	free(gord);
	free(idx);
	return rc;
}

/* -- the loop ----------------------------------------------------------------- */

/*
 * The chains' loop is assembly, one function per chain count: chain i's
 * pointer lives in general register R<i> for the whole loop, and a step
 * is one load through it (x86_64 "mov (%r),%r", arm64 "ldr x, [x]").  In
 * C the compiler vectorised the interleaving (two chains to an xmm
 * register and a stack slot, a store-to-load round trip every step);
 * tests/bench/test_mlp.py checks the built loop with objdump.  A pass is
 * UNROLL steps of every chain, so the loop's own instructions hide
 * behind the loads.
 *
 * x86_64 has 15 general registers besides rsp: the count of passes lives
 * in memory (a static, not the stack: its decrement is a chain of its
 * own, once a pass), and the 16th chain lives in rsp itself, the stack
 * pointer and rbp parked in statics meanwhile.  Nothing may touch the
 * stack then: the loop makes no call, and the signal handlers run on an
 * alternate stack (backing.c).
 */
#define UNROLL 4

/* F(byte offset in q[], register) for chains 1..n-1 */
#define TAIL_1(F)
#define TAIL_2(F) TAIL_1(F) F(8, R1)
#define TAIL_3(F) TAIL_2(F) F(16, R2)
#define TAIL_4(F) TAIL_3(F) F(24, R3)
#define TAIL_5(F) TAIL_4(F) F(32, R4)
#define TAIL_6(F) TAIL_5(F) F(40, R5)
#define TAIL_7(F) TAIL_6(F) F(48, R6)
#define TAIL_8(F) TAIL_7(F) F(56, R7)
#define TAIL_9(F) TAIL_8(F) F(64, R8)
#define TAIL_10(F) TAIL_9(F) F(72, R9)
#define TAIL_11(F) TAIL_10(F) F(80, R10)
#define TAIL_12(F) TAIL_11(F) F(88, R11)
#define TAIL_13(F) TAIL_12(F) F(96, R12)
#define TAIL_14(F) TAIL_13(F) F(104, R13)
#define TAIL_15(F) TAIL_14(F) F(112, R14)
#define TAIL_16(F) TAIL_15(F) F(120, R15)
#define ALL(n, F) F(0, R0) TAIL_##n(F)
#define STEPS(n) ALL(n, STEP) ALL(n, STEP) ALL(n, STEP) ALL(n, STEP)

#if defined(__x86_64__)
#define R0 "rax"
#define R1 "rcx"
#define R2 "rdx"
#define R3 "rsi"
#define R4 "rdi"
#define R5 "r8"
#define R6 "r9"
#define R7 "r10"
#define R8 "r11"
#define R9 "rbx"
#define R10 "r12"
#define R11 "r13"
#define R12 "r14"
#define R13 "r15"
#define R14 "rbp"
#define R15 "rsp"
#define STEP(off, r) "mov (%%" r "), %%" r "\n\t"
#define LOAD(off, r) "mov " #off "(%%rax), %%" r "\n\t"
#define STORE(off, r) "mov %%" r ", " #off "(%%rax)\n\t"

static uint64_t passes;
static void ***chain_q;
static void *saved_sp, *saved_bp, *saved_r0;

/*
 * q[] through rax, chain 0's own register, loaded last and stored first
 * (through rcx, free by then or not a chain's).
 */
#define CHAINS_FN(n)							\
static __attribute__((noinline)) void chains_##n(void **q[], uint64_t steps) \
{									\
	chain_q = q;							\
	passes = steps / UNROLL;					\
	__asm__ volatile(						\
		"mov %%rsp, %[sp]\n\tmov %%rbp, %[bp]\n\t"		\
		"mov %[q], %%rax\n\t" TAIL_##n(LOAD) "mov (%%rax), %%rax\n" \
		"1:\n\t" STEPS(n) "subq $1, %[passes]\n\tjnz 1b\n\t"	\
		"mov %%rax, %[r0]\n\tmov %[q], %%rax\n\t" TAIL_##n(STORE) \
		"mov %[r0], %%rcx\n\tmov %%rcx, (%%rax)\n\t"		\
		"mov %[sp], %%rsp\n\tmov %[bp], %%rbp"			\
		: [sp] "=m"(saved_sp), [bp] "=m"(saved_bp),		\
		  [r0] "=m"(saved_r0), [passes] "+m"(passes)		\
		: [q] "m"(chain_q)					\
		: "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10",	\
		  "r11", "rbx", "r12", "r13", "r14", "r15", "cc", "memory"); \
}
#elif defined(__aarch64__)
#define R0 "x2"
#define R1 "x3"
#define R2 "x4"
#define R3 "x5"
#define R4 "x6"
#define R5 "x7"
#define R6 "x8"
#define R7 "x9"
#define R8 "x10"
#define R9 "x11"
#define R10 "x12"
#define R11 "x13"
#define R12 "x14"
#define R13 "x15"
#define R14 "x16"
#define R15 "x17"
#define STEP(off, r) "ldr " r ", [" r "]\n\t"
#define LOAD(off, r) "ldr " r ", [%[q], #" #off "]\n\t"
#define STORE(off, r) "str " r ", [%[q], #" #off "]\n\t"

/* x2..x17: caller-saved, none of them the platform register x18 */
#define CHAINS_FN(n)							\
static __attribute__((noinline)) void chains_##n(void **q[], uint64_t steps) \
{									\
	uint64_t left = steps / UNROLL;					\
									\
	__asm__ volatile(						\
		ALL(n, LOAD) "1:\n\t" STEPS(n)				\
		"subs %[left], %[left], #1\n\tb.ne 1b\n\t"		\
		ALL(n, STORE)						\
		: [left] "+r"(left) : [q] "r"(q)			\
		: "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10",	\
		  "x11", "x12", "x13", "x14", "x15", "x16", "x17", "cc",	\
		  "memory");						\
}
#else
#error "bench/mlp.c: the chains' loop is written for x86_64 and arm64 only"
#endif

/* each runs steps (a multiple of UNROLL, at least one pass) of n chains */
CHAINS_FN(1) CHAINS_FN(2) CHAINS_FN(3) CHAINS_FN(4)
CHAINS_FN(5) CHAINS_FN(6) CHAINS_FN(7) CHAINS_FN(8)
CHAINS_FN(9) CHAINS_FN(10) CHAINS_FN(11) CHAINS_FN(12)
CHAINS_FN(13) CHAINS_FN(14) CHAINS_FN(15) CHAINS_FN(16)

static void (*const chains_fn[MAX_CHAINS + 1])(void **[], uint64_t) = {
	NULL, chains_1, chains_2, chains_3, chains_4, chains_5, chains_6,
	chains_7, chains_8, chains_9, chains_10, chains_11, chains_12,
	chains_13, chains_14, chains_15, chains_16,
};

/* -- the repetition hooks ------------------------------------------------------ */

/* one chain count at one size on one backing, and its repetitions */
struct point {
	int n;
	void **start[MAX_CHAINS], **p[MAX_CHAINS];
	uint64_t steps;		/* of every chain, per repetition */
	double *ns, *cyc, *wk;	/* per access, per repetition */
	int ok[EV_NR];		/* which counters counted every repetition */
};

static void point_free(struct point *pt)
{
	free(pt->ns);
	free(pt->cyc);
	free(pt->wk);
	free(pt);
}

static struct point *point_new(int n, int reps)
{
	struct point *pt = calloc(1, sizeof(*pt));
	int i;

	if (!pt)
		return NULL;
	pt->ns = calloc(reps, sizeof(double));
	pt->cyc = calloc(reps, sizeof(double));
	pt->wk = calloc(reps, sizeof(double));
	if (!pt->ns || !pt->cyc || !pt->wk) {
		point_free(pt);
		return NULL;
	}
	pt->n = n;
	/* hops spread over the chains, in whole passes of the loop */
	pt->steps = hops / n / UNROLL * UNROLL;
	if (!pt->steps)
		pt->steps = UNROLL;
	for (i = 0; i < EV_NR; i++)
		pt->ok[i] = 1;
	return pt;
}

/* builds the x->pt-th chain count's chains in the backing's working set */
static int prepare(const struct bench_ctx *x, void **st)
{
	int n = nchains[x->pt];
	size_t wss = x->o->sizes[x->si];
	struct point *pt;

	/* every chain needs two elements, a group one element per chain */
	if (wss / stride < 2 * (size_t)n ||
	    (tlb_group && tlb_group / stride < (size_t)n))
		return 1;
	pt = point_new(n, x->o->reps);
	if (!pt || build_chains(x->m->addr, wss, n, x->o->seed, pt->start)) {
		if (pt)
			point_free(pt);
		emit_error("out of memory for %d chains at %zu bytes", n, wss);
		return -1;
	}
	memcpy(pt->p, pt->start, sizeof(pt->p));
	*st = pt;
	return 0;
}

static int rep(const struct bench_ctx *x, void *st, int r)
{
	struct point *pt = st;
	uint64_t acc = pt->steps * pt->n;
	struct counter_values v;
	double t0, t1;
	int i;

	if (r < 0) {
		chains_fn[pt->n](pt->p, pt->steps);
		return 0;
	}
	counters_start(x->c);
	t0 = now_ns();
	chains_fn[pt->n](pt->p, pt->steps);
	t1 = now_ns();
	counters_stop(x->c, &v);
	check_duration(t1 - t0);
	pt->ns[r] = (t1 - t0) / acc;
	pt->cyc[r] = (double)v.v[EV_CYCLES] / acc;
	pt->wk[r] = 1000.0 * v.v[EV_WALK] / acc;
	for (i = 0; i < EV_NR; i++)
		pt->ok[i] &= v.ok[i];
	return 0;
}

static void emit(const struct bench_ctx *x, struct point *pt, int model_ok,
		 double mwk)
{
	struct stats st, sc, sw;
	int reps = x->o->reps;

	stats_compute(pt->ns, reps, &st);
	stats_compute(pt->cyc, reps, &sc);
	stats_compute(pt->wk, reps, &sw);
	const struct cell row[] = {
		CELL_S(x->b->name), CELL_U(x->page_kb),
		CELL_U(x->o->sizes[x->si]), CELL_D(pt->n), CELL_F(st.median),
		CELL_F(st.min), CELL_F(st.max), CELL_F(st.median * pt->n),
		CELL_U(stride), CELL_U(tlb_group), CELL_F(st.cv), CELL_D(reps),
		CELL_U(pt->steps * pt->n), CELL_OPT(pt->ok[EV_WALK], sw.median),
		CELL_OPT(model_ok, mwk), CELL_OPT(pt->ok[EV_CYCLES], sc.median),
		CELL_S(tlb_use_preset(&tlb)),
	};

	emit_row(row, NCELLS(row));
	progress("%-14s %2d chains %10zu B (%d/%d): %8.2f ns/access, %8.2f "
		 "ns/step of a chain  cv %.3f", x->b->name, pt->n,
		 x->o->sizes[x->si], x->si + 1, x->o->nsizes, st.median,
		 st.median * pt->n, st.cv);
}

static int finish(const struct bench_ctx *x, void *st, int ok)
{
	struct point *pt = st;
	double ml1 = 0, mwk = 0;
	int model_ok;

	if (ok) {
		mlp_sink = pt->p[0];
		model_ok = tlb_use_replay(&tlb, x->m->addr, pt->start, pt->n,
					  x->page_kb, x->o->sizes[x->si],
					  pt->n, &ml1, &mwk);
		emit(x, pt, model_ok, mwk);
	}
	point_free(pt);
	return 0;
}

/* -- options ---------------------------------------------------------------- */

/* --chains into nchains[] and points[]; 0, or -1 with why */
static int parse_chains(char *why, size_t n)
{
	const char *s = chains_arg;
	int k = 0, i;

	while (*s) {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s || (*end && *end != ',') || v < 1 ||
		    v > MAX_CHAINS || k == MAX_CHAINS)
			return snprintf(why, n, "--chains: '%s' is not a list of "
					"chain counts from 1 to %d, e.g. 1,2,4,8",
					chains_arg, MAX_CHAINS), -1;
		for (i = 0; i < k; i++)
			if (nchains[i] == v)
				return snprintf(why, n, "--chains: %ld is "
						"listed twice", v), -1;
		nchains[k] = v;
		snprintf(chain_names[k], sizeof(chain_names[k]), "%ld", v);
		points[k] = chain_names[k];
		k++;
		s = *end ? end + 1 : end;
	}
	if (!k)
		return snprintf(why, n, "--chains: empty; give chain counts, "
				"e.g. 1,2,4,8"), -1;
	points[k] = NULL;
	return 0;
}

static int check(char *why, size_t n)
{
	if (parse_chains(why, n))
		return -1;
	if (stride < 8 || stride > PAGE || (stride & (stride - 1)))
		return snprintf(why, n, "--stride: %zu is not a power of two "
				"from 8 to 4096 bytes", stride), -1;
	if (tlb_group % PAGE)
		return snprintf(why, n, "--tlb-group: %zu is not 0 or a "
				"multiple of 4096 bytes", tlb_group), -1;
	return 0;
}

/* -- benchtool mlp ---------------------------------------------------------- */

/* prints a chain from start until it is back there (or elems steps) */
static void print_chain(FILE *out, const char *base, void **start,
			size_t elems)
{
	void **p = start;
	size_t k = 0;

	do {
		fprintf(out, "%s%zu", k ? " " : "", (size_t)((char *)p - base));
		p = *p;
	} while (p != start && ++k <= elems);
	fputc('\n', out);
}

int mlp_layout(FILE *out, size_t wss, int n, size_t st, size_t group,
	       uint64_t seed, uint64_t steps, char *why, size_t wn)
{
	char buf[24];
	void **starts[MAX_CHAINS];
	char *base;
	int c;

	snprintf(buf, sizeof(buf), "%d", n);
	chains_arg = buf;
	stride = st;
	tlb_group = group;
	if (check(why, wn))
		return -1;
	if (wss / stride < 2 * (size_t)n || (group && group / stride < (size_t)n))
		return snprintf(why, wn, "%zu bytes hold too few elements for "
				"%d chains", wss, n), -1;
	if (steps % UNROLL)
		return snprintf(why, wn, "steps: %llu is not a multiple of %d",
				(unsigned long long)steps, UNROLL), -1;
	base = aligned_alloc(PAGE, (wss + PAGE - 1) / PAGE * PAGE);
	if (!base || build_chains(base, wss, n, seed, starts)) {
		free(base);
		return snprintf(why, wn, "out of memory"), -1;
	}
	for (c = 0; c < n; c++)
		print_chain(out, base, starts[c], wss / stride);
	if (steps) {
		chains_fn[n](starts, steps);
		for (c = 0; c < n; c++)
			fprintf(out, "%s%zu", c ? " " : "",
				(size_t)((char *)starts[c] - base));
		fputc('\n', out);
	}
	free(base);
	return 0;
}

static const struct bench mlp_bench = {
	.name = "mlp",
	.desc = "N pointer chases interleaved (memory-level parallelism), "
		"ns per access",
	.columns = "backing %s, page_kb %u, wss_bytes %u, chains %d, "
		   "ns_per_access %.3f, ns_min %.3f, ns_max %.3f, "
		   "chain_ns %.3f, stride %u, tlb_group %u, cv %.4f, "
		   "reps %d, accesses %u, walks_per_1k %.3f, "
		   "model_walks_per_1k %.3f, cycles_per_access %.3f, "
		   "model_preset %s",
	.key = "backing,chains,wss_bytes",
	.metric = "ns_per_access",
	.lower_is_better = 1,
	.opts = mlp_opts,
	.check = check,
	.tlb = &tlb,
	.points = points,
	.prepare = prepare,
	.rep = rep,
	.finish = finish,
};
BENCH_REGISTER(mlp_bench);
