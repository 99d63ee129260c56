/* SPDX-License-Identifier: Apache-2.0 */
/* plan_mig.c - `gpuctl plan mig`: a GPU model's MIG profiles with their slice
 * positions, and the layout that serves a list of requests, or why none can.
 * Exit 0 with a layout (or the profile list), 1 when no layout exists. */
#include <string.h>

#include "core/table.h"
#include "plan_cmd.h"

enum { MIG_GPU = PLAN_OPT_FIRST_OWN, MIG_REQUEST, MIG_ID };
const struct opt_spec plan_mig_opts[] = {
	PLAN_COMMON_SPECS,
	[MIG_GPU] = { "gpu", 0, OPT_STRING, "KEY", "a catalog GPU with MIG, e.g. 'H200 SXM'", NULL, 0, 0, NULL },
	[MIG_REQUEST] = { "request", 0, OPT_STRING, "LIST", "instances to lay out, e.g. 3x1g.18gb,1x3g.71gb", NULL, 0, 0,
			  NULL },
	[MIG_ID] = { "id", 'i', OPT_INT, "INDEX", "the GPU index the apply commands name", "0", 0, 63, NULL },
};
const size_t plan_mig_nopts = sizeof(plan_mig_opts) / sizeof(plan_mig_opts[0]);

struct mig_opts {
	const char *gpu, *request;
	long long id;
};

static int mig_take(struct pctx *p, int opt, const struct opt_value *v, void *arg)
{
	struct mig_opts *o = arg;
	(void)p;
	if (opt == MIG_GPU)
		o->gpu = v->text;
	else if (opt == MIG_REQUEST)
		o->request = v->text;
	else if (opt == MIG_ID)
		o->id = v->num;
	return 0;
}

