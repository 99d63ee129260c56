/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api.h - the agent's JSON documents (/api/v1/gpus, /api/v1/health), built
 * with jansson from a snapshot and a health report. Pure. Each document is
 * rendered as a head, one compact JSON object per GPU, and a tail, so the
 * server answers ?gpu=0,3 by joining the pieces it needs (docs/agent.md).
 */
#ifndef GPUCTL_API_H
#define GPUCTL_API_H

#include <stdbool.h>
#include <stdint.h>

#include "health/health.h"
#include "device/snapshot.h"
#include "core/abuf.h"
#include "health/leakwatch.h"

struct api_doc {
	struct abuf head;                 /* '{"simulated":...,"gpus":[' */
	struct abuf item[GPU_MAX_GPUS];   /* one object per GPU, compact */
	unsigned n;
	struct abuf tail;                 /* ']...}' */
};

void api_doc_init(struct api_doc *d);
void api_doc_free(struct api_doc *d);
/* Joins the head, the items whose bit is set in mask and the tail into out. */
int api_doc_join(const struct api_doc *d, uint64_t mask, bool pretty, struct abuf *out);

/* /api/v1/gpus from a snapshot. hostname may be NULL (the snapshot's). 0 or -1 (out of memory). */
int api_render_gpus(struct api_doc *d, const struct snapshot *snap, const char *hostname);
/* /api/v1/health from a report (rep NULL: health rules not loaded; each GPU's
 * up/down state is served instead, with "rules": false). */
int api_render_health(struct api_doc *d, const struct snapshot *snap, const struct health_report *rep,
		      const char *hostname);

/* What the leak watch adds to /api/v1/health (docs/agent.md). */
struct api_leak_watch {
	const struct leakwatch_leak *leaks;   /* ordered by GPU */
	unsigned nleaks;
	double window_s, min_rate, min_growth;
	unsigned tracked;
	uint64_t untracked;
};
/* api_render_health plus a top-level "leak_watch" object and a "leaks" array
 * per GPU (lw NULL: the same as api_render_health). */
int api_render_health_watch(struct api_doc *d, const struct snapshot *snap, const struct health_report *rep,
			    const char *hostname, const struct api_leak_watch *lw);

#endif
