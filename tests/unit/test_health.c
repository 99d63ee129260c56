/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_health.c - the rules engine on hand-built snapshots: a healthy GPU
 * passes every rule; each rule of the shipped rules.json, when its condition
 * is made true, yields its verdict, rule id, subsystem and action (and every
 * shipped rule has a case here, so a new rule cannot go untested).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "health/health.h"

static struct health_rules *rules;

/* A healthy H200-like GPU: every value read, nothing wrong. */
static void healthy_gpu(struct snapshot *s, unsigned i, uint64_t t_ns)
{
	struct gpu_view *g = &s->gpu[i];
	gpu_view_zero(g);
	g->up = true;
	g->samples = 1;
	g->st.index = i;
	VAL_SET(g->st.persistence_mode, 1);
	VAL_SET(g->st.compute_mode, COMPUTE_DEFAULT);
	VAL_SET(g->st.ecc_mode, 1);
	VAL_SET(g->st.ecc_mode_pending, 1);
	VAL_SET(g->st.mig_mode, 0);
	VAL_SET(g->st.mig_mode_pending, 0);
	VAL_SET(g->st.pcie_gen_max, 5);
	VAL_SET(g->st.pcie_width_max, 16);
	VAL_SET(g->st.nvlink_count, 18);
	VAL_SET(g->st.power_limit_mw, 700000);
	VAL_SET(g->st.power_default_limit_mw, 700000);
	struct gpu_sample *x = &g->s;
	x->timestamp_ns = t_ns;
	VAL_SET(x->util_gpu_pct, 0);
	VAL_SET(x->pstate, 0);
	VAL_SET(x->temp_c, 35);
	VAL_SET(x->temp_slowdown_c, 87);
	VAL_SET(x->clock_event_reasons, CLK_EVT_GPU_IDLE);
	VAL_SET(x->viol_power_ns, 1000);
	VAL_SET(x->viol_thermal_ns, 0);
	VAL_SET(x->ecc_vol_corrected, 0);
	VAL_SET(x->ecc_vol_uncorrected, 0);
	VAL_SET(x->retired_pages_sbe, 0);
	VAL_SET(x->retired_pages_dbe, 0);
	VAL_SET(x->retired_pages_pending, 0);
	VAL_SET(x->remap_corrected, 0);
	VAL_SET(x->remap_uncorrected, 0);
	VAL_SET(x->remap_pending, 0);
	VAL_SET(x->remap_failure, 0);
	VAL_SET(x->pcie_gen, 5);
	VAL_SET(x->pcie_width, 16);
	VAL_SET(x->pcie_replays, 7);
	x->nvlink_n = 18;
	for (unsigned l = 0; l < 18; l++) {
		VAL_SET(x->nvlink[l].active, 1);
		VAL_SET(x->nvlink[l].crc_flit_errors, 0);
		VAL_SET(x->nvlink[l].crc_data_errors, 0);
		VAL_SET(x->nvlink[l].replay_errors, 0);
		VAL_SET(x->nvlink[l].recovery_errors, 0);
	}
}

/* Two GPUs joined by NVLink, a second apart (prev, now). */
static void healthy_pair(struct snapshot *prev, struct snapshot *now)
{
	struct snapshot *ss[2] = { prev, now };
	for (int k = 0; k < 2; k++) {
		struct snapshot *s = ss[k];
		snapshot_clear(s);
		s->taken_ns = 1000000000ULL * (uint64_t)(k + 1);
		s->n = 2;
		VAL_SET(s->sys.fabric_manager_running, 1);
		snprintf(s->sys.driver_version.s, sizeof(s->sys.driver_version.s), "580.159.04");
		s->sys.driver_version.st = VAL_OK;
		snprintf(s->sys.nvml_version.s, sizeof(s->sys.nvml_version.s), "13.580.159.04");
		s->sys.nvml_version.st = VAL_OK;
		snprintf(s->sys.cuda_driver_version.s, sizeof(s->sys.cuda_driver_version.s), "13.0");
		s->sys.cuda_driver_version.st = VAL_OK;
		for (unsigned i = 0; i < 2; i++)
			healthy_gpu(s, i, s->taken_ns);
		s->link[0][1].kind = s->link[1][0].kind = LINK_NVLINK;
		s->link[0][1].nvlinks = s->link[1][0].nvlinks = 18;
	}
}

static const struct health_finding *find_rule(const struct health_entity *e, const char *id)
{
	for (unsigned i = 0; i < e->nfind; i++)
		if (strcmp(e->find[i].rule_id, id) == 0)
			return &e->find[i];
	return NULL;
}

static int setup(void **state)
{
	(void)state;
	rules = calloc(1, sizeof(*rules));
	char err[256];
	int rc = health_rules_load_default(rules, getenv("GPUCTL_DATA_DIR"), err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "%s\n", err);
	return rc;
}

static int teardown(void **state)
{
	(void)state;
	free(rules);
	return 0;
}

struct fixture {
	struct snapshot prev, now;
	struct health_report rep;
	struct gpu_view views[2][GPU_MAX_GPUS]; /* prev's and now's arrays */
	struct gpu_link links[2][GPU_MAX_GPUS][GPU_MAX_GPUS];
	struct snapshot_tables tables[2];
};

/* Two reports equal in what readers read: the head, and each entry up to its
 * nfind findings (health_evaluate does not clear the findings past them). */
static void assert_same_report(const struct health_report *a, const struct health_report *b)
{
	assert_memory_equal(a, b, offsetof(struct health_report, system));
	size_t head = offsetof(struct health_entity, find);
	assert_int_equal(a->system.nfind, b->system.nfind);
	assert_memory_equal(&a->system, &b->system, head + b->system.nfind * sizeof(struct health_finding));
	assert_int_equal(a->n, b->n);
	for (unsigned i = 0; i < a->n; i++) {
		assert_int_equal(a->gpu[i].nfind, b->gpu[i].nfind);
		assert_memory_equal(&a->gpu[i], &b->gpu[i], head + b->gpu[i].nfind * sizeof(struct health_finding));
	}
}

#define SEC 1000000000ULL

