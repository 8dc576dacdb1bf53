// SPDX-License-Identifier: GPL-2.0
/*
 * counters.c - the counter group.
 *
 * cycles and instructions (generic hardware events), software page-faults,
 * and two TLB roles with raw events from perf's pmu-events tables
 * (bench/pmu.h, bench/events/gen_table.py says how they are chosen):
 *   EV_L1_DTLB_MISS  loads that missed the first-level dTLB
 *   EV_WALK          completed page walks caused by loads
 * The generic dTLB-load-misses event is not used: the kernel maps it to
 * the walk event itself (DTLB_LOAD_MISSES.WALK_COMPLETED 0x0e08 up to Ice
 * Lake, 0x0e12 on Golden Cove, 0xf045 on AMD family 17h+:
 * arch/x86/events/intel/core.c, arch/x86/events/amd/core.c).
 *
 * All events are opened on the PMU of the core the runner pins to: on a
 * hybrid Intel part an event without that PMU's type binds to cpu_core and
 * never runs on an E-core.  Raw events carry the PMU's perf type in
 * attr.type, generic hardware events in the upper half of attr.config
 * (PERF_PMU_TYPE_SHIFT, include/uapi/linux/perf_event.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "counters.h"
#include "rows.h"

static struct pmu_choice where = { .cpu = -1, .pmu = "cpu", .type = -1 };

static const char *const column[EV_NR] = {
	[EV_CYCLES] = "cycles_per_access",
	[EV_PAGE_FAULTS] = "faults",
	[EV_L1_DTLB_MISS] = "l1_dtlb_misses_per_1k",
	[EV_WALK] = "walks_per_1k",
};

int counters_pick_cpu(const cpu_set_t *allowed, int want)
{
	pmu_pick_cpu("/sys", allowed, want, &where);
	return where.cpu;
}

static long perf_open(struct perf_event_attr *a, int group)
{
	return syscall(SYS_perf_event_open, a, 0, -1, group, 0);
}

/*
 * opens type/config in the group (or finds it already open); returns its
 * index in c->fd, or -1 with the reason in why
 */
static int open_event(struct counters *c, uint32_t type, uint64_t config,
		      char *why, size_t n)
{
	struct perf_event_attr a;
	long fd;
	int i;

	for (i = 0; i < c->nfd; i++)
		if (c->type[i] == type && c->cfg[i] == config)
			return i;
	if (c->nfd == COUNTERS_MAX_FDS) {
		snprintf(why, n, "more than %d events", COUNTERS_MAX_FDS);
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.disabled = c->leader < 0;
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

		snprintf(why, n, "perf_event_open on PMU %s: %s%s", where.pmu,
			 strerror(e), (e == ENOENT || e == EOPNOTSUPP ||
				       e == EINVAL) ?
			 " (no such counter on this CPU/hypervisor)" : "");
		return -1;
	}
	i = c->nfd++;
	c->fd[i] = fd;
	c->type[i] = type;
	c->cfg[i] = config;
	if (c->leader < 0)
		c->leader = fd;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &c->id[i]) < 0)
		c->id[i] = 0;
	snprintf(why, n, "%s", a.exclude_kernel ? "user space only" : "");
	return i;
}

/* the generic hardware event id on the picked PMU */
static void open_hw(struct counters *c, int ev, uint64_t id, const char *name)
{
	int hybrid = strcmp(where.pmu, "cpu") && where.type > 0;
	uint64_t cfg = id | (hybrid ? (uint64_t)where.type << PERF_PMU_TYPE_SHIFT
			     : 0);
	int i = open_event(c, PERF_TYPE_HARDWARE, cfg, c->reason[ev],
			   sizeof(c->reason[ev]));

	snprintf(c->name[ev], sizeof(c->name[ev]), "%s", name);
	snprintf(c->config[ev], sizeof(c->config[ev]), "0x%llx",
		 (unsigned long long)cfg);
	c->nparts[ev] = i >= 0;
	c->part[ev][0] = i;
}

