/* SPDX-License-Identifier: Apache-2.0 */
/* test_moncol.c - dmon/top columns: selection, values and rates from two
 * views, the not-supported/error/not-ready cases, and the three row formats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view/moncol.h"

static struct gpu_view *view_at(uint64_t t_s)
{
	struct gpu_view *v = calloc(1, sizeof(*v));
	v->up = true;
	v->s.timestamp_ns = t_s * 1000000000ull;
	VAL_SET(v->s.power_mw, 312500);
	VAL_SET(v->s.temp_c, 41);
	VAL_MARK(v->s.temp_mem_c, VAL_UNSUPPORTED);
	VAL_SET(v->s.util_gpu_pct, 87);
	VAL_SET(v->s.util_mem_pct, 40);
	VAL_SET(v->s.sm_clock_mhz, 1980);
	VAL_MARK(v->s.mem_clock_mhz, VAL_ERROR);
	VAL_SET(v->s.mem_used_bytes, 1024ull << 20);
	VAL_SET(v->s.mem_total_bytes, 4096ull << 20);
	VAL_SET(v->s.viol_power_ns, t_s * 250000000ull); /* throttled a quarter of the time */
	VAL_SET(v->s.pcie_rx_kbps, 1000000);
	VAL_SET(v->s.pstate, 0);
	VAL_SET(v->s.clock_event_reasons, CLK_EVT_SW_POWER_CAP | CLK_EVT_GPU_IDLE);
	v->s.nvlink_n = 2;
	VAL_SET(v->s.nvlink[0].tx_bytes, t_s * 1000000000ull);
	VAL_SET(v->s.nvlink[1].tx_bytes, t_s * 500000000ull);
	VAL_MARK(v->s.nvlink[0].rx_bytes, VAL_UNSUPPORTED);
	VAL_MARK(v->s.nvlink[1].rx_bytes, VAL_UNSUPPORTED);
	snprintf(v->st.uuid.s, sizeof(v->st.uuid.s), "GPU-0000aaaa");
	v->st.uuid.st = VAL_OK;
	return v;
}

static void eval(const char *name, const struct gpu_view *cur, const struct gpu_view *prev, char *out)
{
	const struct moncol *c = moncol_find(name);
	assert_non_null(c);
	struct moncol_value v;
	moncol_eval(c, cur, prev, &v);
	moncol_format(c, &v, out, 32);
}

static void test_values(void **state)
{
	(void)state;
	struct gpu_view *a = view_at(10), *b = view_at(12);
	char s[32];
	eval("pwr", b, a, s);       assert_string_equal(s, "313");   /* 312.5 W, rounded */
	eval("power_w", b, a, s);   assert_string_equal(s, "313");
	eval("gtemp", b, a, s);     assert_string_equal(s, "41");
	eval("mtemp", b, a, s);     assert_string_equal(s, "n/a");
	eval("mclk", b, a, s);      assert_string_equal(s, "ERR");
	eval("fb", b, a, s);        assert_string_equal(s, "1024");
	eval("fbpct", b, a, s);     assert_string_equal(s, "25");
	eval("pviol", b, a, s);     assert_string_equal(s, "25");
	eval("rxpci", b, a, s);     assert_string_equal(s, "1024"); /* 10^6 KiB/s = 1024 MB/s */
	eval("nvtx", b, a, s);      assert_string_equal(s, "1500"); /* (2+1) GB over 2 s */
	eval("nvrx", b, a, s);      assert_string_equal(s, "n/a");
	eval("pst", b, a, s);       assert_string_equal(s, "P0");
	eval("thr", b, a, s);       assert_string_equal(s, "pwrcap+");
	/* rates need a previous, older view */
	eval("pviol", b, NULL, s);  assert_string_equal(s, "-");
	eval("nvtx", b, b, s);      assert_string_equal(s, "-");
	eval("pviol", a, b, s);     assert_string_equal(s, "-");
	/* a GPU that is down reads as an error everywhere */
	b->up = false;
	eval("pwr", b, a, s);       assert_string_equal(s, "ERR");
	/* a previous view of a down GPU gives no rate */
	a->up = false;
	b->up = true;
	eval("nvtx", b, a, s);      assert_string_equal(s, "-");
	free(a);
	free(b);
}

