/* SPDX-License-Identifier: Apache-2.0 */
/* wait.c - `gpuctl wait JOB...`: blocks until the jobs end (docs/pool.md). */
#include "cmd.h"

#include <string.h>
#include <time.h>

#include "core/units.h"
#include "help.h"
#include "view/json_util.h"
#include "pool_cmd.h"
#include "core/clock.h"
#include "core/table.h"

#define WAIT_POLL_MS 100

enum { OPT_WAIT_TIMEOUT = POOL_OPT_FIRST_OWN };
static const struct opt_spec wait_opts[] = {
	POOL_OPT_SPECS,
	[OPT_WAIT_TIMEOUT] = { "timeout", 0, OPT_DURATION, NULL, "give up after this long (1ms to 366d; docs/units.md)",
			       "none", 1000000, 366 * (long long)UNITS_NS_PER_DAY, NULL },
};

static const struct cmd_help wait_help = {
	.name = "wait",
	.usage = "[--timeout DURATION] [--socket PATH] [--json] JOB...",
	.what = "Waits until every JOB has ended. Exit status: 0 when all ended 'done' (exit code 0),\n"
		"2 when one failed, was cancelled, timed out or was lost, 75 when --timeout passed first.\n",
	.opts = wait_opts,
	.nopts = sizeof(wait_opts) / sizeof(wait_opts[0]),
	.exits = "0 all done, 2 one failed, was cancelled, timed out or was lost, 64 usage or a\n"
		 "            bad job id, 65 the agent refused, 74 the exchange failed, 75 no agent or --timeout",
	.operands = true,
};

int cmd_wait(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct pool_opts o = { 0 };
	uint64_t ids[256], timeout_ns = 0;
	unsigned n = 0;
	struct opt_parser p;
	struct opt_value v;
	int opt, opt_rc;
	opt_init(&p, argc, argv, wait_help.opts, wait_help.nopts);
	while ((opt = help_opt_next(ctx, &wait_help, &p, &v, &opt_rc)) != OPT_DONE) {
		if (opt == OPT_HELP || opt == OPT_ERROR)
			return opt_rc;
		if (opt == OPT_OPERAND && pool_cmd_add_job(ctx, "wait", v.text, ids, &n))
			return EXIT_USAGE;
		if (opt == OPT_WAIT_TIMEOUT)
			timeout_ns = (uint64_t)v.num;
		pool_cmd_take(&o, opt, &v);
	}
	if (n == 0) {
		cmd_error(ctx, "wait", "no job id given");
		return EXIT_USAGE;
	}
	uint64_t deadline = timeout_ns ? clock_mono_ns() + timeout_ns : 0;
	json_t *done = json_array();
	int worst = EXIT_OK;
	for (unsigned k = 0; k < n; k++) {
		for (;;) {
			json_t *req = pool_cmd_request("show"), *resp;
			json_object_set_new(req, "job", json_integer((json_int_t)ids[k]));
			int rc = pool_cmd_call(ctx, "wait", &o, req, &resp);
			if (rc) {
				json_decref(done);
				return rc;
			}
			json_t *job = json_object_get(resp, "job");
			/* a copy: the string belongs to resp, freed before the timeout's message */
			char state[16];
			snprintf(state, sizeof(state), "%s", json_string_value(json_object_get(job, "state")) ?: "");
			if (state[0] && strcmp(state, "pending") && strcmp(state, "starting") && strcmp(state, "running")) {
				if (strcmp(state, "done") != 0)
					worst = EXIT_FAIL;
				if (!o.json)
					text_line(ctx->out, "job %llu %s: %s", (unsigned long long)ids[k], state,
						  json_string_value(json_object_get(job, "reason")) ?: "");
				json_array_append(done, job);
				json_decref(resp);
				break;
			}
			json_decref(resp);
			if (deadline && clock_mono_ns() >= deadline) {
				cmd_error(ctx, "wait", "job %llu still %s after the timeout", (unsigned long long)ids[k], state);
				json_decref(done);
				return EXIT_TEMPFAIL;
			}
			struct timespec ts = { 0, WAIT_POLL_MS * 1000000L };
			nanosleep(&ts, NULL);
		}
	}
	if (o.json) {
		json_t *doc = json_pack("{s:o}", "jobs", done);
		if (json_write(doc, ctx->out) != 0)
			worst = EXIT_IOERR;
		json_decref(doc);
	} else {
		json_decref(done);
	}
	return worst;
}
