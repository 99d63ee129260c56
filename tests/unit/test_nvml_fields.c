/* SPDX-License-Identifier: Apache-2.0 */
/* test_nvml_fields.c - the nvml backend's batched reads (nvml_fields.c)
 * through the fake NVML: the NVML calls each metric group costs per sample
 * (nvmlDeviceGetFieldValues instead of one call per value), each field's own
 * return code deciding its value's status, the fallback to single calls for
 * what the batch does not deliver or when the driver lacks or refuses it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device/nvml_priv.h"

#define NVL_ALL (GPU_GRP_NVLINK | GPU_GRP_NVLINK_ERR) /* link state and error counters */

#include "fake_nvml.h"

/* Samples GPU 0 with the groups; returns the NVML calls the backend counted. */
static unsigned long calls_for(struct gpu_backend *be, unsigned groups, struct gpu_sample *s)
{
	struct gpu_err err = { "" };
	assert_int_equal(be->ops->sample(be, 0, groups, s, &err), GPU_OK);
	return nvml_last_sample_calls(be, 0);
}

static void assert_nvlink_values(const struct gpu_sample *s)
{
	assert_int_equal(s->nvlink_n, 18);
	for (unsigned l = 0; l < 18; l++) {
		assert_int_equal(s->nvlink[l].active.st, VAL_OK);
		assert_int_equal(s->nvlink[l].active.v, 1);
		assert_int_equal(s->nvlink[l].crc_flit_errors.st, VAL_OK);
		assert_int_equal(s->nvlink[l].crc_flit_errors.v, l);
		assert_int_equal(s->nvlink[l].crc_data_errors.st, VAL_OK);
		assert_int_equal(s->nvlink[l].replay_errors.st, VAL_OK);
		assert_int_equal(s->nvlink[l].recovery_errors.st, VAL_OK);
		assert_int_equal(s->nvlink[l].recovery_errors.v, 0);
	}
}

/* The backend's clock, set by the tests. */
static uint64_t test_now_ns = 1000000000000ull;
static uint64_t test_clock(void *arg)
{
	(void)arg;
	return test_now_ns;
}

