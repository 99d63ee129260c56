/* SPDX-License-Identifier: Apache-2.0 */
/* plan_train.c - `gpuctl plan train`: per-GPU memory, which GPUs fit, the smallest GPU
 * count, the largest micro-batch, time and cost (docs/plan.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/train_plan.h"
#include "core/numfmt.h"
#include "core/table.h"
#include "plan_cmd.h"
#include "core/units.h"

struct train_opts {
	struct model_opts mo;
	struct plan_train t;
	const char *gpu, *bench, *instance;
	double tokens, mfu, spot_overhead;
	unsigned lora_rank;       /* --lora-rank R; 0: full fine-tuning */
	bool qlora;
};

enum {
	TRAIN_PRECISION = MODEL_OPT_END, TRAIN_OPTIMIZER, TRAIN_CHECKPOINTING, TRAIN_ATTENTION, TRAIN_FRAMEWORK,
	TRAIN_OFFLOAD, TRAIN_MICRO_BATCH, TRAIN_SEQ, TRAIN_GRAD_ACCUM, TRAIN_DP, TRAIN_TP, TRAIN_PP, TRAIN_ZERO,
	TRAIN_TOKENS, TRAIN_MFU, TRAIN_SPOT_OVERHEAD, TRAIN_FRAGMENTATION, TRAIN_CUDA_CONTEXT, TRAIN_GPU,
	TRAIN_BENCH_RESULTS, TRAIN_INSTANCE, TRAIN_DROPOUT, TRAIN_SP, TRAIN_LORA_RANK, TRAIN_QLORA,
};
const struct opt_spec plan_train_opts[] = {
	PLAN_COMMON_SPECS,
	PLAN_MODEL_SPECS,
	[TRAIN_PRECISION] = { "precision", 0, OPT_STRING, "fp32|bf16|fp16|fp8|bf16-pure|fp16-pure",
			      "weights, compute and optimizer precision", "bf16", 0, 0, NULL },
	[TRAIN_OPTIMIZER] = { "optimizer", 0, OPT_STRING, "adamw|adamw-fused|adam8bit|sgd", "the optimizer", "adamw", 0, 0,
			      NULL },
	[TRAIN_CHECKPOINTING] = { "checkpointing", 0, OPT_STRING, "none|selective|full", "activation recomputation",
				  "none", 0, 0, NULL },
	[TRAIN_ATTENTION] = { "attention", 0, OPT_STRING, "flash|eager", "attention kernel", "flash", 0, 0, NULL },
	[TRAIN_FRAMEWORK] = { "framework", 0, OPT_STRING, "transformers|pytorch|deepspeed|gpuctl", "whose memory model",
			      "transformers", 0, 0, NULL },
	[TRAIN_OFFLOAD] = { "offload", 0, OPT_STRING, "none|optimizer|params", "CPU offload (deepspeed)", "none", 0, 0,
			    NULL },
	PLAN_COUNT_SPEC(TRAIN_MICRO_BATCH, "micro-batch", "sequences per GPU per step (default 1)", 1e6),
	PLAN_LENGTH_SPEC(TRAIN_SEQ, "seq", "tokens per sequence (default 2048; 4k = 4096)", 1000000000),
	PLAN_COUNT_SPEC(TRAIN_GRAD_ACCUM, "grad-accum", "micro-batches per optimizer step (default 1)", 1e6),
	PLAN_COUNT_SPEC(TRAIN_DP, "dp", "data parallel degree (default 1)", 1e6),
	PLAN_COUNT_SPEC(TRAIN_TP, "tp", "tensor parallel degree (default 1)", 1e6),
	PLAN_COUNT_SPEC(TRAIN_PP, "pp", "pipeline parallel degree (default 1)", 1e6),
	PLAN_COUNT_SPEC(TRAIN_ZERO, "zero", "ZeRO stage (deepspeed; default 0)", 3),
	PLAN_COUNT_SPEC(TRAIN_TOKENS, "tokens", "training tokens, for the time (2T, 1e12)", 1e15),
	PLAN_NUM_SPEC(TRAIN_MFU, "mfu", "X", "model FLOPs utilization", "calibrated (docs/plan.md)", 0, 1),
	PLAN_NUM_SPEC(TRAIN_SPOT_OVERHEAD, "spot-overhead", "PCT", "hours added to spot jobs", "10", 0, 1000),
	PLAN_NUM_SPEC(TRAIN_FRAGMENTATION, "fragmentation", "PCT", "allocator margin added to the peak", "10", 0, 1000),
	[TRAIN_CUDA_CONTEXT] = { "cuda-context", 0, OPT_SIZE, NULL, "CUDA context per process (docs/units.md)", "768M", 0,
				 1ll << 40, NULL },
	[TRAIN_GPU] = { "gpu", 0, OPT_STRING, "KEY", "a catalog GPU: largest micro-batch, time, cost", NULL, 0, 0, NULL },
	[TRAIN_BENCH_RESULTS] = { "bench-results", 0, OPT_STRING, "FILE", "the peak (and MFU) from a gpuctl bench --save file",
				  NULL, 0, 0, NULL },
	[TRAIN_INSTANCE] = { "instance", 0, OPT_STRING, "NAME", "cost: instance types matching NAME", "all", 0, 0, NULL },
	PLAN_FLAG_SPEC(TRAIN_DROPOUT, "dropout", "store dropout masks"),
	PLAN_FLAG_SPEC(TRAIN_SP, "sp", "sequence parallelism (with --tp)"),
	PLAN_COUNT_SPEC(TRAIN_LORA_RANK, "lora-rank", "LoRA: model states of rank-R adapters on a frozen BF16 base", 65536),
	PLAN_FLAG_SPEC(TRAIN_QLORA, "qlora", "with --lora-rank: the base's block weights in 4-bit NF4"),
};
const size_t plan_train_nopts = sizeof(plan_train_opts) / sizeof(plan_train_opts[0]);

