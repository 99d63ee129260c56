/* SPDX-License-Identifier: Apache-2.0 */
/* test_health_leakwatch.c - the agent's memory-leak watch (src/health/leakwatch.h):
 * feeding snapshots, process identity, forgetting, the table cap, the sample
 * spacing over long runs, and the health findings it adds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/agent_config.h"
#include "agent/api.h"
#include "health/leakwatch.h"
#include "agent/metrics.h"

#define MIB (1024.0 * 1024.0)
#define SEC 1000000000ull

static struct snapshot *snap_new(unsigned ngpu)
{
	struct snapshot *sn = snapshot_new(GPU_MAX_GPUS);
	assert_non_null(sn);
	sn->n = ngpu;
	for (unsigned g = 0; g < ngpu; g++)
		sn->gpu[g].up = true;
	return sn;
}

static void set_proc(struct snapshot *sn, unsigned gpu, unsigned k, uint32_t pid, const char *comm, uint64_t bytes)
{
	struct gpu_view *v = &sn->gpu[gpu];
	v->procs[k] = (struct gpu_process){ .pid = pid, .uid = 1000, .type = 'C', .mig_gi = -1 };
	snprintf(v->procs[k].name, sizeof(v->procs[k].name), "%s", comm);
	snprintf(v->procs[k].user, sizeof(v->procs[k].user), "carol");
	v->procs[k].used_mem_bytes = (u64v){ .st = VAL_OK, .v = bytes };
	if (v->nproc <= k)
		v->nproc = k + 1;
}

static void params_short(struct leak_params *p, double window_s)
{
	leak_params_default(p);
	p->min_window_s = window_s;
	p->min_rate = 512 * 1024;   /* 0.5 MiB/s */
	p->min_growth = 1 * MIB;
}

/* GPU 0: a process leaking 1.5 MiB/s; GPU 1: a steady one. Ticks every 200 ms. */
static void tick(struct leakwatch *w, struct snapshot *sn, unsigned i)
{
	uint64_t t = 1000 * SEC + i * SEC / 5;
	sn->gpu[0].last_ok_ns = sn->gpu[1].last_ok_ns = t;
	set_proc(sn, 0, 0, 4242, "jupyter", (uint64_t)(2048 * MIB + 1.5 * MIB * i / 5.0));
	set_proc(sn, 1, 0, 777, "trainer", (uint64_t)(40000 * MIB));
	leakwatch_update(w, sn, NULL, NULL);
}

static void test_leak_flagged_steady_not(void **state)
{
	(void)state;
	static struct leakwatch w;
	struct leak_params p;
	params_short(&p, 3);
	leakwatch_init(&w, &p);
	struct snapshot *sn = snap_new(2);
	struct leakwatch_leak out[4];
	/* 2.8 s of history: below the window, nothing judged leaking yet */
	for (unsigned i = 0; i <= 14; i++)
		tick(&w, sn, i);
	assert_int_equal(leakwatch_leaks(&w, out, 4), 0);
	for (unsigned i = 15; i <= 40; i++)
		tick(&w, sn, i);
	assert_int_equal(w.tracked, 2);
	assert_int_equal(leakwatch_leaks(&w, out, 4), 1);
	assert_int_equal(out[0].gpu, 0);
	assert_int_equal(out[0].pid, 4242);
	assert_string_equal(out[0].comm, "jupyter");
	assert_string_equal(out[0].user, "carol");
	assert_float_equal(out[0].rate, 1.5 * MIB, 0.01 * MIB);
	/* the last window only: 3 s (and at most one stored-sample spacing more) */
	assert_true(out[0].window_s >= 3.0 && out[0].window_s <= 3.0 + 3.0 / 32 + 1e-9);
	assert_int_equal(out[0].bytes, (uint64_t)(2048 * MIB + 1.5 * MIB * 40 / 5.0));
	free(sn);
}

/* A sample that is not newer (the sampler has not run again) is not fed twice. */
static void test_same_sample_not_fed_twice(void **state)
{
	(void)state;
	static struct leakwatch w;
	leakwatch_init(&w, NULL);
	struct snapshot *sn = snap_new(1);
	sn->gpu[0].last_ok_ns = 5 * SEC;
	set_proc(sn, 0, 0, 10, "a", 100);
	leakwatch_update(&w, sn, NULL, NULL);
	set_proc(sn, 0, 0, 10, "a", 200);
	leakwatch_update(&w, sn, NULL, NULL);
	assert_int_equal(w.t[0].n, 1);
	assert_int_equal(w.t[0].last_bytes, 100);
	free(sn);
}