static void test_calls_per_group(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_sample s;
	be->now_ns = test_clock;
	calls_for(be, GPU_GRP_ALL, &s); /* the first sample learns the link facts and what the batch delivers */

	/* basic: util, memory, temperature, power limit, 2 clocks, P-state, clock
	 * events, and one batch for memory temperature and power (and the energy
	 * counter when asked for); the fan ("not supported" on the first sample)
	 * is not asked again */
	field_calls = field_values_asked = 0;
	assert_int_equal(calls_for(be, GPU_GRP_BASIC | GPU_GRP_ENERGY, &s), 9);
	assert_int_equal(s.fan_pct.st, VAL_UNSUPPORTED);
	assert_int_equal(field_calls, 1);
	assert_int_equal(field_values_asked, 4);
	assert_int_equal(s.power_mw.v, 75123);
	assert_int_equal(s.power_instant_mw.v, 80321); /* a field of the table's own (BATCH) */
	assert_int_equal(s.energy_mj.v, 123456789);
	assert_int_equal(s.temp_mem_c.v, 36);
	/* without the energy counter (top): not read, "not read" in the sample */
	field_values_asked = 0;
	assert_int_equal(calls_for(be, GPU_GRP_BASIC, &s), 9);
	assert_int_equal(field_values_asked, 3);
	assert_int_equal(s.energy_mj.st, VAL_UNKNOWN);
	assert_int_equal(s.power_mw.v, 75123);

	/* ECC: one batch and the SRAM counter; retired pages (not supported
	 * either way on this GPU) cost nothing after the first sample */
	assert_int_equal(calls_for(be, GPU_GRP_ECC, &s), 2);
	assert_int_equal(s.retired_pages_sbe.st, VAL_UNSUPPORTED);
	assert_int_equal(s.retired_pages_pending.st, VAL_UNSUPPORTED);
	assert_int_equal(s.ecc_vol_corrected.v, 1);
	assert_int_equal(s.ecc_agg_corrected.v, 10);
	assert_int_equal(s.ecc_agg_uncorrected.st, VAL_OK);
	assert_int_equal(s.ecc_dram_uncorrected.v, 2);
	assert_int_equal(s.remap_corrected.v, 1);
	assert_int_equal(s.remap_uncorrected.v, 2);
	assert_int_equal(s.remap_pending.v, 1);
	assert_int_equal(s.remap_failure.st, VAL_OK);
	assert_int_equal(s.remap_failure.v, 0);

	/* PCIe: gen, width, two throughput calls and the batch (replays, recoveries) */
	assert_int_equal(calls_for(be, GPU_GRP_PCIE, &s), 5);
	assert_int_equal(s.pcie_replays.v, 3);
	assert_int_equal(s.pcie_l0_recoveries.v, 4); /* a field of the table's own (BATCH) */

	/* NVLink, 18 links: was 90 calls. One batch for state, replay and
	 * recovery of all links (scoped ids) and both CRC counters of links 0-11;
	 * the CRC counters of links 12-17 have no field id whose meaning nvml.h
	 * states: their own calls, at most once a minute (the first sample read
	 * them; in between their last values are served) */
	field_calls = field_values_asked = 0;
	test_now_ns += NVML_LINK_COUNTER_PERIOD_NS - 1;
	assert_int_equal(calls_for(be, NVL_ALL, &s), 1);
	assert_int_equal(field_calls, 1);
	assert_int_equal(field_values_asked, 18 * 3 + 12 * 2);
	assert_nvlink_values(&s);
	test_now_ns += 1;
	assert_int_equal(calls_for(be, NVL_ALL, &s), 1 + 6 * 2);
	assert_nvlink_values(&s);
	assert_int_equal(calls_for(be, NVL_ALL, &s), 1);
	assert_nvlink_values(&s);

	/* violation counters: was 6 calls, now in the batch */
	assert_int_equal(calls_for(be, GPU_GRP_VIOL, &s), 1);
	assert_int_equal(s.viol_sync_boost_ns.v, 3000);
	assert_int_equal(s.viol_board_limit_ns.v, 4000);

	/* GPM (started by the first sample: the support query, two buffers):
	 * a reading and the metrics between it and the previous one */
	assert_int_equal(calls_for(be, GPU_GRP_GPM, &s), 2);
	assert_int_equal(s.prof_sm_active_pct.v, 93);

	/* everything at once: still one batch (was 123 calls), and GPM's two */
	field_calls = 0;
	test_now_ns += NVML_LINK_COUNTER_PERIOD_NS;
	assert_int_equal(calls_for(be, GPU_GRP_ALL, &s), 9 + 2 + 5 + 13 + 1 - 4 + 2);
	assert_int_equal(field_calls, 1);
}

/* A driver that answers the CRC counters of links 12-17 "not supported":
 * after the first sample the NVLink group is one call. */
static nvmlReturn_t f_nvl_err_low_links_only(nvmlDevice_t d, unsigned l, int c, unsigned long long *v)
{
	CHECK(d);
	if (l >= 12)
		return NVML_ERROR_NOT_SUPPORTED;
	*v = c == NVML_NVLINK_ERROR_DL_CRC_FLIT ? l : 0;
	return NVML_SUCCESS;
}

static void open_fake(struct gpu_backend *be, const struct nvml_api *api)
{
	struct gpu_err err = { "" };
	memset(be, 0, sizeof(*be));
	assert_int_equal(nvml_open_with_api(be, api, &err), GPU_OK);
}

