/* SPDX-License-Identifier: GPL-2.0 */
/*
 * table.h - realprog's table of rows (bench/rows.h), the one list of its
 * columns: realprog.c writes every row against it (emit_row() refuses one
 * that does not fit) and benchtool.c exports it ("realprog" in `benchtool
 * contract`), as the benchmarks' .columns are.  The columns' meaning:
 * results/README.md, realprog.csv.
 */
#ifndef REALPROG_TABLE_H
#define REALPROG_TABLE_H

#include "rows.h"

static const struct row_table realprog_table = {
	.name = "realprog",
	.columns = "backing %s, rep %d, page_kb %u, huge_pct %.1f, "
		   "wall_s %.3f, user_s %.3f, sys_s %.3f, minflt %d, "
		   "majflt %d, maxrss_kb %d, big_kb %u, resident_kb %u, "
		   "huge_kb %u, fallback %d, out_bytes %u, out_fnv %s, "
		   "corpus_bytes %u, program %s, cpu %d, samples %d, "
		   "page_agree %d, valid %d",
	.src = "bench/realprog/realprog.c",
};

/* what it measures, for the contract */
#define REALPROG_DESC "real programs (xz, memcached) on each backing " \
	"through hugepreload.so: time, faults, pages obtained"

#endif
