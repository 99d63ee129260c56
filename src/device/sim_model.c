/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sim_model.c - what a simulated GPU reports at a given time.
 *
 * Everything here is a pure function of the server description, the fault
 * table, the seed and t = now - t0 (seconds since the backend opened), so a
 * test that controls the backend clock gets the same numbers every run.
 *
 * The load schedule is a step function of t (repeating when load_period_s is
 * set). From it: utilization and clocks follow the load at once; temperature
 * follows it through a first-order lag (tau 40 s); power is linear in
 * utilization between the idle draw and 92 % of the limit; energy and the
 * NVLink/PCIe byte counters are integrals of the same step function, computed
 * exactly. Faults override or add to these (see sim.h). Called with the
 * backend lock held.
 */
#include "sim_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define TEMP_TAU_S 40.0
#define MIB (1024ull * 1024ull)
#define BASE_MEM_USED (4 * MIB) /* what the driver holds on an idle GPU */

enum noise_channel { N_UTIL = 1, N_POWER, N_TEMP, N_PCIE_TX, N_PCIE_RX, N_POWER_INSTANT };

static double secs(const struct sim_state *st, uint64_t now_ns)
{
	if (st->frozen)
		return st->frozen_s;
	return now_ns > st->t0_ns ? (double)(now_ns - st->t0_ns) / 1e9 : 0.0;
}

/* Uniform in [-1, 1], fixed for a (seed, gpu, channel, whole second). */
static double noise(const struct sim_state *st, unsigned gpu, enum noise_channel ch, double t)
{
	uint64_t h = sim_hash(st->seed, gpu, (uint64_t)ch, (uint64_t)t);
	return (double)(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* ---- the load schedule ---- */

static double util_at(const struct sim_gpu_desc *g, double t)
{
	if (g->load_period_s > 0)
		t = fmod(t, g->load_period_s);
	double u = 0;
	for (unsigned i = 0; i < g->nload && g->load[i].t_s <= t; i++)
		u = g->load[i].util_pct;
	return u;
}

static double f_util(double u) { return u; }
static double f_idle(double u) { return u < 1.0 ? 1.0 : 0.0; }

/* Integral of f(util) over [0, x] of the schedule's first period. */
static double first_period_integral(const struct sim_gpu_desc *g, double x, double (*f)(double))
{
	double acc = 0, prev_t = 0, prev_u = 0;
	for (unsigned i = 0; i < g->nload && g->load[i].t_s < x; i++) {
		acc += f(prev_u) * (g->load[i].t_s - prev_t);
		prev_t = g->load[i].t_s;
		prev_u = g->load[i].util_pct;
	}
	return acc + f(prev_u) * (x - prev_t);
}

/* Integral of f(util) over [0, t]: whole periods, then the rest. */
static double load_integral(const struct sim_gpu_desc *g, double t, double (*f)(double))
{
	if (g->load_period_s <= 0)
		return first_period_integral(g, t, f);
	double n = floor(t / g->load_period_s);
	return n * first_period_integral(g, g->load_period_s, f) +
	       first_period_integral(g, t - n * g->load_period_s, f);
}

/* The next time after `cur` at which the schedule changes (or `limit`). */
static double next_change(const struct sim_gpu_desc *g, double cur, double limit)
{
	double base = 0, phase = cur;
	if (g->load_period_s > 0) {
		base = floor(cur / g->load_period_s) * g->load_period_s;
		phase = cur - base;
	}
	for (unsigned i = 0; i < g->nload; i++)
		if (g->load[i].t_s > phase)
			return fmin(base + g->load[i].t_s, limit);
	if (g->load_period_s > 0)
		return fmin(base + g->load_period_s, limit);
	return limit;
}

/* Utilization seen through the thermal lag: an exponential filter over the
 * last 5 tau (the GPU is taken as settled before that). */
static double lagged_util(const struct sim_gpu_desc *g, double t)
{
	double cur = fmax(0.0, t - 5 * TEMP_TAU_S);
	double y = util_at(g, cur);
	for (int guard = 0; cur < t && guard < 100000; guard++) {
		double next = next_change(g, cur, t);
		if (next <= cur)
			next = fmin(cur + 1e-3, t);
		double u = util_at(g, cur);
		y = u + (y - u) * exp(-(next - cur) / TEMP_TAU_S);
		cur = next;
	}
	return y;
}

/* ---- faults ---- */

static bool sim_fault_active(const struct sim_fault_rec *r, uint64_t now_ns)
{
	return now_ns >= r->start_ns && now_ns < r->end_ns;
}

const struct sim_fault_rec *sim_find_active(const struct sim_state *st, unsigned gpu, enum sim_fault_kind kind,
					    uint64_t now_ns)
{
	for (unsigned i = 0; i < st->nfaults; i++) {
		const struct sim_fault_rec *r = &st->faults[i];
		if (r->f.gpu == gpu && r->f.kind == kind && sim_fault_active(r, now_ns))
			return r;
	}
	return NULL;
}

/* Seconds the fault has been active up to now. */
static double active_secs(const struct sim_fault_rec *r, uint64_t now_ns)
{
	uint64_t end = now_ns < r->end_ns ? now_ns : r->end_ns;
	return end > r->start_ns ? (double)(end - r->start_ns) / 1e9 : 0.0;
}

/* Sum of one parameter over the faults of a kind that have started. */
static uint64_t started_sum(const struct sim_state *st, unsigned gpu, enum sim_fault_kind kind, uint64_t now_ns,
			    uint64_t (*param)(const struct sim_fault_rec *, uint64_t))
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < st->nfaults; i++) {
		const struct sim_fault_rec *r = &st->faults[i];
		if (r->f.gpu == gpu && r->f.kind == kind && now_ns >= r->start_ns)
			sum += param(r, now_ns);
	}
	return sum;
}

