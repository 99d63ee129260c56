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

#define CONFIG_MAX_BYTES (64u * 1024u)

static void usage(FILE *out)
{
	fprintf(out,
		"usage: gpuctl agent [--listen ADDR:PORT] [--interval DURATION] [--config FILE]\n"
		"                    [--metrics GROUPS] [--label KEY=VALUE]... [--hostname NAME]\n"
		"                    [--kernel-log PATH|off] [--stale-after DURATION]\n"
		"                    [--pool [--pool-dir DIR] [--pool-socket PATH]]\n"
		"       gpuctl agent --once [--openmetrics] [options]\n\n"
		"Samples every GPU in the background and serves the latest values:\n"
		"  /metrics (Prometheus text; OpenMetrics when asked), /api/v1/gpus, /api/v1/health, /healthz\n\n"
		"options:\n"
		"  --listen ADDR:PORT     where to listen (default *:%u; '127.0.0.1:%u' for this host only, port 0 = any free)\n"
		"  --interval DURATION    sampling interval (default 1s; e.g. 500ms, 2s)\n"
		"  --config FILE          settings file, 'key = value' lines (docs/agent.md); flags override it\n"
		"  --metrics GROUPS       metric groups: all, basic, ecc, pcie, nvlink, throttle, processes, mig, xid, health\n"
		"  --label KEY=VALUE      extra label on every series (repeatable)\n"
		"  --hostname NAME        value of the hostname label (default: the machine's)\n"
		"  --kernel-log PATH|off  where to read 'NVRM: Xid' lines (default /dev/kmsg)\n"
		"  --stale-after DURATION a GPU with no good sample this long is down (default 5 intervals)\n"
		"  --pool                 also run the job pool (gpuctl submit/queue; docs/pool.md)\n"
		"  --pool-dir DIR         the pool's state (default /var/lib/gpuctl/pool as root)\n"
		"  --pool-socket PATH     its control socket (default /run/gpuctl/pool.sock as root)\n"
		"  --once                 print one exposition to stdout and exit\n"
		"  --openmetrics          with --once: OpenMetrics instead of Prometheus text\n"
		"runs in the foreground until SIGINT or SIGTERM; needs no root.\n"
		"exit codes: 0 stopped by a signal (or --once done), 64 usage, 65 malformed configuration,\n"
		"            66 missing configuration, 69 no GPU/driver, 74 cannot listen or write\n",
		AGENT_DEFAULT_PORT, AGENT_DEFAULT_PORT);
}

/* Flags that take a value, mapped to configuration keys. */
static const struct { const char *flag, *key; } value_flags[] = {
	{ "--listen", "listen" },
	{ "--interval", "interval" },
	{ "--metrics", "metrics" },
	{ "--hostname", "hostname" },
	{ "--kernel-log", "kernel_log" },
	{ "--stale-after", "stale_after" },
	{ "--pool-dir", "pool_dir" },
	{ "--pool-socket", "pool_socket" },
	{ "--config", NULL },
	{ "--label", NULL },
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

/* Splits "--flag=value" / "--flag value"; returns the value or NULL (and *bad on a missing value). */
static const char *flag_value(int argc, char **argv, int *i, const char *flag, bool *bad)
{
	size_t n = strlen(flag);
	const char *a = argv[*i];
	if (strncmp(a, flag, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		*bad = true;
		return NULL;
	}
	return argv[++*i];
}

static int parse_args(int argc, char **argv, struct cmd_ctx *ctx, struct agent_config *cfg, bool *once, bool *om)
{
	char msg[256];
	/* the config file first, so that flags override it wherever they stand */
	for (int i = 1; i < argc; i++) {
		bool bad = false;
		const char *v = flag_value(argc, argv, &i, "--config", &bad);
		if (bad) {
			cmd_error(ctx, "agent", "option '--config' needs a value");
			return EXIT_USAGE;
		}
		if (v) {
			int rc = load_config_file(ctx, v, cfg);
			if (rc)
				return rc;
		}
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--once") == 0) {
			*once = true;
			continue;
		}
		if (strcmp(a, "--openmetrics") == 0) {
			*om = true;
			continue;
		}
		if (strcmp(a, "--pool") == 0) {
			cfg->pool = true;
			continue;
		}
		bool matched = false;
		for (size_t k = 0; k < sizeof(value_flags) / sizeof(value_flags[0]) && !matched; k++) {
			bool bad = false;
			const char *v = flag_value(argc, argv, &i, value_flags[k].flag, &bad);
			if (bad) {
				cmd_error(ctx, "agent", "option '%s' needs a value", value_flags[k].flag);
				return EXIT_USAGE;
			}
			if (!v)
				continue;
			matched = true;
			if (strcmp(value_flags[k].flag, "--config") == 0)
				continue;
			if (strcmp(value_flags[k].flag, "--label") == 0) {
				const char *eq = strchr(v, '=');
				char key[80];
				if (!eq || eq == v || (size_t)(eq - v) >= sizeof(key) - 6) {
					cmd_error(ctx, "agent", "bad label '%s' (use KEY=VALUE)", v);
					return EXIT_USAGE;
				}
				snprintf(key, sizeof(key), "label.%.*s", (int)(eq - v), v);
				if (agent_config_set(cfg, key, eq + 1, msg, sizeof(msg))) {
					cmd_error(ctx, "agent", "%s", msg);
					return EXIT_USAGE;
				}
				continue;
			}
			if (agent_config_set(cfg, value_flags[k].key, v, msg, sizeof(msg))) {
				cmd_error(ctx, "agent", "%s", msg);
				return EXIT_USAGE;
			}
		}
		if (!matched) {
			cmd_error(ctx, "agent", "unknown option '%s'; see 'gpuctl agent --help'", a);
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
	struct abuf out;
	abuf_init(&out);
	char msg[256];
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

int cmd_agent(int argc, char **argv, struct cmd_ctx *ctx)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(ctx->out);
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
	/* each second: a simulated server's run-time fault file that stops (or
	 * starts again) being applied goes to the log once, as it changes */
	char fault_file_logged[sizeof(st.sim_fault_file_error)] = "";
	const struct timespec second = { 1, 0 };
	for (;;) {
		sig = sigtimedwait(&set, NULL, &second);
		if (sig == SIGINT || sig == SIGTERM)
			break;
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
	agent_stop(a);
	fprintf(ctx->err, "gpuctl agent: stopped (signal %d)\n", sig);
	return EXIT_OK;
}
