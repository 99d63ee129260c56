/* SPDX-License-Identifier: Apache-2.0 */
/* top_model.c - history, processes, layout and text pieces for `gpuctl top`. */
#include "top_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- history ---- */

static float pct_of(u64v part, u64v whole)
{
	if (part.st != VAL_OK || whole.st != VAL_OK || whole.v == 0)
		return NAN;
	return (float)(100.0 * (double)part.v / (double)whole.v);
}

void top_hist_push_view(struct top_hist *h, const struct gpu_view *v)
{
	float util = NAN, mem = NAN, pwr = NAN;
	if (v->up) {
		if (v->s.util_gpu_pct.st == VAL_OK)
			util = (float)v->s.util_gpu_pct.v;
		mem = pct_of(v->s.mem_used_bytes, v->s.mem_total_bytes);
		pwr = pct_of(v->s.power_mw, v->s.power_limit_mw);
	}
	h->v[TOP_SER_UTIL][h->head] = util;
	h->v[TOP_SER_MEM][h->head] = mem;
	h->v[TOP_SER_POWER][h->head] = pwr;
	h->head = (h->head + 1) % TOP_HIST;
	if (h->n < TOP_HIST)
		h->n++;
}

float top_hist_get(const struct top_hist *h, enum top_series s, unsigned age)
{
	if (age >= h->n || (unsigned)s >= TOP_SER_COUNT)
		return NAN;
	return h->v[s][(h->head + TOP_HIST - 1 - age) % TOP_HIST];
}

/* ---- processes ---- */

const char *top_sort_name(enum top_sort k)
{
	static const char *const names[TOP_SORT_COUNT] = { "memory", "pid", "gpu", "user", "command" };
	return (unsigned)k < TOP_SORT_COUNT ? names[k] : "?";
}

unsigned top_procs_collect(const struct snapshot *s, uint64_t mask, struct top_proc *out, unsigned max)
{
	unsigned n = 0;
	for (unsigned g = 0; g < s->n && g < GPU_MAX_GPUS; g++) {
		const struct gpu_view *v = &s->gpu[g];
		if (!(mask >> g & 1u) || !v->up)
			continue;
		for (unsigned i = 0; i < v->nproc && i < GPU_MAX_PROCS && n < max; i++) {
			const struct gpu_process *p = &v->procs[i];
			struct top_proc *o = &out[n++];
			o->gpu = g;
			o->pid = p->pid;
			snprintf(o->user, sizeof(o->user), "%s", p->user[0] ? p->user : "?");
			snprintf(o->name, sizeof(o->name), "%s", p->name[0] ? p->name : "?");
			o->mem_bytes = p->used_mem_bytes;
			o->type = p->type;
		}
	}
	return n;
}

static enum top_sort sort_key;
static bool sort_reverse;

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_proc(const void *pa, const void *pb)
{
	const struct top_proc *a = pa, *b = pb;
	int c = 0;
	switch (sort_key) {
	case TOP_SORT_MEM: {
		/* largest first; unknown sizes last */
		uint64_t ma = a->mem_bytes.st == VAL_OK ? a->mem_bytes.v + 1 : 0;
		uint64_t mb = b->mem_bytes.st == VAL_OK ? b->mem_bytes.v + 1 : 0;
		c = cmp_u64(mb, ma);
		break;
	}
	case TOP_SORT_PID: c = cmp_u64(a->pid, b->pid); break;
	case TOP_SORT_GPU: c = cmp_u64(a->gpu, b->gpu); break;
	case TOP_SORT_USER: c = strcasecmp(a->user, b->user); break;
	case TOP_SORT_NAME: c = strcasecmp(a->name, b->name); break;
	default: break;
	}
	if (sort_reverse)
		c = -c;
	if (!c)
		c = cmp_u64(a->gpu, b->gpu);
	if (!c)
		c = cmp_u64(a->pid, b->pid);
	return c;
}

void top_procs_sort(struct top_proc *p, unsigned n, enum top_sort key, bool reverse)
{
	/* qsort has no context argument in C11; top sorts from one thread */
	sort_key = key;
	sort_reverse = reverse;
	qsort(p, n, sizeof(*p), cmp_proc);
}

