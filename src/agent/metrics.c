/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metrics.c - renders a snapshot as Prometheus text 0.0.4 or OpenMetrics 1.0.
 *
 * Families are written one after the other, each with its samples for every
 * GPU, so a family's samples are contiguous as both formats require. HELP and
 * TYPE are written before a family's first sample; a family with no sample
 * (unsupported everywhere) is left out entirely. Values are printed exactly
 * from the integer fields (milliwatts -> watts with three decimals), never
 * through floating point.
 */
#include "metrics.h"
#include "metrics_dcgm.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The families from the field table (device/gpu_fields.h): one id per FAMILY row. */
#define FIELD_ID_FAMILY(member) M_F_##member,
#define FIELD_ID_SERIES(member)
#define FIELD_ID_NONE(member)
#define FIELD_FAMILY_ID(member, group, unit, api_key, role, ...) FIELD_ID_##role(member)

enum metric_id {
	M_AGENT_INFO, M_AGENT_GPUS, M_AGENT_KLOG, M_AGENT_RENDER, M_AGENT_SIM_FAULT_FILE,
	M_UP, M_SAMPLE_AGE, M_SAMPLE_DURATION, M_SAMPLES, M_SAMPLE_ERRORS, M_INFO,
	GPU_SAMPLE_FIELDS(FIELD_FAMILY_ID)
	M_CLK_EVT_ACTIVE,
	M_POWER_DEFAULT_LIMIT, M_SM_CLOCK_MAX, M_MEM_CLOCK_MAX, M_ECC_MODE, M_PCIE_GEN_MAX, M_PCIE_WIDTH_MAX,
	M_NVLINK_UP, M_NVLINK_ERRORS, M_NVLINK_TX, M_NVLINK_RX,
	M_XID, M_XID_LAST,
	M_PROC_MEM,
	M_MIG_MEM_USED, M_MIG_MEM_TOTAL, M_MIG_SM,
	M_MIG_SM_ACTIVE, M_MIG_SM_OCCUPANCY, M_MIG_TENSOR, M_MIG_DRAM, M_MIG_PIPE,
	M_HEALTH,
	M_PROC_LEAK,
	M_COUNT
};

/* The metric group of a field's sampler group. */
#define MG_OF_BASIC MG_BASIC
#define MG_OF_ENERGY MG_BASIC
#define MG_OF_VIOL MG_THROTTLE
#define MG_OF_ECC MG_ECC
#define MG_OF_PCIE MG_PCIE
#define MG_OF_GPM MG_PROF

