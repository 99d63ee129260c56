/* SPDX-License-Identifier: Apache-2.0 */
/*
 * top.c - `gpuctl top`: a live ncurses view of the GPUs and their processes
 * (docs/top.md). Options, the refresh loop and the keys are here; drawing is
 * in top_draw.c, the pure decisions in core/top_model.c. Telemetry comes from
 * the sampler only, so a slow or lost GPU never freezes the screen.
 */
#include <curses.h>
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "top_ui.h"
#include "help.h"
#include "core/gpu_select.h"
#include "view/moncol.h"
#include "core/proc_stat.h"

enum { OPT_TOP_DELAY, OPT_TOP_ID, OPT_TOP_NO_CHARTS, OPT_TOP_EXIT_AFTER, OPT_TOP_MEASURE_CPU, OPT_TOP_ONCE, OPT_TOP_BATCH,
       OPT_TOP_ITERATIONS, OPT_TOP_USER };
static const struct opt_spec top_opts[] = {
	[OPT_TOP_DELAY] = OPT_SPEC_DELAY("refresh interval"),
	[OPT_TOP_ID] = OPT_SPEC_GPU_IDS,
	[OPT_TOP_NO_CHARTS] = { "no-charts", 0, OPT_FLAG, NULL, "start without the history charts (key c)", NULL, 0, 0,
				NULL },
	[OPT_TOP_EXIT_AFTER] = { "exit-after", 0, OPT_DURATION, NULL, "quit by itself after that long (scripts, tests)",
				 NULL, 1, 10 * (long long)UNITS_NS_PER_DAY, NULL },
	[OPT_TOP_MEASURE_CPU] = { "measure-cpu", 0, OPT_STRING, "FILE",
				  "on exit, write the CPU time top used (from /proc/self/stat)\n"
				  "as a share of one core since the first screen into FILE",
				  NULL, 0, 0, NULL },
	[OPT_TOP_ONCE] = { "once", 0, OPT_FLAG, NULL, "print one screen as plain text and exit (-b -n 1)", NULL, 0, 0, NULL },
	[OPT_TOP_BATCH] = { "batch", 'b', OPT_FLAG, NULL,
			    "batch mode: plain text on stdout every refresh, no terminal\n"
			    "needed, with each process's CPU %, host memory and runtime",
			    NULL, 0, 0, NULL },
	[OPT_TOP_ITERATIONS] = { "iterations", 'n', OPT_INT, "N", "stop after N screens (implies --batch)", "until interrupted",
				 1, 1000000000, NULL },
	[OPT_TOP_USER] = { "user", 0, OPT_STRING, "NAME", "only the processes of user NAME", "all", 0, 0, NULL },
};

static const struct cmd_help top_help = {
	.name = "top",
	.usage = "[-d DURATION] [-i ID[,ID...]] [--user NAME] [--no-charts]\n"
		 "                  [--exit-after DURATION] [--measure-cpu FILE]\n"
		 "       gpuctl top --once | -b [-n N] [-d DURATION] [-i ID[,ID...]] [--user NAME]",
	.what = "A live view of the GPUs and their processes (keys: ? for help, q to quit).\n",
	.opts = top_opts,
	.nopts = sizeof(top_opts) / sizeof(top_opts[0]),
	.exits = "0 quit, 64 usage (or no terminal without --once/-b), 65 bad simulation file, 66 no simulation file,\n"
		 "            69 no GPU/driver, 74 --measure-cpu FILE (or, in batch mode, stdout) could not be written",
};

const char *top_signal_name(int sig)
{
	switch (sig) {
	case SIGTERM: return "SIGTERM";
	case SIGKILL: return "SIGKILL";
	case SIGINT: return "SIGINT";
	case SIGHUP: return "SIGHUP";
	default: return "signal";
	}
}

struct top_opts {
	uint64_t interval_ns, exit_after_ns;
	const char *ids, *cpu_file, *user;
	bool no_charts, batch;
	long iterations; /* batch mode: 0 until interrupted */
};

