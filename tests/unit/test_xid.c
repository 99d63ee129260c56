/* SPDX-License-Identifier: Apache-2.0 */
/* test_xid.c - the shipped XID catalog and the rules/XID file parsers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "health/health.h"

static void test_catalog_has_the_required_codes(void **state)
{
	(void)state;
	static struct health_rules r;
	char err[256];
	if (health_rules_load_default(&r, getenv("GPUCTL_DATA_DIR"), err, sizeof(err)) != 0)
		fail_msg("%s", err);
	static const uint64_t need[] = { 13, 31, 32, 43, 45, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95,
					 109, 119, 120, 121, 140 };
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		const struct health_xid *x = health_xid_find(&r, need[i]);
		if (x == &r.xid_default)
			fail_msg("XID %llu missing from xid.json", (unsigned long long)need[i]);
		assert_true(x->meaning[0] && x->name[0]);
		assert_true(x->verdict >= HEALTH_PASS && x->verdict <= HEALTH_FAIL);
	}
	assert_non_null(strstr(r.xid_source, "docs.nvidia.com"));
	/* the hardware-fatal ones fail; the application ones only warn */
	assert_int_equal(health_xid_find(&r, 79)->verdict, HEALTH_FAIL);
	assert_int_equal(health_xid_find(&r, 79)->action, HEALTH_ACT_REBOOT);
	assert_int_equal(health_xid_find(&r, 13)->verdict, HEALTH_WARN);
	assert_int_equal(health_xid_find(&r, 12345)->verdict, r.xid_default.verdict);
	assert_string_equal(health_xid_find(&r, 12345)->name, "unknown");
	assert_non_null(health_rule_find(&r, "xid-catalog"));
	assert_null(health_rule_find(&r, "no-such-rule"));
}

static void expect_rules_error(const char *json, const char *msg_has)
{
	static struct health_rules r;
	char err[256] = "";
	assert_int_equal(health_rules_parse(&r, json, strlen(json), err, sizeof(err)), -1);
	if (!strstr(err, msg_has))
		fail_msg("error '%s' lacks '%s'", err, msg_has);
	assert_int_equal(r.nrules, 0);
}

#define RULE(extra) "{\"version\":1,\"rules\":[{\"id\":\"a\",\"subsystem\":\"memory\",\"metric\":\"remap_failure\"," \
	"\"reason\":\"r\",\"source\":\"s\"" extra "}]}"
#define FULL ",\"op\":\">\",\"threshold\":0,\"verdict\":\"FAIL\",\"action\":\"replace_board\""

static void test_rules_parser(void **state)
{
	(void)state;
	static struct health_rules r;
	char err[256];
	const char *ok = RULE(FULL);
	assert_int_equal(health_rules_parse(&r, ok, strlen(ok), err, sizeof(err)), 0);
	assert_int_equal(r.nrules, 1);
	assert_int_equal(r.rules[0].metric, HM_REMAP_FAILURE);
	assert_int_equal(r.rules[0].op, HOP_GT);
	assert_int_equal(r.rules[0].action, HEALTH_ACT_REPLACE_BOARD);
	assert_string_equal(r.rules[0].hint, "");

	expect_rules_error("{", "rules.json: line 1");
	expect_rules_error("{\"version\":2,\"rules\":[]}", "version 1");
	expect_rules_error("{\"version\":1,\"rules\":[]}", "non-empty array");
	expect_rules_error(RULE(",\"op\":\">\",\"threshold\":0,\"verdict\":\"FAIL\""), "missing \"action\"");
	expect_rules_error(RULE(",\"op\":\"=>\",\"threshold\":0,\"verdict\":\"FAIL\",\"action\":\"none\""), "unknown op '=>'");
	expect_rules_error(RULE(",\"op\":\">\",\"threshold\":\"0\",\"verdict\":\"FAIL\",\"action\":\"none\""), "threshold");
	expect_rules_error(RULE(",\"op\":\">\",\"threshold\":0,\"verdict\":\"N/A\",\"action\":\"none\""), "unknown verdict");
	expect_rules_error(RULE(",\"op\":\">\",\"threshold\":0,\"verdict\":\"WARN\",\"action\":\"pray\""), "unknown action 'pray'");
	expect_rules_error("{\"version\":1,\"rules\":[{\"id\":\"a\",\"subsystem\":\"memory\",\"metric\":\"nope\"}]}",
			   "rule 'a': unknown metric 'nope'");
	/* the names the sample has since issue 35; the old one says the new */
	expect_rules_error("{\"version\":1,\"rules\":[{\"id\":\"a\",\"subsystem\":\"memory\",\"metric\":"
			   "\"ecc_volatile_uncorrected\"}]}",
			   "rule 'a': unknown metric 'ecc_volatile_uncorrected' (renamed 'ecc_vol_uncorrected')");
	expect_rules_error("{\"version\":1,\"rules\":[{\"id\":\"a\",\"subsystem\":\"disk\",\"metric\":\"xid\"}]}",
			   "unknown subsystem 'disk'");
	expect_rules_error("{\"version\":1,\"rules\":[{\"id\":\"\"}]}", "rule 0: \"id\" is empty");
	expect_rules_error("{\"version\":1,\"rules\":[7]}", "rule 0: not an object");
	char dup[1024];
	const char *one = "{\"id\":\"a\",\"subsystem\":\"memory\",\"metric\":\"remap_failure\",\"reason\":\"r\","
			  "\"source\":\"s\"" FULL "}";
	snprintf(dup, sizeof(dup), "{\"version\":1,\"rules\":[%s,%s]}", one, one);
	expect_rules_error(dup, "'a' appears twice");
}

