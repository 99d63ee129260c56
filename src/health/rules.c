/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rules.c - the rules file and the XID catalog: parsing (jansson) and the
 * stable names used in them, in --json and in docs/health.md.
 *
 * rules.json:  { "version": 1, "rules": [ { "id", "subsystem", "metric", "op",
 *                "threshold", "verdict", "action", "reason", "hint"?, "source" } ] }
 * xid.json:    { "version": 1, "source": "...", "default": { "verdict", "action",
 *                "meaning" }, "xids": [ { "code", "name", "meaning", "verdict",
 *                "action" } ] }
 * Every malformed input is a one-line error naming the entry; nothing is
 * silently defaulted except the optional "hint".
 */
#include "health.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/data_path.h"

static const char *const verdict_names[] = { "N/A", "PASS", "WARN", "FAIL" };
static const char *const action_names[] = { "none", "drain", "reset_gpu", "reboot", "replace_board" };
static const char *const action_texts[] = { "none", "drain the GPU", "reset the GPU", "reboot the node",
					    "replace the board" };
static const char *const subsys_names[] = { "memory", "pcie", "nvlink", "thermal", "power", "driver",
					    "xid", "processes", "config" };
static const char *const op_names[] = { ">", ">=", "<", "<=", "==", "!=" };

/* Metric names and units, indexed by enum health_metric. */
static const struct { const char *name, *unit; } metrics[HM_COUNT] = {
	[HM_GPU_LOST] = { "gpu_lost", "" },
	/* the sample's spelling (ecc_vol_*: docs/json.md); "ecc_volatile_*" before issue 35 */
	[HM_ECC_VOL_UNCORRECTED] = { "ecc_vol_uncorrected", "errors" },
	[HM_ECC_VOL_CORRECTED_RATE] = { "ecc_vol_corrected_rate", "errors/s" },
	[HM_ECC_MODE_OFF] = { "ecc_mode_off", "" },
	[HM_ECC_MODE_PENDING] = { "ecc_mode_pending", "" },
	[HM_RETIRED_PAGES] = { "retired_pages", "pages" },
	[HM_RETIRED_PAGES_PENDING] = { "retired_pages_pending", "" },
	[HM_REMAP_PENDING] = { "remap_pending", "" },
	[HM_REMAP_FAILURE] = { "remap_failure", "" },
	[HM_REMAP_UNCORRECTED] = { "remap_uncorrected", "rows" },
	[HM_NVLINK_DOWN] = { "nvlink_down", "links" },
	[HM_NVLINK_REPLAY_NEW] = { "nvlink_replay_new", "errors" },
	[HM_NVLINK_RECOVERY_NEW] = { "nvlink_recovery_new", "errors" },
	[HM_NVLINK_REPLAY_TOTAL] = { "nvlink_replay_total", "errors" },
	[HM_NVLINK_RECOVERY_TOTAL] = { "nvlink_recovery_total", "errors" },
	[HM_NVLINK_CRC_RATE] = { "nvlink_crc_rate", "errors/s" },
	[HM_PCIE_REPLAY_BER_RATIO] = { "pcie_replay_ber_ratio", "x budget" },
	[HM_PCIE_GEN_DEFICIT] = { "pcie_gen_deficit", "generations" },
	[HM_PCIE_WIDTH_DEFICIT] = { "pcie_width_deficit", "lanes" },
	[HM_THERMAL_VIOLATION_RATE] = { "thermal_violation_rate", "ms/s" },
	[HM_THERMAL_SLOWDOWN_ACTIVE] = { "thermal_slowdown_active", "" },
	[HM_TEMP_OVER_SLOWDOWN] = { "temp_over_slowdown", "C" },
	[HM_POWER_VIOLATION_RATE] = { "power_violation_rate", "ms/s" },
	[HM_POWER_BRAKE_ACTIVE] = { "power_brake_active", "" },
	[HM_POWER_LIMIT_LOWERED] = { "power_limit_lowered", "W" },
	[HM_PERSISTENCE_OFF] = { "persistence_off", "" },
	[HM_MIG_MODE_PENDING] = { "mig_mode_pending", "" },
	[HM_COMPUTE_PROHIBITED] = { "compute_prohibited", "" },
	[HM_FOREIGN_PROCESSES] = { "foreign_processes", "processes" },
	[HM_ALLOCATED_SM_ACTIVE] = { "allocated_sm_active", "%" },
	[HM_DRIVER_LIB_MISMATCH] = { "driver_library_mismatch", "" },
	[HM_CUDA_TOO_OLD] = { "cuda_too_old", "" },
	[HM_FABRIC_MANAGER_DOWN] = { "fabric_manager_down", "" },
	[HM_XID] = { "xid", "events" },
};

