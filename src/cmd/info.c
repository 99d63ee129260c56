/* SPDX-License-Identifier: Apache-2.0 */
/*
 * info.c - `gpuctl info`: what is in the box. A table of every GPU, -q for
 * everything known of each (grouped like nvidia-smi -q), --json for scripts
 * (docs/json.md), -i to pick GPUs. One snapshot (cmd_take_snapshot) feeds all;
 * the text is src/view/info_text.c.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "help.h"
#include "info_data.h"
#include "core/gpu_select.h"
#include "view/info_text.h"
#include "view/json_util.h"

enum { OPT_INFO_DETAIL, OPT_INFO_DATA, OPT_INFO_JSON, OPT_INFO_ID };
static const struct opt_spec info_opts[] = {
	[OPT_INFO_DETAIL] = { "detail", 'q', OPT_FLAG, NULL, "everything known of each GPU, grouped like nvidia-smi -q",
			      NULL, 0, 0, NULL },
	[OPT_INFO_DATA] = { "data", 0, OPT_FLAG, NULL,
			    "where each data file (catalog, rules, servers, prices) is read from; no GPU is read", NULL,
			    0, 0, NULL },
	[OPT_INFO_JSON] = OPT_SPEC_JSON,
	[OPT_INFO_ID] = OPT_SPEC_GPU_ID,
};

static const struct cmd_help info_help = {
	.name = "info",
	.usage = "[-q | --json] [-i SPEC]\n       gpuctl info --data [--json]",
	.what = "List the GPUs and what is known of each.\n",
	.opts = info_opts,
	.nopts = sizeof(info_opts) / sizeof(info_opts[0]),
	.notes = "A value the GPU or driver does not provide reads \"not supported\" (n/s in the\n"
		 "table); one that failed to read, \"error\" (ERR).\n",
	.exits = HELP_EXITS_READ_GPUS,
};

struct info_opts {
	bool detail, data, json;
	const char *id;
};

/* Returns -1 to go on, or the exit code to return now. */
static int parse_args(int argc, char **argv, struct cmd_ctx *ctx, struct info_opts *o)
{
	struct opt_parser p;
	struct opt_value v;
	int k, rc;
	opt_init(&p, argc, argv, info_help.opts, info_help.nopts);
	while ((k = help_opt_next(ctx, &info_help, &p, &v, &rc)) != OPT_DONE) {
		if (k == OPT_HELP || k == OPT_ERROR)
			return rc;
		if (k == OPT_INFO_DETAIL)
			o->detail = true;
		else if (k == OPT_INFO_DATA)
			o->data = true;
		else if (k == OPT_INFO_JSON)
			o->json = true;
		else
			o->id = v.text;
	}
	if (o->detail && o->json) {
		cmd_error(ctx, "info", "-q and --json cannot be used together");
		return EXIT_USAGE;
	}
	if (o->data && (o->detail || o->id)) {
		cmd_error(ctx, "info", "--data goes with --json only (it reads no GPU)");
		return EXIT_USAGE;
	}
	if (cmd_check_gpu_spec(ctx, "info", o->id) != EXIT_OK)
		return EXIT_USAGE;
	return -1;
}

/* ---- --json ---- */

static int print_json(struct cmd_ctx *ctx, const struct snapshot *snap, uint64_t mask)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "simulated", json_boolean(snap->sys.simulated));
	json_object_set_new(doc, "system", json_gpu_system(&snap->sys));
	json_t *gpus = json_array();
	for (unsigned i = 0; i < snap->n; i++)
		if (gpu_select_has(mask, i))
			json_array_append_new(gpus, json_gpu_view(&snap->gpu[i], 0));
	json_object_set_new(doc, "gpus", gpus);
	int rc = json_write(doc, ctx->out);
	json_decref(doc);
	return rc == 0 ? EXIT_OK : EXIT_IOERR;
}

int cmd_info(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct info_opts o = { 0 };
	int rc = parse_args(argc, argv, ctx, &o);
	if (rc >= 0)
		return rc;
	if (o.data)
		return info_data_print(ctx, o.json);
	/* the table needs the basic group only; -q and --json show everything */
	unsigned groups = o.detail || o.json ? GPU_GRP_ALL : GPU_GRP_BASIC;
	struct snapshot *snap = cmd_take_snapshot(ctx, "info", groups, &rc);
	if (!snap)
		return rc;
	uint64_t mask = 0;
	rc = cmd_select_gpus(ctx, "info", snap, o.id, &mask);
	if (rc == EXIT_OK) {
		if (o.json) {
			rc = print_json(ctx, snap, mask);
		} else {
			cmd_print_sim_banner(ctx, ctx->out);
			info_text_header(ctx->out, snap);
			if (o.detail)
				info_text_detail(ctx->out, snap, mask);
			else
				info_text_table(ctx->out, snap, mask);
		}
	}
	free(snap);
	return rc;
}
