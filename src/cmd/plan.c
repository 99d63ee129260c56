/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plan.c - `gpuctl plan train|serve|cost|mig`: memory, GPU choice, time and cost of a
 * training or serving job, and MIG layouts. The arithmetic lives in src/plan/; this
 * file parses flags, loads the data files and prints (docs/plan.md).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/readfile.h"
#include "bench/results_file.h"
#include "bench/train_plan.h"
#include "core/data_path.h"
#include "core/suggest.h"
#include "plan/price_files.h"
#include "plan_cmd.h"
#include "help.h"

/* ---- shared helpers ------------------------------------------------------ */

void perr(struct pctx *p, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cmd_error(p->ctx, p->sub, "%s", msg);
}

/* The parser read the number and held it to its row's range (OPT_NUMBER); these
 * say what the range cannot: that it is positive, or whole. */
int pnum(struct pctx *p, const char *flag, const struct opt_value *v, double *out, bool allow_zero)
{
	if (!allow_zero && v->real == 0) {
		perr(p, "%s must be positive, not '%s'", flag, v->text);
		return -1;
	}
	*out = v->real;
	return 0;
}

int pwhole(struct pctx *p, const char *flag, const struct opt_value *v, double *out, bool allow_zero)
{
	if (pnum(p, flag, v, out, allow_zero))
		return -1;
	if (*out != floor(*out)) {
		perr(p, "%s must be a whole number, not '%s'", flag, v->text);
		return -1;
	}
	return 0;
}

int puint(struct pctx *p, const char *flag, const struct opt_value *v, unsigned *out, bool allow_zero)
{
	double d;
	if (pwhole(p, flag, v, &d, allow_zero))
		return -1;
	*out = (unsigned)d;
	return 0;
}

int plan_read_options(struct pctx *p, int argc, char **argv, plan_take_fn take, void *arg)
{
	struct opt_parser parser;
	struct opt_value v;
	int opt, rc;
	opt_init(&parser, argc, argv, p->help->opts, p->help->nopts);
	while ((opt = help_opt_next(p->ctx, p->help, &parser, &v, &rc)) != OPT_DONE) {
		if (opt == OPT_HELP) /* not reached: cmd_plan answers -h/--help (help_asked) before */
			return EXIT_OK;
		if (opt == OPT_ERROR)
			return rc;
		if (opt == PLAN_OPT_JSON)
			p->json = true;
		else if (opt == PLAN_OPT_EXPLAIN)
			p->explain = true;
		else if (opt == PLAN_OPT_PRICES)
			p->prices_file = v.text;
		else if (take(p, opt, &v, arg))
			return EXIT_USAGE;
	}
	if (p->prices_file && !p->takes_prices) {
		perr(p, "'--prices' goes with plan train and plan cost");
		return EXIT_USAGE;
	}
	return p->prices_file ? plan_load_prices(p) : 0; /* a bad file is an error whatever else is asked */
}

const char *gb(char *buf, size_t n, double bytes)
{
	if (isnan(bytes))
		snprintf(buf, n, "n/a");
	else
		snprintf(buf, n, "%.2f GB", bytes / 1e9);
	return buf;
}

void json_num(json_t *o, const char *key, double v)
{
	json_object_set_new(o, key, isfinite(v) ? json_real(v) : json_null());
}

int plan_load_catalog(struct pctx *p)
{
	if (p->cat_loaded)
		return 0;
	char err[512];
	if (catalog_load_dir(&p->cat, p->ctx->data_dir, err, sizeof(err))) {
		perr(p, "%s", err);
		return EXIT_DATAERR;
	}
	p->cat_loaded = true;
	return 0;
}

/* The shipped table is every *.json file in data/prices (one per provider), then --prices FILE. */
int plan_load_prices(struct pctx *p)
{
	if (p->prices_loaded)
		return 0;
	static const int code[] = { [PRICES_OK] = EXIT_OK, [PRICES_NOINPUT] = EXIT_NOINPUT,
				    [PRICES_BADDATA] = EXIT_DATAERR, [PRICES_NOMEM] = EXIT_SOFTWARE };
	char err[768];
	enum plan_prices_status st = plan_prices_load_default(&p->prices, p->ctx->data_dir, NULL, err, sizeof(err));
	if (st == PRICES_OK && p->prices_file)
		st = plan_prices_load_file(&p->prices, p->prices_file, err, sizeof(err));
	if (st != PRICES_OK) {
		perr(p, "%s", err);
		return code[st];
	}
	p->prices_loaded = true;
	return 0;
}

