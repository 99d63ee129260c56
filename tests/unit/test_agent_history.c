/* SPDX-License-Identifier: Apache-2.0 */
/* test_agent_history.c - the agent's history (history.h): quantization, the
 * ring buffer's order and wrap, duplicates and down GPUs, ?since= and ?gpu=
 * in the JSON, the 10 s tier (mean, min, max, wrap, n/a), the memory bound at 64 GPUs; the /api/v1/history request
 * parameters (httpreq.h) and the `history` setting (agent_config.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_config.h"
#include "agent/history.h"
#include "agent/httpreq.h"

#define SEC 1000000000ull
#define T0 (1764460800ull * SEC) /* a round wall-clock time */

static enum { S_UTIL, S_MEMUTIL, S_MEM, S_POWER, S_TEMP, S_CLOCK, S_SMACT, S_SMOCC, S_TENSOR, S_DRAM } series_order;

static struct gpu_sample sample_at(uint64_t t, uint64_t util)
{
	struct gpu_sample s;
	memset(&s, 0, sizeof(s));
	s.timestamp_ns = t;
	VAL_SET(s.util_gpu_pct, util);
	VAL_SET(s.mem_used_bytes, 1000ull << 20);
	VAL_SET(s.power_mw, 640977);
	VAL_SET(s.temp_c, 65);
	VAL_SET(s.sm_clock_mhz, 1980);
	VAL_MARK(s.util_mem_pct, VAL_ERROR);
	return s;
}

static json_t *render(struct history *h, uint64_t mask, uint64_t since)
{
	struct history_doc_opts o = { .gpu_mask = mask, .since_ns = since, .simulated = true, .interval_ns = SEC };
	struct abuf b;
	abuf_init(&b);
	assert_int_equal(history_render(h, &o, &b), 0);
	json_error_t e;
	json_t *root = json_loads(b.p, 0, &e);
	if (!root)
		fail_msg("invalid JSON (%s): %s", e.text, b.p);
	abuf_free(&b);
	return root;
}

static void test_quantize(void **state)
{
	(void)state;
	(void)series_order;
	assert_int_equal(history_quantize(S_UTIL, 99, true), 99);
	assert_int_equal(history_quantize(S_UTIL, 99, false), HISTORY_MISSING);
	assert_int_equal(history_quantize(S_MEM, 6ull << 20, true), 2);       /* 4 MiB steps, rounded */
	assert_int_equal(history_quantize(S_MEM, (6ull << 20) - 1, true), 1);
	assert_int_equal(history_quantize(S_MEM, 300ull << 30, true), HISTORY_Q_MAX); /* saturates */
	assert_int_equal(history_quantize(S_POWER, 640977, true), 6410);      /* 100 mW steps */
	assert_int_equal(history_quantize(S_POWER, 640949, true), 6409);
	assert_int_equal(history_quantize(S_TEMP, 0, true), 0);               /* 0 is a value, not missing */
	assert_int_equal(history_quantize(HISTORY_SERIES, 1, true), HISTORY_MISSING);
	assert_string_equal(history_series[S_POWER].name, "power_mw");
	assert_string_equal(history_series[S_CLOCK].name, "sm_clock_mhz");
	/* the profiling figures: whole percent in 8 bits, 0xFF kept for "missing" */
	assert_string_equal(history_series[S_SMACT].name, "prof_sm_active_pct");
	assert_string_equal(history_series[S_DRAM].name, "prof_dram_active_pct");
	assert_int_equal(history_quantize(S_TENSOR, 100, true), 100);
	assert_int_equal(history_quantize(S_TENSOR, 0, true), 0);
	assert_int_equal(history_quantize(S_SMOCC, 255, true), HISTORY_NARROW_Q_MAX);
	assert_int_equal(history_quantize(S_SMOCC, 5, false), HISTORY_MISSING);
}

