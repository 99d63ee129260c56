/* SPDX-License-Identifier: Apache-2.0 */
/* info_text.c - see info_text.h. */
#include "view/info_text.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu_select.h"
#include "core/table.h"
#include "sampler/sampler.h"
#include "view/json_util.h"

/* ---- formatting values: a number with its unit, or why there is none ---- */

static const char *why(enum val_status st, bool compact)
{
	switch (st) {
	case VAL_UNSUPPORTED: return compact ? "n/s" : "not supported";
	case VAL_ERROR: return compact ? "ERR" : "error";
	default: return compact ? "-" : "not read";
	}
}

static const char *fmt_u(char *b, size_t n, u64v v, const char *unit, bool compact)
{
	if (!VAL_HAS(v))
		return why(v.st, compact);
	snprintf(b, n, "%" PRIu64 "%s%s", v.v, unit[0] ? " " : "", unit);
	return b;
}

static const char *fmt_mib(char *b, size_t n, u64v v, bool compact)
{
	if (!VAL_HAS(v))
		return why(v.st, compact);
	snprintf(b, n, "%" PRIu64 " MiB", v.v >> 20);
	return b;
}

static const char *fmt_w(char *b, size_t n, u64v mw, bool compact)
{
	if (!VAL_HAS(mw))
		return why(mw.st, compact);
	snprintf(b, n, compact ? "%.0f W" : "%.2f W", (double)mw.v / 1000.0);
	return b;
}

static const char *fmt_onoff(u64v v, bool compact)
{
	if (!VAL_HAS(v))
		return why(v.st, compact);
	if (compact)
		return v.v ? "On" : "Off";
	return v.v ? "Enabled" : "Disabled";
}

static const char *fmt_width(char *b, size_t n, u64v lanes)
{
	if (!VAL_HAS(lanes))
		return why(lanes.st, false);
	snprintf(b, n, "x%" PRIu64, lanes.v);
	return b;
}

static const char *fmt_str(const strv *v)
{
	return VAL_HAS(*v) ? v->s : why(v->st, false);
}

static const char *fmt_busid(const busidv *v)
{
	return VAL_HAS(*v) ? v->s : why(v->st, false);
}

/* ---- the header every human output starts with ---- */

void info_text_header(FILE *out, const struct snapshot *snap)
{
	const struct gpu_system *s = &snap->sys;
	text_line(out, "host %s  driver %s  CUDA %s  NVML %s  %u GPU%s%s%s", fmt_str(&s->hostname),
		 fmt_str(&s->driver_version), fmt_str(&s->cuda_driver_version), fmt_str(&s->nvml_version), snap->n,
		 snap->n == 1 ? "" : "s", VAL_HAS(s->fabric_manager_running) ? "  fabric manager " : "",
		 !VAL_HAS(s->fabric_manager_running) ? "" : s->fabric_manager_running.v ? "running" : "NOT running");
	fputc('\n', out);
}

/* ---- the table ---- */

/* A column of the table: a chosen value of each GPU, or two to a cell. Its
 * cell puts its text in *text (in b, or a constant) and says whether it shows
 * a value that is missing (n/s, ERR, -: the table's footnote explains them). */
struct info_table_col {
	const char *header;
	enum table_align align;
	bool (*cell)(const struct info_table_col *col, const struct gpu_view *v, unsigned gpu, char *b, size_t n,
		     const char **text);
	size_t off;               /* cell_sample's u64v in struct gpu_sample, cell_mode's in struct gpu_static */
	const char *unit;         /* cell_sample's */
};

static bool cell_gpu(const struct info_table_col *col, const struct gpu_view *v, unsigned gpu, char *b, size_t n,
		     const char **text)
{
	(void)col, (void)v;
	snprintf(b, n, "%u", gpu);
	*text = b;
	return false;
}

