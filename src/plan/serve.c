/* SPDX-License-Identifier: Apache-2.0 */
/*
 * serve.c - inference memory and throughput bounds.
 *
 *   KV cache per token = 2 (K and V) x layers x kv_heads x head_dim x bytes
 *     (grouped-query attention shrinks kv_heads; under tensor parallelism each GPU
 *     holds kv_heads/tp heads, at least one: heads are replicated when tp > kv_heads).
 *   Weights: INT8/INT4/FP8 apply to the blocks' linear layers; embeddings, head and
 *     norms stay 16-bit, and INT4 carries one FP16 scale per group of 128 weights
 *     (GPTQ/AWQ layout).
 *   Prefill workspace (engine "chunked", vLLM-style): per prompt token in flight the residual, the norm output and
 *     the MLP's two ffn-wide tensors (three when gated), 16-bit: measured 20 x hidden
 *     bytes per token on GPT-2 (bench/plan_memory.py); plus the last position's logits.
 *   Decode is bound by memory bandwidth: every step reads all weights and the KV
 *     cache of every sequence; tokens/s <= batch x bandwidth / bytes read.
 *   Prefill is bound by compute: 2 x active params + 2 x layers x context x hidden
 *     FLOPs per token (causal attention, half of the full 4 L s h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan.h"

#define WORKSPACE_BYTES (80.0 * 1048576)
#define CUDA_CONTEXT_BYTES (768.0 * 1048576)
#define DEFAULT_PREFILL_CHUNK 8192 /* vLLM's default max_num_batched_tokens with chunked prefill */

void plan_serve_defaults(struct plan_serve *s)
{
	memset(s, 0, sizeof(*s));
	s->wprec = PREC_BF16;
	s->kvprec = PREC_BF16;
	s->tp = 1;
	s->context = 4096;
	s->mem_util = 0.90; /* vLLM's gpu_memory_utilization default */
	s->cuda_context_bytes = CUDA_CONTEXT_BYTES;
}

double plan_kv_bytes_per_token(const struct plan_model *m, enum plan_prec kvprec)
{
	return 2.0 * m->layers * m->kv_heads * plan_model_head_dim(m) * plan_prec_bytes(kvprec);
}

static double weight_bytes(const struct plan_model *m, enum plan_prec p)
{
	double total = plan_model_params(m), wb = plan_prec_bytes(p);
	if (wb >= 2 || !m->has_arch)
		return total * wb + (p == PREC_INT4 ? total * 2 / 128 : 0);
	double vh = (double)m->vocab * m->hidden;
	double blocks_linear = plan_model_matmul_params(m) - vh; /* quantized */
	double rest = total - blocks_linear;
	return blocks_linear * wb + rest * 2 + (p == PREC_INT4 ? blocks_linear * 2 / 128 : 0);
}

int plan_serve_compute(const struct plan_model *m, const struct plan_serve *s, const struct cat_gpu *g,
		       double mem_bytes, double peak_tflops, struct plan_serve_result *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	if (!m->has_arch) {
		snprintf(err, errlen, "serving needs the architecture (layers, hidden, heads, kv-heads, vocab, ffn)");
		return -1;
	}
	if (plan_model_validate(m, err, errlen))
		return -1;
	if (s->tp == 0 || s->context == 0) {
		snprintf(err, errlen, "%s must be positive", s->tp == 0 ? "tp" : "context");
		return -1;
	}
	if (m->heads % s->tp) {
		snprintf(err, errlen, "tp %u does not divide heads %u", s->tp, m->heads);
		return -1;
	}
	if (s->hf_engine && s->tp > 1) {
		snprintf(err, errlen, "engine hf runs on one GPU; use --engine chunked with tp %u", s->tp);
		return -1;
	}
	if (!(s->mem_util > 0 && s->mem_util <= 1)) {
		snprintf(err, errlen, "mem-util must be in (0, 1]");
		return -1;
	}
	if (s->kvprec == PREC_INT4) {
		snprintf(err, errlen, "kv precision int4 is not supported; use bf16, fp16, fp8 or int8");
		return -1;
	}
	double tp = s->tp, h = m->hidden;
	r->weights = weight_bytes(m, s->wprec) / tp;
	r->kv_per_token = plan_kv_bytes_per_token(m, s->kvprec);
	double kv_heads_gpu = m->kv_heads >= s->tp ? (double)m->kv_heads / tp : 1;
	r->kv_per_token_gpu = r->kv_per_token * kv_heads_gpu / m->kv_heads;
	double experts = m->experts ? m->experts_active : 1;
	double whole = (double)s->context * (s->batch ? s->batch : 1);
	double chunk = s->prefill_chunk ? s->prefill_chunk : s->hf_engine ? whole : fmin(DEFAULT_PREFILL_CHUNK, whole);
	double per_tok = 2 * h + (m->gated_mlp ? 3 : 2) * (double)m->ffn * experts / tp;
	double seqs_in_prefill = s->batch ? s->batch : 1;
	if (s->hf_engine) /* transformers generate(): the whole prompt in one forward (hf.c) */
		r->workspace = fmax(plan_hf_prefill_bytes(m, chunk / tp, seqs_in_prefill, s->eager),
				    plan_hf_decode_bytes(m, seqs_in_prefill, s->context));
	else
		r->workspace = chunk * per_tok * 2 + seqs_in_prefill * m->vocab * 6.0 / tp + WORKSPACE_BYTES;
	double usable = mem_bytes * s->mem_util - s->cuda_context_bytes;
	r->kv_budget = usable - r->weights - r->workspace;
	r->max_tokens = r->kv_budget > 0 ? floor(r->kv_budget / r->kv_per_token_gpu) : 0;
	r->max_seqs = (unsigned)fmin(r->max_tokens / s->context, 4e9);
	unsigned batch = s->batch ? s->batch : r->max_seqs;
	r->kv_bytes = (double)batch * s->context * r->kv_per_token_gpu;
	r->peak = r->weights + r->kv_bytes + r->workspace;
	r->total = r->peak + s->cuda_context_bytes;
	if (g && batch) {
		/* one decode step at full context reads the weights and every sequence's cache */
		double bytes = r->weights + r->kv_bytes;
		double step_s = bytes / (g->mem_bw_gbs * 1e9);
		r->decode_tok_s = batch / step_s;
		r->decode_tok_s_seq = 1 / step_s;
	} else {
		r->decode_tok_s = r->decode_tok_s_seq = NAN;
	}
	if (peak_tflops > 0) {
		double flops = 2 * plan_model_active_params(m) + 2.0 * m->layers * s->context * h;
		r->prefill_tok_s = tp * peak_tflops * 1e12 / flops;
	} else {
		r->prefill_tok_s = NAN;
	}
	return 0;
}

