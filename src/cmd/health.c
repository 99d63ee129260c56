/* SPDX-License-Identifier: Apache-2.0 */
/*
 * health.c - `gpuctl health`: passive checks in seconds, no GPU work.
 *
 * One health run (src/health/run.h: two snapshots a window apart with the
 * XID events and the processes' GPU memory watched between them). Output:
 * a table or --json; exit 0 healthy, 1 warnings, 2 failure, 69 could not
 * check - fit for Slurm's HealthCheckProgram and prolog/epilog (docs/health.md).
 */
#include <stdlib.h>
#include <string.h>

#include "health_cmd.h"
#include "help.h"
#include "core/units.h"
#include "core/data_path.h"
#include "core/gpu_select.h"
#include "health/json.h"
#include "view/json_util.h"
#include "core/table.h"
#include "core/cudaver.h"

static struct snapshot *take(void *arg, int *rc)
{
	const struct health_take *t = arg;
	return cmd_take_snapshot(t->ctx, t->cmd, GPU_GRP_ALL, rc);
}

int health_run_collect(struct cmd_ctx *ctx, const char *cmd, struct health_run *hr, double window_s,
		       const char *rules_path, const char *id_spec)
{
	char err[512] = "";
	int rc = health_run_rules(hr, ctx->data_dir, rules_path, err, sizeof(err));
	if (rc == EXIT_OK)
		rc = cmd_backend(ctx);
	struct health_take t = { ctx, cmd };
	if (rc == EXIT_OK)
		rc = health_run_gather(hr, ctx->be, window_s, take, &t, err, sizeof(err));
	if (rc != EXIT_OK) {
		if (*err)
			cmd_error(ctx, cmd, "%s", err);
		return rc;
	}
	return cmd_select_gpus(ctx, cmd, &hr->now, id_spec, &hr->mask);
}

/* A subsystem as a GPU sees it: its own verdict and the system-wide one. */
static enum health_verdict sub_verdict(const struct health_report *rep, unsigned i, unsigned s)
{
	enum health_verdict v = rep->gpu[i].sub[s];
	return rep->system.sub[s] > v ? rep->system.sub[s] : v;
}

static void print_findings(FILE *out, const char *who, const struct health_entity *e)
{
	for (unsigned k = 0; k < e->nfind; k++) {
		const struct health_finding *f = &e->find[k];
		/* the reason and hint may come from a site's rules file, the
		 * evidence names a process: each line made fit for a terminal */
		text_line(out, "%s %s %s [%s]: %s", who, health_verdict_name(f->verdict), health_subsys_name(f->subsys),
			  f->rule_id, f->reason);
		text_line(out, "    evidence: %s", f->evidence);
		if (f->verdict >= HEALTH_WARN)
			text_line(out, "    action:   %s%s%s", health_action_text(f->action), f->hint[0] ? "; " : "",
				  f->hint);
	}
	if (e->truncated)
		fprintf(out, "%s: more findings than shown (limit %d)\n", who, HEALTH_MAX_FINDINGS);
}

void health_print_table(const struct cmd_ctx *ctx, const struct health_run *hr, FILE *out)
{
	const struct health_report *rep = &hr->rep;
	cmd_print_sim_banner(ctx, out);
	struct table *t = table_new(3 + HS_COUNT);
	if (!t)
		return;
	table_col(t, 0, "GPU", TABLE_RIGHT);
	table_col(t, 1, "NAME", TABLE_LEFT);
	table_col(t, 2, "HEALTH", TABLE_LEFT);
	for (unsigned s = 0; s < HS_COUNT; s++) {
		char h[16];
		snprintf(h, sizeof(h), "%s", health_subsys_name((enum health_subsys)s));
		for (char *p = h; *p; p++)
			*p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
		table_col(t, 3 + s, h, TABLE_LEFT);
	}
	for (unsigned i = 0; i < rep->n; i++) {
		if (!gpu_select_has(hr->mask, i))
			continue;
		const struct gpu_static *st = &hr->now.gpu[i].st;
		table_row(t);
		table_cellf(t, "%u", i);
		table_cell(t, VAL_HAS(st->name) ? st->name.s : "n/a");
		table_cell(t, health_verdict_name(health_gpu_verdict(rep, i)));
		for (unsigned s = 0; s < HS_COUNT; s++)
			table_cell(t, health_verdict_name(sub_verdict(rep, i, s)));
	}
	table_print(t, out);
	table_free(t);
	fprintf(out, "\n");
	print_findings(out, "system", &rep->system);
	for (unsigned i = 0; i < rep->n; i++) {
		if (!gpu_select_has(hr->mask, i))
			continue;
		char who[16];
		snprintf(who, sizeof(who), "GPU %u", i);
		print_findings(out, who, &rep->gpu[i]);
	}
	enum health_verdict v = health_run_verdict(hr);
	enum health_action a = rep->system.action;
	for (unsigned i = 0; i < rep->n; i++)
		if (gpu_select_has(hr->mask, i) && rep->gpu[i].action > a)
			a = rep->gpu[i].action;
	fprintf(out, "%s%s: %s", v == HEALTH_PASS ? "" : "\n", "health", health_verdict_name(v));
	if (v >= HEALTH_WARN)
		fprintf(out, ", action: %s", health_action_text(a));
	if (hr->have_prev)
		fprintf(out, " (window %.1f s", (double)rep->window_ns / 1e9);
	else
		fprintf(out, " (single snapshot: rate rules not evaluated");
	fprintf(out, "%s)\n", hr->xids_collected ? "" : "; XID events not available");
}

