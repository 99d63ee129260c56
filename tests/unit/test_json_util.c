/* SPDX-License-Identifier: Apache-2.0 */
/* test_json_util.c - gpu.h values as JSON: present values typed, the others
 * named under "unavailable", never a silent 0; one GPU's whole object (the
 * one serializer of info --json and /api/v1/gpus) with every field of the
 * table, a down GPU's stale values withheld, process names made UTF-8. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view/json_util.h"

static void test_values(void **state)
{
	(void)state;
	json_t *o = json_object();
	u64v ok = { 42, VAL_OK }, uns = { 7, VAL_UNSUPPORTED }, bad = { 9, VAL_ERROR }, unread = { 0, VAL_UNKNOWN };
	u64v zero = { 0, VAL_OK };
	json_put_u64v(o, "a", ok);
	json_put_u64v(o, "b", uns);
	json_put_u64v(o, "c", bad);
	json_put_u64v(o, "d", unread);
	json_put_u64v(o, "z", zero);
	json_put_boolv(o, "on", ok);
	json_put_boolv(o, "off", zero);
	strv s = { "NVIDIA H200", VAL_OK }, s2 = { "junk", VAL_ERROR };
	json_put_strv(o, "name", &s);
	json_put_strv(o, "serial", &s2);
	i64v numa = { -1, VAL_OK };
	json_put_i64v(o, "numa", numa);

	assert_int_equal(json_integer_value(json_object_get(o, "a")), 42);
	assert_true(json_is_integer(json_object_get(o, "z")));
	assert_int_equal(json_integer_value(json_object_get(o, "z")), 0);
	assert_null(json_object_get(o, "b"));
	assert_null(json_object_get(o, "c"));
	assert_null(json_object_get(o, "serial"));
	assert_true(json_is_true(json_object_get(o, "on")));
	assert_true(json_is_false(json_object_get(o, "off")));
	assert_string_equal(json_string_value(json_object_get(o, "name")), "NVIDIA H200");
	assert_int_equal(json_integer_value(json_object_get(o, "numa")), -1);
	json_t *u = json_object_get(o, "unavailable");
	assert_non_null(u);
	assert_string_equal(json_string_value(json_object_get(u, "b")), "not supported");
	assert_string_equal(json_string_value(json_object_get(u, "c")), "error");
	assert_string_equal(json_string_value(json_object_get(u, "d")), "not read");
	assert_string_equal(json_string_value(json_object_get(u, "serial")), "error");
	assert_int_equal(json_object_size(u), 4);
	json_decref(o);

	/* jansson integers are signed: huge counters clamp instead of wrapping */
	json_t *big = json_u64(UINT64_MAX);
	assert_true(json_integer_value(big) == INT64_MAX);
	json_decref(big);
}

static void test_clock_events(void **state)
{
	(void)state;
	char b[128];
	clk_evt_describe(0, b, sizeof(b));
	assert_string_equal(b, "none");
	clk_evt_describe(CLK_EVT_GPU_IDLE | CLK_EVT_SW_POWER_CAP, b, sizeof(b));
	assert_string_equal(b, "Idle, SW Power Cap");
	clk_evt_describe(CLK_EVT_HW_THERMAL | 0x1000, b, sizeof(b));
	assert_string_equal(b, "HW Thermal Slowdown, 0x1000");
	/* every gpu.h bit has a name, and the bits are NVML's */
	uint64_t all = 0;
	for (unsigned i = 0; i < clk_evt_count; i++)
		all |= clk_evt_names[i].bit;
	assert_true(all == 0x1ff);

	struct gpu_sample s;
	memset(&s, 0, sizeof(s));
	VAL_SET(s.clock_event_reasons, CLK_EVT_HW_SLOWDOWN | CLK_EVT_SW_THERMAL);
	json_t *o = json_gpu_sample(&s);
	json_t *a = json_object_get(o, "clock_event_reasons");
	assert_int_equal(json_array_size(a), 2);
	assert_string_equal(json_string_value(json_array_get(a, 0)), "hw_slowdown");
	assert_string_equal(json_string_value(json_array_get(a, 1)), "sw_thermal_slowdown");
	/* a sample whose groups were skipped says so for each metric */
	json_t *u = json_object_get(o, "unavailable");
	assert_string_equal(json_string_value(json_object_get(u, "power_mw")), "not read");
	json_decref(o);
}

