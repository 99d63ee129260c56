/* cancel.c - `gpuctl cancel JOB...`: a pending job is removed; a running one
 * gets SIGTERM, then SIGKILL after the agent's grace (docs/pool.md). */
#include "cmd.h"

#include <string.h>

#include "view/json_util.h"
#include "pool_cmd.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: gpuctl cancel [--socket PATH] [--json] JOB...\n\n"
		"Cancels your jobs (root: anyone's). A running job's process group gets SIGTERM, then\n"
		"SIGKILL (its whole cgroup where there is one) after the agent's grace period.\n"
		POOL_CMD_EXITS);
}

int cmd_cancel(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct pool_opts o = { 0 };
	uint64_t ids[256];
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
			int f = pool_cmd_flag(ctx, "cancel", argc, argv, &i, &o);
			if (f < 0)
				return EXIT_USAGE;
			if (f > 0)
				continue;
			cmd_error(ctx, "cancel", "unknown option '%s'; see 'gpuctl cancel --help'", argv[i]);
			return EXIT_USAGE;
		}
		if (n == 256) {
			cmd_error(ctx, "cancel", "more than 256 jobs at once");
			return EXIT_USAGE;
		}
		if (pool_cmd_job_id(ctx, "cancel", argv[i], &ids[n]))
			return EXIT_USAGE;
		n++;
	}
	if (n == 0) {
		cmd_error(ctx, "cancel", "no job id given");
		return EXIT_USAGE;
	}
	int worst = EXIT_OK;
	json_t *all = json_array();
	for (unsigned k = 0; k < n; k++) {
		json_t *req = pool_cmd_request("cancel"), *resp;
		json_object_set_new(req, "job", json_integer((json_int_t)ids[k]));
		int rc = pool_cmd_call(ctx, "cancel", &o, req, &resp);
		if (rc) {
			worst = rc;
			if (rc == EXIT_TEMPFAIL || rc == EXIT_IOERR)
				break;
			continue;
		}
		const char *state = json_string_value(json_object_get(resp, "state"));
		if (o.json) {
			json_object_del(resp, "ok");
			json_array_append(all, resp);
		} else {
			fprintf(ctx->out, "job %llu %s\n", (unsigned long long)ids[k], state ? state : "cancelled");
		}
		json_decref(resp);
	}
	if (o.json) {
		json_t *doc = json_pack("{s:o}", "jobs", all);
		if (json_write(doc, ctx->out) != 0 && worst == EXIT_OK)
			worst = EXIT_IOERR;
		json_decref(doc);
	} else {
		json_decref(all);
	}
	return worst;
}