/* One tick of pid 55 on GPU 0, 200 ms after the previous (tick i). */
static void feed55(struct leakwatch *w, struct snapshot *sn, unsigned i, const char *comm, double bytes,
		   leakwatch_start_fn fn, void *arg)
{
	sn->gpu[0].last_ok_ns = 100 * SEC + i * SEC / 5;
	set_proc(sn, 0, 0, 55, comm, (uint64_t)bytes);
	leakwatch_update(w, sn, fn, arg);
}

/* A process that left is forgotten; the same pid with another comm is a new process. */
static void test_identity_and_forgetting(void **state)
{
	(void)state;
	static struct leakwatch w;
	struct leak_params p;
	params_short(&p, 2);
	leakwatch_init(&w, &p);
	struct snapshot *sn = snap_new(1);
	struct leakwatch_leak out[2];
	unsigned i = 0;
	for (; i <= 20; i++)
		feed55(&w, sn, i, "leaky", 100 * MIB + MIB * i, NULL, NULL);
	assert_int_equal(leakwatch_leaks(&w, out, 2), 1);
	/* pid 55 is reused by another program at once: a new history, not a leak yet */
	feed55(&w, sn, i++, "other", 130 * MIB, NULL, NULL);
	assert_int_equal(leakwatch_leaks(&w, out, 2), 0);
	assert_int_equal(w.tracked, 1);
	/* it leaves: the table is empty */
	sn->gpu[0].nproc = 0;
	sn->gpu[0].last_ok_ns = 100 * SEC + i++ * SEC / 5;
	leakwatch_update(&w, sn, NULL, NULL);
	assert_int_equal(w.tracked, 0);
	for (unsigned k = 0; k < LEAKWATCH_MAX; k++)
		assert_false(w.t[k].used);
	free(sn);
}

static uint64_t fake_start;
static uint64_t fake_start_of(void *arg, uint32_t pid)
{
	(void)pid;
	++*(unsigned *)arg;
	return fake_start;
}

/* With a start identity, the same pid, user and comm started again is a new process;
 * an unknown start (0: the process just ended) matches the one known. */
static void test_start_identity(void **state)
{
	(void)state;
	static struct leakwatch w;
	struct leak_params p;
	params_short(&p, 2);
	leakwatch_init(&w, &p);
	struct snapshot *sn = snap_new(1);
	struct leakwatch_leak out[2];
	unsigned calls = 0, i = 0;
	fake_start = 777;
	for (; i <= 20; i++)
		feed55(&w, sn, i, "leaky", 100 * MIB + MIB * i, fake_start_of, &calls);
	assert_int_equal(calls, 21);
	assert_int_equal(leakwatch_leaks(&w, out, 2), 1);
	fake_start = 0; /* unknown: still the same process */
	feed55(&w, sn, i, "leaky", 100 * MIB + MIB * i, fake_start_of, &calls);
	i++;
	assert_int_equal(leakwatch_leaks(&w, out, 2), 1);
	fake_start = 778; /* restarted between two samples: a new history */
	feed55(&w, sn, i, "leaky", 100 * MIB + MIB * i, fake_start_of, &calls);
	i++;
	assert_int_equal(leakwatch_leaks(&w, out, 2), 0);
	assert_int_equal(w.tracked, 1);
	free(sn);
}

/* A GPU that is down keeps its processes' histories (its list says nothing). */
static void test_gpu_down_keeps_history(void **state)
{
	(void)state;
	static struct leakwatch w;
	leakwatch_init(&w, NULL);
	struct snapshot *sn = snap_new(1);
	sn->gpu[0].last_ok_ns = SEC;
	set_proc(sn, 0, 0, 9, "x", 1000);
	leakwatch_update(&w, sn, NULL, NULL);
	sn->gpu[0].up = false;
	sn->gpu[0].nproc = 0;
	sn->gpu[0].last_ok_ns = 2 * SEC;
	leakwatch_update(&w, sn, NULL, NULL);
	assert_int_equal(w.tracked, 1);
	free(sn);
}

/* More processes than the table holds: the excess is counted, not tracked. */
static void test_cap(void **state)
{
	(void)state;
	static struct leakwatch w;
	leakwatch_init(&w, NULL);
	unsigned ngpu = LEAKWATCH_MAX / GPU_MAX_PROCS + 1;
	struct snapshot *sn = snap_new(ngpu);
	for (unsigned g = 0; g < ngpu; g++) {
		sn->gpu[g].last_ok_ns = SEC;
		for (unsigned k = 0; k < GPU_MAX_PROCS; k++)
			set_proc(sn, g, k, 1000 + g * GPU_MAX_PROCS + k, "p", MIB);
	}
	leakwatch_update(&w, sn, NULL, NULL);
	assert_int_equal(w.tracked, LEAKWATCH_MAX);
	assert_int_equal(w.untracked, ngpu * GPU_MAX_PROCS - LEAKWATCH_MAX);
	free(sn);
}

