// SPDX-License-Identifier: Apache-2.0
/* report_build.c - assembling the report (bench/report.h): the planning rows
 * from the planner, the inventory a results file recorded. The command
 * (cmd/report.c) reads the GPUs and the files. */
#include "report.h"

#include <math.h>
#include <stdio.h>

#include "plan/plan.h"

void report_plan_rows(struct report *rep, const struct plan_presets *pre, const struct cat_gpu *g)
{
	static const char *const models[] = { "gpt2-xl", "llama-3-8b", "llama-2-13b", "mixtral-8x7b", "llama-3-70b" };
	char err[256];
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]) && rep->nplan < REPORT_MAX_PLAN; i++) {
		const struct plan_model *m = plan_presets_find(pre, models[i]);
		if (!m)
			continue;
		struct report_plan_row *row = &rep->plan[rep->nplan];
		struct plan_train t;
		struct plan_mem mem;
		struct plan_serve sv;
		struct plan_serve_result sr;
		snprintf(row->model, sizeof(row->model), "%s", m->name);
		row->params = plan_model_params(m);
		plan_train_defaults(&t);
		row->train1_bytes = plan_train_memory(m, &t, &mem, err, sizeof(err)) == 0 ? mem.total : NAN;
		t.fw = FW_DEEPSPEED;
		t.zero = 3;
		t.dp = rep->n;
		row->trainn_bytes = plan_train_memory(m, &t, &mem, err, sizeof(err)) == 0 ? mem.total : NAN;
		plan_serve_defaults(&sv);
		sv.tp = rep->n;
		sv.batch = 1; /* what one sequence needs; plan_serve_fit counts how many fit */
		row->serve_bytes = NAN;
		struct plan_serve_fit fit;
		if (g && plan_serve_compute(m, &sv, g, rep->plan_mem_bytes, 0, &sr, err, sizeof(err)) == 0 &&
		    plan_serve_fit(m, &sv, g, rep->plan_mem_bytes, &fit, err, sizeof(err)) == 0) {
			row->serve_bytes = sr.total;
			row->serve_fits = fit.fits;
			plan_serve_fit_text(&fit, &sv, row->serve_fit, sizeof(row->serve_fit));
		}
		rep->nplan++;
	}
}

static void set_strv(strv *v, const char *s)
{
	if (!s[0])
		return; /* not recorded: stays unknown */
	snprintf(v->s, sizeof(v->s), "%s", s);
	v->st = VAL_OK;
}

void report_recorded_inventory(struct report *rep, const struct bench_run *run, const char *path,
			       const struct catalog *cat, struct gpu_static st[GPU_MAX_GPUS],
			       const struct cat_gpu *cat_for[GPU_MAX_GPUS])
{
	snprintf(rep->sys.backend, sizeof(rep->sys.backend), "results");
	snprintf(rep->sys.server_name, sizeof(rep->sys.server_name), "%s", run->host[0] ? run->host : "unknown host");
	set_strv(&rep->sys.hostname, run->host);
	set_strv(&rep->sys.driver_version, run->driver_version);
	set_strv(&rep->sys.cuda_driver_version, run->cuda_version);
	rep->n = run->ngpus > GPU_MAX_GPUS ? GPU_MAX_GPUS : run->ngpus;
	rep->sys.gpu_count = rep->n;
	for (unsigned i = 0; i < rep->n; i++) {
		const struct bench_gpu_info *g = &run->gpu[i];
		struct gpu_static *g_st = &st[i];
		g_st->index = g->index >= 0 ? (unsigned)g->index : i;
		set_strv(&g_st->name, g->name);
		set_strv(&g_st->uuid, g->uuid);
		set_strv(&g_st->pci_bus_id, g->pci_bus_id);
		cat_for[i] = g->catalog_model[0] ? catalog_find(cat, g->catalog_model) : catalog_match(cat, g->name, 0);
		if (cat_for[i] && cat_for[i]->mem_bytes)
			VAL_SET(g_st->mem_total_bytes, cat_for[i]->mem_bytes);
	}
	rep->st = st;
	rep->cat = cat_for;
	rep->link = NULL;
	snprintf(rep->inventory_source, sizeof(rep->inventory_source), "results file '%.100s' (host %.40s, %.32s)",
		 path, run->host[0] ? run->host : "unknown", run->started_utc[0] ? run->started_utc : "time unknown");
	snprintf(rep->health_note, sizeof(rep->health_note),
		 "the results file holds no health data; run gpuctl health on the server (or report --results FILE --live there)");
}
