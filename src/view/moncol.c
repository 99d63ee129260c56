/* SPDX-License-Identifier: Apache-2.0 */
/* moncol.c - monitoring columns: values out of GPU views, selection, rows. */
#include "moncol.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/suggest.h"
#include "core/units.h"
#include "json_util.h"

/* ---- getters ---- */

static u64v field_of(const struct moncol *c, const struct gpu_sample *s)
{
	return *(const u64v *)((const char *)s + c->field);
}

/* A rate column's counter in a reading (the current one made a rate base too). */
static u64v rate_field(const struct moncol *c, const struct gpu_rate_base *b)
{
	return gpu_rate_base_field(b, c->field);
}

/* Rate of a cumulative slow-group counter per second (times scale), between
 * the two readings sampler_rate_base names (the sampler may read the counter
 * only every few ticks: never over one tick of carried values). */
static void set_rate(u64v (*counter)(const struct moncol *, const struct gpu_rate_base *), const struct moncol *col,
		     const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *out)
{
	struct gpu_rate_base now, room;
	gpu_rate_base_set(&now, &c->s);
	u64v cur = counter(col, &now);
	if (cur.st != VAL_OK) {
		out->st = cur.st;
		return;
	}
	out->st = VAL_UNKNOWN;
	double dt_s;
	const struct gpu_rate_base *base = sampler_rate_base(c, p, &room, &dt_s);
	u64v prev = base ? counter(col, base) : (u64v){ 0 };
	if (!base || prev.st != VAL_OK || cur.v < prev.v)
		return;
	out->num = (double)(cur.v - prev.v) / dt_s * col->scale;
	out->st = VAL_OK;
}

/* The field table's columns (calc VALUE, RATE_PCT, PSTATE, THROTTLE). */
static void get_value(const struct moncol *col, const struct gpu_view *c, const struct gpu_view *p,
		      struct moncol_value *o)
{
	(void)p;
	u64v v = field_of(col, &c->s);
	o->st = v.st;
	if (v.st == VAL_OK)
		o->num = (double)v.v * col->scale;
}

/* A nanosecond counter's growth as a percentage of the interval (throttled time). */
static void get_rate_pct(const struct moncol *col, const struct gpu_view *c, const struct gpu_view *p,
			 struct moncol_value *o)
{
	set_rate(rate_field, col, c, p, o);
	if (o->st == VAL_OK && o->num > 100.0)
		o->num = 100.0;
}

/* A text column's field: its status in o, true with its value when it has one. */
static bool text_field(const struct moncol *col, const struct gpu_view *c, struct moncol_value *o, uint64_t *v)
{
	u64v f = field_of(col, &c->s);
	o->st = f.st;
	*v = f.v;
	return f.st == VAL_OK;
}

static void get_pstate(const struct moncol *col, const struct gpu_view *c, const struct gpu_view *p,
		       struct moncol_value *o)
{
	(void)p;
	uint64_t v;
	if (text_field(col, c, o, &v))
		snprintf(o->text, sizeof(o->text), "P%u", (unsigned)(v % 100));
}

static void get_throttle(const struct moncol *col, const struct gpu_view *c, const struct gpu_view *p,
			 struct moncol_value *o)
{
	(void)p;
	uint64_t v;
	if (text_field(col, c, o, &v))
		moncol_throttle_short(v, o->text, sizeof(o->text));
}

/* moncol.c's own columns: values that are not one field */
static void get_fbpct(const struct moncol *col, const struct gpu_view *c, const struct gpu_view *p,
		      struct moncol_value *o)
{
	(void)col;
	(void)p;
	u64v used = c->s.mem_used_bytes, total = c->s.mem_total_bytes;
	if (used.st != VAL_OK || total.st != VAL_OK) {
		o->st = used.st != VAL_OK ? used.st : total.st;
		return;
	}
	o->st = total.v ? VAL_OK : VAL_ERROR;
	o->num = total.v ? 100.0 * (double)used.v / (double)total.v : 0;
}