/* --precision: bf16-pure, fp16-pure: 16-bit weights and optimizer states, no autocast (transformers) */
static int parse_precision(const char *v, struct plan_train *t)
{
	size_t n = strlen(v);
	t->pure16 = n > 5 && strcmp(v + n - 5, "-pure") == 0;
	char base[8];
	snprintf(base, sizeof(base), "%.*s", t->pure16 ? (int)(n - 5) : (int)n, v);
	return plan_prec_parse(base, &t->prec) || (t->pure16 && t->prec != PREC_BF16 && t->prec != PREC_FP16) ? -1 : 0;
}

static int train_take(struct pctx *p, int opt, const struct opt_value *v, void *arg)
{
	struct train_opts *o = arg;
	struct plan_train *t = &o->t;
	char flag[40];
	int r = model_take(p, opt, v, &o->mo);
	if (r)
		return r < 0 ? -1 : 0;
	opt_spelling(&plan_train_opts[opt], flag, sizeof(flag));
	/* whole counts, and their zero_ok (only ZeRO's stage may be 0) */
	unsigned *const counts[] = {
		[TRAIN_MICRO_BATCH - TRAIN_MICRO_BATCH] = &t->micro_batch, [TRAIN_SEQ - TRAIN_MICRO_BATCH] = &t->seq,
		[TRAIN_GRAD_ACCUM - TRAIN_MICRO_BATCH] = &t->grad_accum, [TRAIN_DP - TRAIN_MICRO_BATCH] = &t->dp,
		[TRAIN_TP - TRAIN_MICRO_BATCH] = &t->tp, [TRAIN_PP - TRAIN_MICRO_BATCH] = &t->pp,
		[TRAIN_ZERO - TRAIN_MICRO_BATCH] = &t->zero,
	};
	if (opt >= TRAIN_MICRO_BATCH && opt <= TRAIN_ZERO)
		return puint(p, flag, v, counts[opt - TRAIN_MICRO_BATCH], opt == TRAIN_ZERO);
	int bad = 0;
	switch (opt) {
	case TRAIN_PRECISION: bad = parse_precision(v->text, t); break;
	case TRAIN_OPTIMIZER: bad = plan_optim_parse(v->text, &t->optim); break;
	case TRAIN_CHECKPOINTING: bad = plan_ckpt_parse(v->text, &t->ckpt); break;
	case TRAIN_ATTENTION: bad = plan_attn_parse(v->text, &t->attn); break;
	case TRAIN_FRAMEWORK: bad = plan_framework_parse(v->text, &t->fw); break;
	case TRAIN_OFFLOAD: bad = plan_offload_parse(v->text, &t->offload); break;
	case TRAIN_TOKENS: return pnum(p, flag, v, &o->tokens, false);
	case TRAIN_MFU: return pnum(p, flag, v, &o->mfu, false);
	case TRAIN_SPOT_OVERHEAD:
		if (pnum(p, flag, v, &o->spot_overhead, true))
			return -1;
		o->spot_overhead *= 0.01;
		return 0;
	case TRAIN_FRAGMENTATION:
		if (pnum(p, flag, v, &t->frag, true))
			return -1;
		t->frag *= 0.01;
		return 0;
	case TRAIN_CUDA_CONTEXT: t->cuda_context_bytes = (double)v->num; return 0;
	case TRAIN_GPU: o->gpu = v->text; return 0;
	case TRAIN_BENCH_RESULTS: o->bench = v->text; return 0;
	case TRAIN_INSTANCE: o->instance = v->text; return 0;
	case TRAIN_DROPOUT: t->dropout = true; return 0;
	case TRAIN_SP: t->sp = true; return 0;
	case TRAIN_LORA_RANK: return puint(p, flag, v, &o->lora_rank, false);
	case TRAIN_QLORA: o->qlora = true; return 0;
	}
	if (bad) /* an enum's row: its value word lists the choices */
		perr(p, "%s must be one of %s, not '%s'", flag, plan_train_opts[opt].arg, v->text);
	return bad ? -1 : 0;
}

