/* SPDX-License-Identifier: Apache-2.0 */
/* logs.c - `gpuctl logs [-f] JOB`: a job's stdout (or stderr) through the
 * agent, which checks that it is yours (docs/pool.md). */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pool/proto.h"
#include "help.h"
#include "pool_cmd.h"

#define FOLLOW_POLL_MS 200

enum { OPT_LOGS_FOLLOW = POOL_OPT_FIRST_OWN, OPT_LOGS_STDERR };
static const struct opt_spec logs_opts[] = {
	POOL_OPT_SPECS,
	[OPT_LOGS_FOLLOW] = { "follow", 'f', OPT_FLAG, NULL, "keep printing until the job ends", NULL, 0, 0, NULL },
	[OPT_LOGS_STDERR] = { "stderr", 0, OPT_FLAG, NULL, "the job's stderr, not its stdout", NULL, 0, 0, NULL },
};

static const struct cmd_help logs_help = {
	.name = "logs",
	.usage = "[-f|--follow] [--stderr] [--socket PATH] [--json] JOB",
	.what = "Prints what job JOB wrote to stdout (--stderr: stderr), streamed from the agent. Where\n"
		"the output passed the pool's log limit, a line says how much was dropped there (the\n"
		"first and last halves are kept). With -f, keeps printing until the job ends.\n"
		"--json: one chunk as JSON (data in base64, offset, skipped, size).\n",
	.opts = logs_opts,
	.nopts = sizeof(logs_opts) / sizeof(logs_opts[0]),
	.exits = POOL_CMD_EXIT_CODES,
	.operands = true,
};

int cmd_logs(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct pool_opts o = { 0 };
	bool follow = false;
	int stream = 1;
	uint64_t id = 0;
	struct opt_parser p;
	struct opt_value v;
	int opt, opt_rc;
	opt_init(&p, argc, argv, logs_help.opts, logs_help.nopts);
	while ((opt = help_opt_next(ctx, &logs_help, &p, &v, &opt_rc)) != OPT_DONE) {
		if (opt == OPT_HELP || opt == OPT_ERROR)
			return opt_rc;
		if (opt == OPT_LOGS_FOLLOW) {
			follow = true;
		} else if (opt == OPT_LOGS_STDERR) {
			stream = 2;
		} else if (opt == OPT_OPERAND && id) {
			cmd_error(ctx, "logs", "one job at a time");
			return EXIT_USAGE;
		} else if (opt == OPT_OPERAND && pool_cmd_job_id(ctx, "logs", v.text, &id)) {
			return EXIT_USAGE;
		} else {
			pool_cmd_take(&o, opt, &v);
		}
	}
	if (!id) {
		cmd_error(ctx, "logs", "no job id given");
		return EXIT_USAGE;
	}
	if (o.json && follow) {
		cmd_error(ctx, "logs", "'--json' goes without '-f'");
		return EXIT_USAGE;
	}
	uint64_t offset = 0;
	if (o.json) { /* one chunk as JSON, in base64 */
		json_t *req = pool_cmd_request("logs"), *resp;
		json_object_set_new(req, "job", json_integer((json_int_t)id));
		json_object_set_new(req, "stream", json_integer(stream));
		json_object_set_new(req, "offset", json_integer(0));
		int rc = pool_cmd_call(ctx, "logs", &o, req, &resp);
		if (rc)
			return rc;
		rc = pool_cmd_print_json(ctx, resp);
		json_decref(resp);
		return rc;
	}
	/* the bytes as the agent streams them from the file, never all in memory */
	for (;;) {
		json_t *req = pool_cmd_request("logs"), *head;
		json_object_set_new(req, "job", json_integer((json_int_t)id));
		json_object_set_new(req, "stream", json_integer(stream));
		json_object_set_new(req, "offset", json_integer((json_int_t)offset));
		json_object_set_new(req, "raw", json_true());
		uint64_t copied = 0;
		int rc = pool_cmd_stream(ctx, "logs", &o, req, &head, &copied);
		if (rc)
			return rc;
		uint64_t skipped = pool_json_u64(head, "skipped"), length = pool_json_u64(head, "length");
		uint64_t next = pool_json_u64(head, "offset"), size = pool_json_u64(head, "size");
		uint64_t limit = pool_json_u64(head, "log_limit");
		bool ended = json_is_true(json_object_get(head, "ended"));
		json_decref(head);
		if (skipped)
			fprintf(ctx->out,
				"\n[gpuctl logs: %llu bytes dropped here: the job's output passed the pool's limit of %.1f MiB a "
				"stream (pool_log_limit); its first and last %.1f MiB are kept]\n",
				(unsigned long long)skipped, (double)limit / 1048576.0, (double)limit / 2097152.0);
		if (fflush(ctx->out) != 0)
			return EXIT_IOERR; /* main says why */
		offset = next - (length - copied); /* fewer bytes came when the file was cut back meanwhile */
		if (offset < size)
			continue; /* more is there already */
		if (!follow || ended)
			return EXIT_OK;
		struct timespec ts = { 0, FOLLOW_POLL_MS * 1000000L };
		nanosleep(&ts, NULL);
	}
}
