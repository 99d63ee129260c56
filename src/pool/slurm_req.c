/* SPDX-License-Identifier: Apache-2.0 */
/* slurm_req.c - the Slurm requests of the control protocol (slurm_req.h). */
#include "pool/slurm_req.h"
#include "core/gpu_select.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[] = { NULL, "slurm_start", "slurm_end", "slurm_show" };
static const char *const end_states[] = { "done", "failed", "cancelled", "timeout" };

static const char *slurm_op_name(enum slurm_op op)
{
	return op >= SLURM_OP_START && op <= SLURM_OP_SHOW ? op_names[op] : "unknown";
}

static int get_uint(json_t *o, const char *key, uint64_t max, bool required, uint64_t *out, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);
	if (!v) {
		if (required)
			snprintf(err, errlen, "'%s' is missing", key);
		return required ? -1 : 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max) {
		snprintf(err, errlen, "'%s' must be an integer from 0 to %llu", key, (unsigned long long)max);
		return -1;
	}
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int parse_obj(json_t *o, struct slurm_req *r, char *err, size_t errlen)
{
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) {
		static const char *const known[] = { "v", "op", "slurm_job", "gpus", "uid", "user", "state" };
		bool ok = false;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			ok = ok || strcmp(k, known[i]) == 0;
		if (!ok) {
			snprintf(err, errlen, "unknown field '%.40s' in a %s request", k, slurm_op_name(r->op));
			return -1;
		}
	}
	if (get_uint(o, "slurm_job", SLURM_JOB_MAX, true, &r->job, err, errlen))
		return -1;
	if (r->job == 0) {
		snprintf(err, errlen, "'slurm_job' must be a Slurm job id (1 or more)");
		return -1;
	}
	if (r->op == SLURM_OP_START) {
		json_t *g = json_object_get(o, "gpus");
		if (!json_is_array(g)) {
			snprintf(err, errlen, "'gpus' must be an array of GPU indexes");
			return -1;
		}
		size_t i;
		json_array_foreach(g, i, v) {
			if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 63) {
				snprintf(err, errlen, "'gpus' holds something that is not a GPU index (0 to 63)");
				return -1;
			}
			r->gpu_mask |= 1ull << json_integer_value(v);
		}
		uint64_t uid = 0;
		if (get_uint(o, "uid", UINT32_MAX - 1, true, &uid, err, errlen))
			return -1;
		r->uid = (uint32_t)uid;
		json_t *u = json_object_get(o, "user");
		if (u) {
			if (!json_is_string(u) || strlen(json_string_value(u)) > SLURM_USER_LEN) {
				snprintf(err, errlen, "'user' must be a string of at most %d bytes", SLURM_USER_LEN);
				return -1;
			}
			for (const char *p = json_string_value(u); *p; p++)
				if (!isprint((unsigned char)*p) || *p == '"' || *p == '\\') {
					snprintf(err, errlen, "'user' holds a character a user name cannot have");
					return -1;
				}
			snprintf(r->user, sizeof(r->user), "%s", json_string_value(u));
		}
	} else if (json_object_get(o, "gpus") || json_object_get(o, "uid") || json_object_get(o, "user")) {
		snprintf(err, errlen, "'gpus', 'uid' and 'user' belong to slurm_start only");
		return -1;
	}
	json_t *s = json_object_get(o, "state");
	snprintf(r->state, sizeof(r->state), "done");
	if (s) {
		const char *sv = r->op == SLURM_OP_END ? json_string_value(s) : NULL;
		bool ok = false;
		for (size_t i = 0; sv && !ok && i < sizeof(end_states) / sizeof(end_states[0]); i++)
			ok = strcmp(sv, end_states[i]) == 0;
		if (!ok) {
			snprintf(err, errlen, "'state' is for slurm_end: done, failed, cancelled or timeout");
			return -1;
		}
		snprintf(r->state, sizeof(r->state), "%s", sv);
	}
	return 0;
}

int slurm_req_parse(const char *buf, size_t len, struct slurm_req *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	json_error_t je;
	json_t *o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(o)) {
		json_decref(o);
		return 0; /* not ours to judge: the pool's parser says what is wrong */
	}
	const char *op = json_string_value(json_object_get(o, "op"));
	int which = 0;
	for (int i = SLURM_OP_START; op && i <= SLURM_OP_SHOW; i++)
		if (strcmp(op, op_names[i]) == 0)
			which = i;
	if (!which) {
		json_decref(o);
		return 0;
	}
	out->op = (enum slurm_op)which;
	json_t *v = json_object_get(o, "v");
	int rc = 1;
	if (!json_is_integer(v) || json_integer_value(v) != 1) {
		snprintf(err, errlen, "unsupported protocol version (this agent speaks 1)");
		rc = -1;
	} else if (parse_obj(o, out, err, errlen)) {
		rc = -1;
	}
	json_decref(o);
	return rc;
}

json_t *slurm_req_json(const struct slurm_req *r)
{
	json_t *o = json_pack("{s:i, s:s, s:I}", "v", 1, "op", slurm_op_name(r->op), "slurm_job", (json_int_t)r->job);
	if (!o)
		return NULL;
	if (r->op == SLURM_OP_START) {
		json_t *g = json_array();
		for (unsigned i = 0; i < 64; i++)
			if (r->gpu_mask >> i & 1)
				json_array_append_new(g, json_integer(i));
		json_object_set_new(o, "gpus", g);
		json_object_set_new(o, "uid", json_integer(r->uid));
		if (r->user[0])
			json_object_set_new(o, "user", json_string(r->user));
	}
	if (r->op == SLURM_OP_END && r->state[0])
		json_object_set_new(o, "state", json_string(r->state));
	return o;
}

int slurm_gpu_list_parse(const char *s, uint64_t *mask, char *err, size_t errlen)
{
	*mask = 0; /* "": a job without GPUs; else core's one GPU-index list */
	return *s ? gpu_select_indexes(s, mask, err, errlen) : 0;
}