/* The profiling series round-trip through their 8 bits: a value, 0, and none (older GPUs: null). */
static void test_profiling_series(void **state)
{
	(void)state;
	struct history *h = history_new(1, 8, history_base_ns(T0));
	struct gpu_sample s = sample_at(T0 + SEC, 98);
	VAL_SET(s.prof_sm_active_pct, 93);
	VAL_SET(s.prof_sm_occupancy_pct, 15);
	VAL_SET(s.prof_tensor_active_pct, 0);
	history_add(h, 0, &s);
	s = sample_at(T0 + 2 * SEC, 98); /* no GPM: all four absent */
	history_add(h, 0, &s);
	json_t *root = render(h, ~0ull, 0);
	json_t *g = json_array_get(json_object_get(root, "gpus"), 0);
	json_t *act = json_object_get(g, "prof_sm_active_pct"), *occ = json_object_get(g, "prof_sm_occupancy_pct");
	json_t *ten = json_object_get(g, "prof_tensor_active_pct"), *dram = json_object_get(g, "prof_dram_active_pct");
	assert_int_equal(json_array_size(act), 2);
	assert_int_equal(json_integer_value(json_array_get(act, 0)), 93);
	assert_int_equal(json_integer_value(json_array_get(occ, 0)), 15);
	assert_true(json_is_integer(json_array_get(ten, 0)));
	assert_int_equal(json_integer_value(json_array_get(ten, 0)), 0);
	assert_true(json_is_null(json_array_get(dram, 0)));
	for (unsigned i = S_SMACT; i <= S_DRAM; i++)
		assert_true(json_is_null(json_array_get(json_object_get(g, history_series[i].name), 1)));
	json_decref(root);
	history_free(h);
}

/* Every series is a row of the field table: named as its member (the key of
 * --json's "sample") and reading that member. */
static void test_series_are_fields(void **state)
{
	(void)state;
	for (unsigned i = 0; i < HISTORY_SERIES; i++) {
		unsigned rows = 0;
#define ROW(member, ...)                                                                          \
	if (strcmp(history_series[i].name, #member) == 0) {                                       \
		rows++;                                                                           \
		assert_int_equal(history_series[i].field, offsetof(struct gpu_sample, member));  \
	}
		GPU_SAMPLE_FIELDS(ROW)
#undef ROW
		if (rows != 1)
			fail_msg("history series %s is not a row of the field table", history_series[i].name);
	}
}

static void test_slots(void **state)
{
	(void)state;
	assert_int_equal(history_slots_for(3600 * SEC, SEC), 3600);
	assert_int_equal(history_slots_for(3600 * SEC, 7 * SEC), 515); /* rounded up */
	assert_int_equal(history_slots_for(SEC, 2 * SEC), 1);
	assert_int_equal(history_slots_for(86400 * SEC, SEC / 100), HISTORY_MAX_SLOTS);
	assert_int_equal(history_base_ns(T0), T0 - 3600 * SEC);
	assert_int_equal(history_base_ns(5), 0);
	assert_null(history_new(0, 10, 0));
	assert_null(history_new(2, 0, 0));
	assert_null(history_new(2, HISTORY_MAX_SLOTS + 1, 0));
}

/* The default (1 h at 1 s) at 64 GPUs: 2 min at 1 s and 58 min in 10 s points, under 1.3 MiB
 * (4.4 MiB at full resolution). */
static void test_memory_bound(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct history_point), 20);
	unsigned full, coarse;
	history_tiers_for(3600 * SEC, SEC, &full, &coarse);
	struct history *h = history_new_tiered(64, full, coarse, history_base_ns(T0));
	assert_non_null(h);
	assert_int_equal(sizeof(struct history_coarse), 52);
	assert_true(history_bytes(h) < (13u << 20) / 10);
	assert_true(history_bytes(h) >= 64u * (120u * 20u + 348u * 52u));
	assert_int_equal(history_slots(h), 120 + 348 + 1);
	history_free(h);
}

