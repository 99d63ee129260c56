/* SPDX-License-Identifier: Apache-2.0 */
/* claims.c - see claims.h. */
#include "claims.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/data_path.h"

static int str_field(json_t *o, const char *k, char *out, size_t len, bool required, const char *id, char *err,
		     size_t errlen)
{
	json_t *v = json_object_get(o, k);
	out[0] = '\0';
	if (!v)
		goto missing;
	if (!json_is_string(v) || json_string_length(v) >= len) {
		snprintf(err, errlen, "claim '%s': '%s' is not a string of at most %zu characters", id, k, len - 1);
		return -1;
	}
	snprintf(out, len, "%s", json_string_value(v));
	return 0;
missing:
	if (required) {
		snprintf(err, errlen, "claim '%s': '%s' is missing", id, k);
		return -1;
	}
	return 0;
}

static int sel_field(json_t *o, const char *k, struct claim_sel *s, bool required, const char *id, char *err,
		     size_t errlen)
{
	memset(s, 0, sizeof(*s));
	json_t *v = json_object_get(o, k);
	if (!v) {
		if (required) {
			snprintf(err, errlen, "claim '%s': '%s' is missing", id, k);
			return -1;
		}
		return 0;
	}
	if (!json_is_object(v)) {
		snprintf(err, errlen, "claim '%s': '%s' is not an object", id, k);
		return -1;
	}
	if (str_field(v, "suite", s->suite, sizeof(s->suite), true, id, err, errlen) ||
	    str_field(v, "test", s->test, sizeof(s->test), true, id, err, errlen) ||
	    str_field(v, "variant", s->variant, sizeof(s->variant), false, id, err, errlen))
		return -1;
	return 0;
}

static int parse_claim(json_t *o, struct claim *c, size_t idx, char *err, size_t errlen)
{
	char kind[16];
	char where[32];
	snprintf(where, sizeof(where), "#%zu", idx);
	memset(c, 0, sizeof(*c));
	if (!json_is_object(o)) {
		snprintf(err, errlen, "claim %s is not an object", where);
		return -1;
	}
	if (str_field(o, "id", c->id, sizeof(c->id), true, where, err, errlen))
		return -1;
	const char *id = c->id;
	if (str_field(o, "source", c->source, sizeof(c->source), false, id, err, errlen) ||
	    str_field(o, "claim", c->text, sizeof(c->text), true, id, err, errlen) ||
	    str_field(o, "guide_text", c->guide_text, sizeof(c->guide_text), false, id, err, errlen) ||
	    str_field(o, "unit", c->unit, sizeof(c->unit), false, id, err, errlen) ||
	    str_field(o, "kind", kind, sizeof(kind), true, id, err, errlen) ||
	    str_field(o, "field", c->field, sizeof(c->field), false, id, err, errlen) ||
	    str_field(o, "aux", c->aux, sizeof(c->aux), false, id, err, errlen) ||
	    str_field(o, "how", c->how, sizeof(c->how), false, id, err, errlen) ||
	    str_field(o, "checked_by", c->checked_by, sizeof(c->checked_by), false, id, err, errlen))
		return -1;
	static const char *const kinds[] = { "ratio", "time_saved", "aux", "value", "none", "train_precision",
					     "train_scaling" };
	int k = -1;
	for (int i = 0; i < (int)(sizeof(kinds) / sizeof(kinds[0])); i++)
		if (strcmp(kind, kinds[i]) == 0)
			k = i;
	if (k < 0) {
		snprintf(err, errlen, "claim '%s': unknown kind '%s'", id, kind);
		return -1;
	}
	c->kind = (enum claim_kind)k;
	json_t *g = json_object_get(o, "guide");
	if (g && !json_is_null(g) && !json_is_number(g)) {
		snprintf(err, errlen, "claim '%s': 'guide' is not a number or null", id);
		return -1;
	}
	c->guide = g && json_is_number(g) ? json_number_value(g) : NAN;
	json_t *sc = json_object_get(o, "scale");
	c->scale = sc && json_is_number(sc) ? json_number_value(sc) : 1.0;
	bool needs_num = c->kind != CLAIM_NONE;
	bool needs_den = c->kind == CLAIM_RATIO || c->kind == CLAIM_TIME_SAVED || c->kind == CLAIM_TRAIN_PRECISION;
	if (sel_field(o, "num", &c->num, needs_num, id, err, errlen) ||
	    sel_field(o, "den", &c->den, needs_den, id, err, errlen) ||
	    sel_field(o, "alt", &c->alt, false, id, err, errlen) || sel_field(o, "proxy", &c->proxy, false, id, err, errlen))
		return -1;
	if (c->kind == CLAIM_AUX && !c->aux[0]) {
		snprintf(err, errlen, "claim '%s': kind aux needs 'aux'", id);
		return -1;
	}
	return 0;
}

