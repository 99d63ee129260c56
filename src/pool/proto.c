/* SPDX-License-Identifier: Apache-2.0 */
/* proto.c - see proto.h. */
#include "proto.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"

static const char *const op_names[] = { "ping", "submit", "queue", "show", "cancel", "logs", "jobs" };

static const char *proto_op_name(enum proto_op op)
{
	return (unsigned)op < sizeof(op_names) / sizeof(op_names[0]) ? op_names[op] : "?";
}

json_t *proto_error(const char *msg)
{
	return json_pack("{s:b, s:s}", "ok", 0, "error", msg);
}

json_t *proto_errorf(const char *fmt, ...)
{
	char msg[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return proto_error(msg);
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void proto_request_free(struct proto_request *r)
{
	free_list(r->sub.argv, r->sub.argc);
	free_list(r->sub.env, r->sub.envc);
	free_list(r->sub.mounts, r->sub.nmounts);
	free_list(r->sub.cenv, r->sub.ncenv);
	r->sub.argv = r->sub.env = r->sub.mounts = r->sub.cenv = NULL;
	r->sub.argc = r->sub.envc = r->sub.nmounts = r->sub.ncenv = 0;
}

/* ---- field readers: each returns 0 or -1 with the message set ------------- */

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

static int get_uint(json_t *o, const char *key, uint64_t max, uint64_t *out, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max)
		FAIL("'%s' must be an integer from 0 to %llu", key, (unsigned long long)max);
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int get_bool(json_t *o, const char *key, bool *out, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		FAIL("'%s' must be true or false", key);
	*out = json_is_true(v);
	return 0;
}

/* A printable string (no control characters: C0, DEL, or C1, U+0080-U+009F,
 * which terminals may obey as escape sequences) of at most max bytes. */
static int get_str(json_t *o, const char *key, char *out, size_t outlen, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return 0;
	if (!json_is_string(v))
		FAIL("'%s' must be a string", key);
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	if (n >= outlen)
		FAIL("'%s' is longer than %zu bytes", key, outlen - 1);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f ||
		    ((unsigned char)s[i] == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] <= 0x9f))
			FAIL("'%s' holds a control character", key);
	memcpy(out, s, n + 1);
	return 0;
}

/* An array of strings without NUL bytes; env entries must be KEY=VALUE. */
static int get_strings(json_t *o, const char *key, size_t maxn, bool is_env, char ***out, size_t *outn, char *err,
		       size_t errlen)
{
	json_t *a = json_object_get(o, key);
	if (!a)
		return 0;
	if (!json_is_array(a))
		FAIL("'%s' must be an array of strings", key);
	size_t n = json_array_size(a);
	if (n > maxn)
		FAIL("'%s' has more than %zu entries", key, maxn);
	char **v = calloc(n + 1, sizeof(char *));
	if (!v)
		FAIL("out of memory");
	*out = v;
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_array_get(a, i);
		if (!json_is_string(e))
			FAIL("'%s[%zu]' must be a string", key, i);
		size_t len = json_string_length(e);
		const char *s = json_string_value(e);
		if (len > PROTO_MAX_STRING)
			FAIL("'%s[%zu]' is longer than %u bytes", key, i, PROTO_MAX_STRING);
		if (strlen(s) != len)
			FAIL("'%s[%zu]' holds a NUL byte", key, i);
		if (is_env) {
			const char *eq = strchr(s, '=');
			if (!eq || eq == s)
				FAIL("'%s[%zu]' is not KEY=VALUE", key, i);
		}
		v[i] = strdup(s);
		if (!v[i])
			FAIL("out of memory");
		*outn = i + 1;
	}
	return 0;
}

/* image, runtime, mounts, container_env: each checked as container.h says */
static int parse_container(json_t *o, struct proto_submit *s, char *err, size_t errlen)
{
	if (get_str(o, "image", s->image, sizeof(s->image), err, errlen) ||
	    get_str(o, "runtime", s->runtime, sizeof(s->runtime), err, errlen) ||
	    get_strings(o, "mounts", CONTAINER_MAX_MOUNTS, false, &s->mounts, &s->nmounts, err, errlen) ||
	    get_strings(o, "container_env", CONTAINER_MAX_ENV, true, &s->cenv, &s->ncenv, err, errlen))
		return -1;
	if (!s->image[0] && (s->runtime[0] || s->nmounts || s->ncenv))
		FAIL("'runtime', 'mounts' and 'container_env' go with 'image'");
	if (!s->image[0])
		return 0;
	if (!s->runtime[0])
		snprintf(s->runtime, sizeof(s->runtime), "podman");
	if (container_check_image(s->image, err, errlen) || container_check_runtime(s->runtime, err, errlen))
		return -1;
	for (size_t i = 0; i < s->nmounts; i++)
		if (container_check_mount(s->mounts[i], err, errlen))
			return -1;
	for (size_t i = 0; i < s->ncenv; i++)
		if (container_check_env(s->cenv[i], err, errlen))
			return -1;
	return 0;
}