#define G(name, grp, lab, help) { name, METRIC_GAUGE, grp, lab, help }
#define C(name, grp, lab, help) { name, METRIC_COUNTER, grp, lab, help }
#define FIELD_DESC_FAMILY(member, group, metric, type, labels, help) \
	[M_F_##member] = { metric, METRIC_##type, MG_OF_##group, labels, help },
#define FIELD_DESC_SERIES(member, group, metric, type, labels, help)
#define FIELD_DESC_NONE(member, group, metric, type, labels, help)
#define FIELD_FAMILY_DESC(member, group, unit, api_key, role, metric, type, labels, help, series, ...) \
	FIELD_DESC_##role(member, group, metric, type, labels, help)

const struct metric_desc metric_table[M_COUNT] = {
	GPU_SAMPLE_FIELDS(FIELD_FAMILY_DESC)
	[M_AGENT_INFO] = G("gpuctl_agent_info", 0, "version, backend, simulated, server",
			   "The agent and the backend it reads (value 1); simulated=\"true\" on a simulated server."),
	[M_AGENT_GPUS] = G("gpuctl_agent_gpus", 0, "", "Number of GPUs the agent watches."),
	[M_AGENT_KLOG] = G("gpuctl_agent_kernel_log_readable", 0, "",
			   "1 if the kernel log (/dev/kmsg) is readable for XID lines, 0 if not."),
	[M_AGENT_RENDER] = G("gpuctl_agent_render_seconds", 0, "",
			     "Time the agent took to render the previous exposition."),
	[M_AGENT_SIM_FAULT_FILE] = G("gpuctl_agent_sim_fault_file_error", 0, "",
				     "Simulated server: 1 if its run-time fault file (faults=) cannot be applied "
				     "(the agent's log and /api/v1/health say why), 0 if not."),
	[M_UP] = G("gpuctl_gpu_up", 0, "", "1 if the GPU's last sample succeeded and is fresh, 0 if it is lost, failing or stale."),
	[M_SAMPLE_AGE] = G("gpuctl_gpu_sample_age_seconds", 0, "", "Age of the GPU's last good sample when the exposition was rendered."),
	[M_SAMPLE_DURATION] = G("gpuctl_gpu_sample_duration_seconds", 0, "", "Time the backend calls of the last good sample took."),
	[M_SAMPLES] = C("gpuctl_gpu_samples_total", 0, "", "Successful samples of the GPU since the agent started."),
	[M_SAMPLE_ERRORS] = C("gpuctl_gpu_sample_errors_total", 0, "", "Failed samples of the GPU since the agent started."),
	[M_INFO] = G("gpuctl_gpu_info", 0, "driver_version, vbios_version, serial, architecture, compute_capability",
		     "Static facts about the GPU (value 1)."),
	[M_POWER_DEFAULT_LIMIT] = G("gpuctl_gpu_power_default_limit_watts", MG_BASIC, "", "Default power limit of the board."),
	[M_SM_CLOCK_MAX] = G("gpuctl_gpu_sm_clock_max_hertz", MG_BASIC, "", "Highest SM clock the GPU supports."),
	[M_MEM_CLOCK_MAX] = G("gpuctl_gpu_memory_clock_max_hertz", MG_BASIC, "", "Highest memory clock the GPU supports."),
	[M_CLK_EVT_ACTIVE] = G("gpuctl_gpu_clock_event_active", MG_BASIC, "reason",
			       "1 if this clock-event (throttle) reason is active now, 0 if not."),
	[M_ECC_MODE] = G("gpuctl_gpu_ecc_enabled", MG_ECC, "", "1 if ECC is enabled, 0 if disabled."),
	[M_PCIE_GEN_MAX] = G("gpuctl_gpu_pcie_link_generation_max", MG_PCIE, "", "Highest PCIe generation the GPU supports."),
	[M_PCIE_WIDTH_MAX] = G("gpuctl_gpu_pcie_link_width_max", MG_PCIE, "", "Widest PCIe link the GPU supports (lanes)."),
	[M_NVLINK_UP] = G("gpuctl_gpu_nvlink_up", MG_NVLINK, "link", "1 if the NVLink is active, 0 if it is down."),
	[M_NVLINK_ERRORS] = C("gpuctl_gpu_nvlink_errors_total", MG_NVLINK, "link, type",
			      "NVLink errors, by type (crc_flit, crc_data, replay, recovery)."),
	[M_NVLINK_TX] = C("gpuctl_gpu_nvlink_transmit_bytes_total", MG_NVLINK, "link", "Bytes sent over the NVLink."),
	[M_NVLINK_RX] = C("gpuctl_gpu_nvlink_receive_bytes_total", MG_NVLINK, "link", "Bytes received over the NVLink."),
	[M_XID] = C("gpuctl_gpu_xid_errors_total", MG_XID, "xid", "XID errors reported by the driver, by XID code, since the agent started."),
	[M_XID_LAST] = G("gpuctl_gpu_xid_last_seen_timestamp_seconds", MG_XID, "xid", "When an XID of this code was last seen (Unix time)."),
	[M_PROC_MEM] = G("gpuctl_gpu_process_memory_used_bytes", MG_PROCESSES, "pid, user, comm",
			 "Device memory used by a process."),
	[M_MIG_MEM_USED] = G("gpuctl_gpu_mig_memory_used_bytes", MG_MIG, "gpu_instance, compute_instance, profile, mig_uuid",
			     "Device memory in use on a MIG instance."),
	[M_MIG_MEM_TOTAL] = G("gpuctl_gpu_mig_memory_total_bytes", MG_MIG, "gpu_instance, compute_instance, profile, mig_uuid",
			      "Device memory of a MIG instance."),
	[M_MIG_SM] = G("gpuctl_gpu_mig_sm_count", MG_MIG, "gpu_instance, compute_instance, profile, mig_uuid",
		       "Streaming multiprocessors of a MIG instance."),
#define MIG_LABELS "gpu_instance, compute_instance, profile, mig_uuid"
	[M_MIG_SM_ACTIVE] = G("gpuctl_gpu_mig_sm_active_ratio", MG_MIG, MIG_LABELS,
			      "SM activity of a MIG instance (0-1; DCGM_FI_PROF_SM_ACTIVE with GPU_I_ID)."),
	[M_MIG_SM_OCCUPANCY] = G("gpuctl_gpu_mig_sm_occupancy_ratio", MG_MIG, MIG_LABELS,
				 "SM occupancy of a MIG instance (0-1; DCGM_FI_PROF_SM_OCCUPANCY with GPU_I_ID)."),
	[M_MIG_TENSOR] = G("gpuctl_gpu_mig_tensor_active_ratio", MG_MIG, MIG_LABELS,
			   "Tensor pipe activity of a MIG instance (0-1; DCGM_FI_PROF_PIPE_TENSOR_ACTIVE with GPU_I_ID)."),
	[M_MIG_DRAM] = G("gpuctl_gpu_mig_dram_active_ratio", MG_MIG, MIG_LABELS,
			 "DRAM activity of a MIG instance (0-1; DCGM_FI_PROF_DRAM_ACTIVE with GPU_I_ID)."),
	[M_MIG_PIPE] = G("gpuctl_gpu_mig_pipe_active_ratio", MG_MIG, MIG_LABELS ", pipe",
			 "FP64/FP32/FP16 pipe activity of a MIG instance (0-1; DCGM_FI_PROF_PIPE_FP*_ACTIVE with GPU_I_ID)."),
#undef MIG_LABELS
	[M_HEALTH] = G("gpuctl_gpu_health_status", MG_HEALTH, "", "Health verdict of the GPU: 0 healthy, 1 warning, 2 failure."),
	[M_PROC_LEAK] = G("gpuctl_process_memory_growth_bytes_per_second", MG_HEALTH, "pid, user, comm",
			  "Growth rate of the device memory of a process the leak watch flags (absent for the others)."),
};

const size_t metric_table_n = M_COUNT;

static const char *const group_names[MG_NGROUPS] = {
#define METRIC_GROUP_NAME(id, name) [MG_INDEX_##id] = #name,
	METRIC_GROUP_TABLE(METRIC_GROUP_NAME)
#undef METRIC_GROUP_NAME
};

unsigned metrics_sampler_groups(unsigned mg)
{
	unsigned g = 0;
	if (mg & MG_BASIC) /* gpuctl_gpu_energy_joules_total and job accounting */
		g |= GPU_GRP_BASIC | GPU_GRP_ENERGY;
	if (mg & MG_ECC)
		g |= GPU_GRP_ECC;
	if (mg & MG_PCIE)
		g |= GPU_GRP_PCIE;
	if (mg & MG_NVLINK)
		g |= GPU_GRP_NVLINK | GPU_GRP_NVLINK_ERR;
	if (mg & MG_THROTTLE)
		g |= GPU_GRP_VIOL;
	if (mg & MG_PROF) /* the profiling metrics (NVML GPM) */
		g |= GPU_GRP_GPM;
	return g; /* processes, mig, xid, health: not sample groups (the sampler's own switches) */
}

void metrics_opts_default(struct metrics_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->groups = MG_ALL;
	o->kernel_log = -1;
	o->sim_fault_file = -1;
}

int metrics_groups_parse(const char *list, unsigned *out, char *err, size_t errlen)
{
	unsigned bits = 0;
	const char *p = list;
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		size_t n = strcspn(p, ", ");
		if (!n)
			break;
		unsigned bit = 0;
		if (n == 3 && strncmp(p, "all", 3) == 0)
			bit = MG_ALL;
		for (unsigned i = 0; !bit && i < MG_NGROUPS; i++)
			if (strlen(group_names[i]) == n && strncmp(p, group_names[i], n) == 0)
				bit = 1u << i;
		if (!bit) {
			int at = snprintf(err, errlen, "unknown metric group '%.*s' (known: all", (int)(n > 64 ? 64 : n), p);
			for (unsigned i = 0; i < MG_NGROUPS && at >= 0 && (size_t)at < errlen; i++)
				at += snprintf(err + at, errlen - (size_t)at, ", %s", group_names[i]);
			if (at >= 0 && (size_t)at < errlen)
				snprintf(err + at, errlen - (size_t)at, ")");
			return -1;
		}
		bits |= bit;
		p += n;
	}
	if (!bits) {
		snprintf(err, errlen, "no metric group named");
		return -1;
	}
	*out = bits;
	return 0;
}