/* GPU 0 at tick t of a sampler that reads the slow groups (violation time,
 * NVLink counters) every 5th tick: their values are those read at the last
 * multiple of 5, and the view's rate base the reading 5 ticks before. */
static struct gpu_view *tick_reading_every_5th(uint64_t t)
{
	uint64_t read = t / 5 * 5;
	struct gpu_view *v = view_at(read), *base = view_at(read - 5);
	v->s.timestamp_ns = t * 1000000000ull;
	v->slow_read_ns = read * 1000000000ull;
	gpu_rate_base_set(&v->rate_base, &base->s);
	free(base);
	return v;
}

/* Every rate column between two real readings of its counter: with the slow
 * groups read every 5th tick, the same rate at every tick (not 0 for four
 * ticks and five times the rate at the fifth), whatever the previous view. */
static void test_rates_with_slow_groups(void **state)
{
	(void)state;
	char s[32];
	for (uint64_t t = 10; t < 20; t++) {
		struct gpu_view *prev = tick_reading_every_5th(t - 1), *cur = tick_reading_every_5th(t);
		eval("pviol", cur, prev, s);  assert_string_equal(s, "25");
		eval("nvtx", cur, prev, s);   assert_string_equal(s, "1500");
		eval("nvtx", cur, NULL, s);   assert_string_equal(s, "1500"); /* the base is the view's own */
		free(prev);
		free(cur);
	}
	/* a base no older than the reading (a clock step back) gives no rate */
	struct gpu_view *v = tick_reading_every_5th(12);
	v->rate_base.timestamp_ns = v->slow_read_ns;
	eval("nvtx", v, NULL, s);     assert_string_equal(s, "-");
	/* the slow groups off (every tick read): the rates from the previous view */
	struct gpu_view *a = view_at(11), *b = view_at(12);
	eval("pviol", b, a, s);       assert_string_equal(s, "25");
	eval("nvtx", b, a, s);        assert_string_equal(s, "1500");
	free(v);
	free(a);
	free(b);
}

static void test_throttle_short(void **state)
{
	(void)state;
	char s[16];
	moncol_throttle_short(0, s, sizeof(s));                      assert_string_equal(s, "none");
	moncol_throttle_short(CLK_EVT_GPU_IDLE, s, sizeof(s));       assert_string_equal(s, "idle");
	moncol_throttle_short(CLK_EVT_HW_SLOWDOWN | CLK_EVT_SW_THERMAL, s, sizeof(s));
	assert_string_equal(s, "hwslow+");
	moncol_throttle_short(CLK_EVT_SW_THERMAL, s, sizeof(s));     assert_string_equal(s, "swtherm");
	moncol_throttle_short(0x10000, s, sizeof(s));                assert_string_equal(s, "other");
}

static void test_select(void **state)
{
	(void)state;
	const struct moncol *cols[MONCOL_MAX_SELECTED];
	char err[128];
	int n = moncol_select(NULL, NULL, cols, MONCOL_MAX_SELECTED, err, sizeof(err));
	assert_int_equal(n, 9); /* pucm: pwr gtemp mtemp, sm mem, mclk pclk, fb fbpct */
	assert_string_equal(cols[0]->name, "pwr");
	assert_string_equal(cols[8]->name, "fbpct");
}

/* The column table (moncol.c: FCOL rows keyed by a field's member, and rows
 * of their own): every column has a name, a key, a getter and a width,
 * names and keys are unique, and a field's column reads in its field's group. */
static void test_column_table(void **state)
{
	(void)state;
	assert_true(moncol_count >= 22);
	for (unsigned i = 0; i < moncol_count; i++) {
		const struct moncol *c = &moncols[i];
		assert_non_null(c->name);
		assert_non_null(c->key);
		assert_non_null(c->get);
		assert_non_null(c->help);
		assert_true(c->width > 0);
		assert_true(c->groups != 0);
		for (unsigned k = 0; k < i; k++) {
			assert_string_not_equal(moncols[k].name, c->name);
			assert_string_not_equal(moncols[k].key, c->key);
		}
	}
	assert_string_equal(moncols[0].name, "pwr");
	assert_int_equal(moncol_find("pwr")->groups, GPU_GRP_BASIC);
	assert_int_equal(moncol_find("pviol")->groups, GPU_GRP_VIOL);
	assert_int_equal(moncol_find("energy")->groups, GPU_GRP_ENERGY);
	assert_int_equal(moncol_find("sbecc")->groups, GPU_GRP_ECC);
	assert_int_equal(moncol_find("pci")->groups, GPU_GRP_PCIE);
	const struct moncol *cols[MONCOL_MAX_SELECTED];
	char err[128];
	int n = moncol_select("e", NULL, cols, MONCOL_MAX_SELECTED, err, sizeof(err));
	assert_int_equal(n, 3);
	assert_int_equal(moncol_sampler_groups(cols, (unsigned)n), GPU_GRP_BASIC | GPU_GRP_ECC | GPU_GRP_PCIE);
	n = moncol_select(NULL, "energy", cols, MONCOL_MAX_SELECTED, err, sizeof(err));
	assert_int_equal(moncol_sampler_groups(cols, (unsigned)n), GPU_GRP_BASIC | GPU_GRP_ENERGY);
}

