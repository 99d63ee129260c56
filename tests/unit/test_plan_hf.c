/* SPDX-License-Identifier: Apache-2.0 */
/* test_plan_hf.c - the transformers memory model (src/plan/hf.c) against every case
 * bench/hf_plan_memory.py measured on an H200: round 1 (tests/data/plan-hf-measured.jsonl and
 * the held-out plan-hf-holdout.jsonl, copies of bench/runs/2026-12-01-plan-hf/cases.jsonl and
 * holdout.jsonl) and round 2 (plan-hf-r2-fit.jsonl and the held-out plan-hf-r2-holdout.jsonl,
 * copies of bench/runs/2026-12-04-plan-hf-r2/r2fit.jsonl and r2holdout.jsonl): each training
 * peak within +5% / -3% and its phase, each prefill and generate peak within 5%, the KV cache
 * per token exact. PLAN_HF_VERBOSE=1 prints every case. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"
#include "plan_measured.h"

#define MAX_OVER 0.05  /* the goal: within 5% of the measured peak ... */
#define MAX_UNDER 0.03 /* ... and never more than 3% under it */
#define MAX_CASES 160

static json_t *cases[MAX_CASES];
static size_t ncases;

/* The measured sets: round 1 (the per-block counts were read from its fitted half), round 2
 * (issue 34: checkpointing, long sequences, large tied vocabularies; its fitted half set the
 * checkpointing, logits and optimizer terms, its held-out half nothing). */
static const struct {
	const char *file, *label;
} SETS[] = {
	{ "plan-hf-measured.jsonl", "r1 fit" },
	{ "plan-hf-holdout.jsonl", "r1 held-out" },
	{ "plan-hf-r2-fit.jsonl", "r2 fit" },
	{ "plan-hf-r2-holdout.jsonl", "r2 held-out" },
};
#define NSETS (sizeof(SETS) / sizeof(SETS[0]))

static size_t set_of(json_t *c) { return (size_t)json_integer_value(json_object_get(c, "set")); }

/* Appends the cases of one JSON-lines file, each marked with its set. */
static int load_file(size_t set)
{
	char path[4096];
	const char *dir = getenv("GPUCTL_TEST_DIR");
	snprintf(path, sizeof(path), "%s/data/%s", dir ? dir : "tests", SETS[set].file);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[65536];
	while (ncases < MAX_CASES && fgets(line, sizeof(line), f)) {
		json_error_t je;
		json_t *c = json_loads(line, 0, &je);
		if (!c) {
			fclose(f);
			return -1;
		}
		json_object_set_new(c, "set", json_integer((json_int_t)set));
		cases[ncases++] = c;
	}
	fclose(f);
	return 0;
}

static int load(void **state)
{
	(void)state;
	for (size_t i = 0; i < NSETS; i++)
		if (load_file(i))
			return -1;
	return ncases ? 0 : -1;
}

static int unload(void **state)
{
	(void)state;
	for (size_t i = 0; i < ncases; i++)
		json_decref(cases[i]);
	return 0;
}


/* The architecture transformers built, from the case's config fields. */
static struct plan_model model_of(json_t *c, unsigned max_pos)
{
	const char *fam = str(c, "family");
	struct plan_model m = { .has_arch = true };
	snprintf(m.name, sizeof(m.name), "%s", str(c, "model"));
	m.layers = (unsigned)num(c, "layers");
	m.hidden = (unsigned)num(c, "hidden");
	m.heads = (unsigned)num(c, "heads");
	m.kv_heads = (unsigned)num(c, "kv_heads");
	m.ffn = (unsigned)num(c, "ffn");
	m.vocab = (unsigned)num(c, "vocab");
	m.tied_embeddings = json_is_true(json_object_get(c, "tied"));
	m.experts = (unsigned)num(c, "experts");
	m.experts_active = (unsigned)num(c, "experts_active");
	if (strcmp(fam, "gpt2") == 0) {
		m.layernorm = m.bias = true;
		m.max_pos = max_pos;
	} else {
		m.gated_mlp = true; /* Llama, Qwen2 (its QKV biases are left out: 0.01% of the parameters) */
	}
	return m;
}

static const char *const FAMILIES[] = { "gpt2", "llama", "qwen2", "mixtral" };
#define NFAM (sizeof(FAMILIES) / sizeof(FAMILIES[0]))

static size_t family_index(const char *fam)
{
	for (size_t i = 0; i < NFAM; i++)
		if (strcmp(fam, FAMILIES[i]) == 0)
			return i;
	fail_msg("unknown family %s", fam);
	return 0;
}