static void test_tiers_for(void **state)
{
	(void)state;
	unsigned full, coarse;
	history_tiers_for(3600 * SEC, SEC, &full, &coarse);
	assert_int_equal(full, 120);
	assert_int_equal(coarse, 348);
	history_tiers_for(120 * SEC, SEC, &full, &coarse); /* no longer than the full tier */
	assert_int_equal(full, 120);
	assert_int_equal(coarse, 0);
	history_tiers_for(3600 * SEC, 10 * SEC, &full, &coarse); /* an interval of 10 s: nothing to fold */
	assert_int_equal(full, 360);
	assert_int_equal(coarse, 0);
	history_tiers_for(3605 * SEC, 2 * SEC, &full, &coarse); /* 3485 s in 10 s points, rounded up */
	assert_int_equal(full, 60);
	assert_int_equal(coarse, 349);
	history_tiers_for(86400 * SEC, SEC, &full, &coarse); /* 24 h whole */
	assert_int_equal(full, 120);
	assert_int_equal(coarse, 8628);
	history_tiers_for(86400 * SEC, SEC / 1000, &full, &coarse); /* at most HISTORY_MAX_SLOTS */
	assert_int_equal(full, HISTORY_MAX_SLOTS);
	assert_int_equal(coarse, 0);
	assert_null(history_new_tiered(1, 10, HISTORY_MAX_SLOTS - 9, 0));
	assert_null(history_new_tiered(1, 0, 10, 0));
}

static json_int_t at(json_t *obj, const char *key, size_t k)
{
	json_t *v = json_array_get(json_object_get(obj, key), k);
	if (!json_is_integer(v))
		fail_msg("%s[%zu] is not a number", key, k);
	return json_integer_value(v);
}

/* util of sample k is k; sample 19 has none. full 5, coarse 3: the points the
 * full tier lets go make 10 s points (mean, min, max), the bucket being
 * filled comes after them, then the full tier's. */
static void test_coarse_tier(void **state)
{
	(void)state;
	struct history *h = history_new_tiered(1, 5, 3, history_base_ns(T0));
	for (unsigned k = 0; k < 30; k++) {
		struct gpu_sample s = sample_at(T0 + k * SEC, k);
		if (k == 19)
			VAL_MARK(s.util_gpu_pct, VAL_ERROR);
		history_add(h, 0, &s);
	}
	json_t *root = render(h, ~0ull, 0);
	assert_int_equal(json_integer_value(json_object_get(root, "capacity")), 9);
	assert_int_equal(json_number_value(json_object_get(root, "window_seconds")), 35);
	json_t *g = json_array_get(json_object_get(root, "gpus"), 0);
	json_t *t = json_object_get(g, "t"), *lo = json_object_get(g, "min"), *hi = json_object_get(g, "max");
	assert_int_equal(json_array_size(t), 3 + 5);
	assert_int_equal(json_integer_value(json_object_get(g, "coarse")), 3);
	static const double times[] = { 9, 19, 24, 25, 26, 27, 28, 29 }; /* a bucket's: its newest point's */
	static const json_int_t mean[] = { 5, 14, 22, 25, 26, 27, 28, 29 }; /* 4.5 rounds to 5; 126 / 9 */
	for (size_t k = 0; k < 8; k++) {
		assert_int_equal(json_number_value(json_array_get(t, k)), T0 / SEC + times[k]);
		assert_int_equal(at(g, "util_gpu_pct", k), mean[k]);
		assert_int_equal(at(g, "power_mw", k), 641000);
		assert_true(json_is_null(json_array_get(json_object_get(g, "util_mem_pct"), k)));
	}
	static const json_int_t least[] = { 0, 10, 20 }, most[] = { 9, 18, 24 };
	for (size_t k = 0; k < 3; k++) {
		assert_int_equal(at(lo, "util_gpu_pct", k), least[k]);
		assert_int_equal(at(hi, "util_gpu_pct", k), most[k]);
		assert_int_equal(at(hi, "temp_c", k), 65);
		assert_true(json_is_null(json_array_get(json_object_get(lo, "util_mem_pct"), k))); /* n/a all along */
		assert_true(json_is_null(json_array_get(json_object_get(hi, "prof_sm_active_pct"), k)));
	}
	assert_int_equal(json_array_size(json_object_get(lo, "temp_c")), 3);
	json_decref(root);

	/* wrap-around: 5 buckets let go, the 3 newest kept */
	for (unsigned k = 30; k < 60; k++) {
		struct gpu_sample s = sample_at(T0 + k * SEC, k);
		history_add(h, 0, &s);
	}
	root = render(h, ~0ull, 0);
	g = json_array_get(json_object_get(root, "gpus"), 0);
	assert_int_equal(json_integer_value(json_object_get(g, "coarse")), 4);
	static const json_int_t mean2[] = { 25, 35, 45, 52, 55, 56, 57, 58, 59 };
	assert_int_equal(json_array_size(json_object_get(g, "t")), 9);
	for (size_t k = 0; k < 9; k++)
		assert_int_equal(at(g, "util_gpu_pct", k), mean2[k]);
	assert_int_equal(at(json_object_get(g, "min"), "util_gpu_pct", 0), 20);
	assert_int_equal(at(json_object_get(g, "max"), "util_gpu_pct", 3), 54);
	json_decref(root);

	/* ?since= counts a 10 s point by its time */
	root = render(h, ~0ull, T0 + 39 * SEC);
	g = json_array_get(json_object_get(root, "gpus"), 0);
	assert_int_equal(json_integer_value(json_object_get(g, "coarse")), 2);
	assert_int_equal(json_array_size(json_object_get(g, "t")), 7);
	assert_int_equal(at(g, "util_gpu_pct", 0), 45);
	assert_int_equal(json_array_size(json_object_get(json_object_get(g, "max"), "power_mw")), 2);
	json_decref(root);
	history_free(h);
}

