/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue_view.h - what `gpuctl queue` shows of the agent's `queue` answer,
 * read straight from its text (jscan.h) into one array of rows: at 10 000
 * jobs a jansson tree cost more than the agent's whole answer. Pure.
 *
 * Values of the wrong type read as absent, as jansson's json_*_value would
 * give them to the table; for a key given twice the last one counts.
 */
#ifndef GPUCTL_POOL_QUEUE_VIEW_H
#define GPUCTL_POOL_QUEUE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/abuf.h"

#define QV_NONE ((size_t)-1) /* a string field that is absent */

struct queue_row {
	long long id, priority, submit_ns, start_ns, est_start_ns;
	size_t user, name, state, reason, warning; /* offsets into queue_view.strings, or QV_NONE */
	/* request */
	size_t req_mig;
	long long req_gpus;
	bool req_nvlink;
	/* gpus held: the indexes as "0,1,2" (at most 127 bytes), "" when none */
	char gpus[128];
	bool has_mig_instance;
	long long mig_gi;
};

struct queue_view {
	struct queue_row *rows;
	size_t n, cap;
	long long pending, running;
	bool simulated, ok;
	size_t error;        /* the agent's "error" (ok false), or QV_NONE */
	struct abuf strings; /* every string, NUL-terminated, one after another */
};

/* Reads the answer: 0, or -1 when it is not a JSON object as jansson would
 * load it (the caller then asks jansson for the message) or memory ran out. */
int queue_view_read(const char *answer, size_t len, struct queue_view *v);
void queue_view_free(struct queue_view *v);
/* A string field: its text, or NULL when absent. */
const char *queue_view_str(const struct queue_view *v, size_t off);

#endif
