/* SPDX-License-Identifier: Apache-2.0 */
/*
 * topo.c - `gpuctl topo`: the GPU-to-GPU matrix as `nvidia-smi topo -m`
 * prints it (X, NV#, PIX, PXB, PHB, NODE, SYS) with each GPU's CPU and NUMA
 * affinity and the legend; --json for scripts (docs/json.md); -i to pick GPUs.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "help.h"
#include "core/gpu_select.h"
#include "view/json_util.h"
#include "core/table.h"
#include "sampler/sampler.h"

enum { OPT_TOPO_JSON, OPT_TOPO_ID, OPT_TOPO_MATRIX };
static const struct opt_spec topo_opts[] = {
	[OPT_TOPO_JSON] = OPT_SPEC_JSON,
	[OPT_TOPO_ID] = OPT_SPEC_GPU_ID,
	/* nvidia-smi's spelling; the matrix is what topo shows anyway */
	[OPT_TOPO_MATRIX] = { "matrix", 'm', OPT_FLAG, NULL, NULL, NULL, 0, 0, NULL },
};

static const struct cmd_help topo_help = {
	.name = "topo",
	.usage = "[--json] [-i SPEC]",
	.what = "GPU-to-GPU topology matrix with CPU and NUMA affinity (as nvidia-smi topo -m).\n",
	.opts = topo_opts,
	.nopts = sizeof(topo_opts) / sizeof(topo_opts[0]),
	.exits = HELP_EXITS_READ_GPUS,
};

static const char legend[] =
	"Legend:\n\n"
	"  X    = Self\n"
	"  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
	"  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
	"  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
	"  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
	"  PIX  = Connection traversing at most a single PCIe bridge\n"
	"  NV#  = Connection traversing a bonded set of # NVLinks\n"
	"  ?    = could not be read\n";

static int parse_args(int argc, char **argv, struct cmd_ctx *ctx, bool *json, const char **id)
{
	struct opt_parser p;
	struct opt_value v;
	int k, rc;
	opt_init(&p, argc, argv, topo_help.opts, topo_help.nopts);
	while ((k = help_opt_next(ctx, &topo_help, &p, &v, &rc)) != OPT_DONE) {
		if (k == OPT_HELP || k == OPT_ERROR)
			return rc;
		if (k == OPT_TOPO_JSON)
			*json = true;
		else if (k == OPT_TOPO_ID)
			*id = v.text;
		/* OPT_TOPO_MATRIX: nothing to do */
	}
	if (cmd_check_gpu_spec(ctx, "topo", *id) != EXIT_OK)
		return EXIT_USAGE;
	return -1;
}

static const char *numa_text(const struct gpu_static *st, char *b, size_t n)
{
	if (!VAL_HAS(st->numa_node))
		return st->numa_node.st == VAL_UNSUPPORTED ? "N/A" : "?";
	if (st->numa_node.v < 0)
		return "N/A";
	snprintf(b, n, "%" PRId64, st->numa_node.v);
	return b;
}

static void print_matrix(struct cmd_ctx *ctx, const struct snapshot *snap, uint64_t mask)
{
	unsigned cols[GPU_MAX_GPUS], ncols = 0;
	for (unsigned i = 0; i < snap->n; i++)
		if (gpu_select_has(mask, i))
			cols[ncols++] = i;
	struct table *t = table_new(ncols + 3);
	char h[32];
	table_col(t, 0, "", TABLE_LEFT);
	for (unsigned c = 0; c < ncols; c++) {
		snprintf(h, sizeof(h), "GPU%u", cols[c]);
		table_col(t, c + 1, h, TABLE_LEFT);
	}
	table_col(t, ncols + 1, "CPU Affinity", TABLE_LEFT);
	table_col(t, ncols + 2, "NUMA Affinity", TABLE_LEFT);
	for (unsigned r = 0; r < ncols; r++) {
		unsigned a = cols[r];
		const struct gpu_static *st = &snap->gpu[a].st;
		char label[16], nb[24];
		table_row(t);
		table_cellf(t, "GPU%u", a);
		for (unsigned c = 0; c < ncols; c++) {
			gpu_link_label(&snap->link[a][cols[c]], label, sizeof(label));
			table_cell(t, label);
		}
		if (VAL_HAS(st->cpu_affinity))
			table_cell(t, st->cpu_affinity.s);
		else
			table_cell(t, st->cpu_affinity.st == VAL_UNSUPPORTED ? "N/A" : "?");
		table_cell(t, numa_text(st, nb, sizeof(nb)));
	}
	cmd_print_sim_banner(ctx, ctx->out);
	table_print(t, ctx->out);
	table_free(t);
	fputc('\n', ctx->out);
	fputs(legend, ctx->out);
}

static int print_json(struct cmd_ctx *ctx, const struct snapshot *snap, uint64_t mask)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "simulated", json_boolean(snap->sys.simulated));
	json_object_set_new(doc, "system", json_gpu_system(&snap->sys));
	json_t *gpus = json_array(), *matrix = json_array(), *links = json_array();
	for (unsigned a = 0; a < snap->n; a++) {
		if (!gpu_select_has(mask, a))
			continue;
		const struct gpu_static *st = &snap->gpu[a].st;
		json_array_append_new(gpus, json_gpu_static(st));
		json_t *row = json_array();
		for (unsigned b = 0; b < snap->n; b++) {
			if (!gpu_select_has(mask, b))
				continue;
			char label[16];
			gpu_link_label(&snap->link[a][b], label, sizeof(label));
			json_array_append_new(row, json_string(label));
			if (a != b)
				json_array_append_new(links, json_gpu_link(a, b, &snap->link[a][b]));
		}
		json_array_append_new(matrix, row);
	}
	json_object_set_new(doc, "gpus", gpus);
	json_object_set_new(doc, "matrix", matrix);
	json_object_set_new(doc, "links", links);
	int rc = json_write(doc, ctx->out);
	json_decref(doc);
	return rc == 0 ? EXIT_OK : EXIT_IOERR;
}

int cmd_topo(int argc, char **argv, struct cmd_ctx *ctx)
{
	bool json = false;
	const char *id = NULL;
	int rc = parse_args(argc, argv, ctx, &json, &id);
	if (rc >= 0)
		return rc;
	/* no metric group: topology, affinity and static facts only */
	struct snapshot *snap = cmd_take_snapshot(ctx, "topo", 0, &rc);
	if (!snap)
		return rc;
	uint64_t mask = 0;
	rc = cmd_select_gpus(ctx, "topo", snap, id, &mask);
	if (rc == EXIT_OK) {
		if (json)
			rc = print_json(ctx, snap, mask);
		else
			print_matrix(ctx, snap, mask);
	}
	free(snap);
	return rc;
}