/* Smallest data-parallel size (x tp x pp) at which the job fits in mem; 0 if none up to 4096. */
/* transformers: each term with its formula and the measurement it rests on (hf.c) */
static void explain_terms(FILE *f, const struct plan_mem *o, const struct plan_train *t)
{
	if (t->fw == FW_GPUCTL)
		fprintf(f, "\nHow this was computed: gpuctl's own GPT-2 step allocates all of it before its first "
			   "step (bench -s train; docs/plan.md):\n");
	else
		fprintf(f, "\nHow this was computed: Hugging Face transformers 5.17 as the Trainer runs it "
			   "(measured on an H200, bench/hf_plan_memory.py; docs/plan.md):\n");
	for (unsigned i = 0; i < o->nterms; i++) {
		const struct plan_term *x = &o->terms[i];
		fprintf(f, "  %-30s %9.3f GB  %s", x->name, x->bytes / 1e9, x->formula);
		if (x->evidence && *x->evidence)
			fprintf(f, "  [%s]", x->evidence);
		fputc('\n', f);
	}
	fprintf(f, "  peak = the largest phase (%s), set by %s%s\n", o->peak_phase, o->peak_term ? o->peak_term : "n/a",
		 t->dp > 1 ? "; DDP buckets (size of the gradients) are not measured" : "");
	fprintf(f, "  total = peak x (1 + %.0f%% fragmentation margin) + %.2f GB CUDA context\n", 100 * t->frag,
		t->cuda_context_bytes / 1e9);
	fprintf(f, "  calibration: 64 training cases (GPT-2, Llama, Qwen2, Mixtral), worst error 1.1%%, and 19 held out, "
		   "worst 0.8%%; round 2 (checkpointing, seq to 8192, vocabularies to 152k): 12 fitted, worst 0.2%%, "
		   "12 held out, worst 0.8%% (bench/RESULTS.md); DDP and FSDP not measured\n");
}