static void test_nvlink_one_call(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct gpu_sample s;
	struct nvml_api api = fake();
	api.DeviceGetNvLinkErrorCounter = f_nvl_err_low_links_only;
	open_fake(&be, &api);
	calls_for(&be, NVL_ALL, &s);
	assert_int_equal(calls_for(&be, NVL_ALL, &s), 1);
	assert_int_equal(s.nvlink[12].crc_flit_errors.st, VAL_UNSUPPORTED);
	assert_int_equal(s.nvlink[12].replay_errors.st, VAL_OK);
	assert_int_equal(s.nvlink[11].crc_flit_errors.v, 11);
	gpu_backend_close(&be);
}

/* An H200: the per-link ids of links 0-11 answer "not supported" in the batch
 * (the scoped replay/recovery ids work), so every CRC counter of its 18 links
 * is an own call of 2.5 ms of CPU: 36 calls, made at most once a minute. */
static void test_nvlink_h200(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct gpu_sample s;
	struct nvml_api api = fake();
	legacy_link_ids_unsupported = true;
	open_fake(&be, &api);
	be.now_ns = test_clock;
	/* the first sample (which also learns the links' fixed facts): the batch,
	 * then the 36 CRC counters it did not deliver */
	assert_true(calls_for(&be, NVL_ALL, &s) >= 1 + 36);
	assert_nvlink_values(&s);
	assert_int_equal(s.nvlink_err_read_ns, 0); /* read with the sample */
	uint64_t read_ns = test_now_ns;
	/* a second later and for the rest of the minute: the batch (state, replay,
	 * recovery: 54 values) only, the CRC counters as last read (replay and
	 * recovery served from that reading too) and that reading's time: a rate
	 * runs between two readings of the counters */
	field_values_asked = 0;
	test_now_ns += 1000000000ull;
	assert_int_equal(calls_for(&be, NVL_ALL, &s), 1);
	assert_int_equal(field_values_asked, 18 * 3);
	assert_nvlink_values(&s);
	assert_int_equal(s.nvlink_err_read_ns, read_ns);
	test_now_ns += NVML_LINK_COUNTER_PERIOD_NS - 1000000000ull - 1;
	assert_int_equal(calls_for(&be, NVL_ALL, &s), 1);
	assert_int_equal(s.nvlink_err_read_ns, read_ns);
	test_now_ns += 1;
	assert_int_equal(calls_for(&be, NVL_ALL, &s), 1 + 36);
	assert_nvlink_values(&s);
	assert_int_equal(s.nvlink_err_read_ns, 0);
	/* a clock set back does not freeze them */
	test_now_ns -= 3600ull * 1000000000ull;
	assert_int_equal(calls_for(&be, NVL_ALL, &s), 1 + 36);
	/* GPU 1's link 3 is down, its counters still read */
	struct gpu_err err = { "" };
	assert_int_equal(be.ops->sample(&be, 1, NVL_ALL, &s, &err), GPU_OK);
	assert_int_equal(s.nvlink[3].active.v, 0);
	assert_int_equal(s.nvlink[3].crc_flit_errors.st, VAL_OK);
	/* the link state without the error counters (top): the batch of 18
	 * states, and not one CRC call even when a minute has passed */
	field_values_asked = 0;
	test_now_ns += NVML_LINK_COUNTER_PERIOD_NS;
	assert_int_equal(calls_for(&be, GPU_GRP_NVLINK, &s), 1);
	assert_int_equal(field_values_asked, 18);
	assert_int_equal(s.nvlink_n, 18);
	for (unsigned l = 0; l < 18; l++) {
		assert_int_equal(s.nvlink[l].active.st, VAL_OK);
		assert_int_equal(s.nvlink[l].crc_flit_errors.st, VAL_UNKNOWN);
		assert_int_equal(s.nvlink[l].replay_errors.st, VAL_UNKNOWN);
	}
	/* and the counters not read then are read when asked next */
	assert_int_equal(calls_for(&be, NVL_ALL, &s), 1 + 36);
	gpu_backend_close(&be);
}