static bool cell_name(const struct info_table_col *col, const struct gpu_view *v, unsigned gpu, char *b, size_t n,
		      const char **text)
{
	(void)col, (void)gpu, (void)b, (void)n;
	*text = !v->up ? "DOWN (below)" : VAL_HAS(v->st.name) ? v->st.name.s : why(v->st.name.st, true);
	return v->up && !VAL_HAS(v->st.name);
}

static bool cell_bus_id(const struct info_table_col *col, const struct gpu_view *v, unsigned gpu, char *b,
			size_t n, const char **text)
{
	(void)col, (void)gpu, (void)b, (void)n;
	*text = VAL_HAS(v->st.pci_bus_id) ? v->st.pci_bus_id.s : why(v->st.pci_bus_id.st, true);
	return !VAL_HAS(v->st.pci_bus_id);
}

static bool cell_memory(const struct info_table_col *col, const struct gpu_view *v, unsigned gpu, char *b,
			size_t n, const char **text)
{
	(void)col, (void)gpu;
	u64v used = v->s.mem_used_bytes, total = v->s.mem_total_bytes;
	if (VAL_HAS(used) && VAL_HAS(total)) {
		snprintf(b, n, "%" PRIu64 " / %" PRIu64 " MiB", used.v >> 20, total.v >> 20);
		*text = b;
		return false;
	}
	*text = fmt_mib(b, n, VAL_HAS(used) ? total : used, true);
	return true;
}

static bool cell_power(const struct info_table_col *col, const struct gpu_view *v, unsigned gpu, char *b, size_t n,
		       const char **text)
{
	(void)col, (void)gpu;
	char draw[48], limit[48];
	snprintf(b, n, "%s / %s", fmt_w(draw, sizeof(draw), v->s.power_mw, true),
		 fmt_w(limit, sizeof(limit), v->s.power_limit_mw, true));
	*text = b;
	return !VAL_HAS(v->s.power_mw) || !VAL_HAS(v->s.power_limit_mw);
}

static bool cell_sample(const struct info_table_col *col, const struct gpu_view *v, unsigned gpu, char *b,
			size_t n, const char **text)
{
	(void)gpu;
	u64v x = *(const u64v *)((const char *)&v->s + col->off);
	*text = fmt_u(b, n, x, col->unit, true);
	return !VAL_HAS(x);
}

static bool cell_mode(const struct info_table_col *col, const struct gpu_view *v, unsigned gpu, char *b, size_t n,
		      const char **text)
{
	(void)gpu, (void)b, (void)n;
	u64v x = *(const u64v *)((const char *)&v->st + col->off);
	*text = fmt_onoff(x, true);
	return !VAL_HAS(x);
}

#define SAMPLE_COL(header, member, unit) \
	{ header, TABLE_RIGHT, cell_sample, offsetof(struct gpu_sample, member), unit }
#define MODE_COL(header, member) { header, TABLE_RIGHT, cell_mode, offsetof(struct gpu_static, member), NULL }
static const struct info_table_col info_table_cols[] = {
	{ "GPU", TABLE_RIGHT, cell_gpu, 0, NULL },
	{ "Name", TABLE_LEFT, cell_name, 0, NULL },
	{ "Bus-Id", TABLE_LEFT, cell_bus_id, 0, NULL },
	{ "Memory used / total", TABLE_RIGHT, cell_memory, 0, NULL },
	SAMPLE_COL("Util", util_gpu_pct, "%"),
	SAMPLE_COL("Temp", temp_c, "C"),
	{ "Power / limit", TABLE_RIGHT, cell_power, 0, NULL },
	MODE_COL("Pers", persistence_mode),
	MODE_COL("ECC", ecc_mode),
	MODE_COL("MIG", mig_mode),
	SAMPLE_COL("SM clock", sm_clock_mhz, "MHz"),
	SAMPLE_COL("Mem clock", mem_clock_mhz, "MHz"),
};
#undef SAMPLE_COL
#undef MODE_COL

