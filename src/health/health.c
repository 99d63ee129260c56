/* SPDX-License-Identifier: Apache-2.0 */
/*
 * health.c - health_evaluate(): reads each rule's metric from a snapshot (and
 * its previous one, for rates), compares it with the rule's threshold and
 * collects the findings per GPU and subsystem. Pure: no I/O, no clock.
 *
 * A metric that cannot be read (not supported, read error, no previous
 * snapshot for a rate, a counter that went backwards after a reset) leaves
 * its rule unevaluated: it is counted in `skipped`, never taken as 0.
 */
#include "health.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cudaver.h"

enum mv_status { MV_OK = 0, MV_NA, MV_ERROR, MV_NOPREV };

struct mval {
	enum mv_status st;
	double v;
	char where[64]; /* "link 3", "pid 1234 (python)" - which part the value is about */
};

struct ctx {
	const struct snapshot *now;
	const struct gpu_view *g;
	const struct gpu_rate_base *p; /* the reading rates start from (rate_base_of), NULL when none */
	struct gpu_rate_base p_room;  /* p when it is the previous snapshot's sample */
	unsigned index;
	double dt_s;                  /* seconds from p's reading to g's; 0 without p */
	/* the NVLink error counters' earlier reading (sampler_nvlink_err_base):
	 * nvl_n links, -1 none; nvl_dt_s seconds since */
	int nvl_n;
	double nvl_dt_s;
	struct nvlink_err_counts nvl_base[GPU_MAX_NVLINKS];
	const struct health_opts *opts;
};

static struct mval mv_u64(u64v x)
{
	struct mval m = { .st = MV_NA };
	if (x.st == VAL_OK) {
		m.st = MV_OK;
		m.v = (double)x.v;
	} else if (x.st == VAL_ERROR) {
		m.st = MV_ERROR;
	}
	return m;
}

static struct mval mv_flag(u64v x, bool (*test)(uint64_t))
{
	struct mval m = mv_u64(x);
	if (m.st == MV_OK)
		m.v = test(x.v) ? 1 : 0;
	return m;
}

static bool is_zero(uint64_t v) { return v == 0; }
static bool is_nonzero(uint64_t v) { return v != 0; }
static bool is_prohibited(uint64_t v) { return v == COMPUTE_PROHIBITED; }

/* Growth of a cumulative counter per second; NOPREV when it cannot be known. */
static struct mval mv_rate(const struct ctx *c, u64v now, u64v prev, double scale)
{
	struct mval m = mv_u64(now);
	if (m.st != MV_OK)
		return m;
	if (c->dt_s <= 0 || prev.st != VAL_OK || prev.v > now.v) {
		m.st = MV_NOPREV;
		return m;
	}
	m.v = (double)(now.v - prev.v) * scale / c->dt_s;
	return m;
}

/* Time throttled (a violation counter in ns), in ms per s, with the share
 * of the window said in words. */
static struct mval mv_throttled(const struct ctx *c, u64v now, u64v prev)
{
	struct mval m = mv_rate(c, now, prev, 1e-6);
	if (m.st == MV_OK && m.v > 0)
		snprintf(m.where, sizeof(m.where), "throttled %.0f%% of the time", m.v > 1000 ? 100 : m.v / 10);
	return m;
}

/* Both values known: a - b (signed); else the worse status. */
static struct mval mv_diff(u64v a, u64v b, double scale)
{
	struct mval ma = mv_u64(a), mb = mv_u64(b);
	if (ma.st != MV_OK)
		return ma;
	if (mb.st != MV_OK)
		return mb;
	ma.v = ((double)a.v - (double)b.v) * scale;
	return ma;
}

/* Does this GPU use NVLink at all (an active link, or an NVLink peer)? */
static bool uses_nvlink(const struct ctx *c)
{
	const struct gpu_sample *s = &c->g->s;
	for (unsigned l = 0; l < s->nvlink_n && l < GPU_MAX_NVLINKS; l++)
		if (VAL_HAS(s->nvlink[l].active) && s->nvlink[l].active.v)
			return true;
	for (unsigned j = 0; j < c->now->n && j < GPU_MAX_GPUS; j++)
		if (j != c->index && c->now->link[c->index][j].kind == LINK_NVLINK)
			return true;
	return false;
}