static void explain(struct pctx *p, const struct plan_model *m, const struct plan_train *t, const struct plan_mem *o)
{
	FILE *f = p->ctx->out;
	double P = plan_model_params(m);
	if (t->fw == FW_HF || t->fw == FW_GPUCTL) {
		explain_terms(f, o, t);
		return;
	}
	fprintf(f, "\nHow this was computed (sources in docs/plan.md):\n");
	if (t->fw == FW_PYTORCH)
		fprintf(f, "  model states, plain PyTorch: FP32 weights 4 B x %.4g params, FP32 gradients 4 B, "
			   "%s states %g B per parameter%s\n", P, plan_optim_name(t->optim),
			t->optim == OPT_ADAMW ? 8.0 : t->optim == OPT_SGD ? 4.0 : 2.0,
			t->prec != PREC_FP32 ? "; autocast keeps 16-bit copies of the matmul weights (2 B) from forward to backward" : "");
	else
		fprintf(f, "  model states, DeepSpeed/Megatron: 16-bit weights 2 B + gradients 2 B + optimizer "
			   "(FP32 master 4 B + moments) per parameter (ZeRO paper: 16 B with AdamW); ZeRO-%u over dp %u "
			   "as DeepSpeed's estimators\n", t->zero, t->dp);
	if (m->has_arch)
		fprintf(f, "  activations per block and token (Korthikanti et al. 2022): norms 2r + inputs 2c%s "
			   "(split only with --sp) + [Q c + K,V 2c x %u/%u + output c + MLP %uc x %u/%u] / tp%s; "
			   "r = %g B, c = %g B; %s\n",
			t->dropout ? " + masks 2" : "", m->kv_heads, m->heads, m->gated_mlp ? 4 : 2, m->ffn, m->hidden,
			t->attn == ATTN_EAGER && t->ckpt == CKPT_NONE ? " + scores heads x seq x (softmax bytes)" : "",
			(t->fw == FW_PYTORCH || t->prec == PREC_FP32) ? 4.0 : 2.0, t->prec == PREC_FP32 ? 4.0 : 2.0,
			t->ckpt == CKPT_FULL ? "full checkpointing keeps r per token per block and recomputes one block"
					     : "blocks in flight: layers/pp x min(pp, grad-accum)");
	else
		fprintf(f, "  activations: not computed (the model is known by its size only; give --model or the architecture)\n");
	fprintf(f, "  loss: FP32 log-probabilities 4 x vocab per token, 8 x vocab more in its backward (measured)\n");
	fprintf(f, "  peak = resident states + the largest phase (%s, set by %s) + 80 MiB workspace; gradients %s\n",
		o->peak_phase, o->peak_term ? o->peak_term : "n/a", t->fw == FW_PYTORCH ? "are freed each step, so they peak apart from the activations"
						   : "stay resident (contiguous buffers)");
	fprintf(f, "  total = peak x (1 + %.0f%% fragmentation margin) + %.2f GB CUDA context "
		   "(both measured on an H200 with PyTorch 2.11: context 752-778 MiB, reserved/allocated 1.00-1.37)\n",
		100 * t->frag, t->cuda_context_bytes / 1e9);
	fprintf(f, "  calibration: bench/plan_memory.py, 26 GPT-2 training cases, worst error 1.7%% (bench/RESULTS.md)\n");
}

static void print_mem(struct pctx *p, const struct plan_mem *o, const struct plan_train *t)
{
	char b[32];
	struct table *tb = table_new(2);
	table_col(tb, 0, "per GPU", TABLE_LEFT);
	table_col(tb, 1, "memory", TABLE_RIGHT);
	const struct { const char *what; double v; } rows[] = {
		{ t->fw != FW_DEEPSPEED && t->prec != PREC_FP32 && !t->pure16 ? "weights (FP32 + 16-bit copies)" : "weights",
		  o->weights },
		{ "gradients", o->grads },
		{ "optimizer states", o->optimizer },
		{ "activations", o->activations },
		{ "loss (logits, incl. backward)", o->loss },
		{ "communication buffers", o->comm },
		{ "allocator workspace", o->workspace },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		table_row(tb);
		table_cell(tb, rows[i].what);
		table_cell(tb, gb(b, sizeof(b), rows[i].v));
	}
	table_row(tb);
	if (o->peak_term)
		table_cellf(tb, "peak allocated (%s, set by %s)", o->peak_phase, o->peak_term);
	else
		table_cellf(tb, "peak allocated (%s)", o->peak_phase);
	table_cell(tb, gb(b, sizeof(b), o->peak));
	table_row(tb);
	table_cell(tb, "CUDA context");
	table_cell(tb, gb(b, sizeof(b), o->context));
	table_row(tb);
	table_cellf(tb, "fragmentation margin (%.0f%%)", 100 * t->frag);
	table_cell(tb, gb(b, sizeof(b), o->fragmentation));
	table_row(tb);
	table_cell(tb, "total needed per GPU");
	table_cell(tb, gb(b, sizeof(b), o->total));
	if (o->cpu_offload > 0) {
		table_row(tb);
		table_cell(tb, "host memory for offloaded states");
		table_cell(tb, gb(b, sizeof(b), o->cpu_offload));
	}
	table_print(tb, p->ctx->out);
	table_free(tb);
	if (o->peak_term) { /* what the peak phase holds, by cause: the largest sets the peak */
		fprintf(p->ctx->out, "peak %s: set by %s; it holds", gb(b, sizeof(b), o->peak), o->peak_term);
		for (size_t k = 0; k < PART_COUNT; k++)
			fprintf(p->ctx->out, "%s %s %s", k ? "," : "", plan_part_name((enum plan_part)k),
				gb(b, sizeof(b), o->peak_parts[k]));
		fputc('\n', p->ctx->out);
	}
	if (!o->activations_known)
		fprintf(p->ctx->out, "activations: n/a (size-only model: the totals cover model states only)\n");
}

