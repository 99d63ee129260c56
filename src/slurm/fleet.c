/* SPDX-License-Identifier: Apache-2.0 */
/* fleet.c - a fleet sweep's nodes, statistics, outliers and fleet.json (fleet.h). */
#include "slurm/fleet.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/abuf.h"
#include "core/stats.h"

const struct fleet_fig_def fleet_figs[FLEET_NFIG] = {
	[FIG_MEM_BW] = { "mem_bw_gbs", "memory bandwidth", "GB/s", false },
	[FIG_GEMM_BF16] = { "gemm_bf16_tflops", "GEMM BF16", "TFLOP/s", false },
	[FIG_H2D] = { "h2d_gbs", "PCIe H2D", "GB/s", false },
	[FIG_P2P] = { "p2p_gbs", "P2P (slowest peer)", "GB/s", false },
	[FIG_ALLREDUCE] = { "allreduce_busbw_gbs", "all-reduce bus bw", "GB/s", true },
};

const char *fleet_state_name(enum fleet_node_state s)
{
	switch (s) {
	case FLEET_DONE: return "done";
	case FLEET_FAILED: return "failed";
	default: return "not-started";
	}
}

static int fleet_state_parse(const char *s)
{
	for (int k = FLEET_DONE; k <= FLEET_NOT_STARTED; k++)
		if (strcmp(s, fleet_state_name((enum fleet_node_state)k)) == 0)
			return k;
	return -1;
}

void fleet_init(struct fleet *f, const char *level, double threshold_pct)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->level, sizeof(f->level), "%s", level ? level : "");
	f->threshold_pct = threshold_pct;
}

void fleet_free(struct fleet *f)
{
	free(f->node);
	free(f->stat);
	free(f->out);
	memset(f, 0, sizeof(*f));
}

/* Every string of a fleet is printed (fleet.txt, --compare, the drain
 * lines): it is kept as term_clean makes it, so that a node name, a GPU name
 * or a note read from a result file cannot drive the terminal (issue 38). */
static void copy_str(char *dst, size_t len, const char *src)
{
	term_clean(dst, len, src ? src : "");
}

/* Appends ",item" (or "item") to a list, as long as it fits. */
static void list_add(char *list, size_t len, const char *item)
{
	size_t n = strlen(list);
	if (n + strlen(item) + 2 > len)
		return;
	snprintf(list + n, len - n, "%s%s", n ? "," : "", item);
}

static struct fleet_node *new_node(struct fleet *f, const char *name)
{
	if (f->n >= FLEET_MAX_NODES)
		return NULL;
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 16;
		struct fleet_node *p = realloc(f->node, cap * sizeof(*p));
		if (!p)
			return NULL;
		f->node = p;
		f->cap = cap;
	}
	struct fleet_node *n = &f->node[f->n++];
	memset(n, 0, sizeof(*n));
	copy_str(n->name, sizeof(n->name), name);
	for (int k = 0; k < FLEET_NFIG; k++)
		n->fig[k] = NAN;
	return n;
}

int fleet_add_missing(struct fleet *f, const char *node, enum fleet_node_state state, const char *note)
{
	struct fleet_node *n = new_node(f, node);
	if (!n)
		return -1;
	n->state = state;
	copy_str(n->note, sizeof(n->note), note);
	return 0;
}

static const char *jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

static long jlong(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < 1000000000 ?
		       (long)json_integer_value(v) : -1;
}

static double jnum(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	double d = json_is_number(v) ? json_number_value(v) : NAN;
	return isfinite(d) && d >= 0 ? d : NAN;
}

/* Appends "; item" (or "item") to a text, as long as it fits. */
static void words_add(char *text, size_t len, const char *item)
{
	size_t n = strlen(text), m = strlen(item);
	if (n + m + 3 > len)
		return;
	if (n) {
		memcpy(text + n, "; ", 2);
		n += 2;
	}
	memcpy(text + n, item, m + 1);
}

/* The rules of a findings array that call for action (FAIL, or WARN with an
 * action: a PCIe link trained down drains) and their reasons in words
 * (words, FLEET_WORDS_LEN), the other WARNs, and how many are XIDs. */