/* the core's events for a TLB role, or the reason there are none */
static const struct pmu_role_events *role_events(struct counters *c,
						 int role, char *why,
						 size_t n)
{
	const struct pmu_core *core;
	const char *arch = pmu_arch_missing();

	if (arch) {
		snprintf(why, n, "%s", arch);
		return NULL;
	}
	if (!c->cpuid[0]) {
		snprintf(why, n, "cannot read this CPU's vendor, family, model "
			 "and stepping from /proc/cpuinfo");
		return NULL;
	}
	if (!c->model) {
		pmu_model_find(c->cpuid, why, n);
		return NULL;
	}
	core = pmu_core_find(c->model, where.pmu);
	if (!core) {
		snprintf(why, n, "perf's %s tables have no events for PMU %s",
			 c->model->model, where.pmu);
		return NULL;
	}
	if (!core->role[role].nparts) {
		snprintf(why, n, "%s", core->role[role].reason);
		return NULL;
	}
	return &core->role[role];
}

static void open_role(struct counters *c, int ev, int role,
		      const char *placeholder)
{
	const struct pmu_role_events *r;
	uint32_t type = where.type > 0 ? (uint32_t)where.type : PERF_TYPE_RAW;
	int k, i;

	r = role_events(c, role, c->reason[ev], sizeof(c->reason[ev]));
	snprintf(c->name[ev], sizeof(c->name[ev]), "%s", placeholder);
	if (!r)
		return;
	pmu_role_format(r, c->name[ev], sizeof(c->name[ev]), c->config[ev],
			sizeof(c->config[ev]));
	for (k = 0; k < r->nparts; k++) {
		i = open_event(c, type, r->part[k].config, c->reason[ev],
			       sizeof(c->reason[ev]));
		if (i < 0)
			return;
		c->part[ev][k] = i;
	}
	c->nparts[ev] = r->nparts;
}

/* a short count: events that opened but never ran become unavailable */
static void probe(struct counters *c)
{
	struct counter_values v;
	unsigned long spin;
	int ev;

	counters_start(c);
	for (spin = 0; spin < 200000; spin++)
		__asm__ volatile("" ::: "memory");	/* kept: work to count */
	counters_stop(c, &v);
	for (ev = 0; ev < EV_NR; ev++)
		if (c->nparts[ev] && !v.ok[ev]) {
			c->nparts[ev] = 0;
			snprintf(c->reason[ev], sizeof(c->reason[ev]),
				 "opened on PMU %s but never ran on CPU %d "
				 "(time_running 0)", where.pmu, where.cpu);
		}
}

/*
 * BENCH_PMU_OFF set: no hardware event is opened (the software page
 * faults still are), so that another counter of this process, perf stat
 * around it (bench/benchrun/walk.py), has the PMU's counters to itself
 * and is not multiplexed with this group.
 */
static int pmu_off(struct counters *c)
{
	static const int evs[] = { EV_CYCLES, EV_INSTRUCTIONS,
				   EV_L1_DTLB_MISS, EV_WALK };
	static const char *const names[] = { "cycles", "instructions",
					     "l1-dtlb-load-misses",
					     "page-walks" };
	unsigned i;

	if (!getenv("BENCH_PMU_OFF"))
		return 0;
	for (i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		snprintf(c->name[evs[i]], sizeof(c->name[0]), "%s", names[i]);
		snprintf(c->reason[evs[i]], sizeof(c->reason[0]),
			 "not opened: BENCH_PMU_OFF is set (another counter "
			 "of this process has the PMU)");
	}
	return 1;
}

void counters_open(struct counters *c)
{
	char why[256];
	int off;

	memset(c, 0, sizeof(*c));
	c->leader = -1;
	c->pmu = where.pmu;
	if (!pmu_host_cpuid(c->cpuid, sizeof(c->cpuid)))
		c->model = pmu_model_find(c->cpuid, why, sizeof(why));
	off = pmu_off(c);
	if (!off) {
		open_hw(c, EV_CYCLES, PERF_COUNT_HW_CPU_CYCLES, "cycles");
		open_hw(c, EV_INSTRUCTIONS, PERF_COUNT_HW_INSTRUCTIONS,
			"instructions");
	}
	c->part[EV_PAGE_FAULTS][0] = open_event(c, PERF_TYPE_SOFTWARE,
		PERF_COUNT_SW_PAGE_FAULTS, c->reason[EV_PAGE_FAULTS],
		sizeof(c->reason[EV_PAGE_FAULTS]));
	c->nparts[EV_PAGE_FAULTS] = c->part[EV_PAGE_FAULTS][0] >= 0;
	snprintf(c->name[EV_PAGE_FAULTS], sizeof(c->name[0]), "page-faults");
	snprintf(c->config[EV_PAGE_FAULTS], sizeof(c->config[0]), "0x%x",
		 PERF_COUNT_SW_PAGE_FAULTS);
	if (!off) {
		open_role(c, EV_L1_DTLB_MISS, PMU_ROLE_L1_MISS,
			  "l1-dtlb-load-misses");
		open_role(c, EV_WALK, PMU_ROLE_WALK, "page-walks");
	}
	if (c->leader >= 0)
		probe(c);
}

