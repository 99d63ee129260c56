/* moncol.c - monitoring columns: values out of GPU views, selection, rows. */
#include "moncol.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MIB_D 1048576.0

/* ---- getters ---- */

static void set_u64(u64v v, double scale, struct moncol_value *out)
{
	out->st = v.st;
	if (v.st == VAL_OK)
		out->num = (double)v.v * scale;
}

/* Rate of a cumulative slow-group counter per second (times scale), between
 * the two readings sampler_rate_base names (the sampler may read the counter
 * only every few ticks: never over one tick of carried values). */
static void set_rate(u64v (*counter)(const struct gpu_sample *), const struct gpu_view *c, const struct gpu_view *p,
		     double scale, struct moncol_value *out)
{
	u64v cur = counter(&c->s);
	if (cur.st != VAL_OK) {
		out->st = cur.st;
		return;
	}
	out->st = VAL_UNKNOWN;
	double dt_s;
	const struct gpu_sample *base = sampler_rate_base(c, p, &dt_s);
	u64v prev = base ? counter(base) : (u64v){ 0 };
	if (!base || prev.st != VAL_OK || cur.v < prev.v)
		return;
	out->num = (double)(cur.v - prev.v) / dt_s * scale;
	out->st = VAL_OK;
}

static void get_power(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	(void)p;
	set_u64(c->s.power_mw, 1e-3, o);
}
static void get_power_limit(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	(void)p;
	set_u64(c->s.power_limit_mw, 1e-3, o);
}
static void get_energy(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	(void)p;
	set_u64(c->s.energy_mj, 1e-3, o);
}
static void get_gtemp(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	(void)p;
	set_u64(c->s.temp_c, 1, o);
}
static void get_mtemp(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	(void)p;
	set_u64(c->s.temp_mem_c, 1, o);
}
static void get_sm(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	(void)p;
	set_u64(c->s.util_gpu_pct, 1, o);
}
static void get_mem(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	(void)p;
	set_u64(c->s.util_mem_pct, 1, o);
}
static void get_mclk(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	(void)p;
	set_u64(c->s.mem_clock_mhz, 1, o);
}
static void get_pclk(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	(void)p;
	set_u64(c->s.sm_clock_mhz, 1, o);
}
static u64v viol_power(const struct gpu_sample *s) { return s->viol_power_ns; }
static u64v viol_thermal(const struct gpu_sample *s) { return s->viol_thermal_ns; }

/* Throttled time as a percentage of the interval. */
static void get_pviol(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	set_rate(viol_power, c, p, 100.0 / 1e9, o);
	if (o->st == VAL_OK && o->num > 100.0)
		o->num = 100.0;
}
static void get_tviol(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	set_rate(viol_thermal, c, p, 100.0 / 1e9, o);
	if (o->st == VAL_OK && o->num > 100.0)
		o->num = 100.0;
}
static void get_fb(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	(void)p;
	set_u64(c->s.mem_used_bytes, 1.0 / MIB_D, o);
}
static void get_fbpct(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	(void)p;
	u64v used = c->s.mem_used_bytes, total = c->s.mem_total_bytes;
	if (used.st != VAL_OK || total.st != VAL_OK) {
		o->st = used.st != VAL_OK ? used.st : total.st;
		return;
	}
	o->st = total.v ? VAL_OK : VAL_ERROR;
	o->num = total.v ? 100.0 * (double)used.v / (double)total.v : 0;
}
static void get_sbecc(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	(void)p;
	set_u64(c->s.ecc_vol_corrected, 1, o);
}
static void get_dbecc(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	(void)p;
	set_u64(c->s.ecc_vol_uncorrected, 1, o);
}
static void get_replay(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	(void)p;
	set_u64(c->s.pcie_replays, 1, o);
}
/* NVML reports PCIe throughput in KiB/s; columns are MB/s (decimal). */
static void get_rxpci(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	(void)p;
	set_u64(c->s.pcie_rx_kbps, 1024.0 / 1e6, o);
}
static void get_txpci(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	(void)p;
	set_u64(c->s.pcie_tx_kbps, 1024.0 / 1e6, o);
}

/* Sum of a per-link byte counter over the links that report it. */
static u64v nvlink_sum(const struct gpu_sample *s, bool tx)
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
static u64v nvlink_tx(const struct gpu_sample *s) { return nvlink_sum(s, true); }
static u64v nvlink_rx(const struct gpu_sample *s) { return nvlink_sum(s, false); }
static void get_nvtx(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	set_rate(nvlink_tx, c, p, 1e-6, o);
}
static void get_nvrx(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	set_rate(nvlink_rx, c, p, 1e-6, o);
}
static void get_pstate(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	(void)p;
	o->st = c->s.pstate.st;
	if (o->st == VAL_OK)
		snprintf(o->text, sizeof(o->text), "P%u", (unsigned)(c->s.pstate.v % 100));
}
static void get_throttle(const struct gpu_view *c, const struct gpu_view *p, struct moncol_value *o)
{
	(void)p;
	o->st = c->s.clock_event_reasons.st;
	if (o->st == VAL_OK)
		moncol_throttle_short(c->s.clock_event_reasons.v, o->text, sizeof(o->text));
}