static void findings(const json_t *arr, char *fail, char *words, char *warn, size_t len, unsigned *xids)
{
	size_t i;
	const json_t *fd;
	json_array_foreach(arr, i, fd)
	{
		const char *rule = jstr(fd, "rule"), *v = jstr(fd, "verdict");
		if (xids && strcmp(jstr(fd, "subsystem"), "xid") == 0)
			(*xids)++;
		const char *action = jstr(fd, "action");
		if (strcmp(v, "FAIL") == 0 || (strcmp(v, "WARN") == 0 && action[0] && strcmp(action, "none") != 0)) {
			char w[FLEET_WORDS_LEN];
			list_add(fail, len, rule[0] ? rule : "?");
			slurm_finding_words(rule[0] ? rule : "?", jstr(fd, "reason"), w, sizeof(w));
			words_add(words, FLEET_WORDS_LEN, w);
		}
		else if (strcmp(v, "WARN") == 0 && warn)
			list_add(warn, len, rule[0] ? rule : "?");
	}
}

static struct fleet_gpu *gpu_by_index(struct fleet_node *n, long index)
{
	for (unsigned g = 0; g < n->ngpu; g++)
		if ((long)n->gpu[g].index == index)
			return &n->gpu[g];
	return NULL;
}

/* A new GPU entry of n from a JSON object with "index" (and "name", "uuid"),
 * its figures and counters unknown; NULL when the index is missing or repeated. */
static struct fleet_gpu *new_gpu(struct fleet_node *n, const json_t *g, const char *verdict_key,
				 const char *action_key)
{
	long idx = jlong(g, "index");
	if (idx < 0 || idx >= FLEET_MAX_GPUS || gpu_by_index(n, idx) || n->ngpu >= FLEET_MAX_GPUS)
		return NULL;
	struct fleet_gpu *fg = &n->gpu[n->ngpu++];
	memset(fg, 0, sizeof(*fg));
	fg->index = (unsigned)idx;
	copy_str(fg->name, sizeof(fg->name), jstr(g, "name"));
	copy_str(fg->uuid, sizeof(fg->uuid), jstr(g, "uuid"));
	copy_str(fg->verdict, sizeof(fg->verdict), jstr(g, verdict_key));
	copy_str(fg->action, sizeof(fg->action), jstr(g, action_key));
	for (int k = 0; k < FLEET_NFIG; k++)
		fg->fig[k] = NAN;
	return fg;
}

/* The link and memory counters: the node result's "links" entries and fleet.json's GPUs. */
static void read_counters(struct fleet_gpu *fg, const json_t *g)
{
	fg->pcie_gen = jlong(g, "pcie_gen");
	fg->pcie_gen_max = jlong(g, "pcie_gen_max");
	fg->pcie_width = jlong(g, "pcie_width");
	fg->pcie_width_max = jlong(g, "pcie_width_max");
	fg->nvlink_active = jlong(g, "nvlink_active");
	fg->nvlink_count = jlong(g, "nvlink_count");
	fg->ecc_uncorrected = jlong(g, "ecc_vol_uncorrected"); /* the sample's name (issue 35) */
	if (fg->ecc_uncorrected < 0) /* a node document written before it */
		fg->ecc_uncorrected = jlong(g, "ecc_uncorrected");
	fg->remap_pending = jlong(g, "remap_pending");
}

/* The "figures" object of a node result: {"source", "gpus": [{"index", KEY: value}], KEY: value}. */
static void read_figures(struct fleet_node *n, const json_t *figs)
{
	copy_str(n->figures_source, sizeof(n->figures_source), jstr(figs, "source"));
	size_t i;
	const json_t *g;
	json_array_foreach(json_object_get(figs, "gpus"), i, g)
	{
		struct fleet_gpu *fg = gpu_by_index(n, jlong(g, "index"));
		for (int k = 0; fg && k < FLEET_NFIG; k++)
			if (!fleet_figs[k].per_node)
				fg->fig[k] = jnum(g, fleet_figs[k].key);
	}
	for (int k = 0; k < FLEET_NFIG; k++)
		if (fleet_figs[k].per_node)
			n->fig[k] = jnum(figs, fleet_figs[k].key);
}

