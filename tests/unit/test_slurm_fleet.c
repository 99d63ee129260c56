/* SPDX-License-Identifier: Apache-2.0 */
/* test_slurm_fleet.c - the fleet sweep's statistics (src/slurm/fleet.h):
 * median and MAD per figure and model, outliers below the median by more
 * than the threshold, health FAILs with their rule's action, nodes not swept,
 * the drain reason and decision, fleet.json written and read back, two
 * sweeps compared, the report's text and HTML, figures from bench results,
 * and the SIMULATED figures of a simulated server with and without faults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/catalog.h"
#include "device/sim.h"
#include "sampler/sampler.h"
#include "slurm/fleet.h"

/* A node result with ngpu H200s, each with memory bandwidth mem[g] (GB/s),
 * GEMM BF16 700 TFLOP/s, all-reduce 480, and GPU fail_gpu (if >= 0) failing
 * rule fail_rule with action "reset_gpu". */
static char *node_doc(const char *name, unsigned ngpu, const double *mem, int fail_gpu, const char *fail_rule)
{
	static char buf[16384];
	size_t n = 0;
	n += (size_t)snprintf(buf + n, sizeof(buf) - n,
			      "{\"schema\": \"gpuctl-sweep-node\", \"version\": 1, \"node\": \"%s\", \"level\": \"bench-quick\","
			      " \"simulated\": true, \"health\": {\"verdict\": \"%s\", \"action\": \"none\","
			      " \"system\": {\"verdict\": \"PASS\", \"findings\": []}, \"gpus\": [",
			      name, fail_gpu >= 0 ? "FAIL" : "PASS");
	for (unsigned g = 0; g < ngpu; g++) {
		bool bad = (int)g == fail_gpu;
		n += (size_t)snprintf(buf + n, sizeof(buf) - n,
				      "%s{\"index\": %u, \"name\": \"NVIDIA H200\", \"uuid\": \"GPU-%s-%u\","
				      " \"effective_verdict\": \"%s\", \"effective_action\": \"%s\", \"findings\": [%s%s%s]}",
				      g ? ", " : "", g, name, g, bad ? "FAIL" : "PASS", bad ? "reset_gpu" : "none",
				      bad ? "{\"rule\": \"" : "", bad ? fail_rule : "",
				      bad ? "\", \"subsystem\": \"xid\", \"verdict\": \"FAIL\", \"action\": \"reset_gpu\"}" : "");
	}
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "]}, \"links\": [");
	for (unsigned g = 0; g < ngpu; g++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n,
				      "%s{\"index\": %u, \"pcie_gen\": 5, \"pcie_gen_max\": 5, \"pcie_width\": 16,"
				      " \"pcie_width_max\": 16, \"nvlink_active\": 18, \"nvlink_count\": 18,"
				      " \"ecc_vol_uncorrected\": 0, \"remap_pending\": 0}",
				      g ? ", " : "", g);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n,
			      "], \"figures\": {\"source\": \"simulated\", \"allreduce_busbw_gbs\": 480, \"gpus\": [");
	for (unsigned g = 0; g < ngpu; g++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n,
				      "%s{\"index\": %u, \"mem_bw_gbs\": %.1f, \"gemm_bf16_tflops\": 700}", g ? ", " : "", g,
				      mem[g]);
	snprintf(buf + n, sizeof(buf) - n, "]}}");
	return buf;
}

static void add(struct fleet *f, const char *name, const double *mem, int fail_gpu, const char *rule)
{
	char err[256];
	const char *doc = node_doc(name, 4, mem, fail_gpu, rule);
	assert_int_equal(fleet_add_result(f, name, doc, strlen(doc), err, sizeof(err)), 0);
}

static const double healthy[4] = { 4000, 4040, 3960, 4000 };

