// SPDX-License-Identifier: GPL-2.0
/*
 * llc.c - the last-level cache's size, from sysfs or CPUID.  See llc.h.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llc.h"

/* the first line of dir/name, newline stripped; 0, or -1 */
static int read_line(const char *dir, const char *name, char *buf, size_t n)
{
	char path[700];	/* a struct llc path and a name */
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fgets(buf, n, f) != NULL;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return ok ? 0 : -1;
}

/* sysfs writes sizes as "32768K"; a plain number is bytes */
static unsigned long long parse_cache_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s)
		return 0;
	switch (*end) {
	case 'K': return v << 10;
	case 'M': return v << 20;
	case 'G': return v << 30;
	default: return v;
	}
}

/* one cache index directory: its level and size when it holds data */
static void consider(const char *dir, struct llc *l)
{
	char level[32], type[32], size[32];
	unsigned long long bytes;
	int lv;

	if (read_line(dir, "level", level, sizeof(level)) ||
	    read_line(dir, "type", type, sizeof(type)) ||
	    read_line(dir, "size", size, sizeof(size)))
		return;
	if (strcmp(type, "Unified") && strcmp(type, "Data"))
		return;			/* instruction caches do not count */
	lv = atoi(level);
	bytes = parse_cache_size(size);
	if (bytes && lv > l->level) {
		l->level = lv;
		l->bytes = bytes;
		l->source = "sysfs";
		snprintf(l->path, sizeof(l->path), "%s", dir);
	}
}

static void from_sysfs(const char *root, int cpu, struct llc *l)
{
	char base[300], dir[600];
	struct dirent *e;
	DIR *d;

	snprintf(base, sizeof(base), "%s/sys/devices/system/cpu/cpu%d/cache",
		 root && *root ? root : "", cpu < 0 ? 0 : cpu);
	d = opendir(base);
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "index", 5))
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", base, e->d_name);
		consider(dir, l);
	}
	if (d)
		closedir(d);
}

/* glibc reads these from CPUID on x86; elsewhere there is no CPUID */
static void from_cpuid(struct llc *l)
{
#if defined(__x86_64__) || defined(__i386__)
	long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
	long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);

	if (l3 > 0) {
		l->bytes = l3;
		l->level = 3;
	} else if (l2 > 0) {
		l->bytes = l2;
		l->level = 2;
	} else {
		return;
	}
	l->source = "cpuid";
#else
	(void)l;
#endif
}

int llc_read(const char *root, int cpu, int use_cpuid, struct llc *l,
	     char *why, size_t n)
{
	*l = (struct llc){ .source = "none" };
	from_sysfs(root, cpu, l);
	if (!l->bytes && use_cpuid)
		from_cpuid(l);
	if (l->bytes)
		return 0;
	snprintf(why, n, "no cache size: %s/sys/devices/system/cpu/cpu%d/cache "
		 "has no data or unified cache%s", root && *root ? root : "",
		 cpu < 0 ? 0 : cpu, !use_cpuid ? "" :
#if defined(__x86_64__) || defined(__i386__)
		 " and CPUID reports none"
#else
		 " (no CPUID fallback on this architecture)"
#endif
		 );
	return -1;
}