static void test_objects(void **state)
{
	(void)state;
	struct gpu_static st;
	memset(&st, 0, sizeof(st));
	st.index = 3;
	VAL_SET(st.cc_major, 9);
	VAL_SET(st.cc_minor, 0);
	VAL_SET(st.compute_mode, COMPUTE_EXCLUSIVE_PROCESS);
	st.numa_node.st = VAL_UNSUPPORTED;
	json_t *o = json_gpu_static(&st);
	assert_int_equal(json_integer_value(json_object_get(o, "index")), 3);
	assert_string_equal(json_string_value(json_object_get(o, "compute_capability")), "9.0");
	assert_string_equal(json_string_value(json_object_get(o, "compute_mode")), "Exclusive_Process");
	json_t *u = json_object_get(o, "unavailable");
	assert_string_equal(json_string_value(json_object_get(u, "numa_node")), "not supported");
	/* "unavailable" comes last, after every present value */
	const char *key, *last = NULL;
	json_t *val;
	json_object_foreach(o, key, val)
		last = key;
	assert_string_equal(last, "unavailable");
	json_decref(o);

	struct gpu_link l = { .kind = LINK_NVLINK, .nvlinks = 18, .pcie = LINK_PHB, .p2p_supported = true };
	char label[16];
	gpu_link_label(&l, label, sizeof(label));
	assert_string_equal(label, "NV18");
	o = json_gpu_link(0, 1, &l);
	assert_string_equal(json_string_value(json_object_get(o, "label")), "NV18");
	assert_string_equal(json_string_value(json_object_get(o, "pcie")), "PHB");
	json_decref(o);
	l = (struct gpu_link){ .kind = LINK_SELF };
	gpu_link_label(&l, label, sizeof(label));
	assert_string_equal(label, "X");
	l = (struct gpu_link){ .kind = LINK_NODE, .pcie = LINK_NODE };
	gpu_link_label(&l, label, sizeof(label));
	assert_string_equal(label, "NODE");

	struct gpu_process p = { .pid = 42, .uid = (uint32_t)-1, .name = "python", .type = 'C', .mig_gi = -1 };
	VAL_SET(p.used_mem_bytes, 1 << 20);
	o = json_gpu_process(&p);
	assert_true(json_is_null(json_object_get(o, "uid")));
	assert_string_equal(json_string_value(json_object_get(o, "type")), "C");
	assert_int_equal(json_integer_value(json_object_get(o, "used_mem_bytes")), 1 << 20);
	json_decref(o);
	assert_string_equal(gpu_compute_mode_name(7), "unknown");
}

/* The key of obj's last member (NULL when empty). */
static const char *last_key(json_t *obj)
{
	const char *key, *last = NULL;
	json_t *val;
	json_object_foreach(obj, key, val)
		last = key;
	return last;
}

