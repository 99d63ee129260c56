/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jscan_bench.c - is src/core/jscan.c's re-indenter still faster than
 * jansson? Times what `gpuctl queue --json` does with the agent's answer:
 * jscan_pretty(answer, "ok") against jansson's json_loadb, json_object_del
 * "ok", json_dumpb(JSON_INDENT(2) | JSON_PRESERVE_ORDER) (what the command
 * did before jscan), on a queue answer of N pending jobs in the agent's
 * shape (docs/pool.md, "Job objects"), and checks both give the same bytes.
 * Median and min of RUNS each, wall clock. Not in CI; figures go to
 * bench/RESULTS.md ("Pool (simulated)") and the commit message.
 *
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Isrc bench/jscan_bench.c src/core/jscan.c src/core/abuf.c src/core/pages.c \
 *      $(pkg-config --cflags --libs jansson) -o /tmp/jscan_bench && /tmp/jscan_bench [N [RUNS]]
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "core/jscan.h"

/* The agent's compact answer to `queue` with n pending jobs. */
static char *queue_answer(unsigned n, size_t *len)
{
	json_t *doc = json_object(), *jobs = json_array();
	json_object_set_new(doc, "ok", json_true());
	for (unsigned i = 0; i < n; i++) {
		json_t *j = json_object(), *req = json_object();
		char name[32], user[16];
		snprintf(name, sizeof(name), "train-%u", i);
		snprintf(user, sizeof(user), "user%u", i % 16);
		json_object_set_new(j, "id", json_integer(i + 2));
		json_object_set_new(j, "name", json_string(name));
		json_object_set_new(j, "user", json_string(user));
		json_object_set_new(j, "uid", json_integer(1000 + i % 16));
		json_object_set_new(j, "state", json_string("pending"));
		json_object_set_new(j, "reason", json_string("waiting for 2 GPUs (held by job 1)"));
		json_object_set_new(j, "priority", json_integer(i % 3));
		json_object_set_new(j, "submit_ns", json_integer(1764460800000000000LL + (json_int_t)i * 1000003));
		json_object_set_new(j, "time_limit_s", json_integer(3600));
		json_object_set_new(req, "gpus", json_integer(1 + i % 4));
		json_object_set_new(req, "nvlink", json_boolean(i % 2));
		json_object_set_new(req, "mem_per_gpu_bytes", json_integer(0));
		json_object_set_new(j, "request", req);
		json_object_set_new(j, "gpus", json_array());
		json_array_append_new(jobs, j);
	}
	json_object_set_new(doc, "jobs", jobs);
	json_object_set_new(doc, "pending", json_integer(n));
	json_object_set_new(doc, "running", json_integer(1));
	char *s = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(doc);
	*len = strlen(s);
	return s;
}

/* What the command wrote before jscan: load, drop "ok", dump indented, a newline. */
static char *via_jansson(const char *buf, size_t len, size_t *outlen)
{
	json_error_t err;
	json_t *doc = json_loadb(buf, len, 0, &err);
	if (!doc)
		return NULL;
	json_object_del(doc, "ok");
	char *out = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER); /* one pass, into memory */
	json_decref(doc);
	if (!out)
		return NULL;
	*outlen = strlen(out);
	char *nl = realloc(out, *outlen + 2);
	if (!nl) {
		free(out);
		return NULL;
	}
	nl[(*outlen)++] = '\n';
	nl[*outlen] = '\0';
	return nl;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 10000;
	unsigned runs = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 21;
	if (runs == 0 || runs > 1000)
		runs = 21;
	size_t len;
	char *answer = queue_answer(n, &len);
	double *tj = calloc(runs, sizeof(double)), *ts = calloc(runs, sizeof(double));
	if (!answer || !tj || !ts)
		return 1;
	for (unsigned r = 0; r < runs; r++) {
		double t0 = bench_now_ms();
		size_t jl = 0;
		char *j = via_jansson(answer, len, &jl);
		double t1 = bench_now_ms();
		struct abuf out;
		abuf_init(&out);
		enum jscan_tok ok;
		int rc = jscan_pretty(answer, len, "ok", &out, &ok);
		double t2 = bench_now_ms();
		if (!j || rc != 0 || ok != JS_TRUE || out.len != jl || memcmp(out.p, j, jl) != 0) {
			fprintf(stderr, "jscan_bench: jscan_pretty's text is not jansson's\n");
			return 1;
		}
		tj[r] = t1 - t0;
		ts[r] = t2 - t1;
		free(j);
		abuf_free(&out);
	}
	qsort(tj, runs, sizeof(double), bench_cmp_double);
	qsort(ts, runs, sizeof(double), bench_cmp_double);
	printf("queue answer: %u jobs, %zu bytes; %u runs, same bytes each run\n", n, len, runs);
	printf("jansson load+dump: median %.2f ms, min %.2f ms\n", tj[runs / 2], tj[0]);
	printf("jscan_pretty:      median %.2f ms, min %.2f ms (%.1fx)\n", ts[runs / 2], ts[0], tj[runs / 2] / ts[runs / 2]);
	free(answer);
	free(tj);
	free(ts);
	return 0;
}
