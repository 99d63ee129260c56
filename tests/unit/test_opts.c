/* SPDX-License-Identifier: Apache-2.0 */
/* test_opts.c - the option parser over a command's option table (core/opts.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/opts.h"
#include "core/units.h"

enum { O_JSON, O_QUIET, O_COUNT, O_INTERVAL, O_MEM, O_ID, O_FORMAT, O_HIDDEN, O_SHORT_ONLY, O_N };
static const char *const formats[] = { "text", "csv", "json", NULL };
static const struct opt_spec specs[O_N] = {
	[O_JSON] = { "json", 'j', OPT_FLAG, NULL, "json", NULL, 0, 0, NULL },
	[O_QUIET] = { "quiet", 'q', OPT_FLAG, NULL, "quiet", NULL, 0, 0, NULL },
	[O_COUNT] = { "count", 'c', OPT_INT, NULL, "count", "0", 0, 1000, NULL },
	[O_INTERVAL] = { "interval", 'd', OPT_DURATION, NULL, "every", "1s", 100000000, 3600 * UNITS_NS_PER_S, NULL },
	[O_MEM] = { "mem", 0, OPT_SIZE, NULL, "memory", NULL, 1, 64ll << 30, NULL },
	[O_ID] = { "id", 'i', OPT_STRING, "SPEC", "gpus", NULL, 0, 0, NULL },
	[O_FORMAT] = { "format", 0, OPT_ENUM, NULL, "format", "text", 0, 0, formats },
	[O_HIDDEN] = { "matrix", 'm', OPT_FLAG, NULL, NULL, NULL, 0, 0, NULL },
	[O_SHORT_ONLY] = { NULL, 'w', OPT_INT, NULL, "window", NULL, -5, 5, NULL },
};

struct seen {
	int codes[16];
	struct opt_value values[16];
	int n;
	char err[300];
};

enum { PLAIN, STOP_AT_OPERAND, PASS_THROUGH };
/* Parses the NULL-terminated words (argv[0] is the command) to the end or the
 * first error; mode: PLAIN, STOP_AT_OPERAND or PASS_THROUGH (the parser's flags). */
static struct seen parse_words(int mode, const char **words)
{
	char *argv[32];
	int argc = 0;
	while (words[argc]) {
		argv[argc] = (char *)words[argc];
		argc++;
	}
	argv[argc] = NULL;
	struct opt_parser p;
	struct seen s;
	memset(&s, 0, sizeof(s));
	opt_init(&p, argc, argv, specs, O_N);
	p.stop_at_operand = mode == STOP_AT_OPERAND;
	p.pass_through = mode == PASS_THROUGH;
	for (;;) {
		struct opt_value v;
		int k = opt_next(&p, &v);
		if (k == OPT_DONE)
			break;
		assert_true(s.n < 16);
		s.codes[s.n] = k;
		s.values[s.n++] = v;
		if (k == OPT_ERROR) {
			snprintf(s.err, sizeof(s.err), "%s%s", p.err, p.err_see_help ? " [see help]" : "");
			assert_null(strchr(p.err, '\n'));
			break;
		}
	}
	return s;
}

#define PARSE(...) parse_words(PLAIN, (const char *[]){ "cmd", __VA_ARGS__, NULL })

static void test_long_and_short_spellings_give_the_same(void **state)
{
	(void)state;
	const char *forms[][3] = { { "--count", "7", NULL }, { "--count=7", NULL, NULL }, { "-c", "7", NULL },
				   { "-c7", NULL, NULL } };
	for (size_t i = 0; i < 4; i++) {
		struct seen s = parse_words(PLAIN, (const char *[]){ "cmd", forms[i][0], forms[i][1], NULL });
		assert_int_equal(s.n, 1);
		assert_int_equal(s.codes[0], O_COUNT);
		assert_int_equal(s.values[0].num, 7);
		assert_string_equal(s.values[0].text, "7");
	}
}

static void test_flags_bundle_and_a_value_ends_the_bundle(void **state)
{
	(void)state;
	struct seen s = PARSE("-jq", "-qc", "3", "-jqi0-3");
	assert_int_equal(s.n, 7);
	int want[] = { O_JSON, O_QUIET, O_QUIET, O_COUNT, O_JSON, O_QUIET, O_ID };
	for (int i = 0; i < 7; i++)
		assert_int_equal(s.codes[i], want[i]);
	s = PARSE("-jqi0-3");
	assert_int_equal(s.n, 3);
	assert_int_equal(s.codes[2], O_ID);
	assert_string_equal(s.values[2].text, "0-3");
	assert_null(s.values[0].text);
}

