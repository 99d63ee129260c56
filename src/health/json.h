/* SPDX-License-Identifier: Apache-2.0 */
/*
 * health/json.h - the one JSON serializer of a health entity (the system or
 * one GPU) and its findings, used by `gpuctl health --json` (cmd/health.c)
 * and the agent's /api/v1/health (agent/api.c). The documents around the
 * entities (snapshot header, GPU names) are their callers'. Keys: docs/health.md.
 */
#ifndef GPUCTL_HEALTH_JSON_H
#define GPUCTL_HEALTH_JSON_H

#include <jansson.h>

#include "health/health.h"

enum health_json_detail {
	/* verdict, action, findings (a finding's "hint" only when it has one):
	 * the agent's /api/v1/health */
	HEALTH_JSON_BRIEF,
	/* also subsystems, rules_checked, rules_skipped, findings_truncated, and
	 * every finding's "hint" ("" when none): `gpuctl health --json` */
	HEALTH_JSON_FULL,
};

/* One finding as an object: rule, subsystem, verdict, action, reason,
 * evidence, hint (see detail). NULL when out of memory. */
json_t *health_finding_json(const struct health_finding *f, enum health_json_detail detail);
/* An entity as an object, with `verdict` and `action` given (a GPU's
 * effective ones, or its own). NULL when out of memory. */
json_t *health_entity_json(const struct health_entity *e, enum health_verdict verdict, enum health_action action,
			   enum health_json_detail detail);

#endif