/* The training configuration a case ran. */
static struct plan_train train_of(json_t *c)
{
	struct plan_train t;
	plan_train_defaults(&t);
	assert_int_equal(t.fw, FW_HF);
	const char *prec = str(c, "precision"), *opt = str(c, "optimizer");
	t.prec = strcmp(prec, "fp32") == 0 ? PREC_FP32 : PREC_BF16;
	t.pure16 = strcmp(prec, "bf16") == 0;
	t.optim = strcmp(opt, "sgd") == 0 ? OPT_SGD : strcmp(opt, "adamw-fused") == 0 ? OPT_ADAMW_FUSED : OPT_ADAMW;
	t.ckpt = strcmp(str(c, "checkpointing"), "full") == 0 ? CKPT_FULL : CKPT_NONE;
	t.attn = strcmp(str(c, "attention"), "eager") == 0 ? ATTN_EAGER : ATTN_FLASH;
	t.seq = (unsigned)num(c, "seq");
	t.micro_batch = (unsigned)num(c, "micro_batch");
	return t;
}

/* Every phase the case measured (forward, backward, optimizer step: its largest reading over
 * the steps) against the planned phase (the backward: the larger of its moments), within the
 * same bounds: a term that is not the peak today is the peak of another shape. Returns the
 * number out of bounds, printed. */
static size_t phases_out_of_bounds(json_t *c, const struct plan_mem *o)
{
	static const char *const measured[] = { "forward", "backward", "optimizer" };
	size_t bad = 0;
	for (size_t k = 0; k < 3; k++) {
		double plan = 0, meas = 0;
		for (unsigned i = 0; i < o->nterms; i++) /* the phase totals are --explain's last terms */
			if (strncmp(o->terms[i].name, measured[k], strlen(measured[k])) == 0 &&
			    strstr(o->terms[i].formula, "phase total"))
				plan = fmax(plan, o->terms[i].bytes);
		json_t *arr = json_object_get(json_object_get(c, "phase_peaks"), measured[k]);
		for (size_t i = 0; i < json_array_size(arr); i++)
			meas = fmax(meas, json_number_value(json_array_get(arr, i)));
		assert_true(plan > 0 && meas > 0);
		double rel = (plan - meas) / meas;
		if (rel > MAX_OVER || rel < -MAX_UNDER || getenv("PLAN_HF_VERBOSE")) {
			print_message("%s %d %s %s %s seq %u mb %u: %s planned %.3f GB, measured %.3f GB: %+.1f%%\n",
				      SETS[set_of(c)].label, (int)num(c, "index"), str(c, "model"), str(c, "precision"),
				      str(c, "checkpointing"), (unsigned)num(c, "seq"), (unsigned)num(c, "micro_batch"),
				      measured[k], plan / 1e9, meas / 1e9, 100 * rel);
			bad += rel > MAX_OVER || rel < -MAX_UNDER;
		}
	}
	return bad;
}

/* Every training case: its peak within +5% / -3%, per set (a held-out set is held to the
 * same bar as the one fitted). The round-2 cases always print as a table (bench/RESULTS.md
 * has it), the others with PLAN_HF_VERBOSE=1 or when out of bounds. */
static void test_training_peaks_within_5_percent_never_3_under(void **state)
{
	(void)state;
	size_t n = 0, phase_right = 0, fams[NFAM] = { 0 }, nset[NSETS] = { 0 }, bad = 0;
	double worst[NFAM] = { 0 }, worst_set[NSETS] = { 0 }, under_set[NSETS] = { 0 };
	bool verbose = getenv("PLAN_HF_VERBOSE") != NULL;
	print_message("| set | # | model | prec | ckpt | seq | mb | optimizer | vocab | tied | gpuctl GB | set by | "
		      "measured GB | phase | error |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < ncases; i++) {
		json_t *c = cases[i];
		if (strcmp(str(c, "kind"), "train") != 0 || json_object_get(c, "error"))
			continue;
		struct plan_train t = train_of(c);
		struct plan_model m = model_of(c, t.seq > 1024 ? t.seq : 1024);
		/* the parameter count of the model transformers built */
		assert_true(fabs(plan_model_params(&m) - num(c, "params")) / num(c, "params") < 0.001);
		struct plan_mem o;
		char err[160];
		assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), 0);
		double meas = num(c, "peak_bytes"), rel = (o.peak - meas) / meas;
		const char *mp = str(c, "peak_phase");
		phase_right += strncmp(o.peak_phase, mp, strlen(mp)) == 0;
		size_t f = family_index(str(c, "family")), set = set_of(c);
		fams[f]++;
		nset[set]++;
		worst[f] = fmax(worst[f], fabs(rel));
		worst_set[set] = fmax(worst_set[set], fabs(rel));
		under_set[set] = fmin(under_set[set], rel);
		bool out = rel > MAX_OVER || rel < -MAX_UNDER;
		bad += out;
		if (out || verbose || strncmp(SETS[set].label, "r2", 2) == 0)
			print_message("| %s | %d | %s | %s | %s | %u | %u | %s | %u | %s | %.3f | %s (%s) | %.3f | %s | "
				      "%+.1f%%%s |\n",
				      SETS[set].label, (int)num(c, "index"), str(c, "model"), str(c, "precision"),
				      str(c, "checkpointing"), t.seq, t.micro_batch, str(c, "optimizer"), m.vocab,
				      m.tied_embeddings ? "yes" : "no", o.peak / 1e9, o.peak_term, o.peak_phase,
				      meas / 1e9, mp, 100 * rel, out ? " OUT OF BOUNDS" : "");
		bad += phases_out_of_bounds(c, &o);
		/* the parts of the peak add up to it, and the term named is the largest */
		double sum = 0, largest = 0;
		for (size_t k = 0; k < PART_COUNT; k++) {
			sum += o.peak_parts[k];
			largest = fmax(largest, o.peak_parts[k]);
		}
		assert_true(fabs(sum - o.peak) < 1e-6 * o.peak);
		for (size_t k = 0; k < PART_COUNT; k++)
			if (strcmp(o.peak_term, plan_part_name((enum plan_part)k)) == 0)
				assert_true(o.peak_parts[k] == largest);
		n++;
	}
	for (size_t f = 0; f < NFAM; f++) {
		assert_true(fams[f] >= 6); /* every family measured */
		print_message("%-8s %2zu cases, worst error %.1f%%\n", FAMILIES[f], fams[f], 100 * worst[f]);
	}
	for (size_t s = 0; s < NSETS; s++)
		print_message("%-11s %2zu cases, worst error %.1f%%, worst under-prediction %.1f%%\n", SETS[s].label,
			      nset[s], 100 * worst_set[s], -100 * under_set[s]);
	print_message("%zu training cases, peak phase right in %zu, %zu out of bounds\n", n, phase_right, bad);
	for (size_t s = 0; s < NSETS; s++)
		assert_true(nset[s] >= 12); /* every set replayed */
	assert_int_equal(bad, 0);
	assert_true(n >= 100);
	assert_true(phase_right >= n - n / 10); /* the phase named is the one measured */
}

