// SPDX-License-Identifier: GPL-2.0
/*
 * counters.c - the counter group.
 *
 * Generic events: cycles, instructions, dTLB-load-misses and
 * dTLB-store-misses (PERF_TYPE_HW_CACHE, DTLB read/write miss), software
 * page-faults.  Page walks have no generic event, so a raw event is chosen
 * by CPU:
 *   Intel Skylake .. Ice Lake/Tiger Lake (family 6): DTLB_LOAD_MISSES.
 *     WALK_COMPLETED, event 0x08 umask 0x0e (Intel SDM vol. 3B, perfmon
 *     event tables for Skylake) -> raw 0x0e08.
 *   Intel Golden Cove and later P-cores (Alder Lake, Sapphire Rapids):
 *     DTLB_LOAD_MISSES.WALK_COMPLETED moved to event 0x12 umask 0x0e
 *     -> raw 0x0e12.
 *   AMD Zen 2/3/4/5 (family 0x17/0x19/0x1a): PMCx045 LsL1DTlbMiss with the
 *     unit mask bits 7:4 (L1 DTLB miss that also missed the L2 DTLB, i.e.
 *     a table walk; perf's ls_l1_d_tlb_miss.all_l2_miss, AMD PPR for
 *     family 19h) -> raw 0xf045.
 * Anything else leaves the walks column empty with the reason stated.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "counters.h"
#include "runner.h"

struct ev_desc {
	uint32_t type;
	uint64_t config;
	const char *name;
};

static long perf_open(struct perf_event_attr *a, int group)
{
	return syscall(SYS_perf_event_open, a, 0, -1, group, 0);
}

/* vendor, family, model from /proc/cpuinfo; returns 0 when found */
static int cpu_id(char *vendor, size_t n, int *family, int *model)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");
	int got = 0;

	*family = *model = -1;
	vendor[0] = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && got < 3) {
		if (!strncmp(line, "vendor_id", 9)) {
			sscanf(strchr(line, ':') + 1, " %63s", vendor);
			got++;
		} else if (!strncmp(line, "cpu family", 10)) {
			sscanf(strchr(line, ':') + 1, "%d", family);
			got++;
		} else if (!strncmp(line, "model\t", 6)) {
			sscanf(strchr(line, ':') + 1, "%d", model);
			got++;
		}
	}
	fclose(f);
	(void)n;
	return got == 3 ? 0 : -1;
}

/* fills *d with the page-walk event; returns 0, or -1 with why in reason */
static int walk_event(struct ev_desc *d, char *reason, size_t n)
{
	static const int skl[] = { 0x4e, 0x5e, 0x55, 0x8e, 0x9e, 0xa5, 0xa6,
				   0x66, 0x6a, 0x6c, 0x7d, 0x7e, 0x8c, 0x8d };
	static const int glc[] = { 0x97, 0x9a, 0xb7, 0xba, 0xbf, 0x8f, 0xcf,
				   0xaa, 0xac, 0xad, 0xae, 0xc5, 0xc6 };
	char vendor[64];
	int fam, model;
	size_t i;

	d->type = PERF_TYPE_RAW;
	if (cpu_id(vendor, sizeof(vendor), &fam, &model)) {
		snprintf(reason, n, "cannot identify the CPU from /proc/cpuinfo");
		return -1;
	}
	if (!strcmp(vendor, "GenuineIntel") && fam == 6) {
		for (i = 0; i < sizeof(skl) / sizeof(skl[0]); i++)
			if (model == skl[i]) {
				d->config = 0x0e08;
				d->name = "DTLB_LOAD_MISSES.WALK_COMPLETED";
				return 0;
			}
		for (i = 0; i < sizeof(glc) / sizeof(glc[0]); i++)
			if (model == glc[i]) {
				d->config = 0x0e12;
				d->name = "DTLB_LOAD_MISSES.WALK_COMPLETED";
				return 0;
			}
	}
	if (!strcmp(vendor, "AuthenticAMD") &&
	    (fam == 0x17 || fam == 0x19 || fam == 0x1a)) {
		d->config = 0xf045;
		d->name = "ls_l1_d_tlb_miss.all_l2_miss";
		return 0;
	}
	snprintf(reason, n, "no page-walk event known for %s family %d model %d",
		 vendor, fam, model);
	return -1;
}