static int parse_submit(json_t *o, struct proto_submit *s, char *err, size_t errlen)
{
	uint64_t u = 0;
	s->priority = 0;
	if (get_uint(o, "gpus", 64, &u, err, errlen))
		return -1;
	s->gpus = (unsigned)u;
	json_t *ids = json_object_get(o, "gpu_ids");
	if (ids) {
		if (!json_is_array(ids) || json_array_size(ids) == 0 || json_array_size(ids) > 64)
			FAIL("'gpu_ids' must be an array of 1 to 64 GPU indexes");
		size_t i;
		json_t *e;
		json_array_foreach(ids, i, e) {
			if (!json_is_integer(e) || json_integer_value(e) < 0 || json_integer_value(e) > 63)
				FAIL("'gpu_ids[%zu]' must be a GPU index from 0 to 63", i);
			uint64_t bit = 1ull << json_integer_value(e);
			if (s->gpu_ids & bit)
				FAIL("'gpu_ids' names GPU %lld twice", (long long)json_integer_value(e));
			s->gpu_ids |= bit;
		}
	}
	if (get_str(o, "mig", s->mig, sizeof(s->mig), err, errlen) ||
	    get_uint(o, "mem_per_gpu", UINT64_MAX >> 1, &s->mem_per_gpu, err, errlen) ||
	    get_bool(o, "nvlink", &s->nvlink, err, errlen) ||
	    get_uint(o, "time_limit_s", PROTO_MAX_TIME_S, &s->time_limit_s, err, errlen) ||
	    get_str(o, "name", s->name, sizeof(s->name), err, errlen) ||
	    get_uint(o, "after", INT64_MAX, &s->after, err, errlen) ||
	    get_bool(o, "shell", &s->shell, err, errlen) ||
	    get_str(o, "cwd", s->cwd, sizeof(s->cwd), err, errlen))
		return -1;
	json_t *p = json_object_get(o, "priority");
	if (p) {
		if (!json_is_integer(p) || json_integer_value(p) < -PROTO_MAX_PRIORITY ||
		    json_integer_value(p) > PROTO_MAX_PRIORITY)
			FAIL("'priority' must be an integer from %d to %d", -PROTO_MAX_PRIORITY, PROTO_MAX_PRIORITY);
		s->priority = (int)json_integer_value(p);
	}
	if (get_strings(o, "argv", PROTO_MAX_ARGS, false, &s->argv, &s->argc, err, errlen) ||
	    get_strings(o, "env", PROTO_MAX_ENV, true, &s->env, &s->envc, err, errlen))
		return -1;
	if (parse_container(o, s, err, errlen))
		return -1;
	if (s->argc == 0 || !s->argv[0][0])
		FAIL("'argv' must hold a command");
	if (s->shell && s->argc != 1)
		FAIL("with 'shell' the command is one string");
	if (s->cwd[0] != '/')
		FAIL("'cwd' must be an absolute path");
	for (const char *c = s->mig; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '.' && *c != '+')
			FAIL("bad MIG profile '%s'", s->mig);
	if (s->mig[0] && (s->gpus || s->gpu_ids || s->nvlink))
		FAIL("'mig' goes without 'gpus', 'gpu_ids' and 'nvlink'");
	if (!s->mig[0] && !s->gpus)
		s->gpus = s->gpu_ids ? (unsigned)__builtin_popcountll(s->gpu_ids) : 1;
	if (s->gpu_ids && s->gpus > (unsigned)__builtin_popcountll(s->gpu_ids))
		FAIL("'gpus' is %u but 'gpu_ids' names only %d", s->gpus, __builtin_popcountll(s->gpu_ids));
	return 0;
}

