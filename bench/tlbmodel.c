// SPDX-License-Identifier: GPL-2.0
/*
 * tlbmodel.c - set-associative data-TLB model (LRU, tree-PLRU or random
 * replacement); see tlbmodel.h.
 *
 * Preset geometries (data TLB used by loads; instruction TLBs ignored):
 *
 * skylake: Intel 64 and IA-32 Architectures Optimization Reference Manual,
 *   Skylake client microarchitecture, TLB parameters table: DTLB 4K 64
 *   entries 4-way, 2M/4M 32 entries 4-way, 1G 4 entries 4-way; STLB 1536
 *   entries 12-way shared by 4K and 2M, plus 16 entries 4-way for 1G.
 * goldencove: same manual, Golden Cove (Alder Lake P-core / Sapphire
 *   Rapids) TLB table: load DTLB 4K 96 entries 6-way, 2M/4M 32 entries
 *   4-way, 1G 8 entries fully associative; STLB 2048 entries 16-way for
 *   4K and 2M, 1024 entries 8-way for 1G.
 * zen1: AMD Software Optimization Guide for family 17h (pub. 56305),
 *   section 2.7.2, as quoted on Stack Overflow: L2 DTLB 1536 entries
 *   12-way (128 sets); otherwise as zen3 below.  A Ryzen 7 1800X's CPUID
 *   (tests/bench/fixtures/cpuid-ryzen-1800x-zen1.txt) agrees on 64 L1 and
 *   1536 L2 entries.
 * zen3: AMD Software Optimization Guide for family 19h (pub. 56665), and
 *   for family 17h (56305) which describes the same structure: L1 DTLB 64
 *   entries fully associative for all page sizes; L2 DTLB 2048 entries
 *   holding 4K and 2M page table entries and page directory entries
 *   (PDEs, ":pde"), 1G pages smashed into 2M entries.  The guides call
 *   the L2 one unified array and say nothing of ways reserved per page
 *   size; a partition (8/2/2 ways for 4K/2M/coalesced on clients, 6/3/3
 *   on servers, as CPUID's separate 4K and 2M associativity hints) is a
 *   third party's account on Stack Overflow, not AMD's, and is not
 *   modelled.  The real L2 is a skewed 12-way array; it is modelled as
 *   plain 12-way sets: 2048 is no multiple of 12, so 170 sets of 12 ways
 *   and a last set of 8 (171 sets), which keeps its capacity exact.
 *   (Until issue 29 it was 16-way, 128 sets: a power of two that, under
 *   tree-PLRU, made a cycle just past its reach walk on every access.)
 * zen4: AMD Software Optimization Guide for family 19h models 10h+ (Zen 4,
 *   pub. 57647): L1 DTLB 72 entries fully associative, all sizes; L2 DTLB
 *   3072 entries for 4K and 2M; modelled 12-way (256 sets) with PDEs and
 *   1G smashed to 2M as on Zen 3 (an assumption where the guide is
 *   silent).
 * zen5: AMD Software Optimization Guide for the Zen 5 microarchitecture
 *   (pub. 58455) and AMD's Hot Chips 2024 "Zen 5" slides: L1 DTLB 96
 *   entries, all sizes (this project's host reports 96 fully associative
 *   4K and 2M entries in CPUID 0x80000005); L2 DTLB 4096 entries for
 *   "everything but 1G", so 1G pages live in the L1 only.  16 ways (256
 *   sets) and PDEs as on Zen 3 are assumptions.
 * haswell, broadwell, icelake: the same Intel manual's TLB tables for
 *   those cores (DTLB 64/32/4, or 8 for 1G on Ice Lake; STLB 1024 8-way
 *   on Haswell, 1536 6-way plus 16 1G entries on Broadwell, 2048 16-way
 *   plus 1024 8-way 1G entries on Ice Lake).
 * gracemont: the same manual's Gracemont (E-core) chapter as recalled;
 *   no copy was reachable to confirm it, which its source says.
 * neoverse-n1: Arm Neoverse N1 Core Technical Reference Manual (Arm doc
 *   100616), and the Cortex-A76 Core TRM (100798), whose data-side TLBs
 *   are the same: Table A5-1 and section A5.2, TLB organization.  L1 data
 *   TLB 48 entries fully associative, entries of 4K, 16K, 64K, 2M and 512M
 *   only; L2 TLB (unified) 1280 entries 5-way (256 sets) holding 4K, 16K,
 *   64K, 2M, 32M, 512M and 1G.  The A76 TRM says the TLB stores all sizes
 *   and breaks them down into smaller pages where an L1 TLB needs it, so
 *   the L1 splinters (tlbmodel.h): a 32M page is held as the 2M entry
 *   covering the access, a 1G page as the 512M one.  Which smaller size it
 *   breaks a page into the TRM does not say; the largest the L1 holds is
 *   an assumption.  16K entries (the 16 KB granule) are not modelled.
 *   Nor does it say whether a 4 KB-granule contiguous run (CONT_PTE 64K,
 *   CONT_PMD 32M) is cached as one entry of that size; the model assumes
 *   it is.  Replacement and how the L2 indexes several sizes are not
 *   published: LRU and each entry's page number modulo 256 sets here.
 * cortex-a76: the same geometry as neoverse-n1, under the A76's name.
 * Checked on 2026-12-03 against secondary sources that quote the manuals
 * (the primary PDFs were not reachable from here):
 *   skylake: L1 DTLB sizes and ways as quoted from the Optimization
 *     Reference Manual 248966-045, Table 2-15; STLB 1536 entries 12-way.
 *     Agrees.
 *   goldencove: L1 DTLB 96/6, 32/4, 8/8 and a 2048-entry 16-way STLB, as
 *     in Hennessy & Patterson 7th ed. (Core i9-12900).  That text puts 1G
 *     pages in the same 2048 entries; the separate 1G:1024:8 array here
 *     was not confirmed.  It cannot change a result below 8 GB of 1G
 *     pages: the L1's 8 1G entries already hold them all.
 *   zen3: 64-entry fully associative L1, 2048-entry 12-way L2 holding 4K
 *     and 2M with 1G smashed to 2M, as described for Zen 2 (same TLBs).
 *     Agrees (12 ways since issue 29; the sets are stated above).
 *   zen4: 72 and 3072 entries were not confirmed by any source found.
 * Checked on 2026-12-04 (no Arm PDF was reachable from here):
 *   neoverse-n1, cortex-a76: the Cortex-A76 TRM 100798_0300_00_en as
 *     reproduced page by page on a manuals site: Table A5-1 (48, 48 and
 *     1280 5-way), A5.2.2 (L1 data TLB sizes as above, 32M and 1G not
 *     among them), A5.2.3 (L2 sizes as above; breaking down for the L1s).
 *     Agrees.  The same TRM's L2 TLB entry format (A6.6) marks entries
 *     coalesced from four contiguous pages; that is left out (tlbmodel.h).
 *     The N1 TRM 100616 itself was not found: a course summary citing
 *     Arm's Hot Chips 2019 and IEEE Micro 2020 papers on N1 gives the same
 *     48-entry fully associative L1 data TLB with those sizes and a
 *     1280-entry 5-way L2; an Ampere Altra Max (N1) simulator
 *     configuration gives the same entries and ways.  That N1's L1
 *     splinters as the A76 TRM describes is taken from the A76 text, not
 *     confirmed in N1's own.
 * Checked on 2026-12-04 (issue 19): every preset now carries its
 * replacement policy (then tree-PLRU, since issue 29 seeded random, none
 * being documented, see below); the
 * Zen L2s hold PDEs (":pde"), as the AMD guides say; zen5 (its CPUID on
 * this project's host confirms the 96-entry L1), icelake, haswell,
 * broadwell and gracemont were added.  The primary PDFs were again not
 * reachable: Zen 5 from AMD's Hot Chips 2024 slides as quoted, the Zen 2
 * wording ("holding 4-Kbyte and 2-Mbyte page table entries, as well as
 * page directory entries (PDEs)") as quoted from the 17h guide.
 * The model's purpose is the shape of the knees, not cycle accuracy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlbmodel.h"

/*
 * Replacement: neither Intel's Optimization Reference Manual nor AMD's
 * Software Optimization Guides (nor Arm's TRMs) say how a TLB picks its
 * victim, so every preset says "undocumented; modelled as seeded random".
 * Random replacement, from a fixed seed so that a run repeats exactly, is
 * the textbook policy that avoids LRU's corner case of a loop over one
 * page more than the TLB holds (Arpaci-Dusseau, "Operating Systems: Three
 * Easy Pieces", chapter "Paging: Faster Translations (TLBs)", section on
 * replacement), and it reproduces what this project measured natively:
 * the 4 KB page-hop chase on a Zen 5 host read 11, 21 and 136 ns per
 * access at 16, 17 and 24 MB (docs/machine.md, 2026-12-05), a gradual
 * rise past the L2's 16 MB reach.  Tree-PLRU, used before (issue 19),
 * follows LRU on a cycle wherever the ways are a power of two, so the
 * chase's page-hop cycle walked on 985 of 1000 accesses 6 % past zen5's
 * L2 reach at steady state (issue 29; tests/bench/test_tlbmodel_steady.py
 * TestZen5Steady, TestNoCliff).  "PRESET;policy=lru" still gives the LRU
 * cliff, ";policy=plru" tree-PLRU.
 *
 * The L1, though, is modelled as true LRU (":lru" on each L1 array, and
 * on the CPUID geometry's): tlbreach's 4 KB page chain on the same Zen 5
 * host showed no excess at 72 pages and 1.9 ns per access at 80 (one run
 * of 7 repetitions, 2026-12-06, results/README.md): the whole step within
 * 8 pages, which is LRU's cliff, where random replacement would have
 * missed on about 150 of 1000 accesses 10 % past the reach and 900 only
 * at 2.5 times it.  The L2's knee is the gradual one.
 */