static uint64_t p_one(const struct sim_fault_rec *r, uint64_t now_ns) { (void)r; (void)now_ns; return 1; }
/* An error count: its step at the start ("count", 1 when not given), then
 * "rate_per_s" more every second while it is active (a counter that keeps
 * growing, whose rate a window sees whenever it starts). */
static uint64_t p_count(const struct sim_fault_rec *r, uint64_t now_ns)
{
	return (r->f.count ? r->f.count : 1) + (uint64_t)(r->f.rate_per_s * active_secs(r, now_ns));
}
static uint64_t p_sbe(const struct sim_fault_rec *r, uint64_t now_ns) { (void)now_ns; return r->f.sbe; }
static uint64_t p_dbe(const struct sim_fault_rec *r, uint64_t now_ns) { (void)now_ns; return r->f.dbe; }
static uint64_t p_dram(const struct sim_fault_rec *r, uint64_t now_ns)
{
	return r->f.location == SIM_LOC_DRAM ? p_count(r, now_ns) : 0;
}
static uint64_t p_sram(const struct sim_fault_rec *r, uint64_t now_ns)
{
	return r->f.location == SIM_LOC_SRAM ? p_count(r, now_ns) : 0;
}

/* Nanoseconds faults of a kind have been active (the violation counters). */
static uint64_t active_ns(const struct sim_state *st, unsigned gpu, enum sim_fault_kind kind, uint64_t now_ns)
{
	double s = 0;
	for (unsigned i = 0; i < st->nfaults; i++)
		if (st->faults[i].f.gpu == gpu && st->faults[i].f.kind == kind)
			s += active_secs(&st->faults[i], now_ns);
	return (uint64_t)(s * 1e9);
}

static bool link_matches(const struct sim_fault *f, unsigned link)
{
	return f->link < 0 || (unsigned)f->link == link;
}

static bool nvlink_down(const struct sim_state *st, unsigned gpu, unsigned link, uint64_t now_ns)
{
	for (unsigned i = 0; i < st->nfaults; i++) {
		const struct sim_fault_rec *r = &st->faults[i];
		if (r->f.gpu == gpu && r->f.kind == SIM_FAULT_NVLINK_DOWN && link_matches(&r->f, link) &&
		    sim_fault_active(r, now_ns))
			return true;
	}
	return false;
}

/* ---- system and static facts ---- */

void sim_model_system(const struct sim_state *st, struct gpu_system *out)
{
	const struct sim_server *srv = st->srv;
	memset(out, 0, sizeof(*out));
	out->simulated = true;
	snprintf(out->backend, sizeof(out->backend), "sim");
	snprintf(out->server_name, sizeof(out->server_name), "%s", srv->name);
	snprintf(out->hostname.s, sizeof(out->hostname.s), "%s", srv->hostname);
	out->hostname.st = VAL_OK;
	snprintf(out->driver_version.s, sizeof(out->driver_version.s), "%s", srv->driver);
	out->driver_version.st = VAL_OK;
	snprintf(out->cuda_driver_version.s, sizeof(out->cuda_driver_version.s), "%s", srv->cuda);
	out->cuda_driver_version.st = VAL_OK;
	snprintf(out->nvml_version.s, sizeof(out->nvml_version.s), "%s", srv->nvml);
	out->nvml_version.st = VAL_OK;
	if (srv->nswitch)
		VAL_SET(out->fabric_manager_running, srv->fabric_manager == SIM_NO ? 0 : 1);
	else
		VAL_MARK(out->fabric_manager_running, VAL_UNSUPPORTED);
	out->gpu_count = st->ngpu;
}

