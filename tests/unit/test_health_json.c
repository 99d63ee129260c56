/* SPDX-License-Identifier: Apache-2.0 */
/* test_health_json.c - the one health entity serializer (src/health/json.h),
 * in both details: the agent's brief one and `gpuctl health --json`'s full one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "health/json.h"

static struct health_entity *entity(void)
{
	struct health_entity *e = calloc(1, sizeof(*e));
	assert_non_null(e);
	e->index = 1;
	e->verdict = HEALTH_WARN;
	e->action = HEALTH_ACT_NONE;
	e->sub[HS_THERMAL] = HEALTH_WARN;
	e->checked[HS_THERMAL] = 3;
	e->sub[HS_MEMORY] = HEALTH_PASS;
	e->checked[HS_MEMORY] = 2;
	e->skipped = 4;
	e->nfind = 2;
	e->truncated = true;
	struct health_finding *f = &e->find[0];
	strcpy(f->rule_id, "temp.high");
	f->subsys = HS_THERMAL;
	f->verdict = HEALTH_WARN;
	f->action = HEALTH_ACT_NONE;
	strcpy(f->reason, "hot");
	strcpy(f->evidence, "temp_c=91");
	strcpy(f->hint, "check the fans");
	f = &e->find[1];
	strcpy(f->rule_id, "mem.x");
	f->subsys = HS_MEMORY;
	f->verdict = HEALTH_PASS;
	strcpy(f->reason, "r");
	strcpy(f->evidence, "e"); /* no hint */
	return e;
}

static char *dump(json_t *o)
{
	assert_non_null(o);
	char *s = json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT);
	json_decref(o);
	assert_non_null(s);
	return s;
}

static void test_brief_is_the_agents(void **state)
{
	(void)state;
	struct health_entity *e = entity();
	/* the verdict and action given win over the entity's own (a GPU's effective ones) */
	char *s = dump(health_entity_json(e, HEALTH_FAIL, HEALTH_ACT_RESET_GPU, HEALTH_JSON_BRIEF));
	char want[1024];
	snprintf(want, sizeof(want),
		 "{\"verdict\":\"FAIL\",\"action\":\"%s\",\"findings\":["
		 "{\"rule\":\"temp.high\",\"subsystem\":\"%s\",\"verdict\":\"WARN\",\"action\":\"%s\","
		 "\"reason\":\"hot\",\"evidence\":\"temp_c=91\",\"hint\":\"check the fans\"},"
		 "{\"rule\":\"mem.x\",\"subsystem\":\"%s\",\"verdict\":\"PASS\",\"action\":\"%s\","
		 "\"reason\":\"r\",\"evidence\":\"e\"}]}",
		 health_action_name(HEALTH_ACT_RESET_GPU), health_subsys_name(HS_THERMAL),
		 health_action_name(HEALTH_ACT_NONE), health_subsys_name(HS_MEMORY), health_action_name(HEALTH_ACT_NONE));
	assert_string_equal(s, want);
	free(s);
	free(e);
}

static void test_full_is_the_commands(void **state)
{
	(void)state;
	struct health_entity *e = entity();
	json_t *o = health_entity_json(e, e->verdict, e->action, HEALTH_JSON_FULL);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "verdict")), "WARN");
	assert_int_equal(json_integer_value(json_object_get(o, "rules_checked")), 5);
	assert_int_equal(json_integer_value(json_object_get(o, "rules_skipped")), 4);
	assert_true(json_is_true(json_object_get(o, "findings_truncated")));
	json_t *subs = json_object_get(o, "subsystems");
	assert_int_equal(json_object_size(subs), HS_COUNT);
	assert_string_equal(json_string_value(json_object_get(subs, health_subsys_name(HS_THERMAL))), "WARN");
	assert_string_equal(json_string_value(json_object_get(subs, health_subsys_name(HS_MEMORY))), "PASS");
	json_t *fs = json_object_get(o, "findings");
	assert_int_equal(json_array_size(fs), 2);
	/* every finding has a hint in the full detail, "" when it has none */
	assert_string_equal(json_string_value(json_object_get(json_array_get(fs, 0), "hint")), "check the fans");
	assert_string_equal(json_string_value(json_object_get(json_array_get(fs, 1), "hint")), "");
	json_decref(o);
	free(e);
}

static void test_findings_capped(void **state)
{
	(void)state;
	struct health_entity *e = entity();
	e->nfind = HEALTH_MAX_FINDINGS + 5; /* a corrupt count never reads past the array */
	json_t *o = health_entity_json(e, e->verdict, e->action, HEALTH_JSON_BRIEF);
	assert_int_equal(json_array_size(json_object_get(o, "findings")), HEALTH_MAX_FINDINGS);
	json_decref(o);
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_brief_is_the_agents),
		cmocka_unit_test(test_full_is_the_commands),
		cmocka_unit_test(test_findings_capped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