static void test_ring_order_and_wrap(void **state)
{
	(void)state;
	struct history *h = history_new(2, 4, history_base_ns(T0));
	for (unsigned k = 0; k < 6; k++) {
		struct gpu_sample s = sample_at(T0 + k * SEC + 250000000ull, 10 + k);
		history_add(h, 1, &s);
	}
	struct gpu_sample dup = sample_at(T0 + 5 * SEC + 250000000ull, 99);
	history_add(h, 1, &dup); /* the same sample again: not stored twice */
	struct gpu_sample old = sample_at(T0 + 1 * SEC, 77);
	history_add(h, 1, &old); /* older than the newest: not stored */
	json_t *root = render(h, ~0ull, 0);
	assert_true(json_is_true(json_object_get(root, "simulated")));
	assert_int_equal(json_integer_value(json_object_get(root, "capacity")), 4);
	assert_true(json_number_value(json_object_get(root, "interval_seconds")) == 1.0);
	json_t *gpus = json_object_get(root, "gpus");
	assert_int_equal(json_array_size(gpus), 2);
	json_t *g0 = json_array_get(gpus, 0), *g1 = json_array_get(gpus, 1);
	assert_int_equal(json_integer_value(json_object_get(g0, "index")), 0);
	assert_int_equal(json_array_size(json_object_get(g0, "t")), 0);
	assert_int_equal(json_array_size(json_object_get(g0, "power_mw")), 0);
	/* the last four, oldest first, times to 10 ms */
	json_t *t = json_object_get(g1, "t"), *u = json_object_get(g1, "util_gpu_pct");
	assert_int_equal(json_array_size(t), 4);
	for (unsigned k = 0; k < 4; k++) {
		assert_int_equal(json_integer_value(json_array_get(u, k)), 12 + k);
		double want = 1764460800.0 + 2 + k + 0.25;
		assert_true(json_number_value(json_array_get(t, k)) > want - 0.001 &&
			    json_number_value(json_array_get(t, k)) < want + 0.001);
	}
	assert_true(json_is_null(json_array_get(json_object_get(g1, "util_mem_pct"), 0)));
	/* power in integer mW, as --json's power_mw, quantized to 100 mW */
	json_t *p0 = json_array_get(json_object_get(g1, "power_mw"), 0);
	assert_true(json_is_integer(p0));
	assert_int_equal(json_integer_value(p0), 641000);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(g1, "mem_used_bytes"), 0)), 1000ull << 20);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(g1, "temp_c"), 3)), 65);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(g1, "sm_clock_mhz"), 3)), 1980);
	json_decref(root);

	/* since: only later points; the newest time itself gives none */
	root = render(h, 1ull << 1, T0 + 3 * SEC + 250000000ull);
	gpus = json_object_get(root, "gpus");
	assert_int_equal(json_array_size(gpus), 1);
	t = json_object_get(json_array_get(gpus, 0), "t");
	assert_int_equal(json_array_size(t), 2);
	assert_true(json_number_value(json_array_get(t, 0)) > 1764460804.24);
	json_decref(root);
	root = render(h, 1ull << 1, T0 + 5 * SEC + 250000000ull);
	assert_int_equal(json_array_size(json_object_get(json_array_get(json_object_get(root, "gpus"), 0), "t")), 0);
	json_decref(root);
	history_free(h);
}

