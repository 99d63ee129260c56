/* SPDX-License-Identifier: Apache-2.0 */
/* test_table.c - the shared text-table formatter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/abuf.h"
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

/* term_clean (issue 38, item 4): what a terminal must not get becomes '?',
 * one per character (a control, a separator, a bidi control) or per invalid
 * byte; what is left is valid UTF-8 with nothing that moves the cursor. */
static void test_term_clean(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "python3", "python3" },
		{ "a\nFAKE", "a?FAKE" },
		{ "\x1b]0;pwned\x07x", "?]0;pwned?x" },
		{ "\x1b[2Jclear", "?[2Jclear" },
		{ "tab\there\r\x7f", "tab?here??" },
		{ "c1 \xc2\x9b" "31m \xc2\x85 \xc2\xa0ok", "c1 ?31m ? \xc2\xa0ok" },   /* CSI and NEL; NBSP stays */
		{ "rev\xe2\x80\xaegnp.exe", "rev?gnp.exe" },                       /* U+202E */
		{ "\xe2\x80\xa8 \xe2\x81\xa6 \xe2\x80\x94", "? ? \xe2\x80\x94" },       /* U+2028, U+2066; U+2014 stays */
		{ "bad\xff\xfe utf8 \xc3", "bad?? utf8 ?" },
		{ "over\xc0\xaf long", "over?? long" },
		{ "caf\xc3\xa9 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xf0\x9f\x98\x80" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[64], in_place[64];
		assert_ptr_equal(term_clean(out, sizeof(out), cases[i].in), out);
		assert_string_equal(out, cases[i].out);
		snprintf(in_place, sizeof(in_place), "%s", cases[i].in);
		term_clean(in_place, sizeof(in_place), in_place);
		assert_string_equal(in_place, cases[i].out);
	}
	/* truncated at a character boundary, never in the middle of one */
	char small[5];
	term_clean(small, sizeof(small), "ab\xc3\xa9");
	assert_string_equal(small, "ab\xc3\xa9");
	term_clean(small, 4, "ab\xc3\xa9");
	assert_string_equal(small, "ab");
}

/* A cell and a header are one line whatever they were given; text_line too. */
static void test_hostile_cells_and_lines(void **state)
{
	(void)state;
	struct table *t = table_new(2);
	table_col(t, 0, "PID", TABLE_RIGHT);
	table_col(t, 1, "NAME\x1b[2J", TABLE_LEFT);
	table_row(t);
	table_cell(t, "7");
	table_cell(t, "a\nFAKE \x1b]0;t\x07");
	table_row(t);
	table_cellf(t, "%d", 8);
	table_cellf(t, "%s", "\xc2\x9b" "2J");
	char *s = render(t);
	assert_string_equal(s, "PID  NAME?[2J\n"
			       "  7  a?FAKE ?]0;t?\n"
			       "  8  ?2J\n");
	free(s);
	table_free(t);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	text_line(f, "host %s  GPU %u", "h\x1b[31m\nFAKE", 3u);
	char longer[3000];
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	longer[1500] = '\n';
	text_line(f, "%s", longer); /* past the stack buffer: still cleaned, not cut */
	fclose(f);
	const char first[] = "host h?[31m?FAKE  GPU 3\n";
	assert_int_equal(len, strlen(first) + sizeof(longer));
	assert_memory_equal(buf, first, strlen(first));
	assert_ptr_equal(strchr(buf + strlen(first), '\n'), buf + len - 1);
	assert_int_equal(buf[strlen(first) + 1500], '?');
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alignment),
		cmocka_unit_test(test_missing_cells_are_blank),
		cmocka_unit_test(test_term_clean),
		cmocka_unit_test(test_hostile_cells_and_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