enum nvl_field { NVL_REPLAY, NVL_RECOVERY, NVL_CRC };

static bool nvl_get(const struct nvlink_err_counts *l, enum nvl_field f, uint64_t *out)
{
	switch (f) {
	case NVL_REPLAY:
		*out = l->replay.v;
		return VAL_HAS(l->replay);
	case NVL_RECOVERY:
		*out = l->recovery.v;
		return VAL_HAS(l->recovery);
	case NVL_CRC:
		*out = l->crc_flit.v + l->crc_data.v;
		return VAL_HAS(l->crc_flit) || VAL_HAS(l->crc_data);
	}
	return false;
}

static struct nvlink_err_counts nvl_counts(const struct gpu_nvlink *l)
{
	return (struct nvlink_err_counts){ l->crc_flit_errors, l->crc_data_errors, l->replay_errors, l->recovery_errors };
}

#define NVL_RATE_MIN_EVENTS 10

/* Over all links: total (sum), new in the window (sum of deltas) or worst rate. */
enum nvl_mode { NVL_TOTAL, NVL_NEW, NVL_WORST_RATE };

static struct mval mv_nvlink(const struct ctx *c, enum nvl_field f, enum nvl_mode mode)
{
	struct mval m = { .st = MV_NA };
	const struct gpu_sample *s = &c->g->s;
	double worst = -1;
	unsigned worst_link = 0, nonzero = 0; /* links that add to a sum */
	unsigned n = s->nvlink_n < GPU_MAX_NVLINKS ? s->nvlink_n : GPU_MAX_NVLINKS;
	for (unsigned l = 0; l < n; l++) {
		uint64_t v, pv;
		struct nvlink_err_counts now = nvl_counts(&s->nvlink[l]);
		if (!nvl_get(&now, f, &v))
			continue;
		double val;
		if (mode == NVL_TOTAL) {
			val = (double)v;
		} else if (c->nvl_n < 0 || c->nvl_dt_s <= 0 || l >= (unsigned)c->nvl_n || !nvl_get(&c->nvl_base[l], f, &pv) ||
			   pv > v) {
			if (m.st != MV_OK)
				m.st = MV_NOPREV;
			continue;
		} else {
			double d = (double)(v - pv);
			val = mode == NVL_NEW ? d : d / c->nvl_dt_s;
			/* a rate from a handful of errors says little (two CRC errors in a
			 * 1.3 s window on a healthy H200 read 1.56/s): judge it from
			 * NVL_RATE_MIN_EVENTS on, and take a longer --window for low rates */
			if (mode == NVL_WORST_RATE && d < NVL_RATE_MIN_EVENTS)
				val = 0;
		}
		m.st = MV_OK;
		if (mode == NVL_WORST_RATE)
			m.v = val > m.v ? val : m.v;
		else
			m.v += val;
		nonzero += val > 0;
		if (val > worst) {
			worst = val;
			worst_link = l;
		}
	}
	/* which links: a sum over several is not one link's count */
	if (m.st != MV_OK || m.v == 0)
		m.where[0] = '\0';
	else if (mode == NVL_WORST_RATE || nonzero == 1)
		snprintf(m.where, sizeof(m.where), "link %u", worst_link);
	else
		snprintf(m.where, sizeof(m.where), "sum of %u links; most on link %u: %.0f", nonzero, worst_link, worst);
	return m;
}