/* n1..n4 healthy, n5 GPU 2 at 3500 (12.5% below), n6 GPU 1 failing xid-79, n7 never started */
static void build(struct fleet *f)
{
	fleet_init(f, "bench-quick", FLEET_DEFAULT_THRESHOLD_PCT);
	const char *names[] = { "n1", "n2", "n3", "n4" };
	for (int i = 0; i < 4; i++)
		add(f, names[i], healthy, -1, NULL);
	const double slow[4] = { 4000, 4000, 3500, 4000 };
	add(f, "n5", slow, -1, NULL);
	add(f, "n6", healthy, 1, "xid-79");
	assert_int_equal(fleet_add_missing(f, "n7", FLEET_NOT_STARTED, "pending for 300 s"), 0);
	assert_int_equal(fleet_analyze(f), 0);
}

static const struct fleet_stat *stat(const struct fleet *f, enum fleet_fig k)
{
	for (size_t s = 0; s < f->nstat; s++)
		if (f->stat[s].fig == k)
			return &f->stat[s];
	return NULL;
}

static void test_median_mad_and_outliers(void **state)
{
	(void)state;
	struct fleet f;
	build(&f);
	const struct fleet_stat *m = stat(&f, FIG_MEM_BW);
	assert_non_null(m);
	assert_string_equal(m->model, "NVIDIA H200");
	assert_int_equal(m->n, 24); /* 6 swept nodes x 4 GPUs; n7 has none */
	assert_true(fabs(m->median - 4000) < 1e-9);
	assert_true(fabs(m->mad - 0) < 1e-9); /* more than half the GPUs are at 4000 */
	const struct fleet_stat *a = stat(&f, FIG_ALLREDUCE);
	assert_non_null(a);
	assert_string_equal(a->model, "NVIDIA H200"); /* per node: its GPUs' model */
	assert_int_equal(a->n, 6);
	/* exactly three outliers: n5's slow GPU, n6's failing GPU, n7 not swept */
	assert_int_equal(f.nout, 3);
	bool slow = false, xid = false, missing = false;
	for (size_t o = 0; o < f.nout; o++) {
		const struct fleet_outlier *x = &f.out[o];
		const char *node = f.node[x->node].name;
		if (x->kind == FLEET_OUT_FIGURE) {
			assert_string_equal(node, "n5");
			assert_int_equal(x->gpu, 2);
			assert_int_equal(x->fig, FIG_MEM_BW);
			assert_true(fabs(x->below_pct - 12.5) < 1e-9);
			assert_true(x->drain);
			slow = true;
		} else if (x->kind == FLEET_OUT_HEALTH) {
			assert_string_equal(node, "n6");
			assert_int_equal(x->gpu, 1);
			assert_string_equal(x->what, "xid-79");
			assert_string_equal(x->action, "reset_gpu");
			xid = true;
		} else {
			assert_int_equal(x->kind, FLEET_OUT_NOT_SWEPT);
			assert_string_equal(node, "n7");
			assert_false(x->drain);
			missing = true;
		}
	}
	assert_true(slow && xid && missing);
	assert_int_equal(fleet_verdict(&f), 2);
	fleet_free(&f);
}

static void test_threshold_is_strict_and_configurable(void **state)
{
	(void)state;
	struct fleet f;
	/* 3680 is exactly 8% below 4000: not an outlier at 8, one at 7.9 */
	const double edge[4] = { 4000, 4000, 3680, 4000 };
	for (int t = 0; t < 2; t++) {
		fleet_init(&f, "bench-quick", t ? 7.9 : 8.0);
		add(&f, "a", healthy, -1, NULL);
		add(&f, "b", healthy, -1, NULL);
		add(&f, "c", edge, -1, NULL);
		assert_int_equal(fleet_analyze(&f), 0);
		assert_int_equal(f.nout, (size_t)t);
		assert_int_equal(fleet_verdict(&f), t ? 2 : 0);
		fleet_free(&f);
	}
}

