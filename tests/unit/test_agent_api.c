/* SPDX-License-Identifier: Apache-2.0 */
/* test_agent_api.c - the agent's JSON documents: /api/v1/gpus writes each
 * GPU as info --json does (the same serializer: missing values named under
 * "unavailable", reasons as names) plus the old keys for a release (present
 * values as numbers, unsupported ones left out, unreadable ones null), a down
 * GPU without telemetry but with its error and XIDs, GPU selection and pretty
 * printing, and the health document with and without rules (versions and UUIDs
 * not read named under "unavailable", never null). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/api.h"
#include "view/json_util.h"

static struct snapshot *snapshot3(void)
{
	struct snapshot *sn = snapshot_new(GPU_MAX_GPUS);
	sn->taken_ns = 2000000000000ull;
	sn->sys.simulated = true;
	snprintf(sn->sys.server_name, sizeof(sn->sys.server_name), "h200x8");
	snprintf(sn->sys.backend, sizeof(sn->sys.backend), "sim");
	VAL_MARK(sn->sys.hostname, VAL_UNSUPPORTED);
	sn->n = 3;
	for (unsigned i = 0; i < 3; i++) {
		struct gpu_view *v = &sn->gpu[i];
		v->st.index = i;
		v->up = true;
		v->last_ok_ns = sn->taken_ns - 500000000ull;
		v->samples = 10 + i;
		snprintf(v->st.uuid.s, sizeof(v->st.uuid.s), "GPU-%u", i);
		v->st.uuid.st = VAL_OK;
		VAL_SET(v->s.power_mw, 123456);
		VAL_SET(v->s.mem_used_bytes, 1000 + i);
		VAL_MARK(v->s.fan_pct, VAL_UNSUPPORTED);
		VAL_MARK(v->s.temp_c, VAL_ERROR);
	}
	struct gpu_view *down = &sn->gpu[2];
	down->up = false;
	snprintf(down->last_error, sizeof(down->last_error), "GPU 2 has fallen off the bus");
	down->nxid = 1;
	down->xid[0].code = 79;
	down->xid[0].count = 1;
	down->xid[0].last_ns = 1999000000000ull;
	return sn;
}

static json_t *load(const struct api_doc *d, uint64_t mask, bool pretty, char **text)
{
	struct abuf b;
	abuf_init(&b);
	assert_int_equal(api_doc_join(d, mask, pretty, &b), 0);
	json_error_t e;
	json_t *root = json_loads(b.p, 0, &e);
	if (!root)
		fail_msg("invalid JSON (%s): %s", e.text, b.p);
	if (text)
		*text = b.p;
	else
		abuf_free(&b);
	return root;
}

static void test_gpus_document(void **state)
{
	(void)state;
	struct snapshot *sn = snapshot3();
	struct api_doc d;
	api_doc_init(&d);
	assert_int_equal(api_render_gpus(&d, sn, NULL), 0);
	json_t *root = load(&d, ~0ull, false, NULL);
	assert_true(json_is_true(json_object_get(root, "simulated")));
	assert_string_equal(json_string_value(json_object_get(root, "hostname")), "h200x8");
	/* the server as info --json writes it: the host name it lacks is named, not null */
	json_t *sys = json_object_get(root, "system");
	assert_string_equal(json_string_value(json_object_get(sys, "backend")), "sim");
	assert_null(json_object_get(sys, "hostname"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(sys, "unavailable"), "hostname")), "not supported");
	/* the old top-level keys beside "system" are gone (issue 35) */
	assert_null(json_object_get(root, "driver_version"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(sys, "unavailable"), "driver_version")), "not read");
	json_t *gpus = json_object_get(root, "gpus");
	assert_int_equal(json_array_size(gpus), 3);
	json_t *g0 = json_array_get(gpus, 0);
	assert_true(json_is_true(json_object_get(g0, "up")));
	assert_true(json_is_null(json_object_get(g0, "error")));
	assert_float_equal(json_real_value(json_object_get(g0, "sample_age_seconds")), 0.5, 1e-9);
	/* the --json vocabulary: values in the key's unit, the missing ones named, never a 0 */
	json_t *s0 = json_object_get(g0, "sample"), *u0 = json_object_get(s0, "unavailable");
	assert_int_equal(json_integer_value(json_object_get(s0, "power_mw")), 123456);
	assert_int_equal(json_integer_value(json_object_get(s0, "mem_used_bytes")), 1000);
	assert_null(json_object_get(s0, "fan_pct"));
	assert_string_equal(json_string_value(json_object_get(u0, "fan_pct")), "not supported");
	assert_null(json_object_get(s0, "temp_c"));
	assert_string_equal(json_string_value(json_object_get(u0, "temp_c")), "error");
	assert_string_equal(json_string_value(json_object_get(u0, "util_gpu_pct")), "not read");
	/* the old keys, written beside these for a release, are gone (issue 35) */
	const char *gone[] = { "last_error", "power_watts", "memory_used_bytes", "fan_percent", "temperature_celsius",
			       "utilization_gpu_percent", "pstate", "clock_event_reasons", "mig" };
	for (size_t k = 0; k < sizeof(gone) / sizeof(gone[0]); k++)
		if (json_object_get(g0, gone[k]))
			fail_msg("GPU 0 still has the old key '%s'", gone[k]);
	/* a down GPU: why, its XIDs, no telemetry */
	json_t *g2 = json_array_get(gpus, 2);
	assert_true(json_is_false(json_object_get(g2, "up")));
	assert_string_equal(json_string_value(json_object_get(g2, "error")), "GPU 2 has fallen off the bus");
	assert_null(json_object_get(g2, "last_error"));
	json_t *s2 = json_object_get(g2, "sample");
	assert_null(json_object_get(s2, "power_mw"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(s2, "unavailable"), "power_mw")), "not read");
	assert_null(json_object_get(g2, "power_watts"));
	assert_int_equal(json_array_size(json_object_get(g2, "processes")), 0);
	json_t *x = json_array_get(json_object_get(g2, "xid"), 0);
	assert_int_equal(json_integer_value(json_object_get(x, "xid")), 79);
	assert_int_equal(json_integer_value(json_object_get(x, "count")), 1);
	json_decref(root);

	/* selection keeps order; an empty selection is an empty list */
	char *text = NULL;
	root = load(&d, (1ull << 0) | (1ull << 2), true, &text);
	gpus = json_object_get(root, "gpus");
	assert_int_equal(json_array_size(gpus), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(gpus, 1), "index")), 2);
	assert_non_null(strstr(text, "\n  \"gpus\": ["));
	free(text);
	json_decref(root);
	root = load(&d, 1ull << 40, false, NULL);
	assert_int_equal(json_array_size(json_object_get(root, "gpus")), 0);
	json_decref(root);
	api_doc_free(&d);
	free(sn);
}