static struct mval mv_nvlink_down(const struct ctx *c)
{
	struct mval m = { .st = MV_NA };
	const struct gpu_sample *s = &c->g->s;
	if (!uses_nvlink(c))
		return m; /* a PCIe GPU without a bridge: no link is expected up */
	unsigned n = s->nvlink_n < GPU_MAX_NVLINKS ? s->nvlink_n : GPU_MAX_NVLINKS, first = n;
	for (unsigned l = 0; l < n; l++) {
		if (!VAL_HAS(s->nvlink[l].active))
			continue;
		m.st = MV_OK;
		if (s->nvlink[l].active.v == 0) {
			m.v++;
			if (first == n)
				first = l;
		}
	}
	if (m.v > 0)
		snprintf(m.where, sizeof(m.where), "first down: link %u", first);
	return m;
}

/* PCIe: the spec's bit error rate budget is 1e-12 per lane; at the trained
 * rate (GT/s per lane) and width that allows this many errors (hence
 * replays) per second. The value is the observed replay rate over it. */
static struct mval mv_pcie_ber(const struct ctx *c)
{
	static const double gts[] = { 0, 2.5, 5, 8, 16, 32, 64 };
	const struct gpu_sample *s = &c->g->s;
	struct mval m = mv_rate(c, s->pcie_replays, c->p ? c->p->pcie_replays : (u64v){ 0 }, 1.0);
	if (m.st != MV_OK)
		return m;
	if (!VAL_HAS(s->pcie_gen) || !VAL_HAS(s->pcie_width) || s->pcie_gen.v == 0 || s->pcie_gen.v > 6 ||
	    s->pcie_width.v == 0) {
		m.st = MV_NA;
		return m;
	}
	double budget = 1e-12 * gts[s->pcie_gen.v] * 1e9 * (double)s->pcie_width.v;
	double rate = m.v;
	m.v = rate / budget;
	snprintf(m.where, sizeof(m.where), "%.3g replays/s, budget %.3g/s", rate, budget);
	return m;
}

/* GPUs lower their PCIe link speed when idle to save power; a generation
 * below the maximum is judged only while the GPU works (P0-P2 or busy). */
static struct mval mv_pcie_gen(const struct ctx *c)
{
	const struct gpu_sample *s = &c->g->s;
	bool idle = VAL_HAS(s->pstate) && s->pstate.v > 2 && !(VAL_HAS(s->util_gpu_pct) && s->util_gpu_pct.v > 0);
	struct mval m = mv_diff(c->g->st.pcie_gen_max, s->pcie_gen, 1.0);
	if (m.st == MV_OK && idle && m.v > 0) {
		m.st = MV_NA;
		return m;
	}
	if (m.st == MV_OK)
		snprintf(m.where, sizeof(m.where), "Gen%llu of Gen%llu", (unsigned long long)s->pcie_gen.v,
			 (unsigned long long)c->g->st.pcie_gen_max.v);
	return m;
}

static struct mval mv_pcie_width(const struct ctx *c)
{
	const struct gpu_sample *s = &c->g->s;
	struct mval m = mv_diff(c->g->st.pcie_width_max, s->pcie_width, 1.0);
	if (m.st == MV_OK)
		snprintf(m.where, sizeof(m.where), "x%llu of x%llu", (unsigned long long)s->pcie_width.v,
			 (unsigned long long)c->g->st.pcie_width_max.v);
	return m;
}

static bool process_allowed(const struct health_opts *o, const struct gpu_process *pr)
{
	if (!o)
		return true;
	if (o->expect_idle)
		return false;
	if (o->n_allowed_pids == 0 && o->n_allowed_uids == 0)
		return true;
	for (unsigned i = 0; i < o->n_allowed_pids; i++)
		if (o->allowed_pids[i] == pr->pid)
			return true;
	for (unsigned i = 0; i < o->n_allowed_uids; i++)
		if (o->allowed_uids[i] == pr->uid)
			return true;
	return false;
}

