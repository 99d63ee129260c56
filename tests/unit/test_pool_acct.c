/* SPDX-License-Identifier: Apache-2.0 */
/* test_pool_acct.c - job accounting folded from snapshots: energy as the
 * counter's difference, average and peak, XIDs beyond the start's, throttle
 * reasons, and what is marked unknown rather than 0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "pool/acct.h"
#include "device/snapshot.h"

static struct snapshot *snap;

static void sample(unsigned g, uint64_t t_s, uint64_t util, uint64_t mem_mib, uint64_t energy_mj, uint64_t reasons)
{
	struct gpu_view *v = &snap->gpu[g];
	v->up = true;
	v->s.timestamp_ns = t_s * 1000000000ull;
	VAL_SET(v->s.util_gpu_pct, util);
	VAL_SET(v->s.mem_used_bytes, mem_mib << 20);
	VAL_SET(v->s.energy_mj, energy_mj);
	VAL_SET(v->s.clock_event_reasons, reasons);
	VAL_SET(v->s.viol_power_ns, t_s * 100);
	VAL_SET(v->s.viol_thermal_ns, 0);
}

static void test_fold(void **state)
{
	(void)state;
	snap = snapshot_new(GPU_MAX_GPUS);
	snap->n = 4;
	sample(1, 10, 0, 4, 1000000, CLK_EVT_GPU_IDLE);
	sample(3, 10, 0, 4, 5000000, 0);
	snap->gpu[3].nxid = 1; /* an XID seen before the job: not the job's */
	snap->gpu[3].xid[0].code = 48;
	snap->gpu[3].xid[0].count = 2;
	struct acct_job a = { 0 };
	unsigned gpus[] = { 1, 3 };
	assert_int_equal(acct_begin(&a, gpus, 2, snap), 0);
	acct_update(&a, snap); /* the same sample again: not folded */
	sample(1, 11, 80, 1000, 1700000, CLK_EVT_SW_POWER_CAP | CLK_EVT_GPU_IDLE);
	sample(3, 11, 50, 2000, 5400000, 0);
	acct_update(&a, snap);
	sample(1, 12, 100, 3000, 2400000, 0);
	sample(3, 12, 70, 2000, 5800000, 0);
	snap->gpu[3].nxid = 2;
	snap->gpu[3].xid[0].count = 3; /* one more 48 */
	snap->gpu[3].xid[1].code = 79;
	snap->gpu[3].xid[1].count = 1;
	acct_update(&a, snap);
	acct_update(&a, snap);

	struct acct_summary s;
	acct_summarize(&a, 0, 2000000000ull, &s);
	assert_int_equal(s.gpu, 1);
	assert_int_equal(s.samples, 2);
	assert_true(s.gpu_seconds == 2.0);
	assert_true(s.energy_ok);
	assert_true(s.energy_j == 1400.0); /* (2400000 - 1000000) mJ */
	assert_true(s.util_ok && s.util_avg_pct == 90.0 && s.util_peak_pct == 100.0);
	assert_true(s.mem_ok && s.mem_peak_bytes == (double)(3000ull << 20));
	assert_true(s.mem_avg_bytes == (double)(2000ull << 20));
	assert_int_equal(s.throttle_reasons, CLK_EVT_SW_POWER_CAP); /* idle is not throttling */
	assert_true(s.viol_ok && s.throttle_power_s > 0);
	assert_int_equal(s.nxid, 0);

	acct_summarize(&a, 1, 2000000000ull, &s);
	assert_true(s.energy_j == 800.0);
	assert_int_equal(s.nxid, 2);
	assert_int_equal(s.xid[0].code, 48);
	assert_int_equal(s.xid[0].count, 1);
	assert_int_equal(s.xid[1].code, 79);
	assert_int_equal(s.xid[1].count, 1);
	acct_free(&a);
	free(snap);
}

static void test_unknowns(void **state)
{
	(void)state;
	snap = snapshot_new(GPU_MAX_GPUS);
	snap->n = 1;
	sample(0, 10, 0, 4, 9000, 0);
	snap->gpu[0].s.energy_mj.st = VAL_UNSUPPORTED;
	struct acct_job a = { 0 };
	unsigned g = 0;
	assert_int_equal(acct_begin(&a, &g, 1, snap), 0);
	struct acct_summary s;
	acct_summarize(&a, 0, 1, &s);
	assert_false(s.energy_ok); /* no sample yet: nothing is known */
	assert_false(s.util_ok);
	assert_false(s.mem_ok);
	sample(0, 11, 10, 4, 9000, 0);
	snap->gpu[0].s.energy_mj.st = VAL_UNSUPPORTED;
	acct_update(&a, snap);
	acct_summarize(&a, 0, 1, &s);
	assert_false(s.energy_ok); /* unsupported counter: not a 0 J */
	assert_true(s.util_ok);
	/* a counter that goes back (driver reload) is no longer trusted */
	acct_free(&a);
	sample(0, 20, 10, 4, 9000, 0);
	assert_int_equal(acct_begin(&a, &g, 1, snap), 0);
	sample(0, 21, 10, 4, 100, 0);
	acct_update(&a, snap);
	acct_summarize(&a, 0, 1, &s);
	assert_false(s.energy_ok);
	/* a GPU that is down is not folded */
	sample(0, 22, 10, 4, 200, 0);
	snap->gpu[0].up = false;
	acct_update(&a, snap);
	acct_summarize(&a, 0, 1, &s);
	assert_int_equal(s.samples, 1);
	acct_free(&a);
	free(snap);
}

/* A sample read after the start but taken before it (the sampler reads GPUs
 * apart) is not the job's: found on 2x H200, where a 2-GPU job took the
 * previous job's 16 GiB peak from such a sample. */