/* Sum of a per-link byte counter over the links that report it. */
static u64v nvlink_sum(const struct gpu_rate_base *s, bool tx)
{
	u64v sum = { 0, VAL_UNSUPPORTED };
	for (unsigned i = 0; i < s->nvlink_n && i < GPU_MAX_NVLINKS; i++) {
		u64v b = tx ? s->nvlink[i].tx_bytes : s->nvlink[i].rx_bytes;
		if (b.st == VAL_ERROR && sum.st != VAL_OK)
			sum.st = VAL_ERROR;
		if (b.st != VAL_OK)
			continue;
		sum.v += b.v;
		sum.st = VAL_OK;
	}
	return sum;
}
static u64v nvlink_tx(const struct moncol *col, const struct gpu_rate_base *s)
{
	(void)col;
	return nvlink_sum(s, true);
}
static u64v nvlink_rx(const struct moncol *col, const struct gpu_rate_base *s)
{
	(void)col;
	return nvlink_sum(s, false);
}
static void get_nvtx(const struct moncol *col, const struct gpu_view *c, const struct gpu_view *p,
		     struct moncol_value *o)
{
	set_rate(nvlink_tx, col, c, p, o);
}
static void get_nvrx(const struct moncol *col, const struct gpu_view *c, const struct gpu_view *p,
		     struct moncol_value *o)
{
	set_rate(nvlink_rx, col, c, p, o);
}

/* The columns, in order: a field's column is FCOL(member, name, key, unit,
 * grp, width, calc, scale, help), keyed by its member in the field table
 * (device/gpu_fields.h), which gives its offset and sampler group; name,
 * key, unit, grp (dmon -s's letter, 0: --columns only), width and help as
 * struct moncol says; calc: VALUE (value * scale), RATE_PCT (a nanosecond
 * counter's growth per second * scale: a share of the interval, at most
 * 100), PSTATE ("P0"), THROTTLE (moncol_throttle_short). The others are
 * values that are not one field. */
