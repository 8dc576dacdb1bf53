// SPDX-License-Identifier: GPL-2.0
/*
 * rows.c - the line protocol on stdout: a table's columns, its header and
 * rows (each checked against the columns), @error, @done, progress, and
 * the JSON helpers the @meta writers use.  See rows.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rows.h"

/* the table this binary writes (rows_begin()) and its columns, parsed */
static const struct row_table *cur;
static struct row_col cols[MAX_COLS];
static int ncols;

/* benchtool links the library code too, and writes no table */
static const char *cur_name(void)
{
	return cur ? cur->name : "benchtool";
}

void progress(const char *fmt, ...)
{
	va_list ap;

	printf("# %s: ", cur_name());
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

int row_col_kind(const char *fmt)
{
	size_t d;

	if (!strcmp(fmt, "%s") || !strcmp(fmt, "%d") || !strcmp(fmt, "%u"))
		return fmt[1];
	if (strncmp(fmt, "%.", 2))
		return 0;
	d = strspn(fmt + 2, "0123456789");
	return d && d < 3 && (fmt[2 + d] == 'f' || fmt[2 + d] == 'g') &&
	       !fmt[3 + d] ? 'f' : 0;
}

/* one "name conversion" of t->columns into *c; 0, or -1 and why */
static int parse_col(const struct row_table *t, const char *s, size_t len,
		     struct row_col *c, char *why, size_t n)
{
	char spec[64], rest[2];

	snprintf(spec, sizeof(spec), "%.*s", (int)len, s);
	if (len >= sizeof(spec) || sscanf(spec, "%39s %7s %1s", c->name,
					   c->fmt, rest) != 2)
		return snprintf(why, n, "%s: column '%s' is not \"name "
				"conversion\"", t->name, spec), -1;
	if (!row_col_kind(c->fmt))
		return snprintf(why, n, "%s: column %s: '%s' is not %%s, %%d, "
				"%%u, %%.Nf or %%.Ng", t->name, c->name,
				c->fmt), -1;
	return 0;
}

int row_cols(const struct row_table *t, struct row_col *c, char *why,
	     size_t n)
{
	const char *s = t->columns;
	int k = 0, i, vals = !t->values_of;

	while (*s) {
		size_t len = strcspn(s, ",");

		if (k == MAX_COLS)
			return snprintf(why, n, "%s: over %d columns", t->name,
					MAX_COLS), -1;
		if (parse_col(t, s, len, &c[k], why, n))
			return -1;
		for (i = 0; i < k; i++)
			if (!strcmp(c[i].name, c[k].name))
				return snprintf(why, n, "%s: column %s is "
						"listed twice", t->name,
						c[k].name), -1;
		vals |= t->values_of && !strcmp(c[k].name, t->values_of) &&
			row_col_kind(c[k].fmt) == 's';
		k++;
		s += len + !!s[len];
	}
	if (!vals)
		return snprintf(why, n, "%s: values_of '%s' is no %%s column",
				t->name, t->values_of), -1;
	return k ? k : (snprintf(why, n, "%s: no columns", t->name), -1);
}

void row_header(const struct row_col *c, int k, char *buf, size_t n)
{
	size_t o = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < k && o < n; i++)
		o += snprintf(buf + o, n - o, "%s%s", i ? "," : "", c[i].name);
}

int rows_begin(const struct row_table *t, char *why, size_t n)
{
	ncols = row_cols(t, cols, why, n);
	if (ncols < 0)
		return -1;
	cur = t;
	return 0;
}

void emit_header(void)
{
	char header[2048];

	row_header(cols, ncols, header, sizeof(header));
	printf("@header %s %s\n", cur->name, header);
	fflush(stdout);
}

void emit_done(int rc)
{
	printf("@done %s %d\n", cur_name(), rc);
	fflush(stdout);
}

/* why cell v cannot be column c's field; NULL if it can */
static const char *cell_misfit(const struct row_col *c,
			       const struct cell *v)
{
	const char *const *val;

	if (v->kind != row_col_kind(c->fmt))
		return "a value of another kind than its conversion";
	if (!v->ok || v->kind != 's')
		return NULL;
	if (strchr(v->v.s, ','))
		return "a comma in its text";
	if (!cur->values_of || strcmp(c->name, cur->values_of))
		return NULL;
	for (val = cur->values; *val && strcmp(*val, v->v.s); val++)
		;
	return *val ? NULL : "a value not in its list of values";
}

/* a row that does not fit the columns: its writer's bug, said, fatal */
static void row_misfit(const char *col, const char *what, int n)
{
	emit_error("%s: a row of %d fields: column %s gets %s (the row must "
		   "fill the columns of its table, in order)", cur->src, n,
		   col, what);
	emit_done(70);
	exit(70);
}

void emit_row(const struct cell *row, int n)
{
	const char *why;
	int i;

	for (i = 0; i < n && i < ncols; i++) {
		why = cell_misfit(&cols[i], &row[i]);
		if (why)
			row_misfit(cols[i].name, why, n);
	}
	if (i < ncols)
		row_misfit(cols[i].name, "no field", n);
	if (i < n)
		row_misfit("(past the last)", "a field", n);
	printf("@row %s ", cur->name);
	for (i = 0; i < n; i++) {
		const struct cell *v = &row[i];

		if (i)
			putchar(',');
		if (!v->ok)
			continue;
		if (v->kind == 's')
			fputs(v->v.s, stdout);
		else if (v->kind == 'd')
			printf("%lld", v->v.d);
		else if (v->kind == 'u')
			printf("%llu", v->v.u);
		else
			printf(cols[i].fmt, v->v.f);
	}
	printf("\n");
	fflush(stdout);
}

void emit_error(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("@error %s %s\n", cur_name(), msg);
	fflush(stdout);
	fprintf(stderr, "%s: FAILED: %s\n", cur_name(), msg);
}

void json_str(char *dst, size_t n, const char *s)
{
	size_t o = 0;

	if (n < 3)
		return;
	dst[o++] = '"';
	for (; *s && o + 7 < n; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\') {
			dst[o++] = '\\';
			dst[o++] = ch;
		} else if (ch < 0x20) {
			o += snprintf(dst + o, n - o, "\\u%04x", ch);
		} else {
			dst[o++] = ch;
		}
	}
	dst[o++] = '"';
	dst[o] = 0;
}

void json_list(FILE *f, const char *s)
{
	const char *sep = "";

	fputc('[', f);
	while (*s) {
		size_t l = strcspn(s, ",");

		fprintf(f, "%s\"%.*s\"", sep, (int)l, s);
		sep = ", ";
		s += l + !!s[l];
	}
	fputc(']', f);
}
