/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hf.c - training and prefill memory of Hugging Face `transformers` models (framework
 * "transformers"): what bench/hf_plan_memory.py measured on an H200 (transformers 5.17,
 * torch 2.11, bench/runs/2026-12-01-plan-hf: 64 training and 9 generation cases, and 19 + 5
 * held out).
 *
 * The training loop modelled is the Trainer's: loss = model(input_ids, labels=...).loss
 * (the output, and with it the logits, dropped before backward), use_cache off, HF's
 * gradient_checkpointing_enable(), zero_grad(set_to_none=True). Three precisions:
 * FP32 (TF32 off), AMP (FP32 weights under torch.autocast BF16/FP16) and pure 16-bit
 * (weights and optimizer states in BF16, no autocast).
 *
 * Every term below is a set of tensors with a cause; the per-token byte counts are the
 * saved-tensor inventory (torch.autograd.graph.saved_tensors_hooks) of the first forward,
 * grouped by width, which equals the memory held after the forward in every case (to 0.2%).
 *
 *   resident   weights + optimizer states (+ DDP buckets) + two 32 MiB cuBLAS workspaces
 *   saved      blocks x tokens x (per-block inventory) + final norm/head input + the loss's
 *              FP32 log-probabilities (4 x vocab per token: ForCausalLMLoss upcasts the logits
 *              and log_softmax keeps its output) + under AMP the 16-bit weight copies autocast
 *              makes for the matmuls (2 B per cast weight; with checkpointing only the head's)
 *   phases     forward at the loss: + 16-bit logits (2 x vocab) + their FP32 copy (4 x vocab)
 *              (FP32: the copy is the logits), and with checkpointing under AMP autocast's
 *              cache of every block's weight copies (freed when autocast exits);
 *              backward start: + the gradient of the log-probabilities and of the logits
 *              (FP32, 8 x vocab per token);
 *              backward end: all gradients (less an untied embedding's, computed last) + one
 *              block's activations recomputed (checkpointing) or still held (+ with the
 *              scores kept, the gradients of its probabilities and scores, 2 x 4 B each);
 *              backward end (embedding): all gradients + a tied embedding's dense gradient,
 *              added to the head's (round 2, bench/runs/2026-12-04-plan-hf-r2);
 *              optimizer step: gradients + foreach AdamW's one temporary per parameter.
 *   peak       the largest phase; measured: backward start 57 of 64 cases, forward 3,
 *              optimizer step 4. Its parts by cause (weights, grads, optimizer, activations,
 *              logits, recompute) are o->peak_parts; the largest is o->peak_term.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/numfmt.h"
#include "plan.h"

/* cuBLAS workspaces, 32 MiB each on Hopper (PyTorch's default), one per thread that runs
 * matmuls: training runs the backward on autograd's thread (two), a prefill on one; + 2 MiB
 * of small buffers. Measured: 68-70 MB held beside the weights after training steps. */
#define WORKSPACE_TRAIN (66.0 * 1048576)
#define WORKSPACE_PREFILL (34.0 * 1048576)
#define BWD_END_TRANSIENT 4.0            /* x hidden per token: the block's input gradients in flight */
#define EVIDENCE "bench/runs/2026-12-01-plan-hf (H200, transformers 5.17, torch 2.11)"
#define EVIDENCE_R2 "bench/runs/2026-12-04-plan-hf-r2"

enum hf_arch { ARCH_LLAMA, ARCH_GPT2, ARCH_MOE, ARCH_COUNT };
enum hf_mode { MODE_FP32, MODE_AMP, MODE_PURE16, MODE_COUNT };

/* What autograd saves, bytes per token: the measured inventory, one row per implementation
 * and precision. */
struct hf_saved {
	double h;       /* per block, x hidden: norms' inputs and outputs, projections' inputs, Q, attention output */
	double kv;      /* per block, x K/V width (x hidden where scores are materialized: repeat_kv) */
	double ffn;     /* per block, x ffn (MoE: per routed expert) */
	double route;   /* MoE, per block and routed expert, x hidden: gathered input, weighted output */
	double lse;     /* per block, x heads: the fused attention's FP32 log-sum-exp */
	double score;   /* per block, x heads x seq where scores are materialized */
	double outside; /* once, x hidden: final norm, head input (GPT-2: embedding dropout mask) */
	double ckpt;    /* per block with full checkpointing, x hidden: the block's input */
};
static const struct hf_saved SAVED[ARCH_COUNT][MODE_COUNT] = {
	/* Llama, Qwen2: two RMSNorms keep input and normalized output in FP32 (16 h) under FP32
	 * and AMP; SwiGLU keeps gate, up, SiLU output and product (4 ffn-wide); AMP adds the
	 * 16-bit casts of the projections' inputs; eager softmax runs in FP32 and is cast back
	 * (6 B per score). FP32 SDPA with GQA takes PyTorch's math path (scores materialized). */
	[ARCH_LLAMA] = { [MODE_FP32] = { 32, 8, 16, 0, 4, 4, 12, 4 },
			 [MODE_AMP] = { 30, 4, 8, 0, 4, 6, 10, 4 },
			 [MODE_PURE16] = { 20, 4, 8, 0, 4, 6, 8, 2 } },
	/* GPT-2: LayerNorm, GELU-tanh (its chain of FP32 temporaries under autocast: 12 B + 4 B
	 * per ffn unit), dropout 0.1 masks (1 B); eager: FP32 softmax, mask, dropout output. */
	[ARCH_GPT2] = { [MODE_FP32] = { 26, 8, 20, 0, 4, 9, 9, 4 },
			[MODE_AMP] = { 18, 4, 16, 0, 4, 7, 8, 4 },
			[MODE_PURE16] = { 14, 4, 10, 0, 4, 5, 5, 2 } },
	/* Mixtral: the Llama block with the MLP's input casts replaced by the router's (AMP);
	 * the experts run in the weights' dtype (FP32 under AMP: not autocast), 4 ffn-wide
	 * tensors and 2 hidden-wide per routed copy of a token. */
	[ARCH_MOE] = { [MODE_FP32] = { 32, 8, 16, 8, 4, 4, 12, 4 },
		       [MODE_AMP] = { 28, 4, 16, 8, 4, 6, 10, 4 },
		       [MODE_PURE16] = { 20, 4, 8, 4, 4, 6, 8, 2 } },
};
static const char *const ARCH_NAMES[ARCH_COUNT] = { "Llama/Qwen2", "GPT-2", "Mixtral (MoE)" };

static enum hf_arch arch_of(const struct plan_model *m)
{
	if (m->experts)
		return ARCH_MOE;
	return m->layernorm && !m->gated_mlp ? ARCH_GPT2 : ARCH_LLAMA;
}

static enum hf_mode mode_of(const struct plan_train *t)
{
	if (t->prec == PREC_FP32)
		return MODE_FP32;
	return t->pure16 ? MODE_PURE16 : MODE_AMP;
}

/* PyTorch's SDPA has no FP32 flash kernel and its memory-efficient kernel takes no GQA:
 * FP32 with GQA runs the math path, which keeps the scores like eager attention. */
static bool scores_kept(const struct plan_model *m, const struct plan_train *t)
{
	return t->attn == ATTN_EAGER || (t->prec == PREC_FP32 && m->kv_heads < m->heads);
}

static double kv_dim(const struct plan_model *m)
{
	return (double)m->kv_heads * plan_model_head_dim(m);
}

/* Saved bytes per token of one block without checkpointing. */
static double block_bytes_per_token(const struct plan_model *m, const struct plan_train *t)
{
	const struct hf_saved *c = &SAVED[arch_of(m)][mode_of(t)];
	double h = m->hidden, routed = m->experts ? m->experts_active : 1;
	bool kept = scores_kept(m, t);
	double b = c->h * h + c->kv * (kept ? h : kv_dim(m)) + c->ffn * m->ffn * routed + c->route * h * routed;
	return b + (kept ? c->score * m->heads * (double)t->seq : c->lse * m->heads);
}

/* Weights autocast casts to 16 bits: every matmul weight, except MoE experts (not autocast). */
static double cast_params(const struct plan_model *m)
{
	if (!m->experts)
		return plan_model_matmul_params(m);
	double h = m->hidden;
	return m->layers * (2 * h * h + 2 * h * kv_dim(m) + h * m->experts) + (double)m->vocab * h;
}

double plan_hf_activation_bytes(const struct plan_model *m, const struct plan_train *t)
{
	if (!m->has_arch)
		return NAN;
	const struct hf_saved *c = &SAVED[arch_of(m)][mode_of(t)];
	double tok = (double)t->seq * t->micro_batch, h = m->hidden;
	double blocks = t->ckpt == CKPT_FULL ? c->ckpt * h : block_bytes_per_token(m, t);
	return tok * (m->layers * blocks + c->outside * h);
}

static void term(struct plan_mem *o, const char *name, double bytes, const char *evidence, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void term(struct plan_mem *o, const char *name, double bytes, const char *evidence, const char *fmt, ...)
{
	if (o->nterms >= PLAN_TERMS_MAX)
		return;
	struct plan_term *x = &o->terms[o->nterms++];
	x->name = name;
	x->bytes = bytes;
	x->evidence = evidence;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(x->formula, sizeof(x->formula), fmt, ap);
	va_end(ap);
}

void plan_hf_train_memory(const struct plan_model *m, const struct plan_train *t, struct plan_mem *o)
{
	double P = plan_model_params(m), wb = t->pure16 && t->prec != PREC_FP32 ? 2 : 4;
	bool amp = mode_of(t) == MODE_AMP, ckpt = t->ckpt == CKPT_FULL, has = m->has_arch;
	double tok = (double)t->seq * t->micro_batch, NV = has ? tok * m->vocab : 0;
	double moments = t->optim == OPT_SGD ? 1 : 2;
	double states = t->optim == OPT_ADAM8BIT ? 2 * P : moments * wb * P;
	double vh = has ? (double)m->vocab * m->hidden : 0;

	o->weights = wb * P;
	o->grads = wb * P;
	o->optimizer = states;
	o->comm = t->dp > 1 ? o->grads : 0; /* DDP gradient buckets (not measured) */
	o->workspace = WORKSPACE_TRAIN;
	o->activations_known = has;
	o->activations = plan_hf_activation_bytes(m, t);
	double act = has ? o->activations : 0;
	double casts = 0, cache = 0;
	if (amp && has) {
		casts = ckpt ? 2 * vh : 2 * cast_params(m);
		cache = ckpt ? 2 * (cast_params(m) - vh) : 0;
	}
	o->weights += casts;
	double logp = 4 * NV, fwd_logits = (t->prec == PREC_FP32 ? 4 : 6) * NV, bwd_loss = 8 * NV;
	o->loss = logp + bwd_loss;
	double resident = wb * P + states + o->comm + o->workspace;
	double held_grads = t->grad_accum > 1 ? o->grads : 0; /* accumulated across micro-batches */
	double one_block = has ? tok * block_bytes_per_token(m, t) : 0;
	double block_casts = amp && has ? 2 * (cast_params(m) - vh) / m->layers : 0;
	double embed_grad_last = has && !m->tied_embeddings ? wb * vh : 0;
	double temp = t->optim == OPT_ADAMW ? wb * P : 0; /* foreach AdamW; fused and SGD: none */

	/* The backward of the last block to run (block 0): with checkpointing its activations
	 * recomputed, with the scores kept the gradients of the probabilities and of the scores
	 * beside them (FP32, 2 x 4 B per score; measured in FP32, Llama-1B 2048 x 2). */
	double score_grads = has && scores_kept(m, t) ? 8 * tok * m->heads * (double)t->seq : 0;
	double last_block = one_block + block_casts + score_grads + (has ? BWD_END_TRANSIENT * tok * m->hidden : 0);
	/* Then the embedding's backward: a dense [vocab, hidden] gradient, which a tied embedding
	 * adds to the head's gradient already there (both alive), with the gradient coming in. */
	double embed_grad_new = has && m->tied_embeddings ? wb * vh : 0;
	double embed_in = has ? wb * tok * m->hidden : 0;

	/* Each phase's bytes beyond the resident states, by cause. */
	struct hf_phase {
		const char *name;
		double part[PART_COUNT];
	} phase[] = {
		{ "forward (loss)", { [PART_GRADS] = held_grads, [PART_WEIGHTS] = casts + cache, [PART_ACTIVATIONS] = act,
				      [PART_LOGITS] = logp + fwd_logits } },
		{ "backward start", { [PART_GRADS] = held_grads, [PART_WEIGHTS] = casts, [PART_ACTIVATIONS] = act,
				      [PART_LOGITS] = logp + bwd_loss } },
		{ "backward end", { [PART_GRADS] = o->grads - embed_grad_last, [PART_RECOMPUTE] = last_block } },
		{ "backward end (embedding)", { [PART_GRADS] = o->grads + embed_grad_new, [PART_ACTIVATIONS] = embed_in } },
		{ "optimizer step", { [PART_GRADS] = o->grads, [PART_OPTIMIZER] = temp } },
	};
	const size_t nphase = sizeof(phase) / sizeof(phase[0]);
	if (!ckpt) { /* without checkpointing the last block's activations are still held */
		phase[2].part[PART_ACTIVATIONS] = last_block;
		phase[2].part[PART_RECOMPUTE] = 0;
	}
	double bytes[sizeof(phase) / sizeof(phase[0])];
	size_t best = 0;
	for (size_t i = 0; i < nphase; i++) {
		bytes[i] = 0;
		for (size_t k = 0; k < PART_COUNT; k++)
			bytes[i] += phase[i].part[k];
		if (bytes[i] > bytes[best])
			best = i;
	}
	o->peak_phase = phase[best].name;
	o->transient = bytes[best];
	o->peak = resident + o->transient;
	for (size_t k = 0; k < PART_COUNT; k++)
		o->peak_parts[k] = phase[best].part[k];
	o->peak_parts[PART_WEIGHTS] += wb * P + o->comm + o->workspace;
	o->peak_parts[PART_OPTIMIZER] += states;
	plan_mem_set_peak_term(o);
	o->context = t->cuda_context_bytes;
	o->fragmentation = o->peak * t->frag;
	o->total = o->peak + o->fragmentation + o->context;

	/* --explain: each term, its formula and what it rests on */
	o->nterms = 0;
	const char *pn = wb == 2 ? "16-bit" : "FP32";
	char nP[48];
	term(o, "weights", wb * P, "parameter count (checked against the model transformers built)",
	     "%s: %g B x %s params", pn, wb, numfmt(nP, sizeof(nP), P, 4));
	term(o, "optimizer states", states, "allocated after step 1, all cases (AdamW 2, SGD 1 per weight)",
	     "%s: %g x %g B x params", plan_optim_name(t->optim), t->optim == OPT_ADAM8BIT ? 0.5 : moments, wb);
	term(o, "gradients", o->grads, "backward end and optimizer step, all cases", "%g B x params (dtype of the weights)", wb);
	if (!has)
		return;
	const struct hf_saved *c = &SAVED[arch_of(m)][mode_of(t)];
	bool kept = scores_kept(m, t);
	if (ckpt)
		term(o, "checkpointed block inputs", tok * m->layers * c->ckpt * m->hidden, EVIDENCE ", saved tensors",
		     "%u layers x %.0f tokens x %g B x hidden %u", m->layers, tok, c->ckpt, m->hidden);
	else
		term(o, "activations (blocks)", tok * m->layers * block_bytes_per_token(m, t), EVIDENCE ", saved tensors",
		     "%s: %u layers x %.0f tokens x (%gh + %g x %s + %g x ffn%s%s + %s)", ARCH_NAMES[arch_of(m)],
		     m->layers, tok, c->h, c->kv, kept ? "h (K,V repeated)" : "kv", c->ffn,
		     m->experts ? " x routed" : "", m->experts ? " + route x h x routed" : "",
		     kept ? "score B x heads x seq" : "LSE 4 x heads");
	term(o, "activations (outside blocks)", tok * c->outside * m->hidden, EVIDENCE ", saved tensors",
	     "%.0f tokens x %g B x hidden (final norm, head input)", tok, c->outside);
	term(o, "log-probabilities", logp, "saved FP32 [tokens, vocab] tensor, every case",
	     "4 B x %.0f tokens x vocab %u (ForCausalLMLoss upcasts logits; log_softmax keeps its output)", tok, m->vocab);
	if (casts > 0)
		term(o, "autocast weight copies", casts, "saved 16-bit copies of parameter shape (AMP cases)",
		     "2 B x %s %s weights", numfmt(nP, sizeof(nP), casts / 2, 4), ckpt ? "head" : "matmul");
	if (cache > 0)
		term(o, "autocast cache (checkpointing)", cache, "forward peak of the AMP checkpointing cases",
		     "2 B x %s block weights, held until autocast exits", numfmt(nP, sizeof(nP), cache / 2, 4));
	term(o, "loss forward transient", fwd_logits, "forward peak - memory after forward = 6 (FP32: 4) x tokens x vocab",
	     "%s logits + FP32 copy: %g B x tokens x vocab", t->prec == PREC_FP32 ? "FP32" : "16-bit", fwd_logits / NV);
	term(o, "loss backward transient", bwd_loss, "backward peak - memory after forward = 8 x tokens x vocab (60 cases)",
	     "gradients of log-probabilities and logits: 8 B x tokens x vocab");
	term(o, "last block in backward", last_block, "backward-end peaks of the checkpointing cases",
	     "one block's activations%s, recomputed with checkpointing, + 4 h per token in flight%s",
	     block_casts > 0 ? " + its weight copies" : "",
	     score_grads > 0 ? " + the gradients of its scores (2 x 4 B x heads x seq per token)" : "");
	if (embed_grad_new > 0)
		term(o, "tied embedding gradient", embed_grad_new, EVIDENCE_R2 ", backward of tied checkpointing cases",
		     "the embedding's dense gradient, %g B x vocab %u x hidden %u, beside the head's", wb, m->vocab,
		     m->hidden);
	if (temp > 0)
		term(o, "optimizer temporaries", temp, "optimizer-phase peak - resident = gradients + 1 x weights (foreach)",
		     "foreach AdamW: one %s tensor per parameter", pn);
	term(o, "workspace", o->workspace, "resident - states = 68-70 MB in every case",
	     "2 cuBLAS workspaces (forward and autograd threads) x 32 MiB + 2 MiB");
	for (size_t i = 0; i < nphase; i++)
		term(o, phase[i].name, resident + bytes[i], i == best ? "<- the peak" : "",
		     "phase total: resident + %.3f GB", bytes[i] / 1e9);
}

/*
 * Prefill with generate(): the whole prompt in one forward (no grad), logits of the last
 * position only. Beyond the KV cache and weights, the larger of two moments is held. In the
 * MLP: the residual stream, its norm and the attention output (8 x hidden, 16-bit) with the
 * gate, up and SiLU outputs (6 x ffn); Mixtral adds per routed copy the gathered input
 * (2 x hidden) and gate_up, SiLU and product (8 x ffn); GPT-2's GELU-tanh holds 4 ffn-wide
 * temporaries (8 x ffn + 10 x hidden). In eager attention: the scores, per score 10 B in
 * Llama/Qwen2/Mixtral (8 counted: the scaled and masked 16-bit scores with their FP32
 * softmax, then its 16-bit cast; 2 not attributed) and 4.4 B in GPT-2 (softmax in 16 bits),
 * measured on 2 Llama shapes and 1 GPT-2 (bench/RESULTS.md), with the 16-bit causal mask
 * (2 B per query and key) and K and V repeated to every head (repeat_kv).
 */
double plan_hf_prefill_bytes(const struct plan_model *m, double tokens, double seqs, bool eager)
{
	double h = m->hidden, f = m->ffn, mlp;
	enum hf_arch a = arch_of(m);
	switch (a) {
	case ARCH_MOE:
		mlp = (8 + 2.0 * m->experts_active) * h + 8.0 * m->experts_active * f;
		break;
	case ARCH_GPT2:
		mlp = 10 * h + 8 * f;
		break;
	default:
		mlp = 8 * h + 6 * f;
		break;
	}
	double moment = tokens * mlp;
	if (eager) {
		double per_score = a == ARCH_GPT2 ? 4.4 : 10;
		double attn = tokens * (8 * h + 4 * (h - kv_dim(m))) +
			      tokens * (tokens / seqs) * (per_score * m->heads + 2);
		moment = fmax(moment, attn);
	}
	return moment + seqs * m->vocab * 6.0 + WORKSPACE_PREFILL;
}

/* A decode step at `context` tokens: SDPA with a mask takes K and V repeated to every head
 * (repeat_kv) for one layer at a time, 16-bit (measured: Llama-3B shape, 2 x 16400 tokens,
 * generate's peak 0.61 GB over the prefill's). */
double plan_hf_decode_bytes(const struct plan_model *m, double seqs, double context)
{
	double repeated = m->kv_heads < m->heads ? 2 * 2 * seqs * context * (double)m->hidden : 0;
	return repeated + seqs * m->vocab * 6.0 + WORKSPACE_PREFILL;
}
