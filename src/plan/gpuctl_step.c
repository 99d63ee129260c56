/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpuctl_step.c - the memory of gpuctl's own GPT-2 training step (`bench -s
 * train`, kernels/gk_train.cu), for `plan train --framework gpuctl`. The step
 * allocates everything once before its first step, so the model is its
 * allocation list (gk_train.cu's carve()), term by term; on one H200 it
 * matched what the runs allocated to 0.01% (bench/RESULTS.md).
 */
#include "plan.h"

#include <stdio.h>

#define GPUCTL_LT_WORKSPACE (32.0 * 1048576) /* gk_train_blas.cu's cuBLASLt workspace */

static void term(struct plan_mem *o, const char *name, double bytes, const char *formula)
{
	if (o->nterms >= PLAN_TERMS_MAX)
		return;
	struct plan_term *p = &o->terms[o->nterms++];
	p->name = name;
	snprintf(p->formula, sizeof(p->formula), "%s", formula);
	p->evidence = "kernels/gk_train.cu carve(), allocation by allocation";
	p->bytes = bytes;
}

void plan_gpuctl_train_memory(const struct plan_model *m, const struct plan_train *t, struct plan_mem *o)
{
	double E = t->prec == PREC_FP32 ? 4 : 2; /* activations and the weights the forward reads */
	double C = m->hidden, L = m->layers, S = t->seq, B = t->micro_batch, N = B * S;
	double Vp = (double)((m->vocab + 127) / 128 * 128); /* wte padded for the GEMMs (50257 -> 50304) */
	double P = Vp * C + m->max_pos * C + L * (12 * C * C + 13 * C) + 2 * C;
	double att = B * m->heads * S * S; /* one layer's softmax output */
	o->activations_known = true;
	o->weights = 4 * P + (E == 2 ? 2 * P : 0); /* FP32 master (+ the BF16 copy) */
	o->grads = 4 * P;                          /* FP32, summed over the micro-batches */
	o->optimizer = 8 * P;                      /* AdamW m and v, FP32 */
	/* every layer keeps 16 N C values (residuals, norms, qkv, attention out, MLP in and out)
	 * and its softmax; LayerNorm statistics in FP32; the final residual and norm */
	o->activations = L * (16 * N * C * E + att * E + 4 * N * 4) + 2 * N * C * E + 2 * N * 4;
	o->loss = N * Vp * E; /* the logits, overwritten by their gradient */
	/* scratch shared by the layers: heads (q, k, v, y), scores, the backward's buffers; tokens */
	o->transient = (13 * N * C + att) * E + 2 * N * t->grad_accum * 4;
	o->workspace = GPUCTL_LT_WORKSPACE;
	o->comm = 0;
	o->peak = o->weights + o->grads + o->optimizer + o->activations + o->loss + o->transient + o->workspace;
	o->peak_phase = "allocated before the first step";
	o->peak_parts[PART_WEIGHTS] = o->weights + o->workspace;
	o->peak_parts[PART_GRADS] = o->grads;
	o->peak_parts[PART_OPTIMIZER] = o->optimizer;
	o->peak_parts[PART_ACTIVATIONS] = o->activations + o->transient; /* the scratch with them */
	o->peak_parts[PART_LOGITS] = o->loss;
	plan_mem_set_peak_term(o);
	o->context = t->cuda_context_bytes;
	o->fragmentation = 0; /* one cudaMalloc, no caching allocator */
	o->total = o->peak + o->context;
	char f[192];
	snprintf(f, sizeof(f), "FP32 master 4 B%s x %.6g parameters (wte padded to %.0f rows)", E == 2 ? " + BF16 copy 2 B" : "", P, Vp);
	term(o, "weights", o->weights, f);
	snprintf(f, sizeof(f), "FP32 4 B x %.6g parameters", P);
	term(o, "gradients", o->grads, f);
	snprintf(f, sizeof(f), "AdamW m and v, FP32: 8 B x %.6g parameters", P);
	term(o, "optimizer states", o->optimizer, f);
	snprintf(f, sizeof(f), "%.0f layers x (16 N C + B heads S^2) x %.0f B + LayerNorm statistics; N = %.0f tokens", L, E, N);
	term(o, "activations", o->activations, f);
	snprintf(f, sizeof(f), "logits N x %.0f x %.0f B, overwritten by their gradient", Vp, E);
	term(o, "loss", o->loss, f);
	snprintf(f, sizeof(f), "(13 N C + B heads S^2) x %.0f B + token ids", E);
	term(o, "scratch", o->transient, f);
	term(o, "cuBLASLt workspace", o->workspace, "32 MiB");
}
