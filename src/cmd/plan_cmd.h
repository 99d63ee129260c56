/* plan_cmd.h - shared by the files of `gpuctl plan` (plan.c: dispatch, options,
 * train; plan_serve.c; plan_cost.c; plan_mig.c). Not used outside src/cmd/plan*.c. */
#ifndef GPUCTL_PLAN_CMD_H
#define GPUCTL_PLAN_CMD_H

#include <jansson.h>
#include <stdbool.h>

#include "core/catalog.h"
#include "plan/plan.h"
#include "cmd.h"

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
};

/* "--name VALUE" or "--name=VALUE" at argv[*i]: 1 and *val set (i advanced), 0 when
 * argv[*i] is another option, -1 (message printed) when the value is missing. */
int popt(struct pctx *p, int argc, char **argv, int *i, const char *name, const char **val);
/* Numbers with an optional K/M/B/G/T suffix ("7B", "1.5e12", "300k"). -1 + message on error. */
int pnum(struct pctx *p, const char *flag, const char *s, double *out, bool allow_zero);
void perr(struct pctx *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A table of "--name NUMBER" options: popt on each name, then puint (popt_uints) or
 * pnum and *dst *= scale (popt_nums). 1 when one matched, 0 when none, -1 on error. */
struct popt_uint { const char *name; unsigned *dst; bool zero_ok; };
struct popt_num { const char *name; double *dst; double scale; bool zero_ok; };
/* A count given as text: a whole number from 1 (0 with allow_zero) up to 1e9. */
int pwhole(struct pctx *p, const char *flag, const char *s, double *out, bool allow_zero);
int popt_uints(struct pctx *p, int argc, char **argv, int *i, const struct popt_uint *u, size_t n);
int popt_nums(struct pctx *p, int argc, char **argv, int *i, const struct popt_num *d, size_t n);

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
	const char *preset;
	double params;
	unsigned layers, hidden, heads, kv_heads, vocab, ffn, max_pos, experts, experts_active;
	int gated, tied, bias, layernorm; /* -1 = not given */
};
void model_opts_init(struct model_opts *o);
int model_opt(struct pctx *p, int argc, char **argv, int *i, struct model_opts *o); /* 1, 0, -1 */
int model_build(struct pctx *p, const struct model_opts *o, struct plan_model *m);
json_t *model_json(const struct plan_model *m);

/* Human figures: "12.34 GB" (decimal) */
const char *gb(char *buf, size_t n, double bytes);
void json_num(json_t *o, const char *key, double v); /* NAN -> null */

int plan_train_cmd(struct pctx *p, int argc, char **argv);
int plan_serve_cmd(struct pctx *p, int argc, char **argv);
int plan_cost_cmd(struct pctx *p, int argc, char **argv);
int plan_mig_cmd(struct pctx *p, int argc, char **argv);

/* Cost rows for a job of `gpus` GPUs of model `gpu_key` over `hours` (train and cost). */
void plan_cost_table(struct pctx *p, const char *gpu_key, const char *instance, double gpus, double hours,
		     double spot_overhead, json_t *jarr);

#endif