static struct mval mv_foreign(const struct ctx *c)
{
	struct mval m = { .st = MV_OK };
	unsigned n = c->g->nproc < GPU_MAX_PROCS ? c->g->nproc : GPU_MAX_PROCS;
	for (unsigned i = 0; i < n; i++) {
		const struct gpu_process *pr = &c->g->procs[i];
		if (pr->type != 'C' || process_allowed(c->opts, pr))
			continue;
		if (m.v == 0)
			snprintf(m.where, sizeof(m.where), "pid %u (%.32s)", pr->pid, pr->name);
		m.v++;
	}
	return m;
}

/* An idle allocation as one sample sees it: the SM activity (GPM) of a GPU
 * that compute processes hold; n/a when none does or GPM is not read (an
 * older GPU never looks idle). The pool judges it over a window (pool/idle.h). */
static struct mval mv_allocated_sm(const struct ctx *c)
{
	struct mval m = { .st = MV_NA };
	unsigned n = c->g->nproc < GPU_MAX_PROCS ? c->g->nproc : GPU_MAX_PROCS, held = 0;
	for (unsigned i = 0; i < n; i++)
		held += c->g->procs[i].type == 'C';
	if (held == 0)
		return m;
	m = mv_u64(c->g->s.prof_sm_active_pct);
	if (m.st == MV_OK)
		snprintf(m.where, sizeof(m.where), "%u compute process%s", held, held == 1 ? "" : "es");
	return m;
}

/* "13.0" -> 13000; 0 when it does not parse. */
static struct mval mv_system(const struct snapshot *now, const struct health_opts *o, enum health_metric m)
{
	struct mval r = { .st = MV_NA };
	const struct gpu_system *sys = &now->sys;
	switch (m) {
	case HM_DRIVER_LIB_MISMATCH: {
		/* NVML's version is "<cuda>.<driver>" ("12.580.159.04"): it must end in the
		 * kernel driver's version, else user space and kernel module differ. */
		if (sys->nvml_version.st != VAL_OK || sys->driver_version.st != VAL_OK)
			return r;
		size_t ln = strlen(sys->nvml_version.s), ld = strlen(sys->driver_version.s);
		r.st = MV_OK;
		r.v = !(ld > 0 && ln >= ld && strcmp(sys->nvml_version.s + ln - ld, sys->driver_version.s) == 0);
		snprintf(r.where, sizeof(r.where), "NVML %.24s, driver %.24s", sys->nvml_version.s,
			 sys->driver_version.s);
		return r;
	}
	case HM_CUDA_TOO_OLD: {
		if (!o || o->cuda_required == 0 || sys->cuda_driver_version.st != VAL_OK)
			return r;
		/* the comparison submit --image makes against an image's CUDA (cudaver.h) */
		unsigned have;
		char err[128], need[16];
		if (cudaver_parse(sys->cuda_driver_version.s, &have, err, sizeof(err))) {
			r.st = MV_ERROR;
			return r;
		}
		r.st = MV_OK;
		r.v = !cudaver_ok(have, o->cuda_required);
		cudaver_format(o->cuda_required, need, sizeof(need));
		snprintf(r.where, sizeof(r.where), "driver supports CUDA %.16s, need %s", sys->cuda_driver_version.s, need);
		return r;
	}
	case HM_FABRIC_MANAGER_DOWN:
		return mv_flag(sys->fabric_manager_running, is_zero);
	default:
		return r;
	}
}

static bool metric_is_system(enum health_metric m)
{
	return m == HM_DRIVER_LIB_MISMATCH || m == HM_CUDA_TOO_OLD || m == HM_FABRIC_MANAGER_DOWN;
}

