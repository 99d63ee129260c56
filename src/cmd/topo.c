/* SPDX-License-Identifier: Apache-2.0 */
/*
 * topo.c - `gpuctl topo`: the GPU-to-GPU matrix as `nvidia-smi topo -m`
 * prints it (X, NV#, PIX, PXB, PHB, NODE, SYS) with each GPU's CPU and NUMA
 * affinity and the legend, then the RDMA NICs (NIC0..) and how each reaches
 * the GPUs, read from sysfs (--sysfs DIR) or a simulated server's model; --json for scripts (docs/json.md); -i to pick GPUs.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "help.h"
#include "core/gpu_select.h"
#include "device/nic.h"
#include "device/sim.h"
#include "view/json_util.h"
#include "core/table.h"
#include "sampler/sampler.h"

enum { OPT_TOPO_JSON, OPT_TOPO_ID, OPT_TOPO_MATRIX, OPT_TOPO_SYSFS };
static const struct opt_spec topo_opts[] = {
	[OPT_TOPO_JSON] = OPT_SPEC_JSON,
	[OPT_TOPO_ID] = OPT_SPEC_GPU_ID,
	/* nvidia-smi's spelling; the matrix is what topo shows anyway */
	[OPT_TOPO_MATRIX] = { "matrix", 'm', OPT_FLAG, NULL, NULL, NULL, 0, 0, NULL },
	[OPT_TOPO_SYSFS] = { "sysfs", 0, OPT_STRING, "DIR",
			     "read RDMA NICs and PCI paths under DIR (a simulated server: its model unless given)", "/sys",
			     0, 0, NULL },
};

static const struct cmd_help topo_help = {
	.name = "topo",
	.usage = "[--json] [-i SPEC] [--sysfs DIR]",
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

/* The NICs and every GPU's PCI path (for the NIC cells). */
struct nic_topo {
	unsigned n;
	struct nic nic[NIC_MAX];
	char gpu_path[GPU_MAX_GPUS][NIC_PATH_LEN];
};

static int gpu_numa(const struct gpu_static *st)
{
	return VAL_HAS(st->numa_node) && st->numa_node.v >= 0 ? (int)st->numa_node.v : -1;
}

/* The cell between GPU g and NIC k. */
static const char *gpu_nic_label(const struct snapshot *snap, const struct nic_topo *nt, unsigned g, unsigned k)
{
	return gpu_link_kind_name(nic_path_class(nt->gpu_path[g], gpu_numa(&snap->gpu[g].st), nt->nic[k].pci_path,
						 nt->nic[k].numa_node));
}

static const char *nic_nic_label(const struct nic_topo *nt, unsigned a, unsigned b)
{
	if (a == b)
		return "X";
	return gpu_link_kind_name(nic_path_class(nt->nic[a].pci_path, nt->nic[a].numa_node, nt->nic[b].pci_path,
						 nt->nic[b].numa_node));
}

static const char nic_legend_head[] = "\nNIC Legend:\n\n";

static int parse_args(int argc, char **argv, struct cmd_ctx *ctx, bool *json, const char **id, const char **sysfs)
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
		else if (k == OPT_TOPO_SYSFS)
			*sysfs = v.text;
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

static void print_matrix(struct cmd_ctx *ctx, const struct snapshot *snap, uint64_t mask, const struct nic_topo *nt)
{
	unsigned cols[GPU_MAX_GPUS], ncols = 0, nn = nt->n;
	for (unsigned i = 0; i < snap->n; i++)
		if (gpu_select_has(mask, i))
			cols[ncols++] = i;
	struct table *t = table_new(ncols + nn + 3);
	char h[32];
	table_col(t, 0, "", TABLE_LEFT);
	for (unsigned c = 0; c < ncols; c++) {
		snprintf(h, sizeof(h), "GPU%u", cols[c]);
		table_col(t, c + 1, h, TABLE_LEFT);
	}
	for (unsigned k = 0; k < nn; k++) {
		snprintf(h, sizeof(h), "NIC%u", k);
		table_col(t, ncols + 1 + k, h, TABLE_LEFT);
	}
	table_col(t, ncols + nn + 1, "CPU Affinity", TABLE_LEFT);
	table_col(t, ncols + nn + 2, "NUMA Affinity", TABLE_LEFT);
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
		for (unsigned k = 0; k < nn; k++)
			table_cell(t, gpu_nic_label(snap, nt, a, k));
		if (VAL_HAS(st->cpu_affinity))
			table_cell(t, st->cpu_affinity.s);
		else
			table_cell(t, st->cpu_affinity.st == VAL_UNSUPPORTED ? "N/A" : "?");
		table_cell(t, numa_text(st, nb, sizeof(nb)));
	}
	for (unsigned r = 0; r < nn; r++) {
		table_row(t);
		table_cellf(t, "NIC%u", r);
		for (unsigned c = 0; c < ncols; c++)
			table_cell(t, gpu_nic_label(snap, nt, cols[c], r));
		for (unsigned k = 0; k < nn; k++)
			table_cell(t, nic_nic_label(nt, r, k));
		table_cell(t, "");
		table_cell(t, "");
	}
	cmd_print_sim_banner(ctx, ctx->out);
	table_print(t, ctx->out);
	table_free(t);
	fputc('\n', ctx->out);
	fputs(legend, ctx->out);
	if (nn) {
		fputs(nic_legend_head, ctx->out);
		for (unsigned k = 0; k < nn; k++)
			fprintf(ctx->out, "  NIC%u: %s\n", k, nt->nic[k].name);
	}
}

