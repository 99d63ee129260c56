/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run.c - one health run (run.h): two snapshots a window apart (default
 * 1 s) with the XID events of the window between them, evaluated by the
 * rules engine, and the processes' GPU memory sampled through the window
 * for the agent's leak rule (health/leakwatch.h, over the window instead of
 * leak_window).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "health/run.h"
#include "health/leakwatch.h"
#include "core/clock.h"
#include "core/exitcodes.h"
#include "core/gpu_select.h"
#include "core/readfile.h"
#include "device/snapshot.h"

static void count_xid(struct gpu_view *g, uint64_t code, uint64_t when_ns)
{
	for (unsigned i = 0; i < g->nxid; i++)
		if (g->xid[i].code == code) {
			g->xid[i].count++;
			g->xid[i].last_ns = when_ns;
			return;
		}
	if (g->nxid < 32) {
		g->xid[g->nxid].code = code;
		g->xid[g->nxid].count = 1;
		g->xid[g->nxid].last_ns = when_ns;
		g->nxid++;
	}
}

/* The leak rule over the window: every process's GPU memory, sampled this
 * often through it (leakwatch keeps samples window/32 apart, judges from 5). */
#define LEAK_SAMPLES_PER_WINDOW 16

/* Feeds every GPU's process list, read now, to the leak watch: a snapshot of
 * those lists alone (views with their processes and sample time). */
static void feed_processes(struct gpu_backend *be, struct snapshot *lists, unsigned n, struct leakwatch *lw)
{
	uint64_t now = gpu_backend_now_ns(be);
	lists->n = n;
	for (unsigned i = 0; i < n; i++) {
		struct gpu_view *v = &lists->gpu[i];
		struct gpu_err err = { "" };
		v->up = be->ops->processes(be, i, v->procs, GPU_MAX_PROCS, &v->nproc, &err) == GPU_OK;
		if (v->nproc > GPU_MAX_PROCS)
			v->nproc = GPU_MAX_PROCS;
		v->last_ok_ns = v->s.timestamp_ns = now;
	}
	leakwatch_update(lw, lists, NULL, NULL);
}

/* Waits out the window while collecting XID events into views[] (indexed by
 * GPU) and, with lw, feeding the process lists to it. Returns true when the
 * backend could deliver events at all. */
static bool watch_events(struct gpu_backend *be, double window_s, struct gpu_view *views, unsigned n,
			 struct leakwatch *lw, struct snapshot *lists)
{
	const struct gpu_backend_ops *ops = be->ops;
	uint64_t start = clock_mono_ns(), end = start + (uint64_t)(window_s * 1e9);
	uint64_t every = (end - start) / LEAK_SAMPLES_PER_WINDOW, next_lists = start + every;
	bool ok = ops->poll_events != NULL;
	for (;;) {
		uint64_t now = clock_mono_ns();
		if (now >= end)
			break;
		if (lw && now >= next_lists) {
			feed_processes(be, lists, n, lw);
			next_lists += every;
		}
		unsigned ms = (unsigned)((end - now + 999999) / 1000000);
		if (lw && next_lists < end && (next_lists - now + 999999) / 1000000 < ms)
			ms = (unsigned)((next_lists > now ? next_lists - now : 0) / 1000000 + 1);
		if (!ok) {
			struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
			nanosleep(&ts, NULL);
			continue;
		}
		struct gpu_event ev[32];
		unsigned got = 0;
		struct gpu_err err = { "" };
		if (ops->poll_events(be, ms > 200 ? 200 : ms, ev, 32, &got, &err) != GPU_OK) {
			ok = false; /* no event watch on this driver/GPU: XIDs cannot be judged */
			continue;
		}
		for (unsigned k = 0; k < got; k++)
			if (ev[k].kind == EVT_XID && ev[k].gpu < n)
				count_xid(&views[ev[k].gpu], ev[k].xid, ev[k].timestamp_ns);
	}
	return ok;
}

