/* SPDX-License-Identifier: Apache-2.0 */
/* report_text.c - the report in the terminal (see report.h). */
#include "report.h"
#include "train_plan.h"

#include <math.h>
#include <string.h>

#include "core/table.h"

static void print_rows(FILE *out, unsigned ncols, const char *const *hdr, unsigned nrows,
		       void (*row)(const void *ctx, unsigned i, char cells[][REPORT_CELL]), const void *ctx)
{
	struct table *t = table_new(ncols);
	if (!t)
		return;
	for (unsigned c = 0; c < ncols; c++)
		table_col(t, c, hdr[c], TABLE_LEFT);
	char cells[16][REPORT_CELL];
	for (unsigned i = 0; i < nrows; i++) {
		row(ctx, i, cells);
		table_row(t);
		for (unsigned c = 0; c < ncols; c++)
			table_cell(t, cells[c]);
	}
	table_print(t, out);
	table_free(t);
}

static void inv_row(const void *ctx, unsigned i, char c[][REPORT_CELL]) { report_inventory_row(ctx, i, c); }

static void train_row(const void *ctx, unsigned i, char c[][REPORT_CELL])
{
	_Static_assert(TRAIN_PLAN_CELL == REPORT_CELL, "train rows are report cells");
	train_plan_row(((const struct bench_result *const *)ctx)[i], c);
}

struct hl_ctx { const struct report_highlight *h; };
static void hl_row(const void *ctx, unsigned i, char c[][REPORT_CELL])
{
	report_highlight_row(&((const struct hl_ctx *)ctx)->h[i], c);
}

struct ds_ctx { const struct cat_gpu *const *g; };
static void ds_row(const void *ctx, unsigned i, char c[][REPORT_CELL])
{
	report_datasheet_row(((const struct ds_ctx *)ctx)->g[i], c);
}

static void plan_row(const void *ctx, unsigned i, char c[][REPORT_CELL])
{
	const struct report *rep = ctx;
	report_plan_row(rep, &rep->plan[i], c);
}

static void claim_row(const void *ctx, unsigned i, char c[][REPORT_CELL])
{
	report_claim_row(&((const struct claim_eval *)ctx)[i], c);
}

static void print_topology(const struct report *rep, FILE *out)
{
	fprintf(out, "\n== Topology ==\n");
	if (!rep->link) {
		fprintf(out, "not read\n");
		return;
	}
	fprintf(out, "      ");
	for (unsigned j = 0; j < rep->n; j++)
		fprintf(out, " GPU%-3u", j);
	fputc('\n', out);
	for (unsigned i = 0; i < rep->n; i++) {
		fprintf(out, "GPU%-3u", i);
		for (unsigned j = 0; j < rep->n; j++) {
			const struct gpu_link *l = &rep->link[i][j];
			char cell[16];
			if (i == j)
				snprintf(cell, sizeof(cell), "X");
			else if (l->kind == LINK_NVLINK)
				snprintf(cell, sizeof(cell), "NV%u", l->nvlinks);
			else
				snprintf(cell, sizeof(cell), "%s", gpu_link_kind_name(l->kind));
			fprintf(out, " %-6s", cell);
		}
		fputc('\n', out);
	}
}

static void print_health(const struct report *rep, FILE *out)
{
	fprintf(out, "\n== Health ==\n");
	if (!rep->health) {
		text_line(out, "not evaluated: %s", rep->health_note[0] ? rep->health_note : "no health data");
		return;
	}
	const struct health_report *h = rep->health;
	fprintf(out, "server: %s (action: %s)\n", health_verdict_name(h->verdict), health_action_text(h->action));
	for (unsigned i = 0; i < h->n; i++) {
		const struct health_entity *e = &h->gpu[i];
		char line[1024];
		size_t at = (size_t)snprintf(line, sizeof(line), "GPU %d: %s", e->index,
					     health_verdict_name(health_gpu_verdict(h, i)));
		for (unsigned k = 0; k < e->nfind && k < 3 && at < sizeof(line); k++)
			if (e->find[k].verdict >= HEALTH_WARN)
				at += (size_t)snprintf(line + at, sizeof(line) - at, "%s %s (%s)", k ? ";" : " -",
						       e->find[k].reason, e->find[k].evidence);
		/* reasons from a site's rules file, evidence naming a process: one clean line */
		text_line(out, "%s", line);
	}
	for (unsigned k = 0; k < h->system.nfind; k++)
		if (h->system.find[k].verdict >= HEALTH_WARN)
			text_line(out, "system: %s %s (%s)", health_verdict_name(h->system.find[k].verdict),
				  h->system.find[k].reason, h->system.find[k].evidence);
}

