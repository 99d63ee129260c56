/* SPDX-License-Identifier: Apache-2.0 */
/* fleet_drain.c - what `gpuctl slurm sweep --drain` drains (fleet.h): the
 * reason in words, the cap, never a GPU model's last node, and whether a
 * node drained already is drained again. Pure. */
#include "slurm/fleet.h"

#include <stdlib.h>
#include <string.h>

/* The fleet_gpu of n with index idx, NULL if none. */
static const struct fleet_gpu *gpu_of(const struct fleet_node *n, int idx)
{
	for (unsigned g = 0; g < n->ngpu; g++)
		if ((int)n->gpu[g].index == idx)
			return &n->gpu[g];
	return NULL;
}

/* One outlier in words: "GPU 3 XID 79: GPU has fallen off the bus", "GPU 5
 * GEMM BF16 18% below the median", "diag failed: memory". */
static void outlier_words(const struct fleet *f, const struct fleet_outlier *o, char *out, size_t len)
{
	const struct fleet_node *n = &f->node[o->node];
	char who[24] = "";
	if (o->gpu >= 0)
		snprintf(who, sizeof(who), "GPU %d ", o->gpu);
	if (o->kind == FLEET_OUT_FIGURE) {
		snprintf(out, len, "%s%s %.0f%% below the median of its model", who, fleet_figs[o->fig].label, o->below_pct);
	} else if (o->kind == FLEET_OUT_DIAG) {
		snprintf(out, len, "diag failed: %s", o->what);
	} else if (o->gpu >= 0) {
		const struct fleet_gpu *g = gpu_of(n, o->gpu);
		snprintf(out, len, "%s%s", who, g && g->fail_words[0] ? g->fail_words : o->what);
	} else {
		snprintf(out, len, "%s", n->sys_fail_words[0] ? n->sys_fail_words : o->what);
	}
}

bool fleet_drain_reason(const struct fleet *f, size_t i, char *out, size_t outlen)
{
	if (!outlen)
		return false;
	snprintf(out, outlen, "%s", FLEET_REASON_PREFIX);
	bool any = false;
	for (size_t k = 0; k < f->nout; k++) {
		const struct fleet_outlier *o = &f->out[k];
		if (o->node != i || !o->drain)
			continue;
		char words[FLEET_WORDS_LEN + 48];
		outlier_words(f, o, words, sizeof(words));
		size_t n = strlen(out);
		if (n + strlen(words) + 3 <= outlen)
			snprintf(out + n, outlen - n, "%s %s", any ? ";" : "", words);
		any = true;
	}
	if (!any) {
		out[0] = '\0';
		return false;
	}
	slurm_reason_clean(out);
	return true;
}

enum slurm_hc_action fleet_drain_decide(const char *reason, const struct slurm_node_info *node)
{
	if (!node->drain)
		return SLURM_HC_DRAIN;
	if (strncmp(node->reason, FLEET_REASON_PREFIX, strlen(FLEET_REASON_PREFIX)) != 0)
		return SLURM_HC_KEEP_OTHERS;
	return strcmp(node->reason, reason ? reason : "") == 0 ? SLURM_HC_NONE : SLURM_HC_DRAIN;
}

size_t fleet_drain_cap_default(size_t nodes)
{
	return nodes / 10 ? nodes / 10 : 1;
}

/* The GPU model of a node (its first GPU's), "" without GPUs. */
static const char *model_of(const struct fleet_node *n)
{
	return n->ngpu ? n->gpu[0].name : "";
}

/* How many of the fleet's swept nodes have n's model. */
static size_t model_nodes(const struct fleet *f, const struct fleet_node *n)
{
	size_t c = 0;
	for (size_t j = 0; j < f->n; j++)
		c += f->node[j].state == FLEET_DONE && strcmp(model_of(&f->node[j]), model_of(n)) == 0;
	return c;
}

/* Whether an outlier of node i other than a figure drains (a health or diag failure). */
static bool hard_fault(const struct fleet *f, size_t i)
{
	for (size_t k = 0; k < f->nout; k++)
		if (f->out[k].node == i && f->out[k].drain && f->out[k].kind != FLEET_OUT_FIGURE)
			return true;
	return false;
}

size_t fleet_drain_plan(const struct fleet *f, size_t max_nodes, enum fleet_drain_plan *plan)
{
	char reason[SLURM_REASON_LEN];
	size_t drained = 0;
	for (size_t i = 0; i < f->n; i++)
		plan[i] = FLEET_KEEP;
	/* two passes: health and diag failures before figures */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < f->n; i++) {
			const struct fleet_node *n = &f->node[i];
			if (hard_fault(f, i) != (pass == 0) || !fleet_drain_reason(f, i, reason, sizeof(reason)))
				continue;
			size_t same = 0; /* nodes of its model this sweep drains already */
			for (size_t j = 0; j < f->n; j++)
				same += plan[j] == FLEET_DRAIN && strcmp(model_of(&f->node[j]), model_of(n)) == 0;
			if (same + 1 >= model_nodes(f, n))
				plan[i] = FLEET_LAST_OF_MODEL;
			else if (drained >= max_nodes)
				plan[i] = FLEET_OVER_CAP;
			else {
				plan[i] = FLEET_DRAIN;
				drained++;
			}
		}
	return drained;
}