/* Each GPU of /api/v1/gpus holds the object info --json writes for it (less
 * the per-link NVLink objects), member for member: one serializer. */
static void test_gpus_as_info_json(void **state)
{
	(void)state;
	struct snapshot *sn = snapshot3();
	struct gpu_view *v = &sn->gpu[1];
	VAL_SET(v->s.clock_event_reasons, CLK_EVT_HW_THERMAL | CLK_EVT_SW_POWER_CAP);
	v->nproc = 1;
	v->procs[0] = (struct gpu_process){ .pid = 77, .uid = (uint32_t)-1, .type = 'C', .mig_gi = -1 };
	snprintf(v->procs[0].name, sizeof(v->procs[0].name), "train\x80");
	VAL_SET(v->procs[0].used_mem_bytes, 1 << 30);
	struct api_doc d;
	api_doc_init(&d);
	assert_int_equal(api_render_gpus(&d, sn, NULL), 0);
	json_t *root = load(&d, ~0ull, false, NULL);
	json_t *gpus = json_object_get(root, "gpus");
	for (unsigned i = 0; i < sn->n; i++) {
		json_t *want = json_gpu_view(&sn->gpu[i], JSON_GPU_NO_NVLINK_LIST), *got = json_array_get(gpus, i);
		const char *key;
		json_t *val;
		json_object_foreach(want, key, val) {
			if (!json_equal(val, json_object_get(got, key)))
				fail_msg("GPU %u: /api/v1/gpus's %s is not info --json's", i, key);
		}
		json_decref(want);
	}
	json_t *g1 = json_array_get(gpus, 1), *s1 = json_object_get(g1, "sample");
	json_t *r = json_object_get(s1, "clock_event_reasons");
	assert_int_equal(json_array_size(r), 2);
	assert_string_equal(json_string_value(json_array_get(r, 0)), "sw_power_cap");
	assert_string_equal(json_string_value(json_array_get(r, 1)), "hw_thermal_slowdown");
	assert_null(json_object_get(g1, "clock_event_reasons")); /* the old flat mask: gone */
	json_t *p = json_array_get(json_object_get(g1, "processes"), 0);
	assert_string_equal(json_string_value(json_object_get(p, "name")), "train?");
	assert_int_equal(json_integer_value(json_object_get(p, "used_mem_bytes")), 1 << 30);
	assert_null(json_object_get(p, "comm")); /* the old spellings: gone */
	assert_null(json_object_get(p, "memory_used_bytes"));
	assert_null(json_object_get(s1, "nvlinks"));
	json_decref(root);
	api_doc_free(&d);
	free(sn);
}