static void test_xid_parser(void **state)
{
	(void)state;
	static struct health_rules r;
	char err[256];
	const char *ok = "{\"version\":1,\"source\":\"nv\",\"default\":{\"meaning\":\"m\",\"verdict\":\"WARN\","
			 "\"action\":\"drain\"},\"xids\":[{\"code\":79,\"name\":\"n\",\"meaning\":\"m\","
			 "\"verdict\":\"FAIL\",\"action\":\"reboot\"}]}";
	assert_int_equal(health_xids_parse(&r, ok, strlen(ok), err, sizeof(err)), 0);
	assert_int_equal(r.nxids, 1);
	assert_int_equal(health_xid_find(&r, 79)->action, HEALTH_ACT_REBOOT);
	const char *bad = "{\"version\":1,\"source\":\"nv\",\"default\":{\"meaning\":\"m\",\"verdict\":\"WARN\","
			  "\"action\":\"drain\"},\"xids\":[{\"code\":-4,\"name\":\"n\",\"meaning\":\"m\","
			  "\"verdict\":\"FAIL\",\"action\":\"reboot\"}]}";
	assert_int_equal(health_xids_parse(&r, bad, strlen(bad), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "entry 0: \"code\""));
	const char *nodef = "{\"version\":1,\"source\":\"nv\",\"xids\":[]}";
	assert_int_equal(health_xids_parse(&r, nodef, strlen(nodef), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "\"default\": not an object"));
}

static void test_names_round_trip(void **state)
{
	(void)state;
	for (int m = 0; m < HM_COUNT; m++) {
		enum health_metric back;
		assert_int_equal(health_metric_parse(health_metric_name((enum health_metric)m), &back), 0);
		assert_int_equal(back, m);
	}
	for (int a = 0; a < HEALTH_ACT_COUNT; a++) {
		enum health_action back;
		assert_int_equal(health_action_parse(health_action_name((enum health_action)a), &back), 0);
		assert_int_equal(back, a);
	}
	for (int s = 0; s < HS_COUNT; s++) {
		enum health_subsys back;
		assert_int_equal(health_subsys_parse(health_subsys_name((enum health_subsys)s), &back), 0);
		assert_int_equal(back, s);
	}
	assert_string_equal(health_verdict_name(HEALTH_NA), "N/A");
	assert_string_equal(health_action_text(HEALTH_ACT_REPLACE_BOARD), "replace the board");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catalog_has_the_required_codes),
		cmocka_unit_test(test_rules_parser),
		cmocka_unit_test(test_xid_parser),
		cmocka_unit_test(test_names_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