/* What the sampler keeps of the NVLink error counters' reading before the
 * view's (read at base_ns): base's link counters. */
static void keep_nvlink_base(struct gpu_view *v, const struct gpu_sample *base, uint64_t base_ns, uint64_t read_ns)
{
	v->nvlink_err_read_ns = read_ns;
	v->nvlink_err_base_ns = base_ns;
	v->nvlink_err_base_n = base->nvlink_n;
	for (unsigned l = 0; l < base->nvlink_n; l++) {
		const struct gpu_nvlink *k = &base->nvlink[l];
		v->nvlink_err_base[l] = (struct nvlink_err_counts){ k->crc_flit_errors, k->crc_data_errors,
								    k->replay_errors, k->recovery_errors };
	}
}

/* The agent's way, its sampler reading the slow groups every 5th tick: the
 * same readings as the fixture's (prev 1 s before now), but now's sample is
 * taken 3 ticks after its slow groups were read (carried since) and prev's
 * reading is the view's rate base. The previous tick, which carried now's
 * reading, is passed as prev and must not be used. Same findings. */
static void assert_same_with_slow_groups(const struct fixture *f, const struct health_opts *o)
{
	struct snapshot *carried = snapshot_new(GPU_MAX_GPUS), *tick_before = snapshot_new(GPU_MAX_GPUS);
	struct health_report *r = malloc(sizeof(*r)), *want = malloc(sizeof(*want));
	assert_non_null(carried);
	assert_non_null(tick_before);
	assert_non_null(r);
	assert_non_null(want);
	assert_int_equal(snapshot_copy(carried, &f->now), 0);
	carried->taken_ns += 3 * SEC;
	for (unsigned i = 0; i < carried->n; i++) {
		struct gpu_view *v = &carried->gpu[i];
		v->slow_read_ns = v->s.timestamp_ns;
		v->s.timestamp_ns += 3 * SEC;
		gpu_rate_base_set(&v->rate_base, &f->prev.gpu[i].s);
		keep_nvlink_base(v, &f->prev.gpu[i].s, f->prev.gpu[i].s.timestamp_ns, v->slow_read_ns);
	}
	assert_int_equal(snapshot_copy(tick_before, carried), 0);
	tick_before->taken_ns -= SEC;
	for (unsigned i = 0; i < carried->n; i++) {
		tick_before->gpu[i].s.timestamp_ns -= SEC;
		tick_before->gpu[i].up = true;
	}
	char err[128];
	assert_int_equal(health_evaluate(rules, carried, tick_before, o, r, err, sizeof(err)), 0);
	*want = f->rep;
	want->taken_ns = carried->taken_ns;
	assert_same_report(r, want);
	free(carried);
	free(tick_before);
	free(r);
	free(want);
}

static struct fixture *fx_new(void)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	snapshot_attach(&f->prev, f->views[0], f->links[0], &f->tables[0], GPU_MAX_GPUS);
	snapshot_attach(&f->now, f->views[1], f->links[1], &f->tables[1], GPU_MAX_GPUS);
	healthy_pair(&f->prev, &f->now);
	return f;
}

static void test_healthy_passes_everything(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	struct health_opts o = { .expect_idle = true, .cuda_required = 13000 };
	char err[128];
	assert_int_equal(health_evaluate(rules, &f->now, &f->prev, &o, &f->rep, err, sizeof(err)), 0);
	assert_int_equal(f->rep.verdict, HEALTH_PASS);
	assert_int_equal(f->rep.action, HEALTH_ACT_NONE);
	assert_int_equal(f->rep.system.verdict, HEALTH_PASS);
	for (unsigned i = 0; i < 2; i++) {
		const struct health_entity *e = &f->rep.gpu[i];
		assert_int_equal(e->nfind, 0);
		assert_int_equal(e->verdict, HEALTH_PASS);
		/* every subsystem was checked by at least one rule */
		for (unsigned s = 0; s < HS_COUNT; s++) {
			if (s == HS_DRIVER) /* driver rules are system-wide */
				continue;
			assert_true(e->checked[s] > 0);
			assert_int_equal(e->sub[s], HEALTH_PASS);
		}
	}
	free(f);
}

/* ---- one case per rule --------------------------------------------------- */
typedef void (*mutate_fn)(struct snapshot *prev, struct snapshot *now, struct health_opts *o);