#define MC_GROUP(member, group, ...) MC_GRP_##member = GPU_GRP_##group,
enum mc_field_group { GPU_SAMPLE_FIELDS(MC_GROUP) };
#undef MC_GROUP
#define MC_KIND_VALUE MONCOL_NUM
#define MC_KIND_RATE_PCT MONCOL_NUM
#define MC_KIND_PSTATE MONCOL_TEXT
#define MC_KIND_THROTTLE MONCOL_TEXT
#define MC_GET_VALUE get_value
#define MC_GET_RATE_PCT get_rate_pct
#define MC_GET_PSTATE get_pstate
#define MC_GET_THROTTLE get_throttle
#define FCOL(member, name, key, unit, grp, width, calc, factor, help) \
	{ name, key, unit, grp, MC_KIND_##calc, width, 0, help, MC_GET_##calc, .scale = factor, MC_FIELD_##calc(member) }
#define MC_FIELD(member) .field = offsetof(struct gpu_sample, member), .groups = MC_GRP_##member
/* a column that shows the value as it is has the value's sample key, and so
 * has pstate ("P0" in text and CSV, the sample's integer in JSON) */
#define MC_FIELD_VALUE(member) .sample_key = #member, MC_FIELD(member)
#define MC_FIELD_RATE_PCT MC_FIELD
#define MC_FIELD_PSTATE MC_FIELD_VALUE
#define MC_FIELD_THROTTLE MC_FIELD
#define NUM MONCOL_NUM
const struct moncol moncols[] = {
	FCOL(power_mw, "pwr", "power_w", "W", 'p', 6, VALUE, 1e-3, "power draw"),
	FCOL(temp_c, "gtemp", "gpu_temp_c", "C", 'p', 5, VALUE, 1, "GPU temperature"),
	FCOL(temp_mem_c, "mtemp", "mem_temp_c", "C", 'p', 5, VALUE, 1, "memory (HBM) temperature"),
	FCOL(util_gpu_pct, "sm", "sm_util_pct", "%", 'u', 4, VALUE, 1, "GPU (SM) utilization"),
	FCOL(util_mem_pct, "mem", "mem_util_pct", "%", 'u', 4, VALUE, 1, "memory controller utilization"),
	FCOL(mem_clock_mhz, "mclk", "mem_clock_mhz", "MHz", 'c', 5, VALUE, 1, "memory clock"),
	FCOL(sm_clock_mhz, "pclk", "sm_clock_mhz", "MHz", 'c', 5, VALUE, 1, "SM clock"),
	FCOL(viol_power_ns, "pviol", "power_viol_pct", "%", 'v', 5, RATE_PCT, 100.0 / 1e9, "share of the interval throttled for power"),
	FCOL(viol_thermal_ns, "tviol", "thermal_viol_pct", "%", 'v', 5, RATE_PCT, 100.0 / 1e9,
	     "share of the interval throttled for temperature"),
	FCOL(mem_used_bytes, "fb", "fb_used_mib", "MiB", 'm', 7, VALUE, 1.0 / 1048576, "GPU memory used"),
	{ "fbpct", "fb_used_pct", "%", 'm', NUM, 5, 0, "GPU memory used, share of total", get_fbpct, 0, 1,
		 GPU_GRP_BASIC, NULL },
	FCOL(ecc_vol_corrected, "sbecc", "ecc_corrected", "errs", 'e', 5, VALUE, 1, "corrected ECC errors since driver load"),
	FCOL(ecc_vol_uncorrected, "dbecc", "ecc_uncorrected", "errs", 'e', 5, VALUE, 1, "uncorrected ECC errors since driver load"),
	FCOL(pcie_replays, "pci", "pcie_replays", "errs", 'e', 5, VALUE, 1, "PCIe replays"),
	FCOL(pcie_rx_kbps, "rxpci", "pcie_rx_mbs", "MB/s", 't', 6, VALUE, 1024.0 / 1e6, "PCIe receive throughput"),
	FCOL(pcie_tx_kbps, "txpci", "pcie_tx_mbs", "MB/s", 't', 6, VALUE, 1024.0 / 1e6, "PCIe transmit throughput"),
	{ "nvrx", "nvlink_rx_mbs", "MB/s", 'n', NUM, 7, 0, "NVLink receive throughput, all links", get_nvrx, 0,
		 1e-6, GPU_GRP_NVLINK | GPU_GRP_NVLINK_ERR, NULL },
	{ "nvtx", "nvlink_tx_mbs", "MB/s", 'n', NUM, 7, 0, "NVLink transmit throughput, all links", get_nvtx, 0,
		 1e-6, GPU_GRP_NVLINK | GPU_GRP_NVLINK_ERR, NULL },
	FCOL(pstate, "pst", "pstate", "", 's', 3, PSTATE, 1, "performance state"),
	FCOL(clock_event_reasons, "thr", "throttle", "", 's', 8, THROTTLE, 1, "main clock-event (throttle) reason, + if more"),
	FCOL(power_limit_mw, "plim", "power_limit_w", "W", 0, 5, VALUE, 1e-3, "power limit (--columns only)"),
	FCOL(energy_mj, "energy", "energy_j", "J", 0, 10, VALUE, 1e-3, "energy since driver load (--columns only)"),
	FCOL(pcie_l0_recoveries, "prcv", "pcie_recoveries", "errs", 0, 5, VALUE, 1, "PCIe link recoveries (--columns only)"),
	FCOL(prof_sm_active_pct, "smact", "sm_active_pct", "%", 'g', 5, VALUE, 1, "SM activity: share of SMs busy, time-averaged (GPM)"),
	FCOL(prof_sm_occupancy_pct, "smocc", "sm_occupancy_pct", "%", 'g', 5, VALUE, 1, "SM occupancy: resident warps over the maximum (GPM)"),
	FCOL(prof_tensor_active_pct, "tensor", "tensor_active_pct", "%", 'g', 6, VALUE, 1, "tensor pipe activity, any type (GPM)"),
	FCOL(prof_dram_active_pct, "dram", "dram_active_pct", "%", 'g', 5, VALUE, 1, "DRAM activity: memory bandwidth used over the peak (GPM)"),
	FCOL(prof_fp64_active_pct, "fp64", "fp64_active_pct", "%", 'g', 5, VALUE, 1, "FP64 pipe activity (GPM)"),
	FCOL(prof_fp32_active_pct, "fp32", "fp32_active_pct", "%", 'g', 5, VALUE, 1, "FP32 pipe activity (GPM)"),
	FCOL(prof_fp16_active_pct, "fp16", "fp16_active_pct", "%", 'g', 5, VALUE, 1, "FP16 pipe activity (GPM)"),
	FCOL(prof_pcie_tx_kbps, "gpcitx", "gpm_pcie_tx_mbs", "MB/s", 0, 7, VALUE, 1024.0 / 1e6, "PCIe transmit throughput, GPM (--columns only)"),
	FCOL(prof_pcie_rx_kbps, "gpcirx", "gpm_pcie_rx_mbs", "MB/s", 0, 7, VALUE, 1024.0 / 1e6, "PCIe receive throughput, GPM (--columns only)"),
	FCOL(prof_nvlink_tx_kbps, "gnvtx", "gpm_nvlink_tx_mbs", "MB/s", 0, 7, VALUE, 1024.0 / 1e6, "NVLink transmit throughput, all links, GPM (--columns only)"),
	FCOL(prof_nvlink_rx_kbps, "gnvrx", "gpm_nvlink_rx_mbs", "MB/s", 0, 7, VALUE, 1024.0 / 1e6, "NVLink receive throughput, all links, GPM (--columns only)"),
};
#undef NUM
#undef FCOL
#undef MC_FIELD
#undef MC_FIELD_VALUE
#undef MC_FIELD_RATE_PCT
#undef MC_FIELD_PSTATE
#undef MC_FIELD_THROTTLE
const unsigned moncol_count = sizeof(moncols) / sizeof(moncols[0]);

/* ---- selection ---- */

const struct moncol *moncol_find(const char *name)
{
	for (unsigned i = 0; name && i < moncol_count; i++)
		if (!strcasecmp(moncols[i].name, name) || !strcasecmp(moncols[i].key, name))
			return &moncols[i];
	return NULL;
}

/* "unknown column 'x' (did you mean 'y'?); columns: a, b, ..." */
static void unknown_column(const char *w, char *err, size_t errlen)
{
	struct suggest near = SUGGEST_INIT(w);
	char names[1024] = "", hint[200];
	size_t used = 0;
	for (unsigned i = 0; i < moncol_count; i++) {
		suggest_consider(&near, moncols[i].name);
		int k = snprintf(names + used, sizeof(names) - used, "%s%s", i ? "," : "", moncols[i].name);
		if (k > 0 && (size_t)k < sizeof(names) - used)
			used += (size_t)k;
	}
	char q[41];
	snprintf(err, errlen, "unknown column '%s'%s; columns: %s", units_quoted(w, q),
		 suggest_text(&near, hint, sizeof(hint)), names);
}

static int add_col(const struct moncol **out, unsigned *n, unsigned max, const struct moncol *c, char *err, size_t errlen)
{
	for (unsigned i = 0; i < *n; i++)
		if (out[i] == c)
			return 0;
	if (*n >= max) {
		snprintf(err, errlen, "more than %u columns", max);
		return -1;
	}
	out[(*n)++] = c;
	return 0;
}

int moncol_select(const char *groups, const char *columns, const struct moncol **out, unsigned max,
		  char *err, size_t errlen)
{
	unsigned n = 0;
	if (!groups && !columns)
		groups = MONCOL_DEFAULT_GROUPS;
	if (groups && !*groups) {
		snprintf(err, errlen, "empty group list");
		return -1;
	}
	for (const char *g = groups; g && *g; g++) {
		if (*g == ',' )
			continue;
		char lc = (char)tolower((unsigned char)*g);
		if (!strchr(MONCOL_GROUPS, lc)) {
			snprintf(err, errlen, "unknown group '%c' (groups: %s)", *g, MONCOL_GROUPS);
			return -1;
		}
	}
	/* groups in table order, whatever order they were given in */
	for (unsigned i = 0; groups && i < moncol_count; i++)
		if (moncols[i].group && strchr(groups, moncols[i].group) &&
		    add_col(out, &n, max, &moncols[i], err, errlen))
			return -1;
	if (columns) {
		char buf[512];
		if (strlen(columns) >= sizeof(buf) || !*columns) {
			snprintf(err, errlen, "bad column list '%.40s'", columns);
			return -1;
		}
		strcpy(buf, columns);
		for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
			const struct moncol *c = moncol_find(w);
			if (!c) {
				unknown_column(w, err, errlen);
				return -1;
			}
			if (add_col(out, &n, max, c, err, errlen))
				return -1;
		}
	}
	if (n == 0) {
		snprintf(err, errlen, "no column selected");
		return -1;
	}
	return (int)n;
}