json_t *health_report_json(const struct health_run *hr)
{
	const struct health_report *rep = &hr->rep;
	json_t *o = json_object();
	enum health_verdict v = health_run_verdict(hr);
	enum health_action a = rep->system.action;
	for (unsigned i = 0; i < rep->n; i++)
		if (gpu_select_has(hr->mask, i) && rep->gpu[i].action > a)
			a = rep->gpu[i].action;
	json_object_set_new(o, "verdict", json_string(health_verdict_name(v)));
	json_object_set_new(o, "action", json_string(health_action_name(v >= HEALTH_WARN ? a : HEALTH_ACT_NONE)));
	/* the window as measured between the two snapshots (it can exceed --window) */
	json_object_set_new(o, "window_s", hr->have_prev ? json_real((double)rep->window_ns / 1e9) : json_null());
	json_object_set_new(o, "xid_events_watched", json_boolean(hr->xids_collected));
	json_t *sys = health_entity_json(&rep->system, rep->system.verdict, rep->system.action, HEALTH_JSON_FULL);
	json_object_set_new(sys, "info", json_gpu_system(&hr->now.sys));
	json_object_set_new(o, "system", sys);
	json_t *gpus = json_array();
	for (unsigned i = 0; i < rep->n; i++) {
		if (!gpu_select_has(hr->mask, i))
			continue;
		const struct gpu_static *st = &hr->now.gpu[i].st;
		json_t *g = health_entity_json(&rep->gpu[i], rep->gpu[i].verdict, rep->gpu[i].action, HEALTH_JSON_FULL);
		json_object_set_new(g, "index", json_integer(i));
		json_put_strv(g, "name", &st->name);
		json_put_strv(g, "uuid", &st->uuid);
		json_put_strv(g, "pci_bus_id", &st->pci_bus_id);
		/* what a consumer should act on: own findings plus the system's */
		json_object_set_new(g, "effective_verdict", json_string(health_verdict_name(health_gpu_verdict(rep, i))));
		json_object_set_new(g, "effective_action", json_string(health_action_name(health_gpu_action(rep, i))));
		json_array_append_new(gpus, g);
	}
	json_object_set_new(o, "gpus", gpus);
	return o;
}

enum { OPT_HEALTH_ID, OPT_HEALTH_JSON, OPT_HEALTH_WINDOW, OPT_HEALTH_IDLE, OPT_HEALTH_ALLOW_UID,
       OPT_HEALTH_ALLOW_PID, OPT_HEALTH_RULES, OPT_HEALTH_NEED_CUDA };
static const struct opt_spec health_opts[] = {
	[OPT_HEALTH_ID] = OPT_SPEC_GPU_IDS,
	[OPT_HEALTH_JSON] = { "json", 0, OPT_FLAG, NULL, "machine-readable output (stable; docs/health.md)", NULL, 0, 0,
			      NULL },
	[OPT_HEALTH_WINDOW] = { "window", 0, OPT_DURATION, NULL,
				"time between the two snapshots, for rates and XID events, 0 to 10m\n"
				"(0: one snapshot, rate rules not evaluated; docs/units.md)",
				"1s", 0, 600 * (long long)UNITS_NS_PER_S, NULL },
	[OPT_HEALTH_IDLE] = { "idle", 0, OPT_FLAG, NULL, "any compute process is foreign (Slurm prolog/epilog)", NULL, 0,
			      0, NULL },
	[OPT_HEALTH_ALLOW_UID] = { "allow-uid", 0, OPT_STRING, "LIST", "compute processes of these users are not foreign",
				   NULL, 0, 0, NULL },
	[OPT_HEALTH_ALLOW_PID] = { "allow-pid", 0, OPT_STRING, "LIST", "nor are these processes", NULL, 0, 0, NULL },
	[OPT_HEALTH_RULES] = { "rules", 0, OPT_STRING, "FILE", "use this rules file instead of the shipped one", NULL, 0,
			       0, NULL },
	[OPT_HEALTH_NEED_CUDA] = { "need-cuda", 0, OPT_STRING, "X.Y",
				   "warn when the driver supports an older CUDA than this", NULL, 0, 0, NULL },
};