static void test_serving_kv_exact_and_peaks_within_5_percent(void **state)
{
	(void)state;
	size_t n = 0;
	double worst = 0;
	for (size_t i = 0; i < ncases; i++) {
		json_t *c = cases[i];
		if (strcmp(str(c, "kind"), "serve") != 0 || json_object_get(c, "error"))
			continue;
		unsigned prompt = (unsigned)num(c, "prompt"), gen = (unsigned)num(c, "new_tokens");
		unsigned batch = (unsigned)num(c, "batch");
		struct plan_model m = model_of(c, prompt + gen + 8);
		struct plan_serve s;
		plan_serve_defaults(&s);
		s.hf_engine = true;
		s.eager = strcmp(str(c, "attention"), "eager") == 0;
		s.context = prompt + gen;
		s.batch = batch;
		struct plan_serve_result r;
		char err[160];
		assert_int_equal(plan_serve_compute(&m, &s, NULL, 141e9, 0, &r, err, sizeof(err)), 0);
		/* the cache transformers holds after the prefill, walked layer by layer */
		assert_float_equal(r.kv_per_token * batch * prompt, num(c, "kv_cache_bytes_walked"), 0);
		/* the prefill's peak (weights, its KV cache and its intermediates) ... */
		double kv_prompt = r.kv_per_token * batch * prompt;
		double pre = r.weights + kv_prompt + r.workspace;
		/* measured from the allocated memory after the build, which held the parameters and
		 * what earlier cases in the process left: a serving process holds one cuBLAS
		 * workspace of it (the second is the training cases' autograd thread's) */
		double left = fmin(num(c, "weights_alloc_bytes") - num(c, "param_bytes"), 34.0 * 1048576);
		double pre_meas = num(c, "param_bytes") + left + num(c, "prefill_peak_bytes");
		/* ... and the whole generate() call's, with the cache at the full context */
		double gen_meas = num(c, "param_bytes") + left + num(c, "generate_peak_bytes");
		double e1 = (pre - pre_meas) / pre_meas, e2 = (r.peak - gen_meas) / gen_meas;
		if (fabs(e1) > 0.05 || fabs(e2) > 0.05 || getenv("PLAN_HF_VERBOSE"))
			print_message("serve %-11s %-12s %-5s batch %u prompt %u: prefill %.3f GB vs %.3f (%+.1f%%), "
				      "generate %.3f vs %.3f (%+.1f%%)\n",
				      SETS[set_of(c)].label, str(c, "model"), str(c, "attention"), batch,
				      prompt, pre / 1e9, pre_meas / 1e9, 100 * e1, r.peak / 1e9, gen_meas / 1e9, 100 * e2);
		assert_true(fabs(e1) <= 0.05);
		assert_true(fabs(e2) <= 0.05);
		worst = fmax(worst, fmax(fabs(e1), fabs(e2)));
		n++;
	}
	print_message("%zu serving cases, worst prefill/generate peak error %.1f%%\n", n, 100 * worst);
	assert_true(n >= 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_training_peaks_within_5_percent_never_3_under),
		cmocka_unit_test(test_serving_kv_exact_and_peaks_within_5_percent),
	};
	return cmocka_run_group_tests(tests, load, unload);
}