const struct cat_gpu *plan_gpu(struct pctx *p, const char *key)
{
	const struct cat_gpu *g = catalog_find(&p->cat, key);
	if (!g) {
		struct suggest near = SUGGEST_INIT(key);
		for (size_t i = 0; i < p->cat.n; i++)
			suggest_consider(&near, p->cat.gpus[i].key);
		char hint[200];
		if (near.best)
			perr(p, "unknown GPU '%s'%s", key, suggest_text(&near, hint, sizeof(hint)));
		else
			perr(p, "unknown GPU '%s' (see data/catalog/gpus.json for the keys, e.g. 'H200 SXM')", key);
	}
	return g;
}

double plan_gpu_mem(const struct cat_gpu *g)
{
	return g->mem_bytes ? (double)g->mem_bytes : g->mem_gb * 1e9;
}

double plan_gpu_peak(const struct cat_gpu *g, enum plan_prec prec)
{
	switch (prec) {
	case PREC_FP32: return g->tflops_fp32;
	case PREC_FP16: return g->tflops_fp16;
	case PREC_FP8: return g->tflops_fp8;
	case PREC_INT8: return isnan(g->tflops_int8) ? g->tflops_fp8 : g->tflops_int8;
	default: return g->tflops_bf16;
	}
}

/* ---- model options ------------------------------------------------------ */

void model_opts_init(struct model_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->gated = o->tied = o->bias = o->layernorm = -1;
}

int model_take(struct pctx *p, int opt, const struct opt_value *v, struct model_opts *o)
{
	char flag[40];
	const struct { unsigned *dst; bool zero_ok; } counts[] = {
		[MODEL_OPT_LAYERS - MODEL_OPT_LAYERS] = { &o->layers, false },
		[MODEL_OPT_HIDDEN - MODEL_OPT_LAYERS] = { &o->hidden, false },
		[MODEL_OPT_HEADS - MODEL_OPT_LAYERS] = { &o->heads, false },
		[MODEL_OPT_KV_HEADS - MODEL_OPT_LAYERS] = { &o->kv_heads, false },
		[MODEL_OPT_VOCAB - MODEL_OPT_LAYERS] = { &o->vocab, false },
		[MODEL_OPT_FFN - MODEL_OPT_LAYERS] = { &o->ffn, false },
		[MODEL_OPT_MAX_POS - MODEL_OPT_LAYERS] = { &o->max_pos, true },
		[MODEL_OPT_EXPERTS - MODEL_OPT_LAYERS] = { &o->experts, true },
		[MODEL_OPT_EXPERTS_ACTIVE - MODEL_OPT_LAYERS] = { &o->experts_active, true },
	};
	/* the on/off pairs, each on its row and off the next */
	int *const toggles[] = { &o->gated, &o->tied, &o->bias, &o->layernorm };
	if (opt < MODEL_OPT_MODEL || opt >= MODEL_OPT_END)
		return 0;
	opt_spelling(&p->help->opts[opt], flag, sizeof(flag));
	if (opt == MODEL_OPT_HF_CONFIG)
		o->hf_config = v->text;
	else if (opt == MODEL_OPT_MODEL)
		o->preset = v->text;
	else if (opt == MODEL_OPT_PARAMS)
		return pnum(p, flag, v, &o->params, false) ? -1 : 1;
	else if (opt < MODEL_OPT_GATED)
		return puint(p, flag, v, counts[opt - MODEL_OPT_LAYERS].dst, counts[opt - MODEL_OPT_LAYERS].zero_ok)
			       ? -1 : 1;
	else
		*toggles[(opt - MODEL_OPT_GATED) / 2] = (opt - MODEL_OPT_GATED) % 2 == 0;
	return 1;
}

static int load_presets(struct pctx *p)
{
	if (p->presets.m)
		return 0;
	char err[512];
	struct data_file f;
	if (data_file_read(p->ctx->data_dir, "plan/models.json", 16u << 20, &f, err, sizeof(err))) {
		perr(p, "%s", err);
		return EXIT_NOINPUT;
	}
	int rc = plan_presets_parse(&p->presets, f.text, f.len, err, sizeof(err));
	if (rc)
		perr(p, "%s: %s", f.name, err);
	data_file_free(&f);
	return rc ? EXIT_DATAERR : 0;
}

