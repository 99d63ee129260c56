/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_util.h - gpu.h's values and objects as JSON (jansson): the one
 * serializer of GPU data, for every --json output and the agent's
 * /api/v1/gpus alike (one vocabulary, docs/json.md).
 *
 * A value that is present is written under its key with its natural type.
 * A value that is not ("not supported", "error", or "not read" when its
 * metric group was skipped) is left out and named instead in the object's
 * "unavailable" member: {"fan_pct": "not supported"}. So a key's type never
 * changes and nothing is ever a silent 0.
 */
#ifndef GPUCTL_JSON_UTIL_H
#define GPUCTL_JSON_UTIL_H

#include <jansson.h>
#include <stdio.h>

#include "device/gpu.h"
#include "device/snapshot.h"

/* Every JSON document gpuctl writes gives a real number in at most 15
 * significant digits, what a double holds exactly (docs/json.md): 1.003394917,
 * not 1.0033949170000001. Each json_dump* of an output takes it. */
#define JSON_REAL_DIGITS JSON_REAL_PRECISION(15)

/* Put one value into obj under key (or its reason under obj.unavailable.key). */
void json_put_u64v(json_t *obj, const char *key, u64v v);
void json_put_i64v(json_t *obj, const char *key, i64v v);
void json_put_strv(json_t *obj, const char *key, const strv *v);
void json_put_boolv(json_t *obj, const char *key, u64v v); /* 1/0 -> true/false */
/* Moves obj's "unavailable" member (if any) to the end, where readers look
 * for it; the json_gpu_* builders do this before they return. */
void json_unavailable_last(json_t *obj);
/* A plain integer (clamped to INT64_MAX: jansson's integers are signed). */
json_t *json_u64(uint64_t v);

/* Clock-event (throttle) reasons: one entry per CLK_EVT_* bit. */
struct clk_evt_name {
	uint64_t bit;
	const char *key;   /* "sw_power_cap" (JSON) */
	const char *label; /* "SW Power Cap" (as nvidia-smi -q names it) */
};
extern const struct clk_evt_name clk_evt_names[];
extern const unsigned clk_evt_count;
/* "Idle, SW Power Cap" or "none"; bits no name covers as "0x...". */
void clk_evt_describe(uint64_t bits, char *out, size_t outlen);

/* "Default", "Exclusive_Process", ... (nvidia-smi's spelling); "unknown" otherwise. */
const char *gpu_compute_mode_name(uint64_t mode);
/* A topology cell as nvidia-smi topo -m prints it: "X", "NV18", "PIX", "SYS". */
void gpu_link_label(const struct gpu_link *l, char *out, size_t outlen);

/* Whole objects (new references). */
json_t *json_gpu_system(const struct gpu_system *sys);
json_t *json_gpu_static(const struct gpu_static *st);
json_t *json_gpu_sample(const struct gpu_sample *s);
json_t *json_gpu_process(const struct gpu_process *p);
json_t *json_gpu_mig(const struct gpu_mig *m);
json_t *json_gpu_link(unsigned a, unsigned b, const struct gpu_link *l);

/* One GPU of a snapshot, as `info --json` and /api/v1/gpus write it: the
 * static facts, "up", "error", "sample", "processes", "mig_instances", then
 * "unavailable". A GPU that is down has no values in its sample (each is
 * "not read": what the view holds is its last good reading, stale) and no
 * NVLinks. flags: JSON_GPU_* below. */
#define JSON_GPU_NO_NVLINK_LIST 1u /* leave out sample.nvlinks (the per-link objects) */
json_t *json_gpu_view(const struct gpu_view *v, unsigned flags);

/* Writes doc indented by 2, keys in insertion order, and a newline. 0 or -1. */
int json_write(const json_t *doc, FILE *out);

#endif