static void print_table(FILE *out, const struct snapshot *snap, uint64_t mask)
{
	enum { NCOL = sizeof(info_table_cols) / sizeof(info_table_cols[0]) };
	struct table *t = table_new(NCOL);
	for (unsigned c = 0; c < NCOL; c++)
		table_col(t, c, info_table_cols[c].header, info_table_cols[c].align);
	bool any_missing = false;
	for (unsigned i = 0; i < snap->n; i++) {
		if (!gpu_select_has(mask, i))
			continue;
		table_row(t);
		for (unsigned c = 0; c < NCOL; c++) {
			char b[112];
			const char *text;
			any_missing |= info_table_cols[c].cell(&info_table_cols[c], &snap->gpu[i], i, b, sizeof(b), &text);
			table_cell(t, text);
		}
	}
	table_print(t, out);
	table_free(t);
	if (any_missing)
		fputs("(n/s: not supported by this GPU or driver; ERR: failed to read; -: not read)\n", out);
}

static void print_processes(FILE *out, const struct snapshot *snap, uint64_t mask)
{
	unsigned total = 0;
	for (unsigned i = 0; i < snap->n; i++)
		if (gpu_select_has(mask, i))
			total += snap->gpu[i].nproc;
	fputs("\nProcesses:", out);
	if (total == 0) {
		fputs(" none\n", out);
		return;
	}
	fputc('\n', out);
	struct table *t = table_new(6);
	const char *hdr[6] = { "GPU", "PID", "Type", "User", "Name", "GPU memory" };
	for (unsigned c = 0; c < 6; c++)
		table_col(t, c, hdr[c], c == 0 || c == 1 || c == 5 ? TABLE_RIGHT : TABLE_LEFT);
	for (unsigned i = 0; i < snap->n; i++) {
		if (!gpu_select_has(mask, i))
			continue;
		for (unsigned k = 0; k < snap->gpu[i].nproc; k++) {
			const struct gpu_process *p = &snap->gpu[i].procs[k];
			char a[48];
			table_row(t);
			if (p->mig_gi >= 0)
				table_cellf(t, "%u/%d", i, p->mig_gi);
			else
				table_cellf(t, "%u", i);
			table_cellf(t, "%u", p->pid);
			table_cellf(t, "%c", p->type ? p->type : '?');
			table_cell(t, p->user[0] ? p->user : "?");
			table_cell(t, p->name[0] ? p->name : "?");
			table_cell(t, fmt_mib(a, sizeof(a), p->used_mem_bytes, true));
		}
	}
	table_print(t, out);
	table_free(t);
}

static void print_mig(FILE *out, const struct snapshot *snap, uint64_t mask)
{
	struct table *t = NULL;
	for (unsigned i = 0; i < snap->n; i++) {
		if (!gpu_select_has(mask, i))
			continue;
		for (unsigned k = 0; k < snap->gpu[i].nmig; k++) {
			const struct gpu_mig *m = &snap->gpu[i].mig[k];
			char a[48];
			if (!t) {
				const char *hdr[7] = { "GPU", "GI", "CI", "Profile", "Memory used / total", "SMs", "UUID" };
				t = table_new(7);
				for (unsigned c = 0; c < 7; c++)
					table_col(t, c, hdr[c], c == 3 || c == 6 ? TABLE_LEFT : TABLE_RIGHT);
			}
			table_row(t);
			table_cellf(t, "%u", i);
			table_cellf(t, "%u", m->gi_id);
			table_cellf(t, "%u", m->ci_id);
			table_cell(t, m->profile);
			if (VAL_HAS(m->mem_used_bytes) && VAL_HAS(m->mem_total_bytes))
				table_cellf(t, "%" PRIu64 " / %" PRIu64 " MiB", m->mem_used_bytes.v >> 20,
					    m->mem_total_bytes.v >> 20);
			else
				table_cell(t, fmt_mib(a, sizeof(a), m->mem_total_bytes, true));
			table_cell(t, fmt_u(a, sizeof(a), m->sm_count, "", true));
			table_cell(t, m->uuid[0] ? m->uuid : "?");
		}
	}
	if (!t)
		return;
	fputs("\nMIG devices:\n", out);
	table_print(t, out);
	table_free(t);
}