int model_build(struct pctx *p, const struct model_opts *o, struct plan_model *m)
{
	memset(m, 0, sizeof(*m));
	int rc;
	if (o->preset && o->hf_config) {
		perr(p, "--model and --hf-config exclude each other");
		return EXIT_USAGE;
	}
	if (o->preset) {
		if ((rc = load_presets(p)))
			return rc;
		const struct plan_model *pm = plan_presets_find(&p->presets, o->preset);
		if (!pm) {
			char names[512] = "";
			for (size_t i = 0; i < p->presets.n; i++)
				snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
					 p->presets.m[i].name);
			struct suggest near = SUGGEST_INIT(o->preset);
			for (size_t i = 0; i < p->presets.n; i++)
				suggest_consider(&near, p->presets.m[i].name);
			char hint[200];
			perr(p, "unknown model '%s'%s; presets: %s", o->preset, suggest_text(&near, hint, sizeof(hint)), names);
			return EXIT_USAGE;
		}
		*m = *pm;
	} else if (o->hf_config) {
		char err[512];
		size_t len = 0;
		char *text = read_whole_file(o->hf_config, 4u << 20, &len, err, sizeof(err));
		if (!text) {
			perr(p, "%s", err);
			return EXIT_NOINPUT;
		}
		rc = plan_hf_config_parse(text, len, m, err, sizeof(err));
		free(text);
		if (rc) {
			char q[80];
			perr(p, "%s: %s", units_quoted(o->hf_config, q), err);
			return EXIT_DATAERR;
		}
	} else if (o->layers || o->hidden) {
		m->has_arch = true;
		snprintf(m->name, sizeof(m->name), "custom");
		snprintf(m->source, sizeof(m->source), "given on the command line");
		m->ffn = 4 * o->hidden;
		m->kv_heads = o->heads;
	} else if (o->params > 0) {
		m->params_given = o->params;
		snprintf(m->name, sizeof(m->name), "%.3g B parameters", o->params / 1e9);
		snprintf(m->source, sizeof(m->source), "given on the command line (size only)");
		return 0;
	} else {
		perr(p, "give a model: --model NAME, --params N, or --layers/--hidden/--heads/--vocab");
		return EXIT_USAGE;
	}
	if (o->layers) m->layers = o->layers;
	if (o->hidden) m->hidden = o->hidden;
	if (o->heads) m->heads = o->heads;
	if (o->kv_heads) m->kv_heads = o->kv_heads;
	else if (o->heads && !o->preset && !o->hf_config) m->kv_heads = o->heads;
	if (o->vocab) m->vocab = o->vocab;
	if (o->ffn) m->ffn = o->ffn;
	if (o->max_pos) m->max_pos = o->max_pos;
	if (o->experts) m->experts = o->experts;
	if (o->experts_active) m->experts_active = o->experts_active;
	if (o->gated >= 0) m->gated_mlp = o->gated;
	if (o->tied >= 0) m->tied_embeddings = o->tied;
	if (o->bias >= 0) m->bias = o->bias;
	if (o->layernorm >= 0) m->layernorm = o->layernorm;
	char err[256];
	if (plan_model_validate(m, err, sizeof(err))) {
		perr(p, "%s", err);
		return EXIT_USAGE;
	}
	return 0;
}

json_t *model_json(const struct plan_model *m)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(m->name));
	json_object_set_new(o, "source", json_string(m->source));
	json_num(o, "params", plan_model_params(m));
	json_num(o, "active_params", plan_model_active_params(m));
	if (m->has_arch) {
		json_object_set_new(o, "layers", json_integer(m->layers));
		json_object_set_new(o, "hidden", json_integer(m->hidden));
		json_object_set_new(o, "heads", json_integer(m->heads));
		json_object_set_new(o, "kv_heads", json_integer(m->kv_heads));
		json_object_set_new(o, "vocab", json_integer(m->vocab));
		json_object_set_new(o, "ffn", json_integer(m->ffn));
		json_object_set_new(o, "experts", json_integer(m->experts));
		json_object_set_new(o, "experts_active", json_integer(m->experts_active));
	}
	return o;
}

/* ---- dispatch ----------------------------------------------------------- */

