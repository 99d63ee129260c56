/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plan.h - the capacity planner behind `gpuctl plan`: pure functions, no I/O.
 *
 *   model.c   model architectures, parameter counts, presets (data/plan/models.json)
 *   train.c   per-GPU training memory (weights, gradients, optimizer, activations,
 *             buffers, overhead), GPU fit, largest micro-batch, FLOPs and time
 *   steptime.c what a GPU delivers to a training step, per precision: measured here, or the
 *             catalog with shares calibrated on H200 runs (the time's one source)
 *   serve.c   inference memory, KV cache, concurrency, token-rate bounds, "fits" and what would
 *   cost.c    price table (the JSON files under data/prices), job cost, spot, rent-vs-buy
 *   mig.c     MIG layout search with the real placement rules
 *
 * Sizes are bytes (double: exact up to 2^53), times seconds, money in the
 * price table's currency. The formulas and their sources are in docs/plan.md.
 */
#ifndef GPUCTL_PLAN_H
#define GPUCTL_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/catalog.h"

/* ---- numeric formats ---------------------------------------------------- */
enum plan_prec { PREC_FP32 = 0, PREC_BF16, PREC_FP16, PREC_FP8, PREC_INT8, PREC_INT4, PREC_COUNT };
int plan_prec_parse(const char *s, enum plan_prec *out);
const char *plan_prec_name(enum plan_prec p);
double plan_prec_bytes(enum plan_prec p); /* 4, 2, 2, 1, 1, 0.5 */

/* Copies src for quoting in a one-line message: control characters become '?'. */
void plan_quote(char *dst, size_t n, const char *src);

/* ---- models ------------------------------------------------------------- */
struct plan_model {
	char name[48];
	char source[256];
	double params_given;     /* > 0 when the model is known only by its size */
	bool has_arch;           /* the fields below are set */
	unsigned layers, hidden, heads, kv_heads, vocab, ffn;
	unsigned max_pos;        /* learned position embeddings (GPT-2); 0 = rotary */
	bool gated_mlp;          /* SwiGLU: three ffn matrices instead of two */
	bool tied_embeddings;
	bool bias;               /* linear layers carry biases (GPT-2) */
	bool layernorm;          /* LayerNorm (weight+bias) rather than RMSNorm */
	unsigned experts, experts_active; /* MoE: experts per layer, routed per token; 0/0 = dense */
};

/* 0, or -1 with a one-line message naming the field ("heads 7 does not divide hidden 4096"). */
int plan_model_validate(const struct plan_model *m, char *err, size_t errlen);
double plan_model_params(const struct plan_model *m);        /* all parameters */
double plan_model_active_params(const struct plan_model *m); /* per token (MoE: routed experts only) */
double plan_model_layer_params(const struct plan_model *m);  /* one transformer block */
double plan_model_embed_params(const struct plan_model *m);  /* token (+position) embeddings and head */
double plan_model_matmul_params(const struct plan_model *m); /* weights used in matrix products */
double plan_model_largest_module(const struct plan_model *m);/* DeepSpeed's "largest layer" */
unsigned plan_model_head_dim(const struct plan_model *m);

/* A model's shape from a Hugging Face config.json (hfconfig.c): num_hidden_layers,
 * hidden_size, num_attention_heads, num_key_value_heads, vocab_size,
 * intermediate_size, num_local_experts/num_experts_per_tok, tie_word_embeddings
 * (GPT-2: n_layer, n_embd, n_head, n_positions, n_inner); model_type "gpt2" is
 * GPT-2's architecture, any other the Llama family's (RMSNorm, SwiGLU, rotary, no
 * biases unless attention_bias/mlp_bias). 0, or -1 with a one-line message. */
int plan_hf_config_parse(const char *json, size_t len, struct plan_model *m, char *err, size_t errlen);

/* LoRA / QLoRA fine-tuning's model states (lora.c): adapters of rank r on every
 * block's linear layers, FP32 with AdamW; the base frozen in BF16, or (qlora) its
 * block linears in NF4 with double quantization. Bytes per GPU without parallelism.
 * Not yet checked against a measured run. -1 without the architecture or with r = 0. */
struct plan_lora_mem {
	double adapter_params, base_linear_params, base_other_params;
	double base_bytes, adapter_bytes, grads, optimizer, total;
};
int plan_lora_memory(const struct plan_model *m, unsigned rank, bool qlora, struct plan_lora_mem *o);

struct plan_presets { size_t n; struct plan_model *m; };
int plan_presets_parse(struct plan_presets *p, const char *json, size_t len, char *err, size_t errlen);
void plan_presets_free(struct plan_presets *p);
const struct plan_model *plan_presets_find(const struct plan_presets *p, const char *name);

/* ---- training ----------------------------------------------------------- */
/* adamw: PyTorch's default on CUDA, foreach (one temporary per parameter in its step);
 * adamw-fused: fused=True (none). */
enum plan_optim { OPT_ADAMW = 0, OPT_ADAM8BIT, OPT_SGD, OPT_ADAMW_FUSED };
enum plan_ckpt { CKPT_NONE = 0, CKPT_SELECTIVE, CKPT_FULL };
enum plan_attn { ATTN_FLASH = 0, ATTN_EAGER };
/* pytorch: plain PyTorch (torch.autocast, FP32 weights, gradients freed each step,
 * foreach AdamW), calibrated on bench/plan_memory.py. deepspeed: ZeRO/Megatron style
 * (16-bit weights and gradients resident, FP32 master weights with the optimizer).
 * transformers: Hugging Face transformers 5.17 models (GPT2LMHeadModel, LlamaForCausalLM,
 * Qwen2ForCausalLM, MixtralForCausalLM) trained as the Trainer does, measured by
 * bench/hf_plan_memory.py (hf.c). gpuctl: gpuctl's own GPT-2 step (`bench -s train`,
 * gpuctl_step.c): GPT-2 architectures only, fp32 or bf16, plain DDP. */
enum plan_framework { FW_PYTORCH = 0, FW_DEEPSPEED, FW_HF, FW_GPUCTL };
enum plan_offload { OFFLOAD_NONE = 0, OFFLOAD_OPTIMIZER, OFFLOAD_PARAMS };

int plan_optim_parse(const char *s, enum plan_optim *out);
int plan_ckpt_parse(const char *s, enum plan_ckpt *out);
int plan_attn_parse(const char *s, enum plan_attn *out);
int plan_framework_parse(const char *s, enum plan_framework *out);
int plan_offload_parse(const char *s, enum plan_offload *out);
const char *plan_optim_name(enum plan_optim o);
const char *plan_ckpt_name(enum plan_ckpt c);
const char *plan_attn_name(enum plan_attn a);
const char *plan_framework_name(enum plan_framework f);
const char *plan_offload_name(enum plan_offload o);

struct plan_train {
	enum plan_prec prec;      /* FP32, BF16/FP16 (mixed), FP8 (deepspeed only) */
	enum plan_optim optim;
	enum plan_ckpt ckpt;
	enum plan_attn attn;
	enum plan_framework fw;
	bool dropout;             /* dropout masks stored (1 byte per element) */
	unsigned micro_batch, seq, grad_accum;
	unsigned dp, tp, pp;      /* data, tensor, pipeline parallel degrees */
	bool sp;                  /* sequence parallelism (with tp) */
	unsigned zero;            /* 0..3 (deepspeed) */
	enum plan_offload offload;
	bool pure16;              /* transformers: 16-bit weights and optimizer states, no autocast */
	double frag;              /* allocator fragmentation margin, fraction of the peak */
	double cuda_context_bytes;/* per process, outside the allocator */
};
void plan_train_defaults(struct plan_train *t);

/* One term of a memory model, for --explain: what it is, its formula with the numbers
 * plugged in, and the measurement it rests on. */
#define PLAN_TERMS_MAX 20
struct plan_term {
	const char *name;
	char formula[192];
	const char *evidence;
	double bytes;
};

/* The causes the peak is split into (plan train says which one sets it). */
enum plan_part {
	PART_WEIGHTS = 0, /* weights, their 16-bit copies, cuBLAS workspaces, DDP buckets */
	PART_GRADS,       /* gradients */
	PART_OPTIMIZER,   /* optimizer states and the step's temporaries */
	PART_ACTIVATIONS, /* what the forward saved for backward (checkpointing: block inputs) */
	PART_LOGITS,      /* the logits, their FP32 copies, log-probabilities and loss gradients */
	PART_RECOMPUTE,   /* one block recomputed (checkpointing) or its backward in flight */
	PART_COUNT
};
const char *plan_part_name(enum plan_part p);

/* Per-GPU memory in bytes. */
struct plan_mem {
	double weights;        /* incl. 16-bit copies held during forward/backward */
	double grads;
	double optimizer;      /* master weights and moments held by the optimizer */
	double activations;    /* NAN when the architecture is unknown */
	double loss;           /* logits kept for the loss and its backward transient */
	double comm;           /* communication buffers (ZeRO buckets, DDP buckets, gathers) */
	double transient;      /* what the peak phase adds beyond the resident terms */
	double workspace;      /* allocator-held workspace (cuBLAS) */
	double peak;           /* peak allocated by the framework (max_memory_allocated) */
	double context;        /* CUDA context and kernels, outside the allocator */
	double fragmentation;  /* allocator margin over the peak */
	double total;          /* what must fit in the GPU */
	double cpu_offload;    /* host memory for offloaded states */
	const char *peak_phase;/* "backward start", "backward end", "optimizer step" */
	/* What the peak phase holds, by cause (sums to peak), and the largest of them: what
	 * sets the peak. */
	double peak_parts[PART_COUNT];
	const char *peak_term; /* plan_part_name() of the largest part; NULL when a part is not known */
	bool activations_known;
	unsigned nterms;       /* transformers: every term and phase, for --explain */
	struct plan_term terms[PLAN_TERMS_MAX];
};
/* Fills *o; returns 0, or -1 with a message. */
int plan_train_memory(const struct plan_model *m, const struct plan_train *t, struct plan_mem *o,
		      char *err, size_t errlen);
/* Sets o->peak_term to the largest of o->peak_parts (the frameworks' models fill the parts),
 * NULL when one of them is not known (NAN). */
void plan_mem_set_peak_term(struct plan_mem *o);
/* Activation bytes per GPU (exported for the tests and --explain). */
double plan_activation_bytes(const struct plan_model *m, const struct plan_train *t);
/* Largest micro-batch (>= 1) whose total fits in mem_bytes; 0 when none does. */
unsigned plan_max_micro_batch(const struct plan_model *m, const struct plan_train *t, double mem_bytes);
/* The fewest GPUs (dp x tp x pp, dp up to 4096 when the states are sharded) on
 * which the job fits in mem_bytes per GPU; 0 when none (fit.c). */
unsigned plan_min_gpus(const struct plan_model *m, const struct plan_train *t, double mem_bytes);
/* What would make a job that does not fit one GPU of mem_bytes fit: 8-bit
 * optimizer states, full checkpointing (or both, when neither alone does),
 * ZeRO-3 shards over the fewest GPUs; each with the flags that ask for it and
 * the largest micro-batch it allows. Returns how many (at most max). */
struct plan_fit_hint {
	char what[96], flags[96];
	unsigned micro_batch, gpus;
};
unsigned plan_fit_hints(const struct plan_model *m, const struct plan_train *t, double mem_bytes,
			struct plan_fit_hint *out, unsigned max);

/* transformers (hf.c): fills *o for t->fw == FW_HF after plan_train_validate. */
void plan_hf_train_memory(const struct plan_model *m, const struct plan_train *t, struct plan_mem *o);
/* gpuctl's own step (gpuctl_step.c): fills *o for t->fw == FW_GPUCTL after validation. */
void plan_gpuctl_train_memory(const struct plan_model *m, const struct plan_train *t, struct plan_mem *o);
/* Activation bytes the transformers model saves for backward (without the loss). */
double plan_hf_activation_bytes(const struct plan_model *m, const struct plan_train *t);
/* Bytes one transformers prefill of `tokens` prompt tokens in `seqs` sequences holds
 * beyond the weights and the KV cache (whole prompt in one forward, last logits only). */
double plan_hf_prefill_bytes(const struct plan_model *m, double tokens, double seqs, bool eager);
/* What a decode step of generate() holds beyond the weights and the KV cache at `context`. */
double plan_hf_decode_bytes(const struct plan_model *m, double seqs, double context);

/* Training FLOPs for `tokens` (6 x active params + attention, x 4/3 with full recompute). */
double plan_train_flops(const struct plan_model *m, const struct plan_train *t, double tokens);
/* Seconds to train `tokens` on `gpus` GPUs of peak_tflops each at mfu (a fraction of
 * that peak): plan_train_flops / (gpus x peak x mfu). */
double plan_train_seconds(const struct plan_model *m, const struct plan_train *t, double tokens, double gpus,
			  double peak_tflops, double mfu);

/* What one GPU delivers to a training step (steptime.c, docs/plan.md "Time"): the peak
 * the MFU is a share of, and where the figure comes from. Precisions are words: "fp32"
 * (TF32 off), "tf32", "bf16", "fp16", "fp8". */
struct plan_step_calib {
	enum plan_framework fw;   /* whose runs: FW_GPUCTL (bench -s train) or FW_HF (transformers) */
	const char *prec;         /* "bf16", "tf32", "fp32" */
	double of_datasheet;      /* step TFLOP/s (planner FLOPs) over the catalog's dense peak */
	double of_gemm;           /* over the same call's measured cuBLAS GEMM */
	unsigned runs;            /* measured runs behind of_datasheet */
	double worst_pct;         /* the step time's worst |error| over them */
	unsigned gemm_runs;       /* runs with a GEMM in the same call, behind of_gemm */
	double gemm_worst_pct;
};
/* The calibration used for a framework and precision: gpuctl's own for FW_GPUCTL,
 * transformers' for the others; fp16 and fp8 take bf16's. note says what was
 * borrowed ("" when the entry is the plan's own). NULL for an unknown word. */
const struct plan_step_calib *plan_step_calibration(enum plan_framework fw, const char *prec, char *note,
						    size_t notelen);
const struct plan_step_calib *plan_step_calibrations(size_t *n); /* every entry (tests, docs) */

enum plan_rate_basis { PLAN_RATE_OPTION = 0, PLAN_RATE_MEASURED, PLAN_RATE_GEMM, PLAN_RATE_CATALOG };
const char *plan_rate_basis_name(enum plan_rate_basis b); /* "measured here", "catalog, calibrated on H200 runs" */
struct plan_rate_in {
	enum plan_framework fw;
	const char *prec;         /* the word, as above */
	double datasheet_tflops;  /* the catalog's dense peak of prec; <= 0 or NAN: unknown */
	double gemm_tflops;       /* the GEMM of prec measured here (bench results); NAN: none */
	double step_tflops;       /* a training step of prec and fw measured here, in planner FLOPs; NAN: none */
	const char *step_row;     /* its name, "train 124M bf16" */
	double mfu;               /* --mfu; NAN: not given */
};
struct plan_rate {
	double peak_tflops;       /* the measured GEMM, else the datasheet */
	double mfu;               /* the share of it a step reaches */
	enum plan_rate_basis basis;
	char peak_from[24];       /* "measured GEMM", "datasheet" */
	char basis_text[200];     /* "catalog, calibrated on H200 runs (gpuctl bf16: 0.282 of the datasheet, within 8%)" */
};
/* The first basis that applies: --mfu, a measured step, the measured GEMM x the calibrated
 * share, the datasheet x the calibrated share. 0, or -1 when no peak is known. */
int plan_train_rate(const struct plan_rate_in *in, struct plan_rate *o);

/* ---- serving ------------------------------------------------------------ */
struct plan_serve {
	enum plan_prec wprec;     /* weights (INT8/INT4 apply to the blocks' linear layers) */
	enum plan_prec kvprec;    /* KV cache */
	unsigned tp;
	unsigned context;         /* tokens per sequence (prompt + output) */
	unsigned batch;           /* concurrent sequences asked for (0 = as many as fit) */
	unsigned prefill_chunk;   /* tokens per prefill pass (0 = context x batch) */
	bool hf_engine;           /* transformers generate(): the whole prompt in one prefill */
	bool eager;               /* transformers eager attention (scores materialized) */
	double mem_util;          /* fraction of GPU memory the server may use (vLLM-style) */
	double cuda_context_bytes;
};
void plan_serve_defaults(struct plan_serve *s);
struct plan_serve_result {
	double weights;           /* per GPU */
	double kv_per_token;      /* whole model, bytes */
	double kv_per_token_gpu;  /* per GPU under TP */
	double kv_bytes;          /* per GPU for batch x context */
	double workspace;         /* prefill activations + allocator workspace */
	double peak;              /* weights + KV + workspace (allocated) */
	double total;             /* + CUDA context */
	double kv_budget;         /* per GPU memory left for KV at mem_util */
	double max_tokens;        /* tokens that fit in the KV budget */
	unsigned max_seqs;        /* sequences of `context` tokens that fit */
	double decode_tok_s;      /* upper bound from memory bandwidth, whole batch */
	double decode_tok_s_seq;  /* per sequence */
	double prefill_tok_s;     /* upper bound from compute */
};
int plan_serve_compute(const struct plan_model *m, const struct plan_serve *s, const struct cat_gpu *g,
		       double mem_bytes, double peak_tflops, struct plan_serve_result *r, char *err, size_t errlen);
double plan_kv_bytes_per_token(const struct plan_model *m, enum plan_prec kvprec);

/* Serving fits when the sequences asked (s->batch, or one when 0) of s->context tokens fit
 * beside the weights and workspace within s->mem_util of mem_bytes: the weights fitting is
 * not enough. When they do not, what would: fewer sequences (max_seqs, when some fit), the
 * longest context at which the asked sequences fit, a one-byte (FP8/INT8) KV cache, and the
 * fewest tensor-parallel GPUs (s->tp doubled, up to PLAN_SERVE_MAX_TP; not with engine hf). */
#define PLAN_SERVE_MAX_TP 64
struct plan_serve_fit {
	bool fits;
	unsigned want;            /* sequences asked: s->batch, or 1 */
	unsigned max_seqs;        /* sequences of s->context that fit as given */
	unsigned max_context;     /* not fitting: the longest context for `want` sequences (0: none) */
	enum plan_prec kv_alt;    /* not fitting: PREC_FP8 when a one-byte KV cache holds `want`, else PREC_COUNT */
	unsigned kv_alt_seqs;     /* sequences that fit with it */
	unsigned tp_alt;          /* not fitting: the fewest tensor-parallel GPUs that hold `want` (0: none) */
	unsigned tp_alt_seqs;     /* sequences that fit with them */
};
int plan_serve_fit(const struct plan_model *m, const struct plan_serve *s, const struct cat_gpu *g, double mem_bytes,
		   struct plan_serve_fit *f, char *err, size_t errlen);
/* "fits (31 x 4096-token sequences)", or "does not fit (0 x 4096-token sequences); would: context
 * 1024, FP8/INT8 KV cache (3 sequences), tp 2 (31 sequences)". */
void plan_serve_fit_text(const struct plan_serve_fit *f, const struct plan_serve *s, char *out, size_t len);

/* ---- prices and cost ---------------------------------------------------- */
struct plan_price {
	char instance[48], provider[32], gpu_model[32], region[32], currency[8], date[16];
	char source[256];
	unsigned gpus;
	double on_demand, reserved_1y, reserved_3y, spot; /* per instance-hour; NAN = not offered/known */
	double capacity_block; /* a reservation of a fixed block of time paid up front (AWS Capacity Blocks);
				* an optional column, NAN when absent */
};
struct plan_prices { size_t n; struct plan_price *p; };
int plan_prices_parse(struct plan_prices *pr, const char *json, size_t len, char *err, size_t errlen);
int plan_prices_append(struct plan_prices *dst, const struct plan_prices *src, char *err, size_t errlen);
void plan_prices_free(struct plan_prices *pr);

enum plan_pricing { PRICE_ON_DEMAND = 0, PRICE_1Y, PRICE_3Y, PRICE_SPOT, PRICE_CAPACITY_BLOCK, PRICE_COUNT };
const char *plan_pricing_name(enum plan_pricing p);
double plan_price_rate(const struct plan_price *p, enum plan_pricing k);
/* Cost of running `instances` for `hours`; spot adds `spot_overhead` (0.1 = 10%) of
 * the hours for interruptions. NAN when the row has no such price. */
double plan_job_cost(const struct plan_price *p, enum plan_pricing k, double instances, double hours,
		     double spot_overhead);

struct plan_buy {
	double purchase;        /* server price */
	double power_kw;        /* average draw */
	double pue;
	double kwh_price;
	double other_per_year;  /* colocation, support, staff share */
	double years;           /* depreciation period */
	double utilization;     /* fraction of hours the server is busy */
};
struct plan_breakeven {
	double own_per_hour;       /* cost per busy hour when owning, over the years */
	double power_per_hour;     /* electricity per busy hour */
	double rent_per_hour;
	double breakeven_hours;    /* busy hours after which buying is cheaper; INF if never */
	double breakeven_months;   /* at the utilization */
	double rent_total, own_total; /* over the years at the utilization */
};
int plan_breakeven(const struct plan_buy *b, double rent_per_hour, struct plan_breakeven *o, char *err,
		   size_t errlen);

/* ---- MIG ---------------------------------------------------------------- */
#define PLAN_MIG_MAX 16
struct plan_mig_req { char profile[MIG_PROFILE_LEN]; unsigned count; };
struct plan_mig_slot { char profile[MIG_PROFILE_LEN]; unsigned mem_start, mem_size, cmp_start, cmp_size; };
struct plan_mig_layout { unsigned n; struct plan_mig_slot s[PLAN_MIG_MAX]; };
/* "3x1g.18gb,1x3g.71gb" (a count may be left out; "3g" names the smallest 3g profile). */
int plan_mig_parse(const struct cat_gpu *g, const char *spec, struct plan_mig_req *reqs, unsigned *nreq,
		   char *err, size_t errlen);
/* Start positions allowed for profile i (memory-slice index), derived from the slice counts. */
unsigned plan_mig_placements(const struct cat_gpu *g, unsigned i, unsigned *starts, unsigned max);
/* 0 and a layout, or -1 with the reason none exists. */
int plan_mig_layout(const struct cat_gpu *g, const struct plan_mig_req *reqs, unsigned nreq,
		    struct plan_mig_layout *out, char *why, size_t whylen);
/* The `nvidia-smi mig -cgi` argument that creates the layout's GPU instances
 * at their positions: "3g.71gb:0,1g.18gb:4,..." (profile:placement start,
 * the memory slice, as `nvidia-smi mig -lgipp` numbers it). Returns the
 * length, or -1 when it does not fit in outlen. */
int plan_mig_cgi(const struct plan_mig_layout *l, char *out, size_t outlen);

#endif
