/* SPDX-License-Identifier: Apache-2.0 */
/* pool_cmd.h - what the pool's commands (submit, queue, cancel, logs, wait,
 * jobs) share: the socket and --json flags, one request with its errors
 * printed and mapped to exit codes, and formatting. */
#ifndef GPUCTL_POOL_CMD_H
#define GPUCTL_POOL_CMD_H

/* the exit codes every pool command's --help lists (docs/exit-codes.md);
 * POOL_CMD_EXIT_CODES after help_print_cmd's "exit codes: " */
#define POOL_CMD_EXIT_CODES                                                                                    \
	"0 done, 64 usage or a bad job id, 65 the agent refused (not your job, an ended job,\n"               \
	"            a request this server can never meet), 74 the exchange with the agent failed,\n"          \
	"            75 no agent on the socket"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "cmd.h"
#include "core/opts.h"

/* --socket and --json: the first two rows of every pool command's option
 * table (core/opts.h); pool_cmd_take reads them. */
#define POOL_OPT_SPECS                                                                                         \
	{ "socket", 0, OPT_STRING, "PATH",                                                                     \
	  "the pool's socket ($GPUCTL_POOL_SOCKET, else the agent's: docs/pool.md)", NULL, 0, 0, NULL },       \
	{ "json", 0, OPT_FLAG, NULL, "machine-readable output (stable; see docs/json.md)", NULL, 0, 0, NULL }
enum { POOL_OPT_SOCKET, POOL_OPT_JSON, POOL_OPT_FIRST_OWN };

struct pool_opts {
	const char *socket;      /* --socket PATH */
	bool json;               /* --json */
	char socket_buf[256];
};

/* Takes option k of the table if it is --socket or --json: true when taken. */
bool pool_cmd_take(struct pool_opts *o, int k, const struct opt_value *v);
/* Adds job id text to ids[*n] (at most 256); EXIT_OK, else prints and returns EXIT_USAGE. */
int pool_cmd_add_job(const struct cmd_ctx *ctx, const char *cmd, const char *text, uint64_t ids[256], unsigned *n);
/* Parses a job id ("12"); 0 on success, else prints and returns EXIT_USAGE. */
int pool_cmd_job_id(const struct cmd_ctx *ctx, const char *cmd, const char *s, uint64_t *id);

/* Sends req (stolen) and returns EXIT_OK with *resp, or prints the error and
 * returns its exit code: 75 no agent, 74 I/O, 65 refused by the agent. */
int pool_cmd_call(const struct cmd_ctx *ctx, const char *cmd, struct pool_opts *o, json_t *req, json_t **resp);
/* pool_cmd_call in two steps, for an answer read without a jansson tree
 * (queue): the exchange (*answer NUL-terminated, freed by the caller), then
 * the answer parsed and checked as pool_cmd_call does. */
int pool_cmd_call_raw(const struct cmd_ctx *ctx, const char *cmd, struct pool_opts *o, json_t *req, char **answer,
		      size_t *len);
int pool_cmd_answer(const struct cmd_ctx *ctx, const char *cmd, const char *answer, size_t len, json_t **resp);
/* A request whose answer line is followed by raw bytes (logs with raw): the
 * bytes go to ctx->out as they arrive (*copied of them), *head is the line.
 * EXIT_OK, or the error printed and its exit code as pool_cmd_call (74 when
 * ctx->out refused the bytes, main says why). */
int pool_cmd_stream(const struct cmd_ctx *ctx, const char *cmd, struct pool_opts *o, json_t *req, json_t **head,
		    uint64_t *copied);
/* A new request object {"v": 1, "op": op}. */
json_t *pool_cmd_request(const char *op);
/* The SIMULATED banner when the agent serves a simulated server. */
void pool_cmd_banner(const struct cmd_ctx *ctx, const json_t *resp);
void pool_cmd_sim_banner(const struct cmd_ctx *ctx, bool simulated);
/* Writes resp without "ok" (the --json output). EXIT_OK or EXIT_IOERR. */
int pool_cmd_print_json(const struct cmd_ctx *ctx, json_t *resp);

/* "1h02m", "12.3 s", "-" for 0. */
void pool_fmt_duration(uint64_t ns, char *out, size_t outlen);
/* Local time "2026-11-30 01:02:03", "-" for 0. */
void pool_fmt_time(uint64_t ns, char *out, size_t outlen);
/* "0,1" from a JSON array of indexes; "-" when absent. */
void pool_fmt_gpus(const json_t *job, char *out, size_t outlen);
uint64_t pool_json_u64(const json_t *o, const char *key);

#endif