int plan_mig_cmd(struct pctx *p, int argc, char **argv)
{
	struct mig_opts o = { 0 };
	int rc = plan_read_options(p, argc, argv, mig_take, &o);
	if (rc)
		return rc;
	const char *gpu = o.gpu, *request = o.request;
	if (!gpu) {
		perr(p, "give --gpu KEY (a catalog GPU with MIG, e.g. 'H200 SXM')");
		return EXIT_USAGE;
	}
	if ((rc = plan_load_catalog(p)))
		return rc;
	const struct cat_gpu *g = plan_gpu(p, gpu);
	if (!g)
		return EXIT_USAGE;
	char err[512];
	if (g->mig_n == 0) {
		perr(p, "'%s' does not support MIG", g->key);
		return EXIT_USAGE;
	}
	json_t *root = json_object(), *profs = json_array();
	json_object_set_new(root, "command", json_string("plan mig"));
	json_object_set_new(root, "gpu", json_string(g->key));
	struct table *tb = table_new(6);
	const char *h[] = { "profile", "compute slices", "memory slices", "memory", "max instances", "start positions" };
	for (unsigned i = 0; i < 6; i++)
		table_col(tb, i, h[i], i == 0 || i == 5 ? TABLE_LEFT : TABLE_RIGHT);
	for (unsigned k = 0; k < g->mig_n; k++) {
		const struct cat_mig_profile *pr = &g->mig[k];
		unsigned starts[16], n = plan_mig_placements(g, k, starts, 16);
		char pos[64] = "";
		json_t *js = json_array();
		for (unsigned j = 0; j < n; j++) {
			snprintf(pos + strlen(pos), sizeof(pos) - strlen(pos), "%s%u", j ? "," : "", starts[j]);
			json_array_append_new(js, json_integer(starts[j]));
		}
		json_t *jp = json_object();
		json_object_set_new(jp, "name", json_string(pr->name));
		json_object_set_new(jp, "compute_slices", json_integer(pr->slices));
		json_object_set_new(jp, "memory_slices", json_integer(pr->mem_slices));
		json_num(jp, "mem_gb", pr->mem_gb);
		json_object_set_new(jp, "max_instances", json_integer(pr->max_instances));
		json_object_set_new(jp, "starts", js);
		json_array_append_new(profs, jp);
		table_row(tb);
		table_cell(tb, pr->name);
		table_cellf(tb, "%u", pr->slices);
		table_cellf(tb, "%u", pr->mem_slices);
		table_cellf(tb, "%.0f GB", pr->mem_gb);
		table_cellf(tb, "%u", pr->max_instances);
		table_cell(tb, pos);
	}
	json_object_set_new(root, "profiles", profs);
	int exit_code = EXIT_OK;
	struct plan_mig_layout l = { 0 };
	const char *why = NULL;
	char cgi[PLAN_MIG_MAX * (MIG_PROFILE_LEN + 8)] = "", enable[64], create[sizeof(cgi) + 64];
	if (request) {
		struct plan_mig_req reqs[PLAN_MIG_MAX];
		unsigned nreq;
		if (plan_mig_parse(g, request, reqs, &nreq, err, sizeof(err))) {
			perr(p, "%s", err);
			table_free(tb);
			json_decref(root);
			return EXIT_USAGE;
		}
		json_object_set_new(root, "request", json_string(request));
		if (plan_mig_layout(g, reqs, nreq, &l, err, sizeof(err))) {
			why = err;
			exit_code = EXIT_WARN;
			json_object_set_new(root, "fits", json_false());
			json_object_set_new(root, "reason", json_string(err));
		} else {
			json_t *jl = json_array();
			for (unsigned k = 0; k < l.n; k++) {
				json_t *s = json_object();
				json_object_set_new(s, "profile", json_string(l.s[k].profile));
				json_object_set_new(s, "start", json_integer(l.s[k].mem_start));
				json_object_set_new(s, "memory_slices", json_integer(l.s[k].mem_size));
				json_object_set_new(s, "compute_slices", json_integer(l.s[k].cmp_size));
				json_array_append_new(jl, s);
			}
			json_object_set_new(root, "fits", json_true());
			json_object_set_new(root, "layout", jl);
			/* the commands that make it: MIG mode on, then the GPU instances at
			 * their positions, each with its default compute instance (-C) */
			plan_mig_cgi(&l, cgi, sizeof(cgi));
			snprintf(enable, sizeof(enable), "nvidia-smi -i %lld -mig 1", o.id);
			snprintf(create, sizeof(create), "nvidia-smi mig -i %lld -cgi %s -C", o.id, cgi);
			json_t *jc = json_array();
			json_array_append_new(jc, json_string(enable));
			json_array_append_new(jc, json_string(create));
			json_object_set_new(root, "commands", jc);
		}
	}
	FILE *f = p->ctx->out;
	if (p->json) {
		json_dumpf(root, f, JSON_INDENT(1));
		fputc('\n', f);
	} else {
		fprintf(f, "MIG profiles of %s (%s):\n", g->key, g->source[0] ? "catalog" : "catalog, no source");
		table_print(tb, f);
		if (request && why)
			fprintf(f, "\nno layout for %s: %s\n", request, why);
		else if (request) {
			fprintf(f, "\nlayout for %s:\n", request);
			for (unsigned k = 0; k < l.n; k++)
				fprintf(f, "  %-10s start %u: memory slices %u-%u, compute slices %u-%u\n", l.s[k].profile,
					l.s[k].mem_start, l.s[k].mem_start, l.s[k].mem_start + l.s[k].mem_size - 1,
					l.s[k].cmp_start, l.s[k].cmp_start + l.s[k].cmp_size - 1);
			fprintf(f, "\nto apply it to GPU %lld (as root; MIG mode on needs the GPU idle, and may need a reset):\n"
				   "  %s\n  %s\n", o.id, enable, create);
		}
		if (p->explain)
			fprintf(f, "\nHow this was computed (docs/plan.md): a profile of g compute and m memory slices starts at a "
				   "multiple of m with start + m <= memory slices and start + g <= compute slices, the positions "
				   "`nvidia-smi mig -lgipp` lists; instances may not share slices. The layout search places the "
				   "largest first and backtracks over every position.\n");
	}
	table_free(tb);
	json_decref(root);
	return exit_code;
}