static void print_errors(FILE *out, const struct snapshot *snap, uint64_t mask)
{
	for (unsigned i = 0; i < snap->n; i++) {
		const struct gpu_view *v = &snap->gpu[i];
		if (!gpu_select_has(mask, i) || (v->up && !v->last_error[0]))
			continue;
		text_line(out, "GPU %u %s: %s", i, v->up ? "partly read" : "DOWN",
			 v->last_error[0] ? v->last_error : "no answer");
	}
}

/* ---- -q: everything known of each GPU ---- */

static void kv(FILE *out, const char *label, const char *value)
{
	text_line(out, "        %-30s: %s", label, value);
}

static void kvu(FILE *out, const char *label, u64v v, const char *unit)
{
	char b[64];
	kv(out, label, fmt_u(b, sizeof(b), v, unit, false));
}

static void kv_mode(FILE *out, const char *label, u64v cur, u64v pending)
{
	char b[96];
	if (VAL_HAS(cur) && VAL_HAS(pending) && cur.v != pending.v)
		snprintf(b, sizeof(b), "%s (pending: %s)", fmt_onoff(cur, false), fmt_onoff(pending, false));
	else
		snprintf(b, sizeof(b), "%s", fmt_onoff(cur, false));
	kv(out, label, b);
}

static void section(FILE *out, const char *name)
{
	fprintf(out, "    %s\n", name);
}

static void detail_static(FILE *out, const struct gpu_static *st)
{
	char b[128];
	section(out, "Product");
	kv(out, "Name", fmt_str(&st->name));
	kv(out, "Catalog Model", fmt_str(&st->catalog_model));
	kv(out, "Architecture", fmt_str(&st->architecture));
	if (VAL_HAS(st->cc_major) && VAL_HAS(st->cc_minor))
		snprintf(b, sizeof(b), "%" PRIu64 ".%" PRIu64, st->cc_major.v, st->cc_minor.v);
	kv(out, "Compute Capability", VAL_HAS(st->cc_major) && VAL_HAS(st->cc_minor) ? b : why(st->cc_major.st, false));
	kvu(out, "SMs", st->sm_count, "");
	kvu(out, "CUDA Cores", st->cuda_cores, "");
	kv(out, "UUID", fmt_str(&st->uuid));
	kv(out, "Serial Number", fmt_str(&st->serial));
	kv(out, "VBIOS Version", fmt_str(&st->vbios_version));
	kv(out, "Board Part Number", fmt_str(&st->board_part_number));
	section(out, "Modes");
	kv(out, "Persistence Mode", fmt_onoff(st->persistence_mode, false));
	kv(out, "Compute Mode", VAL_HAS(st->compute_mode) ? gpu_compute_mode_name(st->compute_mode.v)
							 : why(st->compute_mode.st, false));
	kv_mode(out, "ECC Mode", st->ecc_mode, st->ecc_mode_pending);
	kv_mode(out, "MIG Mode", st->mig_mode, st->mig_mode_pending);
	section(out, "Affinity");
	if (VAL_HAS(st->numa_node) && st->numa_node.v < 0)
		snprintf(b, sizeof(b), "none (no NUMA)");
	else if (VAL_HAS(st->numa_node))
		snprintf(b, sizeof(b), "%" PRId64, st->numa_node.v);
	else
		snprintf(b, sizeof(b), "%s", why(st->numa_node.st, false));
	kv(out, "NUMA Node", b);
	kv(out, "CPU Affinity", fmt_str(&st->cpu_affinity));
}

/* The sample's sections of -q, in order; an INFO_SAMPLE(section, ...) row
 * below puts a field's line in one. */