static void test_select_rules(void **state)
{
	(void)state;
	const struct moncol *cols[MONCOL_MAX_SELECTED];
	char err[128];
	/* groups come out in table order whatever order they are given in */
	int n = moncol_select("up", NULL, cols, MONCOL_MAX_SELECTED, err, sizeof(err));
	assert_int_equal(n, 5);
	assert_string_equal(cols[0]->name, "pwr");
	assert_string_equal(cols[3]->name, "sm");
	/* columns after groups, no duplicates, keys accepted */
	n = moncol_select("p", "sm,pwr,energy_j", cols, MONCOL_MAX_SELECTED, err, sizeof(err));
	assert_int_equal(n, 5);
	assert_string_equal(cols[3]->name, "sm");
	assert_string_equal(cols[4]->name, "energy");
	n = moncol_select(NULL, "thr", cols, MONCOL_MAX_SELECTED, err, sizeof(err));
	assert_int_equal(n, 1);
	assert_int_equal(moncol_sampler_groups(cols, 1), GPU_GRP_BASIC);
	n = moncol_select("tn", NULL, cols, MONCOL_MAX_SELECTED, err, sizeof(err));
	assert_int_equal(moncol_sampler_groups(cols, (unsigned)n), GPU_GRP_BASIC | GPU_GRP_PCIE | GPU_GRP_NVLINK | GPU_GRP_NVLINK_ERR);
	assert_int_equal(moncol_select("pq", NULL, cols, MONCOL_MAX_SELECTED, err, sizeof(err)), -1);
	assert_string_equal(err, "unknown group 'q' (groups: " MONCOL_GROUPS ")");
	assert_int_equal(moncol_select(NULL, "pwr,watts", cols, MONCOL_MAX_SELECTED, err, sizeof(err)), -1);
	/* nothing near 'watts': no suggestion, then the columns (cut to err's size) */
	assert_non_null(strstr(err, "unknown column 'watts'; columns: pwr,gtemp,"));
	assert_int_equal(moncol_select(NULL, "pwrr", cols, MONCOL_MAX_SELECTED, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown column 'pwrr' (did you mean 'pwr'?); columns: pwr,"));
	assert_int_equal(moncol_select("", NULL, cols, MONCOL_MAX_SELECTED, err, sizeof(err)), -1);
	assert_int_equal(moncol_select(NULL, ",", cols, MONCOL_MAX_SELECTED, err, sizeof(err)), -1);
	assert_int_equal(moncol_select("p", NULL, cols, 2, err, sizeof(err)), -1);
}

static char *rows(enum moncol_format fmt, const char *cols_spec, bool sim)
{
	const struct moncol *cols[MONCOL_MAX_SELECTED];
	char err[128];
	int n = moncol_select(NULL, cols_spec, cols, MONCOL_MAX_SELECTED, err, sizeof(err));
	assert_true(n > 0);
	struct monrow_ctx rc = { fmt, cols, (unsigned)n, sim, false, true };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct gpu_view *a = view_at(10), *b = view_at(11);
	monrow_header(&rc, f);
	monrow_print(&rc, b, a, 3, "20261130", "00:10:05", "2026-11-30T00:10:05Z", b->s.timestamp_ns, f);
	monrow_print(&rc, b, NULL, 3, "20261130", "00:10:05", "2026-11-30T00:10:05Z", b->s.timestamp_ns, f);
	fclose(f);
	free(a);
	free(b);
	return buf;
}

static void test_text_rows(void **state)
{
	(void)state;
	char *s = rows(MONFMT_TEXT, "pwr,mtemp,mclk,pviol,thr", true);
	assert_string_equal(s,
		"#Time      gpu    pwr mtemp  mclk pviol      thr\n"
		"#HH:MM:SS  Idx      W     C   MHz     %         \n"
		" 00:10:05    3    313   n/a   ERR    25  pwrcap+\n"
		" 00:10:05    3    313   n/a   ERR     -  pwrcap+\n");
	free(s);
}

static void test_csv_rows(void **state)
{
	(void)state;
	char *s = rows(MONFMT_CSV, "pwr,mtemp,mclk,pviol,thr", true);
	assert_string_equal(s,
		"timestamp,gpu,uuid,power_w,mem_temp_c,mem_clock_mhz,power_viol_pct,throttle,simulated\n"
		"2026-11-30T00:10:05Z,3,GPU-0000aaaa,313,N/A,ERR,25,pwrcap+,true\n"
		"2026-11-30T00:10:05Z,3,GPU-0000aaaa,313,N/A,ERR,,pwrcap+,true\n");
	free(s);
}

static void test_json_rows(void **state)
{
	(void)state;
	char *s = rows(MONFMT_JSON, "pwr,mtemp,mclk,pviol,thr", false);
	char *nl = strchr(s, '\n');
	assert_non_null(nl);
	*nl = '\0';
	json_error_t je;
	json_t *o = json_loads(s, 0, &je);
	assert_non_null(o);
	assert_int_equal(json_integer_value(json_object_get(o, "gpu")), 3);
	assert_true(json_is_false(json_object_get(o, "simulated")));
	assert_true(json_is_true(json_object_get(o, "up")));
	assert_null(json_object_get(o, "power_w")); /* the column key of a sample value: gone (issue 35) */
	assert_int_equal(json_integer_value(json_object_get(o, "power_viol_pct")), 25);
	assert_string_equal(json_string_value(json_object_get(o, "throttle")), "pwrcap+");
	assert_string_equal(json_string_value(json_object_get(o, "timestamp")), "2026-11-30T00:10:05Z");
	assert_null(json_object_get(o, "mem_temp_c")); /* the column key of a sample value: not in JSON */
	json_t *un = json_object_get(o, "unavailable");
	assert_null(json_object_get(un, "mem_temp_c"));
	assert_string_equal(json_string_value(json_object_get(un, "mem_clock_mhz")), "error");
	/* a column of one sample value: under --json's sample key only, the exact integer */
	assert_int_equal(json_integer_value(json_object_get(o, "power_mw")), 312500);
	assert_null(json_object_get(o, "temp_mem_c"));
	assert_string_equal(json_string_value(json_object_get(un, "temp_mem_c")), "not supported");
	assert_null(json_object_get(un, "power_viol_pct")); /* a rate: its own key only */
	json_decref(o);
	/* each value once, under one name */
	const char *want = "{\"timestamp\":\"2026-11-30T00:10:05Z\",\"timestamp_ns\":";
	assert_memory_equal(s, want, strlen(want));
	assert_non_null(strstr(s, "\"simulated\":false,\"power_mw\":312500,\"power_viol_pct\":25,"
				 "\"throttle\":\"pwrcap+\",\"unavailable\":{\"temp_mem_c\":\"not supported\","
				 "\"mem_clock_mhz\":\"error\"}}"));
	/* second line: no previous view, so the rate is not ready */
	o = json_loads(nl + 1, 0, &je);
	assert_non_null(o);
	un = json_object_get(o, "unavailable");
	assert_string_equal(json_string_value(json_object_get(un, "power_viol_pct")), "not ready");
	json_decref(o);
	free(s);
	/* pstate: "P0" in text and CSV, the sample's integer in JSON (as info --json's sample) */
	s = rows(MONFMT_JSON, "pst", false);
	assert_non_null(strstr(s, "\"pstate\":0,"));
	assert_null(strstr(s, "\"P0\""));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_rates_with_slow_groups),
		cmocka_unit_test(test_throttle_short),
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_column_table),
		cmocka_unit_test(test_select_rules),
		cmocka_unit_test(test_text_rows),
		cmocka_unit_test(test_csv_rows),
		cmocka_unit_test(test_json_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