#define POLICY ";policy=random"
#define UNDOC "; replacement undocumented; L2 modelled as seeded random, " \
	"L1 as LRU"

const struct tlb_preset tlb_presets[] = {
	{ "haswell",
	  "l1=4K:64:4:lru,2M:32:4:lru,1G:4:4:lru;l2=4K+2M:1024:8" POLICY,
	  "Intel Optimization Reference Manual 248966, Haswell TLB table: "
	  "STLB 1024 8-way for 4K and 2M, no 1G" UNDOC },
	{ "broadwell",
	  "l1=4K:64:4:lru,2M:32:4:lru,1G:4:4:lru;l2=4K+2M:1536:6,1G:16:4"
	  POLICY,
	  "Intel Optimization Reference Manual 248966, Broadwell: STLB 1536 "
	  "6-way for 4K and 2M, 16 4-way for 1G" UNDOC },
	{ "skylake",
	  "l1=4K:64:4:lru,2M:32:4:lru,1G:4:4:lru;l2=4K+2M:1536:12,1G:16:4"
	  POLICY,
	  "Intel Optimization Reference Manual, Skylake TLB table" UNDOC },
	{ "icelake",
	  "l1=4K:64:4:lru,2M:32:4:lru,1G:8:8:lru;l2=4K+2M:2048:16,1G:1024:8" POLICY,
	  "Intel Optimization Reference Manual 248966, Ice Lake (Sunny Cove) "
	  "TLB table" UNDOC },
	{ "goldencove",
	  "l1=4K:96:6:lru,2M:32:4:lru,1G:8:8:lru;l2=4K+2M:2048:16,1G:1024:8" POLICY,
	  "Intel Optimization Reference Manual, Golden Cove TLB table" UNDOC },
	{ "gracemont", "l1=4K+2M:64:64:lru;l2=4K+2M:2048:4" POLICY,
	  "Intel Optimization Reference Manual 248966, Gracemont (E-core): "
	  "64-entry L1 and 2048-entry L2 DTLB as recalled, not confirmed "
	  "against the manual here; ways and 1G handling assumed" UNDOC },
	{ "zen1", "l1=4K+2M+1G:64:64:lru;l2=4K+2M:1536:12:smash:pde" POLICY,
	  "AMD Software Optimization Guide 56305 (family 17h), 2.7: 64-entry "
	  "fully associative L1 DTLB, all sizes; L2 DTLB 1536 entries 12-way "
	  "holding 4K and 2M entries and PDEs, 1G smashed to 2M; no "
	  "partition by page size documented" UNDOC },
	{ "zen3", "l1=4K+2M+1G:64:64:lru;l2=4K+2M:2048:12:smash:pde" POLICY,
	  "AMD Software Optimization Guide 56665 (family 19h), 56305 (17h): "
	  "L2 DTLB 2048 entries 12-way holding 4K and 2M entries and PDEs, "
	  "1G smashed to 2M; no partition by page size documented" UNDOC },
	{ "zen4", "l1=4K+2M+1G:72:72:lru;l2=4K+2M:3072:12:smash:pde" POLICY,
	  "AMD Software Optimization Guide 57647 (Zen 4): L2 DTLB holds 4K "
	  "and 2M entries and PDEs as on Zen 3 (not confirmed here)" UNDOC },
	{ "zen5", "l1=4K+2M+1G:96:96:lru;l2=4K+2M:4096:16:pde" POLICY,
	  "AMD Software Optimization Guide 58455 (Zen 5) and Hot Chips 2024 "
	  "Zen 5: 96-entry L1 DTLB, all sizes; 4096-entry L2 DTLB for "
	  "everything but 1G, with PDEs as on Zen 3; 16 ways assumed" UNDOC },
	{ "neoverse-n1",
	  "l1=4K+64K+2M+512M:48:48:splinter:lru;"
	  "l2=4K+64K+2M+32M+512M+1G:1280:5"
	  POLICY,
	  "Arm Cortex-A76 TRM 100798, A5.2; N1 the same by secondary sources "
	  "(its TRM 100616 unread)" UNDOC },
	{ "cortex-a76",
	  "l1=4K+64K+2M+512M:48:48:splinter:lru;"
	  "l2=4K+64K+2M+32M+512M+1G:1280:5"
	  POLICY,
	  "Arm Cortex-A76 TRM 100798, A5.2 TLB organization" UNDOC },
	{ NULL, NULL, NULL },
};