void report_print_text(const struct report *rep, FILE *out)
{
	text_line(out, "gpuctl report: %s, %u GPU%s, driver %s, generated %s", rep->sys.server_name, rep->n,
		  rep->n == 1 ? "" : "s", VAL_HAS(rep->sys.driver_version) ? rep->sys.driver_version.s : "n/a",
		  rep->generated_utc);
	fprintf(out, "\n== Inventory%s ==\n", rep->simulated ? " (SIMULATED)" : "");
	if (rep->inventory_source[0])
		text_line(out, "as recorded in %s", rep->inventory_source);
	print_rows(out, REPORT_INV_COLS, report_inventory_headers, rep->n, inv_row, rep);
	print_topology(rep, out);
	print_health(rep, out);

	const struct cat_gpu *models[8];
	unsigned nm = report_models(rep, models, 8);
	fprintf(out, "\n== Datasheet (what to plan with; dense TFLOP/s) ==\n");
	if (nm) {
		struct ds_ctx dc = { models };
		print_rows(out, REPORT_DS_COLS, report_datasheet_headers, nm, ds_row, &dc);
	} else {
		fprintf(out, "no GPU of this server is in the catalog\n");
	}

	fprintf(out, "\n== Planning (gpuctl plan; %u GPU%s of %.1f GB) ==\n", rep->plan_gpus, rep->plan_gpus == 1 ? "" : "s",
		rep->plan_mem_bytes / 1e9);
	if (rep->nplan)
		print_rows(out, REPORT_PLAN_COLS, report_plan_headers, rep->nplan, plan_row, rep);
	else
		text_line(out, "%s", rep->plan_note[0] ? rep->plan_note : "no planning figures");

	fprintf(out, "\n== Benchmark ==\n");
	if (!rep->bench) {
		text_line(out, "no benchmark figures: %s", rep->bench_note);
	} else {
		const struct bench_run *b = rep->bench;
		/* a results file's text (host, note) is anyone's */
		text_line(out, "from %s: host %s, %s, %s run, %zu results", rep->bench_source, b->host[0] ? b->host : "?",
			  b->started_utc[0] ? b->started_utc : "time unknown", b->mode[0] ? b->mode : "?", b->n);
		if (b->note[0])
			text_line(out, "note: %s", b->note);
		if (rep->bench_note[0])
			text_line(out, "%s", rep->bench_note);
		struct report_highlight hl[REPORT_MAX_HIGHLIGHTS];
		unsigned nh = report_highlights(b, hl, REPORT_MAX_HIGHLIGHTS);
		struct hl_ctx hc = { hl };
		print_rows(out, REPORT_HL_COLS, report_highlight_headers, nh, hl_row, &hc);
		const struct bench_result *train[64];
		unsigned nt = train_plan_rows(b, train, 64);
		if (nt) {
			char legend[384];
			train_plan_legend(legend, sizeof(legend));
			fprintf(out, "training steps (GPT-2, micro-batch x sequence; MFU against the datasheet):\n");
			print_rows(out, TRAIN_PLAN_COLS, train_plan_headers, nt, train_row, train);
			fprintf(out, "%s\n", legend);
		}
		static struct report_series lat[8];
		unsigned nl = report_latency_series(b, lat, 8);
		for (unsigned i = 0; i < nl; i++) {
			char steps[512];
			report_latency_steps_text(&lat[i], steps, sizeof(steps));
			text_line(out, "%s plateaus: %s", lat[i].name, steps);
		}
		fprintf(out, "every result: gpuctl bench --results FILE\n");
	}

	if (rep->claims && rep->evals) {
		fprintf(out, "\n== The guide's claims ==\n");
		print_rows(out, REPORT_CLAIM_COLS, report_claim_headers, rep->claims->n, claim_row, rep->evals);
	}
}