/* ---- does it fit? -------------------------------------------------------- */

/* Sequences of s->context that fit beside the weights and the workspace of s->batch (0 also
 * when the configuration is refused: tp not dividing the heads). */
static unsigned seqs_that_fit(const struct plan_model *m, const struct plan_serve *s, const struct cat_gpu *g,
			      double mem_bytes)
{
	struct plan_serve t = *s;
	struct plan_serve_result r;
	char err[160];
	return plan_serve_compute(m, &t, g, mem_bytes, 0, &r, err, sizeof(err)) == 0 ? r.max_seqs : 0;
}

int plan_serve_fit(const struct plan_model *m, const struct plan_serve *s, const struct cat_gpu *g, double mem_bytes,
		   struct plan_serve_fit *f, char *err, size_t errlen)
{
	struct plan_serve_result r;
	memset(f, 0, sizeof(*f));
	f->kv_alt = PREC_COUNT;
	if (plan_serve_compute(m, s, g, mem_bytes, 0, &r, err, errlen) != 0)
		return -1;
	f->want = s->batch ? s->batch : 1;
	f->max_seqs = r.max_seqs;
	f->fits = r.max_seqs >= f->want;
	if (f->fits)
		return 0;
	/* shorter context: the longest at which the sequences asked fit (the workspace and the
	 * KV cache both grow with it, so the search is over a monotone answer) */
	unsigned lo = 0, hi = s->context;
	while (hi - lo > 1) {
		unsigned mid = lo + (hi - lo) / 2;
		struct plan_serve t = *s;
		t.context = mid;
		if (seqs_that_fit(m, &t, g, mem_bytes) >= f->want)
			lo = mid;
		else
			hi = mid;
	}
	f->max_context = lo;
	/* a KV cache of one byte a value (FP8 and INT8 take the same room) */
	if (plan_prec_bytes(s->kvprec) > 1) {
		struct plan_serve t = *s;
		t.kvprec = PREC_FP8;
		unsigned n = seqs_that_fit(m, &t, g, mem_bytes);
		if (n >= f->want) {
			f->kv_alt = PREC_FP8;
			f->kv_alt_seqs = n;
		}
	}
	/* more GPUs: the fewest tensor-parallel GPUs (doubling, at most PLAN_SERVE_MAX_TP) */
	for (unsigned tp = s->tp * 2; !s->hf_engine && tp <= PLAN_SERVE_MAX_TP; tp *= 2) {
		struct plan_serve t = *s;
		t.tp = tp;
		unsigned n = seqs_that_fit(m, &t, g, mem_bytes);
		if (n >= f->want) {
			f->tp_alt = tp;
			f->tp_alt_seqs = n;
			break;
		}
	}
	return 0;
}

void plan_serve_fit_text(const struct plan_serve_fit *f, const struct plan_serve *s, char *out, size_t len)
{
	size_t at = 0;
	int w;
	if (!len)
		return;
	out[0] = '\0';
#define PUT(...)                                                          \
	do {                                                              \
		w = snprintf(out + at, len - at, __VA_ARGS__);            \
		if (w < 0 || (at += (size_t)w) >= len)                    \
			return;                                           \
	} while (0)
	if (f->fits) {
		PUT("fits (%u x %u-token sequences)", f->max_seqs, s->context);
		return;
	}
	if (f->want > 1)
		PUT("does not fit (%u of %u x %u-token sequences)", f->max_seqs, f->want, s->context);
	else
		PUT("does not fit (0 x %u-token sequences)", s->context);
	const char *sep = "; would: ";
	if (f->max_seqs > 0) {
		PUT("%s%u sequences", sep, f->max_seqs);
		sep = ", ";
	}
	if (f->max_context > 0) {
		PUT("%scontext %u", sep, f->max_context);
		sep = ", ";
	}
	if (f->kv_alt != PREC_COUNT) {
		PUT("%sFP8/INT8 KV cache (%u sequences)", sep, f->kv_alt_seqs);
		sep = ", ";
	}
	if (f->tp_alt) {
		PUT("%stp %u (%u sequences)", sep, f->tp_alt, f->tp_alt_seqs);
		sep = ", ";
	}
	if (sep[0] == ';')
		PUT("; nor fewer sequences, shorter context, FP8/INT8 KV cache or up to tp %u", PLAN_SERVE_MAX_TP);
#undef PUT
}