const char *health_verdict_name(enum health_verdict v)
{
	return (unsigned)v < 4 ? verdict_names[v] : "?";
}
const char *health_action_name(enum health_action a)
{
	return (unsigned)a < HEALTH_ACT_COUNT ? action_names[a] : "?";
}
const char *health_action_text(enum health_action a)
{
	return (unsigned)a < HEALTH_ACT_COUNT ? action_texts[a] : "?";
}
const char *health_subsys_name(enum health_subsys s)
{
	return (unsigned)s < HS_COUNT ? subsys_names[s] : "?";
}
const char *health_metric_name(enum health_metric m)
{
	return (unsigned)m < HM_COUNT ? metrics[m].name : "?";
}
const char *health_metric_unit(enum health_metric m)
{
	return (unsigned)m < HM_COUNT ? metrics[m].unit : "";
}
const char *health_op_name(enum health_op op)
{
	return (unsigned)op < 6 ? op_names[op] : "?";
}

static int lookup(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (strcasecmp(s, names[i]) == 0)
			return i;
	return -1;
}

static int health_verdict_parse(const char *s, enum health_verdict *out)
{
	int i = lookup(s, verdict_names, 4);
	if (i <= 0) /* N/A is not a verdict a rule may give */
		return -1;
	*out = (enum health_verdict)i;
	return 0;
}
int health_action_parse(const char *s, enum health_action *out)
{
	int i = lookup(s, action_names, HEALTH_ACT_COUNT);
	if (i < 0)
		return -1;
	*out = (enum health_action)i;
	return 0;
}
int health_subsys_parse(const char *s, enum health_subsys *out)
{
	int i = lookup(s, subsys_names, HS_COUNT);
	if (i < 0)
		return -1;
	*out = (enum health_subsys)i;
	return 0;
}
static int health_op_parse(const char *s, enum health_op *out)
{
	for (int i = 0; i < 6; i++)
		if (strcmp(s, op_names[i]) == 0) {
			*out = (enum health_op)i;
			return 0;
		}
	return -1;
}
int health_metric_parse(const char *s, enum health_metric *out)
{
	for (int i = 0; i < HM_COUNT; i++)
		if (strcmp(s, metrics[i].name) == 0) {
			*out = (enum health_metric)i;
			return 0;
		}
	return -1;
}

/* Copies a required (or optional) string member; -1 with a message if absent,
 * not a string, empty or too long. */
static int get_str(json_t *obj, const char *key, bool required, char *dst, size_t dstlen, const char *what,
		   char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, key);
	if (!v) {
		if (!required) {
			dst[0] = '\0';
			return 0;
		}
		snprintf(err, errlen, "%s: missing \"%s\"", what, key);
		return -1;
	}
	if (!json_is_string(v)) {
		snprintf(err, errlen, "%s: \"%s\" is not a string", what, key);
		return -1;
	}
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	if (required && n == 0) {
		snprintf(err, errlen, "%s: \"%s\" is empty", what, key);
		return -1;
	}
	if (n >= dstlen || strlen(s) != n) {
		snprintf(err, errlen, "%s: \"%s\" is too long or holds a NUL", what, key);
		return -1;
	}
	memcpy(dst, s, n + 1);
	return 0;
}

static int get_enum(json_t *obj, const char *key, int (*parse)(const char *, void *), void *out, const char *what,
		    char *err, size_t errlen)
{
	char buf[64];
	if (get_str(obj, key, true, buf, sizeof(buf), what, err, errlen) != 0)
		return -1;
	if (parse(buf, out) != 0) {
		/* a rules file of one's own written before issue 35: say the name it has now */
		bool renamed = strcmp(key, "metric") == 0 && strncmp(buf, "ecc_volatile_", 13) == 0;
		snprintf(err, errlen, "%s: unknown %s '%s'%s%s%s", what, key, buf, renamed ? " (renamed 'ecc_vol_" : "",
			 renamed ? buf + 13 : "", renamed ? "')" : "");
		return -1;
	}
	return 0;
}