unsigned moncol_sampler_groups(const struct moncol *const *cols, unsigned n)
{
	unsigned g = GPU_GRP_BASIC;
	for (unsigned i = 0; i < n; i++)
		g |= cols[i]->groups; /* energy costs a read of its own: only when shown */
	return g;
}

/* ---- values ---- */

void moncol_eval(const struct moncol *c, const struct gpu_view *cur, const struct gpu_view *prev,
		 struct moncol_value *out)
{
	memset(out, 0, sizeof(*out));
	if (!cur->up) {
		out->st = VAL_ERROR;
		return;
	}
	/* a previous view of a down GPU gives no rate */
	c->get(c, cur, prev && prev->up ? prev : NULL, out);
}

void moncol_format(const struct moncol *c, const struct moncol_value *v, char *out, size_t outlen)
{
	switch (v->st) {
	case VAL_OK:
		if (c->kind == MONCOL_TEXT)
			snprintf(out, outlen, "%s", v->text);
		else if (c->decimals == 0) /* llround, as JSON's integers: 312.5 -> 313 both ways */
			snprintf(out, outlen, "%lld", llround(v->num));
		else
			snprintf(out, outlen, "%.*f", (int)c->decimals, v->num);
		break;
	case VAL_UNSUPPORTED: snprintf(out, outlen, "n/a"); break;
	case VAL_ERROR: snprintf(out, outlen, "ERR"); break;
	default: snprintf(out, outlen, "-"); break;
	}
}