bool metrics_label_name_ok(const char *name)
{
	static const char *const reserved[] = { "gpu", "uuid", "pci_bus_id", "model", "hostname", "reason", "type",
		"location", "cause", "link", "xid", "pid", "user", "comm", "gpu_instance", "compute_instance", "profile",
		"mig_uuid", "version", "backend", "simulated", "server", "driver_version", "vbios_version", "serial",
		"architecture", "compute_capability", "le", "quantile" };
	if (!name[0] || (name[0] == '_' && name[1] == '_'))
		return false;
	for (const char *c = name; *c; c++) {
		bool alpha = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_';
		if (!alpha && !(c != name && *c >= '0' && *c <= '9'))
			return false;
	}
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (strcmp(name, reserved[i]) == 0)
			return false;
	return true;
}

/* ---- rendering ---------------------------------------------------------- */

#define NO_GPU ((unsigned)-1)

struct render {
	struct abuf *b;
	const struct snapshot *snap;
	const struct metrics_opts *o;
	int cur;                         /* family whose header was written last */
	struct abuf lab;                 /* per-GPU label strings, back to back */
	size_t off[GPU_MAX_GPUS + 2];    /* lab offsets: GPU i at [off[i], off[i+1]); the host-only set last */
};

/* A label value: valid UTF-8 (Prometheus rejects a scrape with anything
 * else, and process names are arbitrary bytes), with \\, \" and \n escaped. */
