/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model.c - transformer architectures for the planner: validation, parameter
 * counts and the presets file (data/plan/models.json).
 *
 * Parameter counts follow the modules one by one (checked against the published
 * totals in the unit tests: GPT-2 small 124,439,808; Llama-2-7B 6,738,415,616):
 *   attention  2h^2 + 2h*kv_dim            (+ h + 2 kv_dim + h biases)
 *   MLP        2h*ffn, or 3h*ffn gated     (+ ffn + h biases; gated 2 ffn + h)
 *   MoE        experts x MLP + router h*experts
 *   norms      2 per block, h (RMSNorm) or 2h (LayerNorm) each
 *   outside    vocab*h (+ max_pos*h learned positions) (+ vocab*h untied head) + final norm
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plan.h"

static const char *const prec_names[PREC_COUNT] = { "fp32", "bf16", "fp16", "fp8", "int8", "int4" };
static const double prec_bytes[PREC_COUNT] = { 4, 2, 2, 1, 1, 0.5 };

int plan_prec_parse(const char *s, enum plan_prec *out)
{
	for (int i = 0; i < PREC_COUNT; i++)
		if (s && strcasecmp(s, prec_names[i]) == 0) {
			*out = (enum plan_prec)i;
			return 0;
		}
	return -1;
}
const char *plan_prec_name(enum plan_prec p) { return p < PREC_COUNT ? prec_names[p] : "?"; }
double plan_prec_bytes(enum plan_prec p) { return p < PREC_COUNT ? prec_bytes[p] : NAN; }

void plan_quote(char *dst, size_t n, const char *src)
{
	size_t i = 0;
	for (; n && src[i] && i + 1 < n; i++)
		dst[i] = (unsigned char)src[i] < 0x20 || src[i] == 0x7f ? '?' : src[i];
	if (n)
		dst[i] = '\0';
}

unsigned plan_model_head_dim(const struct plan_model *m)
{
	return m->heads ? m->hidden / m->heads : 0;
}

int plan_model_validate(const struct plan_model *m, char *err, size_t errlen)
{
	if (!m->has_arch) {
		if (!(m->params_given > 0) || !isfinite(m->params_given)) {
			snprintf(err, errlen, "params must be positive");
			return -1;
		}
		return 0;
	}
	const struct { const char *name; unsigned v; } need[] = {
		{ "layers", m->layers }, { "hidden", m->hidden }, { "heads", m->heads },
		{ "kv-heads", m->kv_heads }, { "vocab", m->vocab }, { "ffn", m->ffn },
	};
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (need[i].v == 0) {
			snprintf(err, errlen, "%s must be positive", need[i].name);
			return -1;
		}
	if (m->hidden % m->heads) {
		snprintf(err, errlen, "heads %u do not divide hidden %u", m->heads, m->hidden);
		return -1;
	}
	if (m->kv_heads > m->heads || m->heads % m->kv_heads) {
		snprintf(err, errlen, "kv-heads %u do not divide heads %u", m->kv_heads, m->heads);
		return -1;
	}
	if ((m->experts == 0) != (m->experts_active == 0) || m->experts_active > m->experts) {
		snprintf(err, errlen, "experts-active %u must be between 1 and experts %u", m->experts_active,
			 m->experts);
		return -1;
	}
	return 0;
}

static double attn_params(const struct plan_model *m)
{
	double h = m->hidden, kv = (double)m->kv_heads * plan_model_head_dim(m);
	return 2 * h * h + 2 * h * kv + (m->bias ? 2 * h + 2 * kv : 0);
}
static double mlp_one_params(const struct plan_model *m)
{
	double h = m->hidden, f = m->ffn;
	if (m->gated_mlp)
		return 3 * h * f + (m->bias ? 2 * f + h : 0);
	return 2 * h * f + (m->bias ? f + h : 0);
}
static double mlp_params(const struct plan_model *m)
{
	if (m->experts)
		return m->experts * mlp_one_params(m) + (double)m->hidden * m->experts;
	return mlp_one_params(m);
}
static double norm_params(const struct plan_model *m)
{
	return m->layernorm ? 2.0 * m->hidden : m->hidden;
}

double plan_model_layer_params(const struct plan_model *m)
{
	if (!m->has_arch)
		return NAN;
	return attn_params(m) + mlp_params(m) + 2 * norm_params(m);
}

double plan_model_embed_params(const struct plan_model *m)
{
	if (!m->has_arch)
		return NAN;
	double h = m->hidden, v = m->vocab;
	return v * h + (double)m->max_pos * h + (m->tied_embeddings ? 0 : v * h) + norm_params(m);
}

double plan_model_params(const struct plan_model *m)
{
	if (!m->has_arch)
		return m->params_given;
	return m->layers * plan_model_layer_params(m) + plan_model_embed_params(m);
}

double plan_model_active_params(const struct plan_model *m)
{
	if (!m->has_arch || !m->experts)
		return plan_model_params(m);
	return plan_model_params(m) - (double)m->layers * (m->experts - m->experts_active) * mlp_one_params(m);
}