static int parse_opts(int argc, char **argv, struct cmd_ctx *ctx, struct top_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->interval_ns = UNITS_NS_PER_S;
	struct opt_parser p;
	struct opt_value v;
	int k, rc;
	opt_init(&p, argc, argv, top_help.opts, top_help.nopts);
	while ((k = help_opt_next(ctx, &top_help, &p, &v, &rc)) != OPT_DONE) {
		switch (k) {
		case OPT_HELP: return -1;
		case OPT_ERROR: return rc;
		case OPT_TOP_DELAY: o->interval_ns = (uint64_t)v.num; break;
		case OPT_TOP_EXIT_AFTER: o->exit_after_ns = (uint64_t)v.num; break;
		case OPT_TOP_ID: o->ids = v.text; break;
		case OPT_TOP_NO_CHARTS: o->no_charts = true; break;
		case OPT_TOP_ONCE: o->batch = true; o->iterations = 1; break;
		case OPT_TOP_BATCH: o->batch = true; break;
		case OPT_TOP_ITERATIONS: o->batch = true; o->iterations = (long)v.num; break;
		case OPT_TOP_USER: o->user = v.text; break;
		default: o->cpu_file = v.text; break; /* --measure-cpu */
		}
	}
	if (cmd_check_gpu_spec(ctx, "top", o->ids) != EXIT_OK)
		return EXIT_USAGE;
	if (o->batch && (o->no_charts || o->exit_after_ns || o->cpu_file)) {
		cmd_error(ctx, "top", "--no-charts, --exit-after and --measure-cpu are for the screen, not batch mode");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

void top_refresh(struct top_ui *ui)
{
	struct snapshot *t = ui->prev;
	ui->prev = ui->w.snap;
	ui->w.snap = t;
	ui->have_prev = true;
	sampler_read(ui->w.sampler, ui->w.snap);
	for (unsigned k = 0; k < ui->nshown; k++)
		top_hist_push_view(&ui->hist[ui->shown[k]], &ui->w.snap->gpu[ui->shown[k]]);
	ui->nproc = top_procs_collect(ui->w.snap, ui->w.mask, ui->procs, TOP_MAX_PROCS);
	ui->nproc = top_procs_filter_user(ui->procs, ui->nproc, ui->user);
	top_procs_sort(ui->procs, ui->nproc, ui->sort, ui->reverse);
	/* the selection follows its process */
	ui->proc_sel = ui->nproc && ui->proc_sel >= ui->nproc ? ui->nproc - 1 : ui->proc_sel;
	for (unsigned i = 0; i < ui->nproc; i++)
		if (ui->procs[i].pid == ui->sel_pid && ui->procs[i].gpu == ui->sel_pid_gpu)
			ui->proc_sel = i;
}

static void remember_selection(struct top_ui *ui)
{
	if (ui->nproc) {
		ui->sel_pid = ui->procs[ui->proc_sel].pid;
		ui->sel_pid_gpu = ui->procs[ui->proc_sel].gpu;
	}
}

static void send_signal(struct top_ui *ui)
{
	const struct top_proc *k = &ui->kill_target;
	const char *sname = top_signal_name(ui->kill_sig);
	/* a simulated server's pids are made up: they may be real processes here */
	if (ui->ctx->sys.simulated) {
		snprintf(ui->msg, sizeof(ui->msg), "SIMULATED: no %s sent to pid %u (%s is not a real process)", sname,
			 k->pid, k->name);
		return;
	}
	if (kill((pid_t)k->pid, ui->kill_sig) == 0)
		snprintf(ui->msg, sizeof(ui->msg), "sent %s to pid %u (%s)", sname, k->pid, k->name);
	else
		snprintf(ui->msg, sizeof(ui->msg), "cannot send %s to pid %u: %s", sname, k->pid, strerror(errno));
}

/* Returns false when top should quit. */
static bool handle_key(struct top_ui *ui, int ch)
{
	if (ui->mode == TOP_MODE_PICK_SIGNAL) {
		int sig = ch == 't' ? SIGTERM : ch == 'k' ? SIGKILL : ch == 'i' ? SIGINT : ch == 'h' ? SIGHUP : 0;
		if (sig) {
			ui->kill_sig = sig;
			ui->mode = TOP_MODE_CONFIRM;
		} else if (ch == 27 || ch == 'q' || ch == 'n') {
			ui->mode = TOP_MODE_NORMAL;
			snprintf(ui->msg, sizeof(ui->msg), "no signal sent");
		}
		return true;
	}
	if (ui->mode == TOP_MODE_CONFIRM) {
		if (ch == 'y' || ch == 'Y')
			send_signal(ui);
		else
			snprintf(ui->msg, sizeof(ui->msg), "no signal sent");
		ui->mode = TOP_MODE_NORMAL;
		return true;
	}
	if (ui->help) {
		if (ch == 'q' || ch == 'Q' || ch == 27 || ch == '?')
			ui->help = false;
		return true;
	}
	ui->msg[0] = '\0';
	unsigned page = ui->proc_rows_shown ? ui->proc_rows_shown : 10;
	switch (ch) {
	case 'q': case 'Q': return false;
	case '?': case KEY_F(1): ui->help = true; break;
	case KEY_UP:
		if (ui->proc_sel)
			ui->proc_sel--;
		break;
	case KEY_DOWN:
		if (ui->proc_sel + 1 < ui->nproc)
			ui->proc_sel++;
		break;
	case KEY_PPAGE: ui->proc_sel = ui->proc_sel > page ? ui->proc_sel - page : 0; break;
	case KEY_NPAGE: ui->proc_sel = ui->nproc ? (ui->proc_sel + page < ui->nproc ? ui->proc_sel + page : ui->nproc - 1) : 0; break;
	case KEY_HOME: ui->proc_sel = 0; break;
	case KEY_END: ui->proc_sel = ui->nproc ? ui->nproc - 1 : 0; break;
	case KEY_LEFT: case '[':
		if (ui->gpu_sel)
			ui->gpu_sel--;
		break;
	case KEY_RIGHT: case ']':
		if (ui->gpu_sel + 1 < ui->nshown)
			ui->gpu_sel++;
		break;
	case 's':
		ui->sort = (enum top_sort)((ui->sort + 1) % TOP_SORT_COUNT);
		top_procs_sort(ui->procs, ui->nproc, ui->sort, ui->reverse);
		ui->proc_sel = 0;
		break;
	case 'r':
		ui->reverse = !ui->reverse;
		top_procs_sort(ui->procs, ui->nproc, ui->sort, ui->reverse);
		ui->proc_sel = 0;
		break;
	case 'c': ui->charts = !ui->charts; break;
	case 'k': case 'K': case KEY_F(9):
		if (!ui->nproc) {
			snprintf(ui->msg, sizeof(ui->msg), "no process selected");
			break;
		}
		ui->kill_target = ui->procs[ui->proc_sel];
		ui->mode = TOP_MODE_PICK_SIGNAL;
		break;
	default: break;
	}
	remember_selection(ui);
	return true;
}

static int read_cpu_ticks(uint64_t *ticks)
{
	struct proc_stat ps;
	if (proc_stat_read((int)getpid(), &ps))
		return -1;
	*ticks = ps.utime_ticks + ps.stime_ticks;
	return 0;
}

static int run_screen(struct top_ui *ui, const struct top_opts *o)
{
	SCREEN *scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		cmd_error(ui->ctx, "top", "cannot start the terminal (is TERM set?)");
		return EXIT_UNAVAILABLE;
	}
	set_term(scr);
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	if (has_colors()) {
		start_color();
		use_default_colors();
		init_pair(1, COLOR_GREEN, -1);
		init_pair(2, COLOR_YELLOW, -1);
		init_pair(3, COLOR_RED, -1);
		init_pair(4, COLOR_CYAN, -1);
		init_pair(5, COLOR_WHITE, COLOR_RED);
		ui->color = true;
	}
	top_refresh(ui);
	top_draw(ui);
	uint64_t start = clock_mono_ns(), next = start + ui->interval_ns, ticks0 = 0;
	bool have_ticks = read_cpu_ticks(&ticks0) == 0;
	bool running = true;
	while (running && !watch_interrupted) {
		uint64_t now = clock_mono_ns();
		if (o->exit_after_ns && now - start >= o->exit_after_ns)
			break;
		if (now >= next) {
			top_refresh(ui);
			top_draw(ui);
			next += ui->interval_ns;
			if (next <= now)
				next = now + ui->interval_ns;
			continue;
		}
		uint64_t wait = next - now;
		if (o->exit_after_ns && start + o->exit_after_ns - now < wait)
			wait = start + o->exit_after_ns - now;
		timeout((int)(wait / 1000000ull) + 1);
		int ch = getch();
		if (ch == ERR)
			continue;
		if (ch != KEY_RESIZE)
			running = handle_key(ui, ch);
		top_draw(ui);
	}
	endwin();
	delscreen(scr);
	if (o->cpu_file) {
		uint64_t ticks1 = 0;
		double secs = (double)(clock_mono_ns() - start) / 1e9;
		FILE *f = fopen(o->cpu_file, "w");
		if (!f || !have_ticks || read_cpu_ticks(&ticks1) || secs <= 0) {
			cmd_error(ui->ctx, "top", "cannot measure CPU time into '%s'", o->cpu_file);
			if (f)
				fclose(f);
			return EXIT_IOERR;
		}
		double pct = 100.0 * (double)(ticks1 - ticks0) / (double)sysconf(_SC_CLK_TCK) / secs;
		fprintf(f, "cpu_pct_of_one_core %.3f\nseconds %.1f\nrefresh_s %.2f\ngpus %u\n", pct, secs,
			(double)ui->interval_ns / 1e9, ui->nshown);
		fclose(f);
	}
	return EXIT_OK;
}

int cmd_top(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct top_opts o;
	int rc = parse_opts(argc, argv, ctx, &o);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (!o.batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		cmd_error(ctx, "top", "needs a terminal; for plain text use 'gpuctl top --once' or '-b', for a stream of lines 'gpuctl dmon'");
		return EXIT_USAGE;
	}
	setlocale(LC_ALL, "");
	const char *cs = setlocale(LC_CTYPE, NULL);
	struct top_ui *ui = calloc(1, sizeof(*ui));
	if (!ui) {
		cmd_error(ctx, "top", "out of memory");
		return EXIT_SOFTWARE;
	}
	ui->ctx = ctx;
	ui->interval_ns = o.interval_ns;
	ui->user = o.user;
	ui->charts = !o.no_charts;
	ui->utf8 = cs && (strstr(cs, "UTF-8") || strstr(cs, "utf8") || strstr(cs, "UTF8"));
	/* The slow groups every ~5 s (reading every group of 2 H200s each second
	 * took 39 % of a core), and not what the screen never shows (the NVLink
	 * error counters were most of top's 1.8 % on 2 GPUs): top_model.c */
	rc = watch_start(&ui->w, ctx, "top", o.ids, o.interval_ns, top_sampler_groups(), true,
			 top_slow_every(o.interval_ns));
	if (rc) {
		free(ui);
		return rc;
	}
	ui->prev = snapshot_new(ui->w.snap->cap);
	ui->hist = calloc(GPU_MAX_GPUS, sizeof(*ui->hist));
	ui->procs = calloc(TOP_MAX_PROCS, sizeof(*ui->procs));
	if (!ui->prev || !ui->hist || !ui->procs) {
		cmd_error(ctx, "top", "out of memory");
		rc = EXIT_SOFTWARE;
	} else {
		for (unsigned g = 0; g < ui->w.n; g++)
			if (gpu_select_has(ui->w.mask, g))
				ui->shown[ui->nshown++] = g;
		watch_catch_signals();
		rc = o.batch ? top_batch(ui, o.iterations) : run_screen(ui, &o);
	}
	free(ui->prev);
	free(ui->hist);
	free(ui->procs);
	watch_stop(&ui->w);
	free(ui);
	return rc;
}
