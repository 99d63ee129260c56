/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent.c - `gpuctl agent`: the monitoring daemon (foreground) with a
 * Prometheus endpoint and a JSON API (docs/agent.md, docs/metrics.md).
 * Settings: defaults, then --config FILE, then flags.
 */
#include "cmd.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "pool/pool.h"
#include "agent/pool_agent.h"
#include "core/data_path.h"
#include "core/units.h"
#include "health/health.h"
#include "help.h"

#define CONFIG_MAX_BYTES (64u * 1024u)
#define AGENT_DEFAULT_PORT_TEXT "9477" /* for the help text */
_Static_assert(AGENT_DEFAULT_PORT == 9477u, "AGENT_DEFAULT_PORT_TEXT is AGENT_DEFAULT_PORT");

/* The agent's flags: those with a value set the configuration key of the
 * same row in agent_keys (agent_config_set checks the value: the file and
 * the flags read one grammar). */
enum {
	OPT_AGENT_LISTEN, OPT_AGENT_INTERVAL, OPT_AGENT_CONFIG, OPT_AGENT_METRICS, OPT_AGENT_LABEL, OPT_AGENT_HOSTNAME,
	OPT_AGENT_KERNEL_LOG, OPT_AGENT_STALE_AFTER, OPT_AGENT_POOL, OPT_AGENT_POOL_DIR, OPT_AGENT_POOL_SOCKET,
	OPT_AGENT_ONCE, OPT_AGENT_OPENMETRICS, OPT_AGENT_DCGM_COMPAT,
};
static const struct opt_spec agent_opts[] = {
	[OPT_AGENT_LISTEN] = { "listen", 0, OPT_STRING, "ADDR:PORT",
			       "where to listen ('127.0.0.1:" AGENT_DEFAULT_PORT_TEXT "' for this host only, port 0 = any free)",
			       "*:" AGENT_DEFAULT_PORT_TEXT, 0, 0, NULL },
	[OPT_AGENT_INTERVAL] = { "interval", 0, OPT_STRING, "DURATION", "sampling interval (e.g. 500ms, 2s; docs/units.md)",
				 "1s", 0, 0, NULL },
	[OPT_AGENT_CONFIG] = { "config", 0, OPT_STRING, "FILE",
			       "settings file, 'key = value' lines (docs/agent.md); flags override it", NULL, 0, 0, NULL },
	[OPT_AGENT_METRICS] = { "metrics", 0, OPT_STRING, "GROUPS",
				"metric groups: all, basic, ecc, pcie, nvlink, throttle, processes, mig, xid, health, prof",
				NULL, 0, 0, NULL },
	[OPT_AGENT_LABEL] = { "label", 0, OPT_STRING, "KEY=VALUE", "extra label on every series (repeatable)", NULL, 0, 0,
			      NULL },
	[OPT_AGENT_HOSTNAME] = { "hostname", 0, OPT_STRING, "NAME", "value of the hostname label", "the machine's", 0, 0,
				 NULL },
	[OPT_AGENT_KERNEL_LOG] = { "kernel-log", 0, OPT_STRING, "PATH|off", "where to read 'NVRM: Xid' lines",
				   "/dev/kmsg", 0, 0, NULL },
	[OPT_AGENT_STALE_AFTER] = { "stale-after", 0, OPT_STRING, "DURATION", "a GPU with no good sample this long is down",
				    "5 intervals", 0, 0, NULL },
	[OPT_AGENT_POOL] = { "pool", 0, OPT_FLAG, NULL, "also run the job pool (gpuctl submit/queue; docs/pool.md)", NULL, 0,
			     0, NULL },
	[OPT_AGENT_POOL_DIR] = { "pool-dir", 0, OPT_STRING, "DIR", "the pool's state", "/var/lib/gpuctl/pool as root", 0,
				 0, NULL },
	[OPT_AGENT_POOL_SOCKET] = { "pool-socket", 0, OPT_STRING, "PATH", "its control socket",
				    "/run/gpuctl/pool.sock as root", 0, 0, NULL },
	[OPT_AGENT_ONCE] = { "once", 0, OPT_FLAG, NULL, "print one exposition to stdout and exit", NULL, 0, 0, NULL },
	[OPT_AGENT_OPENMETRICS] = { "openmetrics", 0, OPT_FLAG, NULL, "with --once: OpenMetrics instead of Prometheus text",
				    NULL, 0, 0, NULL },
	[OPT_AGENT_DCGM_COMPAT] = { "dcgm-compat", 0, OPT_FLAG, NULL,
				    "also serve dcgm-exporter's metric names and labels (docs/metrics.md)", NULL, 0, 0, NULL },
};
static const char *const agent_keys[] = {
	[OPT_AGENT_LISTEN] = "listen",		 [OPT_AGENT_INTERVAL] = "interval",
	[OPT_AGENT_METRICS] = "metrics",	 [OPT_AGENT_HOSTNAME] = "hostname",
	[OPT_AGENT_KERNEL_LOG] = "kernel_log",	 [OPT_AGENT_STALE_AFTER] = "stale_after",
	[OPT_AGENT_POOL_DIR] = "pool_dir",	 [OPT_AGENT_POOL_SOCKET] = "pool_socket",
};