void counters_open(struct counters *c)
{
	struct ev_desc ev[EV_NR] = {
		[EV_CYCLES] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
				"cycles" },
		[EV_INSTRUCTIONS] = { PERF_TYPE_HARDWARE,
				      PERF_COUNT_HW_INSTRUCTIONS,
				      "instructions" },
		[EV_L1_DTLB_MISS] = { PERF_TYPE_HW_CACHE,
			PERF_COUNT_HW_CACHE_DTLB |
			(PERF_COUNT_HW_CACHE_OP_READ << 8) |
			(PERF_COUNT_HW_CACHE_RESULT_MISS << 16),
			"dTLB-load-misses" },
		[EV_PAGE_FAULTS] = { PERF_TYPE_SOFTWARE,
				     PERF_COUNT_SW_PAGE_FAULTS, "page-faults" },
	};
	int i, have_walk;

	have_walk = !walk_event(&ev[EV_WALK], c->reason[EV_WALK],
				sizeof(c->reason[0]));
	if (!have_walk)
		ev[EV_WALK].name = "page-walks";
	c->leader = -1;
	for (i = 0; i < EV_NR; i++) {
		struct perf_event_attr a;
		long fd;

		c->fd[i] = -1;
		snprintf(c->name[i], sizeof(c->name[i]), "%s", ev[i].name);
		if (i == EV_WALK && !have_walk)
			continue;
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = ev[i].type;
		a.config = ev[i].config;
		a.disabled = c->leader < 0;
		a.exclude_kernel = 0;
		a.exclude_hv = 1;
		a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
				PERF_FORMAT_TOTAL_TIME_ENABLED |
				PERF_FORMAT_TOTAL_TIME_RUNNING;
		fd = perf_open(&a, c->leader);
		if (fd < 0 && errno == EACCES) {
			/* paranoid > 1 forbids kernel counting: user only */
			a.exclude_kernel = 1;
			fd = perf_open(&a, c->leader);
		}
		if (fd < 0) {
			int e = errno;

			snprintf(c->reason[i], sizeof(c->reason[i]),
				 "perf_event_open: %s%s", strerror(e),
				 (e == ENOENT || e == EOPNOTSUPP || e == EINVAL) ?
				 " (no such counter on this CPU/hypervisor)" :
				 "");
			continue;
		}
		c->fd[i] = fd;
		if (c->leader < 0)
			c->leader = fd;
		if (ioctl(fd, PERF_EVENT_IOC_ID, &c->id[i]) < 0)
			c->id[i] = 0;
		snprintf(c->reason[i], sizeof(c->reason[i]), "%s",
			 a.exclude_kernel ? "user space only" : "");
	}
}

void counters_start(struct counters *c)
{
	if (c->leader < 0)
		return;
	ioctl(c->leader, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
	ioctl(c->leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
}

void counters_stop(struct counters *c, struct counter_values *out)
{
	uint64_t buf[3 + 2 * EV_NR];
	uint64_t nr, ena, run, i;
	int j;

	memset(out, 0, sizeof(*out));
	if (c->leader < 0)
		return;
	ioctl(c->leader, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	if (read(c->leader, buf, sizeof(buf)) < (ssize_t)(3 * sizeof(uint64_t)))
		return;
	nr = buf[0];
	ena = buf[1];
	run = buf[2];
	if (run == 0)
		return;		/* never scheduled: nothing trustworthy */
	for (i = 0; i < nr && i < EV_NR; i++) {
		uint64_t val = buf[3 + 2 * i], id = buf[4 + 2 * i];

		for (j = 0; j < EV_NR; j++) {
			if (c->fd[j] < 0 || c->id[j] != id)
				continue;
			/* scale if the group was multiplexed */
			out->v[j] = run < ena ?
				(uint64_t)((double)val * ena / run) : val;
			out->ok[j] = 1;
		}
	}
}

void counters_emit_meta(const struct counters *c)
{
	char esc[400];
	int i;

	printf("@meta counters {");
	for (i = 0; i < EV_NR; i++) {
		json_str(esc, sizeof(esc), c->reason[i]);
		printf("%s\"%s\": {\"available\": %s, \"reason\": %s, "
		       "\"column\": \"%s\"}", i ? ", " : "", c->name[i],
		       c->fd[i] >= 0 ? "true" : "false", esc,
		       i == EV_WALK ? "walks_per_1k" :
		       i == EV_L1_DTLB_MISS ? "l1_dtlb_misses_per_1k" :
		       i == EV_PAGE_FAULTS ? "faults" : "");
	}
	printf("}\n");
	fflush(stdout);
}
