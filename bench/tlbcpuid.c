// SPDX-License-Identifier: GPL-2.0
/*
 * tlbcpuid.c - the data-TLB geometry from CPUID, its cross-check against
 * the model, and --model auto; see tlbcpuid.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rawcpuid.h"
#include "rows.h"
#include "tlbcpuid.h"
#include "tlbmodel.h"

static const char *const level_names[2] = { "l1", "l2" };
static const char *const sz_names[3] = { "4K", "2M", "1G" };
static const unsigned long sz_kb[3] = { 4, 2048, 1048576 };

/* -- decoding ------------------------------------------------------------ */

/* AMD's L2/1G associativity code (APM vol. 3, CPUID Fn8000_0006); 0: none */
static unsigned amd_ways(unsigned code, unsigned entries)
{
	static const unsigned w[16] = { 0, 1, 2, 3, 4, 0, 8, 0, 16, 0, 32, 48,
					64, 96, 128, 0 };

	if (code == 0xf)
		return entries;		/* fully associative */
	return code == 5 ? 6 : w[code];
}

/* one size's L1 entry from 0x80000005: assoc in [31:24], entries [23:16] */
static void amd_l1(struct tlb_sizes *t, int sz, uint32_t r)
{
	unsigned e = (r >> 16) & 0xff, a = r >> 24;

	if (!e || !a)
		return;
	t->entries[0][sz] = e;
	t->ways[0][sz] = a == 0xff ? e : a;
}

/* one size's entry of 0x80000006/0x80000019: code [31:28], entries [27:16] */
static void amd_l2(struct tlb_sizes *t, int lvl, int sz, uint32_t r)
{
	unsigned e = (r >> 16) & 0xfff, w = amd_ways(r >> 28, e);

	if (!e || !w)
		return;
	t->entries[lvl][sz] = e;
	t->ways[lvl][sz] = w;
}

static void amd_geo(const struct cpuid_leaves *c, struct tlb_cpuid_geo *g)
{
	const uint32_t *l5 = cpuid_leaf(c, 0x80000005, 0);
	const uint32_t *l6 = cpuid_leaf(c, 0x80000006, 0);
	const uint32_t *l19 = cpuid_leaf(c, 0x80000019, 0);

	if (l5) {
		amd_l1(&g->t, 0, l5[EBX]);
		amd_l1(&g->t, 1, l5[EAX]);
	}
	if (l6) {
		amd_l2(&g->t, 1, 0, l6[EBX]);
		amd_l2(&g->t, 1, 1, l6[EAX]);
	}
	if (l19) {
		amd_l2(&g->t, 0, 2, l19[EAX]);
		amd_l2(&g->t, 1, 2, l19[EBX]);
	}
	snprintf(g->leaves, sizeof(g->leaves), "0x80000005, 0x80000006, "
		 "0x80000019");
}

/* appends one array to a level of the spec being built */
static void spec_array(char lv[2][128], int lvl, const char *sizes,
		       unsigned entries, unsigned ways)
{
	size_t o = strlen(lv[lvl]);

	snprintf(lv[lvl] + o, sizeof(lv[lvl]) - o, "%s%s:%u:%u", o ? "," : "",
		 sizes, entries, ways);
}

/* Intel leaf 0x18: the data, unified and load-only structures */
static void intel_geo(const struct cpuid_leaves *c, struct tlb_cpuid_geo *g,
		      char lv[2][128])
{
	const uint32_t *r;
	uint32_t s;

	for (s = 0; (r = cpuid_leaf(c, 0x18, s)); s++) {
		unsigned type = r[EDX] & 0x1f, lvl = (r[EDX] >> 5) & 7;
		unsigned ways = r[EBX] >> 16, e = ways * r[ECX], k;
		char sizes[16] = "";

		if ((type != 1 && type != 3 && type != 4) || lvl < 1 ||
		    lvl > 2 || !e)
			continue;
		if (r[EDX] & 0x100)
			ways = e;	/* fully associative */
		for (k = 0; k < 3; k++) {
			/* bit 0: 4K, 1: 2M, 2: 4M (a 2M entry here), 3: 1G */
			unsigned bit = k == 0 ? 1 : k == 1 ? 6 : 8;

			if (!(r[EBX] & bit))
				continue;
			g->t.entries[lvl - 1][k] = e;
			g->t.ways[lvl - 1][k] = ways;
			snprintf(sizes + strlen(sizes), sizeof(sizes) -
				 strlen(sizes), "%s%s", sizes[0] ? "+" : "",
				 sz_names[k]);
		}
		if (sizes[0])
			spec_array(lv, lvl - 1, sizes, e, ways);
	}
	snprintf(g->leaves, sizeof(g->leaves), "0x18");
}