/* Adapters so get_enum takes one function type. */
static int p_verdict(const char *s, void *o) { return health_verdict_parse(s, o); }
static int p_action(const char *s, void *o) { return health_action_parse(s, o); }
static int p_subsys(const char *s, void *o) { return health_subsys_parse(s, o); }
static int p_metric(const char *s, void *o) { return health_metric_parse(s, o); }
static int p_op(const char *s, void *o) { return health_op_parse(s, o); }

static json_t *load_root(const char *json, size_t len, const char *file, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(err, errlen, "%s: line %d: %s", file, jerr.line, jerr.text);
		return NULL;
	}
	json_t *ver = json_object_get(root, "version");
	if (!json_is_object(root) || !json_is_integer(ver) || json_integer_value(ver) != 1) {
		snprintf(err, errlen, "%s: not a version 1 file (need {\"version\": 1, ...})", file);
		json_decref(root);
		return NULL;
	}
	return root;
}

static int parse_rule(json_t *o, size_t idx, const char *file, struct health_rule *out, char *err, size_t errlen)
{
	char what[160];
	snprintf(what, sizeof(what), "%.100s: rule %zu", file, idx);
	if (!json_is_object(o)) {
		snprintf(err, errlen, "%s: not an object", what);
		return -1;
	}
	memset(out, 0, sizeof(*out));
	if (get_str(o, "id", true, out->id, sizeof(out->id), what, err, errlen) != 0)
		return -1;
	snprintf(what, sizeof(what), "%.100s: rule '%.40s'", file, out->id);
	if (get_enum(o, "subsystem", p_subsys, &out->subsys, what, err, errlen) != 0 ||
	    get_enum(o, "metric", p_metric, &out->metric, what, err, errlen) != 0 ||
	    get_str(o, "reason", true, out->reason, sizeof(out->reason), what, err, errlen) != 0 ||
	    get_str(o, "hint", false, out->hint, sizeof(out->hint), what, err, errlen) != 0 ||
	    get_str(o, "source", true, out->source, sizeof(out->source), what, err, errlen) != 0)
		return -1;
	if (out->metric == HM_XID) {
		/* verdict and action come from the XID catalog; the rule only enables it */
		out->op = HOP_GT;
		out->threshold = 0;
		out->verdict = HEALTH_WARN;
		out->action = HEALTH_ACT_NONE;
		return 0;
	}
	if (get_enum(o, "verdict", p_verdict, &out->verdict, what, err, errlen) != 0 ||
	    get_enum(o, "action", p_action, &out->action, what, err, errlen) != 0 ||
	    get_enum(o, "op", p_op, &out->op, what, err, errlen) != 0)
		return -1;
	json_t *t = json_object_get(o, "threshold");
	if (!json_is_number(t) || !isfinite(json_number_value(t))) {
		snprintf(err, errlen, "%s: \"threshold\" must be a finite number", what);
		return -1;
	}
	out->threshold = json_number_value(t);
	return 0;
}

int health_rules_parse(struct health_rules *r, const char *json, size_t len, char *err, size_t errlen)
{
	return health_rules_parse_file(r, json, len, "rules.json", err, errlen);
}

int health_rules_parse_file(struct health_rules *r, const char *json, size_t len, const char *file, char *err,
			    size_t errlen)
{
	json_t *root = load_root(json, len, file, err, errlen);
	if (!root)
		return -1;
	json_t *arr = json_object_get(root, "rules");
	int rc = -1;
	if (!json_is_array(arr) || json_array_size(arr) == 0) {
		snprintf(err, errlen, "%s: \"rules\" must be a non-empty array", file);
		goto out;
	}
	if (json_array_size(arr) > HEALTH_MAX_RULES) {
		snprintf(err, errlen, "%s: %zu rules, at most %d", file, json_array_size(arr), HEALTH_MAX_RULES);
		goto out;
	}
	unsigned n = 0;
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o) {
		if (parse_rule(o, i, file, &r->rules[n], err, errlen) != 0)
			goto out;
		for (unsigned k = 0; k < n; k++)
			if (strcmp(r->rules[k].id, r->rules[n].id) == 0) {
				snprintf(err, errlen, "%s: rule id '%s' appears twice", file, r->rules[n].id);
				goto out;
			}
		n++;
	}
	r->nrules = n;
	rc = 0;