/*
 * spec + POLICY into out, each array of its l1= level given ":lru" (the
 * L1 policy above): "l1=4K:64:4,2M:32:4;l2=..." becomes
 * "l1=4K:64:4:lru,2M:32:4:lru;l2=...;policy=random".
 */
static void l1_lru(char *out, size_t n, const char *spec)
{
	size_t o = 0;
	int in_l1 = 0;
	const char *s;

	for (s = spec; *s && o + 5 < n; s++) {
		if (!strncmp(s, "l1=", 3) && (s == spec || s[-1] == ';'))
			in_l1 = 1;
		if (in_l1 && (*s == ',' || *s == ';')) {
			o += snprintf(out + o, n - o, ":lru");
			in_l1 = *s == ',';
		}
		out[o++] = *s;
	}
	if (in_l1)
		o += snprintf(out + o, n - o, ":lru");
	snprintf(out + o, n - o, "%s", POLICY);
}

/* the geometry handed in (tlb_hand_geometry()); name "" if none */
static struct {
	char name[32], spec[256], source[300];
	int have;
} handed;

void tlb_hand_geometry(const char *name, const char *spec,
		       const char *source)
{
	snprintf(handed.name, sizeof(handed.name), "%s", name);
	/* a hardware report says nothing of replacement: the presets' */
	handed.have = !!spec;
	if (spec)
		l1_lru(handed.spec, sizeof(handed.spec), spec);
	snprintf(handed.source, sizeof(handed.source), "%s" UNDOC, source);
}