/* what `gpuctl plan [SUB] --help` says (help.h); the functions are in cmd_plan's table */
static const struct sub_help sub_help[] = {
	{ "train", "MODEL [training options] [--gpu KEY] [--tokens N] [--prices FILE] [--json] [--explain]",
	  "memory per GPU of a training job, the GPUs it fits on, the largest micro-batch;\n"
	  "with --gpu and --tokens its time and cost\n",
	  "0 planned, 64 a bad option, model or GPU, 65 a malformed price table, model preset or results file, "
	  "66 a file that cannot be read" },
	{ "serve", "MODEL [--weights PREC] [--kv PREC] [--tp N] [--context N] [--batch N] [--gpu KEY] [--json]",
	  "memory per GPU to serve a model (weights, KV cache) and the GPUs it fits on\n",
	  "0 planned, 64 a bad option, model or GPU, 65 a malformed model preset, 66 a file that cannot be read" },
	{ "cost", "--hours H [--gpus N | --instances N] [--gpu KEY] [--instance NAME]\n"
		  "                  [--buy PRICE --power-kw KW ...] [--prices FILE] [--json]",
	  "what a job of H hours costs at every matching price row; with --buy, rent against buy\n",
	  "0 planned, 64 a bad option or GPU, 65 a malformed price table, 66 a file that cannot be read" },
	{ "mig", "--gpu KEY [--request 3x1g.18gb,1x3g.71gb] [--json]",
	  "the MIG profiles of a GPU, and a layout of the instances asked for\n",
	  "0 planned, 1 no layout fits the request, 64 a bad option, GPU or request, 65/66 the catalog" },
};
/* train and serve take a MODEL; cost and mig do not (their help ends without it) */
#define SUB_NOTES_NUMBERS                                                                              \
	"Numbers are decimal (7B, 1e9); counts are whole. See docs/plan.md for every option, the\n"    \
	"formulas and the JSON output.\n"
static const char sub_notes[] =
	"MODEL: --model PRESET | --params N | --layers N --hidden N --heads N [--kv-heads N] --vocab N [--ffn N]\n"
	SUB_NOTES_NUMBERS;
static const char sub_notes_no_model[] = SUB_NOTES_NUMBERS;
#define NSUBS (sizeof(sub_help) / sizeof(sub_help[0]))

int cmd_plan(int argc, char **argv, struct cmd_ctx *ctx)
{
	int i = help_sub_find(ctx, "plan", sub_help, NSUBS, argc, argv);
	if (i == HELP_SUB_HELP)
		help_print_subs(ctx->out, "plan", sub_help, NSUBS, sub_notes);
	if (i < 0)
		return i == HELP_SUB_HELP ? EXIT_OK : EXIT_USAGE;
	/* in sub_help's order; prices: it reads price tables (and so takes --prices FILE);
	 * model: it takes a MODEL (its help explains it) */
	static const struct {
		int (*fn)(struct pctx *, int, char **);
		const struct opt_spec *opts;
		const size_t *nopts;
		bool prices, model;
	} subs[NSUBS] = {
		{ plan_train_cmd, plan_train_opts, &plan_train_nopts, true, true },
		{ plan_serve_cmd, plan_serve_opts, &plan_serve_nopts, false, true },
		{ plan_cost_cmd, plan_cost_opts, &plan_cost_nopts, true, false },
		{ plan_mig_cmd, plan_mig_opts, &plan_mig_nopts, false, false },
	};
	char sub[32];
	snprintf(sub, sizeof(sub), "plan %s", sub_help[i].name);
	const struct cmd_help help = { .name = sub, .usage = sub_help[i].usage, .what = sub_help[i].what,
				       .opts = subs[i].opts, .nopts = *subs[i].nopts, .notes = subs[i].model ? sub_notes : sub_notes_no_model,
				       .exits = sub_help[i].exits };
	if (help_asked(argc, argv, 2)) {
		help_print_cmd(ctx->out, &help);
		return EXIT_OK;
	}
	struct pctx p = { .ctx = ctx, .sub = sub, .help = &help, .takes_prices = subs[i].prices };
	int rc = subs[i].fn(&p, argc - 1, argv + 1);
	if (p.cat_loaded)
		catalog_free(&p.cat);
	plan_presets_free(&p.presets);
	plan_prices_free(&p.prices);
	return rc;
}

int plan_bench_rates(struct pctx *p, const char *path, const struct plan_model *m, const struct plan_train *t,
		     struct train_plan_rates *o)
{
	struct bench_run run;
	char err[512];
	/* no input (66) before bad data (65); stat, not open: a FIFO's open would wait for a writer */
	struct stat st;
	int srt = stat(path, &st);
	if (srt != 0 || !S_ISREG(st.st_mode)) {
		perr(p, "cannot open '%s': %s", path, srt != 0 ? strerror(errno) : "not a regular file");
		return EXIT_NOINPUT;
	}
	if (bench_results_load(&run, path, err, sizeof(err))) {
		perr(p, "%s", err);
		return EXIT_DATAERR;
	}
	train_plan_rates(&run, t->fw, t->prec, m, o);
	bench_run_free(&run);
	if (isnan(o->gemm_tflops) && isnan(o->step_tflops)) {
		perr(p, "'%s' has no GEMM %s result and no training step for this plan (%s; run gpuctl bench with the "
		     "compute or train suite)", path, plan_prec_name(t->prec), o->why_no_step);
		return EXIT_DATAERR;
	}
	return 0;
}
