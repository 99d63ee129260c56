/* SPDX-License-Identifier: Apache-2.0 */
/* test_bench_latency.c - the latency sweep's working sets, which of them count
 * towards the L1, L2 and HBM figures, and the staircase's plateaus. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "bench/latency.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define GiB (1ull << 30)

static void test_sweep_sizes(void **state)
{
	(void)state;
	uint64_t ws[64];
	/* quick on an H200 (L2 50 MiB): every second octave, every octave from 256 MiB */
	unsigned n = bench_latency_sweep(16 * KiB, GiB, bench_pow2_floor(8 * 50 * MiB), ws, 64);
	static const uint64_t want[] = { 16 * KiB, 64 * KiB, 256 * KiB, MiB, 4 * MiB, 16 * MiB, 64 * MiB,
					 256 * MiB, 512 * MiB, GiB };
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(ws[i], want[i]);
	/* full: every octave, 16 KiB .. 8 GiB = 20 points, ending at hi */
	n = bench_latency_sweep(16 * KiB, 8 * GiB, 16 * KiB, ws, 64);
	assert_int_equal(n, 20);
	assert_int_equal(ws[0], 16 * KiB);
	assert_int_equal(ws[19], 8 * GiB);
	for (unsigned i = 1; i < n; i++)
		assert_int_equal(ws[i], 2 * ws[i - 1]);
	/* hi an odd number of octaves away is still the last point */
	n = bench_latency_sweep(16 * KiB, 32 * KiB, 1 * GiB, ws, 64);
	assert_int_equal(n, 2);
	assert_int_equal(ws[1], 32 * KiB);
	/* at most max points */
	assert_int_equal(bench_latency_sweep(16 * KiB, 8 * GiB, 16 * KiB, ws, 5), 5);
	assert_int_equal(ws[4], 256 * KiB);
	/* not powers of two, or reversed: nothing */
	assert_int_equal(bench_latency_sweep(3000, GiB, GiB, ws, 64), 0);
	assert_int_equal(bench_latency_sweep(GiB, 16 * KiB, GiB, ws, 64), 0);
	assert_int_equal(bench_pow2_floor(400 * MiB), 256 * MiB);
	assert_int_equal(bench_pow2_floor(512 * MiB), 512 * MiB);
	assert_int_equal(bench_pow2_floor(0), 0);
}

static void test_levels(void **state)
{
	(void)state;
	uint64_t l2 = 50 * MiB; /* H200 */
	assert_int_equal(bench_latency_level(16 * KiB, l2), BLAT_L1);
	assert_int_equal(bench_latency_level(32 * KiB, l2), BLAT_L1);
	assert_int_equal(bench_latency_level(256 * KiB, l2), BLAT_NONE); /* between L1 and L2 */
	assert_int_equal(bench_latency_level(MiB, l2), BLAT_L2);
	assert_int_equal(bench_latency_level(8 * MiB, l2), BLAT_L2);
	assert_int_equal(bench_latency_level(16 * MiB, l2), BLAT_NONE); /* over L2/4: the far partition shows */
	assert_int_equal(bench_latency_level(256 * MiB, l2), BLAT_NONE); /* 5x L2: under 8x */
	assert_int_equal(bench_latency_level(400 * MiB, l2), BLAT_HBM);
	assert_int_equal(bench_latency_level(8 * GiB, l2), BLAT_HBM);
	/* A100 40 GB: 40 MiB of L2 -> HBM from 320 MiB */
	assert_int_equal(bench_latency_level(256 * MiB, 40 * MiB), BLAT_NONE);
	assert_int_equal(bench_latency_level(512 * MiB, 40 * MiB), BLAT_HBM);
	assert_int_equal(bench_latency_level(GiB, 0), BLAT_NONE); /* L2 unknown */
	assert_string_equal(bench_lat_level_name(BLAT_HBM), "hbm");
	assert_string_equal(bench_lat_level_name(BLAT_L2), "l2");
	assert_string_equal(bench_lat_level_name(BLAT_L1), "l1");
	assert_string_equal(bench_lat_level_name(BLAT_NONE), "");
}

static void test_staircase(void **state)
{
	(void)state;
	/* the reference chase on an H200, plus an L1 step */
	static const uint64_t ws[] = { 16 * KiB, 64 * KiB, 256 * KiB, MiB, 4 * MiB, 16 * MiB, 32 * MiB, 64 * MiB,
				       128 * MiB, 1 * GiB, 8 * GiB };
	static const double ns[] = { 32, 33, 140, 146, 146, 148, 209, 309, 324, 330, 342 };
	struct bench_lat_step st[8];
	unsigned n = bench_latency_steps(ws, ns, 11, 1.3, st, 8);
	assert_int_equal(n, 4);
	assert_int_equal(st[0].first_ws, 16 * KiB);
	assert_int_equal(st[0].last_ws, 64 * KiB);
	assert_float_equal(st[0].ns, 32.5, 1e-9);
	assert_int_equal(st[1].first_ws, 256 * KiB);
	assert_int_equal(st[1].last_ws, 16 * MiB);
	assert_float_equal(st[1].ns, 146, 1e-9);
	assert_int_equal(st[1].npoints, 4);
	assert_int_equal(st[2].first_ws, 32 * MiB); /* the transition: its own step */
	assert_int_equal(st[2].npoints, 1);
	assert_int_equal(st[3].first_ws, 64 * MiB);
	assert_int_equal(st[3].last_ws, 8 * GiB);
	assert_float_equal(st[3].ns, 327, 1e-9);
	/* failed points (NAN) are skipped; at most max plateaus */
	double holes[] = { 32, NAN, 140, -1, 150, 330, 331, 335, 340, 342, 345 };
	n = bench_latency_steps(ws, holes, 11, 1.3, st, 8);
	assert_int_equal(n, 3);
	assert_int_equal(st[1].npoints, 2);
	assert_int_equal(bench_latency_steps(ws, ns, 11, 1.3, st, 2), 2);
	assert_int_equal(bench_latency_steps(ws, ns, 0, 1.3, st, 8), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sweep_sizes),
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_staircase),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