static void m_lost(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; n->gpu[1].s.lost = true; n->gpu[1].up = false; }
static void m_ecc_unc(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; VAL_SET(n->gpu[1].s.ecc_vol_uncorrected, 2); }
static void m_ecc_rate(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)o; VAL_SET(p->gpu[1].s.ecc_vol_corrected, 100); VAL_SET(n->gpu[1].s.ecc_vol_corrected, 150); }
static void m_ecc_pending(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; VAL_SET(n->gpu[1].st.ecc_mode_pending, 0); }
static void m_retired_pending(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; VAL_SET(n->gpu[1].s.retired_pages_pending, 1); }
static void m_retired_63(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; VAL_SET(n->gpu[1].s.retired_pages_sbe, 40); VAL_SET(n->gpu[1].s.retired_pages_dbe, 23); }
static void m_remap_pending(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; VAL_SET(n->gpu[1].s.remap_pending, 1); }
static void m_remap_failure(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; VAL_SET(n->gpu[1].s.remap_failure, 1); }
static void m_remap_unc(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; VAL_SET(n->gpu[1].s.remap_uncorrected, 512); }
static void m_nvlink_down(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; VAL_SET(n->gpu[1].s.nvlink[4].active, 0); }
static void m_nvlink_replay(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)o; VAL_SET(p->gpu[1].s.nvlink[2].replay_errors, 5); VAL_SET(n->gpu[1].s.nvlink[2].replay_errors, 9); }
static void m_nvlink_recovery(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)o; VAL_SET(p->gpu[1].s.nvlink[2].recovery_errors, 1); VAL_SET(n->gpu[1].s.nvlink[2].recovery_errors, 2); }
static void m_nvlink_replay_old(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)o; VAL_SET(p->gpu[1].s.nvlink[2].replay_errors, 5); VAL_SET(n->gpu[1].s.nvlink[2].replay_errors, 5); }
static void m_nvlink_recovery_old(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)o; VAL_SET(p->gpu[1].s.nvlink[2].recovery_errors, 3); VAL_SET(n->gpu[1].s.nvlink[2].recovery_errors, 3); }
static void m_crc_fail(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)o; VAL_SET(p->gpu[1].s.nvlink[7].crc_flit_errors, 1000); VAL_SET(n->gpu[1].s.nvlink[7].crc_flit_errors, 1090); VAL_SET(n->gpu[1].s.nvlink[7].crc_data_errors, 10); }
static void m_crc_warn(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)o; VAL_SET(p->gpu[1].s.nvlink[7].crc_data_errors, 10); VAL_SET(n->gpu[1].s.nvlink[7].crc_data_errors, 22); }
/* Gen5 x16 budget: 1e-12 * 32e9 * 16 = 0.512 errors/s; 3 replays in 1 s is over it */
static void m_pcie_replay(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)o; VAL_SET(p->gpu[1].s.pcie_replays, 100); VAL_SET(n->gpu[1].s.pcie_replays, 103); }
static void m_pcie_gen(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; VAL_SET(n->gpu[1].s.pcie_gen, 3); VAL_SET(n->gpu[1].s.pstate, 0); VAL_SET(n->gpu[1].s.util_gpu_pct, 90); }
static void m_pcie_width(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; VAL_SET(n->gpu[1].s.pcie_width, 8); }
static void m_thermal_viol(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)o; VAL_SET(p->gpu[1].s.viol_thermal_ns, 5000000); VAL_SET(n->gpu[1].s.viol_thermal_ns, 505000000); }
static void m_thermal_active(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; VAL_SET(n->gpu[1].s.clock_event_reasons, CLK_EVT_SW_THERMAL); }
static void m_temp(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; VAL_SET(n->gpu[1].s.temp_c, 88); }
static void m_power_viol(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)o; VAL_SET(p->gpu[1].s.viol_power_ns, 1000); VAL_SET(n->gpu[1].s.viol_power_ns, 700001000); }
static void m_power_brake(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; VAL_SET(n->gpu[1].s.clock_event_reasons, CLK_EVT_HW_POWER_BRAKE); }
static void m_power_limit(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; VAL_SET(n->gpu[1].st.power_limit_mw, 500000); }
static void m_persistence(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; VAL_SET(n->gpu[1].st.persistence_mode, 0); }
static void m_mig_pending(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; VAL_SET(n->gpu[1].st.mig_mode_pending, 1); }
static void m_prohibited(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; VAL_SET(n->gpu[1].st.compute_mode, COMPUTE_PROHIBITED); }
static void m_foreign(struct snapshot *p, struct snapshot *n, struct health_opts *o)
{
	(void)p;
	static const uint32_t uids[] = { 1000 };
	o->allowed_uids = uids;
	o->n_allowed_uids = 1;
	n->gpu[1].nproc = 2;
	n->gpu[1].procs[0] = (struct gpu_process){ .pid = 10, .uid = 1000, .name = "mine", .type = 'C', .mig_gi = -1 };
	n->gpu[1].procs[1] = (struct gpu_process){ .pid = 4242, .uid = 2000, .name = "miner", .type = 'C', .mig_gi = -1 };
}
static void m_idle_alloc(struct snapshot *p, struct snapshot *n, struct health_opts *o)
{
	(void)p;
	(void)o;
	n->gpu[1].nproc = 1;
	n->gpu[1].procs[0] = (struct gpu_process){ .pid = 77, .uid = 1000, .name = "sleeper", .type = 'C', .mig_gi = -1 };
	VAL_SET(n->gpu[1].s.prof_sm_active_pct, 2);
	n->gpu[2].nproc = 1; /* held and busy: no finding */
	n->gpu[2].procs[0] = (struct gpu_process){ .pid = 78, .uid = 1000, .name = "gemm", .type = 'C', .mig_gi = -1 };
	VAL_SET(n->gpu[2].s.prof_sm_active_pct, 90);
}
static void m_driver_lib(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; snprintf(n->sys.nvml_version.s, sizeof(n->sys.nvml_version.s), "13.575.57.08"); }
static void m_cuda_old(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; snprintf(n->sys.cuda_driver_version.s, sizeof(n->sys.cuda_driver_version.s), "12.4"); }
static void m_fm(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; VAL_SET(n->sys.fabric_manager_running, 0); }
static void m_xid79(struct snapshot *p, struct snapshot *n, struct health_opts *o) { (void)p; (void)o; n->gpu[1].nxid = 1; n->gpu[1].xid[0].code = 79; n->gpu[1].xid[0].count = 1; }

struct rule_case {
	const char *rule;
	mutate_fn mutate;
	bool system;                 /* the finding is on the system entry */
	enum health_subsys subsys;
	enum health_verdict verdict;
	enum health_action action;
	const char *evidence_has;    /* a substring the evidence must hold */
	const char *also;            /* a second rule that must fire with it (or NULL) */
};