/* 1 s ticks for 20 min with a 300 s window: 64 stored samples still cover the
 * window, and a leak that stops is cleared once its growth leaves the window. */
static void test_long_run_and_stop(void **state)
{
	(void)state;
	static struct leakwatch w;
	struct leak_params p;
	leak_params_default(&p);   /* 300 s, 1 MiB/min, 256 MiB */
	leakwatch_init(&w, &p);
	struct snapshot *sn = snap_new(1);
	struct leakwatch_leak out[2];
	uint64_t bytes = 1024 * MIB;
	for (unsigned s = 0; s < 1200; s++) {
		sn->gpu[0].last_ok_ns = (uint64_t)s * SEC;
		set_proc(sn, 0, 0, 31337, "serve", bytes);
		leakwatch_update(&w, sn, NULL, NULL);
		bytes += (uint64_t)MIB; /* 1 MiB/s */
	}
	assert_int_equal(leakwatch_leaks(&w, out, 2), 1);
	assert_float_equal(out[0].rate, MIB, 0.001 * MIB);
	assert_true(out[0].window_s >= 300 && out[0].window_s <= 300 + 300.0 / 32 + 1);
	/* flat for two windows: no longer leaking */
	for (unsigned s = 1200; s < 1800; s++) {
		sn->gpu[0].last_ok_ns = (uint64_t)s * SEC;
		set_proc(sn, 0, 0, 31337, "serve", bytes);
		leakwatch_update(&w, sn, NULL, NULL);
	}
	assert_int_equal(leakwatch_leaks(&w, out, 2), 0);
	free(sn);
}

/* Allocate-and-free cycles are not a leak, however high the peaks. */
static void test_sawtooth_not_flagged(void **state)
{
	(void)state;
	static struct leakwatch w;
	struct leak_params p;
	params_short(&p, 10);
	leakwatch_init(&w, &p);
	struct snapshot *sn = snap_new(1);
	struct leakwatch_leak out[2];
	for (unsigned i = 0; i < 200; i++) {
		sn->gpu[0].last_ok_ns = (uint64_t)i * SEC / 5;
		set_proc(sn, 0, 0, 8, "cyc", (uint64_t)(1000 * MIB + 50 * MIB * (i % 4)));
		leakwatch_update(&w, sn, NULL, NULL);
	}
	assert_int_equal(leakwatch_leaks(&w, out, 2), 0);
	free(sn);
}

/* The same pid in the compute and the graphics list: one process, its larger figure. */
static void test_duplicate_pid_in_list(void **state)
{
	(void)state;
	static struct leakwatch w;
	leakwatch_init(&w, NULL);
	struct snapshot *sn = snap_new(1);
	sn->gpu[0].last_ok_ns = SEC;
	set_proc(sn, 0, 0, 70, "g", 100);
	set_proc(sn, 0, 1, 70, "g", 300);
	leakwatch_update(&w, sn, NULL, NULL);
	assert_int_equal(w.tracked, 1);
	assert_int_equal(w.t[0].last_bytes, 300);
	assert_int_equal(w.t[0].ring[0].bytes, 300);
	free(sn);
}

/* Leaks become WARN findings in the processes subsystem of their GPU. */
static void test_report_findings(void **state)
{
	(void)state;
	static struct health_report rep;
	memset(&rep, 0, sizeof(rep));
	rep.n = 2;
	rep.verdict = HEALTH_PASS;
	for (unsigned g = 0; g < 2; g++) {
		rep.gpu[g].verdict = HEALTH_PASS;
		rep.gpu[g].sub[HS_PROCESSES] = HEALTH_PASS;
	}
	struct leakwatch_leak l = { .gpu = 1, .pid = 4242, .comm = "jupyter", .user = "carol",
				    .rate = 1.5 * MIB, .window_s = 300, .bytes = (uint64_t)(2500 * MIB) };
	leakwatch_report(&l, 1, &rep);
	assert_int_equal(rep.verdict, HEALTH_WARN);
	assert_int_equal(rep.gpu[0].verdict, HEALTH_PASS);
	assert_int_equal(rep.gpu[1].verdict, HEALTH_WARN);
	assert_int_equal(rep.gpu[1].sub[HS_PROCESSES], HEALTH_WARN);
	assert_int_equal(rep.gpu[1].nfind, 1);
	const struct health_finding *f = &rep.gpu[1].find[0];
	assert_string_equal(f->rule_id, "process-memory-leak");
	assert_int_equal(f->subsys, HS_PROCESSES);
	assert_int_equal(f->verdict, HEALTH_WARN);
	assert_int_equal(f->action, HEALTH_ACT_NONE);
	assert_string_equal(f->evidence, "pid 4242 (jupyter, user carol): +1.50 MiB/s over 300 s, now 2500.0 MiB");
	/* a FAIL already there stays FAIL */
	rep.gpu[1].verdict = HEALTH_FAIL;
	leakwatch_report(&l, 1, &rep);
	assert_int_equal(rep.gpu[1].verdict, HEALTH_FAIL);
}

