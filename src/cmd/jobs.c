/* SPDX-License-Identifier: Apache-2.0 */
/* jobs.c - `gpuctl jobs [--history]`: your jobs with exit status and
 * accounting (GPU-seconds, energy, utilization, memory, XIDs, throttling). */
#include "cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/table.h"
#include "help.h"
#include "pool_cmd.h"

enum { OPT_JOBS_HISTORY = POOL_OPT_FIRST_OWN, OPT_JOBS_ALL, OPT_JOBS_LIMIT, OPT_JOBS_SLURM };
static const struct opt_spec jobs_opts[] = {
	POOL_OPT_SPECS,
	[OPT_JOBS_HISTORY] = { "history", 0, OPT_FLAG, NULL, "ended jobs too, newest first", NULL, 0, 0, NULL },
	[OPT_JOBS_ALL] = { "all", 0, OPT_FLAG, NULL, "every user's (root only)", NULL, 0, 0, NULL },
	[OPT_JOBS_LIMIT] = { "limit", 0, OPT_INT, NULL, "at most N jobs (--history)", "100", 1, 1000000, NULL },
	[OPT_JOBS_SLURM] = { "slurm", 0, OPT_STRING, "JOBID", "the Slurm job's GPUs as the prolog recorded them",
			     NULL, 0, 0, NULL },
};

static const struct cmd_help jobs_help = {
	.name = "jobs",
	.usage = "[--history] [--all] [--limit N] [--socket PATH] [--json]\n"
		 "       gpuctl jobs --slurm JOBID [--socket PATH] [--json]",
	.what = "Your active jobs; --history: ended ones too, newest first (default at most 100).\n"
		"--all: every user's (root only). Accounting per job: GPU-seconds, energy (J),\n"
		"average/peak utilization (%), peak memory (GiB), average SM, tensor and DRAM activity (%,\n"
		"NVML GPM; n/a before Hopper or with MIG), XIDs and throttling during the job;\n"
		"--json gives them per GPU. --slurm: the Slurm job's GPUs as the prolog recorded them\n"
		"(docs/slurm.md), running or ended.\n",
	.opts = jobs_opts,
	.nopts = sizeof(jobs_opts) / sizeof(jobs_opts[0]),
	.exits = POOL_CMD_EXIT_CODES,
};

struct totals {
	double gpu_s, energy_j, util_avg, util_peak, mem_peak;
	bool energy_ok, util_ok, mem_ok;
	double gpm[3];                 /* SM, tensor, DRAM activity: means over the GPUs of the job's means */
	bool gpm_ok[3];
	unsigned n, xids;
	char throttle[128];
};

static void sum_acct(const json_t *acct, struct totals *t)
{
	memset(t, 0, sizeof(*t));
	t->energy_ok = t->util_ok = t->mem_ok = json_array_size(acct) > 0;
	static const char *const gpm_keys[3] = { "sm_active_avg_pct", "tensor_active_avg_pct", "dram_active_avg_pct" };
	for (unsigned m = 0; m < 3; m++)
		t->gpm_ok[m] = t->energy_ok;
	size_t i;
	const json_t *a;
	json_array_foreach(acct, i, a) {
		t->n++;
		t->gpu_s += json_number_value(json_object_get(a, "gpu_seconds"));
		const json_t *e = json_object_get(a, "energy_j");
		t->energy_ok = t->energy_ok && e;
		t->energy_j += json_number_value(e);
		const json_t *ua = json_object_get(a, "util_avg_pct"), *up = json_object_get(a, "util_peak_pct");
		t->util_ok = t->util_ok && ua;
		t->util_avg += json_number_value(ua);
		if (json_number_value(up) > t->util_peak)
			t->util_peak = json_number_value(up);
		for (unsigned m = 0; m < 3; m++) {
			const json_t *g = json_object_get(a, gpm_keys[m]);
			t->gpm_ok[m] = t->gpm_ok[m] && g;
			t->gpm[m] += json_number_value(g);
		}
		const json_t *mp = json_object_get(a, "mem_peak_bytes");
		t->mem_ok = t->mem_ok && mp;
		if (json_number_value(mp) > t->mem_peak)
			t->mem_peak = json_number_value(mp);
		const char *k;
		const json_t *v;
		json_object_foreach((json_t *)json_object_get(a, "xids"), k, v)
			t->xids += (unsigned)json_integer_value(v);
		const char *thr = json_string_value(json_object_get(a, "throttle_reasons"));
		if (thr && strcmp(thr, "none") != 0)
			snprintf(t->throttle, sizeof(t->throttle), "%s", thr);
	}
	if (t->n) {
		t->util_avg /= t->n;
		for (unsigned m = 0; m < 3; m++)
			t->gpm[m] /= t->n;
	}
}