static const struct rule_case cases[] = {
	{ "gpu-lost", m_lost, false, HS_PCIE, HEALTH_FAIL, HEALTH_ACT_REBOOT, "gpu_lost = 1", NULL },
	{ "ecc-volatile-uncorrectable", m_ecc_unc, false, HS_MEMORY, HEALTH_FAIL, HEALTH_ACT_RESET_GPU, "= 2 errors", NULL },
	{ "ecc-correctable-rate", m_ecc_rate, false, HS_MEMORY, HEALTH_WARN, HEALTH_ACT_NONE, "= 50 errors/s", NULL },
	{ "ecc-mode-pending", m_ecc_pending, false, HS_CONFIG, HEALTH_WARN, HEALTH_ACT_REBOOT, "ecc_mode_pending = 1", NULL },
	{ "retired-pages-pending", m_retired_pending, false, HS_MEMORY, HEALTH_WARN, HEALTH_ACT_RESET_GPU, "= 1", NULL },
	{ "retired-pages-limit", m_retired_63, false, HS_MEMORY, HEALTH_FAIL, HEALTH_ACT_REPLACE_BOARD, "= 63 pages", NULL },
	{ "row-remap-pending", m_remap_pending, false, HS_MEMORY, HEALTH_WARN, HEALTH_ACT_RESET_GPU, "remap_pending = 1", NULL },
	{ "row-remap-failure", m_remap_failure, false, HS_MEMORY, HEALTH_FAIL, HEALTH_ACT_REPLACE_BOARD, "remap_failure = 1", NULL },
	{ "row-remap-uncorrectable", m_remap_unc, false, HS_MEMORY, HEALTH_WARN, HEALTH_ACT_DRAIN, "= 512 rows", NULL },
	{ "nvlink-down", m_nvlink_down, false, HS_NVLINK, HEALTH_FAIL, HEALTH_ACT_RESET_GPU, "link 4", NULL },
	{ "nvlink-replay-growing", m_nvlink_replay, false, HS_NVLINK, HEALTH_FAIL, HEALTH_ACT_RESET_GPU, "= 4 errors [link 2]", "nvlink-replay-since-load" },
	{ "nvlink-recovery-growing", m_nvlink_recovery, false, HS_NVLINK, HEALTH_FAIL, HEALTH_ACT_RESET_GPU, "= 1 errors", "nvlink-recovery-since-load" },
	{ "nvlink-replay-since-load", m_nvlink_replay_old, false, HS_NVLINK, HEALTH_PASS, HEALTH_ACT_NONE, "= 5 errors", NULL },
	{ "nvlink-recovery-since-load", m_nvlink_recovery_old, false, HS_NVLINK, HEALTH_WARN, HEALTH_ACT_NONE, "= 3 errors", NULL },
	{ "nvlink-crc-rate-fail", m_crc_fail, false, HS_NVLINK, HEALTH_FAIL, HEALTH_ACT_RESET_GPU, "= 100 errors/s [link 7]", NULL },
	{ "nvlink-crc-rate-warn", m_crc_warn, false, HS_NVLINK, HEALTH_WARN, HEALTH_ACT_DRAIN, "= 12 errors/s", NULL },
	{ "pcie-replay-rate", m_pcie_replay, false, HS_PCIE, HEALTH_WARN, HEALTH_ACT_DRAIN, "3 replays/s, budget 0.512/s", NULL },
	{ "pcie-gen-below-max", m_pcie_gen, false, HS_PCIE, HEALTH_WARN, HEALTH_ACT_DRAIN, "Gen3 of Gen5", NULL },
	{ "pcie-width-below-max", m_pcie_width, false, HS_PCIE, HEALTH_WARN, HEALTH_ACT_DRAIN, "x8 of x16", NULL },
	{ "thermal-violation-growing", m_thermal_viol, false, HS_THERMAL, HEALTH_WARN, HEALTH_ACT_NONE, "= 500 ms/s [throttled 50% of the time]", NULL },
	{ "thermal-slowdown-active", m_thermal_active, false, HS_THERMAL, HEALTH_WARN, HEALTH_ACT_DRAIN, "= 1 [SW thermal]", NULL },
	{ "temperature-over-slowdown", m_temp, false, HS_THERMAL, HEALTH_WARN, HEALTH_ACT_DRAIN, "= 1 C [88 C, slowdown at 87 C]", NULL },
	{ "power-violation-growing", m_power_viol, false, HS_POWER, HEALTH_WARN, HEALTH_ACT_NONE, "= 700 ms/s [throttled 70% of the time]", NULL },
	{ "power-brake-active", m_power_brake, false, HS_POWER, HEALTH_WARN, HEALTH_ACT_DRAIN, "= 1", NULL },
	{ "power-limit-lowered", m_power_limit, false, HS_CONFIG, HEALTH_WARN, HEALTH_ACT_NONE, "= 200 W", NULL },
	{ "persistence-off", m_persistence, false, HS_CONFIG, HEALTH_WARN, HEALTH_ACT_NONE, "persistence_off = 1", NULL },
	{ "mig-mode-pending", m_mig_pending, false, HS_CONFIG, HEALTH_WARN, HEALTH_ACT_RESET_GPU, "= 1", NULL },
	{ "compute-prohibited", m_prohibited, false, HS_CONFIG, HEALTH_WARN, HEALTH_ACT_NONE, "= 1", NULL },
	{ "foreign-compute-process", m_foreign, false, HS_PROCESSES, HEALTH_FAIL, HEALTH_ACT_DRAIN, "= 1 processes [pid 4242 (miner)]", NULL },
	{ "allocated-gpu-idle", m_idle_alloc, false, HS_PROCESSES, HEALTH_PASS, HEALTH_ACT_NONE, "= 2 % [1 compute process]", NULL },
	{ "driver-library-mismatch", m_driver_lib, true, HS_DRIVER, HEALTH_WARN, HEALTH_ACT_REBOOT, "NVML 13.575.57.08, driver 580.159.04", NULL },
	{ "cuda-too-old", m_cuda_old, true, HS_DRIVER, HEALTH_WARN, HEALTH_ACT_NONE, "need 13.0", NULL },
	{ "fabric-manager-missing", m_fm, true, HS_DRIVER, HEALTH_WARN, HEALTH_ACT_NONE, "fabric_manager_down = 1", NULL },
	{ "xid-catalog", m_xid79, false, HS_XID, HEALTH_FAIL, HEALTH_ACT_REBOOT, "xid 79 seen 1 time", NULL },
};

