/* SPDX-License-Identifier: Apache-2.0 */
/*
 * suite_train.c - `bench -s train`: the GPT-2 training step of the kernels
 * module (issue 16) on the first selected GPU, one result per precision.
 * Each result is verified twice before its time counts: the tiny model's loss
 * and every gradient against the CPU reference in that precision
 * (ktrain_run_check), and the real model's loss falling over the timed run
 * on a repeated batch (ktrain_run). The figure is achieved TFLOP/s (so the
 * datasheet ratio is the MFU); tokens/s, step time, memory, the losses, the
 * share of this run's measured GEMM peak and energy per token are its aux.
 * With several GPUs selected, one more BF16 row runs data parallel over all
 * of them (variant "bf16-dpN"; aux scaling_pct against N times the one-GPU
 * BF16 row).
 */
#include "suite_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels_host/cpu_ref.h"
#include "kernels_host/train_ref.h"

static double aux_of(const struct gk_result *g, const char *name)
{
	for (int i = 0; i < g->naux && i < GK_MAX_AUX; i++)
		if (strcmp(g->aux[i].name, name) == 0)
			return g->aux[i].value;
	return NAN;
}

/* ndevs 0: one GPU; else data parallel over the first ndevs selected GPUs */
static void train_one(struct bench_ctx *c, const char *model, int prec, unsigned ndevs)
{
	int slot = 0;
	char variant[16];
	if (ndevs)
		snprintf(variant, sizeof(variant), "%s-dp%u", kmod_prec_name(prec), ndevs);
	else
		snprintf(variant, sizeof(variant), "%s", kmod_prec_name(prec));
	struct bench_result *r = bench_start(c, "train", model, variant, slot);
	if (!r)
		return;
	struct ktrain_opts o;
	ktrain_opts_default(&o);
	ktrain_preset(model, &o.m);
	o.prec = prec;
	o.grad_accum = c->plan->grad_accum > 0 ? c->plan->grad_accum : 1;
	o.ndevs = (int)ndevs;
	for (unsigned i = 0; i < ndevs; i++)
		o.devs[i] = c->plan->cuda[i];
	if (ndevs)
		r->ngpus = (int)ndevs;
	struct gk_common com = bench_common(c, slot);
	struct gk_result g;
	int rc = ktrain_run_check(c->api, &com, prec, &g);
	double grad_err = g.verify.max_err;
	if (rc == GK_OK) {
		float losses[GK_MAX_SAMPLES + 16];
		if (com.warmup > 16)
			com.warmup = 16;
		rc = ktrain_run(c->api, &com, &o, &g, losses, GK_MAX_SAMPLES + 16);
		double ms = 0;
		struct stats st;
		if (stats_compute(g.samples_ms, (size_t)(g.nsamples > 0 ? g.nsamples : 0), &st) == 0)
			ms = st.median;
		double tokens = aux_of(&g, "tokens"), mem = aux_of(&g, "mem_gib");
		double first = aux_of(&g, "loss_first"), last = aux_of(&g, "loss_last");
		g.naux = 0; /* the figures the row keeps, in this order */
		kref_aux(&g, "tokens_per_s", ms > 0 ? tokens / (ms * 1e-3) : NAN, "tok/s");
		kref_aux(&g, "step_ms", ms, "ms");
		kref_aux(&g, "mem_gib", mem, "GiB");
		kref_aux(&g, "loss_first", first, "nats");
		kref_aux(&g, "loss_last", last, "nats");
		kref_aux(&g, "grad_err", grad_err, "ratio");
		double tflops = ms > 0 ? g.flops / (ms * 1e-3) / 1e12 : NAN;
		/* the share of this run's own GEMM peak in the same precision, when the compute suite
		 * ran; data parallel: the share of ndevs times the one-GPU row (scaling efficiency) */
		const struct bench_result *base = ndevs ? bench_run_find(c->run, "train", model, kmod_prec_name(prec), r->gpu, UINT64_MAX)
						: bench_run_find(c->run, "compute", "cublas", kmod_prec_name(prec), r->gpu, UINT64_MAX);
		if (base && (base->status == BS_OK || base->status == BS_LOW) && base->value.median > 0)
			kref_aux(&g, ndevs ? "scaling_pct" : "gemm_peak_pct",
				 100.0 * tflops / ((ndevs ? ndevs : 1) * base->value.median), "%");
		r->m = (unsigned)o.batch;
		r->n = (unsigned)o.seq;
		r->k = (unsigned)o.grad_accum;
	}
	bench_finish(c, r, rc, &g, BM_TFLOPS, NAN, &slot, 1);
	/* energy per token from the test's flops per joule (telemetry) */
	double tokens_per_step = (double)o.batch * o.seq * o.grad_accum;
	if (rc == GK_OK && r->gflops_per_watt > 0 && tokens_per_step > 0)
		bench_result_add_aux(r, "mj_per_token", g.flops / tokens_per_step / (r->gflops_per_watt * 1e9) * 1e3, "mJ");
}

void bench_suite_train(struct bench_ctx *c)
{
	const char *model = c->plan->train_model[0] ? c->plan->train_model : "124M";
	/* BF16 first: the mixed-precision step is the figure operators ask for; FP32 and
	 * TF32 of the same model and batch give the speed-up (claim C3) */
	static const int precs[] = { GK_BF16, GK_TF32, GK_FP32 };
	for (int i = 0; i < 3 && !c->oom; i++)
		train_one(c, model, precs[i], 0);
	if (c->plan->ngpus > 1 && !c->oom)
		train_one(c, model, GK_BF16, c->plan->ngpus);
	if (c->plan->full && !c->plan->train_model[0]) {
		train_one(c, "350M", GK_BF16, 0);
		train_one(c, "774M", GK_BF16, 0);
	}
}
