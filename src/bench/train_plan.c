/* SPDX-License-Identifier: Apache-2.0 */
/* train_plan.c - see train_plan.h. */
#include "train_plan.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/table.h"
#include "kernels_host/train_ref.h"

/* The start of the message the memory rule leaves on a row (so a later call can tell it apart). */
#define RULE_MSG "the planner's memory"

int train_plan_config(const struct bench_result *r, struct plan_model *m, struct plan_train *t)
{
	struct gk_train_cfg c;
	if (strcmp(r->suite, "train") != 0 || ktrain_preset(r->test, &c) != 0)
		return -1;
	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "gpt2 %s", r->test);
	m->has_arch = true;
	m->layers = (unsigned)c.layers;
	m->hidden = (unsigned)c.channels;
	m->heads = m->kv_heads = (unsigned)c.heads;
	m->vocab = (unsigned)c.vocab; /* the planner pads wte as the step does */
	m->ffn = 4 * m->hidden;
	m->max_pos = (unsigned)c.max_seq;
	m->tied_embeddings = m->bias = m->layernorm = true;
	plan_train_defaults(t);
	t->fw = TRAIN_PLAN_FRAMEWORK;
	size_t plen = strcspn(r->variant, "-");
	if (plen == 4 && strncmp(r->variant, "bf16", 4) == 0)
		t->prec = PREC_BF16;
	else if (plen == 4 && (strncmp(r->variant, "fp32", 4) == 0 || strncmp(r->variant, "tf32", 4) == 0))
		t->prec = PREC_FP32;
	else
		return -1;
	if (r->variant[plen]) { /* "-dpN": data parallel over N GPUs */
		char *end;
		unsigned long n = strncmp(r->variant + plen, "-dp", 3) == 0 ? strtoul(r->variant + plen + 3, &end, 10) : 0;
		if (n < 1 || n > BENCH_MAX_GPUS || *end)
			return -1;
		t->dp = (unsigned)n;
	}
	t->micro_batch = r->m ? r->m : 16;
	t->seq = r->n ? r->n : 1024;
	t->grad_accum = r->k ? r->k : 1;
	return 0;
}

double train_plan_step_tflops(const struct bench_result *r)
{
	struct plan_model m;
	struct plan_train t;
	double tps = bench_result_aux(r, "tokens_per_s");
	if (train_plan_config(r, &m, &t) != 0 || !(tps > 0))
		return NAN;
	return tps * plan_train_flops(&m, &t, 1.0) / 1e12;
}

/* The GEMM row that measures the tensor peak of a planner precision. */
static const struct { enum plan_prec prec; const char *test, *variant; } gemm_rows[] = {
	{ PREC_FP32, "cublas", "fp32" }, { PREC_BF16, "cublas", "bf16" }, { PREC_FP16, "cublas", "fp16" },
	{ PREC_FP8, "cublaslt", "fp8_e4m3" },
};

static bool measured(const struct bench_result *r)
{
	return r && (r->status == BS_OK || r->status == BS_LOW);
}

void train_plan_rates(const struct bench_run *run, enum plan_framework fw, enum plan_prec prec,
		      const struct plan_model *m, struct train_plan_rates *o)
{
	o->gemm_tflops = o->step_tflops = NAN;
	o->step_row[0] = o->why_no_step[0] = '\0';
	for (size_t i = 0; i < sizeof(gemm_rows) / sizeof(gemm_rows[0]); i++) {
		if (gemm_rows[i].prec != prec)
			continue;
		const struct bench_result *g = bench_run_find(run, "compute", gemm_rows[i].test, gemm_rows[i].variant, -2, UINT64_MAX);
		if (!measured(g))
			g = bench_run_find(run, "sustained", "gemm", gemm_rows[i].variant, -2, UINT64_MAX);
		if (measured(g))
			o->gemm_tflops = g->value.median;
	}
	/* the train rows are gpuctl's own step, in bf16 and fp32 (tf32 is not a planner precision) */
	const char *variant = prec == PREC_BF16 ? "bf16" : prec == PREC_FP32 ? "fp32" : NULL;
	const struct bench_result *row = NULL;
	bool any = false;
	for (size_t i = 0; variant && i < run->n; i++) {
		const struct bench_result *r = &run->r[i];
		struct plan_model rm;
		struct plan_train rt;
		if (strcmp(r->suite, "train") || strcmp(r->variant, variant) || !measured(r) ||
		    train_plan_config(r, &rm, &rt) != 0)
			continue;
		any = true;
		bool same = m && rm.layers == m->layers && rm.hidden == m->hidden && rm.heads == m->heads;
		if (!row || same)
			row = r;
		if (same)
			break;
	}
	if (!variant)
		snprintf(o->why_no_step, sizeof(o->why_no_step), "bench -s train measures bf16 and fp32 steps, not %s",
			 plan_prec_name(prec));
	else if (!any)
		snprintf(o->why_no_step, sizeof(o->why_no_step), "no measured train %s row", variant);
	else if (fw != TRAIN_PLAN_FRAMEWORK)
		snprintf(o->why_no_step, sizeof(o->why_no_step), "the train rows measure gpuctl's own step, not %s "
			 "(use --framework gpuctl)", plan_framework_name(fw));
	if (!row || o->why_no_step[0])
		return;
	o->step_tflops = train_plan_step_tflops(row);
	snprintf(o->step_row, sizeof(o->step_row), "train %s %s", row->test, row->variant);
}

