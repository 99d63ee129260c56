/* SPDX-License-Identifier: Apache-2.0 */
/* test_stats.c - median, min, max, spread and percentiles of samples. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "core/stats.h"

static void test_odd_count_median_is_middle(void **state)
{
	(void)state;
	const double x[] = { 5.0, 1.0, 4.0, 2.0, 3.0 };
	struct stats s;
	assert_int_equal(stats_compute(x, 5, &s), 0);
	assert_int_equal(s.n, 5);
	assert_float_equal(s.median, 3.0, 1e-12);
	assert_float_equal(s.min, 1.0, 1e-12);
	assert_float_equal(s.max, 5.0, 1e-12);
	assert_float_equal(s.mean, 3.0, 1e-12);
	assert_float_equal(s.spread_pct, 100.0 * 4.0 / 3.0, 1e-9);
	/* sample standard deviation of 1..5 is sqrt(2.5) */
	assert_float_equal(s.stddev, sqrt(2.5), 1e-12);
	/* input order untouched */
	assert_float_equal(x[0], 5.0, 0.0);
}

static void test_even_count_median_interpolates(void **state)
{
	(void)state;
	const double x[] = { 10.0, 2.0, 8.0, 4.0 };
	struct stats s;
	assert_int_equal(stats_compute(x, 4, &s), 0);
	assert_float_equal(s.median, 6.0, 1e-12);
}

static void test_outlier_does_not_move_median(void **state)
{
	(void)state;
	double x[11];
	for (int i = 0; i < 10; i++)
		x[i] = 100.0 + i * 0.1;
	x[10] = 1e6; /* one sample hit by a context switch */
	struct stats s;
	assert_int_equal(stats_compute(x, 11, &s), 0);
	assert_true(s.median < 101.0);
	assert_float_equal(s.max, 1e6, 0.0);
	assert_true(s.mean > 1000.0);
}

static void test_single_sample(void **state)
{
	(void)state;
	const double x[] = { 7.5 };
	struct stats s;
	assert_int_equal(stats_compute(x, 1, &s), 0);
	assert_float_equal(s.median, 7.5, 0.0);
	assert_float_equal(s.p10, 7.5, 0.0);
	assert_float_equal(s.p90, 7.5, 0.0);
	assert_float_equal(s.stddev, 0.0, 0.0);
	assert_float_equal(s.spread_pct, 0.0, 0.0);
}

static void test_percentiles_linear(void **state)
{
	(void)state;
	const double sorted[] = { 0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0 };
	assert_float_equal(stats_percentile_sorted(sorted, 11, 10.0), 10.0, 1e-12);
	assert_float_equal(stats_percentile_sorted(sorted, 11, 95.0), 95.0, 1e-12);
	assert_float_equal(stats_percentile_sorted(sorted, 11, 0.0), 0.0, 0.0);
	assert_float_equal(stats_percentile_sorted(sorted, 11, 100.0), 100.0, 0.0);
	assert_true(isnan(stats_percentile_sorted(sorted, 11, 101.0)));
	assert_true(isnan(stats_percentile_sorted(sorted, 0, 50.0)));
	const double two[] = { 1.0, 3.0 };
	assert_float_equal(stats_percentile_sorted(two, 2, 25.0), 1.5, 1e-12);
}

static void test_bad_input_rejected(void **state)
{
	(void)state;
	struct stats s;
	assert_int_equal(stats_compute(NULL, 3, &s), -1);
	const double x[] = { 1.0, NAN, 2.0 };
	assert_int_equal(stats_compute(x, 0, &s), -1);
	assert_int_equal(s.n, 0);
	assert_true(isnan(s.median));
	assert_int_equal(stats_compute(x, 3, &s), -1);
	const double inf[] = { INFINITY };
	assert_int_equal(stats_compute(inf, 1, &s), -1);
}

static void test_zero_median_spread_is_nan(void **state)
{
	(void)state;
	const double x[] = { 0.0, 0.0, 0.0 };
	struct stats s;
	assert_int_equal(stats_compute(x, 3, &s), 0);
	assert_true(isnan(s.spread_pct));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_odd_count_median_is_middle),
		cmocka_unit_test(test_even_count_median_interpolates),
		cmocka_unit_test(test_outlier_does_not_move_median),
		cmocka_unit_test(test_single_sample),
		cmocka_unit_test(test_percentiles_linear),
		cmocka_unit_test(test_bad_input_rejected),
		cmocka_unit_test(test_zero_median_spread_is_nan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
