/* SPDX-License-Identifier: Apache-2.0 */
/* pool_cmd.c - see pool_cmd.h. */
#include "pool_cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "view/json_util.h"
#include "pool/client.h"
#include "pool/pool.h"
#include "pool/proto.h"

bool pool_cmd_take(struct pool_opts *o, int k, const struct opt_value *v)
{
	if (k == POOL_OPT_SOCKET)
		o->socket = v->text;
	else if (k == POOL_OPT_JSON)
		o->json = true;
	return k == POOL_OPT_SOCKET || k == POOL_OPT_JSON;
}

int pool_cmd_add_job(const struct cmd_ctx *ctx, const char *cmd, const char *text, uint64_t ids[256], unsigned *n)
{
	if (*n == 256) {
		cmd_error(ctx, cmd, "more than 256 jobs at once");
		return EXIT_USAGE;
	}
	if (pool_cmd_job_id(ctx, cmd, text, &ids[*n]))
		return EXIT_USAGE;
	++*n;
	return EXIT_OK;
}

int pool_cmd_job_id(const struct cmd_ctx *ctx, const char *cmd, const char *s, uint64_t *id)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *s == '-' || *end || errno || v == 0 || v > INT64_MAX) {
		cmd_error(ctx, cmd, "bad job id '%s'", s);
		return EXIT_USAGE;
	}
	*id = v;
	return EXIT_OK;
}

json_t *pool_cmd_request(const char *op)
{
	return json_pack("{s:i, s:s}", "v", PROTO_VERSION, "op", op);
}

/* A pool_call_* status as an exit code, the error printed. */
static int call_status(const struct cmd_ctx *ctx, const char *cmd, int rc, const char *err)
{
	if (rc != POOL_CALL_OK)
		cmd_error(ctx, cmd, "%s", err);
	return rc == POOL_CALL_OK ? EXIT_OK : rc == POOL_CALL_NO_AGENT ? EXIT_TEMPFAIL : EXIT_IOERR;
}

/* EXIT_OK when the answer says ok, else its error printed, *resp dropped and 65. */
static int answer_ok(const struct cmd_ctx *ctx, const char *cmd, json_t **resp)
{
	if (json_is_true(json_object_get(*resp, "ok")))
		return EXIT_OK;
	const char *msg = json_string_value(json_object_get(*resp, "error"));
	cmd_error(ctx, cmd, "%s", msg ? msg : "the agent refused the request");
	json_decref(*resp); /* msg is not used past here */
	*resp = NULL;
	return EXIT_DATAERR;
}

/* --socket, else where pool_client_socket says. */
static void pool_cmd_find_socket(struct pool_opts *o)
{
	if (!o->socket) {
		struct stat sb;
		pool_client_socket(getenv("GPUCTL_POOL_SOCKET"), stat("/run/gpuctl/pool.sock", &sb) == 0,
				   getenv("XDG_RUNTIME_DIR"), getuid(), o->socket_buf, sizeof(o->socket_buf));
		o->socket = o->socket_buf;
	}
}

int pool_cmd_call_raw(const struct cmd_ctx *ctx, const char *cmd, struct pool_opts *o, json_t *req, char **answer,
		      size_t *len)
{
	*answer = NULL;
	*len = 0;
	if (!req) {
		cmd_error(ctx, cmd, "out of memory");
		return EXIT_SOFTWARE;
	}
	pool_cmd_find_socket(o);
	char err[512];
	int rc = pool_call_raw(o->socket, req, answer, len, err, sizeof(err));
	json_decref(req);
	return call_status(ctx, cmd, rc, err);
}

int pool_cmd_stream(const struct cmd_ctx *ctx, const char *cmd, struct pool_opts *o, json_t *req, json_t **head,
		    uint64_t *copied)
{
	*head = NULL;
	if (!req) {
		cmd_error(ctx, cmd, "out of memory");
		return EXIT_SOFTWARE;
	}
	pool_cmd_find_socket(o);
	char err[512];
	bool write_failed;
	int rc = call_status(ctx, cmd, pool_call_stream(o->socket, req, head, ctx->out, copied, &write_failed, err,
							 sizeof(err)), err);
	json_decref(req);
	if (rc == EXIT_OK && write_failed) {
		json_decref(*head);
		*head = NULL;
		return EXIT_IOERR; /* main says why */
	}
	return rc == EXIT_OK ? answer_ok(ctx, cmd, head) : rc;
}

int pool_cmd_answer(const struct cmd_ctx *ctx, const char *cmd, const char *answer, size_t len, json_t **resp)
{
	char err[512];
	*resp = pool_answer_parse(answer, len, err, sizeof(err));
	if (!*resp) {
		cmd_error(ctx, cmd, "%s", err);
		return EXIT_IOERR;
	}
	return answer_ok(ctx, cmd, resp);
}

int pool_cmd_call(const struct cmd_ctx *ctx, const char *cmd, struct pool_opts *o, json_t *req, json_t **resp)
{
	char *answer;
	size_t len;
	*resp = NULL;
	int rc = pool_cmd_call_raw(ctx, cmd, o, req, &answer, &len);
	if (rc == EXIT_OK)
		rc = pool_cmd_answer(ctx, cmd, answer, len, resp);
	free(answer);
	return rc;
}

void pool_cmd_banner(const struct cmd_ctx *ctx, const json_t *resp)
{
	pool_cmd_sim_banner(ctx, json_is_true(json_object_get(resp, "simulated")));
}

void pool_cmd_sim_banner(const struct cmd_ctx *ctx, bool simulated)
{
	if (simulated)
		fprintf(ctx->out, "*** SIMULATED server: the pool's agent runs on simulated GPUs ***\n");
}

int pool_cmd_print_json(const struct cmd_ctx *ctx, json_t *resp)
{
	json_object_del(resp, "ok");
	return json_write(resp, ctx->out) == 0 ? EXIT_OK : EXIT_IOERR;
}

void pool_fmt_duration(uint64_t ns, char *out, size_t outlen)
{
	if (!ns) {
		snprintf(out, outlen, "-");
		return;
	}
	uint64_t s = ns / 1000000000ull;
	if (s < 60)
		snprintf(out, outlen, "%.1f s", (double)ns / 1e9);
	else if (s < 3600)
		snprintf(out, outlen, "%llum%02llus", (unsigned long long)(s / 60), (unsigned long long)(s % 60));
	else
		snprintf(out, outlen, "%lluh%02llum", (unsigned long long)(s / 3600), (unsigned long long)(s / 60 % 60));
}

void pool_fmt_time(uint64_t ns, char *out, size_t outlen)
{
	if (!ns) {
		snprintf(out, outlen, "-");
		return;
	}
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(out, outlen, "%Y-%m-%d %H:%M:%S", &tm);
}

void pool_fmt_gpus(const json_t *job, char *out, size_t outlen)
{
	const json_t *g = json_object_get(job, "gpus");
	const json_t *mig = json_object_get(job, "mig_instance");
	out[0] = '\0';
	size_t i;
	const json_t *v;
	json_array_foreach(g, i, v) {
		size_t l = strlen(out);
		snprintf(out + l, outlen - l, "%s%lld", i ? "," : "", (long long)json_integer_value(v));
	}
	if (mig) {
		size_t l = strlen(out);
		snprintf(out + l, outlen - l, " (MIG gi %lld)", (long long)json_integer_value(json_object_get(mig, "gi")));
	}
	if (!out[0])
		snprintf(out, outlen, "-");
}

uint64_t pool_json_u64(const json_t *o, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(o, key));
	return v > 0 ? (uint64_t)v : 0;
}
