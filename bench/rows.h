/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rows.h - the line protocol the binaries print on stdout, and nothing
 * else: a leaf that needs only libc, so that every floor above it (the
 * counters, the CPUID reader, the runner, the benchmarks, realprog and
 * benchtool) can write to it without calling up into the runner.
 *
 *   @header <table> <csv header>     once, before the first row
 *   @row <table> <csv fields>        one per completed measurement
 *   @meta <key> <json>               metadata (written by its owner)
 *   @error <table> <text>            a loud failure (also on stderr)
 *   @done <table> <exit status>      the last line
 *   anything else                    progress, echoed by the host
 *
 * A table is the rows of one binary: a benchmark's (bench/runner.h fills
 * one from its struct bench) or realprog's.  Its columns are one string,
 * each column's name and the printf conversion of its value: "%s", "%d",
 * "%u", or "%.<digits>f" / "%.<digits>g" of a double ("wss_bytes %u, cv
 * %.4f").  The header, the contract (benchtool contract) and every row's
 * fields come from it alone (emit_row()).
 */
#ifndef BENCH_ROWS_H
#define BENCH_ROWS_H

#include <stddef.h>
#include <stdio.h>

struct row_table {
	const char *name;	/* the <table> of every line */
	const char *columns;	/* "name conversion, ..." (see above) */
	/*
	 * a %s column that takes only the values listed (NULL-terminated:
	 * stream's kernels), which the contract exports; NULL: none
	 */
	const char *values_of;
	const char *const *values;
	const char *src;	/* the file writing the rows, for a misfit */
};

/* one column of a table's columns, parsed (row_cols()) */
#define MAX_COLS 48
struct row_col {
	char name[40];
	char fmt[8];
};

/* a conversion's kind ('s', 'd', 'u', 'f'); 0 if emit_row() prints none */
int row_col_kind(const char *fmt);
/*
 * t->columns parsed into c[MAX_COLS]: their count, or -1 and why (not
 * "name conversion", a conversion emit_row() does not print, a name
 * listed twice, values_of no %s column)
 */
int row_cols(const struct row_table *t, struct row_col *c, char *why,
	     size_t n);
/* the CSV header: the k column names joined by commas */
void row_header(const struct row_col *c, int k, char *buf, size_t n);

/*
 * The table this binary writes, its columns parsed: 0, or -1 and why
 * (row_cols()).  Until then (benchtool, which writes no rows) progress and
 * @error lines name "benchtool".
 */
int rows_begin(const struct row_table *t, char *why, size_t n);
/* "@header <table> <csv header>" */
void emit_header(void);
/* "@done <table> <rc>", the last line */
void emit_done(int rc);

/*
 * One field of a row: a value of the kind its column's conversion takes
 * ('s', 'd', 'u' or 'f'), or, with ok 0, an empty field (a counter that
 * did not count, a figure that does not apply).
 */
struct cell {
	char kind;
	int ok;
	union {
		const char *s;
		long long d;
		unsigned long long u;
		double f;
	} v;
};

#define CELL_S(x) ((struct cell){ 's', 1, { .s = (x) } })
#define CELL_D(x) ((struct cell){ 'd', 1, { .d = (x) } })
#define CELL_U(x) ((struct cell){ 'u', 1, { .u = (x) } })
#define CELL_F(x) ((struct cell){ 'f', 1, { .f = (x) } })
/* a double, or an empty field unless ok */
#define CELL_OPT(ok_, x) ((struct cell){ 'f', !!(ok_), { .f = (x) } })
#define CELL_OPT_U(ok_, x) ((struct cell){ 'u', !!(ok_), { .u = (x) } })
#define NCELLS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/*
 * Writes "@row <table> <fields>" from n cells, one per column of the
 * table, each printed with its column's conversion.  A row whose count or
 * kinds do not match the columns is a bug in the code that wrote it: an
 * @error naming the column, "@done <table> 70", and the binary exits 70.
 */
void emit_row(const struct cell *row, int n);
void emit_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* s as a JSON string, quotes included, cut to fit n */
void json_str(char *dst, size_t n, const char *s);
/* prints s (a comma list) as a JSON array of strings */
void json_list(FILE *f, const char *s);

#endif
