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

#include "bench/results_file.h"
#include "bench/train_plan.h"
#include "core/data_path.h"
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

int popt(struct pctx *p, int argc, char **argv, int *i, const char *name, const char **val)
{
	const char *a = argv[*i];
	size_t n = strlen(name);
	if (strncmp(a, "--", 2) != 0 || strncmp(a + 2, name, n) != 0)
		return 0;
	if (a[2 + n] == '=') {
		*val = a + 3 + n;
		return 1;
	}
	if (a[2 + n] != '\0')
		return 0;
	if (*i + 1 >= argc) {
		perr(p, "option '--%s' needs a value", name);
		return -1;
	}
	*val = argv[++*i];
	return 1;
}

int pnum(struct pctx *p, const char *flag, const char *s, double *out, bool allow_zero)
{
	char *end;
	/* decimal only: strtod also takes hex ("0x10"), "inf" and "nan" */
	size_t digits = strspn(s, "0123456789.eE+-");
	double v = strtod(s, &end);
	if (end == s || end > s + digits) {
		perr(p, "%s must be a number, not '%s'", flag, s);
		return -1;
	}
	switch (*end) {
	case 'k': case 'K': v *= 1e3; end++; break;
	case 'm': case 'M': v *= 1e6; end++; break;
	case 'b': case 'B': case 'g': case 'G': v *= 1e9; end++; break;
	case 't': case 'T': v *= 1e12; end++; break;
	default: break;
	}
	if (*end != '\0' || !isfinite(v)) {
		perr(p, "%s must be a number, not '%s'", flag, s);
		return -1;
	}
	if (v < 0 || (!allow_zero && v == 0)) {
		perr(p, "%s must be %s, not '%s'", flag, allow_zero ? "non-negative" : "positive", s);
		return -1;
	}
	*out = v;
	return 0;
}

int pwhole(struct pctx *p, const char *flag, const char *s, double *out, bool allow_zero)
{
	if (pnum(p, flag, s, out, allow_zero))
		return -1;
	if (*out != floor(*out) || *out > 1e9) {
		perr(p, "%s must be a whole number up to 1e9, not '%s'", flag, s);
		return -1;
	}
	return 0;
}

static int puint(struct pctx *p, const char *flag, const char *s, unsigned *out, bool allow_zero)
{
	double v;
	if (pwhole(p, flag, s, &v, allow_zero))
		return -1;
	*out = (unsigned)v;
	return 0;
}

int popt_uints(struct pctx *p, int argc, char **argv, int *i, const struct popt_uint *u, size_t n)
{
	const char *v;
	int r;
	for (size_t k = 0; k < n; k++)
		if ((r = popt(p, argc, argv, i, u[k].name, &v)) != 0) {
			char flag[40];
			snprintf(flag, sizeof(flag), "--%s", u[k].name);
			return r < 0 ? r : puint(p, flag, v, u[k].dst, u[k].zero_ok) ? -1 : 1;
		}
	return 0;
}

int popt_nums(struct pctx *p, int argc, char **argv, int *i, const struct popt_num *d, size_t n)
{
	const char *v;
	int r;
	for (size_t k = 0; k < n; k++)
		if ((r = popt(p, argc, argv, i, d[k].name, &v)) != 0) {
			char flag[40];
			snprintf(flag, sizeof(flag), "--%s", d[k].name);
			if (r < 0 || pnum(p, flag, v, d[k].dst, d[k].zero_ok))
				return -1;
			*d[k].dst *= d[k].scale;
			return 1;
		}
	return 0;
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
	char path[4096], err[256];
	if (data_path_find(p->ctx->data_dir, "catalog/gpus.json", path, sizeof(path))) {
		perr(p, "cannot find the GPU catalog 'catalog/gpus.json' (set --data-dir)");
		return EXIT_NOINPUT;
	}
	if (catalog_load(&p->cat, path, err, sizeof(err))) {
		perr(p, "%s", err);
		return EXIT_DATAERR;
	}
	p->cat_loaded = true;
	return 0;
}