static void put_escaped(struct abuf *b, const char *s)
{
	char clean[256];
	utf8_clean(clean, sizeof(clean), s);
	for (const char *c = clean; *c; c++) {
		if (*c == '\\')
			abuf_put(b, "\\\\", 2);
		else if (*c == '"')
			abuf_put(b, "\\\"", 2);
		else if (*c == '\n')
			abuf_put(b, "\\n", 2);
		else
			abuf_putc(b, *c);
	}
}

void metrics_put_label(struct abuf *b, bool first, const char *key, const char *value)
{
	if (!first)
		abuf_putc(b, ',');
	abuf_puts(b, key);
	abuf_put(b, "=\"", 2);
	put_escaped(b, value);
	abuf_putc(b, '"');
}

const char *metrics_hostname(const struct snapshot *snap, const struct metrics_opts *o)
{
	if (o->hostname)
		return o->hostname;
	return VAL_HAS(snap->sys.hostname) ? snap->sys.hostname.s : snap->sys.server_name;
}

static const char *hostname_of(const struct render *r)
{
	return metrics_hostname(r->snap, r->o);
}

static void build_labels(struct render *r)
{
	const struct snapshot *sn = r->snap;
	char idx[16];
	for (unsigned i = 0; i < sn->n; i++) {
		const struct gpu_static *st = &sn->gpu[i].st;
		r->off[i] = r->lab.len;
		snprintf(idx, sizeof(idx), "%u", i);
		metrics_put_label(&r->lab, true, "gpu", idx);
		metrics_put_label(&r->lab, false, "uuid", VAL_HAS(st->uuid) ? st->uuid.s : "");
		metrics_put_label(&r->lab, false, "pci_bus_id", VAL_HAS(st->pci_bus_id) ? st->pci_bus_id.s : "");
		metrics_put_label(&r->lab, false, "model", VAL_HAS(st->name) ? st->name.s : "");
		metrics_put_label(&r->lab, false, "hostname", hostname_of(r));
		for (unsigned k = 0; k < r->o->nlabels; k++)
			metrics_put_label(&r->lab, false, r->o->labels[k].key, r->o->labels[k].value);
	}
	r->off[sn->n] = r->lab.len;
	metrics_put_label(&r->lab, true, "hostname", hostname_of(r));
	for (unsigned k = 0; k < r->o->nlabels; k++)
		metrics_put_label(&r->lab, false, r->o->labels[k].key, r->o->labels[k].value);
	r->off[sn->n + 1] = r->lab.len;
}

/* The family name: in OpenMetrics a counter's family drops the _total of its samples. */
static size_t family_len(const struct render *r, const struct metric_desc *d)
{
	size_t n = strlen(d->name);
	if (r->o->openmetrics && d->type == METRIC_COUNTER && n > 6 && strcmp(d->name + n - 6, "_total") == 0)
		n -= 6;
	return n;
}

static bool wanted(const struct render *r, enum metric_id id)
{
	unsigned g = metric_table[id].group;
	return g == 0 || (r->o->groups & g);
}

static void head(struct render *r, enum metric_id id)
{
	if (r->cur == (int)id)
		return;
	r->cur = (int)id;
	const struct metric_desc *d = &metric_table[id];
	size_t n = family_len(r, d);
	abuf_puts(r->b, "# HELP ");
	abuf_put(r->b, d->name, n);
	abuf_putc(r->b, ' ');
	abuf_puts(r->b, d->help);
	abuf_puts(r->b, "\n# TYPE ");
	abuf_put(r->b, d->name, n);
	abuf_puts(r->b, d->type == METRIC_COUNTER ? " counter\n" : " gauge\n");
}

/* Writes `name{<gpu labels>` ; the caller adds labels with more() and ends with val(). */
static void open_sample(struct render *r, enum metric_id id, unsigned gpu)
{
	head(r, id);
	abuf_puts(r->b, metric_table[id].name);
	abuf_putc(r->b, '{');
	unsigned k = gpu == NO_GPU ? r->snap->n : gpu;
	abuf_put(r->b, r->lab.p + r->off[k], r->off[k + 1] - r->off[k]);
}

static void more(struct render *r, const char *key, const char *value)
{
	metrics_put_label(r->b, false, key, value);
}

static void val(struct render *r, uint64_t v, unsigned decimals)
{
	abuf_put(r->b, "} ", 2);
	abuf_put_scaled(r->b, v, decimals);
	abuf_putc(r->b, '\n');
}

/* ---- table-driven families: one u64v field a series --------------------- */