int claims_parse(struct claims *out, const char *text, size_t len, char *err, size_t errlen)
{
	json_error_t je;
	memset(out, 0, sizeof(*out));
	json_t *root = json_loadb(text, len, 0, &je);
	if (!root) {
		snprintf(err, errlen, "not valid JSON at line %d: %s", je.line, je.text);
		return -1;
	}
	int rc = -1;
	json_t *schema = json_object_get(root, "schema");
	json_t *arr = json_object_get(root, "claims");
	if (!json_is_string(schema) || strcmp(json_string_value(schema), "gpuctl-claims") != 0)
		snprintf(err, errlen, "'schema' is not 'gpuctl-claims'");
	else if (!json_is_array(arr) || json_array_size(arr) > CLAIMS_MAX)
		snprintf(err, errlen, "'claims' is not an array of at most %d claims", CLAIMS_MAX);
	else {
		rc = 0;
		for (size_t i = 0; i < json_array_size(arr) && rc == 0; i++)
			rc = parse_claim(json_array_get(arr, i), &out->c[i], i, err, errlen);
		out->n = rc == 0 ? (unsigned)json_array_size(arr) : 0;
	}
	json_decref(root);
	return rc;
}

int claims_load_default(struct claims *out, const char *env_data_dir, char *err, size_t errlen)
{
	struct data_file f;
	if (data_file_read(env_data_dir, "claims.json", 1 << 20, &f, err, errlen) != DATA_OK)
		return -1;
	char msg[256];
	int rc = claims_parse(out, f.text, f.len, msg, sizeof(msg));
	if (rc != 0)
		snprintf(err, errlen, "'%s': %s", f.name, msg);
	data_file_free(&f);
	return rc;
}

const struct bench_result *claims_pick(const struct bench_run *run, const struct claim_sel *sel)
{
	const struct bench_result *best = NULL;
	for (size_t i = 0; run && i < run->n; i++) {
		const struct bench_result *r = &run->r[i];
		if (r->status != BS_OK && r->status != BS_LOW)
			continue;
		if (strcmp(r->suite, sel->suite) != 0 || strcmp(r->test, sel->test) != 0)
			continue;
		if (sel->variant[0] && strcmp(r->variant, sel->variant) != 0)
			continue;
		if (!best || r->value.median > best->value.median)
			best = r;
	}
	return best;
}

static void label(char *out, size_t len, const struct claim_sel *s)
{
	snprintf(out, len, "%s %s%s%s", s->suite, s->test, s->variant[0] ? " " : "", s->variant);
}

/* The measured row of sel with r's model and batch (micro-batch, sequence, accumulation) on r's GPU. */
static const struct bench_result *same_batch(const struct bench_run *run, const struct bench_result *r,
					     const struct claim_sel *sel)
{
	for (size_t i = 0; sel->suite[0] && i < run->n; i++) {
		const struct bench_result *x = &run->r[i];
		if ((x->status == BS_OK || x->status == BS_LOW) && !strcmp(x->suite, sel->suite) && !strcmp(x->test, sel->test) &&
		    !strcmp(x->variant, sel->variant) && x->m == r->m && x->n == r->n && x->k == r->k && x->gpu == r->gpu)
			return x;
	}
	return NULL;
}