const char *tlb_spec(const char *name)
{
	int i;

	if (handed.name[0] && !strcmp(name, handed.name))
		return handed.have ? handed.spec : name;
	for (i = 0; tlb_presets[i].name; i++)
		if (!strcmp(tlb_presets[i].name, name))
			return tlb_presets[i].spec;
	return name;
}

enum { SZ_4K, SZ_64K, SZ_2M, SZ_32M, SZ_512M, SZ_1G };	/* size indices */

const unsigned long tlb_page_kb[TLB_NSIZES] = {
	4, 64, 2048, 32768, 524288, 1048576,
};

static const char *const size_names[TLB_NSIZES] = {
	"4K", "64K", "2M", "32M", "512M", "1G",
};

/* and a page-directory entry (SZ_PDE): one per 2 MB region */
static const int size_shift[TLB_NSIZES + 1] = { 12, 16, 21, 25, 29, 30, 21 };
#define SZ_PDE TLB_NSIZES

/* the index of the largest size no larger than page_kb (4K below 4 kB) */
static int size_index(unsigned long page_kb)
{
	int i = TLB_NSIZES - 1;

	while (i > 0 && tlb_page_kb[i] > page_kb)
		i--;
	return i;
}

static const char *const policy_names[] = {
	[TLB_LRU] = "lru", [TLB_PLRU] = "plru", [TLB_RANDOM] = "random",
};