/* Each field's own return code decides its value's status. */
static void test_field_status(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_sample s;
	field_rc[NVML_FI_DEV_REMAPPED_UNC] = NVML_ERROR_UNKNOWN;          /* failed: an error */
	field_rc[NVML_FI_DEV_ECC_DBE_VOL_TOTAL] = NVML_ERROR_NO_PERMISSION; /* failed: an error */
	field_rc[NVML_FI_DEV_NVLINK_GET_STATE] = NVML_ERROR_NOT_SUPPORTED; /* not here: its own call */
	field_rc[NVML_FI_DEV_MEMORY_TEMP] = NVML_ERROR_NOT_SUPPORTED;      /* no call of its own: not supported */
	be->now_ns = test_clock;
	calls_for(be, GPU_GRP_ALL, &s);
	assert_int_equal(s.remap_uncorrected.st, VAL_ERROR);
	assert_int_equal(s.ecc_vol_uncorrected.st, VAL_ERROR);
	assert_int_equal(s.remap_corrected.st, VAL_OK); /* the same call's other fields are fine */
	assert_int_equal(s.remap_corrected.v, 1);
	assert_int_equal(s.temp_mem_c.st, VAL_UNSUPPORTED);
	assert_nvlink_values(&s); /* states through nvmlDeviceGetNvLinkState */

	/* from now on: 18 state calls beside the batch, the memory temperature not
	 * asked (a minute later: with the CRC counters of links 12-17) */
	field_values_asked = 0;
	test_now_ns += NVML_LINK_COUNTER_PERIOD_NS;
	assert_int_equal(calls_for(be, NVL_ALL, &s), 1 + 12 + 18);
	assert_int_equal(field_values_asked, 18 * 2 + 12 * 2);
	assert_nvlink_values(&s);
	field_values_asked = 0;
	calls_for(be, GPU_GRP_BASIC | GPU_GRP_ENERGY, &s);
	assert_int_equal(field_values_asked, 3);
	assert_int_equal(s.temp_mem_c.st, VAL_UNSUPPORTED);

	/* a lost GPU answering inside the batch marks the sample lost */
	field_rc[NVML_FI_DEV_PCIE_REPLAY_COUNTER] = NVML_ERROR_GPU_IS_LOST;
	struct gpu_err err = { "" };
	assert_int_equal(be->ops->sample(be, 0, GPU_GRP_PCIE, &s, &err), GPU_ENODEV);
	assert_true(s.lost);
	assert_int_equal(s.pcie_replays.st, VAL_ERROR);
}

/* Compares the batched values with those read one call each. */
static void assert_same_values(const struct gpu_sample *a, const struct gpu_sample *b)
{
	const u64v *x[] = { &a->power_mw, &a->energy_mj, &a->ecc_vol_corrected, &a->ecc_vol_uncorrected,
			    &a->ecc_agg_corrected, &a->ecc_agg_uncorrected, &a->ecc_dram_uncorrected,
			    &a->ecc_sram_uncorrected, &a->retired_pages_sbe, &a->retired_pages_dbe,
			    &a->retired_pages_pending, &a->remap_corrected, &a->remap_uncorrected, &a->remap_pending,
			    &a->remap_failure, &a->pcie_replays, &a->viol_power_ns, &a->viol_thermal_ns,
			    &a->viol_sync_boost_ns, &a->viol_board_limit_ns, &a->viol_low_util_ns, &a->viol_reliability_ns };
	const u64v *y[] = { &b->power_mw, &b->energy_mj, &b->ecc_vol_corrected, &b->ecc_vol_uncorrected,
			    &b->ecc_agg_corrected, &b->ecc_agg_uncorrected, &b->ecc_dram_uncorrected,
			    &b->ecc_sram_uncorrected, &b->retired_pages_sbe, &b->retired_pages_dbe,
			    &b->retired_pages_pending, &b->remap_corrected, &b->remap_uncorrected, &b->remap_pending,
			    &b->remap_failure, &b->pcie_replays, &b->viol_power_ns, &b->viol_thermal_ns,
			    &b->viol_sync_boost_ns, &b->viol_board_limit_ns, &b->viol_low_util_ns, &b->viol_reliability_ns };
	for (size_t i = 0; i < sizeof(x) / sizeof(x[0]); i++) {
		assert_int_equal(x[i]->st, y[i]->st);
		assert_true(x[i]->v == y[i]->v || x[i]->st != VAL_OK);
	}
	for (unsigned l = 0; l < 18; l++) {
		assert_int_equal(a->nvlink[l].active.v, b->nvlink[l].active.v);
		assert_int_equal(a->nvlink[l].crc_flit_errors.v, b->nvlink[l].crc_flit_errors.v);
	}
}