static json_t *mem_json(const struct plan_mem *o)
{
	json_t *j = json_object();
	json_num(j, "weights_bytes", o->weights);
	json_num(j, "gradients_bytes", o->grads);
	json_num(j, "optimizer_bytes", o->optimizer);
	json_num(j, "activations_bytes", o->activations);
	json_num(j, "loss_bytes", o->loss);
	json_num(j, "communication_bytes", o->comm);
	json_num(j, "workspace_bytes", o->workspace);
	json_num(j, "peak_allocated_bytes", o->peak);
	json_object_set_new(j, "peak_phase", json_string(o->peak_phase));
	json_object_set_new(j, "peak_term", o->peak_term ? json_string(o->peak_term) : json_null());
	json_t *parts = json_object();
	for (size_t k = 0; k < PART_COUNT; k++) {
		char key[32];
		snprintf(key, sizeof(key), "%s_bytes", plan_part_name((enum plan_part)k));
		json_num(parts, key, o->peak_parts[k]);
	}
	json_object_set_new(j, "peak_parts", parts);
	json_num(j, "cuda_context_bytes", o->context);
	json_num(j, "fragmentation_bytes", o->fragmentation);
	json_num(j, "total_bytes", o->total);
	json_num(j, "cpu_offload_bytes", o->cpu_offload);
	return j;
}

static json_t *lora_json(const struct plan_lora_mem *l, unsigned rank, bool qlora)
{
	json_t *o = json_object();
	json_object_set_new(o, "rank", json_integer(rank));
	json_object_set_new(o, "qlora", json_boolean(qlora));
	json_object_set_new(o, "adapter_params", json_real(l->adapter_params));
	json_object_set_new(o, "base_bytes", json_real(l->base_bytes));
	json_object_set_new(o, "adapter_bytes", json_real(l->adapter_bytes));
	json_object_set_new(o, "grads_bytes", json_real(l->grads));
	json_object_set_new(o, "optimizer_bytes", json_real(l->optimizer));
	json_object_set_new(o, "model_states_bytes", json_real(l->total));
	json_object_set_new(o, "measured", json_false());
	return o;
}

static void print_lora(FILE *f, const struct plan_lora_mem *l, unsigned rank, bool qlora)
{
	fprintf(f, "\n%s rank %u: %.4g M trainable parameters (adapters on every block's linear layers)\n",
		qlora ? "QLoRA" : "LoRA", rank, l->adapter_params / 1e6);
	fprintf(f, "  frozen base            %8.2f GB (%s)\n", l->base_bytes / 1e9, qlora ? "NF4 block weights, BF16 rest" : "BF16");
	fprintf(f, "  adapters (FP32)        %8.2f GB\n", l->adapter_bytes / 1e9);
	fprintf(f, "  adapter gradients      %8.2f GB\n", l->grads / 1e9);
	fprintf(f, "  AdamW states           %8.2f GB\n", l->optimizer / 1e9);
	fprintf(f, "  model states           %8.2f GB (replace weights, gradients and optimizer above;\n"
		   "  activations as above; not yet checked against a measured run)\n", l->total / 1e9);
}

