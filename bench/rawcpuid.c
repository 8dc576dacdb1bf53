// SPDX-License-Identifier: GPL-2.0
/*
 * rawcpuid.c - the CPUID leaves this suite reads, from the instruction or a
 * file of recorded ones, and the CPU they name; see rawcpuid.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rawcpuid.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
static void cpuid_insn(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	__cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}
#define HAVE_CPUID 1
#else
#define HAVE_CPUID 0
static void cpuid_insn(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	(void)leaf;
	(void)sub;
	memset(r, 0, 4 * sizeof(r[0]));
}
#endif

const uint32_t *cpuid_leaf(const struct cpuid_leaves *c, uint32_t l,
			   uint32_t s)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (c->l[i].leaf == l && c->l[i].sub == s)
			return c->l[i].r;
	return NULL;
}

static void add(struct cpuid_leaves *c, uint32_t l, uint32_t s,
		const uint32_t r[4])
{
	if (c->n == CPUID_MAX_LEAVES)
		return;
	c->l[c->n].leaf = l;
	c->l[c->n].sub = s;
	memcpy(c->l[c->n].r, r, 4 * sizeof(r[0]));
	c->n++;
}

static void from_insn(struct cpuid_leaves *c)
{
	uint32_t r[4], max, xmax, s, nsub;

	cpuid_insn(0, 0, r);
	max = r[EAX];
	add(c, 0, 0, r);
	cpuid_insn(1, 0, r);
	add(c, 1, 0, r);
	if (r[ECX] >> 31) {
		cpuid_insn(0x40000000, 0, r);
		add(c, 0x40000000, 0, r);
	}
	if (max >= 0x18) {
		cpuid_insn(0x18, 0, r);
		nsub = r[EAX];
		for (s = 0; s <= nsub && s < 16; s++) {
			cpuid_insn(0x18, s, r);
			add(c, 0x18, s, r);
		}
	}
	cpuid_insn(0x80000000, 0, r);
	xmax = r[EAX];
	add(c, 0x80000000, 0, r);
	for (s = 0x80000005; s <= 0x80000019; s++)
		if (xmax >= s && (s <= 0x80000006 || s == 0x80000019)) {
			cpuid_insn(s, 0, r);
			add(c, s, 0, r);
		}
}

static int from_file(struct cpuid_leaves *c, const char *path, char *why,
		     size_t n)
{
	FILE *f = fopen(path, "r");
	char line[256];
	uint32_t l, s, r[4];

	if (!f)
		return snprintf(why, n, "BENCH_CPUID_FILE %s: cannot open it; "
				"name a file of recorded leaves or unset it",
				path), -1;
	while (fgets(line, sizeof(line), f))
		if (line[0] != '#' && sscanf(line, "%x %x %x %x %x %x", &l, &s,
					     &r[0], &r[1], &r[2], &r[3]) == 6)
			add(c, l, s, r);
	fclose(f);
	return 0;
}

/* vendor, family, model, stepping (SDM's display rule) and hypervisor */
static void identify(struct cpuid_leaves *c)
{
	const uint32_t *r0 = cpuid_leaf(c, 0, 0), *r1 = cpuid_leaf(c, 1, 0);
	const uint32_t *hv = cpuid_leaf(c, 0x40000000, 0);
	unsigned base;

	if (r0) {
		memcpy(c->vendor, &r0[EBX], 4);
		memcpy(c->vendor + 4, &r0[EDX], 4);
		memcpy(c->vendor + 8, &r0[ECX], 4);
	}
	if (!r1)
		return;
	base = (r1[EAX] >> 8) & 0xf;
	c->family = base + (base == 0xf ? (r1[EAX] >> 20) & 0xff : 0);
	c->model = (r1[EAX] >> 4) & 0xf;
	if (base == 0x6 || base == 0xf)
		c->model |= ((r1[EAX] >> 16) & 0xf) << 4;
	c->stepping = r1[EAX] & 0xf;
	if ((r1[ECX] >> 31) && hv) {
		memcpy(c->hypervisor, &hv[EBX], 4);
		memcpy(c->hypervisor + 4, &hv[ECX], 4);
		memcpy(c->hypervisor + 8, &hv[EDX], 4);
	} else if (r1[ECX] >> 31) {
		strcpy(c->hypervisor, "unnamed");
	}
}

int cpuid_load(struct cpuid_leaves *c, char *why, size_t n)
{
	const char *path = getenv("BENCH_CPUID_FILE");

	memset(c, 0, sizeof(*c));
	if (path && *path) {
		snprintf(c->from, sizeof(c->from), "%s", path);
		if (from_file(c, path, why, n))
			return -1;
	} else if (HAVE_CPUID) {
		snprintf(c->from, sizeof(c->from), "the cpuid instruction");
		from_insn(c);
	} else {
		return snprintf(why, n, "no CPUID on this architecture"), -1;
	}
	identify(c);
	return 0;
}

void cpuid_dump(const struct cpuid_leaves *c)
{
	int i;

	printf("# LEAF SUBLEAF EAX EBX ECX EDX, from %s\n", c->from);
	for (i = 0; i < c->n; i++)
		printf("%08x %08x %08x %08x %08x %08x\n", c->l[i].leaf,
		       c->l[i].sub, c->l[i].r[0], c->l[i].r[1], c->l[i].r[2],
		       c->l[i].r[3]);
}
