/* SPDX-License-Identifier: Apache-2.0 */
/* test_slurm_node.c - the Slurm health check's drain reason (from a real
 * health evaluation of a simulated fault), `scontrol show node -o` parsing,
 * the drain/resume decision, the Slurm requests of the control protocol and
 * the one-line statistics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/sim.h"
#include "health/health.h"
#include "sampler/sampler.h"
#include "slurm/node.h"
#include "pool/slurm_req.h"
#include "slurm/summary.h"

/* Health of l40sx4 with the fault f injected (kind NONE: none). */
static void evaluate(const struct sim_fault *f, struct health_report *rep)
{
	char arg[1024];
	const char *dir = getenv("GPUCTL_DATA_DIR");
	snprintf(arg, sizeof(arg), "l40sx4%s%s", dir ? ",data_dir=" : "", dir ? dir : "");
	struct gpu_backend be = { 0 };
	struct gpu_err err = { "" };
	assert_int_equal(gpu_backend_open(&be, "sim", arg, &err), GPU_OK);
	if (f->kind != SIM_FAULT_NONE)
		assert_true(sim_inject(&be, f, &err) > 0);
	struct snapshot *snap = snapshot_new(GPU_MAX_GPUS);
	struct health_rules *rules = calloc(1, sizeof(*rules));
	assert_non_null(snap);
	assert_non_null(rules);
	assert_int_equal(snapshot_take(&be, GPU_GRP_ALL, snap, &err), GPU_OK);
	char e[256];
	assert_int_equal(health_rules_load_default(rules, dir, e, sizeof(e)), 0);
	struct health_opts o = { .xids_unknown = true };
	assert_int_equal(health_evaluate(rules, snap, NULL, &o, rep, e, sizeof(e)), 0);
	gpu_backend_close(&be);
	free(snap);
	free(rules);
}

static void test_drain_reason_names_gpu_and_rule(void **state)
{
	(void)state;
	struct health_report *rep = calloc(1, sizeof(*rep));
	assert_non_null(rep);
	struct sim_fault none = { .kind = SIM_FAULT_NONE };
	char reason[SLURM_REASON_LEN];
	evaluate(&none, rep);
	assert_false(slurm_drain_reason(rep, ~0ull, reason, sizeof(reason)));
	assert_string_equal(reason, "");

	struct sim_fault ecc = { .kind = SIM_FAULT_ECC_UNCORRECTABLE, .gpu = 2, .count = 3 };
	evaluate(&ecc, rep);
	assert_true(slurm_drain_reason(rep, ~0ull, reason, sizeof(reason)));
	assert_string_equal(reason, "gpuctl: GPU 2 uncorrectable ECC errors since the driver loaded");
	/* the GPU is not among those checked: nothing to drain for */
	assert_false(slurm_drain_reason(rep, 0x3, reason, sizeof(reason)));

	struct sim_fault lost = { .kind = SIM_FAULT_GPU_LOST, .gpu = 1 };
	evaluate(&lost, rep);
	assert_true(slurm_drain_reason(rep, ~0ull, reason, sizeof(reason)));
	assert_non_null(strstr(reason, "gpuctl: GPU 1 "));
	assert_null(strchr(reason, '"'));
	free(rep);
}

static void test_drain_reason_several_and_truncated(void **state)
{
	(void)state;
	struct health_report *rep = calloc(1, sizeof(*rep));
	assert_non_null(rep);
	rep->n = 3;
	rep->gpu[0].verdict = HEALTH_FAIL;
	rep->gpu[0].nfind = 2;
	rep->gpu[0].find[0].verdict = HEALTH_FAIL;
	snprintf(rep->gpu[0].find[0].rule_id, HEALTH_ID_LEN, "rule-\"a\"");
	rep->gpu[0].find[1].verdict = HEALTH_WARN;
	snprintf(rep->gpu[0].find[1].rule_id, HEALTH_ID_LEN, "warn-only");
	rep->gpu[2].verdict = HEALTH_FAIL;
	rep->gpu[2].nfind = 2;
	rep->gpu[2].find[0].verdict = HEALTH_FAIL;
	snprintf(rep->gpu[2].find[0].rule_id, HEALTH_ID_LEN, "b");
	rep->gpu[2].find[1].verdict = HEALTH_FAIL;
	snprintf(rep->gpu[2].find[1].rule_id, HEALTH_ID_LEN, "c");
	rep->system.verdict = HEALTH_FAIL; /* no finding: still named */
	char reason[SLURM_REASON_LEN];
	assert_true(slurm_drain_reason(rep, ~0ull, reason, sizeof(reason)));
	assert_string_equal(reason, "gpuctl: system failed; GPU 0 rule-'a'; GPU 2 b, c");
	char small[20];
	assert_true(slurm_drain_reason(rep, ~0ull, small, sizeof(small)));
	assert_int_equal(strncmp(small, "gpuctl:", 7), 0);
	assert_true(strlen(small) < sizeof(small));
	free(rep);
}