static void set_str(strv *v, const char *s)
{
	snprintf(v->s, sizeof(v->s), "%s", s);
	v->st = VAL_OK;
}

static void set_busid(busidv *v, const char *s)
{
	snprintf(v->s, sizeof(v->s), "%s", s);
	v->st = VAL_OK;
}

static void set_u64_or(u64v *v, bool supported, uint64_t value)
{
	if (supported)
		VAL_SET(*v, value);
	else
		VAL_MARK(*v, VAL_UNSUPPORTED);
}

void sim_model_static(const struct sim_state *st, unsigned gpu, uint64_t now_ns, struct gpu_static *out)
{
	const struct sim_gpu *g = &st->gpu[gpu];
	const struct sim_gpu_desc *d = g->d;
	const struct cat_gpu *c = g->cat;
	memset(out, 0, sizeof(*out));
	out->index = gpu;
	set_str(&out->name, c->vendor_name);
	set_str(&out->uuid, d->uuid);
	set_str(&out->pci_bus_id, d->bus_id);
	if (g->caps.geforce) /* consumer boards report no serial or part number */
		VAL_MARK(out->serial, VAL_UNSUPPORTED);
	else
		set_str(&out->serial, d->serial);
	if (d->vbios[0])
		set_str(&out->vbios_version, d->vbios);
	else {
		char vbios[32];
		snprintf(vbios, sizeof(vbios), "%02u.00.%02X.00.01", (c->cc_major * 10 + c->cc_minor) % 100,
			 (unsigned)(sim_hash(st->seed, gpu, 9, 9) & 0xff));
		set_str(&out->vbios_version, vbios);
	}
	if (d->board_part[0] && !g->caps.geforce)
		set_str(&out->board_part_number, d->board_part);
	else
		VAL_MARK(out->board_part_number, VAL_UNSUPPORTED);
	set_str(&out->architecture, c->architecture);
	VAL_SET(out->cc_major, c->cc_major);
	VAL_SET(out->cc_minor, c->cc_minor);
	set_u64_or(&out->sm_count, c->sm_count > 0, c->sm_count);
	set_u64_or(&out->cuda_cores, c->cuda_cores > 0, c->cuda_cores);
	VAL_SET(out->mem_total_bytes, c->mem_bytes);
	set_u64_or(&out->mem_bus_width_bits, c->mem_bus_width_bits > 0, c->mem_bus_width_bits);
	set_u64_or(&out->max_sm_clock_mhz, c->max_sm_clock_mhz > 0, c->max_sm_clock_mhz);
	set_u64_or(&out->max_mem_clock_mhz, c->max_mem_clock_mhz > 0, c->max_mem_clock_mhz);
	uint64_t tdp_mw = (uint64_t)((c->tdp_w > 0 ? c->tdp_w : 300) * 1000.0 + 0.5);
	VAL_SET(out->power_limit_mw, g->power_limit_mw);
	VAL_SET(out->power_default_limit_mw, tdp_mw);
	VAL_SET(out->power_max_limit_mw, tdp_mw > g->power_limit_mw ? tdp_mw : g->power_limit_mw);
	bool persistence = d->persistence != SIM_NO && !sim_find_active(st, gpu, SIM_FAULT_PERSISTENCE_OFF, now_ns);
	VAL_SET(out->persistence_mode, persistence ? 1 : 0);
	VAL_SET(out->compute_mode, COMPUTE_DEFAULT);
	set_u64_or(&out->ecc_mode, g->caps.ecc_supported, g->caps.ecc_on);
	set_u64_or(&out->ecc_mode_pending, g->caps.ecc_supported, g->caps.ecc_on);
	set_u64_or(&out->mig_mode, g->caps.mig_capable, g->caps.mig_on);
	set_u64_or(&out->mig_mode_pending, g->caps.mig_capable, g->caps.mig_on);
	VAL_SET(out->pcie_gen_max, c->pcie_gen);
	VAL_SET(out->pcie_width_max, c->pcie_width);
	set_u64_or(&out->nvlink_count, g->caps.nvlinks > 0, g->caps.nvlinks);
	const struct sim_server *srv = st->srv;
	out->numa_node.v = d->numa_node;
	out->numa_node.st = VAL_OK;
	out->cpu_affinity.st = VAL_UNSUPPORTED;
	for (unsigned i = 0; i < srv->nnuma; i++)
		if (srv->numa[i].id == d->numa_node)
			set_str(&out->cpu_affinity, srv->numa[i].cpus);
	set_str(&out->catalog_model, c->key);
}