/* The fields each operation reads: one a request of that operation does not
 * read is refused (a misspelt or unsupported field is never silently ignored). */
#define OPS_ALL 0x7fu
#define OPB(op) (1u << (op))
static const struct {
	const char *key;
	unsigned ops;
} known_fields[] = {
	{ "v", OPS_ALL }, { "op", OPS_ALL },
	{ "job", OPB(OP_SHOW) | OPB(OP_CANCEL) | OPB(OP_LOGS) },
	{ "stream", OPB(OP_LOGS) }, { "offset", OPB(OP_LOGS) }, { "max_bytes", OPB(OP_LOGS) }, { "raw", OPB(OP_LOGS) },
	{ "all_users", OPB(OP_JOBS) }, { "history", OPB(OP_JOBS) }, { "limit", OPB(OP_JOBS) },
	{ "gpus", OPB(OP_SUBMIT) }, { "gpu_ids", OPB(OP_SUBMIT) }, { "mig", OPB(OP_SUBMIT) },
	{ "mem_per_gpu", OPB(OP_SUBMIT) }, { "nvlink", OPB(OP_SUBMIT) }, { "priority", OPB(OP_SUBMIT) },
	{ "time_limit_s", OPB(OP_SUBMIT) }, { "name", OPB(OP_SUBMIT) }, { "after", OPB(OP_SUBMIT) },
	{ "shell", OPB(OP_SUBMIT) }, { "cwd", OPB(OP_SUBMIT) }, { "argv", OPB(OP_SUBMIT) }, { "env", OPB(OP_SUBMIT) },
	{ "image", OPB(OP_SUBMIT) }, { "runtime", OPB(OP_SUBMIT) }, { "mounts", OPB(OP_SUBMIT) },
	{ "container_env", OPB(OP_SUBMIT) },
};

static int check_fields(json_t *o, enum proto_op op, char *err, size_t errlen)
{
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) {
		bool ok = false;
		for (size_t i = 0; i < sizeof(known_fields) / sizeof(known_fields[0]) && !ok; i++)
			ok = strcmp(k, known_fields[i].key) == 0 && (known_fields[i].ops & OPB(op));
		if (!ok) {
			char q[41]; /* the message stays one line */
			FAIL("unknown field '%s' in a %s request", units_quoted(k, q), proto_op_name(op));
		}
	}
	return 0;
}