static int policy_of(const char *s)
{
	int i;

	for (i = 0; i < 3; i++)
		if (!strcmp(s, policy_names[i]))
			return i;
	return -1;
}

static int parse_array(const char *s, struct tlb_array *a)
{
	char buf[64], *tok, *save = NULL;
	int field = 0, i;

	memset(a, 0, sizeof(*a));
	a->policy = -1;
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ":", &save); tok;
	     tok = strtok_r(NULL, ":", &save), field++) {
		if (field == 0) {
			char *sz, *s2 = NULL;

			for (sz = strtok_r(tok, "+", &s2); sz;
			     sz = strtok_r(NULL, "+", &s2)) {
				for (i = 0; i < TLB_NSIZES; i++)
					if (!strcmp(sz, size_names[i]))
						break;
				if (i == TLB_NSIZES)
					return -1;
				a->sizes |= 1u << i;
			}
		} else if (field == 1) {
			a->entries = strtoul(tok, NULL, 10);
		} else if (field == 2) {
			a->ways = strtoul(tok, NULL, 10);
		} else if (field == 3 && (!strcmp(tok, "splinter") ||
					   !strcmp(tok, "smash"))) {
			a->splinter = 1;
		} else if (field >= 3 && !a->pde && a->policy < 0 &&
			   !strcmp(tok, "pde")) {
			a->pde = 1;
		} else if (field >= 3 && a->policy < 0 && policy_of(tok) >= 0) {
			a->policy = policy_of(tok);
		} else {
			return -1;
		}
	}
	if (!a->sizes || !a->ways || a->ways > a->entries)
		return -1;
	/*
	 * Entries that are no multiple of the ways (Zen 3's 2048 entries,
	 * 12-way) leave the last set short: its ways are the remainder, so
	 * the capacity is the documented entries (set_ways()).
	 */
	a->sets = (a->entries + a->ways - 1) / a->ways;
	a->tag = calloc((size_t)a->sets * a->ways, sizeof(*a->tag));
	a->stamp = calloc((size_t)a->sets * a->ways, sizeof(*a->stamp));
	return a->tag && a->stamp ? 0 : -1;
}

/* the policy a spec default leaves an array with; plru's node bits */
static int set_policy(struct tlb_array *a, int dflt)
{
	if (a->policy < 0)
		a->policy = dflt;
	if (a->policy != TLB_PLRU)
		return 0;
	for (a->tree = 1; a->tree < a->ways; a->tree *= 2)
		;
	a->bits = calloc((size_t)a->sets * a->tree, 1);
	return a->bits ? 0 : -1;
}