static int load_json_file(struct pctx *p, const char *path, char **text, size_t *len)
{
	char err[512];
	*text = read_whole_file(path, 16u << 20, len, err, sizeof(err));
	if (!*text) {
		perr(p, "%s", err);
		return EXIT_NOINPUT;
	}
	return 0;
}

/* The shipped table is every *.json file in data/prices (one per provider), then --prices FILE. */
int plan_load_prices(struct pctx *p)
{
	if (p->prices_loaded)
		return 0;
	static const int code[] = { [PRICES_OK] = EXIT_OK, [PRICES_NOINPUT] = EXIT_NOINPUT,
				    [PRICES_BADDATA] = EXIT_DATAERR, [PRICES_NOMEM] = EXIT_SOFTWARE };
	char dir[4096], err[768];
	if (data_path_find(p->ctx->data_dir, "prices", dir, sizeof(dir))) {
		perr(p, "cannot find the price tables 'prices/' (set --data-dir)");
		return EXIT_NOINPUT;
	}
	enum plan_prices_status st = plan_prices_load_dir(&p->prices, dir, NULL, err, sizeof(err));
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
	if (!g)
		perr(p, "unknown GPU '%s' (see data/catalog/gpus.json for the keys, e.g. 'H200 SXM')", key);
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

int model_opt(struct pctx *p, int argc, char **argv, int *i, struct model_opts *o)
{
	const char *v;
	int r;
	const struct popt_uint u[] = {
		{ "layers", &o->layers, false }, { "hidden", &o->hidden, false }, { "heads", &o->heads, false },
		{ "kv-heads", &o->kv_heads, false }, { "vocab", &o->vocab, false }, { "ffn", &o->ffn, false },
		{ "max-pos", &o->max_pos, true }, { "experts", &o->experts, true },
		{ "experts-active", &o->experts_active, true },
	};
	if ((r = popt(p, argc, argv, i, "model", &v)) != 0) {
		o->preset = v;
		return r;
	}
	if ((r = popt(p, argc, argv, i, "params", &v)) != 0)
		return r < 0 ? r : pnum(p, "--params", v, &o->params, false) ? -1 : 1;
	if ((r = popt_uints(p, argc, argv, i, u, sizeof(u) / sizeof(u[0]))) != 0)
		return r;
	const struct { const char *on, *off; int *dst; } b[] = {
		{ "--gated-mlp", "--no-gated-mlp", &o->gated }, { "--tied", "--untied", &o->tied },
		{ "--bias", "--no-bias", &o->bias }, { "--layernorm", "--rmsnorm", &o->layernorm },
	};
	for (size_t k = 0; k < sizeof(b) / sizeof(b[0]); k++) {
		if (strcmp(argv[*i], b[k].on) == 0) {
			*b[k].dst = 1;
			return 1;
		}
		if (strcmp(argv[*i], b[k].off) == 0) {
			*b[k].dst = 0;
			return 1;
		}
	}
	return 0;
}

static int load_presets(struct pctx *p)
{
	if (p->presets.m)
		return 0;
	char path[4096], err[512];
	char *text;
	size_t len;
	int rc;
	if (data_path_find(p->ctx->data_dir, "plan/models.json", path, sizeof(path))) {
		perr(p, "cannot find the model presets 'plan/models.json' (set --data-dir)");
		return EXIT_NOINPUT;
	}
	if ((rc = load_json_file(p, path, &text, &len)))
		return rc;
	rc = plan_presets_parse(&p->presets, text, len, err, sizeof(err));
	free(text);
	if (rc) {
		perr(p, "%s: %s", path, err);
		return EXIT_DATAERR;
	}
	return 0;
}

int model_build(struct pctx *p, const struct model_opts *o, struct plan_model *m)
{
	memset(m, 0, sizeof(*m));
	int rc;
	if (o->preset) {
		if ((rc = load_presets(p)))
			return rc;
		const struct plan_model *pm = plan_presets_find(&p->presets, o->preset);
		if (!pm) {
			char names[512] = "";
			for (size_t i = 0; i < p->presets.n; i++)
				snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
					 p->presets.m[i].name);
			perr(p, "unknown model '%s' (presets: %s)", o->preset, names);
			return EXIT_USAGE;
		}
		*m = *pm;
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
	else if (o->heads && !o->preset) m->kv_heads = o->heads;
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
static const char sub_notes[] =
	"MODEL: --model PRESET | --params N | --layers N --hidden N --heads N [--kv-heads N] --vocab N [--ffn N]\n"
	"Numbers are decimal (7B, 1e9); counts are whole. See docs/plan.md for every option, the\n"
	"formulas and the JSON output.\n";
#define NSUBS (sizeof(sub_help) / sizeof(sub_help[0]))

int cmd_plan(int argc, char **argv, struct cmd_ctx *ctx)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		help_print_subs(argc < 2 ? ctx->err : ctx->out, "plan", sub_help, NSUBS, sub_notes);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	/* in sub_help's order; prices: it reads price tables (and so takes --prices FILE) */
	static const struct { int (*fn)(struct pctx *, int, char **); bool prices; } subs[NSUBS] = {
		{ plan_train_cmd, true }, { plan_serve_cmd, false }, { plan_cost_cmd, true }, { plan_mig_cmd, false },
	};
	for (size_t i = 0; i < NSUBS; i++) {
		if (strcmp(argv[1], sub_help[i].name) != 0)
			continue;
		if (help_asked(argc, argv, 2)) {
			help_print_sub(ctx->out, "plan", &sub_help[i], sub_notes);
			return EXIT_OK;
		}
		char sub[32];
		snprintf(sub, sizeof(sub), "plan %s", sub_help[i].name);
		struct pctx p = { .ctx = ctx, .sub = sub };
		/* flags every subcommand takes */
		int n = 0;
		char **rest = calloc((size_t)argc + 1, sizeof(char *));
		if (!rest)
			return EXIT_SOFTWARE;
		for (int k = 2; k < argc; k++) {
			const char *v;
			int r;
			if (strcmp(argv[k], "--json") == 0)
				p.json = true;
			else if (strcmp(argv[k], "--explain") == 0)
				p.explain = true;
			else if ((r = popt(&p, argc, argv, &k, "prices", &v)) != 0) {
				if (r < 0) {
					free(rest);
					return EXIT_USAGE;
				}
				p.prices_file = v;
			} else
				rest[n++] = argv[k];
		}
		int rc = EXIT_OK;
		if (p.prices_file && !subs[i].prices) {
			perr(&p, "'--prices' goes with plan train and plan cost");
			rc = EXIT_USAGE;
		} else if (p.prices_file) {
			rc = plan_load_prices(&p); /* a bad file is an error whatever else is asked */
		}
		if (!rc)
			rc = subs[i].fn(&p, n, rest);
		free(rest);
		if (p.cat_loaded)
			catalog_free(&p.cat);
		plan_presets_free(&p.presets);
		plan_prices_free(&p.prices);
		return rc;
	}
	cmd_error(ctx, "plan", "unknown subcommand '%s' (train, serve, cost, mig)", argv[1]);
	return EXIT_USAGE;
}

int plan_bench_rates(struct pctx *p, const char *path, const struct plan_model *m, const struct plan_train *t,
		     struct train_plan_rates *o)
{
	struct bench_run run;
	char err[512];
	FILE *f = fopen(path, "r");
	if (!f) {
		perr(p, "cannot open '%s': %s", path, strerror(errno));
		return EXIT_NOINPUT;
	}
	fclose(f);
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
