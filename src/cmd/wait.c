/* wait.c - `gpuctl wait JOB...`: blocks until the jobs end (docs/pool.md). */
#include "cmd.h"

#include <string.h>
#include <time.h>

#include "agent/agent_config.h"
#include "view/json_util.h"
#include "pool_cmd.h"
#include "core/clock.h"

#define WAIT_POLL_MS 100

static void usage(FILE *out)
{
	fprintf(out,
		"usage: gpuctl wait [--timeout DURATION] [--socket PATH] [--json] JOB...\n\n"
		"Waits until every JOB has ended. Exit status: 0 when all ended 'done' (exit code 0),\n"
		"2 when one failed, was cancelled, timed out or was lost, 75 when --timeout passed first.\n"
		"exit codes: 0 all done, 2 one failed, was cancelled, timed out or was lost, 64 usage or a\n"
		"            bad job id, 65 the agent refused, 74 the exchange failed, 75 no agent or --timeout\n");
}

int cmd_wait(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct pool_opts o = { 0 };
	uint64_t ids[256], timeout_ns = 0;
	unsigned n = 0;
	bool only_ids = false; /* after "--" */
	for (int i = 1; i < argc; i++) {
		if (!only_ids && strcmp(argv[i], "--") == 0) {
			only_ids = true;
			continue;
		}
		if (!only_ids && argv[i][0] == '-') {
			if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
				usage(ctx->out);
				return EXIT_OK;
			}
			int f = pool_cmd_flag(ctx, "wait", argc, argv, &i, &o);
			if (f < 0)
				return EXIT_USAGE;
			if (f > 0)
				continue;
			bool bad = false;
			const char *v = pool_cmd_value(argc, argv, &i, "--timeout", &bad);
			if (bad) {
				cmd_error(ctx, "wait", "option '--timeout' needs a value");
				return EXIT_USAGE;
			}
			if (!v) {
				cmd_error(ctx, "wait", "unknown option '%s'; see 'gpuctl wait --help'", argv[i]);
				return EXIT_USAGE;
			}
			char msg[160];
			if (agent_parse_duration(v, 1000000ull, 366ull * 86400ull * 1000000000ull, &timeout_ns, msg,
						 sizeof(msg))) {
				cmd_error(ctx, "wait", "%s", msg);
				return EXIT_USAGE;
			}
			continue;
		}
		if (n == 256) {
			cmd_error(ctx, "wait", "more than 256 jobs at once");
			return EXIT_USAGE;
		}
		if (pool_cmd_job_id(ctx, "wait", argv[i], &ids[n]))
			return EXIT_USAGE;
		n++;
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
					fprintf(ctx->out, "job %llu %s: %s\n", (unsigned long long)ids[k], state,
						json_string_value(json_object_get(job, "reason")));
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