static struct mval mv_gpu(const struct ctx *c, enum health_metric m)
{
	const struct gpu_sample *s = &c->g->s;
	const struct gpu_rate_base *ps = c->p;
	const struct gpu_static *st = &c->g->st;
	u64v none = { 0 };
	struct mval r = { .st = MV_NA };
	switch (m) {
	case HM_ECC_VOL_UNCORRECTED: return mv_u64(s->ecc_vol_uncorrected);
	case HM_ECC_VOL_CORRECTED_RATE: return mv_rate(c, s->ecc_vol_corrected, ps ? ps->ecc_vol_corrected : none, 1.0);
	case HM_ECC_MODE_OFF: return mv_flag(st->ecc_mode, is_zero);
	case HM_ECC_MODE_PENDING: {
		r = mv_diff(st->ecc_mode_pending, st->ecc_mode, 1.0);
		if (r.st == MV_OK)
			r.v = r.v != 0;
		return r;
	}
	case HM_RETIRED_PAGES: {
		struct mval a = mv_u64(s->retired_pages_sbe), b = mv_u64(s->retired_pages_dbe);
		if (a.st != MV_OK && b.st != MV_OK)
			return a;
		r.st = MV_OK;
		r.v = (a.st == MV_OK ? a.v : 0) + (b.st == MV_OK ? b.v : 0);
		return r;
	}
	case HM_RETIRED_PAGES_PENDING: return mv_flag(s->retired_pages_pending, is_nonzero);
	case HM_REMAP_PENDING: return mv_flag(s->remap_pending, is_nonzero);
	case HM_REMAP_FAILURE: return mv_flag(s->remap_failure, is_nonzero);
	case HM_REMAP_UNCORRECTED: return mv_u64(s->remap_uncorrected);
	case HM_NVLINK_DOWN: return mv_nvlink_down(c);
	case HM_NVLINK_REPLAY_NEW: return mv_nvlink(c, NVL_REPLAY, NVL_NEW);
	case HM_NVLINK_RECOVERY_NEW: return mv_nvlink(c, NVL_RECOVERY, NVL_NEW);
	case HM_NVLINK_REPLAY_TOTAL: return mv_nvlink(c, NVL_REPLAY, NVL_TOTAL);
	case HM_NVLINK_RECOVERY_TOTAL: return mv_nvlink(c, NVL_RECOVERY, NVL_TOTAL);
	case HM_NVLINK_CRC_RATE: return mv_nvlink(c, NVL_CRC, NVL_WORST_RATE);
	case HM_PCIE_REPLAY_BER_RATIO: return mv_pcie_ber(c);
	case HM_PCIE_GEN_DEFICIT: return mv_pcie_gen(c);
	case HM_PCIE_WIDTH_DEFICIT: return mv_pcie_width(c);
	case HM_THERMAL_VIOLATION_RATE: return mv_throttled(c, s->viol_thermal_ns, ps ? ps->viol_thermal_ns : none);
	case HM_THERMAL_SLOWDOWN_ACTIVE: {
		r = mv_u64(s->clock_event_reasons);
		if (r.st == MV_OK) {
			uint64_t e = s->clock_event_reasons.v;
			r.v = (e & (CLK_EVT_HW_THERMAL | CLK_EVT_SW_THERMAL | CLK_EVT_HW_SLOWDOWN)) != 0;
			snprintf(r.where, sizeof(r.where), "%s%s%s", e & CLK_EVT_HW_SLOWDOWN ? " HW slowdown" : "",
				 e & CLK_EVT_HW_THERMAL ? " HW thermal" : "", e & CLK_EVT_SW_THERMAL ? " SW thermal" : "");
			memmove(r.where, r.where + (r.where[0] == ' '), strlen(r.where));
		}
		return r;
	}
	case HM_TEMP_OVER_SLOWDOWN:
		r = mv_diff(s->temp_c, s->temp_slowdown_c, 1.0);
		if (r.st == MV_OK)
			snprintf(r.where, sizeof(r.where), "%llu C, slowdown at %llu C", (unsigned long long)s->temp_c.v,
				 (unsigned long long)s->temp_slowdown_c.v);
		return r;
	case HM_POWER_VIOLATION_RATE: return mv_throttled(c, s->viol_power_ns, ps ? ps->viol_power_ns : none);
	case HM_POWER_BRAKE_ACTIVE: {
		r = mv_u64(s->clock_event_reasons);
		if (r.st == MV_OK)
			r.v = (s->clock_event_reasons.v & CLK_EVT_HW_POWER_BRAKE) != 0;
		return r;
	}
	case HM_POWER_LIMIT_LOWERED: {
		u64v cur = VAL_HAS(st->power_limit_mw) ? st->power_limit_mw : s->power_limit_mw;
		return mv_diff(st->power_default_limit_mw, cur, 1e-3);
	}
	case HM_PERSISTENCE_OFF: return mv_flag(st->persistence_mode, is_zero);
	case HM_MIG_MODE_PENDING: {
		r = mv_diff(st->mig_mode_pending, st->mig_mode, 1.0);
		if (r.st == MV_OK)
			r.v = r.v != 0;
		return r;
	}
	case HM_COMPUTE_PROHIBITED: return mv_flag(st->compute_mode, is_prohibited);
	case HM_FOREIGN_PROCESSES: return mv_foreign(c);
	case HM_ALLOCATED_SM_ACTIVE: return mv_allocated_sm(c);
	default: return r;
	}
}