/* name with every preset name among its items replaced by its spec */
static int expand(const char *name, char *out, size_t n)
{
	char buf[256], *item, *save = NULL;
	size_t o = 0;

	if (strlen(name) >= sizeof(buf))
		return -1;
	strcpy(buf, name);
	out[0] = 0;
	for (item = strtok_r(buf, ";", &save); item;
	     item = strtok_r(NULL, ";", &save)) {
		o += snprintf(out + o, o < n ? n - o : 0, "%s%s", o ? ";" : "",
			      tlb_spec(item));
		if (o >= n)
			return -1;
	}
	return 0;
}

/* one "l1=..." or "l2=..." item */
static int parse_level(struct tlb_model *m, char *lvl)
{
	struct tlb_array *arr = lvl[1] == '1' ? m->l1 : m->l2;
	int *n = lvl[1] == '1' ? &m->nl1 : &m->nl2;
	char *a, *save = NULL;

	for (a = strtok_r(lvl + 3, ",", &save); a;
	     a = strtok_r(NULL, ",", &save)) {
		if (*n == TLB_MAX_ARRAYS || parse_array(a, &arr[*n]))
			return -1;
		(*n)++;
	}
	return 0;
}

int tlb_init(struct tlb_model *m, const char *name)
{
	char buf[512], *item, *save = NULL;
	int i, dflt = TLB_LRU;

	memset(m, 0, sizeof(*m));
	m->rng = 0x9e3779b97f4a7c15ULL;	/* fixed: a run repeats exactly */
	if (expand(name, buf, sizeof(buf)))
		return -1;
	for (item = strtok_r(buf, ";", &save); item;
	     item = strtok_r(NULL, ";", &save)) {
		if (!strncmp(item, "l1=", 3) || !strncmp(item, "l2=", 3)) {
			if (parse_level(m, item))
				goto bad;
		} else if (!strncmp(item, "policy=", 7)) {
			dflt = policy_of(item + 7);
			if (dflt < 0)
				goto bad;
		} else {
			goto bad;
		}
	}
	m->policy = dflt;
	for (i = 0; i < m->nl1; i++)
		if (set_policy(&m->l1[i], dflt))
			goto bad;
	for (i = 0; i < m->nl2; i++)
		if (set_policy(&m->l2[i], dflt))
			goto bad;
	if (m->nl1)
		return 0;
bad:
	tlb_free(m);
	return -1;
}

void tlb_free(struct tlb_model *m)
{
	int i;

	for (i = 0; i < TLB_MAX_ARRAYS; i++) {
		free(m->l1[i].tag);
		free(m->l1[i].stamp);
		free(m->l1[i].bits);
		free(m->l2[i].tag);
		free(m->l2[i].stamp);
		free(m->l2[i].bits);
	}
	memset(m, 0, sizeof(*m));
}

void tlb_reset_counts(struct tlb_model *m)
{
	m->accesses = m->l1_misses = m->walks = 0;
}

/* the size index an array caches a page of size index sz as, or -1 */
static int held_as(const struct tlb_array *a, int sz)
{
	int s;

	if (a->sizes & (1u << sz))
		return sz;
	for (s = sz - 1; a->splinter && s >= 0; s--)
		if (a->sizes & (1u << s))
			return s;
	return -1;
}

/*
 * The index of the array of level arr[0..n) that caches a page of size
 * index sz, and as what size (*eff): the first that holds sz, else the
 * splintering one with the largest size below it (tlbmodel.h); -1 (and
 * *eff -1) if none caches it.
 */
static int holder(const struct tlb_array *arr, int n, int sz, int *eff)
{
	int i, s, best = -1;

	*eff = -1;
	for (i = 0; i < n; i++) {
		s = held_as(&arr[i], sz);
		if (s == sz) {
			*eff = s;
			return i;
		}
		if (s > *eff) {
			*eff = s;
			best = i;
		}
	}
	return best;
}

int tlb_holder(const struct tlb_array *arr, int n, unsigned long page_kb,
	       int *eff)
{
	return holder(arr, n, size_index(page_kb), eff);
}

