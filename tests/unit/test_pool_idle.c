/* SPDX-License-Identifier: Apache-2.0 */
/* test_pool_idle.c - idle allocations (pool/idle.h) with an injected clock:
 * flagged only after the whole window under the threshold, a busy or an n/a
 * observation ends the stretch, a job is idle only when all its GPUs are, and
 * the warning's words. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "device/snapshot.h"
#include "pool/idle.h"

#define S 1000000000ull

static const struct idle_params p30 = { 5.0, 30 * 60 * S };

static void test_window(void **state)
{
	(void)state;
	struct idle_watch w = { 0 };
	uint64_t t0 = 1000 * S;
	assert_false(idle_observe(&w, &p30, t0, true, 0));          /* the stretch begins */
	assert_false(idle_observe(&w, &p30, t0 + 1799 * S, true, 4)); /* 4 % < 5 %: still idle, not yet 30 min */
	assert_true(idle_observe(&w, &p30, t0 + 1800 * S, true, 4.9));
	assert_true(w.flagged);
	assert_true(idle_observe(&w, &p30, t0 + 5000 * S, true, 0));
	/* busy once: the flag goes and the window starts again */
	assert_false(idle_observe(&w, &p30, t0 + 5001 * S, true, 5)); /* 5 is not under 5 */
	assert_false(w.flagged);
	assert_false(idle_observe(&w, &p30, t0 + 5002 * S, true, 0));
	assert_false(idle_observe(&w, &p30, t0 + 5002 * S + 1799 * S, true, 0));
	assert_true(idle_observe(&w, &p30, t0 + 5002 * S + 1800 * S, true, 0));
}

static void test_na_never_idle(void **state)
{
	(void)state;
	struct idle_watch w = { 0 };
	/* an older GPU: never a figure, never flagged however long */
	for (uint64_t t = 0; t <= 10 * 3600; t += 60)
		assert_false(idle_observe(&w, &p30, t * S, false, 0));
	/* an n/a in the middle ends the stretch: 30 min of measured idleness after it */
	assert_false(idle_observe(&w, &p30, 100000 * S, true, 0));
	assert_false(idle_observe(&w, &p30, 101000 * S, false, 0));
	assert_false(idle_observe(&w, &p30, 101001 * S, true, 0));
	assert_false(idle_observe(&w, &p30, 102000 * S, true, 0)); /* 999 s since the n/a */
	assert_true(idle_observe(&w, &p30, 101001 * S + 1800 * S, true, 0));
	/* and a flagged job's n/a unflags it */
	assert_false(idle_observe(&w, &p30, 200000 * S, false, 0));
	assert_false(w.flagged);
}

static void test_off_and_clock(void **state)
{
	(void)state;
	struct idle_params off = { 5.0, 0 };
	struct idle_watch w = { 0 };
	assert_false(idle_observe(&w, &off, 0, true, 0));
	assert_false(idle_observe(&w, &off, 1000000 * S, true, 0)); /* window off: never */
	/* the clock stepped back: the stretch begins again there */
	struct idle_params p = { 10.0, 10 * S };
	memset(&w, 0, sizeof(w));
	assert_false(idle_observe(&w, &p, 100 * S, true, 9));
	assert_false(idle_observe(&w, &p, 50 * S, true, 9));
	assert_false(idle_observe(&w, &p, 59 * S, true, 9));
	assert_true(idle_observe(&w, &p, 60 * S, true, 9));
}

static void gpu(struct snapshot *snap, unsigned g, uint64_t t_s, int sm)
{
	struct gpu_view *v = &snap->gpu[g];
	v->up = true;
	v->s.timestamp_ns = t_s * S;
	if (sm < 0)
		v->s.prof_sm_active_pct.st = VAL_UNSUPPORTED;
	else
		VAL_SET(v->s.prof_sm_active_pct, (uint64_t)sm);
}

static void test_job_sample(void **state)
{
	(void)state;
	struct snapshot *snap = snapshot_new(GPU_MAX_GPUS);
	assert_non_null(snap);
	snap->n = 4;
	gpu(snap, 0, 10, 0);
	gpu(snap, 1, 10, 40);
	gpu(snap, 2, 10, 3);
	gpu(snap, 3, 10, -1);
	double sm = -1;
	unsigned idle2[] = { 0, 2 }, mixed[] = { 0, 1 }, old[] = { 0, 3 }, gone[] = { 0, 7 };
	assert_true(idle_job_sample(snap, idle2, 2, 0, &sm));
	assert_true(sm == 3); /* the busiest GPU of the job */
	assert_true(idle_job_sample(snap, mixed, 2, 0, &sm));
	assert_true(sm == 40); /* one busy GPU: the job is not idle */
	assert_false(idle_job_sample(snap, old, 2, 0, &sm)); /* one GPU without GPM: n/a */
	assert_false(idle_job_sample(snap, gone, 2, 0, &sm)); /* not in the snapshot */
	assert_false(idle_job_sample(snap, idle2, 0, 0, &sm)); /* no GPUs */
	assert_false(idle_job_sample(snap, idle2, 2, 11 * S, &sm)); /* samples from before the job */
	snap->gpu[2].up = false;
	assert_false(idle_job_sample(snap, idle2, 2, 0, &sm));
	free(snap);
}

/* A job on a MIG slice: its GPU instance's own SM activity, n/a when the
 * instance has none or is gone. */
static void test_mig_sample(void **state)
{
	(void)state;
	struct snapshot *snap = snapshot_new(GPU_MAX_GPUS);
	assert_non_null(snap);
	snap->n = 1;
	gpu(snap, 0, 10, -1); /* MIG on: the GPU has no figure of its own */
	struct gpu_view *v = &snap->gpu[0];
	v->nmig = 2;
	memset(v->mig, 0, 2 * sizeof(v->mig[0]));
	v->mig[0].gi_id = 2;
	VAL_SET(v->mig[0].prof_sm_active_pct, 1);
	v->mig[1].gi_id = 9;
	VAL_SET(v->mig[1].prof_sm_active_pct, 60);
	double sm = -1;
	assert_true(idle_mig_sample(snap, 0, 2, 0, &sm));
	assert_true(sm == 1);
	assert_true(idle_mig_sample(snap, 0, 9, 0, &sm));
	assert_true(sm == 60);
	assert_false(idle_mig_sample(snap, 0, 5, 0, &sm));      /* no such instance */
	assert_false(idle_mig_sample(snap, 1, 2, 0, &sm));      /* not in the snapshot */
	assert_false(idle_mig_sample(snap, 0, 2, 11 * S, &sm)); /* samples from before the job */
	v->mig[0].prof_sm_active_pct.st = VAL_UNSUPPORTED;
	assert_false(idle_mig_sample(snap, 0, 2, 0, &sm)); /* no GPM for the instance: n/a, never idle */
	v->up = false;
	assert_false(idle_mig_sample(snap, 0, 9, 0, &sm));
	free(snap);
}

static void test_describe(void **state)
{
	(void)state;
	char buf[96];
	idle_describe(&p30, buf, sizeof(buf));
	assert_string_equal(buf, "idle allocation: SM activity < 5% for 30m");
	struct idle_params q = { 2.5, 90 * S };
	idle_describe(&q, buf, sizeof(buf));
	assert_string_equal(buf, "idle allocation: SM activity < 2.5% for 90s");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_na_never_idle),
		cmocka_unit_test(test_off_and_clock),
		cmocka_unit_test(test_job_sample),
		cmocka_unit_test(test_mig_sample),
		cmocka_unit_test(test_describe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