#define INFO_SECTION_TABLE(X) \
	X(MEMORY, "Memory") \
	X(UTILIZATION, "Utilization") \
	X(TEMPERATURE, "Temperature") \
	X(POWER, "Power") \
	X(CLOCKS, "Clocks") \
	X(CLOCK_EVENT_TIME, "Clocks Event Time (since driver load)") \
	X(ECC, "ECC Errors") \
	X(RETIRED_PAGES, "Retired Pages") \
	X(REMAPPED_ROWS, "Remapped Rows") \
	X(PCIE, "PCIe") \
	X(PROFILING, "Profiling (GPM)")
#define SECTION_ID(id, name) INFO_SEC_##id,
#define SECTION_NAME(id, name) name,
enum info_section { INFO_SECTION_TABLE(SECTION_ID) INFO_SECTIONS };
static const char *const section_names[INFO_SECTIONS] = { INFO_SECTION_TABLE(SECTION_NAME) };
#undef SECTION_ID
#undef SECTION_NAME

enum info_fmt {
	INFO_FMT_U, INFO_FMT_MIB, INFO_FMT_WATTS, INFO_FMT_JOULES, INFO_FMT_SECONDS, INFO_FMT_PSTATE,
	INFO_FMT_REASONS, INFO_FMT_YESNO, INFO_FMT_LANES
};

struct info_line {
	const char *label;      /* NULL: no line at this rank */
	enum info_fmt fmt;
	const char *unit;       /* INFO_FMT_U's */
	bool of_static;         /* a u64v of struct gpu_static, else of struct gpu_sample */
	size_t off;
};

/* The lines of each section by rank: INFO_SAMPLE(section, rank, label, fmt,
 * unit, member) shows a field of the sample (device/gpu_fields.h), in section
 * INFO_SEC_<section> at rank (0 first), written as INFO_FMT_<fmt> (U: the
 * integer and unit; MIB, WATTS, JOULES, SECONDS, PSTATE, REASONS, YESNO,
 * LANES); INFO_STATIC one of the static facts beside them. */
