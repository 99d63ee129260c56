/* SPDX-License-Identifier: Apache-2.0 */
/* test_health_leak.c - the GPU memory-leak detector (src/health/leak.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "health/leak.h"

#define MIB (1024.0 * 1024.0)
#define S(t) ((uint64_t)(t) * 1000000000ULL)

static void test_steady_growth_leaks(void **state)
{
	(void)state;
	struct leak_sample s[11];
	for (int i = 0; i <= 10; i++) /* 10 MiB per 30 s for 300 s: 0.333 MiB/s */
		s[i] = (struct leak_sample){ S(30 * i), (uint64_t)(1024 * MIB + 10 * MIB * i) };
	struct leak_params p;
	leak_params_default(&p);
	p.min_growth = 64 * MIB;
	struct leak_result r;
	assert_int_equal(leak_detect(s, 11, &p, &r), 0);
	assert_true(r.enough_data);
	assert_true(r.leaking);
	assert_float_equal(r.rate, 10 * MIB / 30, 1.0);
	assert_float_equal(r.growth, 100 * MIB, 0.5);
	assert_float_equal(r.window_s, 300, 1e-9);
	assert_float_equal(r.rising_share, 1.0, 1e-12);
}

static void test_flat_and_cyclic_do_not_leak(void **state)
{
	(void)state;
	struct leak_sample flat[10], saw[20];
	for (int i = 0; i < 10; i++)
		flat[i] = (struct leak_sample){ S(60 * i), (uint64_t)(4096 * MIB) };
	/* allocate-free cycles with a small upward drift: most steps go down half the time */
	for (int i = 0; i < 20; i++)
		saw[i] = (struct leak_sample){ S(30 * i), (uint64_t)((i % 2 ? 3072 : 1024) * MIB + i * 20 * MIB) };
	struct leak_params p;
	leak_params_default(&p);
	p.min_growth = 64 * MIB;
	struct leak_result r;
	assert_int_equal(leak_detect(flat, 10, &p, &r), 0);
	assert_false(r.leaking);
	assert_float_equal(r.rate, 0, 1e-9);
	assert_int_equal(leak_detect(saw, 20, &p, &r), 0);
	assert_false(r.leaking);
	assert_true(r.rising_share < 0.8);
}

static void test_short_window_not_judged(void **state)
{
	(void)state;
	struct leak_sample s[6];
	for (int i = 0; i < 6; i++) /* fast growth but only 50 s of data */
		s[i] = (struct leak_sample){ S(10 * i), (uint64_t)(1024 * MIB * (i + 1)) };
	struct leak_result r;
	assert_int_equal(leak_detect(s, 6, NULL, &r), 0);
	assert_false(r.enough_data);
	assert_false(r.leaking);
	assert_true(r.rate > 0);
	/* out of time order is an error */
	s[3].t_ns = 0;
	assert_int_equal(leak_detect(s, 6, NULL, &r), -1);
	assert_int_equal(leak_detect(s, 0, NULL, &r), 0);
	assert_false(r.leaking);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steady_growth_leaks),
		cmocka_unit_test(test_flat_and_cyclic_do_not_leak),
		cmocka_unit_test(test_short_window_not_judged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