static void test_models_are_compared_only_with_their_own(void **state)
{
	(void)state;
	struct fleet f;
	fleet_init(&f, "bench-quick", 8);
	add(&f, "a", healthy, -1, NULL);
	add(&f, "b", healthy, -1, NULL);
	/* nodes of another model with half the bandwidth and half the all-reduce (a
	 * per-node figure) are no outliers of the H200s, nor they of them */
	char err[256];
	for (int k = 0; k < 2; k++) {
		const char *name = k ? "d" : "c";
		char *doc = node_doc(name, 4, (const double[]){ 2000, 2000, 2000, 2000 }, -1, NULL);
		char *p;
		while ((p = strstr(doc, "NVIDIA H200")))
			memcpy(p, "NVIDIA A100", 11);
		p = strstr(doc, "\"allreduce_busbw_gbs\": 480");
		assert_non_null(p);
		memcpy(p, "\"allreduce_busbw_gbs\": 240", 26);
		assert_int_equal(fleet_add_result(&f, name, doc, strlen(doc), err, sizeof(err)), 0);
	}
	assert_int_equal(fleet_analyze(&f), 0);
	assert_int_equal(f.nout, 0);
	fleet_free(&f);

	/* a driver and CUDA version of its own makes a group of its own */
	fleet_init(&f, "bench-quick", 8);
	add(&f, "a", healthy, -1, NULL);
	add(&f, "b", healthy, -1, NULL);
	char *doc = node_doc("e", 4, (const double[]){ 2000, 2000, 2000, 2000 }, -1, NULL);
	char *with = malloc(strlen(doc) + 64);
	assert_non_null(with);
	snprintf(with, strlen(doc) + 64, "{\"driver\": \"535.1\", \"cuda\": \"12.2\", %s", doc + 1);
	assert_int_equal(fleet_add_result(&f, "e", with, strlen(with), err, sizeof(err)), 0);
	free(with);
	assert_int_equal(fleet_analyze(&f), 0);
	assert_int_equal(f.nout, 0);
	bool grouped = false;
	for (size_t s = 0; s < f.nstat; s++)
		grouped |= strcmp(f.stat[s].model, "NVIDIA H200 (driver 535.1, CUDA 12.2)") == 0;
	assert_true(grouped);
	fleet_free(&f);
}

static void test_unreadable_result_is_a_failed_node(void **state)
{
	(void)state;
	struct fleet f;
	fleet_init(&f, "health", 8);
	char err[256];
	assert_int_equal(fleet_add_result(&f, "x", "{\"schema\": \"other\"}", 19, err, sizeof(err)), -1);
	assert_int_equal(fleet_add_result(&f, "y", "not json", 8, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "node 'y'"));
	assert_int_equal(f.n, 2);
	assert_int_equal(f.node[0].state, FLEET_FAILED);
	assert_non_null(strstr(f.node[0].note, "not a gpuctl-sweep-node"));
	assert_int_equal(fleet_analyze(&f), 0);
	assert_int_equal(f.nout, 2);
	assert_int_equal(fleet_verdict(&f), 1);
	fleet_free(&f);
}

static void test_drain_reason_and_decision(void **state)
{
	(void)state;
	struct fleet f;
	build(&f);
	char reason[SLURM_REASON_LEN];
	for (size_t i = 0; i < f.n; i++) {
		bool drain = fleet_drain_reason(&f, i, reason, sizeof(reason));
		if (strcmp(f.node[i].name, "n5") == 0)
			assert_string_equal(reason, "gpuctl sweep: GPU 2 memory bandwidth 12% below the median of its model");
		else if (strcmp(f.node[i].name, "n6") == 0)
			assert_string_equal(reason, "gpuctl sweep: GPU 1 xid-79");
		else
			assert_false(drain);
	}
	struct slurm_node_info ni = { .drain = false };
	assert_int_equal(fleet_drain_decide("gpuctl sweep: GPU 1 xid-79", &ni), SLURM_HC_DRAIN);
	ni.drain = true;
	snprintf(ni.reason, sizeof(ni.reason), "gpuctl sweep: GPU 1 xid-79");
	assert_int_equal(fleet_drain_decide("gpuctl sweep: GPU 1 xid-79", &ni), SLURM_HC_NONE);
	assert_int_equal(fleet_drain_decide("gpuctl sweep: GPU 2 xid-79", &ni), SLURM_HC_DRAIN);
	/* the health check's own drain, and the administrator's, stay */
	snprintf(ni.reason, sizeof(ni.reason), "gpuctl: GPU 1 ecc-volatile-uncorrectable");
	assert_int_equal(fleet_drain_decide("gpuctl sweep: GPU 1 xid-79", &ni), SLURM_HC_KEEP_OTHERS);
	snprintf(ni.reason, sizeof(ni.reason), "maintenance");
	assert_int_equal(fleet_drain_decide("gpuctl sweep: GPU 1 xid-79", &ni), SLURM_HC_KEEP_OTHERS);
	fleet_free(&f);
}

