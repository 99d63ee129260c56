// SPDX-License-Identifier: Apache-2.0
/* health/json.c - a health entity and its findings as JSON (health/json.h). */
#include "health/json.h"

json_t *health_finding_json(const struct health_finding *f, enum health_json_detail detail)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "rule", json_string(f->rule_id));
	json_object_set_new(o, "subsystem", json_string(health_subsys_name(f->subsys)));
	json_object_set_new(o, "verdict", json_string(health_verdict_name(f->verdict)));
	json_object_set_new(o, "action", json_string(health_action_name(f->action)));
	json_object_set_new(o, "reason", json_string(f->reason));
	json_object_set_new(o, "evidence", json_string(f->evidence));
	if (f->hint[0] || detail == HEALTH_JSON_FULL)
		json_object_set_new(o, "hint", json_string(f->hint));
	return o;
}

json_t *health_entity_json(const struct health_entity *e, enum health_verdict verdict, enum health_action action,
			   enum health_json_detail detail)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "verdict", json_string(health_verdict_name(verdict)));
	json_object_set_new(o, "action", json_string(health_action_name(action)));
	if (detail == HEALTH_JSON_FULL) {
		json_t *subs = json_object();
		unsigned checked = 0;
		for (unsigned s = 0; s < HS_COUNT; s++) {
			json_object_set_new(subs, health_subsys_name((enum health_subsys)s),
					    json_string(health_verdict_name(e->sub[s])));
			checked += e->checked[s];
		}
		json_object_set_new(o, "subsystems", subs);
		json_object_set_new(o, "rules_checked", json_integer(checked));
		json_object_set_new(o, "rules_skipped", json_integer(e->skipped));
	}
	json_t *fs = json_array();
	for (unsigned k = 0; k < e->nfind && k < HEALTH_MAX_FINDINGS; k++)
		json_array_append_new(fs, health_finding_json(&e->find[k], detail));
	json_object_set_new(o, "findings", fs);
	if (detail == HEALTH_JSON_FULL)
		json_object_set_new(o, "findings_truncated", json_boolean(e->truncated));
	return o;
}