/* ---- processes ---- */

/* Memory of the file's processes at time t: leakers grow until the GPU is full. */
static void proc_mem(const struct sim_state *st, unsigned gpu, double t, uint64_t *mem, unsigned n)
{
	const struct sim_gpu_desc *d = st->gpu[gpu].d;
	uint64_t total = st->gpu[gpu].cat->mem_bytes, fixed = BASE_MEM_USED;
	for (unsigned i = 0; i < n; i++)
		fixed += d->procs[i].mem_bytes;
	uint64_t room = total > fixed ? total - fixed : 0;
	for (unsigned i = 0; i < n; i++) {
		double grow = d->procs[i].leak_bytes_per_s * t;
		uint64_t g = grow > (double)room ? room : (uint64_t)grow;
		room -= g;
		mem[i] = d->procs[i].mem_bytes + g;
	}
}

/* A process outside the pool (fault foreign_process) on this GPU now. */
static bool foreign_on(const struct sim_fault_rec *r, unsigned gpu, uint64_t now_ns)
{
	return r->f.gpu == gpu && r->f.kind == SIM_FAULT_FOREIGN_PROCESS && sim_fault_active(r, now_ns);
}

static uint64_t foreign_mem(const struct sim_fault_rec *r)
{
	return r->f.mem_bytes ? r->f.mem_bytes : 1024 * MIB;
}

unsigned sim_model_processes(const struct sim_state *st, unsigned gpu, uint64_t now_ns, struct gpu_process *out,
			     unsigned max)
{
	const struct sim_gpu_desc *d = st->gpu[gpu].d;
	uint64_t mem[SIM_MAX_PROCS];
	proc_mem(st, gpu, secs(st, now_ns), mem, d->nproc);
	unsigned n = 0;
	for (unsigned i = 0; i < d->nproc && n < max; i++, n++) {
		const struct sim_proc_desc *p = &d->procs[i];
		struct gpu_process *o = &out[n];
		memset(o, 0, sizeof(*o));
		o->pid = p->pid;
		o->uid = p->uid;
		snprintf(o->name, sizeof(o->name), "%s", p->name);
		snprintf(o->user, sizeof(o->user), "%s", p->user);
		VAL_SET(o->used_mem_bytes, mem[i]);
		o->type = p->type;
		o->mig_gi = p->mig_gi;
	}
	for (unsigned i = 0; i < st->nfaults && n < max; i++) {
		const struct sim_fault_rec *r = &st->faults[i];
		if (!foreign_on(r, gpu, now_ns))
			continue;
		struct gpu_process *o = &out[n++];
		memset(o, 0, sizeof(*o));
		o->pid = r->f.pid ? r->f.pid : 4000000 + gpu;
		o->uid = UINT32_MAX;
		snprintf(o->name, sizeof(o->name), "%s", r->f.name[0] ? r->f.name : "foreign");
		snprintf(o->user, sizeof(o->user), "%s", r->f.user[0] ? r->f.user : "nobody");
		VAL_SET(o->used_mem_bytes, foreign_mem(r));
		o->type = 'C';
		o->mig_gi = -1;
	}
	return n;
}

/* The memory the processes of sim_model_processes() hold, summed without
 * building their list (an 8 KiB array on each sampler thread's stack made 0.5
 * MiB of the agent's resident memory at 64 GPUs). */
static uint64_t mem_used(const struct sim_state *st, unsigned gpu, uint64_t now_ns)
{
	const struct sim_gpu_desc *d = st->gpu[gpu].d;
	uint64_t mem[SIM_MAX_PROCS];
	proc_mem(st, gpu, secs(st, now_ns), mem, d->nproc);
	uint64_t used = BASE_MEM_USED, total = st->gpu[gpu].cat->mem_bytes;
	unsigned n = 0;
	for (unsigned i = 0; i < d->nproc && n < GPU_MAX_PROCS; i++, n++)
		used += mem[i];
	for (unsigned i = 0; i < st->nfaults && n < GPU_MAX_PROCS; i++) {
		if (foreign_on(&st->faults[i], gpu, now_ns)) {
			used += foreign_mem(&st->faults[i]);
			n++;
		}
	}
	return used < total ? used : total;
}

/* ---- sampling: the field table's rows ---- */

/* What one sample's fields are made of: the time, and what several fields
 * share (the load, the faults in force, temperature and power, the link). */