int health_run_rules(struct health_run *hr, const char *data_dir, const char *rules_path, char *err, size_t errlen)
{
	int rc = health_rules_load_default(&hr->rules, data_dir, err, errlen);
	if (rc != 0)
		return rc == HEALTH_RULES_MALFORMED ? EXIT_DATAERR : EXIT_NOINPUT;
	if (rules_path) {
		size_t len;
		char *text = read_whole_file(rules_path, 1 << 20, &len, err, errlen);
		if (!text)
			return EXIT_NOINPUT;
		rc = health_rules_parse_file(&hr->rules, text, len, rules_path, err, errlen);
		free(text);
		if (rc != 0)
			return EXIT_DATAERR;
	}
	return EXIT_OK;
}

int health_run_gather(struct health_run *hr, struct gpu_backend *be, double window_s, health_snapshot_fn take,
		      void *arg, char *err, size_t errlen)
{
	int rc;
	*err = '\0';
	struct snapshot *first = take(arg, &rc);
	if (!first)
		return rc;
	hr->window_s = window_s;
	struct gpu_view events[GPU_MAX_GPUS];
	memset(events, 0, sizeof(events));
	hr->xids_collected = false;
	/* the agent's leak thresholds, judged over this window (not its leak_window) */
	struct leakwatch *lw = NULL;
	struct snapshot *lists = NULL;
	if (window_s > 0 && be->ops->processes) {
		struct leak_params lp;
		leak_params_default(&lp);
		lp.min_window_s = window_s * 0.9; /* the samples' span: a little less than the window */
		lw = leakwatch_new(&lp);
		lists = snapshot_new(first->n);
		if (!lw || !lists) {
			free(lw);
			free(lists);
			free(first);
			snprintf(err, errlen, "out of memory");
			return EXIT_SOFTWARE;
		}
		leakwatch_update(lw, first, NULL, NULL);
	}
	if (window_s > 0)
		hr->xids_collected = watch_events(be, window_s, events, first->n, lw, lists);
	free(lists);
	struct snapshot *second = window_s > 0 ? take(arg, &rc) : first;
	if (!second) {
		free(lw);
		free(first);
		return rc;
	}
	if (lw)
		leakwatch_update(lw, second, NULL, NULL);
	snapshot_attach(&hr->prev, hr->views[0], hr->links[0], &hr->tables[0], GPU_MAX_GPUS);
	snapshot_attach(&hr->now, hr->views[1], hr->links[1], &hr->tables[1], GPU_MAX_GPUS);
	snapshot_copy(&hr->now, second); /* cannot fail: room for every GPU */
	hr->have_prev = second != first;
	if (hr->have_prev)
		snapshot_copy(&hr->prev, first);
	free(first);
	if (second != first)
		free(second);
	for (unsigned i = 0; i < hr->now.n; i++) {
		hr->now.gpu[i].nxid = events[i].nxid;
		memcpy(hr->now.gpu[i].xid, events[i].xid, sizeof(events[i].xid));
	}
	hr->opts.xids_unknown = !hr->xids_collected;
	hr->mask = gpu_select_all(hr->now.n);
	rc = EXIT_OK;
	if (health_evaluate(&hr->rules, &hr->now, hr->have_prev ? &hr->prev : NULL, &hr->opts, &hr->rep, err,
			    errlen) != 0)
		rc = EXIT_SOFTWARE;
	if (rc == EXIT_OK && lw) {
		struct leakwatch_leak leaks[32];
		unsigned n = leakwatch_leaks(lw, leaks, 32);
		leakwatch_report(leaks, n < 32 ? n : 32, &hr->rep);
	}
	free(lw);
	return rc;
}

enum health_verdict health_run_verdict(const struct health_run *hr)
{
	enum health_verdict v = hr->rep.system.verdict;
	for (unsigned i = 0; i < hr->rep.n; i++)
		if (gpu_select_has(hr->mask, i) && hr->rep.gpu[i].verdict > v)
			v = hr->rep.gpu[i].verdict;
	return v;
}

int health_exit_code(enum health_verdict v)
{
	switch (v) {
	case HEALTH_PASS: return EXIT_OK;
	case HEALTH_WARN: return EXIT_WARN;
	case HEALTH_FAIL: return EXIT_FAIL;
	default: return EXIT_UNAVAILABLE;
	}
}