int cmd_jobs(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct pool_opts o = { 0 };
	bool history = false, all = false;
	unsigned long limit = 0;
	const char *slurm_job = NULL;
	struct opt_parser p;
	struct opt_value v;
	int opt, opt_rc;
	opt_init(&p, argc, argv, jobs_help.opts, jobs_help.nopts);
	while ((opt = help_opt_next(ctx, &jobs_help, &p, &v, &opt_rc)) != OPT_DONE) {
		if (opt == OPT_HELP || opt == OPT_ERROR)
			return opt_rc;
		if (opt == OPT_JOBS_HISTORY)
			history = true;
		else if (opt == OPT_JOBS_ALL)
			all = true;
		else if (opt == OPT_JOBS_LIMIT)
			limit = (unsigned long)v.num;
		else if (opt == OPT_JOBS_SLURM) {
			if (strspn(v.text, "0123456789") != strlen(v.text) || strlen(v.text) > 10) {
				cmd_error(ctx, "jobs", "option '--slurm' needs a Slurm job id");
				return EXIT_USAGE;
			}
			slurm_job = v.text;
		} else {
			pool_cmd_take(&o, opt, &v);
		}
	}
	json_t *req = pool_cmd_request(slurm_job ? "slurm_show" : "jobs"), *resp;
	if (slurm_job)
		json_object_set_new(req, "slurm_job", json_integer((json_int_t)strtoull(slurm_job, NULL, 10)));
	if (history)
		json_object_set_new(req, "history", json_true());
	if (all)
		json_object_set_new(req, "all_users", json_true());
	if (limit)
		json_object_set_new(req, "limit", json_integer((json_int_t)limit));
	int rc = pool_cmd_call(ctx, "jobs", &o, req, &resp);
	if (rc)
		return rc;
	if (slurm_job) /* one job, shown as a list of one */
		json_object_set_new(resp, "jobs", json_pack("[o]", json_incref(json_object_get(resp, "job"))));
	json_object_del(resp, "job");
	if (o.json) {
		rc = pool_cmd_print_json(ctx, resp);
		json_decref(resp);
		return rc;
	}
	pool_cmd_banner(ctx, resp);
	struct table *t = table_new(13);
	const char *heads[] = { "ID", "USER", "NAME", "STATE", "EXIT", "STARTED", "ELAPSED", "GPUS", "GPU-S",
				"ENERGY", "UTIL AVG/PEAK", "MEM PEAK", "SM/TENSOR/DRAM" };
	for (unsigned c = 0; c < 13; c++)
		table_col(t, c, heads[c], c == 0 || c == 4 || c >= 8 ? TABLE_RIGHT : TABLE_LEFT);
	size_t i;
	json_t *j;
	json_array_foreach(json_object_get(resp, "jobs"), i, j) {
		char started[32], elapsed[32], gpus[128];
		uint64_t s = pool_json_u64(j, "start_ns"), e = pool_json_u64(j, "end_ns");
		pool_fmt_time(s, started, sizeof(started));
		pool_fmt_duration(s && e > s ? e - s : 0, elapsed, sizeof(elapsed));
		pool_fmt_gpus(j, gpus, sizeof(gpus));
		struct totals tt;
		sum_acct(json_object_get(j, "accounting"), &tt);
		table_row(t);
		table_cellf(t, "%llu", (unsigned long long)pool_json_u64(j, "id"));
		table_cell(t, json_string_value(json_object_get(j, "user")));
		const char *name = json_string_value(json_object_get(j, "name"));
		table_cell(t, name && name[0] ? name : "-");
		table_cell(t, json_string_value(json_object_get(j, "state")));
		if (json_object_get(j, "exit_signal"))
			table_cellf(t, "sig %lld", (long long)json_integer_value(json_object_get(j, "exit_signal")));
		else if (json_object_get(j, "exit_code"))
			table_cellf(t, "%lld", (long long)json_integer_value(json_object_get(j, "exit_code")));
		else
			table_cell(t, "-");
		table_cell(t, started);
		table_cell(t, elapsed);
		table_cell(t, gpus);
		if (tt.n)
			table_cellf(t, "%.1f s", tt.gpu_s);
		else
			table_cell(t, "-");
		if (tt.energy_ok)
			table_cellf(t, "%.1f J", tt.energy_j);
		else
			table_cell(t, tt.n ? "n/a" : "-");
		if (tt.util_ok)
			table_cellf(t, "%.0f %% / %.0f %%", tt.util_avg, tt.util_peak);
		else
			table_cell(t, tt.n ? "n/a" : "-");
		if (tt.mem_ok)
			table_cellf(t, "%.2f GiB", tt.mem_peak / (1024.0 * 1024 * 1024));
		else
			table_cell(t, tt.n ? "n/a" : "-");
		char gpm[3][16];
		for (unsigned m = 0; m < 3; m++)
			if (tt.gpm_ok[m])
				snprintf(gpm[m], sizeof(gpm[m]), "%.0f", tt.gpm[m]);
			else
				snprintf(gpm[m], sizeof(gpm[m]), "n/a");
		if (tt.n)
			table_cellf(t, "%s/%s/%s %%", gpm[0], gpm[1], gpm[2]);
		else
			table_cell(t, "-");
	}
	table_print(t, ctx->out);
	table_free(t);
	json_decref(resp);
	return EXIT_OK;
}