static void test_not_before_start(void **state)
{
	(void)state;
	snap = snapshot_new(GPU_MAX_GPUS);
	snap->n = 1;
	sample(0, 10, 90, 16000, 1000, 0);
	struct acct_job a = { 0 };
	unsigned g = 0;
	assert_int_equal(acct_begin(&a, &g, 1, snap), 0);
	acct_set_start(&a, 12 * 1000000000ull);
	sample(0, 11, 90, 16000, 2000, 0); /* after the baseline, before the start */
	acct_update(&a, snap);
	struct acct_summary s;
	acct_summarize(&a, 0, 1, &s);
	assert_int_equal(s.samples, 0);
	sample(0, 13, 50, 4000, 3000, 0);
	acct_update(&a, snap);
	acct_summarize(&a, 0, 1, &s);
	assert_int_equal(s.samples, 1);
	assert_true(s.mem_peak_bytes == (double)(4000ull << 20));
	assert_true(s.util_peak_pct == 50.0);
	assert_true(s.energy_j == 2.0); /* from the counter before the start: (3000 - 1000) mJ */
	acct_free(&a);
	free(snap);
}

/* The GPM means: only the samples that have the figure count; none: not read. */
static void test_gpm(void **state)
{
	(void)state;
	snap = snapshot_new(GPU_MAX_GPUS);
	snap->n = 2;
	sample(0, 10, 0, 4, 1000, 0);
	sample(1, 10, 0, 4, 1000, 0);
	struct acct_job a = { 0 };
	unsigned gpus[] = { 0, 1 };
	assert_int_equal(acct_begin(&a, gpus, 2, snap), 0);
	uint64_t sm[] = { 90, 96, 0 };
	for (unsigned k = 0; k < 3; k++) {
		sample(0, 11 + k, 98, 4, 1000, 0);
		sample(1, 11 + k, 98, 4, 1000, 0);
		if (k < 2)
			VAL_SET(snap->gpu[0].s.prof_sm_active_pct, sm[k]);
		else
			snap->gpu[0].s.prof_sm_active_pct.st = VAL_ERROR; /* a failed read: not a 0 */
		VAL_SET(snap->gpu[0].s.prof_tensor_active_pct, 88);
		VAL_SET(snap->gpu[0].s.prof_dram_active_pct, 10 + k);
		snap->gpu[1].s.prof_sm_active_pct.st = VAL_UNSUPPORTED; /* an older GPU */
		acct_update(&a, snap);
	}
	struct acct_summary s;
	acct_summarize(&a, 0, 1, &s);
	assert_true(s.gpm_ok[ACCT_GPM_SM] && s.gpm_ok[ACCT_GPM_TENSOR] && s.gpm_ok[ACCT_GPM_DRAM]);
	assert_true(s.gpm_avg_pct[ACCT_GPM_SM] == 93);
	assert_true(s.gpm_avg_pct[ACCT_GPM_TENSOR] == 88);
	assert_true(s.gpm_avg_pct[ACCT_GPM_DRAM] == 11);
	acct_summarize(&a, 1, 1, &s);
	assert_true(s.util_ok);
	for (unsigned m = 0; m < ACCT_GPM_COUNT; m++)
		assert_false(s.gpm_ok[m]);
	assert_string_equal(acct_gpm_key(ACCT_GPM_TENSOR), "tensor_active_avg_pct");
	acct_free(&a);
	free(snap);
}

/* A job on a MIG slice: its GPM means are its GPU instance's, not the GPU's
 * (n/a with MIG on); an instance missing from a snapshot adds nothing. */
static void test_gpm_mig(void **state)
{
	(void)state;
	snap = snapshot_new(GPU_MAX_GPUS);
	snap->n = 1;
	sample(0, 10, 0, 4, 1000, 0);
	struct acct_job a = { 0 };
	unsigned g = 0;
	assert_int_equal(acct_begin(&a, &g, 1, snap), 0);
	acct_set_mig(&a, 9);
	struct gpu_view *v = &snap->gpu[0];
	uint64_t sm[] = { 20, 30, 0 };
	for (unsigned k = 0; k < 3; k++) {
		sample(0, 11 + k, 98, 4, 1000, 0);
		v->s.prof_sm_active_pct.st = VAL_UNSUPPORTED;
		v->nmig = k < 2 ? 2 : 1; /* the last snapshot lacks the instance */
		memset(v->mig, 0, 2 * sizeof(v->mig[0]));
		v->mig[0].gi_id = 2;
		VAL_SET(v->mig[0].prof_sm_active_pct, 95);
		v->mig[1].gi_id = 9;
		VAL_SET(v->mig[1].prof_sm_active_pct, sm[k]);
		VAL_SET(v->mig[1].prof_tensor_active_pct, 14);
		v->mig[1].prof_dram_active_pct.st = VAL_UNSUPPORTED;
		acct_update(&a, snap);
	}
	struct acct_summary s;
	acct_summarize(&a, 0, 1, &s);
	assert_true(s.gpm_ok[ACCT_GPM_SM] && s.gpm_ok[ACCT_GPM_TENSOR]);
	assert_true(s.gpm_avg_pct[ACCT_GPM_SM] == 25);
	assert_true(s.gpm_avg_pct[ACCT_GPM_TENSOR] == 14);
	assert_false(s.gpm_ok[ACCT_GPM_DRAM]);
	acct_free(&a); /* whole GPUs again */
	assert_false(a.mig);
	free(snap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fold),
		cmocka_unit_test(test_unknowns),
		cmocka_unit_test(test_not_before_start),
		cmocka_unit_test(test_gpm),
		cmocka_unit_test(test_gpm_mig),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
