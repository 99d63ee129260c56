/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hfconfig.c - a model's shape from a Hugging Face config.json (the file
 * `transformers` writes next to the weights), for `plan train|serve
 * --hf-config FILE` (plan.h). The keys of the Llama family (llama, mistral,
 * qwen2, gemma, mixtral, ...) and of GPT-2; anything else is a one-line error
 * naming the key it lacks.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "plan.h"

/* The first of the keys present: 1 with *out set, 0 when none is, -1 (err set)
 * when one is not a whole number from 1 to hi. */
static int get_uint(json_t *o, const char *const *keys, unsigned hi, unsigned *out, char *err, size_t errlen)
{
	for (; *keys; keys++) {
		json_t *v = json_object_get(o, *keys);
		if (!v || json_is_null(v))
			continue;
		if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > (json_int_t)hi) {
			snprintf(err, errlen, "config.json: '%s' must be a whole number from 1 to %u", *keys, hi);
			return -1;
		}
		*out = (unsigned)json_integer_value(v);
		return 1;
	}
	return 0;
}

static int need_uint(json_t *o, const char *const *keys, unsigned hi, unsigned *out, char *err, size_t errlen)
{
	int rc = get_uint(o, keys, hi, out, err, errlen);
	if (rc == 0)
		snprintf(err, errlen, "config.json: no '%s'", keys[0]);
	return rc == 1 ? 0 : -1;
}

static bool get_bool(json_t *o, const char *key, bool def)
{
	json_t *v = json_object_get(o, key);
	return json_is_boolean(v) ? json_is_true(v) : def;
}

int plan_hf_config_parse(const char *json, size_t len, struct plan_model *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	json_error_t je;
	json_t *o = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	if (!o) {
		snprintf(err, errlen, "config.json: line %d: %.120s", je.line, je.text);
		for (char *c = err; *c; c++)
			if (*c == '\n' || *c == '\r')
				*c = ' ';
		return -1;
	}
	int rc = -1;
	if (!json_is_object(o)) {
		snprintf(err, errlen, "config.json: not a JSON object");
		goto out;
	}
	json_t *mt = json_object_get(o, "model_type");
	const char *type = json_is_string(mt) ? json_string_value(mt) : "";
	bool gpt2 = strcmp(type, "gpt2") == 0;
	static const char *const k_layers[] = { "num_hidden_layers", "n_layer", NULL };
	static const char *const k_hidden[] = { "hidden_size", "n_embd", NULL };
	static const char *const k_heads[] = { "num_attention_heads", "n_head", NULL };
	static const char *const k_kv[] = { "num_key_value_heads", NULL };
	static const char *const k_vocab[] = { "vocab_size", NULL };
	static const char *const k_ffn[] = { "intermediate_size", "n_inner", NULL };
	static const char *const k_pos[] = { "n_positions", NULL };
	static const char *const k_experts[] = { "num_local_experts", "num_experts", NULL };
	static const char *const k_active[] = { "num_experts_per_tok", NULL };
	const unsigned big = 1u << 24;
	if (need_uint(o, k_layers, 100000, &m->layers, err, errlen) ||
	    need_uint(o, k_hidden, big, &m->hidden, err, errlen) || need_uint(o, k_heads, big, &m->heads, err, errlen) ||
	    need_uint(o, k_vocab, 1u << 30, &m->vocab, err, errlen))
		goto out;
	m->kv_heads = m->heads;
	m->ffn = 4 * m->hidden;
	if (get_uint(o, k_kv, big, &m->kv_heads, err, errlen) < 0 || get_uint(o, k_ffn, 1u << 28, &m->ffn, err, errlen) < 0 ||
	    get_uint(o, k_experts, 100000, &m->experts, err, errlen) < 0 ||
	    get_uint(o, k_active, 100000, &m->experts_active, err, errlen) < 0)
		goto out;
	if (gpt2) {
		/* GPT-2: learned positions, LayerNorm, biases, a 4 x hidden GELU MLP, tied head */
		if (need_uint(o, k_pos, big, &m->max_pos, err, errlen))
			goto out;
		m->layernorm = m->bias = true;
		m->tied_embeddings = get_bool(o, "tie_word_embeddings", true);
	} else {
		/* the Llama family: rotary positions, RMSNorm, SwiGLU, no biases */
		m->gated_mlp = true;
		m->bias = get_bool(o, "attention_bias", false) || get_bool(o, "mlp_bias", false);
		m->tied_embeddings = get_bool(o, "tie_word_embeddings", false);
	}
	if (m->experts && !m->experts_active) {
		snprintf(err, errlen, "config.json: '%s' without 'num_experts_per_tok'",
			 json_object_get(o, "num_local_experts") ? "num_local_experts" : "num_experts");
		goto out;
	}
	m->has_arch = true;
	snprintf(m->name, sizeof(m->name), "%.40s", type[0] ? type : "config.json");
	for (char *c = m->name; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = '?';
	snprintf(m->source, sizeof(m->source), "a Hugging Face config.json");
	rc = plan_model_validate(m, err, errlen);
out:
	json_decref(o);
	return rc;
}