/* reads the group: counts by fd index into v, and the group's times */
static int read_group(struct counters *c, uint64_t *v, uint64_t *ena,
		      uint64_t *run)
{
	uint64_t buf[3 + 2 * COUNTERS_MAX_FDS], i;
	int k;

	if (read(c->leader, buf, sizeof(buf)) < (ssize_t)(3 * sizeof(buf[0])))
		return -1;
	*ena = buf[1];
	*run = buf[2];
	for (i = 0; i < buf[0] && i < COUNTERS_MAX_FDS; i++)
		for (k = 0; k < c->nfd; k++)
			if (c->id[k] == buf[4 + 2 * i])
				v[k] = buf[3 + 2 * i];
	return 0;
}

/*
 * No PERF_EVENT_IOC_RESET: it zeroes the counts but not the times, so
 * counts and times alike are taken as differences across the repetition.
 */
void counters_start(struct counters *c)
{
	if (c->leader < 0)
		return;
	if (read_group(c, c->base, &c->base_ena, &c->base_run))
		c->base_ena = c->base_run = 0;
	ioctl(c->leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
}

void counters_stop(struct counters *c, struct counter_values *out)
{
	uint64_t v[COUNTERS_MAX_FDS] = { 0 }, ena, run;
	int ev, k;

	memset(out, 0, sizeof(*out));
	if (c->leader < 0)
		return;
	ioctl(c->leader, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	if (read_group(c, v, &ena, &run))
		return;
	for (ev = 0; ev < EV_NR; ev++) {
		double sum = 0;
		int ok = c->nparts[ev] > 0, pok;

		for (k = 0; k < c->nparts[ev]; k++) {
			int i = c->part[ev][k];

			sum += pmu_scale(c->base[i], v[i], c->base_ena, ena,
					 c->base_run, run, &pok);
			ok &= pok;
		}
		out->v[ev] = ok ? (uint64_t)(sum + 0.5) : 0;
		out->ok[ev] = ok;
	}
}

static void emit_pmu_meta(const struct counters *c)
{
	const char *preset = c->model ? pmu_preset(c->model, where.pmu) : NULL;
	const char *core = !strcmp(where.pmu, "cpu_core") ? "P-core" :
			   !strcmp(where.pmu, "cpu_atom") ? "E-core" :
			   "one core type";

	printf("@meta pmu {\"cpuid\": \"%s\", \"pmu_events_model\": %s%s%s, "
	       "\"pmu_events_version\": %s%s%s, \"pmu\": \"%s\", "
	       "\"type\": %d, \"cpu\": %d, \"core_type\": \"%s\", "
	       "\"preset\": %s%s%s}\n", c->cpuid,
	       c->model ? "\"" : "", c->model ? c->model->model : "null",
	       c->model ? "\"" : "", c->model ? "\"" : "",
	       c->model ? c->model->version : "null", c->model ? "\"" : "",
	       where.pmu, where.type, where.cpu, core, preset ? "\"" : "",
	       preset ? preset : "null", preset ? "\"" : "");
}

void counters_emit_meta(const struct counters *c)
{
	char esc[2][600];
	int i;

	printf("@meta counters {");
	for (i = 0; i < EV_NR; i++) {
		json_str(esc[0], sizeof(esc[0]), c->reason[i]);
		json_str(esc[1], sizeof(esc[1]), c->name[i]);
		printf("%s%s: {\"available\": %s, \"reason\": %s, "
		       "\"column\": \"%s\", \"config\": \"%s\", "
		       "\"pmu\": \"%s\"}", i ? ", " : "", esc[1],
		       c->nparts[i] ? "true" : "false", esc[0],
		       column[i] ? column[i] : "", c->config[i],
		       i == EV_PAGE_FAULTS ? "software" : where.pmu);
	}
	printf("}\n");
	emit_pmu_meta(c);
	fflush(stdout);
}