static void test_finding_words(void **state)
{
	(void)state;
	char w[120];
	slurm_finding_words("xid-catalog", "XID 79 GPU_HAS_FALLEN_OFF_THE_BUS: GPU has fallen off the bus", w, sizeof(w));
	assert_string_equal(w, "XID 79: GPU has fallen off the bus");
	slurm_finding_words("ecc-volatile-uncorrectable", "uncorrectable ECC errors since the driver loaded", w, sizeof(w));
	assert_string_equal(w, "uncorrectable ECC errors since the driver loaded");
	slurm_finding_words("some-rule", "", w, sizeof(w));
	assert_string_equal(w, "some-rule");
	slurm_finding_words("some-rule", NULL, w, sizeof(w));
	assert_string_equal(w, "some-rule");
	slurm_finding_words("x", "XID: no code", w, sizeof(w));
	assert_string_equal(w, "XID: no code");
}

static void test_node_parse(void **state)
{
	(void)state;
	struct slurm_node_info n;
	char err[200];
	const char *drained = "NodeName=n2 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 State=IDLE+DRAIN ThreadsPerCore=1 "
			      "Partitions=gpu Reason=gpuctl: GPU 1 ecc-volatile-uncorrectable [root@2026-11-30T00:50:01]\n";
	assert_int_equal(slurm_node_parse(drained, &n, err, sizeof(err)), 0);
	assert_string_equal(n.name, "n2");
	assert_string_equal(n.state, "IDLE+DRAIN");
	assert_true(n.drain);
	assert_string_equal(n.reason, "gpuctl: GPU 1 ecc-volatile-uncorrectable");
	assert_int_equal(slurm_node_parse("NodeName=n1 State=MIXED Partitions=gpu\n", &n, err, sizeof(err)), 0);
	assert_false(n.drain);
	assert_string_equal(n.reason, "");
	assert_int_equal(slurm_node_parse("XNodeName=n1 State=IDLE", &n, err, sizeof(err)), -1);
	assert_int_equal(slurm_node_parse("NodeName=n1 XState=IDLE", &n, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "State="));
	assert_int_equal(slurm_node_parse("", &n, err, sizeof(err)), -1);
}

static void test_decide(void **state)
{
	(void)state;
	struct slurm_node_info idle = { .name = "n1", .state = "IDLE" };
	struct slurm_node_info ours = { .name = "n1", .state = "IDLE+DRAIN", .drain = true,
					.reason = "gpuctl: GPU 1 ecc-volatile-uncorrectable" };
	struct slurm_node_info admin = { .name = "n1", .state = "IDLE+DRAIN", .drain = true, .reason = "maintenance" };
	const char *r = "gpuctl: GPU 1 ecc-volatile-uncorrectable";
	assert_int_equal(slurm_health_decide(true, r, &idle), SLURM_HC_DRAIN);
	assert_int_equal(slurm_health_decide(true, r, &ours), SLURM_HC_NONE);
	assert_int_equal(slurm_health_decide(true, "gpuctl: GPU 3 x", &ours), SLURM_HC_DRAIN);
	assert_int_equal(slurm_health_decide(true, r, &admin), SLURM_HC_KEEP_OTHERS);
	assert_int_equal(slurm_health_decide(false, "", &ours), SLURM_HC_RESUME);
	assert_int_equal(slurm_health_decide(false, "", &admin), SLURM_HC_NONE);
	assert_int_equal(slurm_health_decide(false, "", &idle), SLURM_HC_NONE);
	assert_string_equal(slurm_hc_action_name(SLURM_HC_RESUME), "resume");
}

