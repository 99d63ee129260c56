/* SPDX-License-Identifier: Apache-2.0 */
/* test_units.c - the one grammar of durations and byte sizes (core/units.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "core/units.h"

#define S UNITS_NS_PER_S
#define ANY_NS 0, UINT64_MAX

static uint64_t duration_ok(const char *s)
{
	char err[256] = "";
	uint64_t ns = 12345;
	if (units_parse_duration(s, ANY_NS, &ns, err, sizeof(err)) != 0)
		fail_msg("'%s' refused: %s", s, err);
	return ns;
}

static void duration_bad(const char *s, const char *want_in_err)
{
	char err[256] = "";
	uint64_t ns = 777;
	if (units_parse_duration(s, 1, 1000 * UNITS_NS_PER_DAY, &ns, err, sizeof(err)) == 0)
		fail_msg("'%s' accepted as %llu ns", s, (unsigned long long)ns);
	assert_int_equal(ns, 777); /* untouched on error */
	if (!strstr(err, want_in_err))
		fail_msg("'%s': message '%s' lacks '%s'", s, err, want_in_err);
	assert_null(strchr(err, '\n'));
}

static void test_duration_every_unit(void **state)
{
	(void)state;
	assert_int_equal(duration_ok("7ns"), 7);
	assert_int_equal(duration_ok("7us"), 7000);
	assert_int_equal(duration_ok("100ms"), 100000000);
	assert_int_equal(duration_ok("2s"), 2 * S);
	assert_int_equal(duration_ok("3m"), 180 * S);
	assert_int_equal(duration_ok("2h"), 7200 * S);
	assert_int_equal(duration_ok("1d"), 86400 * S);
}

static void test_duration_plain_number_is_seconds(void **state)
{
	(void)state;
	assert_int_equal(duration_ok("30"), 30 * S);
	assert_int_equal(duration_ok("0"), 0);
	assert_int_equal(duration_ok("0.5"), S / 2);
	assert_int_equal(duration_ok(".25"), S / 4);
	assert_int_equal(duration_ok("1."), S);
}

static void test_duration_fractions_are_exact(void **state)
{
	(void)state;
	assert_int_equal(duration_ok("1.5s"), 1500000000);
	assert_int_equal(duration_ok("0.1s"), 100000000); /* not 99999999 as 0.1 * 1e9 in floating point */
	assert_int_equal(duration_ok("0.3"), 300000000);
	assert_int_equal(duration_ok("1.5h"), 5400 * S);
	assert_int_equal(duration_ok("0.000000001s"), 1);
	assert_int_equal(duration_ok("0.5ns"), 0); /* below a nanosecond: dropped */
	assert_int_equal(duration_ok("2.999999999ms"), 2999999);
	assert_int_equal(duration_ok("0.123456789d"), 10666666569600ull);
}

static void test_duration_compound_largest_first(void **state)
{
	(void)state;
	assert_int_equal(duration_ok("1h30m"), 5400 * S);
	assert_int_equal(duration_ok("1d12h"), 36 * 3600 * S);
	assert_int_equal(duration_ok("1m30s"), 90 * S);
	assert_int_equal(duration_ok("1s500ms"), 1500000000);
	assert_int_equal(duration_ok("1d1h1m1s1ms1us1ns"), 90061001001001ull);
	duration_bad("30m1h", "bad duration");  /* smaller before larger */
	duration_bad("1h1h", "bad duration");   /* a unit twice */
	duration_bad("1h30", "bad duration");   /* a number without a unit after one with */
	duration_bad("1s1m", "bad duration");
}

