/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fleet.h - a fleet sweep's statistics (pure, no I/O): `gpuctl slurm sweep`
 * (docs/slurm.md, "Fleet sweep").
 *
 * Each swept node writes one result document (schema gpuctl-sweep-node:
 * its health report, its links, figures). The fleet reads them, takes per
 * figure and group (GPU model, driver and CUDA version: an H200 is never
 * compared with an A100) the median and the median absolute deviation (MAD),
 * and names the outliers: a GPU (or a node, for node-wide figures) below the
 * median by more than the threshold, a health rule that FAILs, or WARNs
 * with an action (with the rule's action), a diag level that FAILs, and nodes that were not swept
 * (their job failed, or never started). It writes fleet.json, reads it back
 * (--compare) and compares two sweeps.
 */
#ifndef GPUCTL_SLURM_FLEET_H
#define GPUCTL_SLURM_FLEET_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "slurm/node.h"

#define FLEET_NAME_LEN 64
#define FLEET_MAX_GPUS 64
#define FLEET_MAX_NODES 4096
#define FLEET_RULES_LEN 160
#define FLEET_WORDS_LEN 200 /* the failing findings in words, for a drain reason */
#define FLEET_GROUP_LEN 128 /* "NVIDIA H200 (driver 580.95.05, CUDA 13.0)" */
#define FLEET_DEFAULT_THRESHOLD_PCT 8.0
/* A sweep's drain reason starts with this, not with SLURM_REASON_PREFIX: the
 * health-check hook resumes nodes whose reason is its own, and a node slow
 * against the fleet is healthy to the hook (it would be resumed at once). */
#define FLEET_REASON_PREFIX "gpuctl sweep:"

enum fleet_fig { FIG_MEM_BW = 0, FIG_GEMM_BF16, FIG_H2D, FIG_P2P, FIG_ALLREDUCE, FLEET_NFIG };

/* The figures: one table (key in JSON, label, unit; per_node: one value per
 * node, not per GPU). */
struct fleet_fig_def {
	const char *key, *label, *unit;
	bool per_node;
};
extern const struct fleet_fig_def fleet_figs[FLEET_NFIG];

enum fleet_node_state {
	FLEET_DONE = 0,    /* its result was read */
	FLEET_FAILED,      /* its job ended without a result, or the result is unreadable */
	FLEET_NOT_STARTED, /* its job never started before the start timeout */
};
const char *fleet_state_name(enum fleet_node_state s); /* "done", "failed", "not-started" */

struct fleet_gpu {
	unsigned index;
	char name[FLEET_NAME_LEN];     /* "NVIDIA H200": the model the statistics group by */
	char uuid[96];
	char verdict[8];               /* effective health verdict: PASS WARN FAIL N/A */
	char action[16];               /* its action */
	char fail_rules[FLEET_RULES_LEN]; /* "xid-79,pcie-width-below-max": FAIL findings and WARNs
					   * whose rule has an action (the outliers) */
	char warn_rules[FLEET_RULES_LEN]; /* the other WARN findings */
	char fail_words[FLEET_WORDS_LEN]; /* fail_rules' findings in words: "XID 79: GPU has fallen off the bus" */
	unsigned xids;                 /* XID findings (any verdict) */
	long pcie_gen, pcie_gen_max, pcie_width, pcie_width_max; /* -1: unknown */
	long nvlink_active, nvlink_count;
	long ecc_uncorrected, remap_pending;
	double fig[FLEET_NFIG];        /* NAN: not measured; per-node figures stay NAN here */
};

struct fleet_node {
	char name[FLEET_NAME_LEN];
	enum fleet_node_state state;
	char note[200];                /* why it failed / was not started */
	bool simulated;
	char verdict[8], action[16];   /* the node's health (system entry included) */
	char sys_fail_rules[FLEET_RULES_LEN];
	char sys_fail_words[FLEET_WORDS_LEN];
	char driver[32], cuda[16];     /* the driver's and its CUDA's version, "" unknown: part of the group */
	char diag_verdict[8];          /* "" when the level ran no diag */
	char diag_fail[FLEET_RULES_LEN]; /* failing diag tests */
	char figures_source[16];       /* "measured", "simulated", "" (none) */
	unsigned ngpu;
	struct fleet_gpu gpu[FLEET_MAX_GPUS];
	double fig[FLEET_NFIG];        /* per-node figures (all-reduce) */
};

enum fleet_outlier_kind { FLEET_OUT_HEALTH = 0, FLEET_OUT_DIAG, FLEET_OUT_FIGURE, FLEET_OUT_NOT_SWEPT };

struct fleet_outlier {
	size_t node;
	int gpu;                       /* -1: the node (system rules, node figures, not swept) */
	enum fleet_outlier_kind kind;
	enum fleet_fig fig;            /* FLEET_OUT_FIGURE */
	double value, median, below_pct;
	char what[FLEET_RULES_LEN];    /* rules, tests, or the state */
	char action[16];
	bool drain;                    /* --drain drains its node for it */
};

struct fleet_stat {
	enum fleet_fig fig;
	char model[FLEET_GROUP_LEN];   /* the group: the GPU model (a node's: its first GPU's), and
				        * " (driver D, CUDA C)" when the results have them */
	size_t n;
	double median, mad;            /* MAD: median of |x - median| */
};

struct fleet {
	char level[16];
	double threshold_pct;
	bool simulated;                /* any node's figures or server were simulated */
	struct fleet_node *node;
	size_t n, cap;
	struct fleet_stat *stat;
	size_t nstat;
	struct fleet_outlier *out;
	size_t nout;
};

void fleet_init(struct fleet *f, const char *level, double threshold_pct);
void fleet_free(struct fleet *f);

/* Adds a node from its result document (text; the fleet takes its "level"
 * when it has none yet); on a document it cannot read
 * the node is added as FLEET_FAILED with the reason in its note, and -1. */
int fleet_add_result(struct fleet *f, const char *node, const char *text, size_t len, char *err, size_t errlen);
/* Adds a node that has no result. -1 only when memory runs out. */
int fleet_add_missing(struct fleet *f, const char *node, enum fleet_node_state state, const char *note);

/* The statistics and outliers (again, after nodes were added). -1: out of memory. */
int fleet_analyze(struct fleet *f);
/* The worst outcome: 0 every node swept and no outlier, 1 a node not swept, 2 an outlier. */
int fleet_verdict(const struct fleet *f);

/* The drain reason for node i in words ("gpuctl sweep: GPU 1 XID 79: GPU has fallen off
 * the bus; GPU 3 GEMM BF16 18% below the median"), false (and "") when no outlier of it
 * drains. '"' and newlines become '\''. (fleet_drain.c) */
bool fleet_drain_reason(const struct fleet *f, size_t i, char *out, size_t outlen);

/* What --drain does with a node. */
enum fleet_drain_plan {
	FLEET_KEEP = 0,     /* nothing of it calls for a drain */
	FLEET_DRAIN,        /* drain it */
	FLEET_OVER_CAP,     /* it calls for a drain, but the cap is reached */
	FLEET_LAST_OF_MODEL /* it calls for a drain, but it is its GPU model's last node left */
};
/* The default cap: 10% of the nodes swept, at least 1. */
size_t fleet_drain_cap_default(size_t nodes);
/* Which nodes --drain drains (plan[f->n]): those with a drain reason, the
 * ones with a health or diag outlier first, then figures, each in the
 * fleet's order, at most max_nodes of them, and never the last node of a
 * GPU model that the sweep leaves in service (the rest of the model drained
 * or not swept). Returns how many it drains. */
size_t fleet_drain_plan(const struct fleet *f, size_t max_nodes, enum fleet_drain_plan *plan);
/* Whether to drain a node for reason: drain when not drained, or drained by an
 * earlier sweep with another reason; leave a node drained by anyone else. */
enum slurm_hc_action fleet_drain_decide(const char *reason, const struct slurm_node_info *node);

/* fleet.json: {"schema": "gpuctl-fleet", ...} (docs/slurm.md). NULL: out of memory. */
json_t *fleet_to_json(const struct fleet *f);
/* Reads fleet.json back (its nodes; statistics and outliers are recomputed
 * with its threshold). 0, or -1 with a one-line message. */
int fleet_from_json(struct fleet *f, const char *text, size_t len, char *err, size_t errlen);

/* What changed from old to new, one line each, into out (NUL-terminated,
 * truncated to outlen): outliers that appeared or recovered, figures that fell
 * or rose by more than the new sweep's threshold, nodes added or gone.
 * Returns the number of changes. */
size_t fleet_compare(const struct fleet *old, const struct fleet *new, char *out, size_t outlen);

/* The report: text (fleet.txt) and one self-contained HTML page (fleet.html). */
void fleet_write_text(const struct fleet *f, FILE *o);
void fleet_write_html(const struct fleet *f, FILE *o);

/* Figures out of a `gpuctl bench --json` results document (gpuctl-bench-results)
 * into the node's GPUs (matched by index) and node figures; 0, or -1 with a message. */
int fleet_figures_from_bench(struct fleet_node *n, const json_t *bench, char *err, size_t errlen);

struct snapshot;
struct catalog;
/* SIMULATED figures of a simulated server's snapshot on node (fleet_sim.c says how):
 * {"source": "simulated", "gpus": [{"index", KEY: value}], KEY: value}, the
 * "figures" object of a node result. NULL: out of memory. */
json_t *fleet_sim_figures(const struct snapshot *snap, const struct catalog *cat, const char *node);

#endif