void tlb_cpuid_geometry(const struct cpuid_leaves *c,
			struct tlb_cpuid_geo *g)
{
	char lv[2][128] = { "", "" };
	int l, k;

	memset(g, 0, sizeof(*g));
	if (!strcmp(c->vendor, "GenuineIntel") && cpuid_leaf(c, 0x18, 0)) {
		intel_geo(c, g, lv);
	} else if (!strcmp(c->vendor, "AuthenticAMD") ||
		   !strcmp(c->vendor, "HygonGenuine")) {
		amd_geo(c, g);
		/* entries per size; whether sizes share an array is unknown */
		for (l = 0; l < 2; l++)
			for (k = 0; k < 3; k++)
				if (g->t.entries[l][k])
					spec_array(lv, l, sz_names[k],
						   g->t.entries[l][k],
						   g->t.ways[l][k]);
	}
	for (l = 0; l < 2; l++)
		for (k = 0; k < 3; k++)
			g->have |= g->t.entries[l][k] != 0;
	if (!g->have) {
		snprintf(g->why, sizeof(g->why), "%s reports no data TLB in "
			 "CPUID leaf 0x18 or 0x80000005/6/19",
			 c->vendor[0] ? c->vendor : "this CPU");
		return;
	}
	if (lv[0][0])
		snprintf(g->spec, sizeof(g->spec), "l1=%s%s%s", lv[0],
			 lv[1][0] ? ";l2=" : "", lv[1]);
}

int tlb_model_sizes(const char *name, struct tlb_sizes *t)
{
	struct tlb_model m;
	int l, k, i, eff;

	memset(t, 0, sizeof(*t));
	if (tlb_init_host(&m, name))
		return -1;
	for (l = 0; l < 2; l++)
		for (k = 0; k < 3; k++) {
			const struct tlb_array *a = l ? m.l2 : m.l1;

			i = tlb_holder(a, l ? m.nl2 : m.nl1, sz_kb[k], &eff);
			if (i < 0 || tlb_page_kb[eff] != sz_kb[k])
				continue;
			t->entries[l][k] = a[i].entries;
			t->ways[l][k] = a[i].ways;
		}
	tlb_free(&m);
	return 0;
}

/* -- auto, and the report --------------------------------------------------- */

static struct cpuid_leaves host;
static struct tlb_cpuid_geo host_geo;
static int host_state;		/* 0 unread, 1 read, -1 unreadable */
static char host_why[300];

/* tlb_source() of TLB_CPUID_MODEL */
#define CPUID_SOURCE "CPUID leaves of this CPU (benchtool tlbgeometry)"

/* the leaves, read once, and their geometry handed to the model */
static const struct cpuid_leaves *host_cpuid(void)
{
	if (!host_state) {
		host_state = cpuid_load(&host, host_why, sizeof(host_why))
			     ? -1 : 1;
		if (host_state > 0)
			tlb_cpuid_geometry(&host, &host_geo);
		tlb_hand_geometry(TLB_CPUID_MODEL, host_geo.spec[0] ?
				  host_geo.spec : NULL, CPUID_SOURCE);
	}
	return host_state > 0 ? &host : NULL;
}

int tlb_init_host(struct tlb_model *m, const char *name)
{
	host_cpuid();
	return tlb_init(m, name);
}