void moncol_throttle_short(uint64_t bits, char *out, size_t outlen)
{
	/* most telling first: hardware limits, then thermal, power, the rest */
	static const struct { uint64_t bit; const char *word; } order[] = {
		{ CLK_EVT_HW_SLOWDOWN, "hwslow" }, { CLK_EVT_HW_THERMAL, "hwtherm" },
		{ CLK_EVT_HW_POWER_BRAKE, "pbrake" }, { CLK_EVT_SW_THERMAL, "swtherm" },
		{ CLK_EVT_SW_POWER_CAP, "pwrcap" }, { CLK_EVT_SYNC_BOOST, "sync" },
		{ CLK_EVT_APP_CLOCKS, "appclk" }, { CLK_EVT_DISPLAY_CLOCKS, "disp" },
		{ CLK_EVT_GPU_IDLE, "idle" },
	};
	const char *first = NULL;
	unsigned count = 0;
	uint64_t known = 0;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		known |= order[i].bit;
		if (bits & order[i].bit) {
			count++;
			if (!first)
				first = order[i].word;
		}
	}
	if (bits & ~known)
		count++;
	if (!first)
		first = count ? "other" : "none";
	snprintf(out, outlen, "%s%s", first, count > 1 ? "+" : "");
}

/* ---- rows ---- */

static const char *reason(enum val_status st)
{
	return st == VAL_UNSUPPORTED ? "not supported" : st == VAL_ERROR ? "error" : "not ready";
}

void monrow_header(const struct monrow_ctx *rc, FILE *out)
{
	if (rc->fmt == MONFMT_JSON)
		return;
	if (rc->fmt == MONFMT_CSV) {
		fputs("timestamp,gpu,uuid", out);
		for (unsigned i = 0; i < rc->ncols; i++)
			fprintf(out, ",%s", rc->cols[i]->key);
		fputs(",simulated\n", out);
		return;
	}
	for (int line = 0; line < 2; line++) {
		fputc('#', out);
		if (rc->show_date)
			fprintf(out, "%-8s ", line ? "YYYYMMDD" : "Date");
		if (rc->show_time)
			fprintf(out, "%-8s ", line ? "HH:MM:SS" : "Time");
		fprintf(out, "%4s", line ? "Idx" : "gpu");
		for (unsigned i = 0; i < rc->ncols; i++) {
			const struct moncol *c = rc->cols[i];
			fprintf(out, " %*s", (int)c->width, line ? c->unit : c->name);
		}
		fputc('\n', out);
	}
}