static void test_every_kind_reads_its_value(void **state)
{
	(void)state;
	struct seen s = PARSE("--interval", "100ms", "--mem=1.5G", "--format", "csv", "--id", "GPU-1", "-w", "-5");
	assert_int_equal(s.n, 5);
	assert_int_equal(s.codes[0], O_INTERVAL);
	assert_int_equal(s.values[0].num, 100000000);
	assert_int_equal(s.codes[1], O_MEM);
	assert_int_equal(s.values[1].num, 3ll << 29);
	assert_int_equal(s.codes[2], O_FORMAT);
	assert_int_equal(s.values[2].num, 1);
	assert_int_equal(s.codes[3], O_ID);
	assert_string_equal(s.values[3].text, "GPU-1");
	/* a value may start with '-' */
	assert_int_equal(s.codes[4], O_SHORT_ONLY);
	assert_int_equal(s.values[4].num, -5);
	s = PARSE("-d", "1h", "-d1m30s", "--interval=0.5");
	assert_int_equal(s.n, 3);
	assert_int_equal(s.values[0].num, 3600 * (long long)UNITS_NS_PER_S);
	assert_int_equal(s.values[1].num, 90 * (long long)UNITS_NS_PER_S);
	assert_int_equal(s.values[2].num, (long long)UNITS_NS_PER_S / 2);
}

static void test_operands_and_double_dash(void **state)
{
	(void)state;
	struct seen s = PARSE("a", "-j", "-", "--", "-q", "--count");
	assert_int_equal(s.n, 5);
	int want[] = { OPT_OPERAND, O_JSON, OPT_OPERAND, OPT_OPERAND, OPT_OPERAND };
	const char *text[] = { "a", NULL, "-", "-q", "--count" };
	for (int i = 0; i < 5; i++) {
		assert_int_equal(s.codes[i], want[i]);
		if (text[i])
			assert_string_equal(s.values[i].text, text[i]);
	}
	/* a command to run: its own options are its own */
	s = parse_words(STOP_AT_OPERAND, (const char *[]){ "cmd", "-j", "python", "-q", "--count", NULL });
	assert_int_equal(s.n, 4);
	assert_int_equal(s.codes[0], O_JSON);
	assert_int_equal(s.codes[1], OPT_OPERAND);
	assert_int_equal(s.codes[2], OPT_OPERAND);
	assert_int_equal(s.codes[3], OPT_OPERAND);
	assert_string_equal(s.values[3].text, "--count");
}

/* main's global options: only the table's are taken, the rest of the line is
 * the command's, as given, "--" and what follows it included */
static void test_pass_through_takes_only_the_tables_options(void **state)
{
	(void)state;
	struct seen s = parse_words(PASS_THROUGH, (const char *[]){ "cmd", "info", "--count=3", "-x", "--help", "-h",
								   "-q", "--frob=1", "-i", "0", "--", "--count", "4",
								   NULL });
	int want[] = { OPT_OPERAND, O_COUNT, OPT_OPERAND, OPT_OPERAND, OPT_OPERAND, O_QUIET, OPT_OPERAND, O_ID,
		       OPT_OPERAND, OPT_OPERAND, OPT_OPERAND };
	const char *text[] = { "info", "3", "-x", "--help", "-h", NULL, "--frob=1", "0", "--", "--count", "4" };
	assert_int_equal(s.n, 11);
	for (int i = 0; i < 11; i++) {
		assert_int_equal(s.codes[i], want[i]);
		if (text[i])
			assert_string_equal(s.values[i].text, text[i]);
	}
	assert_int_equal(s.values[1].num, 3);
	/* the table's options still refuse a bad or missing value */
	s = parse_words(PASS_THROUGH, (const char *[]){ "cmd", "top", "--count", NULL });
	assert_int_equal(s.codes[s.n - 1], OPT_ERROR);
	assert_string_equal(s.err, "option '--count' needs a value");
	s = parse_words(PASS_THROUGH, (const char *[]){ "cmd", "--count=x", NULL });
	assert_int_equal(s.codes[0], OPT_ERROR);
}

