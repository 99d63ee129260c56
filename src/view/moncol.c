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

/* The columns, in the order of the places the field table's COL(pos, ...)
 * and the rows below give them. MC_##moncol(member, group) pastes a row's
 * COL(...) into MC_COL(...)(member, group): MC_COL ends in MC_FIELD, which
 * takes the (member, group) that follows. */
#define MC_KIND_VALUE MONCOL_NUM
#define MC_KIND_RATE_PCT MONCOL_NUM
#define MC_KIND_PSTATE MONCOL_TEXT
#define MC_KIND_THROTTLE MONCOL_TEXT
#define MC_GET_VALUE get_value
#define MC_GET_RATE_PCT get_rate_pct
#define MC_GET_PSTATE get_pstate
#define MC_GET_THROTTLE get_throttle
#define MC_ROW(member, group, unit, api_key, role, metric, type, labels, help, series, nvml_read, nvml_field, sim, \
	       moncol, info) \
	MC_##moncol(member, group)
#define MC_NOCOL(member, group)
#define MC_COL(pos, name, key, unit, grp, width, calc, factor, help) \
	[pos] = { name, key, unit, grp, MC_KIND_##calc, width, 0, help, MC_GET_##calc, .scale = factor, MC_FIELD_##calc
#define MC_FIELD(member, group) .field = offsetof(struct gpu_sample, member), .groups = GPU_GRP_##group },
/* a column that shows the value as it is has the value's sample key, and so
 * has pstate ("P0" in text and CSV, the sample's integer in JSON) */
#define MC_FIELD_VALUE(member, group) .sample_key = #member, MC_FIELD(member, group)
#define MC_FIELD_RATE_PCT MC_FIELD
#define MC_FIELD_PSTATE MC_FIELD_VALUE
#define MC_FIELD_THROTTLE MC_FIELD
#define NUM MONCOL_NUM
const struct moncol moncols[] = {
	GPU_SAMPLE_FIELDS(MC_ROW)
	[10] = { "fbpct", "fb_used_pct", "%", 'm', NUM, 5, 0, "GPU memory used, share of total", get_fbpct, 0, 1,
		 GPU_GRP_BASIC, NULL },
	[16] = { "nvrx", "nvlink_rx_mbs", "MB/s", 'n', NUM, 7, 0, "NVLink receive throughput, all links", get_nvrx, 0,
		 1e-6, GPU_GRP_NVLINK | GPU_GRP_NVLINK_ERR, NULL },
	[17] = { "nvtx", "nvlink_tx_mbs", "MB/s", 'n', NUM, 7, 0, "NVLink transmit throughput, all links", get_nvtx, 0,
		 1e-6, GPU_GRP_NVLINK | GPU_GRP_NVLINK_ERR, NULL },
};
#undef NUM
#undef MC_ROW
#undef MC_NOCOL
#undef MC_COL
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
