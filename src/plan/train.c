/* SPDX-License-Identifier: Apache-2.0 */
/*
 * train.c - per-GPU memory of a training job, and its FLOPs.
 *
 * Model states (bytes per parameter, P = parameters on this GPU after TP/PP):
 *   pytorch   FP32 weights 4, FP32 gradients 4, optimizer (AdamW 8, 8-bit Adam 2,
 *             SGD momentum 4); under BF16/FP16 autocast the 16-bit copies of the
 *             matmul weights (2 bytes) live from forward to backward. Gradients are
 *             freed after each step (zero_grad(set_to_none=True)), so they do not
 *             coexist with the activations; foreach AdamW needs one FP32 temporary
 *             per parameter in its step. Measured: bench/plan_memory.py.
 *   deepspeed weights 2 (16-bit), gradients 2, optimizer 4 master + moments
 *             (AdamW 12: the 16 bytes/parameter of the ZeRO paper, Rajbhandari et al.
 *             2020); ZeRO-1 shards the optimizer; ZeRO-2 and -3 follow DeepSpeed's
 *             estimators (estimate_zero2/3_model_states_mem_needs): 4P + 16P/N and
 *             18P/N + 4 x largest layer, the 16/18 including an FP32 gradient partition.
 *
 * Activations per transformer block (Korthikanti et al. 2022, "Reducing Activation
 * Recomputation in Large Transformer Models", section 4), counted in stored
 * tensors per token, h = hidden, c = compute bytes, r = residual-stream bytes:
 *   replicated across TP ranks (split only with sequence parallelism):
 *     two norm inputs 2r, attention input c, MLP input c, dropout masks 2 x 1
 *   split across TP ranks:
 *     Q c, K and V 2c x kv_heads/heads, attention output c,
 *     MLP 2c x ffn/h (GELU: its input and output) or 4c x ffn/h (SwiGLU), x routed experts
 *   attention scores (eager attention, not with selective recomputation or flash):
 *     heads x seq x (softmax bytes (+ the 16-bit copy under autocast) + dropout 1 + c)
 * With r = c = 2 and dropout this is the paper's sbh(10 + 24/t + 5as/(ht)).
 * PyTorch autocast runs LayerNorm and the residual stream in FP32: r = 4.
 * Full checkpointing keeps each block's input (r per token) and recomputes one block
 * at a time; pipeline parallelism with 1F1B keeps L/p blocks x min(p, m) micro-batches.
 * The loss keeps FP32 log-probabilities (4 x vocab per token) and its backward holds
 * two more FP32 vocab-sized tensors (measured: 8 x vocab per token).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "plan.h"

#define WORKSPACE_BYTES (80.0 * 1048576)    /* cuBLAS workspace + allocator rounding: 70-130 MB measured */
#define CUDA_CONTEXT_BYTES (768.0 * 1048576) /* 752-778 MiB measured (torch 2.11, CUDA 13, H200) */
#define DS_BUCKET_ELEMS 5e8                 /* DeepSpeed reduce/allgather bucket default (elements) */
#define DS_OFFLOAD_BUFFER 1.5               /* DeepSpeed's additional_buffer_factor for host memory */