static void test_help_and_a_kept_spelling(void **state)
{
	(void)state;
	struct seen s = PARSE("-h");
	assert_int_equal(s.codes[0], OPT_HELP);
	s = PARSE("--help");
	assert_int_equal(s.codes[0], OPT_HELP);
	s = PARSE("-jh");
	assert_int_equal(s.codes[1], OPT_HELP);
	/* left out of --help, still read */
	s = PARSE("-m", "--matrix");
	assert_int_equal(s.n, 2);
	assert_int_equal(s.codes[0], O_HIDDEN);
	assert_int_equal(s.codes[1], O_HIDDEN);
}

static void expect_error(const char *want, const char **words)
{
	struct seen s = parse_words(PLAIN, words);
	assert_true(s.n >= 1);
	assert_int_equal(s.codes[s.n - 1], OPT_ERROR);
	assert_string_equal(s.err, want);
}

#define ERR(want, ...) expect_error(want, (const char *[]){ "cmd", __VA_ARGS__, NULL })

static void test_errors_are_one_line_naming_the_option_as_spelled(void **state)
{
	(void)state;
	ERR("unknown option '--bogus' [see help]", "--bogus");
	ERR("unknown option '--bogus' [see help]", "--bogus=1");
	ERR("unknown option '-x' [see help]", "-x");
	ERR("unknown option '-x' [see help]", "-jx");
	ERR("unknown option '--coun' (did you mean '--count'?) [see help]", "--coun", "1"); /* no abbreviations, a suggestion */
	ERR("unknown option '--help' [see help]", "--help=1");
	ERR("option '-c' needs a value", "-c");
	ERR("option '--count' needs a value", "--count");
	ERR("option '--id' needs a value", "--id=");
	ERR("option '--json' takes no value", "--json=yes");
	ERR("option '--count': 'x' is not a whole number from 0 to 1000", "--count", "x");
	ERR("option '-c': '1001' is not a whole number from 0 to 1000", "-c", "1001");
	ERR("option '-c': '-1' is not a whole number from 0 to 1000", "-c", "-1");
	ERR("option '-c': ' 1' is not a whole number from 0 to 1000", "-c", " 1");
	ERR("option '-c': '+1' is not a whole number from 0 to 1000", "-c", "+1");
	ERR("option '-c': '0x10' is not a whole number from 0 to 1000", "-c", "0x10");
	ERR("option '-c': '' is not a whole number from 0 to 1000", "-c", "");
	ERR("option '-w': '99999999999999999999' is not a whole number from -5 to 5", "-w", "99999999999999999999");
	ERR("option '-d': bad duration '1x' (e.g. 1.5s, 100ms, 2h, 1h30m; a number alone is seconds)", "-d", "1x");
	ERR("option '--interval': duration '10ms' out of range (100ms to 1h)", "--interval=10ms");
	ERR("option '--mem': size '65G' out of range (1 to 64G)", "--mem", "65G");
	ERR("option '--format': 'xml' is not one of text, csv, json", "--format", "xml");
	ERR("option '--format': 'a?b' is not one of text, csv, json", "--format", "a\nb");
}

static void test_value_parse_for_a_value_read_elsewhere(void **state)
{
	(void)state;
	char err[256];
	struct opt_value v;
	assert_int_equal(opt_value_parse(&specs[O_INTERVAL], "250ms", &v, err, sizeof(err)), 0);
	assert_int_equal(v.num, 250000000);
	assert_int_equal(opt_value_parse(&specs[O_INTERVAL], "5h", &v, err, sizeof(err)), -1);
	assert_string_equal(err, "option '--interval': duration '5h' out of range (100ms to 1h)");
	char spelled[16];
	assert_string_equal(opt_spelling(&specs[O_SHORT_ONLY], spelled, sizeof(spelled)), "-w");
}

static void test_unbounded_int_is_zero_up(void **state)
{
	(void)state;
	static const struct opt_spec any = { "n", 0, OPT_INT, NULL, "n", NULL, 0, 0, NULL };
	char err[256];
	struct opt_value v;
	assert_int_equal(opt_value_parse(&any, "9223372036854775807", &v, err, sizeof(err)), 0);
	assert_int_equal(v.num, LLONG_MAX);
	assert_int_equal(opt_value_parse(&any, "-1", &v, err, sizeof(err)), -1);
}