/* A snapshot adds the GPUs that are up; a down one gets a gap. */
static void test_snapshot_down_gpu(void **state)
{
	(void)state;
	struct snapshot *sn = snapshot_new(GPU_MAX_GPUS);
	sn->n = 3;
	struct history *h = history_new(3, 16, history_base_ns(T0));
	for (unsigned tick = 0; tick < 3; tick++) {
		for (unsigned g = 0; g < 3; g++) {
			sn->gpu[g].up = !(g == 2 && tick == 1);
			sn->gpu[g].s = sample_at(T0 + tick * SEC, 50);
		}
		history_add_snapshot(h, sn);
	}
	json_t *root = render(h, ~0ull, 0);
	json_t *gpus = json_object_get(root, "gpus");
	assert_int_equal(json_array_size(json_object_get(json_array_get(gpus, 0), "t")), 3);
	assert_int_equal(json_array_size(json_object_get(json_array_get(gpus, 2), "t")), 2);
	json_decref(root);
	history_free(h);
	free(sn);
}

static void test_request_params(void **state)
{
	(void)state;
	struct http_req r;
	const char *t = "/api/v1/history?gpu=3&since=1764460800.25";
	http_req_parse(t, strlen(t), &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.route, ROUTE_HISTORY);
	assert_int_equal(r.gpu_mask, 1ull << 3);
	assert_int_equal(r.since_ns, 1764460800250000000ull);
	t = "/api/v1/history";
	http_req_parse(t, strlen(t), &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.since_ns, 0);
	assert_int_equal(r.gpu_mask, ~0ull);
	const char *good[] = { "/", "/app.js", "/app.css", "/api/v1/history?since=0", "/api/v1/history?since=1.123456789" };
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		http_req_parse(good[i], strlen(good[i]), &r);
		if (r.status != 200)
			fail_msg("'%s': %d %s", good[i], r.status, r.error);
	}
	const char *bad[] = { "/api/v1/history?since=", "/api/v1/history?since=-1", "/api/v1/history?since=1e9",
			      "/api/v1/history?since=nan", "/api/v1/history?since=1.", "/api/v1/history?since=.5",
			      "/api/v1/history?since=1.1234567891", "/api/v1/history?since=99999999999",
			      "/api/v1/history?since=1%202", "/api/v1/history?gpu=64", "/api/v1/history?pretty=1",
			      "/api/v1/gpus?since=1", "/?since=1", "/?gpu=1", "/app.js?x" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		http_req_parse(bad[i], strlen(bad[i]), &r);
		if (r.status != 400)
			fail_msg("'%s': got %d, want 400", bad[i], r.status);
	}
}

static void test_config(void **state)
{
	(void)state;
	struct agent_config c;
	char err[256];
	agent_config_default(&c);
	assert_int_equal(c.history_ns, 3600 * SEC);
	const char text[] = "history = 15m\n";
	assert_int_equal(agent_config_parse(&c, text, sizeof(text) - 1, "a.conf", err, sizeof(err)), 0);
	assert_int_equal(c.history_ns, 900 * SEC);
	assert_int_equal(agent_config_set(&c, "history", "off", err, sizeof(err)), 0);
	assert_int_equal(c.history_ns, 0);
	assert_int_equal(agent_config_set(&c, "history", "1441m", err, sizeof(err)), -1);
	assert_int_equal(agent_config_set(&c, "history", "500ms", err, sizeof(err)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantize),
		cmocka_unit_test(test_profiling_series),
		cmocka_unit_test(test_series_are_fields),
		cmocka_unit_test(test_slots),
		cmocka_unit_test(test_memory_bound),
		cmocka_unit_test(test_tiers_for),
		cmocka_unit_test(test_coarse_tier),
		cmocka_unit_test(test_ring_order_and_wrap),
		cmocka_unit_test(test_snapshot_down_gpu),
		cmocka_unit_test(test_request_params),
		cmocka_unit_test(test_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