static const struct cmd_help health_help = {
	.name = "health",
	.usage = "[-i ID[,ID...]] [--json] [--window DURATION] [--idle]\n"
		 "                     [--allow-uid UID[,UID...]] [--allow-pid PID[,PID...]] [--rules FILE]\n"
		 "                     [--need-cuda X.Y]",
	.what = "Passive health checks (seconds, no GPU work): a verdict per GPU and subsystem\n"
		"with the reason, the evidence and the action (docs/health.md).\n",
	.opts = health_opts,
	.nopts = sizeof(health_opts) / sizeof(health_opts[0]),
	.exits = "0 healthy, 1 warnings, 2 failure, 69 could not check, 64 usage, 65 bad rules file",
};

/* "1,2,3" -> ids; -1 on a bad list. */
static int parse_id_list(const char *s, uint32_t *out, unsigned max, unsigned *n)
{
	*n = 0;
	while (*s) {
		char *end;
		unsigned long v = strtoul(s, &end, 10);
		if (end == s || v > UINT32_MAX || (*end && *end != ',') || *n >= max)
			return -1;
		out[(*n)++] = (uint32_t)v;
		s = *end ? end + 1 : end;
	}
	return *n ? 0 : -1;
}

int cmd_health(int argc, char **argv, struct cmd_ctx *ctx)
{
	static uint32_t uids[64], pids[64];
	const char *ids = NULL, *rules = NULL;
	bool json = false;
	double window = 1.0;
	struct health_opts opts = { 0 };
	struct opt_parser p;
	struct opt_value val;
	int opt, opt_rc;
	opt_init(&p, argc, argv, health_help.opts, health_help.nopts);
	while ((opt = help_opt_next(ctx, &health_help, &p, &val, &opt_rc)) != OPT_DONE) {
		switch (opt) {
		case OPT_HELP:
		case OPT_ERROR: return opt_rc;
		case OPT_HEALTH_ID: ids = val.text; break;
		case OPT_HEALTH_JSON: json = true; break;
		case OPT_HEALTH_IDLE: opts.expect_idle = true; break;
		case OPT_HEALTH_RULES: rules = val.text; break;
		case OPT_HEALTH_WINDOW: window = (double)val.num / 1e9; break;
		case OPT_HEALTH_NEED_CUDA: {
			/* cudaver.h's parser, as submit --image reads an image's; no patch level here */
			char err[128];
			const char *dot = strchr(val.text, '.');
			if (cudaver_parse(val.text, &opts.cuda_required, err, sizeof(err)) || opts.cuda_required == 0 ||
			    (dot && strchr(dot + 1, '.'))) {
				cmd_error(ctx, "health", "bad CUDA version '%s' (MAJOR.MINOR, e.g. 13.0)", val.text);
				return EXIT_USAGE;
			}
			break;
		}
		default: /* --allow-uid, --allow-pid */
			if (parse_id_list(val.text, opt == OPT_HEALTH_ALLOW_UID ? uids : pids, 64,
					  opt == OPT_HEALTH_ALLOW_UID ? &opts.n_allowed_uids : &opts.n_allowed_pids) != 0) {
				cmd_error(ctx, "health", "bad id list '%s' (numbers, comma-separated, at most 64)", val.text);
				return EXIT_USAGE;
			}
			break;
		}
	}
	if (cmd_check_gpu_spec(ctx, "health", ids) != EXIT_OK)
		return EXIT_USAGE;
	opts.allowed_uids = uids;
	opts.allowed_pids = pids;
	struct health_run *hr = calloc(1, sizeof(*hr));
	if (!hr) {
		cmd_error(ctx, "health", "out of memory");
		return EXIT_SOFTWARE;
	}
	hr->opts = opts;
	int rc = health_run_collect(ctx, "health", hr, window, rules, ids);
	if (rc == EXIT_OK) {
		enum health_verdict v = health_run_verdict(hr);
		if (json) {
			json_t *doc = json_object(), *rep = health_report_json(hr);
			json_object_set_new(doc, "simulated", json_boolean(hr->rep.simulated));
			json_object_update(doc, rep);
			json_decref(rep);
			if (json_write(doc, ctx->out) != 0)
				rc = EXIT_IOERR;
			json_decref(doc);
		} else {
			health_print_table(ctx, hr, ctx->out);
		}
		if (rc == EXIT_OK) {
			rc = health_exit_code(v);
			if (v == HEALTH_NA)
				cmd_error(ctx, "health", "could not check anything on the selected GPUs");
		}
	}
	free(hr);
	return rc;
}