struct sim_tick {
	const struct sim_state *st;
	const struct sim_gpu *g;
	unsigned gpu;
	double t;
	uint64_t now_ns;
	/* the basic group's */
	double load, util, temp, watts;
	uint64_t mem_used;
	const struct sim_fault_rec *thermal, *power;
	/* the PCIe group's: the link as trained now */
	unsigned pcie_gen, pcie_width;
};

static void tick_basic(struct sim_tick *k)
{
	const struct sim_gpu *g = k->g;
	k->load = util_at(g->d, k->t);
	k->thermal = sim_find_active(k->st, k->gpu, SIM_FAULT_THERMAL, k->now_ns);
	k->power = sim_find_active(k->st, k->gpu, SIM_FAULT_POWER, k->now_ns);
	k->util = k->load > 0 ? fmin(100, fmax(1, k->load + 2 * noise(k->st, k->gpu, N_UTIL, k->t))) : 0;
	k->mem_used = mem_used(k->st, k->gpu, k->now_ns);

	double temp = g->idle_temp_c + (g->load_temp_c - g->idle_temp_c) * lagged_util(g->d, k->t) / 100.0 +
		      0.6 * noise(k->st, k->gpu, N_TEMP, k->t);
	if (k->thermal)
		temp = fmax(temp, k->thermal->f.temp_c ? k->thermal->f.temp_c : g->slowdown_c + 3);
	k->temp = temp;

	double limit_w = (double)g->power_limit_mw / 1000.0;
	double watts = g->idle_w + (0.92 * limit_w - g->idle_w) * k->util / 100.0;
	watts *= 1.0 + 0.01 * noise(k->st, k->gpu, N_POWER, k->t);
	if (k->power)
		watts = limit_w;
	k->watts = fmin(watts, limit_w);
}

static void tick_pcie(struct sim_tick *k)
{
	const struct cat_gpu *c = k->g->cat;
	const struct sim_fault_rec *deg = sim_find_active(k->st, k->gpu, SIM_FAULT_PCIE_DEGRADED, k->now_ns);
	k->pcie_gen = c->pcie_gen;
	k->pcie_width = c->pcie_width;
	if (deg) {
		k->pcie_gen = deg->f.gen ? deg->f.gen : (c->pcie_gen > 1 ? c->pcie_gen - 1 : 1);
		k->pcie_width = deg->f.width ? deg->f.width : c->pcie_width;
	}
}

static u64v val(uint64_t v)
{
	return (u64v){ v, VAL_OK };
}

static u64v val_if(bool supported, uint64_t v)
{
	return supported ? val(v) : (u64v){ 0, VAL_UNSUPPORTED };
}

/* The rows whose sim column is MODEL: sim_<member>. */
static u64v sim_util_gpu_pct(const struct sim_tick *k)
{
	return val_if(!k->g->caps.mig_on, (uint64_t)lround(k->util));
}
static u64v sim_util_mem_pct(const struct sim_tick *k)
{
	return val_if(!k->g->caps.mig_on, (uint64_t)lround(k->util * 0.55));
}
static u64v sim_mem_used_bytes(const struct sim_tick *k)
{
	return val(k->mem_used);
}
static u64v sim_mem_free_bytes(const struct sim_tick *k)
{
	return val(k->g->cat->mem_bytes - k->mem_used);
}
static u64v sim_mem_total_bytes(const struct sim_tick *k)
{
	return val(k->g->cat->mem_bytes);
}
static u64v sim_temp_c(const struct sim_tick *k)
{
	return val((uint64_t)lround(k->temp));
}
static u64v sim_temp_mem_c(const struct sim_tick *k)
{
	return val_if(k->g->caps.hbm, (uint64_t)lround(k->temp + 5));
}
static u64v sim_temp_slowdown_c(const struct sim_tick *k)
{
	return val(k->g->slowdown_c);
}
static u64v sim_temp_shutdown_c(const struct sim_tick *k)
{
	return val(k->g->shutdown_c);
}
static u64v sim_fan_pct(const struct sim_tick *k)
{
	return val_if(k->g->caps.fan, (uint64_t)lround(fmin(100, 30 + 1.2 * fmax(0, k->temp - k->g->idle_temp_c))));
}
static u64v sim_power_mw(const struct sim_tick *k)
{
	return val((uint64_t)lround(k->watts * 1000));
}
/* the instant reading swings around the second's average (a busy GPU more),
 * and may pass the limit for a moment */