static void test_each_rule(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct rule_case *rc = &cases[c];
		struct fixture *f = fx_new();
		struct health_opts o = { .cuda_required = 13000 };
		rc->mutate(&f->prev, &f->now, &o);
		char err[128];
		assert_int_equal(health_evaluate(rules, &f->now, &f->prev, &o, &f->rep, err, sizeof(err)), 0);
		const struct health_entity *e = rc->system ? &f->rep.system : &f->rep.gpu[1];
		const struct health_finding *hf = find_rule(e, rc->rule);
		if (!hf)
			fail_msg("rule '%s' did not fire", rc->rule);
		if (strstr(hf->evidence, rc->evidence_has) == NULL)
			fail_msg("rule '%s': evidence '%s' lacks '%s'", rc->rule, hf->evidence, rc->evidence_has);
		assert_int_equal(hf->verdict, rc->verdict);
		assert_int_equal(hf->action, rc->action);
		assert_int_equal(hf->subsys, rc->subsys);
		assert_true(hf->reason[0] != '\0');
		assert_int_equal(e->sub[rc->subsys], rc->verdict);
		assert_int_equal(e->verdict, rc->verdict);
		assert_int_equal(f->rep.verdict, rc->verdict);
		/* only that finding (and its companion); GPU 0 untouched */
		if (rc->also && !find_rule(e, rc->also))
			fail_msg("rule '%s' fired without '%s'", rc->rule, rc->also);
		if (e->nfind != (rc->also ? 2u : 1u))
			fail_msg("rule '%s': %u findings, first '%s'", rc->rule, e->nfind, e->find[0].rule_id);
		assert_int_equal(f->rep.gpu[0].nfind, 0);
		assert_int_equal(health_gpu_verdict(&f->rep, 0), rc->system ? rc->verdict : HEALTH_PASS);
		assert_int_equal(health_gpu_verdict(&f->rep, 1), rc->verdict);
		/* the slow groups read every 5th tick: the same report */
		assert_same_with_slow_groups(f, &o);
		free(f);
	}
}

static void test_every_shipped_rule_has_a_case(void **state)
{
	(void)state;
	for (unsigned i = 0; i < rules->nrules; i++) {
		bool found = false;
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
			found |= strcmp(cases[c].rule, rules->rules[i].id) == 0;
		if (!found)
			fail_msg("rule '%s' has no test case", rules->rules[i].id);
		assert_true(rules->rules[i].source[0] != '\0');
	}
}

/* Two CRC errors in the window (1.56/s over 1.3 s on a healthy H200) are too
 * few to call a rate: no finding. */
static void test_crc_rate_needs_enough_errors(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	VAL_SET(f->prev.gpu[1].s.nvlink[7].crc_flit_errors, 40);
	VAL_SET(f->now.gpu[1].s.nvlink[7].crc_flit_errors, 42);
	char err[128];
	assert_int_equal(health_evaluate(rules, &f->now, &f->prev, NULL, &f->rep, err, sizeof(err)), 0);
	assert_null(find_rule(&f->rep.gpu[1], "nvlink-crc-rate-warn"));
	assert_null(find_rule(&f->rep.gpu[1], "nvlink-crc-rate-fail"));
	free(f);
}

/* An H200 idle just after a load: its power violation counter still grew by
 * 257 ms a second (measured, issue 31's acceptance run): no finding, where
 * "> 0" made every diag run after another a WARN. */
static void test_power_violation_after_a_load_is_no_finding(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	uint64_t window_ns = f->now.taken_ns - f->prev.taken_ns;
	VAL_SET(f->prev.gpu[1].s.viol_power_ns, 1000);
	VAL_SET(f->now.gpu[1].s.viol_power_ns, 1000 + (uint64_t)(0.257 * (double)window_ns));
	char err[128];
	assert_int_equal(health_evaluate(rules, &f->now, &f->prev, NULL, &f->rep, err, sizeof(err)), 0);
	assert_null(find_rule(&f->rep.gpu[1], "power-violation-growing"));
	assert_int_equal(f->rep.gpu[1].verdict, HEALTH_PASS);
	free(f);
}

static const struct health_finding *evaluate_find(struct fixture *f, const char *rule)
{
	char err[128];
	assert_int_equal(health_evaluate(rules, &f->now, &f->prev, NULL, &f->rep, err, sizeof(err)), 0);
	const struct health_finding *hf = find_rule(&f->rep.gpu[1], rule);
	if (!hf)
		fail_msg("rule '%s' did not fire", rule);
	return hf;
}

/* Issue 38, item 11: the verdicts a new user met. A GPU at 95 C in HW
 * slowdown says what to do (drain, check the cooling), not "none". */
static void test_hot_gpu_has_an_action(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	VAL_SET(f->now.gpu[1].s.temp_c, 95);
	VAL_SET(f->now.gpu[1].s.clock_event_reasons, CLK_EVT_HW_SLOWDOWN);
	const struct health_finding *hf = evaluate_find(f, "thermal-slowdown-active");
	assert_int_equal(hf->action, HEALTH_ACT_DRAIN);
	assert_string_equal(hf->evidence, "thermal_slowdown_active = 1 [HW slowdown] (rule: > 0)");
	hf = find_rule(&f->rep.gpu[1], "temperature-over-slowdown");
	assert_non_null(hf);
	assert_int_equal(hf->action, HEALTH_ACT_DRAIN);
	assert_string_equal(hf->evidence, "temp_over_slowdown = 8 C [95 C, slowdown at 87 C] (rule: >= 0)");
	assert_int_equal(f->rep.gpu[1].action, HEALTH_ACT_DRAIN);
	assert_true(strstr(hf->hint, "cooling") != NULL);
	free(f);
}

/* A sum over a GPU's links says it is a sum, and which link had the most. */
static void test_nvlink_sum_says_links(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	for (unsigned l = 0; l < 18; l++) {
		VAL_SET(f->prev.gpu[1].s.nvlink[l].replay_errors, 100);
		VAL_SET(f->now.gpu[1].s.nvlink[l].replay_errors, 105 + (l == 3 ? 5 : 0));
	}
	const struct health_finding *hf = evaluate_find(f, "nvlink-replay-growing");
	assert_string_equal(hf->evidence, "nvlink_replay_new = 95 errors [sum of 18 links; most on link 3: 10] (rule: > 0)");
	hf = find_rule(&f->rep.gpu[1], "nvlink-replay-since-load");
	assert_non_null(hf);
	assert_string_equal(hf->evidence, "nvlink_replay_total = 1895 errors [sum of 18 links; most on link 3: 110] (rule: > 0)");
	free(f);
}