const char *tlb_size_name(int sz)
{
	return size_names[sz];
}

const char *tlb_source(const char *name)
{
	int i;

	if (handed.name[0] && !strcmp(name, handed.name))
		return handed.source;
	for (i = 0; tlb_presets[i].name; i++)
		if (!strcmp(tlb_presets[i].name, name))
			return tlb_presets[i].source;
	return "custom";
}

/* the ways of one set: all but in a short last set (parse_array()) */
static unsigned set_ways(const struct tlb_array *a, unsigned set)
{
	return set + 1 < a->sets ? a->ways :
	       a->entries - (a->sets - 1) * a->ways;
}

/* plru: turns the bits on way w's path away from it */
static void plru_touch(const struct tlb_array *a, uint8_t *bits, unsigned w)
{
	unsigned node = a->tree + w;

	for (; node > 1; node /= 2)
		bits[node / 2] = !(node & 1);	/* 1: evict from the right */
}

/* plru: follows the bits, never into a subtree of padding (nw ways) */
static unsigned plru_victim(const struct tlb_array *a, const uint8_t *bits,
			    unsigned nw)
{
	unsigned node = 1, span = a->tree, lo = 0;

	while (span > 1) {
		span /= 2;
		if (bits[node] && lo + span < nw) {
			lo += span;
			node = 2 * node + 1;
		} else {
			node = 2 * node;
		}
	}
	return lo;
}

/* the way of a full set of nw ways to refill */
static unsigned victim(struct tlb_model *m, const struct tlb_array *a,
		       const uint64_t *t, const uint64_t *st,
		       const uint8_t *bits, unsigned nw)
{
	unsigned w, v = 0;

	for (w = 0; w < nw; w++)
		if (!t[w])
			return w;		/* an empty way first */
	switch (a->policy) {
	case TLB_PLRU:
		return plru_victim(a, bits, nw);
	case TLB_RANDOM:
		/* one xorshift64 stream per model, from tlb_init()'s seed */
		m->rng ^= m->rng << 13;
		m->rng ^= m->rng >> 7;
		m->rng ^= m->rng << 17;
		return m->rng % nw;
	}
	for (w = 1; w < nw; w++)
		if (st[w] < st[v])
			v = w;
	return v;
}

/* looks up (and on a miss, fills) va in a; returns 1 on a hit */
static int lookup(struct tlb_model *m, struct tlb_array *a, uint64_t va,
		  int sz, int fill)
{
	uint64_t vpn = va >> size_shift[sz];
	uint64_t tag = (vpn << 3 | (uint64_t)sz) + 1;	/* never 0 */
	unsigned set = vpn % a->sets, nw = set_ways(a, set), w;
	int hit;
	uint64_t *t = a->tag + (size_t)set * a->ways;
	uint64_t *st = a->stamp + (size_t)set * a->ways;
	uint8_t *bits = a->bits ? a->bits + (size_t)set * a->tree : NULL;

	m->clock++;
	for (w = 0; w < nw && t[w] != tag; w++)
		;
	hit = w < nw;
	if (!hit) {
		if (!fill)
			return 0;
		w = victim(m, a, t, st, bits, nw);
		t[w] = tag;
	}
	st[w] = m->clock;
	if (bits)
		plru_touch(a, bits, w);
	return hit;
}

void tlb_access(struct tlb_model *m, uint64_t va, unsigned long page_kb)
{
	int sz = size_index(page_kb), e1, e2;
	int i1 = holder(m->l1, m->nl1, sz, &e1);
	int i2 = holder(m->l2, m->nl2, sz, &e2);
	struct tlb_array *a1 = i1 < 0 ? NULL : &m->l1[i1];
	struct tlb_array *a2 = i2 < 0 ? NULL : &m->l2[i2];

	m->accesses++;
	if (a1 && lookup(m, a1, va, e1, 0))
		return;
	m->l1_misses++;
	if (!a2 || !lookup(m, a2, va, e2, 0)) {
		m->walks++;
		/* the walk reads the PDE first: it is older than the PTE */
		if (a2 && a2->pde && sz == SZ_4K)
			lookup(m, a2, va, SZ_PDE, 1);
		if (a2)
			lookup(m, a2, va, e2, 1);
	}
	if (a1)
		lookup(m, a1, va, e1, 1);
}

