/* SPDX-License-Identifier: Apache-2.0 */
/* table.c - see table.h. */
#include "table.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abuf.h"

struct table {
	unsigned ncols;
	char **headers;
	enum table_align *align;
	char **cells;      /* row-major, nrows * ncols */
	unsigned nrows, cap_rows;
	unsigned cur_col;
};

struct table *table_new(unsigned ncols)
{
	struct table *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->ncols = ncols;
	t->headers = calloc(ncols, sizeof(char *));
	t->align = calloc(ncols, sizeof(*t->align));
	if (!t->headers || !t->align) {
		table_free(t);
		return NULL;
	}
	return t;
}

/* A copy of a cell's text fit for a terminal: a cell is one line, and what
 * it shows (a process name, a job's command) may come from anyone. */
static char *cell_dup(const char *text)
{
	char *c = strdup(text ? text : "");
	return c ? term_clean(c, strlen(c) + 1, c) : NULL;
}

void table_col(struct table *t, unsigned i, const char *header, enum table_align align)
{
	if (!t || i >= t->ncols)
		return;
	free(t->headers[i]);
	t->headers[i] = cell_dup(header);
	t->align[i] = align;
}

void table_row(struct table *t)
{
	if (!t)
		return;
	if (t->nrows == t->cap_rows) {
		unsigned cap = t->cap_rows ? t->cap_rows * 2 : 16;
		char **c = realloc(t->cells, (size_t)cap * t->ncols * sizeof(char *));
		if (!c)
			return;
		t->cells = c;
		t->cap_rows = cap;
	}
	memset(&t->cells[(size_t)t->nrows * t->ncols], 0, t->ncols * sizeof(char *));
	t->nrows++;
	t->cur_col = 0;
}

void table_cell(struct table *t, const char *text)
{
	if (!t || t->nrows == 0 || t->cur_col >= t->ncols)
		return;
	t->cells[(size_t)(t->nrows - 1) * t->ncols + t->cur_col++] = cell_dup(text);
}

void table_cellf(struct table *t, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	table_cell(t, buf);
}

static size_t text_width(const char *s)
{
	/* count UTF-8 code points, not bytes, so degree signs align */
	size_t w = 0;
	for (; s && *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

static void print_padded(FILE *out, const char *s, size_t width, enum table_align a, int last)
{
	size_t w = text_width(s);
	size_t pad = width > w ? width - w : 0;
	if (a == TABLE_RIGHT)
		fprintf(out, "%*s%s", (int)pad, "", s);
	else if (last)
		fputs(s, out);
	else
		fprintf(out, "%s%*s", s, (int)pad, "");
}

void table_print(const struct table *t, FILE *out)
{
	if (!t)
		return;
	size_t *width = calloc(t->ncols, sizeof(size_t));
	if (!width)
		return;
	for (unsigned c = 0; c < t->ncols; c++) {
		width[c] = text_width(t->headers[c]);
		for (unsigned r = 0; r < t->nrows; r++) {
			size_t w = text_width(t->cells[(size_t)r * t->ncols + c]);
			if (w > width[c])
				width[c] = w;
		}
	}
	for (unsigned c = 0; c < t->ncols; c++) {
		print_padded(out, t->headers[c] ? t->headers[c] : "", width[c], t->align[c], c + 1 == t->ncols);
		fputs(c + 1 == t->ncols ? "\n" : "  ", out);
	}
	for (unsigned r = 0; r < t->nrows; r++) {
		for (unsigned c = 0; c < t->ncols; c++) {
			const char *s = t->cells[(size_t)r * t->ncols + c];
			print_padded(out, s ? s : "", width[c], t->align[c], c + 1 == t->ncols);
			fputs(c + 1 == t->ncols ? "\n" : "  ", out);
		}
	}
	free(width);
}

void table_free(struct table *t)
{
	if (!t)
		return;
	for (unsigned c = 0; c < t->ncols && t->headers; c++)
		free(t->headers[c]);
	for (size_t i = 0; i < (size_t)t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->headers);
	free(t->align);
	free(t);
}

void text_vline(FILE *out, const char *fmt, va_list ap)
{
	char stack[1024], *b = stack;
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(stack, sizeof(stack), fmt, ap);
	if (n < 0)
		stack[0] = '\0';
	else if ((size_t)n >= sizeof(stack) && (b = malloc((size_t)n + 1)) != NULL)
		vsnprintf(b, (size_t)n + 1, fmt, again);
	else
		b = stack; /* short, or no memory: the line cut short */
	va_end(again);
	fputs(term_clean(b, strlen(b) + 1, b), out);
	fputc('\n', out);
	if (b != stack)
		free(b);
}

void text_line(FILE *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	text_vline(out, fmt, ap);
	va_end(ap);
}
