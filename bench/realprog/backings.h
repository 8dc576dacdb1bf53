/* SPDX-License-Identifier: GPL-2.0 */
/*
 * backings.h - realprog's backings, the one list: realprog.c runs them and
 * benchtool.c exports them ("realprog_backings" in `benchtool contract`),
 * from which bench/run.py and the tests read them.
 *
 * "off" is the program as it is, no preload; "none" the preload on 4 KB
 * pages (anonymous, MADV_NOHUGEPAGE: the baseline with the same
 * interposition).  The rest are rows of the contract's backing table
 * (bench/backing.c) that hugepreload.so serves, with their meaning there:
 * hugetlbfs is an unlinked hugetlbfs file mapped MAP_PRIVATE in both.
 * realprog refuses to start if one is no row of that table.
 */
#ifndef REALPROG_BACKINGS_H
#define REALPROG_BACKINGS_H

static const char *const realprog_backings[] = {
	"off", "none", "thp", "hugetlbfs", "maphugetlb", "devhugetlb",
};

#define NREALPROG_BACKINGS \
	(sizeof(realprog_backings) / sizeof(*realprog_backings))

#endif