#define INFO_MAX_RANK 8
#define INFO_SAMPLE(sec, rank, label, fmt, unit, member) \
	[INFO_SEC_##sec][rank] = { label, INFO_FMT_##fmt, unit, false, offsetof(struct gpu_sample, member) }
#define INFO_STATIC(sec, rank, label, fmt, unit, member) \
	[INFO_SEC_##sec][rank] = { label, INFO_FMT_##fmt, unit, true, offsetof(struct gpu_static, member) }
static const struct info_line info_lines[INFO_SECTIONS][INFO_MAX_RANK] = {
	INFO_SAMPLE(UTILIZATION, 0, "GPU", U, "%", util_gpu_pct),
	INFO_SAMPLE(UTILIZATION, 1, "Memory", U, "%", util_mem_pct),
	INFO_SAMPLE(MEMORY, 1, "Used", MIB, "", mem_used_bytes),
	INFO_SAMPLE(MEMORY, 2, "Free", MIB, "", mem_free_bytes),
	INFO_SAMPLE(MEMORY, 0, "Total", MIB, "", mem_total_bytes),
	INFO_SAMPLE(TEMPERATURE, 0, "GPU Current Temp", U, "C", temp_c),
	INFO_SAMPLE(TEMPERATURE, 1, "Memory Current Temp", U, "C", temp_mem_c),
	INFO_SAMPLE(TEMPERATURE, 2, "GPU Slowdown Temp", U, "C", temp_slowdown_c),
	INFO_SAMPLE(TEMPERATURE, 3, "GPU Shutdown Temp", U, "C", temp_shutdown_c),
	INFO_SAMPLE(TEMPERATURE, 4, "Fan Speed", U, "%", fan_pct),
	INFO_SAMPLE(POWER, 0, "Power Draw", WATTS, "", power_mw),
	INFO_SAMPLE(POWER, 1, "Current Power Limit", WATTS, "", power_limit_mw),
	INFO_SAMPLE(POWER, 5, "Energy Since Driver Load", JOULES, "", energy_mj),
	INFO_SAMPLE(CLOCKS, 0, "SM", U, "MHz", sm_clock_mhz),
	INFO_SAMPLE(CLOCKS, 1, "Memory", U, "MHz", mem_clock_mhz),
	INFO_SAMPLE(CLOCKS, 4, "Performance State", PSTATE, "", pstate),
	INFO_SAMPLE(CLOCKS, 5, "Clocks Event Reasons", REASONS, "", clock_event_reasons),
	INFO_SAMPLE(CLOCK_EVENT_TIME, 0, "Power Cap", SECONDS, "", viol_power_ns),
	INFO_SAMPLE(CLOCK_EVENT_TIME, 1, "Thermal", SECONDS, "", viol_thermal_ns),
	INFO_SAMPLE(CLOCK_EVENT_TIME, 2, "Sync Boost", SECONDS, "", viol_sync_boost_ns),
	INFO_SAMPLE(CLOCK_EVENT_TIME, 3, "Board Limit", SECONDS, "", viol_board_limit_ns),
	INFO_SAMPLE(CLOCK_EVENT_TIME, 4, "Low Utilization", SECONDS, "", viol_low_util_ns),
	INFO_SAMPLE(CLOCK_EVENT_TIME, 5, "Reliability", SECONDS, "", viol_reliability_ns),
	INFO_SAMPLE(ECC, 0, "Volatile Corrected", U, "", ecc_vol_corrected),
	INFO_SAMPLE(ECC, 1, "Volatile Uncorrected", U, "", ecc_vol_uncorrected),
	INFO_SAMPLE(ECC, 2, "Aggregate Corrected", U, "", ecc_agg_corrected),
	INFO_SAMPLE(ECC, 3, "Aggregate Uncorrected", U, "", ecc_agg_uncorrected),
	INFO_SAMPLE(ECC, 4, "Aggregate Uncorrected SRAM", U, "", ecc_sram_uncorrected),
	INFO_SAMPLE(ECC, 5, "Aggregate Uncorrected DRAM", U, "", ecc_dram_uncorrected),
	INFO_SAMPLE(RETIRED_PAGES, 0, "Single Bit ECC", U, "pages", retired_pages_sbe),
	INFO_SAMPLE(RETIRED_PAGES, 1, "Double Bit ECC", U, "pages", retired_pages_dbe),
	INFO_SAMPLE(RETIRED_PAGES, 2, "Pending Page Blacklist", YESNO, "", retired_pages_pending),
	INFO_SAMPLE(REMAPPED_ROWS, 0, "Correctable Error", U, "rows", remap_corrected),
	INFO_SAMPLE(REMAPPED_ROWS, 1, "Uncorrectable Error", U, "rows", remap_uncorrected),
	INFO_SAMPLE(REMAPPED_ROWS, 2, "Pending", YESNO, "", remap_pending),
	INFO_SAMPLE(REMAPPED_ROWS, 3, "Remapping Failure Occurred", YESNO, "", remap_failure),
	INFO_SAMPLE(PCIE, 0, "Generation Current", U, "", pcie_gen),
	INFO_SAMPLE(PCIE, 2, "Link Width Current", LANES, "", pcie_width),
	INFO_SAMPLE(PCIE, 4, "Tx Throughput", U, "KiB/s", pcie_tx_kbps),
	INFO_SAMPLE(PCIE, 5, "Rx Throughput", U, "KiB/s", pcie_rx_kbps),
	INFO_SAMPLE(PCIE, 6, "Replays", U, "", pcie_replays),
	INFO_SAMPLE(PCIE, 7, "Link Recoveries", U, "", pcie_l0_recoveries),
	INFO_SAMPLE(PROFILING, 0, "SM Active", U, "%", prof_sm_active_pct),
	INFO_SAMPLE(PROFILING, 1, "SM Occupancy", U, "%", prof_sm_occupancy_pct),
	INFO_SAMPLE(PROFILING, 2, "Tensor Active", U, "%", prof_tensor_active_pct),
	INFO_SAMPLE(PROFILING, 3, "DRAM Active", U, "%", prof_dram_active_pct),
	INFO_SAMPLE(PROFILING, 4, "FP64 Active", U, "%", prof_fp64_active_pct),
	INFO_SAMPLE(PROFILING, 5, "FP32 Active", U, "%", prof_fp32_active_pct),
	INFO_SAMPLE(PROFILING, 6, "FP16 Active", U, "%", prof_fp16_active_pct),
	INFO_STATIC(MEMORY, 3, "Bus Width", U, "bits", mem_bus_width_bits),
	INFO_STATIC(POWER, 2, "Requested Power Limit", WATTS, "", power_limit_mw),
	INFO_STATIC(POWER, 3, "Default Power Limit", WATTS, "", power_default_limit_mw),
	INFO_STATIC(POWER, 4, "Max Power Limit", WATTS, "", power_max_limit_mw),
	INFO_STATIC(CLOCKS, 2, "Max SM", U, "MHz", max_sm_clock_mhz),
	INFO_STATIC(CLOCKS, 3, "Max Memory", U, "MHz", max_mem_clock_mhz),
	INFO_STATIC(PCIE, 1, "Generation Max", U, "", pcie_gen_max),
	INFO_STATIC(PCIE, 3, "Link Width Max", LANES, "", pcie_width_max),
};
#undef INFO_SAMPLE
#undef INFO_STATIC

static u64v line_value(const struct info_line *l, const struct gpu_static *st, const struct gpu_sample *s)
{
	const char *base = l->of_static ? (const char *)st : (const char *)s;
	u64v v = *(const u64v *)(base + l->off);
	/* a sample without the memory total shows the one read with the static facts */
	if (!l->of_static && l->off == offsetof(struct gpu_sample, mem_total_bytes) && !VAL_HAS(v))
		v = st->mem_total_bytes;
	return v;
}

static const char *line_text(const struct info_line *l, u64v v, char *b, size_t n)
{
	if (!VAL_HAS(v))
		return why(v.st, false);
	switch (l->fmt) {
	case INFO_FMT_MIB: return fmt_mib(b, n, v, false);
	case INFO_FMT_WATTS: return fmt_w(b, n, v, false);
	case INFO_FMT_JOULES: snprintf(b, n, "%.3f J", (double)v.v / 1000.0); return b;
	case INFO_FMT_SECONDS: snprintf(b, n, "%.3f s", (double)v.v / 1e9); return b;
	case INFO_FMT_PSTATE: snprintf(b, n, "P%" PRIu64, v.v); return b;
	case INFO_FMT_REASONS: clk_evt_describe(v.v, b, n); return b;
	case INFO_FMT_YESNO: return v.v ? "Yes" : "No";
	case INFO_FMT_LANES: return fmt_width(b, n, v);
	default: return fmt_u(b, n, v, l->unit, false);
	}
}

static void detail_sample(FILE *out, const struct gpu_static *st, const struct gpu_sample *s)
{
	for (unsigned sec = 0; sec < INFO_SECTIONS; sec++) {
		section(out, section_names[sec]);
		for (unsigned rank = 0; rank < INFO_MAX_RANK; rank++) {
			const struct info_line *l = &info_lines[sec][rank];
			char b[128];
			if (l->label)
				kv(out, l->label, line_text(l, line_value(l, st, s), b, sizeof(b)));
		}
	}
}

static void detail_nvlink(FILE *out, const struct gpu_static *st, const struct gpu_sample *s)
{
	char b[320], v[16];
	section(out, "NVLink");
	if (!VAL_HAS(st->nvlink_count)) {
		kv(out, "Links", why(st->nvlink_count.st, false));
		return;
	}
	unsigned active = 0;
	for (unsigned l = 0; l < s->nvlink_n; l++)
		active += VAL_HAS(s->nvlink[l].active) && s->nvlink[l].active.v;
	if (s->nvlink_n)
		snprintf(b, sizeof(b), "%" PRIu64 " (%u active)", st->nvlink_count.v, active);
	else
		snprintf(b, sizeof(b), "%" PRIu64, st->nvlink_count.v);
	kv(out, "Links", b);
	for (unsigned l = 0; l < s->nvlink_n; l++) {
		const struct gpu_nvlink *k = &s->nvlink[l];
		char lab[32], e[4][24];
		snprintf(lab, sizeof(lab), "Link %u", l);
		snprintf(v, sizeof(v), "v%" PRIu64, k->version.v);
		snprintf(b, sizeof(b), "%s, %s, remote %s, errors CRC flit %s, CRC data %s, replay %s, recovery %s",
			 VAL_HAS(k->active) ? (k->active.v ? "Active" : "DOWN") : why(k->active.st, false),
			 VAL_HAS(k->version) ? v : "version n/s", fmt_busid(&k->remote_pci_bus_id),
			 fmt_u(e[0], sizeof(e[0]), k->crc_flit_errors, "", true),
			 fmt_u(e[1], sizeof(e[1]), k->crc_data_errors, "", true),
			 fmt_u(e[2], sizeof(e[2]), k->replay_errors, "", true),
			 fmt_u(e[3], sizeof(e[3]), k->recovery_errors, "", true));
		kv(out, lab, b);
	}
}

void info_text_detail(FILE *out, const struct snapshot *snap, uint64_t mask)
{
	char b[320]; /* a MIG line: profile, memory, SMs and a 96-byte UUID */
	for (unsigned i = 0; i < snap->n; i++) {
		if (!gpu_select_has(mask, i))
			continue;
		const struct gpu_view *v = &snap->gpu[i];
		text_line(out, "GPU %u  %s", i, fmt_str(&v->st.pci_bus_id));
		if (!v->up)
			text_line(out, "    DOWN: %s", v->last_error[0] ? v->last_error : "no answer");
		else if (v->last_error[0])
			text_line(out, "    partly read: %s", v->last_error);
		detail_static(out, &v->st);
		detail_sample(out, &v->st, &v->s);
		detail_nvlink(out, &v->st, &v->s);
		section(out, "Processes");
		if (v->nproc == 0)
			kv(out, "Running", "none");
		for (unsigned k = 0; k < v->nproc; k++) {
			const struct gpu_process *p = &v->procs[k];
			char lab[32], mem[48];
			snprintf(lab, sizeof(lab), "PID %u", p->pid);
			snprintf(b, sizeof(b), "%c %s, user %s, %s", p->type ? p->type : '?', p->name[0] ? p->name : "?",
				 p->user[0] ? p->user : "?", fmt_mib(mem, sizeof(mem), p->used_mem_bytes, false));
			kv(out, lab, b);
		}
		if (v->nmig) {
			section(out, "MIG Devices");
			for (unsigned k = 0; k < v->nmig; k++) {
				const struct gpu_mig *m = &v->mig[k];
				char lab[32], mem[48], sm[32];
				snprintf(lab, sizeof(lab), "GI %u / CI %u", m->gi_id, m->ci_id);
				snprintf(b, sizeof(b), "%s, %s, %s SMs, %s", m->profile,
					 fmt_mib(mem, sizeof(mem), m->mem_total_bytes, false),
					 fmt_u(sm, sizeof(sm), m->sm_count, "", false), m->uuid);
				kv(out, lab, b);
			}
		}
		fputc('\n', out);
	}
}

void info_text_table(FILE *out, const struct snapshot *snap, uint64_t mask)
{
	print_table(out, snap, mask);
	print_mig(out, snap, mask);
	print_processes(out, snap, mask);
	print_errors(out, snap, mask);
}
