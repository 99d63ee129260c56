/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metrics.h - the Prometheus / OpenMetrics exposition of a snapshot.
 *
 * metrics_render() is a pure function of a snapshot and options: no clock
 * (the snapshot's taken_ns is "now"), no I/O. Every metric it can emit is a
 * row of metric_table[] (docs/metrics.md lists the same rows; a unit test
 * checks both ways), or with dcgm_compat one of metrics_dcgm.h's. Values that are unsupported or unread are absent, never
 * 0; a GPU that is down exposes only gpuctl_gpu_up 0 and its bookkeeping.
 */
#ifndef GPUCTL_METRICS_H
#define GPUCTL_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sampler/sampler.h"
#include "core/abuf.h"
#include "health/leakwatch.h"

/*
 * Metric groups (config `metrics = ...`), one row each in bit order:
 * X(ID, name). They are the agent's own bits, not the sampler's GPU_GRP_*
 * (gpu.h): metrics_sampler_groups() says which sampler groups a set needs.
 */
#define METRIC_GROUP_TABLE(X) \
	X(BASIC, basic)         \
	X(ECC, ecc)             \
	X(PCIE, pcie)           \
	X(NVLINK, nvlink)       \
	X(THROTTLE, throttle)   \
	X(PROCESSES, processes) \
	X(MIG, mig)             \
	X(XID, xid)             \
	X(HEALTH, health)       \
	X(PROF, prof)

enum metric_group_index {
#define METRIC_GROUP_INDEX(id, name) MG_INDEX_##id,
	METRIC_GROUP_TABLE(METRIC_GROUP_INDEX)
#undef METRIC_GROUP_INDEX
	MG_NGROUPS
};

enum metric_group {
#define METRIC_GROUP_BIT(id, name) MG_##id = 1u << MG_INDEX_##id,
	METRIC_GROUP_TABLE(METRIC_GROUP_BIT)
#undef METRIC_GROUP_BIT
	MG_ALL = (1u << MG_NGROUPS) - 1u
};

/* The sampler groups (GPU_GRP_*) that metric groups mg (MG_*) are read from:
 * basic brings the energy counter, nvlink the per-link error counters. */
unsigned metrics_sampler_groups(unsigned mg);

enum metric_type { METRIC_GAUGE, METRIC_COUNTER };

struct metric_desc {
	const char *name;   /* as exposed in the Prometheus text format; counters end in _total */
	enum metric_type type;
	unsigned group;     /* MG_* bit, 0 = always */
	const char *labels; /* labels beyond the per-GPU ones, for the docs ("" if none) */
	const char *help;
};

extern const struct metric_desc metric_table[];
extern const size_t metric_table_n;

#define METRICS_MAX_LABELS 16
struct metric_label {
	char key[64];
	char value[128];
};

/* One health verdict per GPU for gpuctl_gpu_health_status (filled by the agent). */
struct metrics_health {
	bool valid;
	int status;          /* 0 healthy, 1 warning, 2 failure */
};

struct metrics_opts {
	unsigned groups;              /* MG_* */
	bool openmetrics;             /* OpenMetrics 1.0 text (counters' family names lose _total, # EOF) */
	const char *hostname;         /* NULL: the snapshot's */
	unsigned nlabels;             /* extra labels on every series */
	struct metric_label labels[METRICS_MAX_LABELS];
	const char *version;          /* gpuctl's version, for gpuctl_agent_info */
	int kernel_log;               /* -1 not read, 0 unreadable, 1 readable */
	int sim_fault_file;           /* -1 not simulated, 0 applied (or none), 1 not applied */
	uint64_t last_render_ns;      /* how long the previous render took */
	const struct metrics_health *health; /* snapshot.n entries, or NULL */
	const struct leakwatch_leak *leaks;  /* processes the leak watch flags (nleaks of them) */
	unsigned nleaks;
	bool dcgm_compat;             /* also dcgm-exporter's names and labels (metrics_dcgm.h) */
};

void metrics_opts_default(struct metrics_opts *o);

/* Renders the exposition of snap into out (appends). Returns 0, or -1 when out of memory. */
int metrics_render(struct abuf *out, const struct snapshot *snap, const struct metrics_opts *o);

/* For the renderers (metrics.c, metrics_dcgm.c): `key="value"`, after a
 * comma unless first, the value escaped as the format wants; the hostname
 * label's value (o's, else the snapshot's). */
void metrics_put_label(struct abuf *b, bool first, const char *key, const char *value);
const char *metrics_hostname(const struct snapshot *snap, const struct metrics_opts *o);

/* "basic,ecc,pcie" or "all" -> MG_* bits. Returns 0, or -1 with a one-line message. */
int metrics_groups_parse(const char *list, unsigned *out, char *err, size_t errlen);
/* [a-zA-Z_][a-zA-Z0-9_]*, not starting with __, not one the agent sets itself. */
bool metrics_label_name_ok(const char *name);

#endif