int plan_train_cmd(struct pctx *p, int argc, char **argv)
{
	struct train_opts o = { .mfu = NAN, .spot_overhead = 0.10 }; /* NAN: not given */
	model_opts_init(&o.mo);
	plan_train_defaults(&o.t);
	int rc = plan_read_options(p, argc, argv, train_take, &o);
	if (rc)
		return rc;
	if (o.mfu > 1) {
		perr(p, "--mfu must be a fraction of peak between 0 and 1, not %g", o.mfu);
		return EXIT_USAGE;
	}
	struct plan_model m;
	if ((rc = model_build(p, &o.mo, &m)) || (rc = plan_load_catalog(p)))
		return rc;
	const struct cat_gpu *g = NULL;
	if (o.gpu && !(g = plan_gpu(p, o.gpu)))
		return EXIT_USAGE;
	struct plan_mem mem;
	char err[256];
	if (plan_train_memory(&m, &o.t, &mem, err, sizeof(err))) {
		perr(p, "%s", err);
		return EXIT_USAGE;
	}
	struct plan_lora_mem lora;
	if (o.qlora && !o.lora_rank) {
		perr(p, "--qlora needs --lora-rank R");
		return EXIT_USAGE;
	}
	if (o.lora_rank && plan_lora_memory(&m, o.lora_rank, o.qlora, &lora)) {
		perr(p, "--lora-rank needs the model's architecture (--model, --hf-config or --layers ...), not --params");
		return EXIT_USAGE;
	}
	struct train_plan_rates rates = { .gemm_tflops = NAN, .step_tflops = NAN };
	if (o.bench && (rc = plan_bench_rates(p, o.bench, &m, &o.t, &rates)))
		return rc;
	double gemm = rates.gemm_tflops;
	char mfu_from[96] = "option";
	unsigned gpus = o.t.dp * o.t.tp * o.t.pp;
	json_t *root = json_object(), *fits = json_array();
	json_object_set_new(root, "command", json_string("plan train"));
	json_object_set_new(root, "model", model_json(&m));
	json_t *cfg = json_object();
	json_object_set_new(cfg, "precision", json_string(plan_prec_name(o.t.prec)));
	json_object_set_new(cfg, "optimizer", json_string(plan_optim_name(o.t.optim)));
	json_object_set_new(cfg, "framework", json_string(plan_framework_name(o.t.fw)));
	json_object_set_new(cfg, "pure16", json_boolean(o.t.pure16));
	json_object_set_new(cfg, "checkpointing", json_string(plan_ckpt_name(o.t.ckpt)));
	json_object_set_new(cfg, "attention", json_string(plan_attn_name(o.t.attn)));
	json_object_set_new(cfg, "micro_batch", json_integer(o.t.micro_batch));
	json_object_set_new(cfg, "seq", json_integer(o.t.seq));
	json_object_set_new(cfg, "grad_accum", json_integer(o.t.grad_accum));
	json_object_set_new(cfg, "dp", json_integer(o.t.dp));
	json_object_set_new(cfg, "tp", json_integer(o.t.tp));
	json_object_set_new(cfg, "pp", json_integer(o.t.pp));
	json_object_set_new(cfg, "sp", json_boolean(o.t.sp));
	json_object_set_new(cfg, "zero", json_integer(o.t.zero));
	json_object_set_new(cfg, "offload", json_string(plan_offload_name(o.t.offload)));
	json_object_set_new(cfg, "gpus", json_integer(gpus));
	json_object_set_new(root, "config", cfg);
	json_object_set_new(root, "memory_per_gpu", mem_json(&mem));
	if (o.lora_rank)
		json_object_set_new(root, "lora", lora_json(&lora, o.lora_rank, o.qlora));

	/* which catalog GPUs fit, and with how many */
	struct plan_train z3 = o.t;
	z3.fw = FW_DEEPSPEED;
	z3.zero = 3;
	z3.offload = OFFLOAD_NONE;
	z3.pure16 = false;
	if (z3.prec == PREC_FP8 && o.t.fw != FW_DEEPSPEED)
		z3.prec = PREC_BF16;
	struct table *tb = table_new(5);
	table_col(tb, 0, "GPU", TABLE_LEFT);
	table_col(tb, 1, "memory", TABLE_RIGHT);
	table_col(tb, 2, "fits as given", TABLE_LEFT);
	table_col(tb, 3, "fewest GPUs", TABLE_RIGHT);
	table_col(tb, 4, "fewest with ZeRO-3", TABLE_RIGHT);
	for (size_t i = 0; i < p->cat.n; i++) {
		const struct cat_gpu *c = &p->cat.gpus[i];
		double cm = plan_gpu_mem(c);
		if (!(cm > 0))
			continue;
		unsigned n = plan_min_gpus(&m, &o.t, cm), n3 = plan_min_gpus(&m, &z3, cm);
		json_t *j = json_object();
		json_object_set_new(j, "gpu", json_string(c->key));
		json_num(j, "mem_bytes", cm);
		json_object_set_new(j, "fits", json_boolean(mem.total <= cm));
		json_object_set_new(j, "min_gpus", n ? json_integer(n) : json_null());
		json_object_set_new(j, "min_gpus_zero3", n3 ? json_integer(n3) : json_null());
		json_array_append_new(fits, j);
		table_row(tb);
		table_cell(tb, c->key);
		table_cellf(tb, "%.1f GB", cm / 1e9);
		table_cell(tb, mem.total <= cm ? "yes" : "no");
		bool shards = o.t.fw == FW_DEEPSPEED && o.t.zero;
		if (n)
			table_cellf(tb, "%u", n);
		else
			table_cell(tb, shards ? "none <= 4096" : "no (not sharded)");
		if (n3) table_cellf(tb, "%u", n3); else table_cell(tb, "none <= 4096");
	}
	json_object_set_new(root, "gpus", fits);

	unsigned maxb = 0, nhints = 0;
	struct plan_fit_hint hints[4];
	double peak = NAN, secs = NAN, flops = NAN;
	struct plan_rate rate = { .basis = PLAN_RATE_CATALOG };
	if (g) {
		maxb = plan_max_micro_batch(&m, &o.t, plan_gpu_mem(g));
		json_object_set_new(root, "gpu", json_string(g->key));
		json_object_set_new(root, "max_micro_batch", m.has_arch ? json_integer(maxb) : json_null());
		/* --mfu, a measured step, the measured GEMM or the datasheet with the calibrated share (steptime.c) */
		struct plan_rate_in in = { .fw = o.t.fw, .prec = plan_prec_name(o.t.prec),
					   .datasheet_tflops = plan_gpu_peak(g, o.t.prec), .gemm_tflops = gemm,
					   .step_tflops = rates.step_tflops, .step_row = rates.step_row, .mfu = o.mfu };
		if (plan_train_rate(&in, &rate) == 0) {
			peak = rate.peak_tflops;
			o.mfu = rate.mfu;
			if (rate.basis == PLAN_RATE_MEASURED)
				snprintf(mfu_from, sizeof(mfu_from), "bench results (%s)", rates.step_row);
			else if (rate.basis != PLAN_RATE_OPTION)
				snprintf(mfu_from, sizeof(mfu_from), "calibrated");
		}
		if (m.has_arch && maxb == 0) {
			/* it does not fit: no time or price for it, but what would make it fit */
			nhints = plan_fit_hints(&m, &o.t, plan_gpu_mem(g), hints, 4);
			json_t *jh = json_array();
			for (unsigned k = 0; k < nhints; k++)
				json_array_append_new(jh, json_pack("{s:s, s:s, s:i, s:i}", "what", hints[k].what, "flags",
								    hints[k].flags, "micro_batch", hints[k].micro_batch,
								    "gpus", hints[k].gpus));
			json_object_set_new(root, "fits", json_false());
			json_object_set_new(root, "fit_hints", jh);
		} else if (o.tokens > 0 && peak > 0) {
			flops = plan_train_flops(&m, &o.t, o.tokens);
			secs = plan_train_seconds(&m, &o.t, o.tokens, gpus, peak, o.mfu);
			json_t *tj = json_object();
			json_num(tj, "tokens", o.tokens);
			json_num(tj, "flops", flops);
			json_num(tj, "peak_tflops_per_gpu", peak);
			json_object_set_new(tj, "peak_from", json_string(isnan(gemm) ? "datasheet" : "bench results"));
			json_num(tj, "mfu", o.mfu);
			json_object_set_new(tj, "mfu_from", json_string(mfu_from));
			json_object_set_new(tj, "basis", json_string(plan_rate_basis_name(rate.basis)));
			json_object_set_new(tj, "basis_text", json_string(rate.basis_text));
			if (o.bench && isnan(rates.step_tflops))
				json_object_set_new(tj, "bench_mfu_not_used", json_string(rates.why_no_step));
			json_num(tj, "seconds", secs);
			json_num(tj, "gpu_hours", secs / 3600 * gpus);
			json_object_set_new(root, "time", tj);
		}
	}
	json_t *costs = json_array();
	if (g && o.tokens > 0 && isfinite(secs)) {
		if ((rc = plan_load_prices(p))) {
			table_free(tb);
			json_decref(costs);
			json_decref(root);
			return rc;
		}
		if (p->json)
			plan_cost_table(p, g->key, o.instance, gpus, secs / 3600, o.spot_overhead, costs);
	}
	if (p->json) {
		json_object_set_new(root, "cost", costs);
		json_dumpf(root, p->ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
		fputc('\n', p->ctx->out);
	} else {
		json_decref(costs);
		FILE *f = p->ctx->out;
		fprintf(f, "model: %s, %.4g B parameters", m.name, plan_model_params(&m) / 1e9);
		if (m.experts)
			fprintf(f, " (%.4g B active)", plan_model_active_params(&m) / 1e9);
		fprintf(f, "\ntraining: %s, %s, %s; micro-batch %u x seq %u, grad-accum %u; dp %u tp %u pp %u%s, "
			   "ZeRO-%u, offload %s; checkpointing %s, attention %s\n\n",
			plan_framework_name(o.t.fw), plan_prec_name(o.t.prec), plan_optim_name(o.t.optim),
			o.t.micro_batch, o.t.seq, o.t.grad_accum, o.t.dp, o.t.tp, o.t.pp, o.t.sp ? " +sp" : "", o.t.zero,
			plan_offload_name(o.t.offload), plan_ckpt_name(o.t.ckpt), plan_attn_name(o.t.attn));
		print_mem(p, &mem, &o.t);
		if (o.lora_rank)
			print_lora(f, &lora, o.lora_rank, o.qlora);
		fprintf(f, "\n");
		table_print(tb, f);
		if (g) {
			if (m.has_arch)
				fprintf(f, "\nlargest micro-batch on %s: %u\n", g->key, maxb);
			if (m.has_arch && maxb == 0) {
				fprintf(f, "it does not fit one %s as given, so it has no time or cost; what would make it fit:\n",
					g->key);
				for (unsigned k = 0; k < nhints; k++)
					fprintf(f, "  %s (%s): micro-batch up to %u%s\n", hints[k].what, hints[k].flags,
						hints[k].micro_batch, hints[k].gpus > 1 ? " per GPU" : "");
				if (!nhints)
					fprintf(f, "  none of 8-bit optimizer states, full checkpointing or ZeRO-3 over up to "
						   "4096 GPUs\n");
			}
			if (m.has_arch && maxb == 0)
				; /* no time or cost: said above */
			else if (o.tokens > 0 && !isfinite(secs))
				fprintf(f, "\ntime: n/a (the catalog has no %s peak for %s)\n", plan_prec_name(o.t.prec), g->key);
			else if (o.tokens > 0) {
				char ntok[48], nflops[48];
				fprintf(f, "\ntime for %s tokens: %s FLOPs / (%u GPU%s x %.1f TFLOP/s (%s %s) x MFU %.3f) = %.1f h "
					   "(%.0f GPU-hours)\n  basis: %s\n", numfmt(ntok, sizeof(ntok), o.tokens, 4),
					numfmt(nflops, sizeof(nflops), flops, 4), gpus, gpus == 1 ? "" : "s", peak, rate.peak_from,
					plan_prec_name(o.t.prec), o.mfu, secs / 3600, secs / 3600 * gpus, rate.basis_text);
				if (o.bench && isnan(rates.step_tflops))
					fprintf(f, "the bench results' training step is not used: %s\n", rates.why_no_step);
				plan_cost_table(p, g->key, o.instance, gpus, secs / 3600, o.spot_overhead, NULL);
			}
		}
		if (p->explain)
			explain(p, &m, &o.t, &mem);
	}
	table_free(tb);
	json_decref(root);
	return EXIT_OK;
}