static void test_duration_refuses_other_forms(void **state)
{
	(void)state;
	const char *bad[] = { "", "s", "ms", "-1s", "+1s", "1e3", "1e3s", "0x10", "inf", "nan", " 1s", "1s ",
			      "1 s", "1S", "1sec", "1min", "1w", "1y", "1..5s", "1.2.3", ".", ".s", "1,5s",
			      "1.0000000001s", "1s\n", "1\t", "\xff", "1µs", "10:00", "1-2" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		duration_bad(bad[i], "bad duration '");
	char err[256];
	uint64_t ns;
	assert_int_equal(units_parse_duration(NULL, ANY_NS, &ns, err, sizeof(err)), -1);
}

static void test_duration_range(void **state)
{
	(void)state;
	char err[256];
	uint64_t ns = 0;
	assert_int_equal(units_parse_duration("10ms", 10000000, 3600 * S, &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 10000000);
	assert_int_equal(units_parse_duration("1h", 10000000, 3600 * S, &ns, err, sizeof(err)), 0);
	assert_int_equal(units_parse_duration("9ms", 10000000, 3600 * S, &ns, err, sizeof(err)), -1);
	assert_string_equal(err, "duration '9ms' out of range (10ms to 1h)");
	assert_int_equal(units_parse_duration("1h0m0s1ns", 10000000, 3600 * S, &ns, err, sizeof(err)), -1);
	assert_string_equal(err, "duration '1h0m0s1ns' out of range (10ms to 1h)");
	/* past 2^64 ns (584 years): out of range, not wrapped round */
	assert_int_equal(units_parse_duration("213503d23h", ANY_NS, &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 213503ull * 86400 * S + 23ull * 3600 * S);
	assert_int_equal(units_parse_duration("213503d24h", ANY_NS, &ns, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(units_parse_duration("213504d", ANY_NS, &ns, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(units_parse_duration("99999999999999999999", ANY_NS, &ns, err, sizeof(err)), -1);
	assert_int_equal(units_parse_duration("18446744073709551615ns", ANY_NS, &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, UINT64_MAX);
}

static void test_message_is_one_line_and_bounded(void **state)
{
	(void)state;
	char err[256];
	uint64_t v;
	assert_int_equal(units_parse_duration("a\nb\x7f", ANY_NS, &v, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'a?b?'"));
	char longer[200];
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	assert_int_equal(units_parse_size(longer, 0, UINT64_MAX, &v, err, sizeof(err)), -1);
	assert_true(strlen(err) < 200);
	/* a small buffer is cut, not overrun */
	char tiny[8];
	assert_int_equal(units_parse_size("zz", 0, UINT64_MAX, &v, tiny, sizeof(tiny)), -1);
	assert_int_equal(strlen(tiny), 7);
}

static uint64_t size_ok(const char *s)
{
	char err[256] = "";
	uint64_t b = 12345;
	if (units_parse_size(s, 0, UINT64_MAX, &b, err, sizeof(err)) != 0)
		fail_msg("'%s' refused: %s", s, err);
	return b;
}

static void test_size_powers_of_1024_whatever_the_spelling(void **state)
{
	(void)state;
	const char *suffix[] = { "", "B", "iB" };
	const char prefix[] = "KMGTP";
	for (unsigned p = 0; p < 5; p++)
		for (unsigned sfx = 0; sfx < 3; sfx++)
			for (unsigned lower = 0; lower < 2; lower++) {
				char s[16];
				snprintf(s, sizeof(s), "3%c%s", lower ? prefix[p] - 'A' + 'a' : prefix[p], suffix[sfx]);
				assert_int_equal(size_ok(s), 3ull << (10 * (p + 1)));
			}
	assert_int_equal(size_ok("4096"), 4096);
	assert_int_equal(size_ok("4096B"), 4096);
	assert_int_equal(size_ok("0"), 0);
	assert_int_equal(size_ok("1.5K"), 1536);
	assert_int_equal(size_ok("1.5T"), 3ull << 39);
	assert_int_equal(size_ok("0.1K"), 102); /* 102.4: rounded down to whole bytes */
	assert_int_equal(size_ok("16383P"), 16383ull << 50);
}

static void test_size_refuses_other_forms(void **state)
{
	(void)state;
	const char *bad[] = { "", "K", "B", "-1K", "1e3", "0x10", "inf", "nan", " 1K", "1K ", "1 K", "1b", "1kb",
			      "1Kib", "1KiB ", "1KBB", "1Ki", "1iB", "1E", "1Z", "1KM", "1.2.3", "1,5G", "\x01" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[256];
		uint64_t b = 9;
		if (units_parse_size(bad[i], 0, UINT64_MAX, &b, err, sizeof(err)) == 0)
			fail_msg("'%s' accepted as %llu", bad[i], (unsigned long long)b);
		assert_int_equal(b, 9);
		assert_non_null(strstr(err, "bad size '"));
	}
}

static void test_size_range(void **state)
{
	(void)state;
	char err[256];
	uint64_t b;
	assert_int_equal(units_parse_size("64G", 1, 64ull << 30, &b, err, sizeof(err)), 0);
	assert_int_equal(units_parse_size("65G", 1, 64ull << 30, &b, err, sizeof(err)), -1);
	assert_string_equal(err, "size '65G' out of range (1 to 64G)");
	assert_int_equal(units_parse_size("0", 1, 64ull << 30, &b, err, sizeof(err)), -1);
	assert_int_equal(units_parse_size("16384P", 0, UINT64_MAX, &b, err, sizeof(err)), -1); /* 2^64 */
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(units_parse_size("18446744073709551615", 0, UINT64_MAX, &b, err, sizeof(err)), 0);
	assert_int_equal(b, UINT64_MAX);
}

static void test_formats_read_back(void **state)
{
	(void)state;
	char out[32];
	const struct { uint64_t ns; const char *text; } d[] = {
		{ 0, "0s" }, { 1, "1ns" }, { 1500, "1500ns" }, { 100000000, "100ms" }, { S, "1s" },
		{ 1500000000, "1500ms" }, { 90 * S, "90s" }, { 3600 * S, "1h" }, { 86400 * S, "1d" },
		{ 366 * 86400 * S, "366d" }, { UINT64_MAX, "18446744073709551615ns" },
	};
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		units_fmt_duration(d[i].ns, out, sizeof(out));
		assert_string_equal(out, d[i].text);
		assert_int_equal(duration_ok(out), d[i].ns);
	}
	const struct { uint64_t b; const char *text; } z[] = {
		{ 0, "0" }, { 1, "1" }, { 1536, "1536" }, { 4096, "4K" }, { 64ull << 30, "64G" },
		{ 3ull << 40, "3T" }, { 1ull << 60, "1024P" }, { UINT64_MAX, "18446744073709551615" },
	};
	for (size_t i = 0; i < sizeof(z) / sizeof(z[0]); i++) {
		units_fmt_size(z[i].b, out, sizeof(out));
		assert_string_equal(out, z[i].text);
		assert_int_equal(size_ok(out), z[i].b);
	}
}

/* Token lengths: K and M are powers of 1024, as model cards' "4k" and "128k" mean (issue 36). */
static void test_length_k_is_1024(void **state)
{
	(void)state;
	char err[256] = "";
	uint64_t n = 0;
	const struct { const char *in; uint64_t want; } ok[] = {
		{ "2048", 2048 }, { "4k", 4096 }, { "4K", 4096 }, { "32k", 32768 }, { "128k", 131072 },
		{ "1.5k", 1536 }, { "1M", 1048576 }, { "0", 0 },
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if (units_parse_length(ok[i].in, 0, UINT64_MAX, &n, err, sizeof(err)))
			fail_msg("'%s' refused: %s", ok[i].in, err);
		assert_int_equal(n, ok[i].want);
	}
	const char *bad[] = { "", "k", "4kk", "4KB", "4G", "1.5", "0.1k", "-1", "+1", "4 k", "1e3", "0x10", "4T" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = 99;
		if (units_parse_length(bad[i], 0, UINT64_MAX, &n, err, sizeof(err)) == 0)
			fail_msg("'%s' accepted as %llu", bad[i], (unsigned long long)n);
		assert_int_equal(n, 99);
		assert_non_null(strstr(err, "length"));
	}
	assert_int_equal(units_parse_length("1.5", 0, UINT64_MAX, &n, err, sizeof(err)), -1);
	assert_string_equal(err, "bad length '1.5' (whole tokens, e.g. 2048, 4k = 4096, 128k = 131072: K and M are "
				 "powers of 1024)");
	assert_int_equal(units_parse_length("2M", 1, 1ull << 20, &n, err, sizeof(err)), -1);
	assert_string_equal(err, "length '2M' out of range (1 to 1M)");
}

/* Where a number alone meant minutes (Slurm's --time, the pool's retention), it is refused with the fix. */
static void test_seconds_refuse_a_bare_number(void **state)
{
	(void)state;
	char err[256] = "";
	uint64_t s = 0;
	assert_int_equal(units_parse_seconds("30", "time limit", 0, UINT64_MAX, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "bad time limit '30': a number alone is ambiguous here; write 30m or 30s");
	assert_int_equal(units_parse_seconds("1.5", "retention", 0, UINT64_MAX, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "bad retention '1.5': a number alone is ambiguous here; write 1.5m or 1.5s");
	assert_int_equal(units_parse_seconds("30m", "x", 0, UINT64_MAX, &s, err, sizeof(err)), 0);
	assert_int_equal(s, 1800);
	assert_int_equal(units_parse_seconds("1h30m", "x", 0, UINT64_MAX, &s, err, sizeof(err)), 0);
	assert_int_equal(s, 5400);
	assert_int_equal(units_parse_seconds("0", "x", 0, UINT64_MAX, &s, err, sizeof(err)), 0);
	assert_int_equal(s, 0);
	assert_int_equal(units_parse_seconds("1500ms", "x", 0, UINT64_MAX, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "bad x '1500ms' (whole seconds here, e.g. 90s, 30m, 2h)");
	assert_int_equal(units_parse_seconds("2h", "x", 1, 3600, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "duration '2h' out of range (1s to 1h)");
	assert_true(units_is_bare_number("30"));
	assert_true(units_is_bare_number("0.5"));
	assert_false(units_is_bare_number("30s"));
	assert_false(units_is_bare_number(""));
	assert_false(units_is_bare_number("1:00"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration_every_unit),
		cmocka_unit_test(test_duration_plain_number_is_seconds),
		cmocka_unit_test(test_duration_fractions_are_exact),
		cmocka_unit_test(test_duration_compound_largest_first),
		cmocka_unit_test(test_duration_refuses_other_forms),
		cmocka_unit_test(test_duration_range),
		cmocka_unit_test(test_message_is_one_line_and_bounded),
		cmocka_unit_test(test_size_powers_of_1024_whatever_the_spelling),
		cmocka_unit_test(test_size_refuses_other_forms),
		cmocka_unit_test(test_size_range),
		cmocka_unit_test(test_formats_read_back),
		cmocka_unit_test(test_length_k_is_1024),
		cmocka_unit_test(test_seconds_refuse_a_bare_number),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
