/* SPDX-License-Identifier: Apache-2.0 */
/*
 * top_draw.c - drawing the `gpuctl top` screen with ncurses: title, GPU area
 * (panels, lines or grid, as core/top_model chose), history charts, the
 * process list, the bottom line and the help box. Reads struct top_ui only.
 */
#include <curses.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "top_ui.h"
#include "core/abuf.h"
#include "view/json_util.h"
#include "view/moncol.h"

enum { PAIR_OK = 1, PAIR_WARN, PAIR_BAD, PAIR_HEAD, PAIR_SIM };

/* A row being written left to right that never runs past its right edge. */
struct pen {
	int y, x, maxx;
	bool full;
};

static void penf(struct pen *p, attr_t attr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void penf(struct pen *p, attr_t attr, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	term_clean(buf, sizeof(buf), buf); /* a model, an error, a server's name: no escapes, no line breaks */
	int len = (int)strlen(buf);
	if (p->full || p->x + len > p->maxx) {
		p->full = true; /* a field that does not fit whole is left out, with all after it */
		return;
	}
	attr_t old = 0;
	short pair = 0;
	attr_get(&old, &pair, NULL);
	attrset(attr);
	mvaddstr(p->y, p->x, buf);
	attrset(old);
	p->x += len;
}

static attr_t level_attr(const struct top_ui *ui, double pct)
{
	if (!ui->color || isnan(pct))
		return A_NORMAL;
	return COLOR_PAIR(pct >= 90 ? PAIR_BAD : pct >= 70 ? PAIR_WARN : PAIR_OK);
}

static double u64_or_nan(u64v v, double scale)
{
	return v.st == VAL_OK ? (double)v.v * scale : NAN;
}

/* A column's value as a number (NAN when not known), through the dmon columns. */
static double colval(const struct top_ui *ui, unsigned g, const char *name)
{
	const struct moncol *c = moncol_find(name);
	struct moncol_value v;
	moncol_eval(c, &ui->w.snap->gpu[g], ui->have_prev ? &ui->prev->gpu[g] : NULL, &v);
	return v.st == VAL_OK ? v.num : NAN;
}

/* The throttle reason as a short word; true when it is a real limit (not idle). */
static bool throttle_word(const struct gpu_view *v, char *t, size_t n)
{
	if (v->s.clock_event_reasons.st != VAL_OK) {
		snprintf(t, n, "n/a");
		return false;
	}
	moncol_throttle_short(v->s.clock_event_reasons.v, t, n);
	return strcmp(t, "none") && strcmp(t, "idle");
}

/* Receive and transmit rates of a pair of columns ("rxpci"/"txpci"), formatted. */
static void rate_pair(const struct top_ui *ui, unsigned g, const char *rx, const char *tx, char *a, char *b, size_t n)
{
	top_fmt_rate(colval(ui, g, rx), a, n);
	top_fmt_rate(colval(ui, g, tx), b, n);
}

static void fmt_num(char *out, size_t n, double v, const char *unit)
{
	if (isnan(v))
		snprintf(out, n, "n/a");
	else
		snprintf(out, n, "%.0f%s", v, unit);
}

static void draw_bar(struct pen *p, const struct top_ui *ui, const char *label, unsigned width, double pct,
		     const char *text)
{
	char bar[128];
	top_bar(bar, sizeof(bar), width, isnan(pct) ? NAN : pct / 100.0);
	penf(p, A_BOLD, "%s[", label);
	penf(p, level_attr(ui, pct), "%s", bar);
	penf(p, A_NORMAL, "%s]", text);
}

/* The first line of a GPU: index, model, utilization and memory bars, temperature, power. */
static void gpu_line(struct top_ui *ui, unsigned g, int y, int maxx, unsigned barw, bool detail_right)
{
	const struct gpu_view *v = &ui->w.snap->gpu[g];
	struct pen p = { y, 0, maxx, false };
	char model[24];
	top_model_name(&v->st, model, sizeof(model));
	bool sel = ui->nshown && ui->shown[ui->gpu_sel] == g;
	penf(&p, sel ? A_REVERSE : A_BOLD, "%2u", g);
	penf(&p, A_NORMAL, " %-14.14s ", model);
	if (!v->up) {
		penf(&p, ui->color ? COLOR_PAIR(PAIR_BAD) | A_BOLD : A_BOLD, "DOWN: %s", v->last_error[0] ? v->last_error : "no answer");
		return;
	}
	char t[48], used[12], total[12];
	double util = u64_or_nan(v->s.util_gpu_pct, 1);
	fmt_num(used, sizeof(used), util, "%");
	snprintf(t, sizeof(t), "%4s", used);
	draw_bar(&p, ui, "GPU", barw, util, t);
	double mem_pct = colval(ui, g, "fbpct");
	if (v->s.mem_used_bytes.st == VAL_OK && v->s.mem_total_bytes.st == VAL_OK) {
		top_fmt_bytes(v->s.mem_used_bytes.v, used, sizeof(used));
		top_fmt_bytes(v->s.mem_total_bytes.v, total, sizeof(total));
		snprintf(t, sizeof(t), "%5s/%-5s", used, total);
	} else {
		snprintf(t, sizeof(t), "%11s", "n/a");
	}
	draw_bar(&p, ui, " MEM", barw, mem_pct, t);
	double temp = u64_or_nan(v->s.temp_c, 1), pw = u64_or_nan(v->s.power_mw, 1e-3);
	double lim = u64_or_nan(v->s.power_limit_mw, 1e-3);
	fmt_num(t, sizeof(t), temp, "C");
	double slow = u64_or_nan(v->s.temp_slowdown_c, 1);
	penf(&p, level_attr(ui, isnan(slow) || isnan(temp) ? NAN : 100.0 * temp / slow), " %4s", t);
	if (isnan(pw))
		snprintf(t, sizeof(t), "n/a");
	else if (isnan(lim))
		snprintf(t, sizeof(t), "%.0fW", pw);
	else
		snprintf(t, sizeof(t), "%.0f/%.0fW", pw, lim);
	penf(&p, level_attr(ui, isnan(lim) || isnan(pw) ? NAN : 100.0 * pw / lim), " %9s", t);
	if (!detail_right)
		return;
	/* the rest, while it fits: clocks, throttle reason, PCIe and NVLink traffic */
	char a[12], b[12];
	fmt_num(a, sizeof(a), u64_or_nan(v->s.sm_clock_mhz, 1), "");
	fmt_num(b, sizeof(b), u64_or_nan(v->s.mem_clock_mhz, 1), "");
	penf(&p, A_NORMAL, " %4s/%4sMHz", a, b);
	bool thr = throttle_word(v, t, sizeof(t));
	penf(&p, thr && ui->color ? COLOR_PAIR(PAIR_WARN) | A_BOLD : A_NORMAL, " %-8s", t);
	rate_pair(ui, g, "rxpci", "txpci", a, b, sizeof(a));
	penf(&p, A_NORMAL, " PCIe %5s/%-5s", a, b);
	if (v->s.nvlink_n) {
		rate_pair(ui, g, "nvrx", "nvtx", a, b, sizeof(a));
		penf(&p, A_NORMAL, " NVL %5s/%-5s", a, b);
	}
}

/* The profiling figures (GPM, Hopper and later) where the GPU has them:
 * how busy the SMs, tensor cores and memory really were. */
static void gpm_fragment(const struct gpu_view *v, struct pen *p)
{
	if (v->s.prof_sm_active_pct.st != VAL_OK)
		return;
	char a[12], b[12], c[12], d[12];
	fmt_num(a, sizeof(a), u64_or_nan(v->s.prof_sm_active_pct, 1), "%");
	fmt_num(b, sizeof(b), u64_or_nan(v->s.prof_sm_occupancy_pct, 1), "%");
	fmt_num(c, sizeof(c), u64_or_nan(v->s.prof_tensor_active_pct, 1), "%");
	fmt_num(d, sizeof(d), u64_or_nan(v->s.prof_dram_active_pct, 1), "%");
	penf(p, A_NORMAL, "  GPM SM %s occ %s tensor %s DRAM %s", a, b, c, d);
}

/* The second line of a panel: clocks, P-state, throttle reasons in full, links, ECC, GPM. */
static void gpu_detail_line(struct top_ui *ui, unsigned g, int y, int maxx)
{
	const struct gpu_view *v = &ui->w.snap->gpu[g];
	struct pen p = { y, 4, maxx, false };
	if (!v->up)
		return;
	char a[12], b[12], reasons[96];
	fmt_num(a, sizeof(a), u64_or_nan(v->s.sm_clock_mhz, 1), "");
	fmt_num(b, sizeof(b), u64_or_nan(v->s.mem_clock_mhz, 1), "");
	penf(&p, A_NORMAL, "SM %s MHz  MEM %s MHz", a, b);
	if (v->s.pstate.st == VAL_OK)
		penf(&p, A_NORMAL, "  P%u", (unsigned)v->s.pstate.v);
	/* in full here: "SW Power Cap, HW Slowdown" as nvidia-smi -q names them */
	bool thr = throttle_word(v, reasons, sizeof(reasons));
	if (v->s.clock_event_reasons.st == VAL_OK)
		clk_evt_describe(v->s.clock_event_reasons.v, reasons, sizeof(reasons));
	penf(&p, thr && ui->color ? COLOR_PAIR(PAIR_WARN) | A_BOLD : A_NORMAL, "  clocks limited by: %s", reasons);
	rate_pair(ui, g, "rxpci", "txpci", a, b, sizeof(a));
	if (v->s.pcie_gen.st == VAL_OK && v->s.pcie_width.st == VAL_OK)
		penf(&p, A_NORMAL, "  PCIe Gen%u x%u rx %s/s tx %s/s", (unsigned)v->s.pcie_gen.v,
		     (unsigned)v->s.pcie_width.v, a, b);
	else
		penf(&p, A_NORMAL, "  PCIe rx %s/s tx %s/s", a, b);
	if (v->s.nvlink_n) {
		unsigned up = 0;
		for (unsigned i = 0; i < v->s.nvlink_n && i < GPU_MAX_NVLINKS; i++)
			up += v->s.nvlink[i].active.st == VAL_OK && v->s.nvlink[i].active.v;
		rate_pair(ui, g, "nvrx", "nvtx", a, b, sizeof(a));
		penf(&p, up < v->s.nvlink_n && ui->color ? COLOR_PAIR(PAIR_BAD) : A_NORMAL,
		     "  NVLink %u/%u up rx %s/s tx %s/s", up, v->s.nvlink_n, a, b);
	}
	if (v->nmig)
		penf(&p, A_NORMAL, "  MIG %u instance%s", v->nmig, v->nmig == 1 ? "" : "s");
	if (v->s.ecc_vol_uncorrected.st == VAL_OK)
		penf(&p, v->s.ecc_vol_uncorrected.v && ui->color ? COLOR_PAIR(PAIR_BAD) : A_NORMAL,
		     "  ECC unc %llu", (unsigned long long)v->s.ecc_vol_uncorrected.v);
	gpm_fragment(v, &p);
}

static void grid_cell(struct top_ui *ui, unsigned g, int y, int x, unsigned width)
{
	const struct gpu_view *v = &ui->w.snap->gpu[g];
	struct pen p = { y, x, x + (int)width - 1, false };
	bool sel = ui->nshown && ui->shown[ui->gpu_sel] == g;
	penf(&p, sel ? A_REVERSE : A_BOLD, "%2u", g);
	if (!v->up) {
		penf(&p, ui->color ? COLOR_PAIR(PAIR_BAD) | A_BOLD : A_BOLD, " DOWN");
		return;
	}
	double util = u64_or_nan(v->s.util_gpu_pct, 1), mem = colval(ui, g, "fbpct");
	char t[16];
	fmt_num(t, sizeof(t), util, "%");
	penf(&p, level_attr(ui, util), " %4s", t);
	if (width >= TOP_GRID_CELL) {
		fmt_num(t, sizeof(t), mem, "%");
		penf(&p, level_attr(ui, mem), " m%4s", t);
	}
	fmt_num(t, sizeof(t), u64_or_nan(v->s.temp_c, 1), "C");
	penf(&p, A_NORMAL, " %4s", t);
	if (width >= TOP_GRID_CELL) {
		fmt_num(t, sizeof(t), u64_or_nan(v->s.power_mw, 1e-3), "W");
		penf(&p, A_NORMAL, " %5s", t);
		if (throttle_word(v, t, sizeof(t)))
			penf(&p, ui->color ? COLOR_PAIR(PAIR_WARN) | A_BOLD : A_BOLD, " !");
	}
}

static void draw_gpus(struct top_ui *ui, const struct top_layout *L, int y0, int cols)
{
	if (L->kind == TOP_GRID) {
		unsigned first_row = 0, sel_row = ui->gpu_sel / L->grid_cols;
		if (L->gpu_scroll && sel_row >= L->gpu_rows)
			first_row = sel_row - L->gpu_rows + 1;
		for (unsigned k = first_row * L->grid_cols; k < ui->nshown; k++) {
			unsigned row = k / L->grid_cols - first_row;
			if (row >= L->gpu_rows)
				break;
			grid_cell(ui, ui->shown[k], y0 + (int)row, (int)((k % L->grid_cols) * L->cell_width), L->cell_width);
		}
		return;
	}
	/* bars share what the fixed fields leave: about 114 columns with every field */
	int fixed = L->kind == TOP_PANELS ? 64 : 114;
	int barw = (cols - fixed) / 2;
	barw = barw < 5 ? 5 : barw > 40 ? 40 : barw;
	for (unsigned k = 0; k < ui->nshown; k++) {
		unsigned g = ui->shown[k];
		if (L->kind == TOP_PANELS) {
			gpu_line(ui, g, y0 + 2 * (int)k, cols, (unsigned)barw, false);
			gpu_detail_line(ui, g, y0 + 2 * (int)k + 1, cols);
		} else {
			gpu_line(ui, g, y0 + (int)k, cols, (unsigned)barw, true);
		}
	}
}

static void draw_chart(struct top_ui *ui, int y0, unsigned rows, int cols)
{
	if (!ui->nshown || rows < 2)
		return;
	unsigned g = ui->shown[ui->gpu_sel];
	const struct top_hist *h = &ui->hist[g];
	int half = cols / 2;
	const char *titles[2] = { "utilization", "memory used" };
	enum top_series ser[2] = { TOP_SER_UTIL, TOP_SER_MEM };
	/* eighths of a cell, bottom up */
	static const char *const blocks[9] = { " ", "\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588" };
	static const char ascii[9] = { ' ', '.', '.', '_', '_', 'o', 'o', '#', '#' };
	unsigned plot = rows - 1;
	for (int c = 0; c < 2; c++) {
		int x0 = c * half, width = half - 7;
		if (width < 10)
			return;
		float now = top_hist_get(h, ser[c], 0);
		char t[64];
		if (isnan(now))
			snprintf(t, sizeof(t), "GPU %u %s n/a", g, titles[c]);
		else
			snprintf(t, sizeof(t), "GPU %u %s %.0f%%", g, titles[c], now);
		attron(ui->color ? COLOR_PAIR(PAIR_HEAD) : A_BOLD);
		mvaddnstr(y0, x0, t, half - 1);
		attroff(ui->color ? COLOR_PAIR(PAIR_HEAD) : A_BOLD);
		for (unsigned r = 0; r < plot; r++) {
			mvprintw(y0 + 1 + (int)r, x0, "%4s |", r == 0 ? "100" : r == plot - 1 ? "0" : "");
			for (int x = 0; x < width; x++) {
				float v = top_hist_get(h, ser[c], (unsigned)(width - 1 - x));
				unsigned e = top_chart_eighths(v, r, plot);
				attrset(level_attr(ui, v));
				if (ui->utf8)
					mvaddstr(y0 + 1 + (int)r, x0 + 6 + x, blocks[e]);
				else
					mvaddch(y0 + 1 + (int)r, x0 + 6 + x, (chtype)ascii[e]);
				attrset(A_NORMAL);
			}
		}
	}
}

static void draw_procs(struct top_ui *ui, int y0, unsigned rows, int cols)
{
	if (rows < 1)
		return;
	char head[160];
	snprintf(head, sizeof(head), "%3s %8s %-12s %7s %s  %-20s   sorted by %s%s", "GPU", "PID", "USER", "MEM",
		 "T", "COMMAND", top_sort_name(ui->sort), ui->reverse ? " (reversed)" : "");
	attron(ui->color ? COLOR_PAIR(PAIR_HEAD) | A_BOLD : A_REVERSE);
	mvaddnstr(y0, 0, head, cols);
	for (int x = (int)strlen(head); x < cols; x++)
		mvaddch(y0, x, ' ');
	attroff(ui->color ? COLOR_PAIR(PAIR_HEAD) | A_BOLD : A_REVERSE);
	unsigned vis = rows - 1;
	ui->proc_rows_shown = vis;
	if (ui->nproc == 0) {
		if (vis)
			mvaddnstr(y0 + 1, 0, "no processes on the shown GPUs", cols);
		return;
	}
	if (ui->proc_sel < ui->proc_top)
		ui->proc_top = ui->proc_sel;
	if (vis && ui->proc_sel >= ui->proc_top + vis)
		ui->proc_top = ui->proc_sel - vis + 1;
	for (unsigned r = 0; r < vis && ui->proc_top + r < ui->nproc; r++) {
		const struct top_proc *p = &ui->procs[ui->proc_top + r];
		char mem[12], line[192];
		if (p->mem_bytes.st == VAL_OK)
			top_fmt_bytes(p->mem_bytes.v, mem, sizeof(mem));
		else
			snprintf(mem, sizeof(mem), "n/a");
		snprintf(line, sizeof(line), "%3u %8u %-12.12s %7s %c  %s", p->gpu, p->pid, p->user, mem,
			 p->type ? p->type : '?', p->name);
		term_clean(line, sizeof(line), line); /* /proc/PID/comm: any user sets it */
		bool sel = ui->proc_top + r == ui->proc_sel;
		if (sel)
			attron(A_REVERSE);
		mvaddnstr(y0 + 1 + (int)r, 0, line, cols);
		if (sel) {
			for (int x = (int)strlen(line); x < cols; x++)
				mvaddch(y0 + 1 + (int)r, x, ' ');
			attroff(A_REVERSE);
		}
	}
}

static void draw_title(struct top_ui *ui, int cols)
{
	const struct gpu_system *sys = &ui->w.snap->sys;
	struct pen p = { 0, 0, cols, false };
	if (ui->ctx->sys.simulated)
		penf(&p, ui->color ? COLOR_PAIR(PAIR_SIM) | A_BOLD : A_REVERSE | A_BOLD, "SIMULATED");
	penf(&p, A_BOLD, "%sgpuctl top", p.x ? " " : "");
	penf(&p, A_NORMAL, "  %s", ui->ctx->sys.server_name[0] ? ui->ctx->sys.server_name :
		sys->hostname.st == VAL_OK ? sys->hostname.s : "?");
	if (sys->driver_version.st == VAL_OK)
		penf(&p, A_NORMAL, "  driver %s", sys->driver_version.s);
	if (sys->cuda_driver_version.st == VAL_OK)
		penf(&p, A_NORMAL, "  CUDA %s", sys->cuda_driver_version.s);
	char clock[16];
	time_t now = time(NULL);
	struct tm lt;
	localtime_r(&now, &lt);
	strftime(clock, sizeof(clock), "%H:%M:%S", &lt);
	penf(&p, A_NORMAL, "  %s  every %.1f s", clock, (double)ui->interval_ns / 1e9);

	/* summary: power, utilization and memory over the GPUs that report them */
	struct top_summary sum;
	top_summary_compute(ui->w.snap, ui->shown, ui->nshown, &sum);
	struct pen q = { 1, 0, cols, false };
	penf(&q, A_NORMAL, "%u GPU%s", ui->nshown, ui->nshown == 1 ? "" : "s");
	if (sum.down)
		penf(&q, ui->color ? COLOR_PAIR(PAIR_BAD) | A_BOLD : A_BOLD, " (%u down)", sum.down);
	char a[16], b[16];
	fmt_num(a, sizeof(a), sum.power_w, "");
	fmt_num(b, sizeof(b), sum.limit_w, " W");
	penf(&q, A_NORMAL, "  power %s/%s", a, b);
	fmt_num(a, sizeof(a), sum.util_pct, "%");
	penf(&q, A_NORMAL, "  util avg %s", a);
	if (!isnan(sum.mem_total)) {
		top_fmt_bytes((uint64_t)sum.mem_used, a, sizeof(a));
		top_fmt_bytes((uint64_t)sum.mem_total, b, sizeof(b));
		penf(&q, A_NORMAL, "  memory %s/%s", a, b);
	} else {
		penf(&q, A_NORMAL, "  memory n/a");
	}
	penf(&q, A_NORMAL, "  %u process%s", ui->nproc, ui->nproc == 1 ? "" : "es");
}

static void draw_bottom(struct top_ui *ui, int y, int cols)
{
	char line[256];
	const struct top_proc *k = &ui->kill_target;
	if (ui->mode == TOP_MODE_PICK_SIGNAL)
		snprintf(line, sizeof(line), "signal for pid %u (%s): t TERM  k KILL  i INT  h HUP  Esc cancel", k->pid, k->name);
	else if (ui->mode == TOP_MODE_CONFIRM)
		snprintf(line, sizeof(line), "send %s to pid %u (%s, GPU %u)? y/n", top_signal_name(ui->kill_sig),
			 k->pid, k->name, k->gpu);
	else if (ui->msg[0])
		snprintf(line, sizeof(line), "%s", ui->msg);
	else
		snprintf(line, sizeof(line), "q quit  ? help  s sort  r reverse  k kill  \u2190\u2192 GPU  \u2191\u2193 process  c charts");
	attron(ui->mode != TOP_MODE_NORMAL ? A_REVERSE | A_BOLD : A_NORMAL);
	if (!ui->utf8 && ui->mode == TOP_MODE_NORMAL && !ui->msg[0])
		snprintf(line, sizeof(line), "q quit  ? help  s sort  r reverse  k kill  <> GPU  up/down process  c charts");
	term_clean(line, sizeof(line), line); /* the process's name */
	mvaddnstr(y, 0, line, cols);
	attroff(A_REVERSE | A_BOLD);
}

static void draw_help(int rows, int cols)
{
	static const char *const lines[] = {
		"gpuctl top - keys",
		"",
		"  q, Q         quit (Esc closes this help)",
		"  ?            this help",
		"  up/down      select a process (PgUp/PgDn, Home/End)",
		"  left/right   the GPU the history charts follow ([ and ] too)",
		"  s            sort processes by: memory, pid, gpu, user, command",
		"  r            reverse the sort order",
		"  k, F9        send a signal to the selected process (asks first)",
		"  c            show or hide the history charts",
		"",
		"  GPU line: utilization, memory used/total, temperature,",
		"  power/limit, SM/memory clocks, throttle reason (+: more than one),",
		"  PCIe and NVLink rx/tx per second; n/a: not supported",
		"  grid cells: index, util %, memory %, temperature, power, ! throttled",
	};
	int n = (int)(sizeof(lines) / sizeof(lines[0])), w = 74;
	if (w > cols - 2)
		w = cols - 2;
	int y0 = (rows - n - 2) / 2, x0 = (cols - w) / 2;
	if (y0 < 0)
		y0 = 0;
	for (int i = -1; i <= n; i++) {
		move(y0 + 1 + i, x0);
		for (int x = 0; x < w; x++)
			addch(i == -1 || i == n ? '-' : (x == 0 || x == w - 1) ? '|' : ' ');
		if (i >= 0 && i < n)
			mvaddnstr(y0 + 1 + i, x0 + 2, lines[i], w - 4);
	}
}

void top_draw(struct top_ui *ui)
{
	int rows, cols;
	getmaxyx(stdscr, rows, cols);
	erase();
	struct top_layout L;
	top_layout_choose(ui->nshown, (unsigned)rows, (unsigned)cols, ui->charts, &L);
	if (L.too_small) {
		mvaddnstr(0, 0, "gpuctl top: terminal too small (q quits)", cols);
		if (ui->ctx->sys.simulated)
			mvaddnstr(1, 0, "SIMULATED", cols);
		refresh();
		return;
	}
	draw_title(ui, cols);
	int y = (int)L.header_rows;
	draw_gpus(ui, &L, y, cols);
	y += (int)L.gpu_rows;
	if (L.chart_rows) {
		draw_chart(ui, y, L.chart_rows, cols);
		y += (int)L.chart_rows;
	}
	draw_procs(ui, y, L.proc_rows, cols);
	draw_bottom(ui, rows - 1, cols);
	if (ui->help)
		draw_help(rows, cols);
	refresh();
}