enum field_role { ROLE_FAMILY, ROLE_SERIES, ROLE_NONE };

struct field_metric {
	enum metric_id id;    /* the family (ROLE_FAMILY and the static ones) */
	enum field_role role; /* ROLE_SERIES: one more series of the family above */
	bool from_static;     /* field of gpu_static rather than gpu_sample */
	size_t off;
	uint64_t mul;         /* value = field * mul / 10^dec */
	unsigned dec;
	const char *series;   /* its own labels, key="value"[,...], or "" */
};

#define FIELD_ROW_ID_FAMILY(member) M_F_##member
#define FIELD_ROW_ID_SERIES(member) M_COUNT
#define FIELD_ROW_ID_NONE(member) M_COUNT
#define FIELD_ROW(member, group, unit, api_key, role, metric, type, labels, help, series, ...) \
	{ FIELD_ROW_ID_##role(member), ROLE_##role, false, offsetof(struct gpu_sample, member), GPU_UNIT_##unit##_MUL, \
	  GPU_UNIT_##unit##_DEC, series },

/* The field table's rows, in its order (the order of their families in the output). */
static const struct field_metric sample_metrics[] = { GPU_SAMPLE_FIELDS(FIELD_ROW) };

#define ST(id, field, mul, dec) { id, ROLE_FAMILY, true, offsetof(struct gpu_static, field), mul, dec, "" }

/* Facts of gpu_static exported beside the samples: a family each. */
static const struct field_metric static_metrics[] = {
	ST(M_POWER_DEFAULT_LIMIT, power_default_limit_mw, 1, 3),
	ST(M_SM_CLOCK_MAX, max_sm_clock_mhz, 1000000, 0),
	ST(M_MEM_CLOCK_MAX, max_mem_clock_mhz, 1000000, 0),
	ST(M_ECC_MODE, ecc_mode, 1, 0),
	ST(M_PCIE_GEN_MAX, pcie_gen_max, 1, 0),
	ST(M_PCIE_WIDTH_MAX, pcie_width_max, 1, 0),
};

static const u64v *field_of(const struct gpu_view *v, const struct field_metric *f)
{
	const char *base = f->from_static ? (const char *)&v->st : (const char *)&v->s;
	return (const u64v *)(const void *)(base + f->off);
}

/* One family: rows[0] and the ROLE_SERIES rows after it, GPU by GPU. */
static void render_family(struct render *r, const struct field_metric *rows, size_t n)
{
	const struct snapshot *sn = r->snap;
	for (unsigned i = 0; i < sn->n; i++) {
		const struct gpu_view *v = &sn->gpu[i];
		if (!v->up)
			continue;
		for (size_t k = 0; k < n; k++) {
			const u64v *x = field_of(v, &rows[k]);
			if (!VAL_HAS(*x))
				continue;
			open_sample(r, rows[0].id, i);
			if (rows[k].series[0]) {
				abuf_putc(r->b, ',');
				abuf_puts(r->b, rows[k].series);
			}
			val(r, x->v * rows[k].mul, rows[k].dec);
		}
	}
}

/* Every family of rows[0..n), in their order. */
static void render_families(struct render *r, const struct field_metric *rows, size_t n)
{
	size_t k = 0;
	while (k < n) {
		size_t end = k + 1;
		while (end < n && rows[end].role == ROLE_SERIES)
			end++;
		if (rows[k].role == ROLE_FAMILY && wanted(r, rows[k].id))
			render_family(r, rows + k, end - k);
		k = end;
	}
}

/* ---- families with their own shape ---------------------------------------- */

static void render_agent(struct render *r)
{
	const struct gpu_system *sys = &r->snap->sys;
	open_sample(r, M_AGENT_INFO, NO_GPU);
	more(r, "version", r->o->version ? r->o->version : "");
	more(r, "backend", sys->backend);
	more(r, "simulated", sys->simulated ? "true" : "false");
	more(r, "server", sys->server_name);
	val(r, 1, 0);
	open_sample(r, M_AGENT_GPUS, NO_GPU);
	val(r, r->snap->n, 0);
	if (r->o->kernel_log >= 0) {
		open_sample(r, M_AGENT_KLOG, NO_GPU);
		val(r, (uint64_t)r->o->kernel_log, 0);
	}
	if (r->o->sim_fault_file >= 0) {
		open_sample(r, M_AGENT_SIM_FAULT_FILE, NO_GPU);
		val(r, (uint64_t)r->o->sim_fault_file, 0);
	}
	if (r->o->last_render_ns) {
		open_sample(r, M_AGENT_RENDER, NO_GPU);
		val(r, r->o->last_render_ns, 9);
	}
}

static void render_bookkeeping(struct render *r)
{
	const struct snapshot *sn = r->snap;
	for (unsigned i = 0; i < sn->n; i++) {
		open_sample(r, M_UP, i);
		val(r, sn->gpu[i].up ? 1 : 0, 0);
	}
	for (unsigned i = 0; i < sn->n; i++) {
		const struct gpu_view *v = &sn->gpu[i];
		if (!v->last_ok_ns)
			continue;
		open_sample(r, M_SAMPLE_AGE, i);
		val(r, sn->taken_ns > v->last_ok_ns ? sn->taken_ns - v->last_ok_ns : 0, 9);
	}
	for (unsigned i = 0; i < sn->n; i++) {
		if (!sn->gpu[i].up)
			continue;
		open_sample(r, M_SAMPLE_DURATION, i);
		val(r, sn->gpu[i].s.duration_ns, 9);
	}
	for (unsigned i = 0; i < sn->n; i++) {
		open_sample(r, M_SAMPLES, i);
		val(r, sn->gpu[i].samples, 0);
	}
	for (unsigned i = 0; i < sn->n; i++) {
		open_sample(r, M_SAMPLE_ERRORS, i);
		val(r, sn->gpu[i].errors, 0);
	}
	for (unsigned i = 0; i < sn->n; i++) {
		const struct gpu_static *st = &sn->gpu[i].st;
		if (!VAL_HAS(st->uuid))
			continue; /* static facts never read (GPU lost from the start) */
		char cc[32] = "";
		if (VAL_HAS(st->cc_major) && VAL_HAS(st->cc_minor))
			snprintf(cc, sizeof(cc), "%llu.%llu", (unsigned long long)st->cc_major.v,
				 (unsigned long long)st->cc_minor.v);
		open_sample(r, M_INFO, i);
		more(r, "driver_version", VAL_HAS(sn->sys.driver_version) ? sn->sys.driver_version.s : "");
		more(r, "vbios_version", VAL_HAS(st->vbios_version) ? st->vbios_version.s : "");
		more(r, "serial", VAL_HAS(st->serial) ? st->serial.s : "");
		more(r, "architecture", VAL_HAS(st->architecture) ? st->architecture.s : "");
		more(r, "compute_capability", cc);
		val(r, 1, 0);
	}
}

static const struct { uint64_t bit; const char *name; } clock_reasons[] = {
	{ CLK_EVT_GPU_IDLE, "gpu_idle" },
	{ CLK_EVT_APP_CLOCKS, "applications_clocks" },
	{ CLK_EVT_SW_POWER_CAP, "sw_power_cap" },
	{ CLK_EVT_HW_SLOWDOWN, "hw_slowdown" },
	{ CLK_EVT_SYNC_BOOST, "sync_boost" },
	{ CLK_EVT_SW_THERMAL, "sw_thermal" },
	{ CLK_EVT_HW_THERMAL, "hw_thermal" },
	{ CLK_EVT_HW_POWER_BRAKE, "hw_power_brake" },
	{ CLK_EVT_DISPLAY_CLOCKS, "display_clocks" },
};

static void render_clock_events(struct render *r)
{
	if (!wanted(r, M_CLK_EVT_ACTIVE))
		return;
	for (unsigned i = 0; i < r->snap->n; i++) {
		const struct gpu_view *v = &r->snap->gpu[i];
		if (!v->up || !VAL_HAS(v->s.clock_event_reasons))
			continue;
		for (size_t k = 0; k < sizeof(clock_reasons) / sizeof(clock_reasons[0]); k++) {
			open_sample(r, M_CLK_EVT_ACTIVE, i);
			more(r, "reason", clock_reasons[k].name);
			val(r, (v->s.clock_event_reasons.v & clock_reasons[k].bit) ? 1 : 0, 0);
		}
	}
}

static void render_nvlink(struct render *r)
{
	static const struct { enum metric_id id; size_t off; const char *type; } link_fields[] = {
		{ M_NVLINK_ERRORS, offsetof(struct gpu_nvlink, crc_flit_errors), "crc_flit" },
		{ M_NVLINK_ERRORS, offsetof(struct gpu_nvlink, crc_data_errors), "crc_data" },
		{ M_NVLINK_ERRORS, offsetof(struct gpu_nvlink, replay_errors), "replay" },
		{ M_NVLINK_ERRORS, offsetof(struct gpu_nvlink, recovery_errors), "recovery" },
		{ M_NVLINK_TX, offsetof(struct gpu_nvlink, tx_bytes), NULL },
		{ M_NVLINK_RX, offsetof(struct gpu_nvlink, rx_bytes), NULL },
		{ M_NVLINK_UP, offsetof(struct gpu_nvlink, active), NULL },
	};
	if (!wanted(r, M_NVLINK_UP))
		return;
	/* families in order: up, errors, tx, rx */
	const enum metric_id order[] = { M_NVLINK_UP, M_NVLINK_ERRORS, M_NVLINK_TX, M_NVLINK_RX };
	char link[16];
	for (size_t o = 0; o < sizeof(order) / sizeof(order[0]); o++) {
		for (unsigned i = 0; i < r->snap->n; i++) {
			const struct gpu_view *v = &r->snap->gpu[i];
			if (!v->up)
				continue;
			unsigned nl = v->s.nvlink_n < GPU_MAX_NVLINKS ? v->s.nvlink_n : GPU_MAX_NVLINKS;
			for (unsigned l = 0; l < nl; l++) {
				snprintf(link, sizeof(link), "%u", l);
				for (size_t f = 0; f < sizeof(link_fields) / sizeof(link_fields[0]); f++) {
					if (link_fields[f].id != order[o])
						continue;
					const u64v *x = (const u64v *)(const void *)((const char *)&v->s.nvlink[l] + link_fields[f].off);
					if (!VAL_HAS(*x))
						continue;
					open_sample(r, order[o], i);
					more(r, "link", link);
					if (link_fields[f].type)
						more(r, "type", link_fields[f].type);
					val(r, x->v, 0);
				}
			}
		}
	}
}

static void render_xid(struct render *r)
{
	if (!wanted(r, M_XID))
		return;
	char code[24];
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; i < r->snap->n; i++) {
			const struct gpu_view *v = &r->snap->gpu[i];
			for (unsigned k = 0; k < v->nxid && k < 32; k++) {
				snprintf(code, sizeof(code), "%llu", (unsigned long long)v->xid[k].code);
				if (pass == 0) {
					open_sample(r, M_XID, i);
					more(r, "xid", code);
					val(r, v->xid[k].count, 0);
				} else if (v->xid[k].last_ns) {
					open_sample(r, M_XID_LAST, i);
					more(r, "xid", code);
					val(r, v->xid[k].last_ns, 9);
				}
			}
		}
	}
}