/* A node of model with GPU 0 failing (reason in words), or healthy. */
static void add_model(struct fleet *f, const char *name, const char *model, bool bad)
{
	char err[256];
	char *doc = node_doc(name, 2, (const double[]){ 4000, 4000 }, bad ? 0 : -1, "xid-catalog");
	char *p;
	while (strcmp(model, "NVIDIA H200") != 0 && (p = strstr(doc, "NVIDIA H200")))
		memcpy(p, model, 11);
	static char with[20000];
	/* the XID rule's reason, as the health report writes it */
	const char *at = strstr(doc, "\"subsystem\"");
	if (at)
		snprintf(with, sizeof(with), "%.*s\"reason\": \"XID 79 GPU_HAS_FALLEN_OFF_THE_BUS: GPU has fallen off the bus\", %s",
			 (int)(at - doc), doc, at);
	else
		snprintf(with, sizeof(with), "%s", doc);
	assert_int_equal(fleet_add_result(f, name, with, strlen(with), err, sizeof(err)), 0);
}

static void test_drain_plan_cap_and_last_of_model(void **state)
{
	(void)state;
	struct fleet f;
	enum fleet_drain_plan plan[32];
	char reason[SLURM_REASON_LEN];
	assert_int_equal(fleet_drain_cap_default(1), 1);
	assert_int_equal(fleet_drain_cap_default(19), 1);
	assert_int_equal(fleet_drain_cap_default(20), 2);
	assert_int_equal(fleet_drain_cap_default(4096), 409);

	/* 8 H200 nodes, 3 failing: the cap drains the first of them only */
	fleet_init(&f, "health", 8);
	for (int i = 0; i < 8; i++) {
		char name[16];
		snprintf(name, sizeof(name), "h%u", (unsigned)i % 10);
		add_model(&f, name, "NVIDIA H200", i >= 5);
	}
	/* and 2 A100 nodes, both failing: one stays in service */
	add_model(&f, "a0", "NVIDIA A100", true);
	add_model(&f, "a1", "NVIDIA A100", true);
	assert_int_equal(fleet_analyze(&f), 0);
	assert_true(fleet_drain_reason(&f, 5, reason, sizeof(reason)));
	assert_string_equal(reason, "gpuctl sweep: GPU 0 XID 79: GPU has fallen off the bus");
	assert_int_equal(fleet_drain_plan(&f, fleet_drain_cap_default(f.n), plan), 1);
	assert_int_equal(plan[4], FLEET_KEEP);
	assert_int_equal(plan[5], FLEET_DRAIN);
	assert_int_equal(plan[6], FLEET_OVER_CAP);
	assert_int_equal(plan[7], FLEET_OVER_CAP);
	assert_int_equal(plan[8], FLEET_OVER_CAP);
	assert_int_equal(plan[9], FLEET_OVER_CAP);
	/* a cap of 10: every failing node but the A100s' last */
	assert_int_equal(fleet_drain_plan(&f, 10, plan), 4);
	assert_int_equal(plan[7], FLEET_DRAIN);
	assert_int_equal(plan[8], FLEET_DRAIN);
	assert_int_equal(plan[9], FLEET_LAST_OF_MODEL);
	fleet_free(&f);

	/* a rule failing fleet-wide never drains the whole model */
	fleet_init(&f, "health", 8);
	for (int i = 0; i < 3; i++) {
		char name[16];
		snprintf(name, sizeof(name), "h%u", (unsigned)i % 10);
		add_model(&f, name, "NVIDIA H200", true);
	}
	assert_int_equal(fleet_analyze(&f), 0);
	assert_int_equal(fleet_drain_plan(&f, 100, plan), 2);
	assert_int_equal(plan[2], FLEET_LAST_OF_MODEL);
	fleet_free(&f);
}