int proto_parse_request(const char *buf, size_t len, struct proto_request *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (len > PROTO_MAX_REQUEST) {
		snprintf(err, errlen, "request larger than %u bytes", PROTO_MAX_REQUEST);
		return -1;
	}
	json_error_t je;
	json_t *o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!o) {
		snprintf(err, errlen, "malformed request: %s", je.text);
		/* jansson quotes the offending input: keep the message one line */
		for (char *c = err; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		return -1;
	}
	int rc = -1;
	if (!json_is_object(o)) {
		snprintf(err, errlen, "a request is a JSON object");
		goto out;
	}
	json_t *v = json_object_get(o, "v");
	if (!json_is_integer(v) || json_integer_value(v) != PROTO_VERSION) {
		snprintf(err, errlen, "unsupported protocol version (this agent speaks %d)", PROTO_VERSION);
		goto out;
	}
	json_t *op = json_object_get(o, "op");
	if (!json_is_string(op)) {
		snprintf(err, errlen, "'op' must be a string");
		goto out;
	}
	bool known = false;
	for (unsigned i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
		if (strcmp(json_string_value(op), op_names[i]) == 0) {
			out->op = (enum proto_op)i;
			known = true;
		}
	if (!known) {
		char q[41]; /* the message stays one line */
		snprintf(err, errlen, "unknown operation '%s'", units_quoted(json_string_value(op), q));
		goto out;
	}
	if (check_fields(o, out->op, err, errlen))
		goto out;
	uint64_t stream = 1, limit = 0;
	out->max_bytes = PROTO_MAX_LOG_CHUNK;
	if (get_uint(o, "job", INT64_MAX, &out->job, err, errlen) ||
	    get_uint(o, "stream", 2, &stream, err, errlen) ||
	    get_uint(o, "offset", INT64_MAX, &out->offset, err, errlen) ||
	    get_uint(o, "max_bytes", PROTO_MAX_LOG_CHUNK, &out->max_bytes, err, errlen) ||
	    get_bool(o, "raw", &out->raw, err, errlen) ||
	    get_bool(o, "all_users", &out->all_users, err, errlen) ||
	    get_bool(o, "history", &out->history, err, errlen) ||
	    get_uint(o, "limit", 1000000, &limit, err, errlen))
		goto out;
	out->stream = (int)stream;
	out->limit = (unsigned)limit;
	if ((out->op == OP_SHOW || out->op == OP_CANCEL || out->op == OP_LOGS) && out->job == 0) {
		snprintf(err, errlen, "'%s' needs a job id", proto_op_name(out->op));
		goto out;
	}
	if (out->op == OP_LOGS && stream == 0) {
		snprintf(err, errlen, "'stream' must be 1 (stdout) or 2 (stderr)");
		goto out;
	}
	if (out->op == OP_SUBMIT && parse_submit(o, &out->sub, err, errlen)) {
		proto_request_free(out);
		goto out;
	}
	rc = 0;
out:
	json_decref(o);
	return rc;
}

static json_t *strings_json(char **v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

json_t *proto_request_json(const struct proto_request *r)
{
	json_t *o = json_pack("{s:i, s:s}", "v", PROTO_VERSION, "op", proto_op_name(r->op));
	if (!o)
		return NULL;
	if (r->job)
		json_object_set_new(o, "job", json_integer((json_int_t)r->job));
	if (r->op == OP_LOGS) {
		json_object_set_new(o, "stream", json_integer(r->stream ? r->stream : 1));
		json_object_set_new(o, "offset", json_integer((json_int_t)r->offset));
		if (r->max_bytes)
			json_object_set_new(o, "max_bytes", json_integer((json_int_t)r->max_bytes));
		if (r->raw)
			json_object_set_new(o, "raw", json_true());
	}
	if (r->all_users)
		json_object_set_new(o, "all_users", json_true());
	if (r->history)
		json_object_set_new(o, "history", json_true());
	if (r->limit)
		json_object_set_new(o, "limit", json_integer(r->limit));
	if (r->op != OP_SUBMIT)
		return o;
	const struct proto_submit *s = &r->sub;
	if (s->gpus)
		json_object_set_new(o, "gpus", json_integer(s->gpus));
	if (s->gpu_ids) {
		json_t *ids = json_array();
		for (unsigned i = 0; i < 64; i++)
			if (s->gpu_ids >> i & 1)
				json_array_append_new(ids, json_integer(i));
		json_object_set_new(o, "gpu_ids", ids);
	}
	if (s->mig[0])
		json_object_set_new(o, "mig", json_string(s->mig));
	if (s->mem_per_gpu)
		json_object_set_new(o, "mem_per_gpu", json_integer((json_int_t)s->mem_per_gpu));
	if (s->nvlink)
		json_object_set_new(o, "nvlink", json_true());
	if (s->priority)
		json_object_set_new(o, "priority", json_integer(s->priority));
	if (s->time_limit_s)
		json_object_set_new(o, "time_limit_s", json_integer((json_int_t)s->time_limit_s));
	if (s->name[0])
		json_object_set_new(o, "name", json_string(s->name));
	if (s->after)
		json_object_set_new(o, "after", json_integer((json_int_t)s->after));
	if (s->shell)
		json_object_set_new(o, "shell", json_true());
	json_object_set_new(o, "cwd", json_string(s->cwd));
	json_object_set_new(o, "argv", strings_json(s->argv, s->argc));
	json_object_set_new(o, "env", strings_json(s->env, s->envc));
	if (s->image[0]) {
		json_object_set_new(o, "image", json_string(s->image));
		if (s->runtime[0])
			json_object_set_new(o, "runtime", json_string(s->runtime));
		if (s->nmounts)
			json_object_set_new(o, "mounts", strings_json(s->mounts, s->nmounts));
		if (s->ncenv)
			json_object_set_new(o, "container_env", strings_json(s->cenv, s->ncenv));
	}
	return o;
}

/* ---- value syntaxes ------------------------------------------------------------ */

/* Reads 1 to 9 digits at *p; -1 when there are none or more. */
static int read_field(const char **p, uint64_t *v)
{
	unsigned n = 0;
	*v = 0;
	for (; isdigit((unsigned char)**p); (*p)++, n++) {
		if (n == 9)
			return -1;
		*v = *v * 10 + (uint64_t)(**p - '0');
	}
	return n ? 0 : -1;
}


#define TIME_FORMS "units: 90s, 30m, 2h, 1d, 1h30m, or Slurm's MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS"

/* Slurm's forms (sbatch --time) but a lone number (minutes there, seconds in
 * gpuctl's durations: refused before this); D- takes hours below 24; a field
 * after another is below 60. */
static int parse_slurm_time(const char *s, uint64_t *total, char *err, size_t errlen)
{
	char q[41];
	const char *p = s;
	uint64_t f[4] = { 0 }; /* days, hours, minutes, seconds */
	uint64_t v;
	if (read_field(&p, &v))
		goto bad;
	unsigned n = 1;
	uint64_t parts[3] = { v };
	bool days = *p == '-';
	if (days) {
		f[0] = v;
		p++;
		n = 0;
	}
	while (*p || (days && n == 0)) {
		if (n > 0 && *p++ != ':')
			goto bad;
		if (n == 3 || read_field(&p, &parts[n]))
			goto bad;
		n++;
	}
	if (days) { /* D-HH[:MM[:SS]] */
		f[1] = parts[0];
		f[2] = n > 1 ? parts[1] : 0;
		f[3] = n > 2 ? parts[2] : 0;
		if (f[1] > 23) {
			snprintf(err, errlen, "bad time limit '%s': hours after the days are 0 to 23", units_quoted(s, q));
			return -1;
		}
	} else if (n == 1) { /* MM: ambiguous, refused by the caller */
		goto bad;
	} else if (n == 2) { /* MM:SS */
		f[2] = parts[0];
		f[3] = parts[1];
	} else { /* HH:MM:SS */
		f[1] = parts[0];
		f[2] = parts[1];
		f[3] = parts[2];
	}
	if (f[3] > 59 || ((days || n == 3) && f[2] > 59)) {
		snprintf(err, errlen, "bad time limit '%s': minutes and seconds after another field are 0 to 59",
			 units_quoted(s, q));
		return -1;
	}
	*total = ((f[0] * 24 + f[1]) * 60 + f[2]) * 60 + f[3];
	return 0;
bad:
	snprintf(err, errlen, "bad time limit '%s' (" TIME_FORMS ")", units_quoted(s, q));
	return -1;
}

int proto_parse_time_limit(const char *s, uint64_t *seconds, char *err, size_t errlen)
{
	char q[41];
	uint64_t total = 0;
	/* the units form is core/units.h's grammar in whole seconds; a number alone
	 * (Slurm's MM, minutes; seconds elsewhere) is refused there with the fix */
	bool bare = units_is_bare_number(s);
	if (bare || strpbrk(s, "dhms")) {
		if (units_parse_seconds(s, "time limit", 0, UINT64_MAX, &total, err, errlen)) {
			if (!bare) /* the forms this option takes, Slurm's among them */
				snprintf(err, errlen, "bad time limit '%s' (" TIME_FORMS ")", units_quoted(s, q));
			return -1;
		}
	} else if (parse_slurm_time(s, &total, err, errlen)) {
		return -1;
	}
	if (total == 0 || total > PROTO_MAX_TIME_S) {
		snprintf(err, errlen, "time limit '%s' out of range (1 s to 366 days)", units_quoted(s, q));
		return -1;
	}
	*seconds = total;
	return 0;
}

/* ---- base64 ---------------------------------------------------------------------- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void proto_b64_encode(const unsigned char *in, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? b64[v & 63] : '=';
	}
	out[o] = '\0';
}

static int b64_val(char c)
{
	const char *p = c ? strchr(b64, c) : NULL;
	return p ? (int)(p - b64) : -1;
}

long proto_b64_decode(const char *in, unsigned char *out)
{
	size_t n = strlen(in), o = 0;
	if (n % 4)
		return -1;
	for (size_t i = 0; i < n; i += 4) {
		int v[4];
		unsigned pad = 0;
		for (int k = 0; k < 4; k++) {
			if (in[i + k] == '=' && i + 4 == n && k >= 2) {
				v[k] = 0;
				pad++;
				continue;
			}
			if (pad || (v[k] = b64_val(in[i + k])) < 0)
				return -1;
		}
		uint32_t x = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
		out[o++] = (unsigned char)(x >> 16);
		if (pad < 2)
			out[o++] = (unsigned char)(x >> 8 & 255);
		if (pad < 1)
			out[o++] = (unsigned char)(x & 255);
	}
	return (long)o;
}