int train_plan_predict(const struct bench_result *r, double peak_tflops, struct train_plan_pred *p)
{
	struct plan_model m;
	struct plan_train t;
	struct plan_mem mem;
	char err[256];
	p->mem_gib = p->mem_diff_pct = p->step_ms = p->step_diff_pct = NAN;
	if (train_plan_config(r, &m, &t) != 0 || plan_train_memory(&m, &t, &mem, err, sizeof(err)) != 0)
		return -1;
	double measured_gib = bench_result_aux(r, "mem_gib"), measured_ms = bench_result_aux(r, "step_ms");
	p->mem_gib = mem.peak / (1024.0 * 1024 * 1024);
	if (measured_gib > 0)
		p->mem_diff_pct = 100.0 * (p->mem_gib - measured_gib) / measured_gib;
	/* one GPU's share of a step: its own micro-batches at the planner's rate for the
	 * precision (catalog, calibrated on H200 runs: steptime.c) */
	double tokens = (double)t.micro_batch * t.seq * t.grad_accum;
	char prec[8];
	snprintf(prec, sizeof(prec), "%.*s", (int)strcspn(r->variant, "-"), r->variant);
	struct plan_rate_in in = { .fw = t.fw, .prec = prec, .datasheet_tflops = peak_tflops, .gemm_tflops = NAN,
				   .step_tflops = NAN, .mfu = NAN };
	struct plan_rate rate;
	if (plan_train_rate(&in, &rate) == 0)
		p->step_ms = 1e3 * plan_train_seconds(&m, &t, tokens, 1, rate.peak_tflops, rate.mfu);
	if (measured_ms > 0 && isfinite(p->step_ms))
		p->step_diff_pct = 100.0 * (p->step_ms - measured_ms) / measured_ms;
	return 0;
}

static void aux_set(struct bench_result *r, const char *name, double value, const char *unit)
{
	for (unsigned i = 0; i < r->naux; i++)
		if (strcmp(r->aux[i].name, name) == 0) {
			r->aux[i].value = value;
			return;
		}
	bench_result_add_aux(r, name, value, unit);
}

bool train_plan_apply(struct bench_result *r)
{
	struct train_plan_pred p;
	if ((r->status != BS_OK && r->status != BS_LOW) ||
	    train_plan_predict(r, isfinite(r->limit) ? r->limit : NAN, &p) != 0)
		return false;
	aux_set(r, "plan_mem_gib", p.mem_gib, "GiB");
	aux_set(r, "plan_mem_diff_pct", p.mem_diff_pct, "%");
	aux_set(r, "plan_step_ms", p.step_ms, "ms");
	aux_set(r, "plan_step_diff_pct", p.step_diff_pct, "%");
	if (strncmp(r->message, RULE_MSG, strlen(RULE_MSG)) == 0)
		r->message[0] = '\0'; /* an earlier call's verdict */
	if (!(fabs(p.mem_diff_pct) > TRAIN_PLAN_MEM_TOL_PCT))
		return false;
	r->status = BS_LOW;
	snprintf(r->message, sizeof(r->message), RULE_MSG " (plan train --framework gpuctl, %.2f GiB) differs from the "
		 "measured %.2f GiB by %+.1f%% (more than %.0f%%)", p.mem_gib, bench_result_aux(r, "mem_gib"), p.mem_diff_pct,
		 TRAIN_PLAN_MEM_TOL_PCT);
	return true;
}

unsigned train_plan_rows(const struct bench_run *run, const struct bench_result **out, unsigned max)
{
	unsigned n = 0;
	for (size_t i = 0; run && i < run->n && n < max; i++)
		if (strcmp(run->r[i].suite, "train") == 0)
			out[n++] = &run->r[i];
	return n;
}

const char *const train_plan_headers[TRAIN_PLAN_COLS] = {
	"training step", "tokens/s", "step", "planner step", "memory", "planner memory", "MFU", "status",
};