static int read_result(struct fleet_node *n, const json_t *doc, char *err, size_t errlen)
{
	if (!json_is_object(doc) || strcmp(jstr(doc, "schema"), "gpuctl-sweep-node") != 0) {
		snprintf(err, errlen, "not a gpuctl-sweep-node document");
		return -1;
	}
	const json_t *h = json_object_get(doc, "health");
	const json_t *gpus = json_object_get(h, "gpus");
	if (!json_is_object(h) || !json_is_array(gpus)) {
		snprintf(err, errlen, "no health report in the node's result");
		return -1;
	}
	if (json_array_size(gpus) > FLEET_MAX_GPUS) {
		snprintf(err, errlen, "more than %d GPUs in the node's result", FLEET_MAX_GPUS);
		return -1;
	}
	n->simulated = json_is_true(json_object_get(doc, "simulated"));
	copy_str(n->verdict, sizeof(n->verdict), jstr(h, "verdict"));
	copy_str(n->action, sizeof(n->action), jstr(h, "action"));
	const json_t *sys = json_object_get(h, "system");
	findings(json_object_get(sys, "findings"), n->sys_fail_rules, n->sys_fail_words, NULL, sizeof(n->sys_fail_rules),
		 NULL);
	copy_str(n->driver, sizeof(n->driver), jstr(doc, "driver"));
	copy_str(n->cuda, sizeof(n->cuda), jstr(doc, "cuda"));
	size_t i;
	const json_t *g;
	json_array_foreach(gpus, i, g)
	{
		struct fleet_gpu *fg = new_gpu(n, g, "effective_verdict", "effective_action");
		if (!fg) {
			snprintf(err, errlen, "GPU %zu of the health report has no index, or a repeated one", i);
			return -1;
		}
		findings(json_object_get(g, "findings"), fg->fail_rules, fg->fail_words, fg->warn_rules, sizeof(fg->fail_rules),
			 &fg->xids);
		read_counters(fg, NULL); /* unknown (-1) until its "links" entry */
	}
	json_array_foreach(json_object_get(doc, "links"), i, g)
	{
		struct fleet_gpu *fg = gpu_by_index(n, jlong(g, "index"));
		if (fg)
			read_counters(fg, g);
	}
	const json_t *figs = json_object_get(doc, "figures"), *bench = json_object_get(doc, "bench");
	if (json_is_object(figs))
		read_figures(n, figs);
	else if (json_is_object(bench) && fleet_figures_from_bench(n, bench, err, errlen) != 0)
		return -1;
	const json_t *diag = json_object_get(doc, "diag");
	if (json_is_object(diag)) {
		const char *v = jstr(diag, "verdict");
		copy_str(n->diag_verdict, sizeof(n->diag_verdict), v[0] ? v : "N/A");
		const json_t *t;
		json_array_foreach(json_object_get(diag, "tests"), i, t)
		{
			if (strcmp(jstr(t, "verdict"), "FAIL") != 0)
				continue;
			char item[96];
			long gpu = jlong(t, "gpu");
			if (gpu >= 0)
				snprintf(item, sizeof(item), "%s@GPU%ld", jstr(t, "test"), gpu);
			else
				snprintf(item, sizeof(item), "%s", jstr(t, "test"));
			list_add(n->diag_fail, sizeof(n->diag_fail), item);
		}
		if (!n->diag_fail[0] && json_is_string(json_object_get(diag, "error")))
			copy_str(n->diag_fail, sizeof(n->diag_fail), jstr(diag, "error"));
	}
	return 0;
}

int fleet_add_result(struct fleet *f, const char *node, const char *text, size_t len, char *err, size_t errlen)
{
	json_error_t je;
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	char why[200];
	if (!doc)
		snprintf(why, sizeof(why), "its result is not JSON (line %d: %s)", je.line, je.text);
	struct fleet_node *n = new_node(f, node);
	if (!n) {
		json_decref(doc);
		snprintf(err, errlen, "out of memory, or more than %d nodes", FLEET_MAX_NODES);
		return -1;
	}
	if (doc && read_result(n, doc, why, sizeof(why)) == 0) {
		if (!f->level[0])
			copy_str(f->level, sizeof(f->level), jstr(doc, "level"));
		json_decref(doc);
		if (n->simulated)
			f->simulated = true;
		return 0;
	}
	json_decref(doc);
	memset(n->gpu, 0, sizeof(n->gpu));
	n->ngpu = 0;
	n->state = FLEET_FAILED;
	for (char *p = why; *p; p++)
		if (*p == '\n')
			*p = ' ';
	snprintf(n->note, sizeof(n->note), "unreadable result: %.160s", why);
	snprintf(err, errlen, "node '%s': %s", node, n->note);
	return -1;
}