static bool compare(double v, enum health_op op, double t)
{
	switch (op) {
	case HOP_GT: return v > t;
	case HOP_GE: return v >= t;
	case HOP_LT: return v < t;
	case HOP_LE: return v <= t;
	case HOP_EQ: return v == t;
	case HOP_NE: return v != t;
	}
	return false;
}

/* A number for people: whole numbers as they are, others with three
 * significant digits but never an exponent from 1e-3 to 1e15 (1000.4 ms/s
 * is "1000", not "1e+03"; 2.345 is "2.35"; 0.0123 is "0.0123"). */
static void fmt_num(char *buf, size_t len, double v)
{
	double a = fabs(v);
	if (a < 1e15 && (v == floor(v) || a >= 100))
		snprintf(buf, len, "%.0f", v);
	else if (a >= 10 && a < 100)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.3g", v);
}

/* Adds a finding; one per metric: a worse verdict on the same metric (CRC
 * >= 100/s FAIL over >= 1/s WARN) replaces the milder one. */
static void add_finding(struct health_entity *e, const struct health_finding *f)
{
	for (unsigned i = 0; i < e->nfind; i++) {
		struct health_finding *old = &e->find[i];
		if (old->metric != f->metric || f->metric == HM_XID)
			continue;
		if (f->verdict > old->verdict || (f->verdict == old->verdict && f->action > old->action))
			*old = *f;
		return;
	}
	if (e->nfind >= HEALTH_MAX_FINDINGS) {
		e->truncated = true;
		return;
	}
	e->find[e->nfind++] = *f;
}

static void rule_finding(struct health_entity *e, const struct health_rule *ru, const struct mval *v)
{
	struct health_finding f = { .subsys = ru->subsys, .verdict = ru->verdict, .action = ru->action,
				    .metric = ru->metric };
	char val[32], thr[32];
	fmt_num(val, sizeof(val), v->v);
	fmt_num(thr, sizeof(thr), ru->threshold);
	const char *unit = health_metric_unit(ru->metric);
	snprintf(f.rule_id, sizeof(f.rule_id), "%s", ru->id);
	snprintf(f.reason, sizeof(f.reason), "%s", ru->reason);
	snprintf(f.hint, sizeof(f.hint), "%s", ru->hint);
	snprintf(f.evidence, sizeof(f.evidence), "%s = %s%s%s%s%s%s (rule: %s %s)", health_metric_name(ru->metric), val,
		 *unit ? " " : "", unit, v->where[0] ? " [" : "", v->where, v->where[0] ? "]" : "",
		 health_op_name(ru->op), thr);
	add_finding(e, &f);
}