static void test_number_within_its_range(void **state)
{
	(void)state;
	static const struct opt_spec hours = { "hours", 0, OPT_NUMBER, "H", "h", NULL, 0, OPT_MILLI(1e6), NULL };
	static const struct opt_spec scale = { "scale", 0, OPT_NUMBER, "F", "s", NULL, OPT_MILLI(0.05), OPT_MILLI(100),
					       NULL };
	static const struct opt_spec none = { "none", 0, OPT_NUMBER, "X", "n", NULL, 0, 0, NULL };
	char err[256];
	struct opt_value v;
	assert_int_equal(opt_value_parse(&hours, "12.5", &v, err, sizeof(err)), 0);
	assert_true(v.real == 12.5);
	assert_int_equal(opt_value_parse(&hours, "2k", &v, err, sizeof(err)), 0);
	assert_true(v.real == 2000);
	assert_int_equal(opt_value_parse(&hours, "1e6", &v, err, sizeof(err)), 0);
	assert_int_equal(opt_value_parse(&hours, "1e308", &v, err, sizeof(err)), -1);
	assert_string_equal(err, "option '--hours': '1e308' is not a number from 0 to 1M");
	const char *bad[] = { "inf", "nan", "0x10", "", "1e", "1.2.3", "-1", "2kk", "1e999", " 1", "1 " };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(opt_value_parse(&hours, bad[i], &v, err, sizeof(err)), -1);
	assert_int_equal(opt_value_parse(&scale, "0.05", &v, err, sizeof(err)), 0);
	assert_int_equal(opt_value_parse(&scale, "0.04", &v, err, sizeof(err)), -1);
	assert_string_equal(err, "option '--scale': '0.04' is not a number from 0.05 to 100");
	/* a row without a range takes nothing */
	assert_int_equal(opt_value_parse(&none, "1", &v, err, sizeof(err)), -1);
}

/* OPT_LENGTH: 4k is 4096 tokens; OPT_HOURS: a number of hours or a duration (issue 36). */
static void test_length_and_hours(void **state)
{
	(void)state;
	static const struct opt_spec seq = { "seq", 0, OPT_LENGTH, "N", "s", NULL, 0, 1000000000, NULL };
	static const struct opt_spec hours = { "hours", 0, OPT_HOURS, "H", "h", NULL, 0, OPT_MILLI(1e6), NULL };
	char err[256];
	struct opt_value v;
	assert_int_equal(opt_value_parse(&seq, "4k", &v, err, sizeof(err)), 0);
	assert_int_equal(v.num, 4096);
	assert_true(v.real == 4096);
	assert_int_equal(opt_value_parse(&seq, "4096", &v, err, sizeof(err)), 0);
	assert_int_equal(v.num, 4096);
	assert_int_equal(opt_value_parse(&seq, "4B", &v, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "option '--seq': bad length '4B'"));
	assert_int_equal(opt_value_parse(&hours, "2h", &v, err, sizeof(err)), 0);
	assert_true(v.real == 2);
	assert_int_equal(opt_value_parse(&hours, "90m", &v, err, sizeof(err)), 0);
	assert_true(v.real == 1.5);
	assert_int_equal(opt_value_parse(&hours, "1d12h", &v, err, sizeof(err)), 0);
	assert_true(v.real == 36);
	assert_int_equal(opt_value_parse(&hours, "1.5", &v, err, sizeof(err)), 0);
	assert_true(v.real == 1.5);
	assert_int_equal(opt_value_parse(&hours, "1h30", &v, err, sizeof(err)), -1);
	assert_int_equal(opt_value_parse(&hours, "2x", &v, err, sizeof(err)), -1);
	assert_int_equal(opt_value_parse(&hours, "100000000h", &v, err, sizeof(err)), -1);
	assert_string_equal(err, "option '--hours': '100000000h' is not a number of hours from 0 to 1M nor a duration "
				 "(2h, 90m, 1d)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_long_and_short_spellings_give_the_same),
		cmocka_unit_test(test_flags_bundle_and_a_value_ends_the_bundle),
		cmocka_unit_test(test_every_kind_reads_its_value),
		cmocka_unit_test(test_operands_and_double_dash),
		cmocka_unit_test(test_help_and_a_kept_spelling),
		cmocka_unit_test(test_pass_through_takes_only_the_tables_options),
		cmocka_unit_test(test_errors_are_one_line_naming_the_option_as_spelled),
		cmocka_unit_test(test_value_parse_for_a_value_read_elsewhere),
		cmocka_unit_test(test_unbounded_int_is_zero_up),
		cmocka_unit_test(test_number_within_its_range),
		cmocka_unit_test(test_length_and_hours),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