unsigned top_procs_filter_user(struct top_proc *p, unsigned n, const char *user)
{
	if (!user || !user[0])
		return n;
	unsigned k = 0;
	for (unsigned i = 0; i < n; i++)
		if (strcmp(p[i].user, user) == 0)
			p[k++] = p[i];
	return k;
}

double top_cpu_pct(uint64_t cpu0_ticks, uint64_t cpu1_ticks, double dt_s, long clk_tck)
{
	if (!(dt_s > 0) || clk_tck <= 0 || cpu1_ticks < cpu0_ticks)
		return NAN;
	return 100.0 * (double)(cpu1_ticks - cpu0_ticks) / (double)clk_tck / dt_s;
}

double top_runtime_s(uint64_t start_ticks, double uptime_s, long clk_tck)
{
	if (clk_tck <= 0)
		return NAN;
	double s = uptime_s - (double)start_ticks / (double)clk_tck;
	return s >= 0 ? s : NAN;
}

void top_fmt_runtime(double s, char *out, size_t outlen)
{
	if (isnan(s) || s < 0) {
		snprintf(out, outlen, "-");
		return;
	}
	unsigned long long t = (unsigned long long)s;
	unsigned long long d = t / 86400, h = t / 3600 % 24, m = t / 60 % 60, sec = t % 60;
	if (d)
		snprintf(out, outlen, "%llu-%02llu:%02llu:%02llu", d, h, m, sec);
	else if (h)
		snprintf(out, outlen, "%02llu:%02llu:%02llu", h, m, sec);
	else
		snprintf(out, outlen, "%02llu:%02llu", m, sec);
}

void top_summary_compute(const struct snapshot *s, const unsigned *shown, unsigned nshown, struct top_summary *out)
{
	double pw = 0, lim = 0, util = 0, used = 0, total = 0;
	unsigned npw = 0, nlim = 0, nutil = 0, nmem = 0;
	memset(out, 0, sizeof(*out));
	out->ngpus = nshown;
	for (unsigned k = 0; k < nshown; k++) {
		const struct gpu_view *v = &s->gpu[shown[k]];
		if (!v->up) {
			out->down++;
			continue;
		}
		if (v->s.power_mw.st == VAL_OK) {
			pw += (double)v->s.power_mw.v / 1000.0;
			npw++;
		}
		if (v->s.power_limit_mw.st == VAL_OK) {
			lim += (double)v->s.power_limit_mw.v / 1000.0;
			nlim++;
		}
		if (v->s.util_gpu_pct.st == VAL_OK) {
			util += (double)v->s.util_gpu_pct.v;
			nutil++;
		}
		if (v->s.mem_used_bytes.st == VAL_OK && v->s.mem_total_bytes.st == VAL_OK) {
			used += (double)v->s.mem_used_bytes.v;
			total += (double)v->s.mem_total_bytes.v;
			nmem++;
		}
	}
	out->power_w = npw ? pw : NAN;
	out->limit_w = nlim ? lim : NAN;
	out->util_pct = nutil ? util / nutil : NAN;
	out->mem_used = nmem ? used : NAN;
	out->mem_total = nmem ? total : NAN;
}

/* ---- layout ---- */

void top_layout_choose(unsigned ngpus, unsigned rows, unsigned cols, bool charts, struct top_layout *out)
{
	memset(out, 0, sizeof(*out));
	out->header_rows = 2;
	const unsigned footer = 1;
	if (rows < TOP_MIN_ROWS || cols < TOP_MIN_COLS) {
		out->too_small = true;
		return;
	}
	unsigned avail = rows - out->header_rows - footer;
	const unsigned min_procs = 4; /* header line and three processes */
	/* a chart needs 5 rows (title and 4 of plot) */
	const unsigned chart_min = charts ? 5 : 0;
	if (ngpus == 0)
		ngpus = 1;
	/* the most detailed kind that fits with the charts and a process list */
	if (2 * ngpus + chart_min + min_procs <= avail && ngpus <= 8) {
		out->kind = TOP_PANELS;
		out->gpu_rows = 2 * ngpus;
	} else if (ngpus + chart_min + min_procs <= avail) {
		out->kind = TOP_LINES;
		out->gpu_rows = ngpus;
	} else {
		/* cells of TOP_GRID_CELL characters, or the narrow ones when those do not fit */
		out->kind = TOP_GRID;
		for (unsigned w = TOP_GRID_CELL; ; w = TOP_GRID_CELL_NARROW) {
			out->cell_width = w;
			out->grid_cols = cols / w ? cols / w : 1;
			out->gpu_rows = (ngpus + out->grid_cols - 1) / out->grid_cols;
			if (out->gpu_rows + min_procs <= avail || w == TOP_GRID_CELL_NARROW)
				break;
		}
		if (out->gpu_rows + min_procs > avail) {
			/* still too many: the GPU area scrolls to keep the selected GPU in view */
			out->gpu_rows = avail - min_procs;
			out->gpu_scroll = true;
		}
	}
	/* the charts take half of what is left over the smallest process list, 5 to 12 rows */
	unsigned spare = avail - out->gpu_rows - min_procs;
	unsigned chart = 0;
	if (charts && spare >= 5)
		chart = spare / 2 < 5 ? 5 : spare / 2 > 12 ? 12 : spare / 2;
	out->chart_rows = chart;
	out->proc_rows = avail - out->gpu_rows - chart;
}