/* ---- statistics and outliers -------------------------------------------------------- */

static double median_of(double *x, size_t n)
{
	stats_sort(x, n);
	return stats_percentile_sorted(x, n, 50);
}

static int add_outlier(struct fleet *f, const struct fleet_outlier *o)
{
	struct fleet_outlier *p = realloc(f->out, (f->nout + 1) * sizeof(*p));
	if (!p)
		return -1;
	f->out = p;
	f->out[f->nout++] = *o;
	return 0;
}

/* The value of figure k of GPU g (g < 0: the node's), NAN when absent. */
static double value_of(const struct fleet_node *n, int g, int k)
{
	return g < 0 ? n->fig[k] : n->gpu[g].fig[k];
}

/* The group figure k of GPU g of n (g < 0: the node's figure) is compared
 * in: the GPU model (a node's: its first GPU's), with the driver and CUDA
 * version when the result has them. A mixed fleet is compared model by model. */
static void group_of(const struct fleet_node *n, int g, char *out, size_t len)
{
	const char *model = g >= 0 ? n->gpu[g].name : n->ngpu ? n->gpu[0].name : "";
	int k = snprintf(out, len, "%s", model[0] ? model : "?");
	if ((n->driver[0] || n->cuda[0]) && k > 0 && (size_t)k < len)
		snprintf(out + k, len - (size_t)k, " (driver %s, CUDA %s)", n->driver[0] ? n->driver : "?",
			 n->cuda[0] ? n->cuda : "?");
}

/* Statistics of figure k over the GPUs (or nodes, for a per-node figure) of group. */
static int stat_one(struct fleet *f, int k, const char *group, double *scratch)
{
	size_t m = 0;
	char key[FLEET_GROUP_LEN];
	for (size_t i = 0; i < f->n; i++) {
		const struct fleet_node *n = &f->node[i];
		if (n->state != FLEET_DONE)
			continue;
		if (fleet_figs[k].per_node) {
			group_of(n, -1, key, sizeof(key));
			if (isfinite(n->fig[k]) && strcmp(key, group) == 0)
				scratch[m++] = n->fig[k];
			continue;
		}
		for (unsigned g = 0; g < n->ngpu; g++) {
			group_of(n, (int)g, key, sizeof(key));
			if (strcmp(key, group) == 0 && isfinite(n->gpu[g].fig[k]))
				scratch[m++] = n->gpu[g].fig[k];
		}
	}
	if (!m)
		return 0;
	struct fleet_stat s = { .fig = (enum fleet_fig)k, .n = m };
	copy_str(s.model, sizeof(s.model), group);
	s.median = median_of(scratch, m);
	for (size_t j = 0; j < m; j++)
		scratch[j] = fabs(scratch[j] - s.median);
	s.mad = median_of(scratch, m);
	struct fleet_stat *p = realloc(f->stat, (f->nstat + 1) * sizeof(*p));
	if (!p)
		return -1;
	f->stat = p;
	f->stat[f->nstat++] = s;
	return 0;
}

static const struct fleet_stat *stat_for(const struct fleet *f, int k, const char *group)
{
	for (size_t s = 0; s < f->nstat; s++)
		if ((int)f->stat[s].fig == k && strcmp(f->stat[s].model, group) == 0)
			return &f->stat[s];
	return NULL;
}

static int figure_outliers(struct fleet *f, size_t i)
{
	const struct fleet_node *n = &f->node[i];
	for (int g = -1; g < (int)n->ngpu; g++)
		for (int k = 0; k < FLEET_NFIG; k++) {
			if (fleet_figs[k].per_node != (g < 0))
				continue;
			double v = value_of(n, g, k);
			char group[FLEET_GROUP_LEN];
			group_of(n, g, group, sizeof(group));
			const struct fleet_stat *s = stat_for(f, k, group);
			if (!isfinite(v) || !s || !(s->median > 0))
				continue;
			double below = 100.0 * (s->median - v) / s->median;
			if (!(below > f->threshold_pct))
				continue;
			struct fleet_outlier o = { .node = i, .gpu = g < 0 ? -1 : (int)n->gpu[g].index, .kind = FLEET_OUT_FIGURE,
						   .fig = (enum fleet_fig)k, .value = v, .median = s->median,
						   .below_pct = below, .drain = true };
			snprintf(o.what, sizeof(o.what), "%s %.1f %s, %.1f%% below the median %.1f", fleet_figs[k].key, v,
				 fleet_figs[k].unit, below, s->median);
			copy_str(o.action, sizeof(o.action), "drain");
			if (add_outlier(f, &o))
				return -1;
		}
	return 0;
}