#define NUM MONCOL_NUM
#define TXT MONCOL_TEXT
const struct moncol moncols[] = {
	{ "pwr", "power_w", "W", 'p', NUM, 6, 0, "power draw", get_power },
	{ "gtemp", "gpu_temp_c", "C", 'p', NUM, 5, 0, "GPU temperature", get_gtemp },
	{ "mtemp", "mem_temp_c", "C", 'p', NUM, 5, 0, "memory (HBM) temperature", get_mtemp },
	{ "sm", "sm_util_pct", "%", 'u', NUM, 4, 0, "GPU (SM) utilization", get_sm },
	{ "mem", "mem_util_pct", "%", 'u', NUM, 4, 0, "memory controller utilization", get_mem },
	{ "mclk", "mem_clock_mhz", "MHz", 'c', NUM, 5, 0, "memory clock", get_mclk },
	{ "pclk", "sm_clock_mhz", "MHz", 'c', NUM, 5, 0, "SM clock", get_pclk },
	{ "pviol", "power_viol_pct", "%", 'v', NUM, 5, 0, "share of the interval throttled for power", get_pviol },
	{ "tviol", "thermal_viol_pct", "%", 'v', NUM, 5, 0, "share of the interval throttled for temperature", get_tviol },
	{ "fb", "fb_used_mib", "MiB", 'm', NUM, 7, 0, "GPU memory used", get_fb },
	{ "fbpct", "fb_used_pct", "%", 'm', NUM, 5, 0, "GPU memory used, share of total", get_fbpct },
	{ "sbecc", "ecc_corrected", "errs", 'e', NUM, 5, 0, "corrected ECC errors since driver load", get_sbecc },
	{ "dbecc", "ecc_uncorrected", "errs", 'e', NUM, 5, 0, "uncorrected ECC errors since driver load", get_dbecc },
	{ "pci", "pcie_replays", "errs", 'e', NUM, 5, 0, "PCIe replays", get_replay },
	{ "rxpci", "pcie_rx_mbs", "MB/s", 't', NUM, 6, 0, "PCIe receive throughput", get_rxpci },
	{ "txpci", "pcie_tx_mbs", "MB/s", 't', NUM, 6, 0, "PCIe transmit throughput", get_txpci },
	{ "nvrx", "nvlink_rx_mbs", "MB/s", 'n', NUM, 7, 0, "NVLink receive throughput, all links", get_nvrx },
	{ "nvtx", "nvlink_tx_mbs", "MB/s", 'n', NUM, 7, 0, "NVLink transmit throughput, all links", get_nvtx },
	{ "pst", "pstate", "", 's', TXT, 3, 0, "performance state", get_pstate },
	{ "thr", "throttle", "", 's', TXT, 8, 0, "main clock-event (throttle) reason, + if more", get_throttle },
	{ "plim", "power_limit_w", "W", 0, NUM, 5, 0, "power limit (--columns only)", get_power_limit },
	{ "energy", "energy_j", "J", 0, NUM, 10, 0, "energy since driver load (--columns only)", get_energy },
};
#undef NUM
#undef TXT
const unsigned moncol_count = sizeof(moncols) / sizeof(moncols[0]);

/* ---- selection ---- */

const struct moncol *moncol_find(const char *name)
{
	for (unsigned i = 0; name && i < moncol_count; i++)
		if (!strcasecmp(moncols[i].name, name) || !strcasecmp(moncols[i].key, name))
			return &moncols[i];
	return NULL;
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
				snprintf(err, errlen, "unknown column '%s'", w);
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
	for (unsigned i = 0; i < n; i++) {
		switch (cols[i]->group) {
		case 'v': g |= GPU_GRP_VIOL; break;
		case 'e': g |= GPU_GRP_ECC | GPU_GRP_PCIE; break;
		case 't': g |= GPU_GRP_PCIE; break;
		case 'n': g |= GPU_GRP_NVLINK | GPU_GRP_NVLINK_ERR; break;
		default: break;
		}
		if (cols[i]->get == get_energy)
			g |= GPU_GRP_ENERGY; /* costs a read of its own: only when shown */
	}
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
	c->get(cur, prev && prev->up ? prev : NULL, out);
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
	for (unsigned i = 0; i < rc->ncols; i++) {
		const struct moncol *c = rc->cols[i];
		struct moncol_value v;
		moncol_eval(c, cur, prev, &v);
		if (v.st != VAL_OK)
			json_object_set_new(unavail, c->key, json_string(reason(v.st)));
		else if (c->kind == MONCOL_TEXT)
			json_object_set_new(o, c->key, json_string(v.text));
		else if (c->decimals == 0)
			json_object_set_new(o, c->key, json_integer((json_int_t)llround(v.num)));
		else
			json_object_set_new(o, c->key, json_real(v.num));
	}
	json_object_set_new(o, "unavailable", unavail);
	json_dumpf(o, out, JSON_COMPACT | JSON_PRESERVE_ORDER);
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