static void test_requests(void **state)
{
	(void)state;
	struct slurm_req r;
	char err[200];
	const char *start = "{\"v\": 1, \"op\": \"slurm_start\", \"slurm_job\": 42, \"gpus\": [0, 3], \"uid\": 1000, "
			    "\"user\": \"ann\"}";
	assert_int_equal(slurm_req_parse(start, strlen(start), &r, err, sizeof(err)), 1);
	assert_int_equal(r.op, SLURM_OP_START);
	assert_int_equal(r.job, 42);
	assert_int_equal(r.gpu_mask, 0x9);
	assert_int_equal(r.uid, 1000);
	assert_string_equal(r.user, "ann");
	/* round trip */
	json_t *j = slurm_req_json(&r);
	char *text = json_dumps(j, JSON_COMPACT);
	struct slurm_req r2;
	assert_int_equal(slurm_req_parse(text, strlen(text), &r2, err, sizeof(err)), 1);
	assert_memory_equal(&r, &r2, sizeof(r));
	free(text);
	json_decref(j);
	const char *end = "{\"v\": 1, \"op\": \"slurm_end\", \"slurm_job\": 42, \"state\": \"failed\"}";
	assert_int_equal(slurm_req_parse(end, strlen(end), &r, err, sizeof(err)), 1);
	assert_string_equal(r.state, "failed");
	/* the pool's own ops and junk are not ours */
	const char *pool = "{\"v\": 1, \"op\": \"submit\"}";
	assert_int_equal(slurm_req_parse(pool, strlen(pool), &r, err, sizeof(err)), 0);
	assert_int_equal(slurm_req_parse("[", 1, &r, err, sizeof(err)), 0);
	const char *bad[] = {
		"{\"v\": 2, \"op\": \"slurm_show\", \"slurm_job\": 1}",
		"{\"v\": 1, \"op\": \"slurm_show\"}",
		"{\"v\": 1, \"op\": \"slurm_show\", \"slurm_job\": 0}",
		"{\"v\": 1, \"op\": \"slurm_show\", \"slurm_job\": 4294967295}",
		"{\"v\": 1, \"op\": \"slurm_show\", \"slurm_job\": 1, \"gpus\": [1]}",
		"{\"v\": 1, \"op\": \"slurm_show\", \"slurm_job\": 1, \"extra\": 1}",
		"{\"v\": 1, \"op\": \"slurm_start\", \"slurm_job\": 1, \"gpus\": [64], \"uid\": 0}",
		"{\"v\": 1, \"op\": \"slurm_start\", \"slurm_job\": 1, \"gpus\": \"0\", \"uid\": 0}",
		"{\"v\": 1, \"op\": \"slurm_start\", \"slurm_job\": 1, \"gpus\": [0]}",
		"{\"v\": 1, \"op\": \"slurm_start\", \"slurm_job\": 1, \"gpus\": [0], \"uid\": 0, \"user\": \"a\\\"b\"}",
		"{\"v\": 1, \"op\": \"slurm_end\", \"slurm_job\": 1, \"state\": \"lost\"}",
		"{\"v\": 1, \"op\": \"slurm_start\", \"slurm_job\": 1, \"gpus\": [0], \"uid\": 0, \"state\": \"done\"}",
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		err[0] = '\0';
		assert_int_equal(slurm_req_parse(bad[k], strlen(bad[k]), &r, err, sizeof(err)), -1);
		assert_true(strlen(err) > 0);
	}
}

static void test_gpu_lists(void **state)
{
	(void)state;
	uint64_t m;
	char err[200];
	assert_int_equal(slurm_gpu_list_parse("0,2-3,7", &m, err, sizeof(err)), 0);
	assert_int_equal(m, 0x8d);
	assert_int_equal(slurm_gpu_list_parse("", &m, err, sizeof(err)), 0);
	assert_int_equal(m, 0);
	assert_int_equal(slurm_gpu_list_parse("63", &m, err, sizeof(err)), 0);
	assert_int_equal(m, 1ull << 63);
	const char *bad[] = { "64", "a", "1-", "3-1", "1,,2", "-1", "1 2", "0x1" };
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		assert_int_equal(slurm_gpu_list_parse(bad[k], &m, err, sizeof(err)), -1);
}

static void test_summary(void **state)
{
	(void)state;
	json_error_t je;
	json_t *job = json_loads("{\"accounting\": ["
				 "{\"gpu\": 0, \"gpu_seconds\": 10.0, \"energy_j\": 1000.5, \"util_avg_pct\": 90, "
				 "\"util_peak_pct\": 99, \"mem_peak_bytes\": 2147483648, \"xids\": {\"79\": 1}, "
				 "\"throttle_reasons\": \"hw_slowdown\"},"
				 "{\"gpu\": 1, \"gpu_seconds\": 10.0, \"energy_j\": 999.5, \"util_avg_pct\": 70, "
				 "\"util_peak_pct\": 95, \"mem_peak_bytes\": 1073741824, \"xids\": {}, "
				 "\"throttle_reasons\": \"none\"}]}", 0, &je);
	assert_non_null(job);
	char line[400];
	assert_int_equal(slurm_stats_summary(job, line, sizeof(line)), 0);
	assert_string_equal(line, "gpuctl: 2 GPUs, 20.0 GPU-s, 2000.0 J, util avg 80 % peak 99 %, mem peak 2.00 GiB, "
				  "XIDs 1 (79), throttle hw_slowdown");
	/* a GPU without an energy reading makes the total n/a, never a partial sum */
	json_object_del(json_array_get(json_object_get(job, "accounting"), 1), "energy_j");
	assert_int_equal(slurm_stats_summary(job, line, sizeof(line)), 0);
	assert_non_null(strstr(line, "GPU-s, n/a, util"));
	json_decref(job);
	json_t *none = json_object();
	assert_int_equal(slurm_stats_summary(none, line, sizeof(line)), -1);
	json_decref(none);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drain_reason_names_gpu_and_rule),
		cmocka_unit_test(test_drain_reason_several_and_truncated),
		cmocka_unit_test(test_finding_words),
		cmocka_unit_test(test_node_parse),
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_requests),
		cmocka_unit_test(test_gpu_lists),
		cmocka_unit_test(test_summary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