out:
	if (rc != 0)
		r->nrules = 0;
	json_decref(root);
	return rc;
}

static int parse_xid(json_t *o, const char *what, bool need_code, struct health_xid *out, char *err, size_t errlen)
{
	if (!json_is_object(o)) {
		snprintf(err, errlen, "%s: not an object", what);
		return -1;
	}
	memset(out, 0, sizeof(*out));
	if (need_code) {
		json_t *c = json_object_get(o, "code");
		if (!json_is_integer(c) || json_integer_value(c) < 0 || json_integer_value(c) > 100000) {
			snprintf(err, errlen, "%s: \"code\" must be an integer 0..100000", what);
			return -1;
		}
		out->code = (uint64_t)json_integer_value(c);
		if (get_str(o, "name", true, out->name, sizeof(out->name), what, err, errlen) != 0)
			return -1;
	}
	if (get_str(o, "meaning", true, out->meaning, sizeof(out->meaning), what, err, errlen) != 0 ||
	    get_enum(o, "verdict", p_verdict, &out->verdict, what, err, errlen) != 0 ||
	    get_enum(o, "action", p_action, &out->action, what, err, errlen) != 0)
		return -1;
	return 0;
}

int health_xids_parse(struct health_rules *r, const char *json, size_t len, char *err, size_t errlen)
{
	json_t *root = load_root(json, len, "xid.json", err, errlen);
	if (!root)
		return -1;
	int rc = -1;
	json_t *arr = json_object_get(root, "xids");
	if (get_str(root, "source", true, r->xid_source, sizeof(r->xid_source), "xid.json", err, errlen) != 0 ||
	    parse_xid(json_object_get(root, "default"), "xid.json: \"default\"", false, &r->xid_default, err,
		      errlen) != 0)
		goto out;
	snprintf(r->xid_default.name, sizeof(r->xid_default.name), "unknown");
	if (!json_is_array(arr) || json_array_size(arr) == 0 || json_array_size(arr) > HEALTH_MAX_XIDS) {
		snprintf(err, errlen, "xid.json: \"xids\" must be an array of 1..%d entries", HEALTH_MAX_XIDS);
		goto out;
	}
	unsigned n = 0;
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o) {
		char what[48];
		snprintf(what, sizeof(what), "xid.json: entry %zu", i);
		if (parse_xid(o, what, true, &r->xids[n], err, errlen) != 0)
			goto out;
		for (unsigned k = 0; k < n; k++)
			if (r->xids[k].code == r->xids[n].code) {
				snprintf(err, errlen, "xid.json: XID %llu appears twice",
					 (unsigned long long)r->xids[n].code);
				goto out;
			}
		n++;
	}
	r->nxids = n;
	rc = 0;
out:
	if (rc != 0)
		r->nxids = 0;
	json_decref(root);
	return rc;
}

int health_rules_load_default(struct health_rules *r, const char *env_data_dir, char *err, size_t errlen)
{
	struct data_file f;
	memset(r, 0, sizeof(*r));
	if (data_file_read(env_data_dir, "health/xid.json", 1 << 20, &f, err, errlen) != DATA_OK)
		return HEALTH_RULES_UNREADABLE;
	int rc = health_xids_parse(r, f.text, f.len, err, errlen);
	data_file_free(&f);
	if (rc != 0)
		return HEALTH_RULES_MALFORMED;
	if (data_file_read(env_data_dir, "health/rules.json", 1 << 20, &f, err, errlen) != DATA_OK)
		return HEALTH_RULES_UNREADABLE;
	rc = health_rules_parse(r, f.text, f.len, err, errlen);
	data_file_free(&f);
	return rc ? HEALTH_RULES_MALFORMED : 0;
}

const struct health_xid *health_xid_find(const struct health_rules *r, uint64_t code)
{
	for (unsigned i = 0; i < r->nxids; i++)
		if (r->xids[i].code == code)
			return &r->xids[i];
	return &r->xid_default;
}

const struct health_rule *health_rule_find(const struct health_rules *r, const char *id)
{
	for (unsigned i = 0; i < r->nrules; i++)
		if (strcmp(r->rules[i].id, id) == 0)
			return &r->rules[i];
	return NULL;
}