/* one level's arrays as a JSON list; returns the length written */
static size_t level_json(const struct tlb_array *arr, int n, char *buf,
			 size_t len)
{
	size_t o = 0;
	int i, b;

	o += snprintf(buf + o, o < len ? len - o : 0, "[");
	for (i = 0; i < n; i++) {
		const struct tlb_array *a = &arr[i];
		const char *sep = "";

		o += snprintf(buf + o, o < len ? len - o : 0,
			      "%s{\"page_sizes\": [", i ? ", " : "");
		for (b = 0; b < TLB_NSIZES; b++)
			if (a->sizes & (1u << b)) {
				o += snprintf(buf + o, o < len ? len - o : 0,
					      "%s\"%s\"", sep, size_names[b]);
				sep = ", ";
			}
		o += snprintf(buf + o, o < len ? len - o : 0,
			      "], \"entries\": %u, \"ways\": %u, \"sets\": %u, "
			      "\"policy\": \"%s\", \"1g_as_2m\": %s, "
			      "\"pde\": %s}",
			      a->entries, a->ways, a->sets,
			      policy_names[a->policy],
			      held_as(a, SZ_1G) == SZ_2M ? "true" : "false",
			      a->pde ? "true" : "false");
	}
	o += snprintf(buf + o, o < len ? len - o : 0, "]");
	return o;
}

/* {"4K": "4K", "32M": "2M", "64K": null, ...}: what caches each size */
static size_t held_json(const struct tlb_array *arr, int n, char *buf,
			size_t len)
{
	size_t o = 0;
	int sz, eff;

	for (sz = 0; sz < TLB_NSIZES; sz++) {
		holder(arr, n, sz, &eff);
		o += snprintf(buf + o, o < len ? len - o : 0, "%s\"%s\": ",
			      sz ? ", " : "{", size_names[sz]);
		if (eff < 0)
			o += snprintf(buf + o, o < len ? len - o : 0, "null");
		else
			o += snprintf(buf + o, o < len ? len - o : 0, "\"%s\"",
				      size_names[eff]);
	}
	o += snprintf(buf + o, o < len ? len - o : 0, "}");
	return o;
}

int tlb_geometry_json(const struct tlb_model *m, const char *name,
		      char *buf, size_t n)
{
	const char *source = tlb_source(name);
	char spec[512];
	size_t o = 0;
	/* names and specs hold no characters that need JSON escapes */
	if (strpbrk(name, "\"\\") || expand(name, spec, sizeof(spec)))
		return -1;
	o += snprintf(buf + o, o < n ? n - o : 0,
		      "{\"name\": \"%s\", \"spec\": \"%s\", \"source\": \"%s\", "
		      "\"l1\": ", name, spec, source);
	o += level_json(m->l1, m->nl1, buf + o, o < n ? n - o : 0);
	o += snprintf(buf + o, o < n ? n - o : 0, ", \"l2\": ");
	o += level_json(m->l2, m->nl2, buf + o, o < n ? n - o : 0);
	o += snprintf(buf + o, o < n ? n - o : 0, ", \"held_as\": {\"l1\": ");
	o += held_json(m->l1, m->nl1, buf + o, o < n ? n - o : 0);
	o += snprintf(buf + o, o < n ? n - o : 0, ", \"l2\": ");
	o += held_json(m->l2, m->nl2, buf + o, o < n ? n - o : 0);
	o += snprintf(buf + o, o < n ? n - o : 0,
		      "}, \"default_policy\": \"%s\", "
		      "\"counts\": \"model, not measured\", "
		      "\"leaves_out\": \"%s\"}", policy_names[m->policy],
		      TLB_LEAVES_OUT);
	return o < n ? 0 : -1;
}