void train_plan_legend(char *out, size_t len)
{
	char note[96];
	const struct plan_step_calib *b = plan_step_calibration(TRAIN_PLAN_FRAMEWORK, "bf16", note, sizeof(note)),
				     *t = plan_step_calibration(TRAIN_PLAN_FRAMEWORK, "tf32", note, sizeof(note)),
				     *f = plan_step_calibration(TRAIN_PLAN_FRAMEWORK, "fp32", note, sizeof(note));
	snprintf(out, len, "planner: gpuctl plan train --framework gpuctl for the same model and batch; its step from "
		 "the catalog, calibrated on H200 runs (MFU %.3f bf16, %.3f tf32, %.3f fp32 of the datasheet), its memory "
		 "must agree within %.0f%%", b->of_datasheet, t->of_datasheet, f->of_datasheet, TRAIN_PLAN_MEM_TOL_PCT);
}

static void with_diff(char *cell, double v, const char *unit, double diff_pct)
{
	if (!isfinite(v))
		snprintf(cell, TRAIN_PLAN_CELL, "n/a");
	else if (isfinite(diff_pct))
		snprintf(cell, TRAIN_PLAN_CELL, "%.2f %s (%+.1f%%)", v, unit, diff_pct);
	else
		snprintf(cell, TRAIN_PLAN_CELL, "%.2f %s", v, unit);
}

void train_plan_row(const struct bench_result *r, char c[TRAIN_PLAN_COLS][TRAIN_PLAN_CELL])
{
	char accum[24] = "";
	if (r->k > 1)
		snprintf(accum, sizeof(accum), ", accum %u", r->k);
	snprintf(c[0], TRAIN_PLAN_CELL, "%s %s, %u x %u%s", r->test, r->variant, r->m, r->n, accum);
	for (int k = 1; k < TRAIN_PLAN_COLS; k++)
		c[k][0] = '\0';
	if (r->status != BS_OK && r->status != BS_LOW) {
		snprintf(c[7], TRAIN_PLAN_CELL, "%s: %.80s", bench_status_name(r->status), r->message);
		return;
	}
	snprintf(c[1], TRAIN_PLAN_CELL, "%.0f", bench_result_aux(r, "tokens_per_s"));
	with_diff(c[2], bench_result_aux(r, "step_ms"), "ms", NAN);
	with_diff(c[3], bench_result_aux(r, "plan_step_ms"), "ms", bench_result_aux(r, "plan_step_diff_pct"));
	with_diff(c[4], bench_result_aux(r, "mem_gib"), "GiB", NAN);
	with_diff(c[5], bench_result_aux(r, "plan_mem_gib"), "GiB", bench_result_aux(r, "plan_mem_diff_pct"));
	double gemm = bench_result_aux(r, "gemm_peak_pct"), scaling = bench_result_aux(r, "scaling_pct");
	if (isfinite(scaling))
		snprintf(c[6], TRAIN_PLAN_CELL, "scaling %.0f%% of %d x 1 GPU", scaling, r->ngpus);
	else if (isfinite(r->ratio))
		snprintf(c[6], TRAIN_PLAN_CELL, isfinite(gemm) ? "%.2f (%.0f%% of its GEMM)" : "%.2f", r->ratio, gemm);
	else
		snprintf(c[6], TRAIN_PLAN_CELL, "n/a");
	if (r->status == BS_LOW)
		snprintf(c[7], TRAIN_PLAN_CELL, "LOW: %.88s", r->message[0] ? r->message : "under its threshold");
	else
		snprintf(c[7], TRAIN_PLAN_CELL, "ok");
}

void bench_print_train(const struct bench_run *run, FILE *out)
{
	const struct bench_result *rows[64];
	unsigned n = train_plan_rows(run, rows, 64);
	struct table *t = n ? table_new(TRAIN_PLAN_COLS) : NULL;
	if (!t)
		return;
	for (unsigned c = 0; c < TRAIN_PLAN_COLS; c++)
		table_col(t, c, train_plan_headers[c], c >= 1 && c <= 5 ? TABLE_RIGHT : TABLE_LEFT);
	char cells[TRAIN_PLAN_COLS][TRAIN_PLAN_CELL];
	for (unsigned i = 0; i < n; i++) {
		train_plan_row(rows[i], cells);
		table_row(t);
		for (unsigned c = 0; c < TRAIN_PLAN_COLS; c++)
			table_cell(t, cells[c]);
	}
	fprintf(out, "\ntraining steps (GPT-2, micro-batch x sequence; MFU against the datasheet):\n");
	table_print(t, out);
	char legend[384];
	train_plan_legend(legend, sizeof(legend));
	fprintf(out, "%s\n", legend);
	table_free(t);
}