/* /api/v1/health: a "leaks" array on every GPU (the leak on its own GPU) and "leak_watch". */
static void test_api_health_leaks(void **state)
{
	(void)state;
	struct snapshot *sn = snap_new(2);
	struct leakwatch_leak l = { .gpu = 1, .pid = 4242, .comm = "jupyter", .user = "carol",
				    .rate = 1536.5, .window_s = 3.25, .bytes = 2147483648ull };
	struct api_leak_watch lw = { .leaks = &l, .nleaks = 1, .window_s = 3, .min_rate = 512, .min_growth = 1024,
				     .tracked = 2, .untracked = 0 };
	static struct api_doc d;
	api_doc_init(&d);
	assert_int_equal(api_render_health_watch(&d, sn, NULL, "node1", &lw), 0);
	struct abuf out;
	abuf_init(&out);
	assert_int_equal(api_doc_join(&d, ~0ull, false, &out), 0);
	abuf_putc(&out, '\0');
	assert_non_null(strstr(out.p, "\"leak_watch\":{\"window_seconds\":3.0,\"min_rate_bytes_per_second\":512.0,"
				    "\"min_growth_bytes\":1024.0,\"tracked_processes\":2,\"untracked_sightings\":0}"));
	const char *g1 = strstr(out.p, "\"index\":1");
	assert_non_null(g1);
	assert_non_null(strstr(g1, "\"leaks\":[{\"pid\":4242,\"user\":\"carol\",\"name\":\"jupyter\",\"gpu\":1,"
				"\"growth_bytes_per_second\":1536.5,\"window_seconds\":3.25,\"used_mem_bytes\":2147483648}]"));
	const char *g0 = strstr(out.p, "\"index\":0");
	assert_non_null(g0);
	const char *e0 = strstr(g0, "\"leaks\":[]");
	assert_non_null(e0);
	assert_true(e0 < g1);
	abuf_free(&out);
	/* without the watch: neither key */
	assert_int_equal(api_render_health(&d, sn, NULL, "node1"), 0);
	abuf_init(&out);
	assert_int_equal(api_doc_join(&d, ~0ull, false, &out), 0);
	abuf_putc(&out, '\0');
	assert_null(strstr(out.p, "leak"));
	abuf_free(&out);
	api_doc_free(&d);
	free(sn);
}

/* /metrics: one series per flagged process, none for the others, one per pid
 * even if the watch lists a pid twice (a duplicate series spoils the scrape). */
static void test_metrics_series(void **state)
{
	(void)state;
	struct snapshot *sn = snap_new(2);
	struct leakwatch_leak l[3] = {
		{ .gpu = 0, .pid = 5, .comm = "a", .user = "u", .rate = 2048, .window_s = 3, .bytes = 1 },
		{ .gpu = 0, .pid = 5, .comm = "b", .user = "u", .rate = 4096, .window_s = 3, .bytes = 1 },
		{ .gpu = 1, .pid = 6, .comm = "c", .user = "v", .rate = 1536.25, .window_s = 3, .bytes = 1 },
	};
	struct metrics_opts o;
	metrics_opts_default(&o);
	o.hostname = "h";
	o.leaks = l;
	o.nleaks = 3;
	struct abuf b;
	abuf_init(&b);
	assert_int_equal(metrics_render(&b, sn, &o), 0);
	abuf_putc(&b, '\0');
	const char *name = "gpuctl_process_memory_growth_bytes_per_second{";
	const char *s1 = strstr(b.p, name);
	assert_non_null(s1);
	assert_non_null(strstr(s1, "gpu=\"0\",uuid=\"\",pci_bus_id=\"\",model=\"\",hostname=\"h\",pid=\"5\",user=\"u\",comm=\"a\"} 2048\n"));
	assert_null(strstr(b.p, "comm=\"b\""));
	assert_non_null(strstr(s1, "pid=\"6\",user=\"v\",comm=\"c\"} 1536.25\n"));
	abuf_free(&b);
	/* no leak: no family at all */
	o.nleaks = 0;
	abuf_init(&b);
	assert_int_equal(metrics_render(&b, sn, &o), 0);
	abuf_putc(&b, '\0');
	assert_null(strstr(b.p, "gpuctl_process_memory_growth"));
	abuf_free(&b);
	free(sn);
}