#define NAMES(fn, type, ...)                                                                       \
	static const char *const fn##_names[] = { __VA_ARGS__ };                                   \
	int plan_##fn##_parse(const char *s, type *out)                                            \
	{                                                                                          \
		for (size_t i = 0; s && i < sizeof(fn##_names) / sizeof(fn##_names[0]); i++)        \
			if (strcasecmp(s, fn##_names[i]) == 0) {                                   \
				*out = (type)i;                                                    \
				return 0;                                                          \
			}                                                                          \
		return -1;                                                                         \
	}                                                                                          \
	const char *plan_##fn##_name(type v)                                                       \
	{                                                                                          \
		return (size_t)v < sizeof(fn##_names) / sizeof(fn##_names[0]) ? fn##_names[v] : "?"; \
	}

NAMES(optim, enum plan_optim, "adamw", "adam8bit", "sgd", "adamw-fused")
NAMES(ckpt, enum plan_ckpt, "none", "selective", "full")
NAMES(attn, enum plan_attn, "flash", "eager")
NAMES(framework, enum plan_framework, "pytorch", "deepspeed", "transformers", "gpuctl")
NAMES(offload, enum plan_offload, "none", "optimizer", "params")

static const char *const part_names[PART_COUNT] = { "weights", "grads", "optimizer", "activations", "logits",
							   "recompute" };
const char *plan_part_name(enum plan_part p) { return (size_t)p < PART_COUNT ? part_names[p] : "?"; }

void plan_mem_set_peak_term(struct plan_mem *o)
{
	size_t best = 0;
	o->peak_term = NULL; /* not known when a part is not (a size-only model's gathered layer) */
	for (size_t i = 0; i < PART_COUNT; i++) {
		if (!isfinite(o->peak_parts[i]))
			return;
		if (o->peak_parts[i] > o->peak_parts[best])
			best = i;
	}
	o->peak_term = part_names[best];
}

void plan_train_defaults(struct plan_train *t)
{
	memset(t, 0, sizeof(*t));
	t->prec = PREC_BF16;
	t->optim = OPT_ADAMW;
	t->ckpt = CKPT_NONE;
	t->attn = ATTN_FLASH;
	t->fw = FW_HF;
	t->micro_batch = 1;
	t->seq = 2048;
	t->grad_accum = 1;
	t->dp = t->tp = t->pp = 1;
	t->frag = 0.10;
	t->cuda_context_bytes = CUDA_CONTEXT_BYTES;
}

static int plan_train_validate(const struct plan_model *m, const struct plan_train *t, char *err, size_t errlen)
{
	const struct { const char *name; unsigned v; } pos[] = {
		{ "micro-batch", t->micro_batch }, { "seq", t->seq }, { "grad-accum", t->grad_accum },
		{ "dp", t->dp }, { "tp", t->tp }, { "pp", t->pp },
	};
	for (size_t i = 0; i < sizeof(pos) / sizeof(pos[0]); i++)
		if (pos[i].v == 0) {
			snprintf(err, errlen, "%s must be positive", pos[i].name);
			return -1;
		}
	if (plan_model_validate(m, err, errlen))
		return -1;
	if (t->prec == PREC_INT8 || t->prec == PREC_INT4) {
		snprintf(err, errlen, "precision '%s' is for serving; train with fp32, bf16, fp16 or fp8",
			 plan_prec_name(t->prec));
		return -1;
	}
	if (t->zero > 3) {
		snprintf(err, errlen, "zero must be 0, 1, 2 or 3");
		return -1;
	}
	if (!(t->frag >= 0 && t->frag < 10)) {
		snprintf(err, errlen, "fragmentation must be between 0 and 1000 percent");
		return -1;
	}
	if (t->fw != FW_DEEPSPEED) {
		const char *bad = t->zero ? "zero" : t->tp > 1 ? "tp" : t->pp > 1 ? "pp" :
				  t->offload ? "offload" : t->prec == PREC_FP8 ? "precision fp8" : NULL;
		if (bad) {
			snprintf(err, errlen, "%s needs --framework deepspeed (the %s model is plain DDP)", bad,
				 plan_framework_name(t->fw));
			return -1;
		}
	}
	if (t->fw == FW_GPUCTL &&
	    (!m->has_arch || !m->max_pos || !m->layernorm || !m->bias || !m->tied_embeddings || m->gated_mlp || m->experts ||
	     m->kv_heads != m->heads || m->ffn != 4 * m->hidden || (t->prec != PREC_FP32 && t->prec != PREC_BF16) ||
	     t->ckpt != CKPT_NONE || t->seq > m->max_pos)) {
		snprintf(err, errlen, "--framework gpuctl is gpuctl's GPT-2 step: a GPT-2 architecture (learned positions, "
			 "LayerNorm, biases, tied embeddings, ffn 4 x hidden), fp32 or bf16, no checkpointing, seq <= %u",
			 m->max_pos);
		return -1;
	}
	if (t->pure16 && (t->fw != FW_HF || t->prec == PREC_FP32)) {
		snprintf(err, errlen, "pure 16-bit weights need --framework transformers and precision bf16 or fp16");
		return -1;
	}
	if (t->offload == OFFLOAD_PARAMS && t->zero != 3) {
		snprintf(err, errlen, "offload params needs zero 3");
		return -1;
	}
	if (t->offload == OFFLOAD_OPTIMIZER && t->zero == 0) {
		snprintf(err, errlen, "offload optimizer needs zero 1, 2 or 3");
		return -1;
	}
	if (m->has_arch) {
		if (m->heads % t->tp || m->ffn % t->tp) {
			snprintf(err, errlen, "tp %u does not divide heads %u and ffn %u", t->tp, m->heads, m->ffn);
			return -1;
		}
		if (m->layers % t->pp) {
			snprintf(err, errlen, "pp %u does not divide layers %u", t->pp, m->layers);
			return -1;
		}
	}
	return 0;
}

static bool mixed(const struct plan_train *t) { return t->prec != PREC_FP32; }
static double compute_bytes(const struct plan_train *t) { return mixed(t) ? 2 : 4; }
static double residual_bytes(const struct plan_train *t)
{
	return (t->fw == FW_PYTORCH || !mixed(t)) ? 4 : 2;
}

/* Activation bytes of one block for one micro-batch on one GPU. */
static double block_activations(const struct plan_model *m, const struct plan_train *t, bool scores)
{
	double tok = (double)t->seq * t->micro_batch, h = m->hidden, c = compute_bytes(t), r = residual_bytes(t);
	double tp = t->tp, kvr = (double)m->kv_heads / m->heads, ffr = (double)m->ffn / h;
	double experts = m->experts ? m->experts_active : 1;
	double repl = 2 * r + 2 * c + (t->dropout ? 2 : 0);
	double split = c * (2 + 2 * kvr) + c * experts * (m->gated_mlp ? 4 : 2) * ffr;
	double bytes = tok * h * (repl / (t->sp ? tp : 1) + split / tp);
	if (scores && t->attn == ATTN_EAGER) {
		double sm = (t->fw == FW_PYTORCH && mixed(t)) ? 4 + c : c; /* autocast softmax is FP32 */
		bytes += tok * m->heads * (double)t->seq * (sm + (t->dropout ? 1 + c : 0)) / tp;
	} else if (t->attn == ATTN_FLASH) {
		bytes += tok * m->heads * 4.0 / tp; /* flash attention's FP32 log-sum-exp */
	}
	return bytes;
}

static double inflight_blocks(const struct plan_model *m, const struct plan_train *t)
{
	double per_stage = (double)m->layers / t->pp;
	unsigned mb = t->grad_accum < t->pp ? t->grad_accum : t->pp;
	return per_stage * mb;
}

/* Per token: the final norm's input (r) and the output layer's input (c). */
static double outside_activations(const struct plan_model *m, const struct plan_train *t)
{
	double tok = (double)t->seq * t->micro_batch;
	return tok * m->hidden * (residual_bytes(t) + compute_bytes(t));
}

double plan_activation_bytes(const struct plan_model *m, const struct plan_train *t)
{
	if (!m->has_arch)
		return NAN;
	if (t->fw == FW_HF)
		return plan_hf_activation_bytes(m, t);
	if (t->fw == FW_GPUCTL) {
		struct plan_mem o = { 0 };
		plan_gpuctl_train_memory(m, t, &o);
		return o.activations;
	}
	double blocks = inflight_blocks(m, t);
	if (t->ckpt == CKPT_FULL) {
		double tok = (double)t->seq * t->micro_batch;
		return blocks * tok * m->hidden * residual_bytes(t) / (t->sp ? t->tp : 1) + outside_activations(m, t);
	}
	return blocks * block_activations(m, t, t->ckpt == CKPT_NONE) + outside_activations(m, t);
}

/* Parameters held by one GPU before ZeRO sharding: the first pipeline stage, which
 * also holds the embeddings, split by tensor parallelism. */
static double params_per_gpu(const struct plan_model *m, const struct plan_train *t)
{
	if (!m->has_arch)
		return plan_model_params(m) / ((double)t->tp * t->pp);
	return ((double)m->layers / t->pp * plan_model_layer_params(m) + plan_model_embed_params(m)) / t->tp;
}

static double optim_bytes_per_param(const struct plan_train *t)
{
	double moments = t->optim == OPT_ADAM8BIT ? 2 : t->optim == OPT_SGD ? 4 : 8;
	if (t->fw == FW_DEEPSPEED && mixed(t))
		return 4 + moments; /* FP32 master weights live with the optimizer */
	return moments;
}

static void deepspeed_states(const struct plan_model *m, const struct plan_train *t, double P, struct plan_mem *o)
{
	double n = t->dp, wb = mixed(t) ? 2 : 4, ob = optim_bytes_per_param(t);
	double fp32_grad_part = mixed(t) ? 4 : 0; /* DeepSpeed keeps an FP32 gradient partition */
	double w = wb * P + (t->prec == PREC_FP8 ? P : 0), g = wb * P, opt = ob * P, moved = 0;
	switch (t->zero) {
	case 0:
		break;
	case 1:
		opt /= n;
		break;
	case 2:
		g = wb * P + fp32_grad_part * P / n;
		opt /= n;
		break;
	default:
		w /= n;
		g = (mixed(t) ? fp32_grad_part : wb) * P / n;
		opt /= n;
		break;
	}
	if (t->offload >= OFFLOAD_OPTIMIZER) {
		moved += opt;
		opt = 0;
		if (t->zero >= 2) {
			moved += g;
			g = 0;
		}
	}
	if (t->offload == OFFLOAD_PARAMS) {
		moved += w;
		w = 0;
	}
	o->weights = w;
	o->grads = g;
	o->optimizer = opt;
	o->cpu_offload = moved * DS_OFFLOAD_BUFFER;
	if (t->zero == 3)
		o->comm = 4 * plan_model_largest_module(m) / t->tp; /* gathered layer (estimator) */
	else if (t->dp > 1 || t->zero)
		o->comm = 2 * fmin(DS_BUCKET_ELEMS, P) * wb; /* reduce + allgather buckets */
	else
		o->comm = 0;
}

int plan_train_memory(const struct plan_model *m, const struct plan_train *t, struct plan_mem *o, char *err,
		      size_t errlen)
{
	memset(o, 0, sizeof(*o));
	if (plan_train_validate(m, t, err, errlen))
		return -1;
	if (t->fw == FW_HF) {
		plan_hf_train_memory(m, t, o);
		return 0;
	}
	if (t->fw == FW_GPUCTL) {
		plan_gpuctl_train_memory(m, t, o);
		return 0;
	}
	double P = params_per_gpu(m, t);
	double tok = (double)t->seq * t->micro_batch;
	o->activations_known = m->has_arch;
	o->activations = plan_activation_bytes(m, t);
	double loss_kept = m->has_arch ? 4 * tok * m->vocab / t->tp : 0;
	double loss_bwd = m->has_arch ? 8 * tok * m->vocab / t->tp : 0;
	o->loss = loss_kept + loss_bwd;
	double act = m->has_arch ? o->activations : 0;
	double one_block = m->has_arch ? block_activations(m, t, t->ckpt != CKPT_SELECTIVE) : 0;
	o->workspace = WORKSPACE_BYTES;
	double resident, a, b, c = 0;
	/* the phases' parts by cause: a backward start, b backward end, c optimizer step */
	double pa[PART_COUNT] = { 0 }, pb[PART_COUNT] = { 0 }, pc[PART_COUNT] = { 0 }, pr[PART_COUNT] = { 0 };
	if (t->fw == FW_PYTORCH) {
		o->weights = 4 * P;
		o->grads = 4 * P;
		o->optimizer = optim_bytes_per_param(t) * P;
		o->comm = t->dp > 1 ? o->grads : 0; /* DDP gradient buckets */
		double vh = m->has_arch ? (double)m->vocab * m->hidden : 0;
		double casts = 0, block_casts = 0;
		if (mixed(t)) {
			block_casts = m->has_arch ? 2 * (plan_model_matmul_params(m) - vh) / m->layers : 0;
			casts = t->ckpt == CKPT_FULL ? 2 * vh : 2 * plan_model_matmul_params(m);
		}
		o->weights += casts;
		resident = 4 * P + o->optimizer + o->comm;
		pr[PART_WEIGHTS] = 4 * P + o->comm;
		pr[PART_OPTIMIZER] = o->optimizer;
		pa[PART_WEIGHTS] = casts;
		pa[PART_ACTIVATIONS] = act;
		pa[PART_LOGITS] = loss_kept + loss_bwd;
		pb[PART_GRADS] = o->grads + vh * 4;
		pb[PART_RECOMPUTE] = t->ckpt == CKPT_FULL ? one_block + block_casts : 0;
		pc[PART_GRADS] = o->grads;
		pc[PART_OPTIMIZER] = t->optim == OPT_ADAMW || t->optim == OPT_SGD ? 4 * P : 0; /* foreach step temporaries */
		a = casts + act + loss_kept + loss_bwd;
		b = pb[PART_GRADS] + pb[PART_RECOMPUTE];
		c = pc[PART_GRADS] + pc[PART_OPTIMIZER];
	} else {
		deepspeed_states(m, t, P, o);
		resident = o->weights + o->grads + o->optimizer + o->comm;
		pr[PART_WEIGHTS] = o->weights + o->comm;
		pr[PART_GRADS] = o->grads;
		pr[PART_OPTIMIZER] = o->optimizer;
		pa[PART_ACTIVATIONS] = act;
		pa[PART_LOGITS] = loss_kept + loss_bwd;
		pb[PART_ACTIVATIONS] = t->ckpt == CKPT_FULL ? act : 0;
		pb[PART_RECOMPUTE] = t->ckpt == CKPT_FULL ? one_block : 0;
		a = act + loss_kept + loss_bwd;
		b = t->ckpt == CKPT_FULL ? act + one_block : 0;
	}
	const double *pp = pa;
	o->peak_phase = "backward start";
	o->transient = a;
	if (b > o->transient) {
		o->transient = b;
		o->peak_phase = "backward end";
		pp = pb;
	}
	if (c > o->transient) {
		o->transient = c;
		o->peak_phase = "optimizer step";
		pp = pc;
	}
	for (size_t k = 0; k < PART_COUNT; k++)
		o->peak_parts[k] = pr[k] + pp[k];
	o->peak_parts[PART_WEIGHTS] += o->workspace;
	plan_mem_set_peak_term(o);
	o->peak = resident + o->transient + o->workspace;
	o->context = t->cuda_context_bytes;
	o->fragmentation = o->peak * t->frag;
	o->total = o->peak + o->fragmentation + o->context;
	return 0;
}

unsigned plan_max_micro_batch(const struct plan_model *m, const struct plan_train *t, double mem_bytes)
{
	struct plan_train tt = *t;
	struct plan_mem o;
	char err[160];
	unsigned lo = 0, hi = 1;
	for (;;) { /* grow until it no longer fits */
		tt.micro_batch = hi;
		if (plan_train_memory(m, &tt, &o, err, sizeof(err)) || o.total > mem_bytes)
			break;
		lo = hi;
		if (hi >= (1u << 20) || !m->has_arch)
			return lo;
		hi *= 2;
	}
	while (hi - lo > 1) {
		unsigned mid = lo + (hi - lo) / 2;
		tt.micro_batch = mid;
		if (plan_train_memory(m, &tt, &o, err, sizeof(err)) == 0 && o.total <= mem_bytes)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

double plan_train_flops(const struct plan_model *m, const struct plan_train *t, double tokens)
{
	double per_token = 6 * plan_model_active_params(m);
	if (m->has_arch) {
		double attn = (double)m->layers * t->seq * m->hidden;
		per_token += 12 * attn; /* QK^T and AV: 3 x 4 s h per layer (Narayanan et al. 2021) */
		if (t->ckpt == CKPT_SELECTIVE)
			per_token += 4 * attn; /* attention core computed again */
	}
	if (t->ckpt == CKPT_FULL)
		per_token *= 4.0 / 3.0; /* the forward pass runs twice */
	return per_token * tokens;
}

double plan_train_seconds(const struct plan_model *m, const struct plan_train *t, double tokens, double gpus,
			  double peak_tflops, double mfu)
{
	return plan_train_flops(m, t, tokens) / (gpus * peak_tflops * 1e12 * mfu);
}
