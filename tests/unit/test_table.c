/* test_table.c - the shared text-table formatter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/table.h"

static char *render(struct table *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	table_print(t, f);
	fclose(f);
	return buf;
}

static void test_alignment(void **state)
{
	(void)state;
	struct table *t = table_new(3);
	table_col(t, 0, "GPU", TABLE_RIGHT);
	table_col(t, 1, "Name", TABLE_LEFT);
	table_col(t, 2, "Temp", TABLE_RIGHT);
	table_row(t);
	table_cell(t, "0");
	table_cell(t, "NVIDIA H200");
	table_cellf(t, "%d °C", 31);
	table_row(t);
	table_cell(t, "10");
	table_cell(t, "A100");
	table_cell(t, "n/a");
	char *s = render(t);
	assert_string_equal(s,
		"GPU  Name          Temp\n"
		"  0  NVIDIA H200  31 °C\n"
		" 10  A100           n/a\n");
	free(s);
	table_free(t);
}

static void test_missing_cells_are_blank(void **state)
{
	(void)state;
	struct table *t = table_new(2);
	table_col(t, 0, "A", TABLE_LEFT);
	table_col(t, 1, "B", TABLE_LEFT);
	table_row(t);
	table_cell(t, "x");
	char *s = render(t);
	assert_string_equal(s, "A  B\nx  \n");
	free(s);
	table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alignment),
		cmocka_unit_test(test_missing_cells_are_blank),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