static void xid_findings(struct health_entity *e, const struct health_rules *r, const struct health_rule *ru,
			 const struct gpu_view *g)
{
	unsigned n = g->nxid < 32 ? g->nxid : 32;
	for (unsigned i = 0; i < n; i++) {
		if (g->xid[i].count == 0)
			continue;
		const struct health_xid *x = health_xid_find(r, g->xid[i].code);
		struct health_finding f = { .subsys = HS_XID, .verdict = x->verdict, .action = x->action,
					    .metric = HM_XID };
		snprintf(f.rule_id, sizeof(f.rule_id), "%s", ru->id);
		snprintf(f.reason, sizeof(f.reason), "XID %llu %.40s: %.100s", (unsigned long long)g->xid[i].code, x->name,
			 x->meaning);
		snprintf(f.evidence, sizeof(f.evidence), "xid %llu seen %llu time%s", (unsigned long long)g->xid[i].code,
			 (unsigned long long)g->xid[i].count, g->xid[i].count == 1 ? "" : "s");
		snprintf(f.hint, sizeof(f.hint), "%s", ru->hint);
		add_finding(e, &f);
	}
}

/* Applies one rule to one entity; counts it as checked or skipped. */
static void apply(struct health_entity *e, const struct health_rules *r, const struct health_rule *ru,
		  const struct mval *v, const struct gpu_view *g, bool xids_unknown)
{
	if (ru->metric == HM_XID) {
		if (xids_unknown) {
			e->skipped++;
			return;
		}
		e->checked[ru->subsys]++;
		if (e->sub[ru->subsys] < HEALTH_PASS)
			e->sub[ru->subsys] = HEALTH_PASS;
		xid_findings(e, r, ru, g);
		return;
	}
	if (v->st != MV_OK) {
		e->skipped++;
		return;
	}
	e->checked[ru->subsys]++;
	if (e->sub[ru->subsys] < HEALTH_PASS)
		e->sub[ru->subsys] = HEALTH_PASS;
	if (compare(v->v, ru->op, ru->threshold))
		rule_finding(e, ru, v);
}

static void finish(struct health_entity *e)
{
	e->verdict = HEALTH_NA;
	e->action = HEALTH_ACT_NONE;
	for (unsigned i = 0; i < e->nfind; i++) {
		const struct health_finding *f = &e->find[i];
		if (f->verdict > e->sub[f->subsys])
			e->sub[f->subsys] = f->verdict;
		if (f->verdict >= HEALTH_WARN && f->action > e->action)
			e->action = f->action;
	}
	for (unsigned s = 0; s < HS_COUNT; s++)
		if (e->sub[s] > e->verdict)
			e->verdict = e->sub[s];
}

/* The reading GPU i's rates start from (c->p) and the seconds since (c->dt_s):
 * every rate metric reads a slow-group counter, which a sampler may read only
 * every few ticks, so the two readings are those sampler_rate_base names. */
static void rate_base_of(struct ctx *c, const struct snapshot *prev, unsigned i)
{
	const struct gpu_view *g = c->g, *pv = prev && i < prev->n ? &prev->gpu[i] : NULL;
	if (!g->s.timestamp_ns && pv && pv->up && !pv->s.lost && !pv->s.timestamp_ns) {
		/* samples without their time (made by hand): the snapshots' times */
		gpu_rate_base_set(&c->p_room, &pv->s);
		c->p = prev->taken_ns < c->now->taken_ns ? &c->p_room : NULL;
		c->dt_s = c->p ? (double)(c->now->taken_ns - prev->taken_ns) / 1e9 : 0;
		c->nvl_n = c->p ? (int)(pv->s.nvlink_n < GPU_MAX_NVLINKS ? pv->s.nvlink_n : GPU_MAX_NVLINKS) : -1;
		for (int l = 0; l < c->nvl_n; l++)
			c->nvl_base[l] = nvl_counts(&pv->s.nvlink[l]);
		c->nvl_dt_s = c->dt_s;
		return;
	}
	c->p = sampler_rate_base(g, pv, &c->p_room, &c->dt_s);
	c->nvl_n = sampler_nvlink_err_base(g, pv, c->nvl_base, &c->nvl_dt_s);
}