static u64v sim_power_instant_mw(const struct sim_tick *k)
{
	double swing = 0.02 + 0.06 * k->util / 100.0;
	return val((uint64_t)lround(k->watts * (1.0 + swing * noise(k->st, k->gpu, N_POWER_INSTANT, k->t)) * 1000));
}
static u64v sim_power_limit_mw(const struct sim_tick *k)
{
	return val(k->g->power_limit_mw);
}
/* Energy since driver load: an hour idle before open, then the schedule. */
static u64v sim_energy_mj(const struct sim_tick *k)
{
	const struct sim_gpu *g = k->g;
	double limit_w = (double)g->power_limit_mw / 1000.0;
	double joules = g->idle_w * (3600.0 + k->t) +
			(0.92 * limit_w - g->idle_w) * load_integral(g->d, k->t, f_util) / 100.0;
	return val((uint64_t)llround(joules * 1000));
}
static u64v sim_sm_clock_mhz(const struct sim_tick *k)
{
	double sm = k->load > 0 ? k->g->cat->max_sm_clock_mhz : (k->g->caps.geforce ? 210 : 345);
	if (k->thermal)
		sm *= 0.55;
	else if (k->power)
		sm *= 0.82;
	return val((uint64_t)lround(sm));
}
static u64v sim_mem_clock_mhz(const struct sim_tick *k)
{
	return val(k->g->caps.geforce && k->load <= 0 ? 405 : k->g->cat->max_mem_clock_mhz);
}
static u64v sim_pstate(const struct sim_tick *k)
{
	return val(k->load > 0 || !k->g->caps.geforce ? 0 : 8);
}
static u64v sim_clock_event_reasons(const struct sim_tick *k)
{
	uint64_t reasons = 0;
	if (k->power)
		reasons |= CLK_EVT_SW_POWER_CAP;
	if (k->thermal)
		reasons |= CLK_EVT_HW_SLOWDOWN | CLK_EVT_HW_THERMAL | CLK_EVT_SW_THERMAL;
	if (!reasons && k->load <= 0)
		reasons = CLK_EVT_GPU_IDLE;
	return val(reasons);
}
static u64v sim_viol_low_util_ns(const struct sim_tick *k)
{
	return val_if(k->g->caps.viol, (uint64_t)(load_integral(k->g->d, k->t, f_idle) * 1e9));
}
static u64v sim_pcie_gen(const struct sim_tick *k)
{
	return val(k->pcie_gen);
}
static u64v sim_pcie_width(const struct sim_tick *k)
{
	return val(k->pcie_width);
}
/* a busy GPU moves a few percent of the link's bandwidth; KiB/s */
static double link_kbps(const struct sim_tick *k)
{
	unsigned gen = k->pcie_gen;
	double lane_kbps = (gen >= 5 ? 3.9e6 : gen == 4 ? 1.95e6 : gen == 3 ? 0.98e6 : 0.49e6) / 16.0;
	return lane_kbps * k->pcie_width;
}
static u64v sim_pcie_tx_kbps(const struct sim_tick *k)
{
	double util = util_at(k->g->d, k->t);
	return val((uint64_t)lround(150 + link_kbps(k) * 0.04 * util / 100.0 *
						  (1 + 0.1 * noise(k->st, k->gpu, N_PCIE_TX, k->t))));
}
static u64v sim_pcie_rx_kbps(const struct sim_tick *k)
{
	double util = util_at(k->g->d, k->t);
	return val((uint64_t)lround(300 + link_kbps(k) * 0.06 * util / 100.0 *
						  (1 + 0.1 * noise(k->st, k->gpu, N_PCIE_RX, k->t))));
}
/* a link trained down retries: one replay every 5 s while degraded */
static u64v sim_pcie_replays(const struct sim_tick *k)
{
	double replays = 0;
	for (unsigned i = 0; i < k->st->nfaults; i++)
		if (k->st->faults[i].f.gpu == k->gpu && k->st->faults[i].f.kind == SIM_FAULT_PCIE_DEGRADED)
			replays += active_secs(&k->st->faults[i], k->now_ns) / 5.0;
	return val((uint64_t)replays);
}
/* the link retrained (left L0 for recovery) once into each degraded state */
static u64v sim_pcie_l0_recoveries(const struct sim_tick *k)
{
	return val(started_sum(k->st, k->gpu, SIM_FAULT_PCIE_DEGRADED, k->now_ns, p_one));
}