static void render_processes(struct render *r)
{
	if (!wanted(r, M_PROC_MEM))
		return;
	char pid[16];
	for (unsigned i = 0; i < r->snap->n; i++) {
		const struct gpu_view *v = &r->snap->gpu[i];
		if (!v->up)
			continue;
		unsigned np = v->nproc < GPU_MAX_PROCS ? v->nproc : GPU_MAX_PROCS;
		for (unsigned k = 0; k < np; k++) {
			const struct gpu_process *p = &v->procs[k];
			if (!VAL_HAS(p->used_mem_bytes))
				continue;
			/* a process in both the compute and the graphics list is one series
			 * (a duplicate series would make Prometheus drop the whole scrape) */
			bool seen = false;
			uint64_t mem = p->used_mem_bytes.v;
			for (unsigned j = 0; j < np && !seen; j++) {
				if (j == k || v->procs[j].pid != p->pid || !VAL_HAS(v->procs[j].used_mem_bytes))
					continue;
				if (j < k)
					seen = true;
				else if (v->procs[j].used_mem_bytes.v > mem)
					mem = v->procs[j].used_mem_bytes.v;
			}
			if (seen)
				continue;
			snprintf(pid, sizeof(pid), "%u", p->pid);
			open_sample(r, M_PROC_MEM, i);
			more(r, "pid", pid);
			more(r, "user", p->user);
			more(r, "comm", p->name);
			val(r, mem, 0);
		}
	}
}