static json_t *json_nic(const struct snapshot *snap, uint64_t mask, const struct nic_topo *nt, unsigned k)
{
	json_t *o = json_object(), *g = json_array(), *n = json_array();
	json_object_set_new(o, "name", json_string(nt->nic[k].name));
	json_object_set_new(o, "pci_path", json_string(nt->nic[k].pci_path));
	json_object_set_new(o, "numa_node", nt->nic[k].numa_node >= 0 ? json_integer(nt->nic[k].numa_node) : json_null());
	for (unsigned a = 0; a < snap->n; a++)
		if (gpu_select_has(mask, a))
			json_array_append_new(g, json_string(gpu_nic_label(snap, nt, a, k)));
	for (unsigned b = 0; b < nt->n; b++)
		json_array_append_new(n, json_string(nic_nic_label(nt, k, b)));
	json_object_set_new(o, "gpus", g);
	json_object_set_new(o, "nics", n);
	return o;
}

static int print_json(struct cmd_ctx *ctx, const struct snapshot *snap, uint64_t mask, const struct nic_topo *nt)
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
	json_t *nics = json_array();
	for (unsigned k = 0; k < nt->n; k++)
		json_array_append_new(nics, json_nic(snap, mask, nt, k));
	json_object_set_new(doc, "nics", nics);
	int rc = json_write(doc, ctx->out);
	json_decref(doc);
	return rc == 0 ? EXIT_OK : EXIT_IOERR;
}

/* NICs from sysfs: the real machine's (/sys), or DIR's; a simulated
 * server's from its model ("nics") unless --sysfs names a tree. */
static int read_nics(struct cmd_ctx *ctx, const struct snapshot *snap, const char *sysfs, struct nic_topo *nt)
{
	if (!sysfs && snap->sys.simulated) {
		int n = sim_nics(ctx->be, nt->nic, NIC_MAX, nt->gpu_path);
		nt->n = n > 0 ? (unsigned)n : 0;
		return EXIT_OK;
	}
	const char *root = sysfs ? sysfs : "/sys";
	struct stat sb;
	if (sysfs && (stat(sysfs, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
		cmd_error(ctx, "topo", "--sysfs %s: not a directory", sysfs);
		return EXIT_NOINPUT;
	}
	char err[256];
	int n = nic_read_sysfs(root, nt->nic, NIC_MAX, err, sizeof(err));
	if (n < 0) {
		cmd_error(ctx, "topo", "%s", err);
		return EXIT_IOERR;
	}
	nt->n = (unsigned)n;
	for (unsigned g = 0; n > 0 && g < snap->n; g++)
		if (VAL_HAS(snap->gpu[g].st.pci_bus_id))
			(void)nic_gpu_path(root, snap->gpu[g].st.pci_bus_id.s, nt->gpu_path[g], NIC_PATH_LEN);
	return EXIT_OK;
}

int cmd_topo(int argc, char **argv, struct cmd_ctx *ctx)
{
	bool json = false;
	const char *id = NULL, *sysfs = NULL;
	int rc = parse_args(argc, argv, ctx, &json, &id, &sysfs);
	if (rc >= 0)
		return rc;
	/* no metric group: topology, affinity and static facts only */
	struct snapshot *snap = cmd_take_snapshot(ctx, "topo", 0, &rc);
	if (!snap)
		return rc;
	uint64_t mask = 0;
	rc = cmd_select_gpus(ctx, "topo", snap, id, &mask);
	struct nic_topo *nt = calloc(1, sizeof(*nt));
	if (rc == EXIT_OK && !nt) {
		cmd_error(ctx, "topo", "out of memory");
		rc = EXIT_SOFTWARE;
	}
	if (rc == EXIT_OK)
		rc = read_nics(ctx, snap, sysfs, nt);
	if (rc == EXIT_OK) {
		if (json)
			rc = print_json(ctx, snap, mask, nt);
		else
			print_matrix(ctx, snap, mask, nt);
	}
	free(nt);
	free(snap);
	return rc;
}