/* C3: BF16 over FP32 (the guide's comparison), and over TF32 beside it. */
static void eval_precision(const struct claim *c, const struct bench_run *run, struct claim_eval *e)
{
	const struct bench_result *n = claims_pick(run, &c->num);
	const struct bench_result *d = n ? same_batch(run, n, &c->den) : NULL, *a = n ? same_batch(run, n, &c->alt) : NULL;
	if (!n || !d) {
		char l[128];
		label(l, sizeof(l), !n ? &c->num : &c->den);
		snprintf(e->ours_text, sizeof(e->ours_text), "not measured");
		snprintf(e->note, sizeof(e->note), "no result for '%s'%s in this run", l, n ? " of the same model and batch" : "");
		return;
	}
	e->ours = n->value.median / d->value.median;
	int at = snprintf(e->ours_text, sizeof(e->ours_text), "%.2fx over %s", e->ours, d->variant);
	int nt = snprintf(e->note, sizeof(e->note), "%s %s %s %.4g / %s %.4g %s", n->suite, n->test, n->variant,
			  n->value.median, d->variant, d->value.median, n->unit);
	if (a) {
		snprintf(e->ours_text + at, sizeof(e->ours_text) - (size_t)at, ", %.2fx over %s",
			 n->value.median / a->value.median, a->variant);
		snprintf(e->note + nt, sizeof(e->note) - (size_t)nt, "; %s %.4g", a->variant, a->value.median);
	}
	if (isfinite(c->guide) && c->guide != 0)
		e->ratio = e->ours / c->guide;
}

/* C5: the data-parallel row over the most GPUs, or why there is none. */
static void eval_scaling(const struct claim *c, const struct bench_run *run, struct claim_eval *e)
{
	const struct bench_result *best = NULL;
	size_t vlen = strlen(c->num.variant);
	for (size_t i = 0; i < run->n; i++) {
		const struct bench_result *r = &run->r[i];
		if ((r->status != BS_OK && r->status != BS_LOW) || strcmp(r->suite, c->num.suite) ||
		    strcmp(r->test, c->num.test) || strncmp(r->variant, c->num.variant, vlen) ||
		    strncmp(r->variant + vlen, "-dp", 3) || r->ngpus < 2 || !isfinite(bench_result_aux(r, "scaling_pct")))
			continue;
		if (!best || r->ngpus > best->ngpus)
			best = r;
	}
	if (best) {
		double eff = bench_result_aux(best, "scaling_pct") / 100.0;
		e->ours = eff * best->ngpus;
		e->ratio = eff; /* the guide's claim is linear: N x on N GPUs */
		snprintf(e->ours_text, sizeof(e->ours_text), "%.2fx on %d GPUs", e->ours, best->ngpus);
		snprintf(e->note, sizeof(e->note), "%s %s %s: %.4g %s over %d GPUs, %.0f%% of %d x the one-GPU step",
			 best->suite, best->test, best->variant, best->value.median, best->unit, best->ngpus, 100 * eff,
			 best->ngpus);
		return;
	}
	snprintf(e->ours_text, sizeof(e->ours_text), "not measured");
	int at;
	/* short: the report's cell holds 95 characters */
	if (run->ngpus < 2)
		at = snprintf(e->note, sizeof(e->note), "%u GPU cannot answer this: it needs training on 2+ GPUs", run->ngpus);
	else
		at = snprintf(e->note, sizeof(e->note), "no data-parallel train row (bench -s train on 2+ GPUs)");
	const struct bench_result *p = c->proxy.suite[0] ? claims_pick(run, &c->proxy) : NULL;
	if (p && at > 0 && (size_t)at < sizeof(e->note))
		snprintf(e->note + at, sizeof(e->note) - (size_t)at, ". Proxy only: %s busbw %.4g %s", p->test,
			 p->value.median, p->unit);
}