static void sample_nvlink(const struct sim_state *st, unsigned gpu, double t, uint64_t now_ns, bool errors,
			  struct gpu_sample *o)
{
	const struct sim_gpu *g = &st->gpu[gpu];
	o->nvlink_n = g->caps.nvlinks;
	/* average traffic: a quarter of one direction's bandwidth at 100 % load */
	double per_dir = g->cat->nvlink_bw_gbs * 1e9 / 2.0 / (g->cat->nvlink_links ? g->cat->nvlink_links : 1);
	double bytes = per_dir * 0.25 * load_integral(g->d, t, f_util) / 100.0;
	for (unsigned k = 0; k < g->caps.nvlinks; k++) {
		struct gpu_nvlink *l = &o->nvlink[k];
		VAL_SET(l->active, nvlink_down(st, gpu, k, now_ns) ? 0 : 1);
		VAL_SET(l->version, g->cat->nvlink_gen);
		if (g->link_peer[k] >= 0)
			set_busid(&l->remote_pci_bus_id, st->gpu[g->link_peer[k]].d->bus_id);
		else if (g->link_switch[k] >= 0)
			set_busid(&l->remote_pci_bus_id, st->srv->switches[g->link_switch[k]]);
		else
			VAL_MARK(l->remote_pci_bus_id, VAL_UNSUPPORTED);
		VAL_SET(l->tx_bytes, (uint64_t)bytes);
		VAL_SET(l->rx_bytes, (uint64_t)(bytes * 0.98));
		if (!errors)
			continue; /* not asked for: left unread */
		double crc = 0, replay = 0, recovery = 0;
		for (unsigned i = 0; i < st->nfaults; i++) {
			const struct sim_fault_rec *r = &st->faults[i];
			if (r->f.gpu != gpu || r->f.kind != SIM_FAULT_NVLINK_ERRORS || !link_matches(&r->f, k))
				continue;
			double rate = r->f.rate_per_s > 0 ? r->f.rate_per_s : 100;
			double s = active_secs(r, now_ns);
			crc += rate * s;
			replay += rate / 10 * s;
			recovery += rate / 100 * s;
		}
		VAL_SET(l->crc_flit_errors, (uint64_t)crc);
		VAL_SET(l->crc_data_errors, (uint64_t)(crc / 4));
		VAL_SET(l->replay_errors, (uint64_t)replay);
		VAL_SET(l->recovery_errors, (uint64_t)recovery);
	}
}

