/* SPDX-License-Identifier: Apache-2.0 */
/* table.h - plain-text tables for every command: columns sized to their
 * content, numbers right-aligned. Renders into a FILE* the caller (a command)
 * owns; nothing here decides what to print. Every cell and header is
 * passed through term_clean (abuf.h): no control character, escape sequence
 * or invalid UTF-8 reaches the terminal from a table. */
#ifndef GPUCTL_TABLE_H
#define GPUCTL_TABLE_H
#include <stdarg.h>
#include <stdio.h>

enum table_align { TABLE_LEFT = 0, TABLE_RIGHT = 1 };

struct table;

struct table *table_new(unsigned ncols);
/* Header and alignment of column i. */
void table_col(struct table *t, unsigned i, const char *header, enum table_align align);
/* Starts a new row; then table_cell/table_cellf fill its cells left to right. */
void table_row(struct table *t);
void table_cell(struct table *t, const char *text);
void table_cellf(struct table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints header, rule and rows; two spaces between columns. */
void table_print(const struct table *t, FILE *out);
void table_free(struct table *t);

/* Prints one line: fmt's text made fit for a terminal (term_clean in abuf.h:
 * a name from the system or a user, a process's, a job's, a server file's,
 * can neither break the line nor send escape sequences), then '\n'. For
 * every line of text output that shows such a name outside a table. */
void text_line(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void text_vline(FILE *out, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#endif