/* Numbers for people: 1000.4 ms/s is "1000", not "1e+03". */
static void test_numbers_for_people(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	VAL_SET(f->prev.gpu[1].s.viol_thermal_ns, 0);
	VAL_SET(f->now.gpu[1].s.viol_thermal_ns, 1000400000); /* over a 1 s window */
	const struct health_finding *hf = evaluate_find(f, "thermal-violation-growing");
	assert_string_equal(hf->evidence, "thermal_violation_rate = 1000 ms/s [throttled 100% of the time] (rule: > 0)");
	VAL_SET(f->now.gpu[1].s.viol_thermal_ns, 12345678);
	hf = evaluate_find(f, "thermal-violation-growing");
	assert_string_equal(hf->evidence, "thermal_violation_rate = 12.3 ms/s [throttled 1% of the time] (rule: > 0)");
	free(f);
}

/* A leftover process at --idle fails the check (a Prolog's exit 2), with an action. */
static void test_leftover_process_fails(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	struct health_opts o = { .expect_idle = true };
	m_foreign(&f->prev, &f->now, &o);
	char err[128];
	assert_int_equal(health_evaluate(rules, &f->now, &f->prev, &o, &f->rep, err, sizeof(err)), 0);
	const struct health_finding *hf = find_rule(&f->rep.gpu[1], "foreign-compute-process");
	assert_non_null(hf);
	assert_int_equal(hf->verdict, HEALTH_FAIL);
	assert_int_equal(hf->action, HEALTH_ACT_DRAIN);
	assert_int_equal(f->rep.verdict, HEALTH_FAIL);
	free(f);
}

static void test_crc_fail_replaces_warn(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	m_crc_fail(&f->prev, &f->now, NULL);
	char err[128];
	assert_int_equal(health_evaluate(rules, &f->now, &f->prev, NULL, &f->rep, err, sizeof(err)), 0);
	assert_non_null(find_rule(&f->rep.gpu[1], "nvlink-crc-rate-fail"));
	assert_null(find_rule(&f->rep.gpu[1], "nvlink-crc-rate-warn"));
	free(f);
}

static void test_rates_need_prev(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	m_crc_fail(&f->prev, &f->now, NULL);
	m_thermal_viol(&f->prev, &f->now, NULL);
	char err[128];
	assert_int_equal(health_evaluate(rules, &f->now, NULL, NULL, &f->rep, err, sizeof(err)), 0);
	assert_null(find_rule(&f->rep.gpu[1], "nvlink-crc-rate-fail"));
	assert_null(find_rule(&f->rep.gpu[1], "thermal-violation-growing"));
	assert_true(f->rep.gpu[1].skipped > 0);
	/* a counter that went backwards (reset) is not a rate either */
	VAL_SET(f->prev.gpu[1].s.viol_thermal_ns, 999999999999ULL);
	assert_int_equal(health_evaluate(rules, &f->now, &f->prev, NULL, &f->rep, err, sizeof(err)), 0);
	assert_null(find_rule(&f->rep.gpu[1], "thermal-violation-growing"));
	free(f);
}

/* A link's CRC errors growing 30/s, its counters read every 5th tick (the
 * agent's slow_group_every): the rate is 30/s at every tick, the reading
 * tick as the four that carry it (it was nothing on those and 150/s on the
 * fifth when a rate ran over one tick). */
static void test_crc_rate_steady_with_slow_groups(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	for (uint64_t t = 10; t < 20; t++) {
		struct snapshot *tick[2] = { &f->prev, &f->now };
		for (int k = 0; k < 2; k++) { /* the tick before and this one */
			uint64_t at = t - 1 + (uint64_t)k, at_read = at / 5 * 5;
			struct gpu_view *v = &tick[k]->gpu[1];
			tick[k]->taken_ns = v->s.timestamp_ns = at * SEC;
			v->slow_read_ns = at_read * SEC;
			VAL_SET(v->s.nvlink[3].crc_flit_errors, 30 * at_read);
			struct gpu_sample before = v->s;
			before.timestamp_ns = (at_read - 5) * SEC;
			VAL_SET(before.nvlink[3].crc_flit_errors, 30 * (at_read - 5));
			gpu_rate_base_set(&v->rate_base, &before);
			keep_nvlink_base(v, &before, (at_read - 5) * SEC, at_read * SEC);
		}
		char err[128];
		assert_int_equal(health_evaluate(rules, &f->now, &f->prev, NULL, &f->rep, err, sizeof(err)), 0);
		const struct health_finding *hf = find_rule(&f->rep.gpu[1], "nvlink-crc-rate-warn");
		if (!hf)
			fail_msg("tick %llu: no CRC rate finding", (unsigned long long)t);
		if (!strstr(hf->evidence, "= 30 errors/s [link 3]"))
			fail_msg("tick %llu: %s", (unsigned long long)t, hf->evidence);
		assert_null(find_rule(&f->rep.gpu[1], "nvlink-crc-rate-fail"));
	}
	free(f);
}

/* The NVLink error counters read once a minute (NVML's counters that need a
 * call each), the other slow groups every 5 s: the CRC rate runs between the
 * counters' own two readings, 60 s apart, at every tick; it was nothing for
 * eleven readings and twelve times the rate at the twelfth. A view whose
 * counters have had one reading only gives no rate (never 0/s). */
