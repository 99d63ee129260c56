/* SPDX-License-Identifier: Apache-2.0 */
/* plan_cmd.h - shared by the files of `gpuctl plan` (plan.c: dispatch, options,
 * train; plan_serve.c; plan_cost.c; plan_mig.c). Not used outside src/cmd/plan*.c. */
#ifndef GPUCTL_PLAN_CMD_H
#define GPUCTL_PLAN_CMD_H

#include <jansson.h>
#include <stdbool.h>

#include "core/catalog.h"
#include "plan/plan.h"
#include "cmd.h"
#include "help.h"

struct pctx {
	struct cmd_ctx *ctx;
	const char *sub;          /* "plan train" ... for messages */
	bool json, explain;
	struct catalog cat;
	bool cat_loaded;
	struct plan_presets presets;
	struct plan_prices prices;
	bool prices_loaded;
	const char *prices_file;  /* --prices FILE, added to the shipped table */
	bool takes_prices;        /* train, cost */
	const struct cmd_help *help; /* the subcommand's: its option table, its messages' name */
};

/* Numbers with an optional K/M/B/G/T suffix ("7B", "1.5e12", "300k"): counts,
 * decimal (docs/units.md). -1 + message on error. */
int pnum(struct pctx *p, const char *flag, const struct opt_value *v, double *out, bool allow_zero);
void perr(struct pctx *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A count given as text: a whole number from 1 (0 with allow_zero) up to 1e9. */
int pwhole(struct pctx *p, const char *flag, const struct opt_value *v, double *out, bool allow_zero);
int puint(struct pctx *p, const char *flag, const struct opt_value *v, unsigned *out, bool allow_zero);

/* The first rows of every plan subcommand's option table (core/opts.h):
 * --json, --explain, --prices FILE (refused but by train and cost), read by
 * plan_read_options; then, for train and serve, the model's rows
 * (PLAN_MODEL_SPECS, read by model_take); then the subcommand's own. */
enum { PLAN_OPT_JSON, PLAN_OPT_EXPLAIN, PLAN_OPT_PRICES, PLAN_OPT_FIRST_OWN };
#define PLAN_COMMON_SPECS                                                                                      \
	[PLAN_OPT_JSON] = { "json", 0, OPT_FLAG, NULL, "machine-readable output (stable; see docs/json.md)", NULL, 0, 0, \
			    NULL },                                                                            \
	[PLAN_OPT_EXPLAIN] = { "explain", 0, OPT_FLAG, NULL, "each figure's formula and assumptions", NULL, 0, 0, NULL }, \
	[PLAN_OPT_PRICES] = { "prices", 0, OPT_STRING, "FILE", "train, cost: price rows added to the shipped table",   \
			      NULL, 0, 0, NULL }
enum {
	MODEL_OPT_MODEL = PLAN_OPT_FIRST_OWN, MODEL_OPT_PARAMS, MODEL_OPT_LAYERS, MODEL_OPT_HIDDEN, MODEL_OPT_HEADS,
	MODEL_OPT_KV_HEADS, MODEL_OPT_VOCAB, MODEL_OPT_FFN, MODEL_OPT_MAX_POS, MODEL_OPT_EXPERTS,
	MODEL_OPT_EXPERTS_ACTIVE, MODEL_OPT_GATED, MODEL_OPT_NO_GATED, MODEL_OPT_TIED, MODEL_OPT_UNTIED, MODEL_OPT_BIAS,
	MODEL_OPT_NO_BIAS, MODEL_OPT_LAYERNORM, MODEL_OPT_RMSNORM, MODEL_OPT_HF_CONFIG,
	MODEL_OPT_END /* a subcommand's own rows from here */
};
/* A count (a whole number, 1.5e9 and 7B allowed) from 0 to hi; a number of any kind from lo to hi. */
#define PLAN_COUNT_SPEC(id, name, help, hi) [id] = { name, 0, OPT_NUMBER, "N", help, NULL, 0, OPT_MILLI(hi), NULL }
/* A length in tokens (a sequence, a context): whole, K and M powers of 1024 (4k = 4096; docs/units.md). */
#define PLAN_LENGTH_SPEC(id, name, help, hi) [id] = { name, 0, OPT_LENGTH, "N", help, NULL, 0, hi, NULL }
#define PLAN_NUM_SPEC(id, name, arg, help, def, lo, hi)                                                        \
	[id] = { name, 0, OPT_NUMBER, arg, help, def, OPT_MILLI(lo), OPT_MILLI(hi), NULL }
#define PLAN_FLAG_SPEC(id, name, help) [id] = { name, 0, OPT_FLAG, NULL, help, NULL, 0, 0, NULL }
#define PLAN_MODEL_SPECS                                                                                       \
	[MODEL_OPT_MODEL] = { "model", 0, OPT_STRING, "PRESET", "a preset of data/plan/models.json (docs/plan.md)",  \
			      NULL, 0, 0, NULL },                                                              \
	PLAN_COUNT_SPEC(MODEL_OPT_PARAMS, "params", "only the size: parameters (7B, 1.5e9)", 1e15) ,             \
	PLAN_COUNT_SPEC(MODEL_OPT_LAYERS, "layers", "transformer blocks", 1e6),                                 \
	PLAN_COUNT_SPEC(MODEL_OPT_HIDDEN, "hidden", "hidden size", 1e9),                                        \
	PLAN_COUNT_SPEC(MODEL_OPT_HEADS, "heads", "attention heads", 1e6),                                      \
	PLAN_COUNT_SPEC(MODEL_OPT_KV_HEADS, "kv-heads", "key/value heads (default: heads)", 1e6),               \
	PLAN_COUNT_SPEC(MODEL_OPT_VOCAB, "vocab", "vocabulary size", 1e9),                                      \
	PLAN_COUNT_SPEC(MODEL_OPT_FFN, "ffn", "MLP width (default 4 x hidden)", 1e9),                           \
	PLAN_LENGTH_SPEC(MODEL_OPT_MAX_POS, "max-pos", "learned positions (0: none; 4k = 4096)", 1000000000),                      \
	PLAN_COUNT_SPEC(MODEL_OPT_EXPERTS, "experts", "MoE experts (0: dense)", 1e6),                           \
	PLAN_COUNT_SPEC(MODEL_OPT_EXPERTS_ACTIVE, "experts-active", "experts per token", 1e6),                  \
	PLAN_FLAG_SPEC(MODEL_OPT_GATED, "gated-mlp", "gated MLP (SwiGLU)"),                                     \
	PLAN_FLAG_SPEC(MODEL_OPT_NO_GATED, "no-gated-mlp", "plain MLP"),                                        \
	PLAN_FLAG_SPEC(MODEL_OPT_TIED, "tied", "tied input and output embeddings"),                             \
	PLAN_FLAG_SPEC(MODEL_OPT_UNTIED, "untied", "separate output embeddings"),                               \
	PLAN_FLAG_SPEC(MODEL_OPT_BIAS, "bias", "linear layers with biases"),                                    \
	PLAN_FLAG_SPEC(MODEL_OPT_NO_BIAS, "no-bias", "linear layers without biases"),                           \
	PLAN_FLAG_SPEC(MODEL_OPT_LAYERNORM, "layernorm", "LayerNorm"),                                          \
	PLAN_FLAG_SPEC(MODEL_OPT_RMSNORM, "rmsnorm", "RMSNorm"),                                                \
	[MODEL_OPT_HF_CONFIG] = { "hf-config", 0, OPT_STRING, "FILE",                                          \
				  "the shape from a Hugging Face config.json (options above override it)", NULL, 0, \
				  0, NULL }

/* Takes option opt of a subcommand's table (v its value) into the subcommand's
 * options at arg: 0, or -1 with the message printed. */
typedef int (*plan_take_fn)(struct pctx *p, int opt, const struct opt_value *v, void *arg);
/* Reads the subcommand's words (argv[0] its name) through its table: the
 * common rows here, every other option through take; then --prices (loaded
 * here, refused when p->takes_prices is false). 0, or the exit code after the
 * message. */
int plan_read_options(struct pctx *p, int argc, char **argv, plan_take_fn take, void *arg);

int plan_load_catalog(struct pctx *p);
int plan_load_prices(struct pctx *p);
/* The catalog GPU named by --gpu; prints "unknown GPU 'X'" and returns NULL. */
const struct cat_gpu *plan_gpu(struct pctx *p, const char *key);
double plan_gpu_mem(const struct cat_gpu *g);       /* bytes the driver reports (or marketed) */
double plan_gpu_peak(const struct cat_gpu *g, enum plan_prec prec); /* dense TFLOP/s */

/* What a `gpuctl bench --save` file (--bench-results) gives plan train's time estimate
 * (train_plan_rates); an error (printed, exit code returned) when it gives nothing. */
struct train_plan_rates;
int plan_bench_rates(struct pctx *p, const char *path, const struct plan_model *m, const struct plan_train *t,
		     struct train_plan_rates *o);

/* Model options shared by train and serve. */
struct model_opts {
	const char *preset, *hf_config;
	double params;
	unsigned layers, hidden, heads, kv_heads, vocab, ffn, max_pos, experts, experts_active;
	int gated, tied, bias, layernorm; /* -1 = not given */
};
void model_opts_init(struct model_opts *o);
/* Takes opt if it is one of PLAN_MODEL_SPECS: 1 taken, 0 not a model row, -1 error printed. */
int model_take(struct pctx *p, int opt, const struct opt_value *v, struct model_opts *o);
int model_build(struct pctx *p, const struct model_opts *o, struct plan_model *m);
json_t *model_json(const struct plan_model *m);

/* Human figures: "12.34 GB" (decimal) */
const char *gb(char *buf, size_t n, double bytes);
void json_num(json_t *o, const char *key, double v); /* NAN -> null */

/* Each subcommand's option table (PLAN_COMMON_SPECS first), for its --help too. */
extern const struct opt_spec plan_train_opts[], plan_serve_opts[], plan_cost_opts[], plan_mig_opts[];
extern const size_t plan_train_nopts, plan_serve_nopts, plan_cost_nopts, plan_mig_nopts;

int plan_train_cmd(struct pctx *p, int argc, char **argv);
int plan_serve_cmd(struct pctx *p, int argc, char **argv);
int plan_cost_cmd(struct pctx *p, int argc, char **argv);
int plan_mig_cmd(struct pctx *p, int argc, char **argv);

/* Cost rows for a job of `gpus` GPUs of model `gpu_key` over `hours` (train and cost). */
void plan_cost_table(struct pctx *p, const char *gpu_key, const char *instance, double gpus, double hours,
		     double spot_overhead, json_t *jarr);

#endif