/* Every row of the field table is in s: a value, or named under "unavailable". */
static void assert_every_field(json_t *s, const char *why_absent)
{
	json_t *u = json_object_get(s, "unavailable");
#define EVERY(member, ...) \
	if (why_absent) \
		assert_string_equal(json_string_value(json_object_get(u, #member)), why_absent); \
	else if (!json_object_get(s, #member)) \
		fail_msg("no %s", #member);
	GPU_SAMPLE_FIELDS(EVERY)
#undef EVERY
}

static void test_view(void **state)
{
	(void)state;
	struct gpu_view *v = gpu_view_new();
	v->up = true;
	v->st.index = 5;
	snprintf(v->st.name.s, sizeof(v->st.name.s), "NVIDIA H200");
	v->st.name.st = VAL_OK;
	v->s.timestamp_ns = 7;
	uint64_t k = 0;
#define PRESENT(member, ...) VAL_SET(v->s.member, ++k);
	GPU_SAMPLE_FIELDS(PRESENT)
#undef PRESENT
	VAL_SET(v->s.clock_event_reasons, CLK_EVT_SW_POWER_CAP);
	VAL_MARK(v->s.fan_pct, VAL_UNSUPPORTED);
	VAL_MARK(v->s.temp_c, VAL_ERROR);
	v->s.nvlink_n = 2;
	VAL_SET(v->s.nvlink[0].active, 1);
	v->nproc = 1;
	v->procs[0] = (struct gpu_process){ .pid = 9, .uid = 1000, .type = 'C', .mig_gi = -1 };
	snprintf(v->procs[0].name, sizeof(v->procs[0].name), "py\xff\xfe");
	snprintf(v->procs[0].user, sizeof(v->procs[0].user), "alice");
	VAL_SET(v->procs[0].used_mem_bytes, 4096);

	json_t *g = json_gpu_view(v, 0);
	assert_int_equal(json_integer_value(json_object_get(g, "index")), 5);
	assert_string_equal(json_string_value(json_object_get(g, "name")), "NVIDIA H200");
	assert_true(json_is_true(json_object_get(g, "up")));
	assert_true(json_is_null(json_object_get(g, "error")));
	assert_string_equal(last_key(g), "unavailable"); /* the static facts left unread */
	json_t *s = json_object_get(g, "sample");
	/* present: its value in the table's unit; missing: absent, and why */
	assert_int_equal(json_integer_value(json_object_get(s, "timestamp_ns")), 7);
	assert_true(json_is_integer(json_object_get(s, "power_mw")));
	assert_null(json_object_get(s, "fan_pct"));
	assert_null(json_object_get(s, "temp_c"));
	json_t *u = json_object_get(s, "unavailable");
	assert_string_equal(json_string_value(json_object_get(u, "fan_pct")), "not supported");
	assert_string_equal(json_string_value(json_object_get(u, "temp_c")), "error");
	assert_int_equal(json_object_size(u), 2);
	VAL_SET(v->s.fan_pct, 1);
	VAL_SET(v->s.temp_c, 1);
	json_t *all = json_gpu_view(v, 0);
	assert_every_field(json_object_get(all, "sample"), NULL);
	json_decref(all);
	/* reasons as names, and the mask */
	json_t *r = json_object_get(s, "clock_event_reasons");
	assert_int_equal(json_array_size(r), 1);
	assert_string_equal(json_string_value(json_array_get(r, 0)), "sw_power_cap");
	assert_int_equal(json_integer_value(json_object_get(s, "clock_event_reasons_mask")), CLK_EVT_SW_POWER_CAP);
	assert_int_equal(json_array_size(json_object_get(s, "nvlinks")), 2);
	/* a process name that is not UTF-8 is written, made UTF-8 */
	json_t *p = json_array_get(json_object_get(g, "processes"), 0);
	assert_string_equal(json_string_value(json_object_get(p, "name")), "py??");
	assert_string_equal(json_string_value(json_object_get(p, "user")), "alice");
	assert_int_equal(json_integer_value(json_object_get(p, "used_mem_bytes")), 4096);
	assert_int_equal(json_array_size(json_object_get(g, "mig_instances")), 0);
	json_decref(g);

	/* the API's form: no per-link objects */
	g = json_gpu_view(v, JSON_GPU_NO_NVLINK_LIST);
	assert_null(json_object_get(json_object_get(g, "sample"), "nvlinks"));
	json_decref(g);

	/* down: what the view still holds is stale, so no value is written */
	v->up = false;
	v->s.lost = true;
	snprintf(v->last_error, sizeof(v->last_error), "GPU 5 has fallen off the bus");
	v->nproc = 0;
	g = json_gpu_view(v, 0);
	assert_true(json_is_false(json_object_get(g, "up")));
	assert_string_equal(json_string_value(json_object_get(g, "error")), "GPU 5 has fallen off the bus");
	s = json_object_get(g, "sample");
	assert_true(json_is_true(json_object_get(s, "lost")));
	assert_every_field(s, "not read");
	assert_null(json_object_get(s, "power_mw"));
	assert_int_equal(json_array_size(json_object_get(s, "nvlinks")), 0);
	assert_string_equal(last_key(s), "unavailable");
	json_decref(g);
	free(v);
}

static void test_write(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_t *o = json_object();
	json_object_set_new(o, "zeta", json_integer(1));
	json_object_set_new(o, "alpha", json_integer(2));
	assert_int_equal(json_write(o, f), 0);
	fclose(f);
	/* insertion order kept, two-space indent, newline at the end */
	assert_string_equal(buf, "{\n  \"zeta\": 1,\n  \"alpha\": 2\n}\n");
	json_decref(o);
	free(buf);
}

/* Every row of the field table is a key of --json's sample, in the table's
 * order, and docs/json.md names it. */
static void test_sample_fields(void **state)
{
	(void)state;
	static const char *const members[] = {
#define MEMBER(member, ...) #member,
		GPU_SAMPLE_FIELDS(MEMBER)
#undef MEMBER
	};
	struct gpu_sample *s = calloc(1, sizeof(*s));
	uint64_t k = 0;
#define PRESENT(member, ...) VAL_SET(s->member, ++k);
	GPU_SAMPLE_FIELDS(PRESENT)
#undef PRESENT
	json_t *o = json_gpu_sample(s);
	const char *key;
	json_t *val;
	size_t at = 0;
	json_object_foreach(o, key, val) {
		if (at < sizeof(members) / sizeof(members[0]) && strcmp(key, members[at]) == 0)
			at++;
	}
	if (at != sizeof(members) / sizeof(members[0]))
		fail_msg("sample has no key %s (or not in the table's order)", members[at]);
	assert_null(json_object_get(o, "unavailable"));
	json_decref(o);
	free(s);

	const char *dir = getenv("GPUCTL_TEST_DIR");
	assert_non_null(dir);
	char path[1024];
	snprintf(path, sizeof(path), "%s/../docs/json.md", dir);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char doc[1 << 17];
	size_t len = fread(doc, 1, sizeof(doc) - 1, f);
	fclose(f);
	doc[len] = '\0';
	for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		char cell[96];
		snprintf(cell, sizeof(cell), "`%s`", members[i]);
		if (!strstr(doc, cell))
			fail_msg("docs/json.md does not name the sample's %s", members[i]);
	}
	/* and the agent API's key of every field that has one */
	static const char *const api_keys[] = {
#define API_KEY(member, group, unit, api_key, ...) api_key,
		GPU_SAMPLE_FIELDS(API_KEY)
#undef API_KEY
	};
	for (size_t i = 0; i < sizeof(api_keys) / sizeof(api_keys[0]); i++) {
		char cell[96];
		snprintf(cell, sizeof(cell), "`%s`", api_keys[i] ? api_keys[i] : "");
		if (api_keys[i] && !strstr(doc, cell))
			fail_msg("docs/json.md does not name the API's %s", api_keys[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_clock_events),
		cmocka_unit_test(test_objects),
		cmocka_unit_test(test_view),
		cmocka_unit_test(test_write),
		cmocka_unit_test(test_sample_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