static int node_outliers(struct fleet *f, size_t i)
{
	const struct fleet_node *n = &f->node[i];
	if (n->state != FLEET_DONE) {
		struct fleet_outlier o = { .node = i, .gpu = -1, .kind = FLEET_OUT_NOT_SWEPT };
		snprintf(o.what, sizeof(o.what), "%s: %.140s", fleet_state_name(n->state), n->note);
		copy_str(o.action, sizeof(o.action), "investigate");
		return add_outlier(f, &o);
	}
	if (n->sys_fail_rules[0]) {
		struct fleet_outlier o = { .node = i, .gpu = -1, .kind = FLEET_OUT_HEALTH, .drain = true };
		copy_str(o.what, sizeof(o.what), n->sys_fail_rules);
		copy_str(o.action, sizeof(o.action), n->action[0] ? n->action : "drain");
		if (add_outlier(f, &o))
			return -1;
	}
	for (unsigned g = 0; g < n->ngpu; g++) {
		const struct fleet_gpu *fg = &n->gpu[g];
		if (!fg->fail_rules[0] && strcmp(fg->verdict, "FAIL") != 0)
			continue;
		struct fleet_outlier o = { .node = i, .gpu = (int)fg->index, .kind = FLEET_OUT_HEALTH, .drain = true };
		copy_str(o.what, sizeof(o.what), fg->fail_rules[0] ? fg->fail_rules : "failed");
		copy_str(o.action, sizeof(o.action), fg->action[0] ? fg->action : "drain");
		if (add_outlier(f, &o))
			return -1;
	}
	if (strcmp(n->diag_verdict, "FAIL") == 0) {
		struct fleet_outlier o = { .node = i, .gpu = -1, .kind = FLEET_OUT_DIAG, .drain = true };
		copy_str(o.what, sizeof(o.what), n->diag_fail[0] ? n->diag_fail : "diag FAIL");
		copy_str(o.action, sizeof(o.action), "drain");
		if (add_outlier(f, &o))
			return -1;
	}
	return figure_outliers(f, i);
}

int fleet_analyze(struct fleet *f)
{
	free(f->stat);
	free(f->out);
	f->stat = NULL;
	f->out = NULL;
	f->nstat = f->nout = 0;
	size_t cap = 1;
	for (size_t i = 0; i < f->n; i++)
		cap += f->node[i].ngpu + 1;
	double *scratch = malloc(cap * sizeof(double));
	if (!scratch)
		return -1;
	int rc = 0;
	/* one statistic per figure and group, in the order the groups first appear */
	for (int k = 0; k < FLEET_NFIG && !rc; k++)
		for (size_t i = 0; i < f->n && !rc; i++) {
			const struct fleet_node *n = &f->node[i];
			for (int g = fleet_figs[k].per_node ? -1 : 0; g < (fleet_figs[k].per_node ? 0 : (int)n->ngpu) && !rc;
			     g++) {
				char group[FLEET_GROUP_LEN];
				group_of(n, g, group, sizeof(group));
				if (n->state == FLEET_DONE && isfinite(value_of(n, g, k)) && !stat_for(f, k, group))
					rc = stat_one(f, k, group, scratch);
			}
		}
	free(scratch);
	for (size_t i = 0; i < f->n && !rc; i++)
		rc = node_outliers(f, i);
	return rc;
}

int fleet_verdict(const struct fleet *f)
{
	int v = 0;
	for (size_t o = 0; o < f->nout; o++)
		v = f->out[o].kind == FLEET_OUT_NOT_SWEPT ? (v > 1 ? v : 1) : 2;
	return v;
}

