/* SPDX-License-Identifier: Apache-2.0 */
/*
 * top_batch.c - `gpuctl top --once` and `-b/--batch [-n N]`: the screen's
 * GPUs and processes as plain text on stdout, one frame per refresh, no
 * terminal needed (like `top -b -n 1` and `nvitop --once`). Each process
 * also gets its host side from /proc: CPU % of one core, resident memory
 * and how long it has run (docs/top.md, "Batch mode").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "top_ui.h"
#include "core/proc_stat.h"

/* The CPU time of a process at the last frame, for the next frame's CPU %. */
struct host_prev {
	uint32_t pid;
	uint64_t start_ticks, cpu_ticks, mono_ns;
};

struct host_state {
	struct host_prev *prev, *cur;
	unsigned nprev, ncur;
	long clk_tck, page;
};

static double read_uptime(void)
{
	FILE *f = fopen("/proc/uptime", "r");
	double up = NAN;
	if (f) {
		if (fscanf(f, "%lf", &up) != 1)
			up = NAN;
		fclose(f);
	}
	return up;
}

/* CPU %, resident bytes and runtime of one process from /proc, or false.
 * CPU % is over the time since the last frame when that frame saw the same
 * process, else its average since it started (as ps's %CPU). */
static bool host_of(struct host_state *h, uint32_t pid, double uptime, uint64_t mono, double *cpu, double *rss,
		    double *run)
{
	struct proc_stat ps;
	if (proc_stat_read((int)pid, &ps))
		return false;
	uint64_t ticks = ps.utime_ticks + ps.stime_ticks;
	*run = top_runtime_s(ps.start_ticks, uptime, h->clk_tck);
	*cpu = top_cpu_pct(0, ticks, *run, h->clk_tck);
	for (unsigned i = 0; i < h->nprev; i++)
		if (h->prev[i].pid == pid && h->prev[i].start_ticks == ps.start_ticks)
			*cpu = top_cpu_pct(h->prev[i].cpu_ticks, ticks, (double)(mono - h->prev[i].mono_ns) / 1e9,
					   h->clk_tck);
	*rss = (double)ps.rss_pages * (double)h->page;
	if (h->ncur < TOP_MAX_PROCS)
		h->cur[h->ncur++] = (struct host_prev){ pid, ps.start_ticks, ticks, mono };
	return true;
}

/* v with `decimals` decimals and a suffix ("%", "C"), or "-" when unknown */
static void fmt_or_dash(char *out, size_t n, double v, int decimals, const char *suffix)
{
	if (isnan(v))
		snprintf(out, n, "-");
	else
		snprintf(out, n, "%.*f%s", decimals, v, suffix);
}

static void print_title(struct top_ui *ui, FILE *out)
{
	const struct gpu_system *sys = &ui->w.snap->sys;
	char clock[16], a[16], b[16];
	time_t now = time(NULL);
	struct tm lt;
	localtime_r(&now, &lt);
	strftime(clock, sizeof(clock), "%H:%M:%S", &lt);
	fprintf(out, "gpuctl top  %s", ui->ctx->sys.server_name[0] ? ui->ctx->sys.server_name :
		sys->hostname.st == VAL_OK ? sys->hostname.s : "?");
	if (sys->driver_version.st == VAL_OK)
		fprintf(out, "  driver %s", sys->driver_version.s);
	if (sys->cuda_driver_version.st == VAL_OK)
		fprintf(out, "  CUDA %s", sys->cuda_driver_version.s);
	fprintf(out, "  %s  every %.1f s\n", clock, (double)ui->interval_ns / 1e9);
	struct top_summary sum;
	top_summary_compute(ui->w.snap, ui->shown, ui->nshown, &sum);
	fprintf(out, "%u GPU%s", sum.ngpus, sum.ngpus == 1 ? "" : "s");
	if (sum.down)
		fprintf(out, " (%u down)", sum.down);
	fmt_or_dash(a, sizeof(a), sum.power_w, 0, "");
	fmt_or_dash(b, sizeof(b), sum.limit_w, 0, "");
	fprintf(out, "  power %s/%s W", a, b);
	fmt_or_dash(a, sizeof(a), sum.util_pct, 0, "%");
	fprintf(out, "  util avg %s", a);
	if (!isnan(sum.mem_total)) {
		top_fmt_bytes((uint64_t)sum.mem_used, a, sizeof(a));
		top_fmt_bytes((uint64_t)sum.mem_total, b, sizeof(b));
		fprintf(out, "  memory %s/%s", a, b);
	}
	fprintf(out, "  %u process%s\n", ui->nproc, ui->nproc == 1 ? "" : "es");
}

static double val_or_nan(u64v v, double scale)
{
	return v.st == VAL_OK ? (double)v.v * scale : NAN;
}