const char *tlb_auto_model(const char *preset, const char *cpu, char *why,
			   size_t n)
{
	const struct cpuid_leaves *c = host_cpuid();

	if (preset) {
		snprintf(why, n, "auto: preset %s fits %s", preset, cpu);
		return preset;
	}
	if (c && host_geo.spec[0] && !c->hypervisor[0]) {
		snprintf(why, n, "auto: no preset fits %s; the geometry its "
			 "CPUID leaves %s report (bare metal), replacement "
			 "undocumented; modelled as seeded random", cpu,
			 host_geo.leaves);
		return TLB_CPUID_MODEL;
	}
	snprintf(why, n, "auto: no preset fits %s, and %s%s%s%s", cpu,
		 !c ? host_why : !host_geo.have ? host_geo.why :
		 c->hypervisor[0] ? "its CPUID TLB leaves are not used on "
		 "their own" : "its CPUID TLB leaves give no model spec",
		 c && c->hypervisor[0] ? " (under hypervisor " : "",
		 c && c->hypervisor[0] ? c->hypervisor : "",
		 c && c->hypervisor[0] ? ", which may rewrite or hide them)" :
		 "");
	return TLB_NO_MODEL;
}

/* {"4K": {"entries": N, "ways": W}, ...} of one level, or null */
static size_t sizes_json(const struct tlb_sizes *t, int lvl, char *b,
			 size_t n)
{
	size_t o = 0;
	int k;

	for (k = 0; k < 3; k++)
		if (t->entries[lvl][k])
			o += snprintf(b + o, o < n ? n - o : 0,
				      "%s\"%s\": {\"entries\": %u, \"ways\": "
				      "%u}", o ? ", " : "{", sz_names[k],
				      t->entries[lvl][k], t->ways[lvl][k]);
	o += snprintf(b + o, o < n ? n - o : 0, "%s", o ? "}" : "{}");
	return o;
}

/* the model's per-size table: entries of the holder, held as which size */
static size_t levels_json(const char *model, char *b, size_t n)
{
	struct tlb_model m;
	size_t o = 0;
	int l, k, i, eff;

	if (tlb_init_host(&m, model))
		return snprintf(b, n, "null");
	for (l = 0; l < 2; l++) {
		const struct tlb_array *a = l ? m.l2 : m.l1;
		const char *sep = "";

		o += snprintf(b + o, o < n ? n - o : 0, "%s\"%s\": {",
			      l ? ", " : "{", level_names[l]);
		for (k = 0; k < 3; k++) {
			i = tlb_holder(a, l ? m.nl2 : m.nl1, sz_kb[k], &eff);
			if (i < 0)
				continue;
			/* reach: what the entries cover, at the size held */
			o += snprintf(b + o, o < n ? n - o : 0, "%s\"%s\": "
				      "{\"entries\": %u, \"ways\": %u, "
				      "\"held_as\": \"%s\", \"reach_bytes\": "
				      "%llu}", sep, sz_names[k], a[i].entries,
				      a[i].ways, tlb_size_name(eff),
				      (unsigned long long)a[i].entries *
				      tlb_page_kb[eff] * 1024);
			sep = ", ";
		}
		o += snprintf(b + o, o < n ? n - o : 0, "}");
	}
	tlb_free(&m);
	return o + snprintf(b + o, o < n ? n - o : 0, "}");
}

/* "l2 4K: CPUID 128 entries, model 4096" for every size they differ on */
static size_t disagreements(const char *model, const struct tlb_cpuid_geo *g,
			    char *b, size_t n)
{
	struct tlb_sizes t;
	size_t o = 0;
	int l, k;

	o += snprintf(b, n, "[");
	if (g->have && !tlb_model_sizes(model, &t))
		for (l = 0; l < 2; l++)
			for (k = 0; k < 3; k++)
				if (t.entries[l][k] != g->t.entries[l][k])
					o += snprintf(b + o, o < n ? n - o : 0,
						      "%s\"%s %s: CPUID %u "
						      "entries, model %u\"",
						      o > 1 ? ", " : "",
						      level_names[l],
						      sz_names[k],
						      g->t.entries[l][k],
						      t.entries[l][k]);
	return o + snprintf(b + o, o < n ? n - o : 0, "]");
}