static void eval_one(const struct claim *c, const struct bench_run *run, const char *why_none, struct claim_eval *e)
{
	char a[128], b[128];
	e->claim = c;
	e->ours = e->ratio = NAN;
	e->note[0] = '\0';
	if (c->kind == CLAIM_NONE) {
		snprintf(e->ours_text, sizeof(e->ours_text), "see %s", c->checked_by[0] ? c->checked_by : "docs");
		snprintf(e->note, sizeof(e->note), "not a benchmark figure");
		return;
	}
	if (!run) {
		snprintf(e->ours_text, sizeof(e->ours_text), "not measured");
		snprintf(e->note, sizeof(e->note), "%s", why_none ? why_none : "no benchmark results");
		return;
	}
	if (c->kind == CLAIM_TRAIN_PRECISION || c->kind == CLAIM_TRAIN_SCALING) {
		(c->kind == CLAIM_TRAIN_PRECISION ? eval_precision : eval_scaling)(c, run, e);
		return;
	}
	const struct bench_result *n = claims_pick(run, &c->num);
	const struct bench_result *d = c->kind == CLAIM_RATIO || c->kind == CLAIM_TIME_SAVED ? claims_pick(run, &c->den) : NULL;
	label(a, sizeof(a), &c->num);
	label(b, sizeof(b), &c->den);
	if (!n || ((c->kind == CLAIM_RATIO || c->kind == CLAIM_TIME_SAVED) && !d)) {
		snprintf(e->ours_text, sizeof(e->ours_text), "not measured");
		if (!n && !strcmp(c->num.suite, "sustained") && !strcmp(run->mode, "quick"))
			/* a minute-long run cannot heat a GPU to where cooling decides its clocks */
			snprintf(e->note, sizeof(e->note), "--quick runs no sustained load: a GPU takes minutes to reach the "
				 "temperature where cooling limits its clocks (run --full, or -s sustained)");
		else
			snprintf(e->note, sizeof(e->note), "no result for '%s' in this run", !n ? a : b);
		return;
	}
	switch (c->kind) {
	case CLAIM_RATIO:
		e->ours = n->value.median / d->value.median;
		snprintf(e->note, sizeof(e->note), "%s %.4g %s / %s %.4g %s", a, n->value.median, n->unit, b,
			 d->value.median, d->unit);
		break;
	case CLAIM_TIME_SAVED:
		/* same bytes: time_num / time_den = rate_den / rate_num */
		e->ours = 1.0 - d->value.median / n->value.median;
		snprintf(e->note, sizeof(e->note), "%s %.4g %s vs %s %.4g %s", a, n->value.median, n->unit, b,
			 d->value.median, d->unit);
		break;
	case CLAIM_AUX:
		e->ours = bench_result_aux(n, c->aux) * c->scale;
		snprintf(e->note, sizeof(e->note), "%s: %s", a, c->aux);
		break;
	case CLAIM_VALUE:
		e->ours = strcmp(c->field, "gflops_per_watt") == 0 ? n->gflops_per_watt : n->value.median;
		snprintf(e->note, sizeof(e->note), "%s%s", a, n->size_bytes ? " (largest size)" : "");
		break;
	default:
		break;
	}
	if (!isfinite(e->ours)) {
		e->ours = NAN;
		snprintf(e->ours_text, sizeof(e->ours_text), "not measured");
		return;
	}
	if (strcmp(c->unit, "x") == 0)
		snprintf(e->ours_text, sizeof(e->ours_text), "%.2fx", e->ours);
	else if (c->kind == CLAIM_TIME_SAVED || c->kind == CLAIM_AUX)
		snprintf(e->ours_text, sizeof(e->ours_text), "%.0f%% %s", 100.0 * e->ours, c->unit);
	else
		snprintf(e->ours_text, sizeof(e->ours_text), "%.4g %s", e->ours, c->unit);
	if (isfinite(c->guide) && c->guide != 0)
		e->ratio = e->ours / c->guide;
}

void claims_evaluate(const struct claims *cl, const struct bench_run *run, const char *why_none,
		     struct claim_eval *out)
{
	for (unsigned i = 0; i < cl->n; i++)
		eval_one(&cl->c[i], run, why_none, &out[i]);
}