static void print_gpus(struct top_ui *ui, FILE *out)
{
	fprintf(out, "\n%3s %-14s %5s %13s %5s %11s\n", "GPU", "MODEL", "UTIL", "MEMORY", "TEMP", "POWER");
	for (unsigned k = 0; k < ui->nshown; k++) {
		unsigned g = ui->shown[k];
		const struct gpu_view *v = &ui->w.snap->gpu[g];
		char model[24], util[12], mem[32], used[12], total[12], temp[12], pw[24], lim[12];
		top_model_name(&v->st, model, sizeof(model));
		if (!v->up) {
			fprintf(out, "%3u %-14.14s DOWN: %s\n", g, model, v->last_error[0] ? v->last_error : "no answer");
			continue;
		}
		fmt_or_dash(util, sizeof(util), val_or_nan(v->s.util_gpu_pct, 1), 0, "%");
		if (v->s.mem_used_bytes.st == VAL_OK && v->s.mem_total_bytes.st == VAL_OK) {
			top_fmt_bytes(v->s.mem_used_bytes.v, used, sizeof(used));
			top_fmt_bytes(v->s.mem_total_bytes.v, total, sizeof(total));
			snprintf(mem, sizeof(mem), "%s/%s", used, total);
		} else {
			snprintf(mem, sizeof(mem), "-");
		}
		fmt_or_dash(temp, sizeof(temp), val_or_nan(v->s.temp_c, 1), 0, "C");
		fmt_or_dash(pw, sizeof(pw), val_or_nan(v->s.power_mw, 1e-3), 0, "");
		fmt_or_dash(lim, sizeof(lim), val_or_nan(v->s.power_limit_mw, 1e-3), 0, "");
		snprintf(pw + strlen(pw), sizeof(pw) - strlen(pw), "/%s W", lim);
		fprintf(out, "%3u %-14.14s %5s %13s %5s %11s\n", g, model, util, mem, temp, pw);
	}
}

static void print_procs(struct top_ui *ui, struct host_state *h, FILE *out)
{
	fprintf(out, "\n%3s %8s %-12s %7s %4s %6s %8s %11s  %s\n", "GPU", "PID", "USER", "GPU-MEM", "TYPE", "CPU%",
		"HOST-MEM", "TIME", "COMMAND");
	double uptime = read_uptime();
	uint64_t mono = clock_mono_ns();
	h->ncur = 0;
	for (unsigned i = 0; i < ui->nproc; i++) {
		const struct top_proc *p = &ui->procs[i];
		char mem[12] = "-", cpu[16] = "-", rss[12] = "-", run[24] = "-";
		if (p->mem_bytes.st == VAL_OK)
			top_fmt_bytes(p->mem_bytes.v, mem, sizeof(mem));
		double c, r, t;
		/* a simulated server's pids are made up: /proc would describe some other process */
		if (!ui->ctx->sys.simulated && host_of(h, p->pid, uptime, mono, &c, &r, &t)) {
			fmt_or_dash(cpu, sizeof(cpu), c, 1, "");
			top_fmt_bytes((uint64_t)r, rss, sizeof(rss));
			top_fmt_runtime(t, run, sizeof(run));
		}
		fprintf(out, "%3u %8u %-12.12s %7s %4c %6s %8s %11s  %s\n", p->gpu, p->pid, p->user, mem, p->type, cpu,
			rss, run, p->name);
	}
	struct host_prev *t = h->prev;
	h->prev = h->cur;
	h->cur = t;
	h->nprev = h->ncur;
}

int top_batch(struct top_ui *ui, long iterations)
{
	FILE *out = ui->ctx->out;
	struct host_state h = { calloc(TOP_MAX_PROCS, sizeof(struct host_prev)),
				calloc(TOP_MAX_PROCS, sizeof(struct host_prev)), 0, 0, sysconf(_SC_CLK_TCK),
				sysconf(_SC_PAGESIZE) };
	int rc = EXIT_OK;
	if (!h.prev || !h.cur) {
		cmd_error(ui->ctx, "top", "out of memory");
		rc = EXIT_SOFTWARE;
		goto done;
	}
	cmd_print_sim_banner(ui->ctx, out);
	uint64_t next = clock_mono_ns();
	for (long i = 0; !watch_interrupted && (iterations == 0 || i < iterations); i++) {
		if (i) {
			watch_sleep_until(next);
			if (watch_interrupted)
				break;
			fputc('\n', out);
		}
		next += ui->interval_ns;
		top_refresh(ui);
		print_title(ui, out);
		print_gpus(ui, out);
		print_procs(ui, &h, out);
		if (fflush(out) != 0 || ferror(out)) {
			cmd_error(ui->ctx, "top", "cannot write the output");
			rc = EXIT_IOERR;
			break;
		}
	}
done:
	free(h.prev);
	free(h.cur);
	return rc;
}