void sim_model_sample(const struct sim_state *st, unsigned gpu, unsigned groups, uint64_t now_ns,
		      struct gpu_sample *out)
{
	struct sim_tick tick = { .st = st, .g = &st->gpu[gpu], .gpu = gpu, .t = secs(st, now_ns), .now_ns = now_ns };
	const struct sim_tick *k = &tick;
	if (groups & (GPU_GRP_BASIC | GPU_GRP_GPM)) /* GPM follows the utilization */
		tick_basic(&tick);
	if (groups & GPU_GRP_PCIE)
		tick_pcie(&tick);
	/* each row of an asked group, by its sim column: SIM_##sim(member)
	 * pastes MODEL into SIM_MODEL(member), and FAULT_SUM(...) into
	 * SIM_FAULT_SUM(...)(member), whose SIM_MEMBER takes the (member) */
#define SIM_ROW(member, group, unit, api_key, role, metric, type, labels, help, series, nvml_read, nvml_field, sim) \
	if (groups & GPU_GRP_##group) \
		out->member = SIM_##sim(member);
#define SIM_MEMBER(member)
#define SIM_MODEL(member) sim_##member(k)
#define SIM_ZERO(cap) val_if(k->g->caps.cap, 0) SIM_MEMBER
#define SIM_FAULT_SUM(cap, kind, param) \
	val_if(k->g->caps.cap, started_sum(st, gpu, SIM_FAULT_##kind, now_ns, p_##param)) SIM_MEMBER
#define SIM_FAULT_TIME(cap, kind) val_if(k->g->caps.cap, active_ns(st, gpu, SIM_FAULT_##kind, now_ns)) SIM_MEMBER
#define SIM_FAULT_ACTIVE(cap, kind) \
	val_if(k->g->caps.cap, sim_find_active(st, gpu, SIM_FAULT_##kind, now_ns) != NULL) SIM_MEMBER
#define SIM_GPM(metric) sim_gpm_value(k->g, k->util, SIM_GPM_##metric) SIM_MEMBER
	GPU_SAMPLE_FIELDS(SIM_ROW)
#undef SIM_ROW
#undef SIM_MEMBER
#undef SIM_MODEL
#undef SIM_ZERO
#undef SIM_FAULT_SUM
#undef SIM_FAULT_TIME
#undef SIM_FAULT_ACTIVE
#undef SIM_GPM
	if (groups & GPU_GRP_NVLINK)
		sample_nvlink(st, gpu, tick.t, now_ns, (groups & GPU_GRP_NVLINK_ERR) != 0, out);
}

/* ---- topology and MIG ---- */

static unsigned active_links(const struct sim_state *st, unsigned gpu, int peer, uint64_t now_ns)
{
	const struct sim_gpu *g = &st->gpu[gpu];
	unsigned n = 0;
	for (unsigned k = 0; k < g->caps.nvlinks; k++)
		if ((peer < 0 || g->link_peer[k] == peer) && !nvlink_down(st, gpu, k, now_ns))
			n++;
	return n;
}

void sim_model_link(const struct sim_state *st, unsigned a, unsigned b, uint64_t now_ns, struct gpu_link *out)
{
	const struct sim_server *srv = st->srv;
	memset(out, 0, sizeof(*out));
	if (a == b) {
		out->kind = out->pcie = LINK_SELF;
		out->p2p_supported = true;
		return;
	}
	enum gpu_link_kind pcie = srv->pcie[a][b];
	if (pcie == LINK_UNKNOWN) {
		int na = st->gpu[a].d->numa_node, nb = st->gpu[b].d->numa_node;
		pcie = na < 0 || nb < 0 ? LINK_PHB : na == nb ? LINK_NODE : LINK_SYS;
	}
	unsigned nv = 0;
	if (srv->nvlinks[a][b]) {
		if (srv->nswitch) {
			/* through the switches: as many as both ends still have up */
			unsigned ua = active_links(st, a, -1, now_ns), ub = active_links(st, b, -1, now_ns);
			nv = ua < ub ? ua : ub;
			if (nv > srv->nvlinks[a][b])
				nv = srv->nvlinks[a][b];
		} else {
			unsigned ua = active_links(st, a, (int)b, now_ns), ub = active_links(st, b, (int)a, now_ns);
			nv = ua < ub ? ua : ub;
		}
	}
	out->nvlinks = nv;
	out->pcie = pcie;
	out->kind = nv ? LINK_NVLINK : pcie;
	out->p2p_supported = nv > 0 || (srv->p2p_pcie && pcie != LINK_SYS);
}

unsigned sim_model_mig(const struct sim_state *st, unsigned gpu, uint64_t now_ns, struct gpu_mig *out, unsigned max)
{
	const struct sim_gpu *g = &st->gpu[gpu];
	struct gpu_process procs[GPU_MAX_PROCS];
	unsigned np = sim_model_processes(st, gpu, now_ns, procs, GPU_MAX_PROCS);
	struct sim_tick tick = { .st = st, .g = g, .gpu = gpu, .t = secs(st, now_ns), .now_ns = now_ns };
	tick_basic(&tick);
	double util = tick.util;
	unsigned n = 0;
	for (unsigned m = 0; m < g->d->nmig && n < max; m++) {
		const struct sim_mig_desc *md = &g->d->mig_inst[m];
		const struct cat_mig_profile *prof = NULL;
		for (unsigned k = 0; k < g->cat->mig_n && !prof; k++)
			if (!strcmp(g->cat->mig[k].name, md->profile))
				prof = &g->cat->mig[k];
		struct gpu_mig *o = &out[n++];
		memset(o, 0, sizeof(*o));
		o->gi_id = md->gi_id;
		o->ci_id = md->ci_id;
		snprintf(o->profile, sizeof(o->profile), "%s", md->profile);
		snprintf(o->uuid, sizeof(o->uuid), "%s", md->uuid);
		/* the driver reports whole MiB, a little under the marketed size */
		uint64_t total = prof ? (uint64_t)(prof->mem_gb * 1e9 * 0.96) / MIB * MIB : 0;
		set_u64_or(&o->mem_total_bytes, total > 0, total);
		uint64_t used = 0;
		for (unsigned i = 0; i < np; i++)
			if (procs[i].mig_gi == (int)md->gi_id)
				used += procs[i].used_mem_bytes.v;
		VAL_SET(o->mem_used_bytes, used);
		/* where the catalog has no published SM count for the profile, a
		 * real GPU still reports one: its share of the SMs, rounded to a pair */
		unsigned sms = prof ? prof->sm_count : 0;
		if (prof && !sms)
			sms = g->cat->sm_count * prof->slices / 7 / 2 * 2;
		set_u64_or(&o->sm_count, sms > 0, sms);
		bool busy = false;
		for (unsigned i = 0; i < np; i++)
			busy |= procs[i].mig_gi == (int)md->gi_id;
		sim_gpm_mig(g, md, util, busy, o);
	}
	return n;
}