/* The settings of agent_settings (agent/agent_config.c), with their ranges:
 * the configuration file's keys that are a duration or a whole number. */
static void print_settings(FILE *out)
{
	fputs("settings of --config FILE (KEY = VALUE; docs/agent.md) that are a duration or a number:\n", out);
	for (size_t i = 0; i < agent_nsettings; i++) {
		const struct opt_spec *s = &agent_settings[i];
		char lo[24], hi[24];
		if (s->kind == OPT_DURATION) {
			units_fmt_duration((uint64_t)s->min, lo, sizeof(lo));
			units_fmt_duration((uint64_t)s->max, hi, sizeof(hi));
		} else {
			snprintf(lo, sizeof(lo), "%lld", s->min);
			snprintf(hi, sizeof(hi), "%lld", s->max);
		}
		fprintf(out, "  %-19s %-8s %s (%s to %s) (default %s)\n", s->name, s->kind == OPT_DURATION ? "DURATION" : "N",
			s->help, lo, hi, s->def);
	}
}

static const struct cmd_help agent_help = {
	.name = "agent",
	.usage = "[--listen ADDR:PORT] [--interval DURATION] [--config FILE]\n"
		 "                    [--metrics GROUPS] [--label KEY=VALUE]... [--hostname NAME]\n"
		 "                    [--kernel-log PATH|off] [--stale-after DURATION] [--dcgm-compat]\n"
		 "                    [--pool [--pool-dir DIR] [--pool-socket PATH]]\n"
		 "       gpuctl agent --once [--openmetrics] [options]",
	.what = "Samples every GPU in the background and serves the latest values:\n"
		"  /metrics (Prometheus text; OpenMetrics when asked), /api/v1/gpus, /api/v1/health, /healthz\n",
	.opts = agent_opts,
	.nopts = sizeof(agent_opts) / sizeof(agent_opts[0]),
	.more = print_settings,
	.notes = "runs in the foreground until SIGINT or SIGTERM (then stops within stop_timeout, 10 s);\n"
		 "needs no root.\n",
	.exits = "0 stopped by a signal (or --once done), 64 usage, 65 malformed configuration,\n"
		 "            66 missing configuration, 69 no GPU/driver, 74 cannot listen or write,\n"
		 "            75 a thread did not stop within stop_timeout (the agent ended anyway)",
};

static int load_config_file(struct cmd_ctx *ctx, const char *path, struct agent_config *cfg)
{
	char msg[512];
	size_t len = 0;
	char *text = read_whole_file(path, CONFIG_MAX_BYTES, &len, msg, sizeof(msg));
	if (!text) {
		cmd_error(ctx, "agent", "cannot read config '%s': %s", path, msg);
		return EXIT_NOINPUT;
	}
	int rc = agent_config_parse(cfg, text, len, path, msg, sizeof(msg));
	free(text);
	if (rc) {
		cmd_error(ctx, "agent", "%s", msg);
		return EXIT_DATAERR;
	}
	return EXIT_OK;
}

