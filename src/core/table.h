/* table.h - plain-text tables for every command: columns sized to their
 * content, numbers right-aligned. Renders into a FILE* the caller (a command)
 * owns; nothing here decides what to print. */
#ifndef GPUCTL_TABLE_H
#define GPUCTL_TABLE_H
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

#endif
