/* SPDX-License-Identifier: Apache-2.0 */
/* test_numfmt.c - numbers in text output never in e-notation (core/numfmt.h, docs/conventions.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "core/numfmt.h"
#include "core/opts.h"

static void expect(double v, int sig, const char *want)
{
	char b[64];
	assert_string_equal(numfmt(b, sizeof(b), v, sig), want);
}

static void test_forms(void **state)
{
	(void)state;
	expect(0, 4, "0");
	expect(0.154, 4, "0.154");
	expect(6.5, 4, "6.5");
	expect(32900, 4, "32900");
	expect(32912.7, 4, "32910");
	expect(999999.7, 4, "1M"); /* rounded before the suffix is chosen */
	expect(1e6, 6, "1M");
	expect(1e9, 4, "1B");      /* was "1e+09 tokens" */
	expect(6.738e9, 4, "6.738B");
	expect(2e12, 4, "2T");
	expect(1e15, 6, "1000T");  /* the largest --params, as the parser reads it back */
	expect(4.365e19, 4, "4.365 x 10^19"); /* was "4.365e+19 FLOPs" */
	expect(-2.5e9, 4, "-2.5B");
	expect(-0.0001, 1, "-0.0001");
	expect(NAN, 4, "n/a");
	expect(INFINITY, 4, "inf");
	char small[4];
	numfmt(small, sizeof(small), 123456, 6); /* cut, terminated */
	assert_int_equal(strlen(small), 3);
}

/* A range --help prints can be typed back: the parser reads "1M" and "1000T". */
static void test_ranges_read_back(void **state)
{
	(void)state;
	static const struct opt_spec spec[] = { { "n", 0, OPT_NUMBER, "N", "n", NULL, 0, OPT_MILLI(1e15), NULL } };
	const char *argv[] = { "x", "--n", "1000T", "--n", "1M", NULL };
	struct opt_parser p;
	struct opt_value v;
	opt_init(&p, 5, (char **)argv, spec, 1);
	assert_int_equal(opt_next(&p, &v), 0);
	assert_true(v.real == 1e15);
	assert_int_equal(opt_next(&p, &v), 0);
	assert_true(v.real == 1e6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_ranges_read_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