/* ---- fleet.json ------------------------------------------------------------------------ */

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *int_or_null(long v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

static json_t *gpu_json(const struct fleet_gpu *g)
{
	json_t *figs = json_object();
	for (int k = 0; k < FLEET_NFIG; k++)
		if (!fleet_figs[k].per_node)
			json_object_set_new(figs, fleet_figs[k].key, num_or_null(g->fig[k]));
	return json_pack("{sI ss ss ss ss ss ss ss sI so so so so so so so so so}", "index", (json_int_t)g->index, "name",
			 g->name, "uuid", g->uuid, "verdict", g->verdict, "action", g->action, "fail_rules",
			 g->fail_rules, "fail_reasons", g->fail_words, "warn_rules", g->warn_rules, "xids", (json_int_t)g->xids, "pcie_gen",
			 int_or_null(g->pcie_gen), "pcie_gen_max", int_or_null(g->pcie_gen_max), "pcie_width",
			 int_or_null(g->pcie_width), "pcie_width_max", int_or_null(g->pcie_width_max),
			 "nvlink_active", int_or_null(g->nvlink_active), "nvlink_count", int_or_null(g->nvlink_count),
			 "ecc_vol_uncorrected", int_or_null(g->ecc_uncorrected), "remap_pending",
			 int_or_null(g->remap_pending), "figures", figs);
}

static json_t *node_json(const struct fleet_node *n)
{
	json_t *gpus = json_array(), *figs = json_object();
	for (unsigned g = 0; g < n->ngpu; g++)
		json_array_append_new(gpus, gpu_json(&n->gpu[g]));
	for (int k = 0; k < FLEET_NFIG; k++)
		if (fleet_figs[k].per_node)
			json_object_set_new(figs, fleet_figs[k].key, num_or_null(n->fig[k]));
	return json_pack("{ss ss ss sb ss ss ss ss ss ss ss ss ss so so}", "node", n->name, "state",
			 fleet_state_name(n->state), "note", n->note, "simulated", n->simulated, "driver", n->driver, "cuda",
			 n->cuda, "verdict", n->verdict, "action", n->action, "system_fail_rules", n->sys_fail_rules,
			 "system_fail_reasons", n->sys_fail_words, "diag_verdict", n->diag_verdict, "diag_fail",
			 n->diag_fail, "figures_source", n->figures_source, "figures", figs, "gpus", gpus);
}

static const char *const outlier_kind_names[] = { "health", "diag", "figure", "not-swept" };

json_t *fleet_to_json(const struct fleet *f)
{
	json_t *figs = json_array(), *stats = json_array(), *nodes = json_array(), *outs = json_array();
	for (int k = 0; k < FLEET_NFIG; k++)
		json_array_append_new(figs, json_pack("{ss ss ss sb}", "key", fleet_figs[k].key, "label",
						      fleet_figs[k].label, "unit", fleet_figs[k].unit, "per_node",
						      fleet_figs[k].per_node));
	for (size_t s = 0; s < f->nstat; s++)
		json_array_append_new(stats, json_pack("{ss ss sI so so}", "figure", fleet_figs[f->stat[s].fig].key,
						       "model", f->stat[s].model, "n", (json_int_t)f->stat[s].n,
						       "median", num_or_null(f->stat[s].median), "mad",
						       num_or_null(f->stat[s].mad)));
	for (size_t i = 0; i < f->n; i++)
		json_array_append_new(nodes, node_json(&f->node[i]));
	for (size_t o = 0; o < f->nout; o++) {
		const struct fleet_outlier *x = &f->out[o];
		json_array_append_new(outs, json_pack("{ss so ss so so so so ss ss sb}", "node", f->node[x->node].name,
						      "gpu", x->gpu >= 0 ? json_integer(x->gpu) : json_null(), "kind",
						      outlier_kind_names[x->kind], "figure",
						      x->kind == FLEET_OUT_FIGURE ? json_string(fleet_figs[x->fig].key) : json_null(),
						      "value", x->kind == FLEET_OUT_FIGURE ? num_or_null(x->value) : json_null(),
						      "median", x->kind == FLEET_OUT_FIGURE ? num_or_null(x->median) : json_null(),
						      "below_pct", x->kind == FLEET_OUT_FIGURE ? num_or_null(x->below_pct) : json_null(),
						      "what", x->what, "action", x->action, "drain", x->drain));
	}
	return json_pack("{ss si ss sf sb so so so so}", "schema", "gpuctl-fleet", "version", 1, "level", f->level,
			 "threshold_pct", f->threshold_pct, "simulated", f->simulated, "figures", figs, "stats", stats,
			 "nodes", nodes, "outliers", outs);
}

static int node_from_json(struct fleet *f, const json_t *jn, char *err, size_t errlen)
{
	const char *name = jstr(jn, "node");
	int state = fleet_state_parse(jstr(jn, "state"));
	const json_t *gpus = json_object_get(jn, "gpus");
	if (!name[0] || state < 0 || (gpus && !json_is_array(gpus)) || json_array_size(gpus) > FLEET_MAX_GPUS) {
		snprintf(err, errlen, "a node without a name or a known state, or with more than %d GPUs", FLEET_MAX_GPUS);
		return -1;
	}
	struct fleet_node *n = new_node(f, name);
	if (!n) {
		snprintf(err, errlen, "more than %d nodes", FLEET_MAX_NODES);
		return -1;
	}
	n->state = (enum fleet_node_state)state;
	n->simulated = json_is_true(json_object_get(jn, "simulated"));
	copy_str(n->note, sizeof(n->note), jstr(jn, "note"));
	copy_str(n->verdict, sizeof(n->verdict), jstr(jn, "verdict"));
	copy_str(n->action, sizeof(n->action), jstr(jn, "action"));
	copy_str(n->sys_fail_rules, sizeof(n->sys_fail_rules), jstr(jn, "system_fail_rules"));
	copy_str(n->sys_fail_words, sizeof(n->sys_fail_words), jstr(jn, "system_fail_reasons"));
	copy_str(n->driver, sizeof(n->driver), jstr(jn, "driver"));
	copy_str(n->cuda, sizeof(n->cuda), jstr(jn, "cuda"));
	copy_str(n->diag_verdict, sizeof(n->diag_verdict), jstr(jn, "diag_verdict"));
	copy_str(n->diag_fail, sizeof(n->diag_fail), jstr(jn, "diag_fail"));
	copy_str(n->figures_source, sizeof(n->figures_source), jstr(jn, "figures_source"));
	const json_t *figs = json_object_get(jn, "figures");
	for (int k = 0; k < FLEET_NFIG; k++)
		if (fleet_figs[k].per_node)
			n->fig[k] = jnum(figs, fleet_figs[k].key);
	size_t i;
	const json_t *g;
	json_array_foreach(gpus, i, g)
	{
		struct fleet_gpu *fg = new_gpu(n, g, "verdict", "action");
		if (!fg) {
			snprintf(err, errlen, "node '%.64s': a GPU without an index, or a repeated one", name);
			return -1;
		}
		copy_str(fg->fail_rules, sizeof(fg->fail_rules), jstr(g, "fail_rules"));
		copy_str(fg->fail_words, sizeof(fg->fail_words), jstr(g, "fail_reasons"));
		copy_str(fg->warn_rules, sizeof(fg->warn_rules), jstr(g, "warn_rules"));
		long x = jlong(g, "xids");
		fg->xids = x > 0 ? (unsigned)x : 0;
		read_counters(fg, g);
		const json_t *gf = json_object_get(g, "figures");
		for (int k = 0; k < FLEET_NFIG; k++)
			fg->fig[k] = fleet_figs[k].per_node ? NAN : jnum(gf, fleet_figs[k].key);
	}
	if (n->simulated)
		f->simulated = true;
	return 0;
}

int fleet_from_json(struct fleet *f, const char *text, size_t len, char *err, size_t errlen)
{
	json_error_t je;
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!doc) {
		snprintf(err, errlen, "not JSON (line %d: %.120s)", je.line, je.text);
		for (char *p = err; *p; p++)
			if (*p == '\n')
				*p = ' ';
		return -1;
	}
	int rc = -1;
	const json_t *nodes = json_object_get(doc, "nodes");
	double thr = json_number_value(json_object_get(doc, "threshold_pct"));
	if (!json_is_object(doc) || strcmp(jstr(doc, "schema"), "gpuctl-fleet") != 0 || !json_is_array(nodes)) {
		snprintf(err, errlen, "not a gpuctl-fleet document (fleet.json of gpuctl slurm sweep)");
	} else if (!(thr > 0 && thr < 100)) {
		snprintf(err, errlen, "threshold_pct must be a number above 0 and under 100");
	} else {
		fleet_init(f, jstr(doc, "level"), thr);
		size_t i;
		const json_t *jn;
		rc = 0;
		json_array_foreach(nodes, i, jn)
		{
			if ((rc = node_from_json(f, jn, err, errlen)) != 0)
				break;
		}
		if (!rc && fleet_analyze(f) != 0) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
		}
		if (rc)
			fleet_free(f);
	}
	json_decref(doc);
	return rc;
}