static void test_health_without_rules(void **state)
{
	(void)state;
	struct snapshot *sn = snapshot3();
	struct api_doc d;
	api_doc_init(&d);
	VAL_MARK(sn->gpu[1].st.uuid, VAL_ERROR);
	VAL_MARK(sn->sys.cuda_driver_version, VAL_UNSUPPORTED);
	assert_int_equal(api_render_health(&d, sn, NULL, "node9"), 0);
	char *text;
	json_t *root = load(&d, ~0ull, false, &text);
	assert_true(json_is_false(json_object_get(root, "rules")));
	assert_string_equal(json_string_value(json_object_get(root, "hostname")), "node9");
	/* values not there are left out and named under "unavailable", the last member (no null) */
	assert_null(json_object_get(root, "driver_version"));
	assert_null(json_object_get(root, "cuda_driver_version"));
	const char *tail = "]," "\"unavailable\":{\"driver_version\":\"not read\",\"cuda_driver_version\":\"not supported\"}}\n";
	assert_true(strlen(text) > strlen(tail));
	assert_string_equal(text + strlen(text) - strlen(tail), tail);
	free(text);
	json_t *gpus = json_object_get(root, "gpus");
	assert_string_equal(json_string_value(json_object_get(json_array_get(gpus, 0), "uuid")), "GPU-0");
	json_t *g1 = json_array_get(gpus, 1);
	assert_null(json_object_get(g1, "uuid"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(g1, "unavailable"), "uuid")), "error");
	assert_string_equal(json_string_value(json_object_get(json_array_get(gpus, 0), "verdict")), "PASS");
	assert_string_equal(json_string_value(json_object_get(json_array_get(gpus, 2), "verdict")), "FAIL");
	/* "error" as /api/v1/gpus and info --json write it; the old "last_error" is gone */
	assert_true(json_is_null(json_object_get(json_array_get(gpus, 0), "error")));
	assert_null(json_object_get(json_array_get(gpus, 0), "last_error"));
	assert_string_equal(json_string_value(json_object_get(json_array_get(gpus, 2), "error")),
			    "GPU 2 has fallen off the bus");
	assert_null(json_object_get(json_array_get(gpus, 2), "last_error"));
	json_decref(root);
	api_doc_free(&d);
	free(sn);
}

static void test_health_with_report(void **state)
{
	(void)state;
	struct snapshot *sn = snapshot3();
	struct health_report *rep = calloc(1, sizeof(*rep));
	rep->n = 3;
	rep->verdict = HEALTH_FAIL;
	rep->action = HEALTH_ACT_REBOOT;
	rep->system.index = -1;
	rep->system.verdict = HEALTH_PASS;
	for (unsigned i = 0; i < 3; i++) {
		rep->gpu[i].index = (int)i;
		rep->gpu[i].verdict = HEALTH_PASS;
	}
	struct health_entity *e = &rep->gpu[2];
	e->verdict = HEALTH_FAIL;
	e->action = HEALTH_ACT_REBOOT;
	e->nfind = 1;
	snprintf(e->find[0].rule_id, sizeof(e->find[0].rule_id), "gpu-lost");
	e->find[0].subsys = HS_PCIE;
	e->find[0].verdict = HEALTH_FAIL;
	e->find[0].action = HEALTH_ACT_REBOOT;
	snprintf(e->find[0].reason, sizeof(e->find[0].reason), "the GPU does not answer");
	snprintf(e->find[0].evidence, sizeof(e->find[0].evidence), "lost = 1");
	struct api_doc d;
	api_doc_init(&d);
	assert_int_equal(api_render_health(&d, sn, rep, NULL), 0);
	json_t *root = load(&d, ~0ull, false, NULL);
	assert_true(json_is_true(json_object_get(root, "rules")));
	assert_string_equal(json_string_value(json_object_get(root, "verdict")), "FAIL");
	json_t *g2 = json_array_get(json_object_get(root, "gpus"), 2);
	assert_string_equal(json_string_value(json_object_get(g2, "verdict")), "FAIL");
	json_t *f = json_array_get(json_object_get(g2, "findings"), 0);
	assert_string_equal(json_string_value(json_object_get(f, "rule")), "gpu-lost");
	assert_string_equal(json_string_value(json_object_get(f, "evidence")), "lost = 1");
	assert_null(json_object_get(f, "hint"));
	json_decref(root);
	api_doc_free(&d);
	free(rep);
	free(sn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpus_document),
		cmocka_unit_test(test_gpus_as_info_json),
		cmocka_unit_test(test_health_without_rules),
		cmocka_unit_test(test_health_with_report),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