/* The MIG instances' families: a field of struct gpu_mig each (its value *
 * mul / 10^dec), and the pipe label where a family has several. */
static const struct mig_metric {
	enum metric_id id;
	size_t off;
	uint64_t mul;
	unsigned dec;
	const char *pipe;
} mig_metrics[] = {
#define MIG_ROW(id, member, unit, pipe) \
	{ id, offsetof(struct gpu_mig, member), GPU_UNIT_##unit##_MUL, GPU_UNIT_##unit##_DEC, pipe }
	MIG_ROW(M_MIG_MEM_USED, mem_used_bytes, BYTES, NULL),
	MIG_ROW(M_MIG_MEM_TOTAL, mem_total_bytes, BYTES, NULL),
	MIG_ROW(M_MIG_SM, sm_count, COUNT, NULL),
	MIG_ROW(M_MIG_SM_ACTIVE, prof_sm_active_pct, PCT, NULL),
	MIG_ROW(M_MIG_SM_OCCUPANCY, prof_sm_occupancy_pct, PCT, NULL),
	MIG_ROW(M_MIG_TENSOR, prof_tensor_active_pct, PCT, NULL),
	MIG_ROW(M_MIG_DRAM, prof_dram_active_pct, PCT, NULL),
	MIG_ROW(M_MIG_PIPE, prof_fp64_active_pct, PCT, "fp64"),
	MIG_ROW(M_MIG_PIPE, prof_fp32_active_pct, PCT, "fp32"),
	MIG_ROW(M_MIG_PIPE, prof_fp16_active_pct, PCT, "fp16"),
#undef MIG_ROW
};

static void render_mig(struct render *r)
{
	if (!wanted(r, M_MIG_MEM_USED))
		return;
	char gi[16], ci[16];
	size_t f = 0;
	while (f < sizeof(mig_metrics) / sizeof(mig_metrics[0])) {
		size_t end = f + 1; /* the rows of one family, together */
		while (end < sizeof(mig_metrics) / sizeof(mig_metrics[0]) && mig_metrics[end].id == mig_metrics[f].id)
			end++;
		for (unsigned i = 0; i < r->snap->n; i++) {
			const struct gpu_view *v = &r->snap->gpu[i];
			if (!v->up)
				continue;
			for (unsigned k = 0; k < v->nmig && k < GPU_MAX_MIG; k++)
				for (size_t row = f; row < end; row++) {
					const struct mig_metric *mm = &mig_metrics[row];
					const struct gpu_mig *m = &v->mig[k];
					const u64v *x = (const u64v *)(const void *)((const char *)m + mm->off);
					if (!VAL_HAS(*x))
						continue;
					snprintf(gi, sizeof(gi), "%u", m->gi_id);
					snprintf(ci, sizeof(ci), "%u", m->ci_id);
					open_sample(r, mm->id, i);
					more(r, "gpu_instance", gi);
					more(r, "compute_instance", ci);
					more(r, "profile", m->profile);
					more(r, "mig_uuid", m->uuid);
					if (mm->pipe)
						more(r, "pipe", mm->pipe);
					val(r, x->v * mm->mul, mm->dec);
				}
		}
		f = end;
	}
}

static void render_health(struct render *r)
{
	if (!wanted(r, M_HEALTH) || !r->o->health)
		return;
	for (unsigned i = 0; i < r->snap->n; i++) {
		const struct metrics_health *h = &r->o->health[i];
		if (!h->valid || h->status < 0)
			continue;
		open_sample(r, M_HEALTH, i);
		val(r, (uint64_t)h->status, 0);
	}
}

/* Only flagged processes have a series: an absent series means "not leaking". */
static void render_leaks(struct render *r)
{
	if (!wanted(r, M_PROC_LEAK) || !r->o->leaks)
		return;
	char pid[16];
	for (unsigned k = 0; k < r->o->nleaks; k++) {
		const struct leakwatch_leak *l = &r->o->leaks[k];
		if (l->gpu >= r->snap->n || !r->snap->gpu[l->gpu].up || !(l->rate > 0))
			continue;
		/* leaks come ordered by (gpu, pid): one series per pid, as for the memory family */
		if (k > 0 && r->o->leaks[k - 1].gpu == l->gpu && r->o->leaks[k - 1].pid == l->pid)
			continue;
		snprintf(pid, sizeof(pid), "%u", l->pid);
		open_sample(r, M_PROC_LEAK, l->gpu);
		more(r, "pid", pid);
		more(r, "user", l->user);
		more(r, "comm", l->comm);
		val(r, (uint64_t)(l->rate * 1000.0 + 0.5), 3);
	}
}

int metrics_render(struct abuf *out, const struct snapshot *snap, const struct metrics_opts *o)
{
	struct render r = { .b = out, .snap = snap, .o = o, .cur = -1 };
	abuf_init(&r.lab);
	if (snap->n > GPU_MAX_GPUS)
		return -1;
	build_labels(&r);
	if (!o->openmetrics && snap->sys.simulated) {
		/* a comment ends at the line's end: the name (any text the server
		 * file gives) must not start a line of its own */
		char name[sizeof(snap->sys.server_name)];
		term_clean(name, sizeof(name), snap->sys.server_name);
		abuf_printf(out, "# SIMULATED server '%s': not real hardware\n", name);
	}
	render_agent(&r);
	render_bookkeeping(&r);
	render_families(&r, sample_metrics, sizeof(sample_metrics) / sizeof(sample_metrics[0]));
	render_clock_events(&r);
	render_families(&r, static_metrics, sizeof(static_metrics) / sizeof(static_metrics[0]));
	render_nvlink(&r);
	render_xid(&r);
	render_processes(&r);
	render_mig(&r);
	render_health(&r);
	render_leaks(&r);
	if (o->dcgm_compat)
		metrics_dcgm_render(out, snap, o);
	if (o->openmetrics)
		abuf_puts(out, "# EOF\n");
	bool oom = r.lab.oom || out->oom;
	abuf_free(&r.lab);
	return oom ? -1 : 0;
}