static void test_crc_rate_with_counters_read_once_a_minute(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	for (uint64_t t = 120; t < 180; t += 5) {
		uint64_t read = t / 60 * 60;
		struct gpu_view *v = &f->now.gpu[1];
		f->now.taken_ns = v->s.timestamp_ns = v->slow_read_ns = t * SEC;
		VAL_SET(v->s.nvlink[3].crc_flit_errors, 30 * read);
		v->s.nvlink_err_read_ns = read * SEC;
		gpu_rate_base_set(&v->rate_base, &v->s); /* the slow groups 5 s before: the same counters' reading */
		v->rate_base.timestamp_ns = (t - 5) * SEC;
		struct gpu_sample before = v->s;
		VAL_SET(before.nvlink[3].crc_flit_errors, 30 * (read - 60));
		keep_nvlink_base(v, &before, (read - 60) * SEC, read * SEC);
		char err[128];
		assert_int_equal(health_evaluate(rules, &f->now, NULL, NULL, &f->rep, err, sizeof(err)), 0);
		const struct health_finding *hf = find_rule(&f->rep.gpu[1], "nvlink-crc-rate-warn");
		if (!hf || !strstr(hf->evidence, "= 30 errors/s [link 3]"))
			fail_msg("t = %llu s: %s", (unsigned long long)t, hf ? hf->evidence : "no CRC rate finding");
	}
	/* two one-shot sweeps that got the same reading of the counters: no rate */
	struct snapshot *p = &f->prev, *n = &f->now;
	memset(&n->gpu[1].rate_base, 0, sizeof(n->gpu[1].rate_base));
	n->gpu[1].nvlink_err_read_ns = n->gpu[1].nvlink_err_base_ns = n->gpu[1].slow_read_ns = 0;
	p->gpu[1].s.nvlink_err_read_ns = 0; /* read with its sweep */
	n->gpu[1].s.nvlink_err_read_ns = p->gpu[1].s.timestamp_ns; /* served from that reading */
	VAL_SET(p->gpu[1].s.nvlink[3].crc_flit_errors, 500);
	VAL_SET(n->gpu[1].s.nvlink[3].crc_flit_errors, 500);
	char err[128];
	assert_int_equal(health_evaluate(rules, n, p, NULL, &f->rep, err, sizeof(err)), 0);
	assert_null(find_rule(&f->rep.gpu[1], "nvlink-crc-rate-warn"));
	assert_true(f->rep.gpu[1].skipped > 0);
	free(f);
}

static void test_unsupported_is_not_zero(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	/* a GPU without ECC or remapping support: memory rules are skipped, not passed */
	struct gpu_sample *s = &f->now.gpu[0].s;
	u64v *fields[] = { &s->ecc_vol_uncorrected, &s->ecc_vol_corrected, &s->retired_pages_sbe,
			   &s->retired_pages_dbe, &s->retired_pages_pending, &s->remap_pending,
			   &s->remap_failure, &s->remap_uncorrected };
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		VAL_MARK(*fields[i], VAL_UNSUPPORTED);
	char err[128];
	assert_int_equal(health_evaluate(rules, &f->now, &f->prev, NULL, &f->rep, err, sizeof(err)), 0);
	assert_int_equal(f->rep.gpu[0].sub[HS_MEMORY], HEALTH_NA);
	assert_int_equal(f->rep.gpu[0].checked[HS_MEMORY], 0);
	assert_int_equal(f->rep.gpu[0].verdict, HEALTH_PASS);
	free(f);
}

static void test_lost_gpu_skips_the_rest(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	m_lost(&f->prev, &f->now, NULL);
	VAL_SET(f->now.gpu[1].s.ecc_vol_uncorrected, 9); /* stale: must not be judged */
	snprintf(f->now.gpu[1].last_error, sizeof(f->now.gpu[1].last_error), "GPU is lost");
	char err[128];
	assert_int_equal(health_evaluate(rules, &f->now, &f->prev, NULL, &f->rep, err, sizeof(err)), 0);
	assert_int_equal(f->rep.gpu[1].nfind, 1);
	assert_non_null(strstr(f->rep.gpu[1].find[0].evidence, "GPU is lost"));
	assert_int_equal(f->rep.action, HEALTH_ACT_REBOOT);
	free(f);
}

static void test_idle_pcie_gen_not_judged(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	VAL_SET(f->now.gpu[1].s.pcie_gen, 1);
	VAL_SET(f->now.gpu[1].s.pstate, 8);
	VAL_SET(f->now.gpu[1].s.util_gpu_pct, 0);
	char err[128];
	assert_int_equal(health_evaluate(rules, &f->now, &f->prev, NULL, &f->rep, err, sizeof(err)), 0);
	assert_null(find_rule(&f->rep.gpu[1], "pcie-gen-below-max"));
	free(f);
}

static void test_pcie_gen_idle_but_width_is(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	VAL_SET(f->now.gpu[1].s.pcie_width, 4);
	VAL_SET(f->now.gpu[1].s.pstate, 8);
	char err[128];
	assert_int_equal(health_evaluate(rules, &f->now, &f->prev, NULL, &f->rep, err, sizeof(err)), 0);
	assert_non_null(find_rule(&f->rep.gpu[1], "pcie-width-below-max"));
	free(f);
}

static void test_pcie_gen_without_nvlink_gpu(void **state)
{
	(void)state;
	/* a PCIe GPU: links reported down but no NVLink peer and none active -> not judged */
	struct fixture *f = fx_new();
	f->now.link[0][1].kind = f->now.link[1][0].kind = LINK_PHB;
	for (unsigned g = 0; g < 2; g++)
		for (unsigned l = 0; l < 18; l++)
			VAL_SET(f->now.gpu[g].s.nvlink[l].active, 0);
	char err[128];
	assert_int_equal(health_evaluate(rules, &f->now, &f->prev, NULL, &f->rep, err, sizeof(err)), 0);
	assert_null(find_rule(&f->rep.gpu[1], "nvlink-down"));
	assert_int_equal(f->rep.verdict, HEALTH_PASS);
	free(f);
}