/* Without nvmlDeviceGetFieldValues, or when it refuses a batch as a whole,
 * every value still comes, one call each. */
static void test_no_field_values(void **state)
{
	struct gpu_backend *be = *state, old;
	struct gpu_sample batched, single;
	struct nvml_api api = fake();
	calls_for(be, GPU_GRP_ALL, &batched);
	api.DeviceGetFieldValues = NULL;
	open_fake(&old, &api);
	old.now_ns = test_clock;
	calls_for(&old, GPU_GRP_ALL, &single);
	assert_same_values(&batched, &single);
	assert_nvlink_values(&single);
	assert_int_equal(single.temp_mem_c.st, VAL_UNSUPPORTED); /* a field only */
	assert_int_equal(single.power_instant_mw.st, VAL_UNSUPPORTED);
	assert_int_equal(single.pcie_l0_recoveries.st, VAL_UNSUPPORTED);
	/* every link counter its own call: once a minute, the states each time */
	assert_int_equal(calls_for(&old, NVL_ALL, &single), 18);
	assert_nvlink_values(&single);
	test_now_ns += NVML_LINK_COUNTER_PERIOD_NS;
	assert_true(calls_for(&old, GPU_GRP_ALL, &single) > 90);
	gpu_backend_close(&old);
}

static nvmlReturn_t f_fields_refused(nvmlDevice_t d, int n, nvmlFieldValue_t *fv)
{
	(void)d; (void)n; (void)fv;
	field_calls++;
	return NVML_ERROR_INVALID_ARGUMENT;
}

static void test_field_values_refused(void **state)
{
	struct gpu_backend *be = *state, other;
	struct gpu_sample batched, single;
	struct nvml_api api = fake();
	calls_for(be, GPU_GRP_ALL, &batched);
	api.DeviceGetFieldValues = f_fields_refused;
	open_fake(&other, &api);
	field_calls = 0;
	calls_for(&other, GPU_GRP_ALL, &single);
	assert_same_values(&batched, &single);
	assert_nvlink_values(&single);
	calls_for(&other, GPU_GRP_ALL, &single);
	assert_int_equal(field_calls, 1); /* not asked again */
	gpu_backend_close(&other);
}

/* Every BATCH and FLAG row of the field table is asked for by a sample of its
 * group alone (the want list, slots and ids are expansions of the table): each
 * is answered, in the batch or by the row's own call (the fake has no retired
 * pages: "not supported" both ways), none left unread. */
static void test_table_rows_read(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_sample s;
	unsigned rows = 0;
#define ROW_READ(member, group, unit, api_key, role, metric, type, labels, help, series, read, field, ...) \
	ROW_READ_##read(member, group)
#define ROW_READ_BATCH(member, group) \
	calls_for(be, GPU_GRP_##group, &s); \
	if (s.member.st != VAL_OK && s.member.st != VAL_UNSUPPORTED) \
		fail_msg("%s: status %d", #member, (int)s.member.st); \
	rows++;
#define ROW_READ_FLAG(member, group) \
	ROW_READ_BATCH(member, group) \
	assert_true(s.member.v <= 1);
#define ROW_READ_CODE(member, group)
	GPU_SAMPLE_FIELDS(ROW_READ)
	assert_int_equal(rows, FVS_NVL_BASE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_calls_per_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvlink_one_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvlink_h200, setup, teardown),
		cmocka_unit_test_setup_teardown(test_field_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_field_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_field_values_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table_rows_read, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