static void test_json_round_trip_and_compare(void **state)
{
	(void)state;
	struct fleet f, back;
	build(&f);
	json_t *j = fleet_to_json(&f);
	assert_non_null(j);
	char *text = json_dumps(j, JSON_INDENT(1));
	json_decref(j);
	char err[256];
	assert_int_equal(fleet_from_json(&back, text, strlen(text), err, sizeof(err)), 0);
	assert_int_equal(back.n, f.n);
	assert_int_equal(back.nout, f.nout);
	assert_int_equal(back.nstat, f.nstat);
	for (size_t o = 0; o < f.nout; o++) {
		assert_string_equal(back.out[o].what, f.out[o].what);
		assert_int_equal(back.out[o].gpu, f.out[o].gpu);
	}
	free(text);
	char out[4096];
	/* the same sweep twice: nothing changed */
	assert_int_equal(fleet_compare(&f, &back, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	/* n5 recovered; n2's GPU 0 lost 20% of its bandwidth; n7 is gone */
	struct fleet later;
	fleet_init(&later, "bench-quick", 8);
	const char *names[] = { "n1", "n3", "n4", "n5" };
	for (int i = 0; i < 4; i++)
		add(&later, names[i], healthy, -1, NULL);
	add(&later, "n2", (const double[]){ 3200, 4000, 4000, 4000 }, -1, NULL);
	add(&later, "n6", healthy, 1, "xid-79");
	assert_int_equal(fleet_analyze(&later), 0);
	size_t changes = fleet_compare(&f, &later, out, sizeof(out));
	assert_non_null(strstr(out, "n5: recovered"));
	assert_non_null(strstr(out, "n2: new outlier"));
	assert_non_null(strstr(out, "n2 GPU 0: slower mem_bw_gbs 4000.0 -> 3200.0 GB/s (-20.0%)"));
	assert_non_null(strstr(out, "n7: not in this sweep"));
	assert_non_null(strstr(out, "n5 GPU 2: faster mem_bw_gbs 3500.0 -> 3960.0 GB/s (+13.1%)"));
	assert_null(strstr(out, "n6"));
	assert_int_equal(changes, 5);
	fleet_free(&later);
	fleet_free(&back);
	fleet_free(&f);
}

static void test_from_json_refuses_other_documents(void **state)
{
	(void)state;
	struct fleet f;
	char err[256];
	const char *bad[] = {
		"[]", "{\"schema\": \"gpuctl-fleet\"}",
		"{\"schema\": \"gpuctl-fleet\", \"threshold_pct\": 0, \"nodes\": []}",
		"{\"schema\": \"gpuctl-fleet\", \"threshold_pct\": 8, \"nodes\": [{\"node\": \"a\", \"state\": \"odd\"}]}",
		"{\"schema\": \"gpuctl-fleet\", \"threshold_pct\": 8, \"nodes\": [{\"node\": \"a\", \"state\": \"done\","
		" \"gpus\": [{\"index\": 0}, {\"index\": 0}]}]}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(fleet_from_json(&f, bad[i], strlen(bad[i]), err, sizeof(err)), -1);
		assert_null(strchr(err, '\n'));
	}
}

static void test_report_text_and_html(void **state)
{
	(void)state;
	struct fleet f;
	build(&f);
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	fleet_write_text(&f, o);
	fclose(o);
	assert_non_null(strstr(buf, "*** SIMULATED"));
	assert_non_null(strstr(buf, "outliers: 3"));
	assert_non_null(strstr(buf, "n5 GPU 2: slow mem_bw_gbs 3500.0 GB/s, 12.5% below the median 4000.0; action: drain"));
	assert_non_null(strstr(buf, "n7: not swept not-started: pending for 300 s"));
	free(buf);
	o = open_memstream(&buf, &len);
	fleet_write_html(&f, o);
	fclose(o);
	assert_non_null(strstr(buf, "id=\"simulated\""));
	for (int i = 1; i <= 7; i++) {
		char row[64];
		snprintf(row, sizeof(row), "data-node=\"n%d\"", i);
		assert_non_null(strstr(buf, row));
	}
	assert_non_null(strstr(buf, "<tr class=\"node outlier\" data-node=\"n5\">"));
	assert_non_null(strstr(buf, "<tr class=\"node\" data-node=\"n1\">"));
	free(buf);
	fleet_free(&f);
}

static void test_figures_from_bench(void **state)
{
	(void)state;
	struct fleet_node *n = calloc(1, sizeof(*n));
	assert_non_null(n);
	n->ngpu = 2;
	for (unsigned g = 0; g < 2; g++) {
		n->gpu[g].index = g;
		for (int k = 0; k < FLEET_NFIG; k++)
			n->gpu[g].fig[k] = NAN;
	}
	for (int k = 0; k < FLEET_NFIG; k++)
		n->fig[k] = NAN;
	json_error_t je;
	json_t *b = json_loads(
		"{\"schema\": \"gpuctl-bench-results\", \"simulated\": false, \"results\": ["
		"{\"suite\": \"memory\", \"test\": \"copy\", \"variant\": \"kernel\", \"gpu\": 0, \"peer\": -1, \"status\": \"ok\", \"median\": 4100},"
		"{\"suite\": \"memory\", \"test\": \"copy\", \"variant\": \"cudaMemcpy\", \"gpu\": 0, \"peer\": -1, \"status\": \"ok\", \"median\": 9999},"
		"{\"suite\": \"compute\", \"test\": \"cublas\", \"variant\": \"bf16\", \"gpu\": 1, \"peer\": -1, \"status\": \"ok\", \"median\": 710},"
		"{\"suite\": \"compute\", \"test\": \"cublas\", \"variant\": \"bf16\", \"gpu\": 1, \"peer\": -1, \"status\": \"failed\", \"median\": 999},"
		"{\"suite\": \"copy\", \"test\": \"h2d\", \"variant\": \"pinned\", \"gpu\": 0, \"peer\": -1, \"status\": \"ok\", \"median\": 20},"
		"{\"suite\": \"copy\", \"test\": \"h2d\", \"variant\": \"pinned\", \"gpu\": 0, \"peer\": -1, \"status\": \"ok\", \"median\": 55},"
		"{\"suite\": \"p2p\", \"test\": \"ce\", \"variant\": \"uni\", \"gpu\": 0, \"peer\": 1, \"status\": \"ok\", \"median\": 380},"
		"{\"suite\": \"p2p\", \"test\": \"ce\", \"variant\": \"uni\", \"gpu\": 1, \"peer\": 0, \"status\": \"ok\", \"median\": 390},"
		"{\"suite\": \"nccl\", \"test\": \"all_reduce\", \"variant\": \"\", \"gpu\": 0, \"peer\": -1, \"status\": \"ok\", \"median\": 350}]}",
		0, &je);
	assert_non_null(b);
	char err[200];
	assert_int_equal(fleet_figures_from_bench(n, b, err, sizeof(err)), 0);
	assert_true(n->gpu[0].fig[FIG_MEM_BW] == 4100);
	assert_true(isnan(n->gpu[1].fig[FIG_MEM_BW]));
	assert_true(n->gpu[1].fig[FIG_GEMM_BF16] == 710);
	assert_true(n->gpu[0].fig[FIG_H2D] == 55);
	assert_true(n->gpu[0].fig[FIG_P2P] == 380 && n->gpu[1].fig[FIG_P2P] == 390);
	assert_true(n->fig[FIG_ALLREDUCE] == 350);
	assert_string_equal(n->figures_source, "measured");
	json_object_set_new(b, "simulated", json_true());
	assert_int_equal(fleet_figures_from_bench(n, b, err, sizeof(err)), -1);
	json_decref(b);
	free(n);
}

/* The SIMULATED figures of h200x8 with the faults f[0..n) injected, as JSON. */
static json_t *sim_figures(const struct sim_fault *f, unsigned n)
{
	char arg[1024];
	const char *dir = getenv("GPUCTL_DATA_DIR");
	snprintf(arg, sizeof(arg), "h200x8%s%s", dir ? ",data_dir=" : "", dir ? dir : "");
	struct gpu_backend be = { 0 };
	struct gpu_err err = { "" };
	assert_int_equal(gpu_backend_open(&be, "sim", arg, &err), GPU_OK);
	for (unsigned i = 0; i < n; i++)
		assert_true(sim_inject(&be, &f[i], &err) > 0);
	struct snapshot *snap = snapshot_new(8);
	assert_non_null(snap);
	assert_int_equal(snapshot_take(&be, GPU_GRP_ALL, snap, &err), GPU_OK);
	struct catalog cat = { 0 };
	char e[256];
	assert_int_equal(catalog_load_dir(&cat, dir, e, sizeof(e)), 0);
	json_t *figs = fleet_sim_figures(snap, &cat, "n1");
	catalog_free(&cat);
	gpu_backend_close(&be);
	snapshot_free(snap);
	assert_non_null(figs);
	return figs;
}

static double gpu_fig(const json_t *figs, unsigned gpu, const char *key)
{
	return json_number_value(json_object_get(json_array_get(json_object_get(figs, "gpus"), gpu), key));
}

static void test_simulated_figures_follow_the_faults(void **state)
{
	(void)state;
	json_t *ok = sim_figures(NULL, 0);
	assert_string_equal(json_string_value(json_object_get(ok, "source")), "simulated");
	/* healthy H200s: within the +-1% of each other, near the catalog x the healthy share */
	for (unsigned g = 0; g < 8; g++) {
		assert_true(fabs(gpu_fig(ok, g, "mem_bw_gbs") / (4800 * 0.87) - 1) <= 0.0101);
		assert_true(gpu_fig(ok, g, "gemm_bf16_tflops") > 600);
	}
	const struct sim_fault faults[] = {
		{ .kind = SIM_FAULT_POWER, .gpu = 5 },
		{ .kind = SIM_FAULT_PCIE_DEGRADED, .gpu = 2, .gen = 5, .width = 8 },
		{ .kind = SIM_FAULT_NVLINK_DOWN, .gpu = 6, .link = -1 },
	};
	json_t *bad = sim_figures(faults, 3);
	/* a power cap: GEMM at 82% of the same GPU's healthy figure; memory untouched */
	assert_true(fabs(gpu_fig(bad, 5, "gemm_bf16_tflops") / gpu_fig(ok, 5, "gemm_bf16_tflops") - 0.82) < 1e-9);
	assert_true(fabs(gpu_fig(bad, 5, "mem_bw_gbs") - gpu_fig(ok, 5, "mem_bw_gbs")) < 1e-9);
	/* x8 instead of x16: half the H2D bandwidth */
	assert_true(fabs(gpu_fig(bad, 2, "h2d_gbs") / gpu_fig(ok, 2, "h2d_gbs") - 0.5) < 1e-9);
	/* every NVLink down: P2P 0 (an outlier, not a missing figure), and so the node's all-reduce */
	assert_true(gpu_fig(bad, 6, "p2p_gbs") == 0 && json_is_real(json_object_get(json_array_get(json_object_get(bad, "gpus"), 6), "p2p_gbs")));
	assert_true(json_number_value(json_object_get(bad, "allreduce_busbw_gbs")) == 0);
	assert_true(json_number_value(json_object_get(ok, "allreduce_busbw_gbs")) > 300);
	json_decref(ok);
	json_decref(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median_mad_and_outliers),
		cmocka_unit_test(test_threshold_is_strict_and_configurable),
		cmocka_unit_test(test_models_are_compared_only_with_their_own),
		cmocka_unit_test(test_unreadable_result_is_a_failed_node),
		cmocka_unit_test(test_drain_reason_and_decision),
		cmocka_unit_test(test_drain_plan_cap_and_last_of_model),
		cmocka_unit_test(test_json_round_trip_and_compare),
		cmocka_unit_test(test_from_json_refuses_other_documents),
		cmocka_unit_test(test_report_text_and_html),
		cmocka_unit_test(test_figures_from_bench),
		cmocka_unit_test(test_simulated_figures_follow_the_faults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