static void test_xid_severities(void **state)
{
	(void)state;
	struct { uint64_t code; enum health_verdict v; enum health_action a; } xs[] = {
		{ 13, HEALTH_WARN, HEALTH_ACT_NONE }, { 31, HEALTH_WARN, HEALTH_ACT_NONE },
		{ 45, HEALTH_PASS, HEALTH_ACT_NONE }, { 48, HEALTH_FAIL, HEALTH_ACT_RESET_GPU },
		{ 63, HEALTH_WARN, HEALTH_ACT_RESET_GPU }, { 64, HEALTH_FAIL, HEALTH_ACT_REPLACE_BOARD },
		{ 74, HEALTH_FAIL, HEALTH_ACT_RESET_GPU }, { 79, HEALTH_FAIL, HEALTH_ACT_REBOOT },
		{ 92, HEALTH_WARN, HEALTH_ACT_DRAIN }, { 94, HEALTH_WARN, HEALTH_ACT_RESET_GPU },
		{ 95, HEALTH_FAIL, HEALTH_ACT_RESET_GPU }, { 119, HEALTH_FAIL, HEALTH_ACT_RESET_GPU },
		{ 120, HEALTH_FAIL, HEALTH_ACT_RESET_GPU }, { 9999, HEALTH_WARN, HEALTH_ACT_DRAIN },
	};
	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
		struct fixture *f = fx_new();
		f->now.gpu[0].nxid = 1;
		f->now.gpu[0].xid[0].code = xs[i].code;
		f->now.gpu[0].xid[0].count = 3;
		char err[128];
		assert_int_equal(health_evaluate(rules, &f->now, &f->prev, NULL, &f->rep, err, sizeof(err)), 0);
		const struct health_entity *e = &f->rep.gpu[0];
		assert_int_equal(e->nfind, 1);
		assert_int_equal(e->find[0].verdict, xs[i].v);
		assert_int_equal(e->find[0].action, xs[i].a);
		assert_int_equal(e->sub[HS_XID], xs[i].v);
		/* an informational XID is listed but leaves the GPU healthy */
		assert_int_equal(e->verdict, xs[i].v);
		assert_int_equal(e->action, xs[i].v >= HEALTH_WARN ? xs[i].a : HEALTH_ACT_NONE);
		free(f);
	}
	/* events not collected: the XID rule is skipped, not passed */
	struct fixture *f = fx_new();
	struct health_opts o = { .xids_unknown = true };
	char err[128];
	assert_int_equal(health_evaluate(rules, &f->now, &f->prev, &o, &f->rep, err, sizeof(err)), 0);
	assert_int_equal(f->rep.gpu[0].sub[HS_XID], HEALTH_NA);
	free(f);
}

static void test_worst_action_wins(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	m_remap_failure(&f->prev, &f->now, NULL); /* replace_board */
	m_persistence(&f->prev, &f->now, NULL);   /* none */
	m_pcie_width(&f->prev, &f->now, NULL);    /* drain */
	char err[128];
	assert_int_equal(health_evaluate(rules, &f->now, &f->prev, NULL, &f->rep, err, sizeof(err)), 0);
	assert_int_equal(f->rep.gpu[1].nfind, 3);
	assert_int_equal(f->rep.gpu[1].verdict, HEALTH_FAIL);
	assert_int_equal(f->rep.gpu[1].action, HEALTH_ACT_REPLACE_BOARD);
	assert_int_equal(f->rep.gpu[1].sub[HS_CONFIG], HEALTH_WARN);
	assert_int_equal(f->rep.gpu[1].sub[HS_PCIE], HEALTH_WARN);
	assert_int_equal(f->rep.gpu[1].sub[HS_NVLINK], HEALTH_PASS);
	free(f);
}

/* The agent reuses one report every tick and health_evaluate clears only the
 * entries the snapshot has, and of those only the heads (clearing all 64
 * entries' findings touched ~850 KB at every tick): whatever a report held
 * before must not leak into what readers read. */
static void test_reused_report_same_as_fresh(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	m_remap_failure(&f->prev, &f->now, NULL);
	m_pcie_width(&f->prev, &f->now, NULL);
	struct health_report *used = malloc(sizeof(*used));
	assert_non_null(used);
	memset(used, 0xA5, sizeof(*used));
	char err[128];
	assert_int_equal(health_evaluate(rules, &f->now, &f->prev, NULL, &f->rep, err, sizeof(err)), 0);
	assert_int_equal(health_evaluate(rules, &f->now, &f->prev, NULL, used, err, sizeof(err)), 0);
	assert_true(f->rep.n > 0 && f->rep.n < GPU_MAX_GPUS);
	assert_int_equal(used->n, f->rep.n);
	assert_int_equal(used->gpu[1].nfind, 2);
	assert_same_report(used, &f->rep);
	for (unsigned i = 0; i < used->n; i++) {
		assert_int_equal(health_gpu_verdict(used, i), health_gpu_verdict(&f->rep, i));
		assert_int_equal(health_gpu_action(used, i), health_gpu_action(&f->rep, i));
	}
	/* past n: not a GPU, whatever the buffer holds */
	assert_int_equal(health_gpu_verdict(used, used->n), HEALTH_NA);
	free(used);
	free(f);
}

static void test_bad_arguments(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	char err[128] = "";
	assert_int_equal(health_evaluate(rules, NULL, NULL, NULL, &f->rep, err, sizeof(err)), -1);
	assert_true(err[0] != '\0');
	f->now.n = GPU_MAX_GPUS + 1;
	assert_int_equal(health_evaluate(rules, &f->now, NULL, NULL, &f->rep, err, sizeof(err)), -1);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthy_passes_everything),
		cmocka_unit_test(test_each_rule),
		cmocka_unit_test(test_every_shipped_rule_has_a_case),
		cmocka_unit_test(test_crc_fail_replaces_warn),
		cmocka_unit_test(test_power_violation_after_a_load_is_no_finding),
		cmocka_unit_test(test_crc_rate_needs_enough_errors),
		cmocka_unit_test(test_hot_gpu_has_an_action),
		cmocka_unit_test(test_nvlink_sum_says_links),
		cmocka_unit_test(test_numbers_for_people),
		cmocka_unit_test(test_leftover_process_fails),
		cmocka_unit_test(test_rates_need_prev),
		cmocka_unit_test(test_crc_rate_steady_with_slow_groups),
		cmocka_unit_test(test_crc_rate_with_counters_read_once_a_minute),
		cmocka_unit_test(test_unsupported_is_not_zero),
		cmocka_unit_test(test_lost_gpu_skips_the_rest),
		cmocka_unit_test(test_idle_pcie_gen_not_judged),
		cmocka_unit_test(test_pcie_gen_idle_but_width_is),
		cmocka_unit_test(test_pcie_gen_without_nvlink_gpu),
		cmocka_unit_test(test_xid_severities),
		cmocka_unit_test(test_worst_action_wins),
		cmocka_unit_test(test_reused_report_same_as_fresh),
		cmocka_unit_test(test_bad_arguments),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
