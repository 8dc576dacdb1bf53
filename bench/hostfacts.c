// SPDX-License-Identifier: GPL-2.0
/*
 * hostfacts.c - reading the host's facts from /proc and /sys.  See
 * hostfacts.h.
 */
#include <stdio.h>
#include <string.h>

#include "hostfacts.h"

long host_read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

int host_read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	int rc;

	if (!f)
		return -1;
	rc = fgets(buf, n, f) ? 0 : -1;
	fclose(f);
	if (!rc)
		buf[strcspn(buf, "\n")] = 0;
	return rc;
}

long host_meminfo_kb(const char *root, const char *key)
{
	char path[512], line[256];
	size_t l = strlen(key);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/meminfo", root ? root : "");
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, l) && line[l] == ':') {
			if (sscanf(line + l + 1, "%ld", &v) != 1)
				v = -1;
			break;
		}
	if (f)
		fclose(f);
	return v;
}

static long pool_file(const char *root, const char *dir, unsigned long kb,
		      const char *file)
{
	char path[512];

	snprintf(path, sizeof(path), "%s%s/hugepages-%lukB/%s",
		 root ? root : "", dir, kb, file);
	return host_read_long(path);
}

long host_pool_free(const char *root, unsigned long kb, int node)
{
	const char *all = "/sys/kernel/mm/hugepages";
	long f = pool_file(root, all, kb, "free_hugepages");
	long r = pool_file(root, all, kb, "resv_hugepages");
	long nf;
	char dir[64];

	if (f < 0 || r < 0)
		return -1;
	if (node < 0)
		return f - r;
	snprintf(dir, sizeof(dir), "/sys/devices/system/node/node%d/hugepages",
		 node);
	nf = pool_file(root, dir, kb, "free_hugepages");
	if (nf < 0)
		return -1;
	return nf < f - r ? nf : f - r;
}
