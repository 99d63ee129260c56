/* SPDX-License-Identifier: Apache-2.0 */
/* cancel.c - `gpuctl cancel JOB...`: a pending job is removed; a running one
 * gets SIGTERM, then SIGKILL after the agent's grace (docs/pool.md). */
#include "cmd.h"

#include <string.h>

#include "view/json_util.h"
#include "help.h"
#include "pool_cmd.h"
#include "core/table.h"

static const struct opt_spec cancel_opts[] = { POOL_OPT_SPECS };

static const struct cmd_help cancel_help = {
	.name = "cancel",
	.usage = "[--socket PATH] [--json] JOB...",
	.what = "Cancels your jobs (root: anyone's). A running job's process group gets SIGTERM, then\n"
		"SIGKILL (its whole cgroup where there is one) after the agent's grace period.\n",
	.opts = cancel_opts,
	.nopts = sizeof(cancel_opts) / sizeof(cancel_opts[0]),
	.exits = POOL_CMD_EXIT_CODES,
	.operands = true,
};

int cmd_cancel(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct pool_opts o = { 0 };
	uint64_t ids[256];
	unsigned n = 0;
	struct opt_parser p;
	struct opt_value v;
	int opt, opt_rc;
	opt_init(&p, argc, argv, cancel_help.opts, cancel_help.nopts);
	while ((opt = help_opt_next(ctx, &cancel_help, &p, &v, &opt_rc)) != OPT_DONE) {
		if (opt == OPT_HELP || opt == OPT_ERROR)
			return opt_rc;
		if (opt == OPT_OPERAND && pool_cmd_add_job(ctx, "cancel", v.text, ids, &n))
			return EXIT_USAGE;
		pool_cmd_take(&o, opt, &v);
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
			text_line(ctx->out, "job %llu %s", (unsigned long long)ids[k], state ? state : "cancelled");
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