static int set_label(struct cmd_ctx *ctx, struct agent_config *cfg, const char *v)
{
	char key[80], msg[256];
	const char *eq = strchr(v, '=');
	if (!eq || eq == v || (size_t)(eq - v) >= sizeof(key) - 6) {
		cmd_error(ctx, "agent", "bad label '%s' (use KEY=VALUE)", v);
		return EXIT_USAGE;
	}
	snprintf(key, sizeof(key), "label.%.*s", (int)(eq - v), v);
	if (agent_config_set(cfg, key, eq + 1, msg, sizeof(msg))) {
		cmd_error(ctx, "agent", "%s", msg);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* Returns the exit code (EXIT_OK: go on); --help was seen before. */
static int parse_args(int argc, char **argv, struct cmd_ctx *ctx, struct agent_config *cfg, bool *once, bool *om)
{
	char msg[256];
	struct opt_parser p;
	struct opt_value v;
	int opt, rc;
	/* every option checked, and the config file read, first: flags override it wherever they stand */
	opt_init(&p, argc, argv, agent_help.opts, agent_help.nopts);
	while ((opt = help_opt_next(ctx, &agent_help, &p, &v, &rc)) != OPT_DONE) {
		if (opt == OPT_HELP || opt == OPT_ERROR)
			return rc;
		if (opt == OPT_AGENT_CONFIG && (rc = load_config_file(ctx, v.text, cfg)) != EXIT_OK)
			return rc;
	}
	opt_init(&p, argc, argv, agent_help.opts, agent_help.nopts);
	while ((opt = opt_next(&p, &v)) >= 0) {
		if (opt == OPT_AGENT_ONCE)
			*once = true;
		else if (opt == OPT_AGENT_OPENMETRICS)
			*om = true;
		else if (opt == OPT_AGENT_POOL)
			cfg->pool = true;
		else if (opt == OPT_AGENT_DCGM_COMPAT)
			cfg->dcgm_compat = true;
		else if (opt == OPT_AGENT_LABEL && (rc = set_label(ctx, cfg, v.text)) != EXIT_OK)
			return rc;
		else if ((size_t)opt < sizeof(agent_keys) / sizeof(agent_keys[0]) && agent_keys[opt] &&
			 agent_config_set(cfg, agent_keys[opt], v.text, msg, sizeof(msg))) {
			cmd_error(ctx, "agent", "%s", msg);
			return EXIT_USAGE;
		}
	}
	if (*om && !*once) {
		cmd_error(ctx, "agent", "'--openmetrics' goes with '--once' (a server picks the format from Accept)");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* glibc gives each thread that allocates its own arena (up to 8 per core), and
 * each keeps its touched pages: one per sampler thread, the render thread and
 * the HTTP threads. Their allocations are few (the hot paths reuse buffers and
 * the per-thread cache serves the rest), so two arenas cost no contention and
 * keep resident memory under the 10 MiB target (bench/RESULTS.md). An
 * operator's own MALLOC_ARENA_MAX or glibc.malloc.arena_max tunable wins. */
static void limit_malloc_arenas(void)
{
#if defined(__GLIBC__) && defined(M_ARENA_MAX)
	const char *tun = getenv("GLIBC_TUNABLES");
	if (!getenv("MALLOC_ARENA_MAX") && !(tun && strstr(tun, "arena_max")))
		mallopt(M_ARENA_MAX, 2);
#endif
}

static int run_once(struct cmd_ctx *ctx, const struct agent_config *cfg, const struct agent_env *env, bool om)
{
	char msg[256];
	/* the daemon serves without its rules (a warning, /api/v1/health up/down
	 * only); one exposition without its health series is no exposition */
	struct health_rules *rules = calloc(1, sizeof(*rules));
	if (!rules) {
		cmd_error(ctx, "agent", "out of memory");
		return EXIT_SOFTWARE;
	}
	int lrc = health_rules_load_default(rules, env->data_dir_env, msg, sizeof(msg));
	free(rules);
	if (lrc) {
		cmd_error(ctx, "agent", "%s", msg);
		return lrc == HEALTH_RULES_MALFORMED ? EXIT_DATAERR : EXIT_NOINPUT;
	}
	struct abuf out;
	abuf_init(&out);
	if (agent_render_once(ctx->be, cfg, env, om, &out, msg, sizeof(msg))) {
		cmd_error(ctx, "agent", "%s", msg);
		abuf_free(&out);
		return EXIT_SOFTWARE;
	}
	size_t len = out.len;
	size_t w = fwrite(out.p, 1, len, ctx->out);
	abuf_free(&out);
	return w == len ? EXIT_OK : EXIT_IOERR;
}

/* One line of the agent's own log (agent_take_log), as its other lines: "gpuctl agent: ...". */
static void print_log_line(void *arg, const char *line)
{
	struct cmd_ctx *ctx = arg;
	char clean[512];
	fprintf(ctx->err, "gpuctl agent: %s\n", term_clean(clean, sizeof(clean), line));
}

int cmd_agent(int argc, char **argv, struct cmd_ctx *ctx)
{
	if (help_asked(argc, argv, 1)) { /* whatever else the line holds */
		help_print_cmd(ctx->out, &agent_help);
		return EXIT_OK;
	}
	struct agent_config cfg;
	agent_config_default(&cfg);
	bool once = false, om = false;
	int rc = parse_args(argc, argv, ctx, &cfg, &once, &om);
	ctx->fault_file_live = !once; /* the daemon reports a bad fault file while it runs */
	if (!rc)
		rc = cmd_backend(ctx); /* only once the flags are good */
	if (rc)
		return rc;
	struct agent_env env = { .version = GPUCTL_VERSION, .data_dir_env = ctx->data_dir, .sys = &ctx->sys };
	if (once)
		return run_once(ctx, &cfg, &env, om);

	limit_malloc_arenas();

	/* signals go to sigwait() below, not to whichever thread runs */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	cmd_print_sim_banner(ctx, ctx->err);
	if (cfg.pool)
		pool_default_paths(geteuid(), getenv("XDG_STATE_HOME"), getenv("XDG_RUNTIME_DIR"), getenv("HOME"),
				   cfg.pool_dir, sizeof(cfg.pool_dir), cfg.pool_socket, sizeof(cfg.pool_socket));
	struct agent *a = NULL;
	char msg[512];
	if (agent_start(&a, ctx->be, &cfg, &env, msg, sizeof(msg))) {
		cmd_error(ctx, "agent", "%s", msg);
		return EXIT_IOERR;
	}
	struct agent_status st;
	agent_get_status(a, &st);
	if (!st.health_rules)
		cmd_error(ctx, "agent", "warning: health rules not loaded (%s); /api/v1/health serves up/down only",
			  st.health_error);
	if (st.kernel_log == 0)
		cmd_error(ctx, "agent", "warning: %s; XIDs come from NVML events only", st.kernel_log_error);
	const char *host = cfg.listen_host[0] ? cfg.listen_host : "*";
	bool v6 = strchr(host, ':') != NULL;
	fprintf(ctx->err, "gpuctl agent: listening on http://%s%s%s:%u/metrics (%u GPUs, interval %.3g s)\n",
		v6 ? "[" : "", host, v6 ? "]" : "", st.port, ctx->be->gpu_count, (double)cfg.interval_ns / 1e9);
	struct pool_status ps;
	if (pool_agent_status(a, &ps))
		fprintf(ctx->err, "gpuctl agent: pool on %s (state %s; %s; %u jobs re-attached, %u settled at start)\n",
			cfg.pool_socket, cfg.pool_dir, ps.cgroup_note, ps.recovered, ps.settled);
	fflush(ctx->err);

	sigdelset(&set, SIGPIPE);
	int sig = 0;
	agent_take_log(a, print_log_line, ctx); /* a GPU already down at start */
	fflush(ctx->err);
	/* each second: a simulated server's run-time fault file that stops (or
	 * starts again) being applied goes to the log once, as it changes */
	char fault_file_logged[sizeof(st.sim_fault_file_error)] = "";
	const struct timespec second = { 1, 0 };
	for (;;) {
		sig = sigtimedwait(&set, NULL, &second);
		if (sig == SIGINT || sig == SIGTERM)
			break;
		/* what happened since: GPUs lost and back, XIDs, jobs started and ended */
		if (agent_take_log(a, print_log_line, ctx))
			fflush(ctx->err);
		agent_get_status(a, &st);
		if (strcmp(st.sim_fault_file_error, fault_file_logged) == 0)
			continue;
		if (st.sim_fault_file_error[0])
			cmd_error(ctx, "agent", "%s; the faults it gave before, if any, stay", st.sim_fault_file_error);
		else
			cmd_error(ctx, "agent", "the fault file is applied again");
		fflush(ctx->err);
		snprintf(fault_file_logged, sizeof(fault_file_logged), "%s", st.sim_fault_file_error);
	}
	char stuck[256];
	if (agent_stop_within(a, cfg.stop_timeout_ns, stuck, sizeof(stuck))) {
		/* A thread that does not come back holds locks or memory the rest
		 * would need: nothing more is freed or closed (the pool's state is
		 * on disk; its running jobs go on and the next start re-attaches them). */
		cmd_error(ctx, "agent", "not stopped within stop_timeout (%.3g s): %s did not stop; exiting now",
			  (double)cfg.stop_timeout_ns / 1e9, stuck);
		fflush(ctx->err);
		_exit(EXIT_TEMPFAIL);
	}
	fprintf(ctx->err, "gpuctl agent: stopped (signal %d)\n", sig);
	return EXIT_OK;
}