#define NOTE "hypervisors may rewrite these leaves; under one they are " \
	"cross-checked, never used on their own"

/* "cpu": {...}, "cpuid": {...}: what the leaves say */
static size_t cpuid_json(const char *model, char *b, size_t n)
{
	const struct cpuid_leaves *c = host_cpuid();
	char e[2][400], t[2][300], d[600];
	size_t o;

	if (!c) {
		json_str(e[0], sizeof(e[0]), host_why);
		return snprintf(b, n, "\"cpu\": null, \"cpuid\": {\"levels\": "
				"null, \"why\": %s}, \"disagreements\": []",
				e[0]);
	}
	json_str(e[0], sizeof(e[0]), c->from);
	json_str(e[1], sizeof(e[1]), host_geo.why);
	sizes_json(&host_geo.t, 0, t[0], sizeof(t[0]));
	sizes_json(&host_geo.t, 1, t[1], sizeof(t[1]));
	disagreements(model, &host_geo, d, sizeof(d));
	o = snprintf(b, n, "\"cpu\": {\"vendor\": \"%s\", \"family\": %u, "
		     "\"model\": %u, \"stepping\": %u, \"hypervisor\": %s%s%s, "
		     "\"from\": %s}, ", c->vendor, c->family, c->model,
		     c->stepping, c->hypervisor[0] ? "\"" : "",
		     c->hypervisor[0] ? c->hypervisor : "null",
		     c->hypervisor[0] ? "\"" : "", e[0]);
	if (!host_geo.have)
		return o + snprintf(b + o, o < n ? n - o : 0, "\"cpuid\": "
				    "{\"levels\": null, \"why\": %s, \"note\": "
				    "\"%s\"}, \"disagreements\": []", e[1],
				    NOTE);
	return o + snprintf(b + o, o < n ? n - o : 0, "\"cpuid\": {\"leaves\": "
			    "\"%s\", \"levels\": {\"l1\": %s, \"l2\": %s}, "
			    "\"spec\": \"%s\", \"note\": \"%s\"}, "
			    "\"disagreements\": %s", host_geo.leaves, t[0], t[1],
			    host_geo.spec, NOTE, d);
}

int tlb_report_json(const char *model, const char *why, char *buf, size_t n)
{
	int none = !strcmp(model, TLB_NO_MODEL);
	char w[600], geo[4096], lv[1024];
	struct tlb_model m;
	size_t o;

	json_str(w, sizeof(w), why ? why : "");
	strcpy(geo, "null");
	if (!none && !tlb_init_host(&m, model)) {
		tlb_geometry_json(&m, model, geo, sizeof(geo));
		tlb_free(&m);
	} else if (!none) {
		return -1;
	}
	levels_json(model, lv, sizeof(lv));
	o = snprintf(buf, n, "{\"model\": %s%s%s, \"why\": %s, \"levels\": %s, "
		     "\"geometry\": %s, \"source\": ", none ? "" : "\"",
		     none ? "null" : model, none ? "" : "\"", w,
		     none ? "null" : lv, geo);
	o += snprintf(buf + o, o < n ? n - o : 0, "\"%s\", ", none ? "" :
		      tlb_source(model));
	o += cpuid_json(model, buf + o, o < n ? n - o : 0);
	o += snprintf(buf + o, o < n ? n - o : 0, "}");
	return o < n ? 0 : -1;
}

void tlb_emit_model_meta(const char *model, const char *why)
{
	char buf[8192], w[600], cj[3000];
	struct tlb_model m;

	json_str(w, sizeof(w), why ? why : "");
	if (!strcmp(model, TLB_NO_MODEL) || tlb_init_host(&m, model)) {
		printf("@meta tlb_geometry {\"name\": null, \"why\": %s}\n", w);
	} else {
		if (!tlb_geometry_json(&m, model, buf, sizeof(buf)))
			printf("@meta tlb_geometry %.*s, \"why\": %s}\n",
			       (int)strlen(buf) - 1, buf, w);
		tlb_free(&m);
	}
	cpuid_json(model, cj, sizeof(cj));
	printf("@meta tlb_cpuid {%s}\n", cj);
}
