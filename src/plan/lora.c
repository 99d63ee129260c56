/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lora.c - model states of LoRA / QLoRA fine-tuning (pure; see plan.h).
 *
 * Adapters on every linear layer of every block (PEFT's target_modules="all-linear"):
 * q, k, v, o and the MLP's matrices (each expert's, for MoE; the router and the head
 * left out). A linear layer in -> out gets r x (in + out) trainable parameters (A: r x in,
 * B: out x r). The adapters are kept in FP32 (PEFT's autocast_adapter_dtype), so each
 * adapter parameter costs 4 B weight + 4 B gradient + 8 B AdamW moments.
 * The frozen base: BF16 (2 B a parameter), or for QLoRA the blocks' linear weights in
 * 4-bit NF4 with double quantization (bitsandbytes: 0.5 B a weight, an 8-bit absmax per
 * 64 weights, an FP32 constant per 256 absmax: 0.5 + 1/64 + 4/16384 B) and the rest
 * (embeddings, head, norms) in BF16. No gradients or optimizer states for the base.
 */
#include <math.h>

#include "plan/plan.h"

#define NF4_BYTES (0.5 + 1.0 / 64 + 4.0 / (64.0 * 256.0))

int plan_lora_memory(const struct plan_model *m, unsigned rank, bool qlora, struct plan_lora_mem *o)
{
	*o = (struct plan_lora_mem){ 0 };
	if (!m->has_arch || rank == 0)
		return -1;
	double h = m->hidden, kv = (double)m->kv_heads * plan_model_head_dim(m), f = m->ffn, r = rank;
	double mlp_mats = m->gated_mlp ? 3 : 2, experts = m->experts ? m->experts : 1;
	/* per block: in + out of each adapted linear, and the weights they wrap */
	double attn_io = (h + h) + (h + kv) + (h + kv) + (h + h), attn_w = h * h + 2 * h * kv + h * h;
	double mlp_io = experts * mlp_mats * (h + f), mlp_w = experts * mlp_mats * h * f;
	o->adapter_params = m->layers * r * (attn_io + mlp_io);
	o->base_linear_params = m->layers * (attn_w + mlp_w);
	o->base_other_params = plan_model_params(m) - o->base_linear_params;
	o->base_bytes = qlora ? o->base_linear_params * NF4_BYTES + o->base_other_params * 2
			      : (o->base_linear_params + o->base_other_params) * 2;
	o->adapter_bytes = 4 * o->adapter_params;
	o->grads = 4 * o->adapter_params;
	o->optimizer = 8 * o->adapter_params;
	o->total = o->base_bytes + o->adapter_bytes + o->grads + o->optimizer;
	return isfinite(o->total) ? 0 : -1;
}