/* ---- text pieces ---- */

void top_bar(char *out, size_t outlen, unsigned width, double frac)
{
	if (outlen == 0)
		return;
	if (width >= outlen)
		width = (unsigned)outlen - 1;
	unsigned fill = 0;
	if (!isnan(frac)) {
		if (frac < 0)
			frac = 0;
		if (frac > 1)
			frac = 1;
		fill = (unsigned)lround(frac * width);
	}
	for (unsigned i = 0; i < width; i++)
		out[i] = i < fill ? '|' : ' ';
	out[width] = '\0';
}

unsigned top_chart_eighths(float pct, unsigned row, unsigned rows)
{
	if (isnan(pct) || rows == 0 || row >= rows)
		return 0;
	if (pct < 0)
		pct = 0;
	if (pct > 100)
		pct = 100;
	/* height in eighths of a cell, counted from the bottom */
	long total = lroundf(pct / 100.0f * (float)(rows * 8));
	long below = (long)(rows - 1 - row) * 8;
	long here = total - below;
	return here <= 0 ? 0 : here >= 8 ? 8 : (unsigned)here;
}

void top_fmt_bytes(uint64_t bytes, char *out, size_t outlen)
{
	static const char units[] = "KMGTP";
	double v = (double)bytes / 1024.0;
	unsigned u = 0;
	while (v >= 1000.0 && u + 1 < sizeof(units) - 1) {
		v /= 1024.0;
		u++;
	}
	if (v < 10.0 && u > 0)
		snprintf(out, outlen, "%.1f%c", v, units[u]);
	else
		snprintf(out, outlen, "%.0f%c", v, units[u]);
}

void top_fmt_rate(double mbs, char *out, size_t outlen)
{
	if (isnan(mbs) || mbs < 0) {
		snprintf(out, outlen, "-");
		return;
	}
	if (mbs < 0.5)
		snprintf(out, outlen, "0M");
	else if (mbs < 1000.0)
		snprintf(out, outlen, "%.0fM", mbs);
	else if (mbs < 100000.0)
		snprintf(out, outlen, "%.1fG", mbs / 1000.0);
	else
		snprintf(out, outlen, "%.0fG", mbs / 1000.0);
}

void top_model_name(const struct gpu_static *st, char *out, size_t outlen)
{
	if (st->catalog_model.st == VAL_OK && st->catalog_model.s[0]) {
		snprintf(out, outlen, "%s", st->catalog_model.s);
		return;
	}
	if (st->name.st != VAL_OK) {
		snprintf(out, outlen, "?");
		return;
	}
	const char *n = st->name.s;
	static const char *const prefixes[] = { "NVIDIA ", "Tesla ", "GeForce " };
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(n, prefixes[i], strlen(prefixes[i])) == 0)
			n += strlen(prefixes[i]);
	snprintf(out, outlen, "%s", n);
}

unsigned top_sampler_groups(void)
{
	return GPU_GRP_ALL & ~(GPU_GRP_ENERGY | GPU_GRP_VIOL | GPU_GRP_NVLINK_ERR);
}

unsigned top_slow_every(uint64_t interval_ns)
{
	if (!interval_ns || interval_ns >= 5000000000ull)
		return 1;
	return (unsigned)(5000000000ull / interval_ns);
}