/* The settings: defaults are the detector's, values parse with units, bad ones are refused. */
static void test_config_keys(void **state)
{
	(void)state;
	struct agent_config c;
	char err[256];
	agent_config_default(&c);
	assert_int_equal(c.leak_window_ns, 300 * SEC);
	assert_float_equal(c.leak_min_rate, MIB / 60, 1e-9);
	assert_float_equal(c.leak_min_growth, 256 * MIB, 1e-9);
	assert_int_equal(agent_config_set(&c, "leak_window", "5m", err, sizeof(err)), 0);
	assert_int_equal(c.leak_window_ns, 300 * SEC);
	assert_int_equal(agent_config_set(&c, "leak_window", "3s", err, sizeof(err)), 0);
	assert_int_equal(c.leak_window_ns, 3 * SEC);
	assert_int_equal(agent_config_set(&c, "leak_min_rate", "512KiB/s", err, sizeof(err)), 0);
	assert_float_equal(c.leak_min_rate, 512 * 1024, 1e-9);
	assert_int_equal(agent_config_set(&c, "leak_min_rate", "6MiB/min", err, sizeof(err)), 0);
	assert_float_equal(c.leak_min_rate, 6 * MIB / 60, 1e-9);
	assert_int_equal(agent_config_set(&c, "leak_min_rate", "1000", err, sizeof(err)), 0);
	assert_float_equal(c.leak_min_rate, 1000, 1e-9);
	assert_int_equal(agent_config_set(&c, "leak_min_growth", "64M", err, sizeof(err)), 0);
	assert_float_equal(c.leak_min_growth, 64 * MIB, 1e-9);
	assert_int_equal(agent_config_set(&c, "leak_min_rate", "1MiB/h", err, sizeof(err)), -1);
	assert_string_equal(err, "bad rate '1MiB/h' (use e.g. 1MiB/min, 512KiB/s or bytes per second)");
	assert_int_equal(agent_config_set(&c, "leak_min_rate", "fast", err, sizeof(err)), -1);
	assert_int_equal(agent_config_set(&c, "leak_window", "100ms", err, sizeof(err)), -1);
	assert_int_equal(agent_config_set(&c, "leak_min_growth", "lots", err, sizeof(err)), -1);
	assert_float_equal(c.leak_min_growth, 64 * MIB, 1e-9);
}

/* leakwatch_new (what the agent uses: calloc, no memset of the 300 KB table)
 * gives the same watch as leakwatch_init. */
static void test_new_same_as_init(void **state)
{
	(void)state;
	struct leak_params p;
	params_short(&p, 3);
	struct leakwatch *w = leakwatch_new(&p);
	assert_non_null(w);
	assert_int_equal(w->window_ns, 3 * SEC);
	assert_float_equal(w->params.min_rate, p.min_rate, 1e-9);
	assert_int_equal(w->tracked, 0);
	for (unsigned i = 0; i < LEAKWATCH_MAX; i++)
		assert_false(w->t[i].used);
	struct snapshot *sn = snap_new(2);
	for (unsigned i = 0; i <= 40; i++)
		tick(w, sn, i);
	struct leakwatch_leak out[4];
	assert_int_equal(w->tracked, 2);
	assert_int_equal(leakwatch_leaks(w, out, 4), 1);
	assert_int_equal(out[0].pid, 4242);
	free(sn);
	free(w);
	/* NULL: the default parameters, as leakwatch_init(w, NULL) */
	struct leak_params d;
	leak_params_default(&d);
	w = leakwatch_new(NULL);
	assert_non_null(w);
	assert_float_equal(w->params.min_window_s, d.min_window_s, 1e-9);
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leak_flagged_steady_not),
		cmocka_unit_test(test_new_same_as_init),
		cmocka_unit_test(test_same_sample_not_fed_twice),
		cmocka_unit_test(test_identity_and_forgetting),
		cmocka_unit_test(test_start_identity),
		cmocka_unit_test(test_gpu_down_keeps_history),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_long_run_and_stop),
		cmocka_unit_test(test_sawtooth_not_flagged),
		cmocka_unit_test(test_duplicate_pid_in_list),
		cmocka_unit_test(test_report_findings),
		cmocka_unit_test(test_config_keys),
		cmocka_unit_test(test_api_health_leaks),
		cmocka_unit_test(test_metrics_series),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