double plan_model_matmul_params(const struct plan_model *m)
{
	if (!m->has_arch)
		return plan_model_params(m);
	double h = m->hidden, kv = (double)m->kv_heads * plan_model_head_dim(m), f = m->ffn;
	double mlp = (m->gated_mlp ? 3 : 2) * h * f * (m->experts ? m->experts : 1);
	return m->layers * (2 * h * h + 2 * h * kv + mlp) + (double)m->vocab * h;
}

double plan_model_largest_module(const struct plan_model *m)
{
	if (!m->has_arch)
		return NAN;
	double h = m->hidden, a = (double)m->vocab * h, b = h * m->ffn;
	return a > b ? a : b;
}

/* ---- presets ------------------------------------------------------------ */

static int get_uint(json_t *o, const char *key, bool required, unsigned *out, const char *name, char *err,
		    size_t errlen)
{
	json_t *v = json_object_get(o, key);
	if (!v) {
		if (!required)
			return 0;
		snprintf(err, errlen, "model '%s': missing field '%s'", name, key);
		return -1;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 100000000) {
		snprintf(err, errlen, "model '%s': field '%s' must be a non-negative integer", name, key);
		return -1;
	}
	*out = (unsigned)json_integer_value(v);
	return 0;
}

static int get_bool(json_t *o, const char *key, bool *out, const char *name, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return 0;
	if (!json_is_boolean(v)) {
		snprintf(err, errlen, "model '%s': field '%s' must be true or false", name, key);
		return -1;
	}
	*out = json_is_true(v);
	return 0;
}

static int parse_one(json_t *o, struct plan_model *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	json_t *name = json_object_get(o, "name"), *src = json_object_get(o, "source");
	if (!json_is_string(name) || json_string_length(name) == 0 || json_string_length(name) >= sizeof(m->name)) {
		snprintf(err, errlen, "model without a valid 'name'");
		return -1;
	}
	plan_quote(m->name, sizeof(m->name), json_string_value(name));
	if (!json_is_string(src)) {
		snprintf(err, errlen, "model '%s': missing field 'source'", m->name);
		return -1;
	}
	snprintf(m->source, sizeof(m->source), "%s", json_string_value(src));
	m->has_arch = true;
	if (get_uint(o, "layers", true, &m->layers, m->name, err, errlen) ||
	    get_uint(o, "hidden", true, &m->hidden, m->name, err, errlen) ||
	    get_uint(o, "heads", true, &m->heads, m->name, err, errlen) ||
	    get_uint(o, "vocab", true, &m->vocab, m->name, err, errlen) ||
	    get_uint(o, "ffn", true, &m->ffn, m->name, err, errlen))
		return -1;
	m->kv_heads = m->heads;
	if (get_uint(o, "kv_heads", false, &m->kv_heads, m->name, err, errlen) ||
	    get_uint(o, "max_pos", false, &m->max_pos, m->name, err, errlen) ||
	    get_uint(o, "experts", false, &m->experts, m->name, err, errlen) ||
	    get_uint(o, "experts_active", false, &m->experts_active, m->name, err, errlen) ||
	    get_bool(o, "gated_mlp", &m->gated_mlp, m->name, err, errlen) ||
	    get_bool(o, "tied_embeddings", &m->tied_embeddings, m->name, err, errlen) ||
	    get_bool(o, "bias", &m->bias, m->name, err, errlen))
		return -1;
	json_t *norm = json_object_get(o, "norm");
	if (norm) {
		const char *n = json_string_value(norm);
		if (n && strcmp(n, "layernorm") == 0)
			m->layernorm = true;
		else if (!n || strcmp(n, "rmsnorm") != 0) {
			snprintf(err, errlen, "model '%s': field 'norm' must be \"layernorm\" or \"rmsnorm\"", m->name);
			return -1;
		}
	}
	char verr[160];
	if (plan_model_validate(m, verr, sizeof(verr))) {
		snprintf(err, errlen, "model '%s': %s", m->name, verr);
		return -1;
	}
	return 0;
}

int plan_presets_parse(struct plan_presets *p, const char *json, size_t len, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	json_error_t je;
	json_t *root = json_loadb(json, len, 0, &je);
	if (!root) {
		char q[JSON_ERROR_TEXT_LENGTH];
		plan_quote(q, sizeof(q), je.text);
		snprintf(err, errlen, "models file: line %d: %s", je.line, q);
		return -1;
	}
	json_t *arr = json_object_get(root, "models");
	if (!json_is_array(arr)) {
		snprintf(err, errlen, "models file: missing array 'models'");
		json_decref(root);
		return -1;
	}
	size_t n = json_array_size(arr);
	p->m = calloc(n ? n : 1, sizeof(*p->m));
	if (!p->m) {
		snprintf(err, errlen, "out of memory");
		json_decref(root);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_array_get(arr, i);
		if (!json_is_object(o)) {
			snprintf(err, errlen, "models file: entry %zu is not an object", i);
			goto fail;
		}
		if (parse_one(o, &p->m[p->n], err, errlen))
			goto fail;
		p->n++;
	}
	json_decref(root);
	return 0;
fail:
	json_decref(root);
	plan_presets_free(p);
	return -1;
}

void plan_presets_free(struct plan_presets *p)
{
	free(p->m);
	p->m = NULL;
	p->n = 0;
}

const struct plan_model *plan_presets_find(const struct plan_presets *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcasecmp(p->m[i].name, name) == 0)
			return &p->m[i];
	return NULL;
}