static void csv_row(const struct monrow_ctx *rc, const struct gpu_view *cur, const struct gpu_view *prev,
		    unsigned gpu, const char *iso_ts, FILE *out)
{
	/* UUIDs hold no comma or quote; anything else is left out rather than quoted */
	const char *uuid = cur->st.uuid.st == VAL_OK && !strpbrk(cur->st.uuid.s, ",\"\n") ? cur->st.uuid.s : "";
	fprintf(out, "%s,%u,%s", iso_ts, gpu, uuid);
	for (unsigned i = 0; i < rc->ncols; i++) {
		struct moncol_value v;
		char cell[32];
		moncol_eval(rc->cols[i], cur, prev, &v);
		if (v.st == VAL_UNKNOWN)
			cell[0] = '\0';
		else if (v.st == VAL_OK)
			moncol_format(rc->cols[i], &v, cell, sizeof(cell));
		else
			snprintf(cell, sizeof(cell), "%s", v.st == VAL_UNSUPPORTED ? "N/A" : "ERR");
		fprintf(out, ",%s", cell);
	}
	fprintf(out, ",%s\n", rc->simulated ? "true" : "false");
}

static void json_row(const struct monrow_ctx *rc, const struct gpu_view *cur, const struct gpu_view *prev,
		     unsigned gpu, const char *iso_ts, uint64_t ts_ns, FILE *out)
{
	json_t *o = json_object(), *unavail = json_object();
	json_object_set_new(o, "timestamp", json_string(iso_ts));
	json_object_set_new(o, "timestamp_ns", json_integer((json_int_t)(ts_ns & INT64_MAX)));
	json_object_set_new(o, "gpu", json_integer(gpu));
	if (cur->st.uuid.st == VAL_OK)
		json_object_set_new(o, "uuid", json_string(cur->st.uuid.s));
	json_object_set_new(o, "up", json_boolean(cur->up));
	json_object_set_new(o, "simulated", json_boolean(rc->simulated));
	/* a sample value under its --json key, as it is (pstate the sample's
	 * integer); a derived column (a rate, a share, throttle's word) under its
	 * own key (docs/dmon.md). One name, one meaning and type in every output:
	 * the column keys of sample values (power_w, fb_used_mib) went in issue 35. */
	for (unsigned i = 0; i < rc->ncols; i++) {
		const struct moncol *c = rc->cols[i];
		const char *key = c->sample_key ? c->sample_key : c->key;
		struct moncol_value v;
		moncol_eval(c, cur, prev, &v);
		if (v.st != VAL_OK)
			json_object_set_new(unavail, key, json_string(reason(v.st)));
		else if (c->sample_key)
			json_object_set_new(o, key, json_u64(field_of(c, &cur->s).v));
		else if (c->kind == MONCOL_TEXT)
			json_object_set_new(o, key, json_string(v.text));
		else if (c->decimals == 0)
			json_object_set_new(o, key, json_integer((json_int_t)llround(v.num)));
		else
			json_object_set_new(o, key, json_real(v.num));
	}
	json_object_set_new(o, "unavailable", unavail);
	json_dumpf(o, out, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_DIGITS);
	fputc('\n', out);
	json_decref(o);
}

void monrow_print(const struct monrow_ctx *rc, const struct gpu_view *cur, const struct gpu_view *prev,
		  unsigned gpu, const char *date, const char *time, const char *iso_ts, uint64_t ts_ns,
		  FILE *out)
{
	if (rc->fmt == MONFMT_CSV) {
		csv_row(rc, cur, prev, gpu, iso_ts, out);
		return;
	}
	if (rc->fmt == MONFMT_JSON) {
		json_row(rc, cur, prev, gpu, iso_ts, ts_ns, out);
		return;
	}
	fputc(' ', out);
	if (rc->show_date)
		fprintf(out, "%-8s ", date ? date : "-");
	if (rc->show_time)
		fprintf(out, "%-8s ", time ? time : "-");
	fprintf(out, "%4u", gpu);
	for (unsigned i = 0; i < rc->ncols; i++) {
		struct moncol_value v;
		char cell[32];
		moncol_eval(rc->cols[i], cur, prev, &v);
		moncol_format(rc->cols[i], &v, cell, sizeof(cell));
		fprintf(out, " %*s", (int)rc->cols[i]->width, cell);
	}
	fputc('\n', out);
}
