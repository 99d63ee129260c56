/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_health_sim.c - the rules engine through the real path: the simulator
 * backend (faults injected with sim_inject), snapshot_take, the backend's XID
 * events, health_evaluate. Every fault kind the simulator knows yields the
 * expected rule, verdict and action on its GPU, the other GPUs stay healthy,
 * and every shipped simulated server passes when nothing is injected.
 */
#include "test_sim_util.h"

#include "health/health.h"
#include "sampler/sampler.h"

static struct health_rules *rules;

struct run {
	struct gpu_backend be;
	struct test_clock clk;
	struct snapshot prev, now;
	struct health_report rep;
	struct gpu_view views[2][GPU_MAX_GPUS]; /* prev's and now's arrays */
	struct gpu_link links[2][GPU_MAX_GPUS][GPU_MAX_GPUS];
	struct snapshot_tables tables[2];
};

static int setup(void **state)
{
	(void)state;
	rules = calloc(1, sizeof(*rules));
	char err[256];
	if (health_rules_load_default(rules, getenv("GPUCTL_DATA_DIR"), err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(rules);
	return 0;
}

/* Counts the backend's XID events into the views of snap. */
static void collect_events(struct gpu_backend *be, struct snapshot *snap)
{
	struct gpu_event ev[16];
	unsigned n = 0;
	struct gpu_err err = { "" };
	assert_int_equal(be->ops->poll_events(be, 0, ev, 16, &n, &err), GPU_OK);
	for (unsigned k = 0; k < n; k++) {
		struct gpu_view *g = &snap->gpu[ev[k].gpu];
		assert_true(ev[k].kind == EVT_XID && g->nxid < 32);
		g->xid[g->nxid].code = ev[k].xid;
		g->xid[g->nxid].count = 1;
		g->nxid++;
	}
}

/* prev at T0 + 1 s, the fault (if any) injected then, now one second later. */
static void run_case(struct run *r, const char *server, const struct sim_fault *f, const struct health_opts *o)
{
	struct gpu_err err = { "" };
	snapshot_attach(&r->prev, r->views[0], r->links[0], &r->tables[0], GPU_MAX_GPUS);
	snapshot_attach(&r->now, r->views[1], r->links[1], &r->tables[1], GPU_MAX_GPUS);
	open_sim(&r->be, &r->clk, server);
	r->clk.now += SEC;
	assert_int_equal(snapshot_take(&r->be, GPU_GRP_ALL, &r->prev, &err), GPU_OK);
	if (f)
		inject(&r->be, *f);
	r->clk.now += SEC;
	struct snapshot *events = snapshot_new(GPU_MAX_GPUS);
	assert_non_null(events);
	events->n = r->prev.n;
	collect_events(&r->be, events);
	assert_int_equal(snapshot_take(&r->be, GPU_GRP_ALL, &r->now, &err), GPU_OK);
	for (unsigned i = 0; i < r->now.n; i++) {
		r->now.gpu[i].nxid = events->gpu[i].nxid;
		memcpy(r->now.gpu[i].xid, events->gpu[i].xid, sizeof(events->gpu[i].xid));
	}
	free(events);
	char msg[128];
	assert_int_equal(health_evaluate(rules, &r->now, &r->prev, o, &r->rep, msg, sizeof(msg)), 0);
	gpu_backend_close(&r->be);
}

static const struct health_finding *finding(const struct health_entity *e, const char *rule)
{
	for (unsigned i = 0; i < e->nfind; i++)
		if (strcmp(e->find[i].rule_id, rule) == 0)
			return &e->find[i];
	return NULL;
}

struct fault_case {
	enum sim_fault_kind kind;
	const char *server;
	struct sim_fault fault;
	const char *rule;              /* the rule that must fire on fault.gpu */
	enum health_verdict verdict;   /* that finding's verdict */
	enum health_action action;     /* and action */
	enum health_verdict gpu_verdict; /* the GPU's overall verdict */
};

#define F(...) { __VA_ARGS__ }
static const uint32_t sim_users[] = { 1001, 1002 };

static const struct fault_case cases[] = {
	{ SIM_FAULT_ECC_UNCORRECTABLE, "h200x8", F(.kind = SIM_FAULT_ECC_UNCORRECTABLE, .gpu = 2, .count = 2),
	  "ecc-volatile-uncorrectable", HEALTH_FAIL, HEALTH_ACT_RESET_GPU, HEALTH_FAIL },
	{ SIM_FAULT_ECC_CORRECTED, "h200x8", F(.kind = SIM_FAULT_ECC_CORRECTED, .gpu = 1, .count = 500),
	  "ecc-correctable-rate", HEALTH_WARN, HEALTH_ACT_NONE, HEALTH_WARN },
	{ SIM_FAULT_XID, "h200x8", F(.kind = SIM_FAULT_XID, .gpu = 6, .xid = 95), "xid-catalog", HEALTH_FAIL,
	  HEALTH_ACT_RESET_GPU, HEALTH_FAIL },
	{ SIM_FAULT_THERMAL, "h200x8", F(.kind = SIM_FAULT_THERMAL, .gpu = 0), "thermal-slowdown-active", HEALTH_WARN,
	  HEALTH_ACT_DRAIN, HEALTH_WARN },
	{ SIM_FAULT_POWER, "h200x8", F(.kind = SIM_FAULT_POWER, .gpu = 3), "power-violation-growing", HEALTH_WARN,
	  HEALTH_ACT_NONE, HEALTH_WARN },
	{ SIM_FAULT_PCIE_DEGRADED, "h200x8", F(.kind = SIM_FAULT_PCIE_DEGRADED, .gpu = 5, .gen = 3),
	  "pcie-gen-below-max", HEALTH_WARN, HEALTH_ACT_DRAIN, HEALTH_WARN },
	{ SIM_FAULT_NVLINK_DOWN, "h200x8", F(.kind = SIM_FAULT_NVLINK_DOWN, .gpu = 4, .link = 5), "nvlink-down",
	  HEALTH_FAIL, HEALTH_ACT_RESET_GPU, HEALTH_FAIL },
	{ SIM_FAULT_NVLINK_ERRORS, "a100x8", F(.kind = SIM_FAULT_NVLINK_ERRORS, .gpu = 7, .link = 1, .rate_per_s = 20),
	  "nvlink-crc-rate-warn", HEALTH_WARN, HEALTH_ACT_DRAIN, HEALTH_FAIL /* replays follow: FAIL */ },
	{ SIM_FAULT_GPU_LOST, "h200x8", F(.kind = SIM_FAULT_GPU_LOST, .gpu = 1), "gpu-lost", HEALTH_FAIL,
	  HEALTH_ACT_REBOOT, HEALTH_FAIL },
	{ SIM_FAULT_REMAP_PENDING, "a100x8", F(.kind = SIM_FAULT_REMAP_PENDING, .gpu = 0), "row-remap-pending",
	  HEALTH_WARN, HEALTH_ACT_RESET_GPU, HEALTH_WARN },
	{ SIM_FAULT_REMAP_FAILURE, "h200x8", F(.kind = SIM_FAULT_REMAP_FAILURE, .gpu = 2), "row-remap-failure",
	  HEALTH_FAIL, HEALTH_ACT_REPLACE_BOARD, HEALTH_FAIL },
	{ SIM_FAULT_RETIRED_PAGES, "v100", F(.kind = SIM_FAULT_RETIRED_PAGES, .gpu = 1, .sbe = 40, .dbe = 23),
	  "retired-pages-limit", HEALTH_FAIL, HEALTH_ACT_REPLACE_BOARD, HEALTH_FAIL },
	{ SIM_FAULT_PERSISTENCE_OFF, "l40sx4", F(.kind = SIM_FAULT_PERSISTENCE_OFF, .gpu = 3), "persistence-off",
	  HEALTH_WARN, HEALTH_ACT_NONE, HEALTH_WARN },
	{ SIM_FAULT_FOREIGN_PROCESS, "h200x8", F(.kind = SIM_FAULT_FOREIGN_PROCESS, .gpu = 7, .pid = 66666),
	  "foreign-compute-process", HEALTH_FAIL, HEALTH_ACT_DRAIN, HEALTH_FAIL },
	{ SIM_FAULT_HANG, "h200x8,hang_ms=50", F(.kind = SIM_FAULT_HANG, .gpu = 5), "gpu-lost", HEALTH_FAIL,
	  HEALTH_ACT_REBOOT, HEALTH_FAIL },
};

/* A Volta server (page retirement, not row remapping), written for the test. */
static char v100_path[64];

static void test_every_fault_kind(void **state)
{
	(void)state;
	write_temp(v100_path, ".json", "{\"name\": \"v100\", \"gpus\": [{\"model\": \"V100 SXM2\"}, {\"model\": \"V100 SXM2\"}]}");
	for (int k = SIM_FAULT_NONE + 1; k < SIM_FAULT_KIND_COUNT; k++) {
		bool covered = false;
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
			covered |= (int)cases[c].kind == k;
		if (!covered)
			fail_msg("fault kind '%s' has no health case", sim_fault_kind_name((enum sim_fault_kind)k));
	}
	struct run *r = calloc(1, sizeof(*r));
	assert_non_null(r);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct fault_case *fc = &cases[c];
		struct health_opts o = { 0 };
		if (fc->kind == SIM_FAULT_FOREIGN_PROCESS) {
			o.allowed_uids = sim_users;
			o.n_allowed_uids = 2;
		}
		memset(r, 0, sizeof(*r));
		run_case(r, strcmp(fc->server, "v100") == 0 ? v100_path : fc->server, &fc->fault, &o);
		unsigned g = fc->fault.gpu;
		const struct health_entity *e = &r->rep.gpu[g];
		const struct health_finding *f = finding(e, fc->rule);
		if (!f)
			fail_msg("%s on GPU %u: rule '%s' did not fire (%u findings, first '%s')",
				 sim_fault_kind_name(fc->kind), g, fc->rule, e->nfind, e->nfind ? e->find[0].rule_id : "");
		if (f->verdict != fc->verdict || f->action != fc->action || e->verdict != fc->gpu_verdict)
			fail_msg("%s: %s %s (GPU %s), want %s %s (GPU %s); evidence %s", sim_fault_kind_name(fc->kind),
				 health_verdict_name(f->verdict), health_action_name(f->action),
				 health_verdict_name(e->verdict), health_verdict_name(fc->verdict),
				 health_action_name(fc->action), health_verdict_name(fc->gpu_verdict), f->evidence);
		assert_true(f->reason[0] && f->evidence[0]);
		for (unsigned i = 0; i < r->rep.n; i++)
			if (i != g && r->rep.gpu[i].verdict != HEALTH_PASS)
				fail_msg("%s on GPU %u: GPU %u is %s (%s)", sim_fault_kind_name(fc->kind), g, i,
					 health_verdict_name(r->rep.gpu[i].verdict), r->rep.gpu[i].find[0].rule_id);
		assert_true(r->rep.simulated);
	}
	unlink(v100_path);
	free(r);
}

static void test_shipped_servers_healthy(void **state)
{
	(void)state;
	static const char *const servers[] = { "h200x8", "a100x8", "l40sx4", "h100pcie-mig", "rtx4090x2" };
	struct run *r = calloc(1, sizeof(*r));
	assert_non_null(r);
	for (size_t s = 0; s < sizeof(servers) / sizeof(servers[0]); s++) {
		memset(r, 0, sizeof(*r));
		run_case(r, servers[s], NULL, NULL);
		assert_true(r->rep.n > 0);
		/* the workstation is described with persistence mode off: that WARN is expected */
		bool workstation = strcmp(servers[s], "rtx4090x2") == 0;
		assert_int_equal(r->rep.system.verdict, HEALTH_PASS);
		for (unsigned i = 0; i < r->rep.n; i++) {
			const struct health_entity *e = &r->rep.gpu[i];
			/* a PASS finding is a note (allocated-gpu-idle: a job's GPU at 0 % right now) */
			for (unsigned k = 0; k < e->nfind; k++)
				if (e->find[k].verdict != HEALTH_PASS &&
				    (!workstation || strcmp(e->find[k].rule_id, "persistence-off") != 0))
					fail_msg("%s GPU %u: %s %s (%s)", servers[s], i, health_verdict_name(e->find[k].verdict),
						 e->find[k].rule_id, e->find[k].evidence);
			if (!workstation)
				assert_int_equal(e->verdict, HEALTH_PASS);
			/* the core subsystems were judged, not skipped */
			assert_int_equal(e->sub[HS_THERMAL], HEALTH_PASS);
			assert_int_equal(e->sub[HS_PCIE], HEALTH_PASS);
			assert_int_equal(e->sub[HS_XID], HEALTH_PASS);
		}
	}
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_fault_kind),
		cmocka_unit_test(test_shipped_servers_healthy),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