static void eval_gpu(const struct health_rules *r, const struct snapshot *now, const struct snapshot *prev,
		     const struct health_opts *opts, unsigned i, struct health_entity *e)
{
	const struct gpu_view *g = &now->gpu[i];
	struct ctx c = { .now = now, .g = g, .index = i, .opts = opts };
	bool lost = g->s.lost || !g->up;
	rate_base_of(&c, prev, i);
	e->index = (int)i;
	for (unsigned k = 0; k < r->nrules; k++) {
		const struct health_rule *ru = &r->rules[k];
		if (metric_is_system(ru->metric))
			continue;
		struct mval v = { .st = MV_ERROR };
		if (ru->metric == HM_GPU_LOST) {
			v.st = MV_OK;
			v.v = lost;
			if (lost)
				snprintf(v.where, sizeof(v.where), "%.60s", g->last_error[0] ? g->last_error : "no answer");
		} else if (!lost) {
			v = mv_gpu(&c, ru->metric);
		}
		/* a lost GPU's other values are stale: every other rule is skipped, but
		 * the XIDs (events, not readings of the GPU) still count */
		if (lost && ru->metric != HM_GPU_LOST && ru->metric != HM_XID) {
			e->skipped++;
			continue;
		}
		apply(e, r, ru, &v, g, opts && opts->xids_unknown);
	}
	finish(e);
}

static void clear_entity(struct health_entity *e)
{
	memset(e, 0, offsetof(struct health_entity, find));
}

int health_evaluate(const struct health_rules *r, const struct snapshot *now, const struct snapshot *prev,
		    const struct health_opts *opts, struct health_report *out, char *err, size_t errlen)
{
	if (!r || !now || !out) {
		snprintf(err, errlen, "health_evaluate: missing argument");
		return -1;
	}
	if (now->n > GPU_MAX_GPUS) {
		snprintf(err, errlen, "snapshot holds %u GPUs, at most %d", now->n, GPU_MAX_GPUS);
		return -1;
	}
	/* clear only what this snapshot fills: the report is sized for
	 * GPU_MAX_GPUS entries of HEALTH_MAX_FINDINGS findings (~850 KB), readers
	 * stop at out->n and at each entry's nfind, and a finding is written whole
	 * when it is added. Clearing the findings too touched all 850 KB at every
	 * tick of the agent (13 KB a GPU). */
	memset(out, 0, offsetof(struct health_report, system));
	clear_entity(&out->system);
	for (unsigned i = 0; i < now->n; i++)
		clear_entity(&out->gpu[i]);
	out->simulated = now->sys.simulated;
	out->taken_ns = now->taken_ns;
	out->window_ns = prev && now->taken_ns > prev->taken_ns ? now->taken_ns - prev->taken_ns : 0;
	out->n = now->n;
	out->system.index = -1;
	for (unsigned k = 0; k < r->nrules; k++) {
		const struct health_rule *ru = &r->rules[k];
		if (!metric_is_system(ru->metric))
			continue;
		struct mval v = mv_system(now, opts, ru->metric);
		apply(&out->system, r, ru, &v, NULL, true);
	}
	finish(&out->system);
	out->verdict = out->system.verdict;
	out->action = out->system.action;
	for (unsigned i = 0; i < now->n; i++) {
		eval_gpu(r, now, prev, opts, i, &out->gpu[i]);
		if (out->gpu[i].verdict > out->verdict)
			out->verdict = out->gpu[i].verdict;
		if (out->gpu[i].action > out->action)
			out->action = out->gpu[i].action;
	}
	return 0;
}

enum health_verdict health_gpu_verdict(const struct health_report *rep, unsigned gpu)
{
	if (gpu >= rep->n)
		return HEALTH_NA;
	enum health_verdict v = rep->gpu[gpu].verdict;
	return rep->system.verdict > v ? rep->system.verdict : v;
}

enum health_action health_gpu_action(const struct health_report *rep, unsigned gpu)
{
	if (gpu >= rep->n)
		return HEALTH_ACT_NONE;
	enum health_action a = rep->gpu[gpu].action;
	return rep->system.action > a ? rep->system.action : a;
}
