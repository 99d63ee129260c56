/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slurm_sweep.c - `gpuctl slurm sweep` (docs/slurm.md, "Fleet sweep"): one
 * exclusive job per node through sbatch, each running `gpuctl slurm sweep
 * --run-node` there; waits with progress; reads every node's result into the
 * fleet (src/slurm/fleet.h) and writes fleet.json, fleet.txt, fleet.html;
 * --drain drains the outliers' nodes; --compare OLD NEW.
 */
#include "slurm_sweep.h"
#include "slurm_sweep_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/abuf.h"
#include "core/opts.h"
#include "core/units.h"
#include "help.h"
#include "slurm/fleet.h"
#include "slurm/gres.h"
#include "slurm/sweep.h"
#include "slurm/sweep_files.h"

#define POLL_NS 500000000LL

enum {
	SW_PARTITION, SW_NODES, SW_LEVEL, SW_OUT, SW_DRAIN, SW_THRESHOLD, SW_START_TIMEOUT, SW_TIMEOUT, SW_WINDOW,
	SW_GPUCTL, SW_JSON, SW_COMPARE, SW_RUN_NODE, SW_NODE, SW_GATHER, SW_MAX_DRAIN,
};
const char *const sweep_levels[] = { "health", "diag1", "diag2", "diag3", "bench-quick", NULL };
static const struct opt_spec sweep_opts[] = {
	[SW_PARTITION] = { "partition", 'p', OPT_STRING, "P", "sweep the nodes of this partition", "every node sinfo lists", 0, 0, NULL },
	[SW_NODES] = { "nodes", 'w', OPT_STRING, "LIST", "sweep these nodes (a Slurm host list, gpu[01-64])", NULL, 0, 0, NULL },
	[SW_LEVEL] = { "level", 0, OPT_ENUM, NULL, "health; diag1..diag3 (gpuctl diag -r N); bench-quick (health and figures)", "health", 0, 0, sweep_levels },
	[SW_OUT] = { "out", 'o', OPT_STRING, "DIR", "the results, on a file system every node shares", "gpuctl-sweep-DATE-TIME", 0, 0, NULL },
	[SW_DRAIN] = { "drain", 0, OPT_FLAG, NULL, "drain the nodes of the outliers that call for it", NULL, 0, 0, NULL },
	[SW_THRESHOLD] = { "threshold", 0, OPT_NUMBER, "PCT", "an outlier is this much below the fleet median (not 0 or 100)",
			   "8", 0, OPT_MILLI(100), NULL },
	[SW_START_TIMEOUT] = { "start-timeout", 0, OPT_DURATION, NULL, "a node whose job has not started by then is not swept", "300s", 1, 86400 * SEC, NULL },
	[SW_TIMEOUT] = { "timeout", 0, OPT_DURATION, NULL, "the whole sweep; jobs still running are cancelled", "1h", 1, 7 * 86400 * SEC, NULL },
	[SW_WINDOW] = { "window", 0, OPT_DURATION, NULL, "the health check's window on each node", "1s", 0, 600 * SEC, NULL },
	[SW_GPUCTL] = { "gpuctl", 0, OPT_STRING, "PATH", "the gpuctl the jobs run (the same path on every node)", "this one", 0, 0, NULL },
	[SW_JSON] = OPT_SPEC_JSON,
	[SW_COMPARE] = { "compare", 0, OPT_FLAG, NULL, "compare two fleet.json: OLD NEW", NULL, 0, 0, NULL },
	[SW_RUN_NODE] = { "run-node", 0, OPT_FLAG, NULL, "what each job runs: this node's result into DIR/nodes/", NULL, 0, 0, NULL },
	[SW_NODE] = { "node", 0, OPT_STRING, "NAME", "--run-node: the node's name", "$SLURMD_NODENAME", 0, 0, NULL },
	[SW_GATHER] = { "gather", 0, OPT_FLAG, NULL, "no jobs: the report of the results already in DIR/nodes", NULL, 0, 0, NULL },
	[SW_MAX_DRAIN] = { "max-drain", 0, OPT_INT, "N", "--drain drains at most N nodes (never a GPU model's last one)",
			   "10% of the nodes, at least 1", 1, FLEET_MAX_NODES, NULL },
};
#define NOPTS (sizeof(sweep_opts) / sizeof(sweep_opts[0]))
static const struct cmd_help sweep_help = {
	.name = CMD_NAME, .usage = SLURM_SWEEP_USAGE, .what = SLURM_SWEEP_WHAT, .opts = sweep_opts, .nopts = NOPTS,
	.exits = SLURM_SWEEP_EXITS, .operands = true, /* --compare OLD NEW */
};


void slurm_sweep_help(FILE *out)
{
	help_print_cmd(out, &sweep_help);
}

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * SEC + t.tv_nsec;
}

/* ---- the submitting side ------------------------------------------------------------------- */

/* The nodes to sweep: scontrol show hostnames LIST, or sinfo's (in the partition). */
static int list_nodes(struct cmd_ctx *ctx, const struct sweep_args *a, struct sweep_job **jobs, size_t *n)
{
	char err[400];
	int rc = sweep_list_nodes(a->nodes, a->partition, jobs, n, err, sizeof(err));
	if (rc)
		cmd_error(ctx, CMD_NAME, "%s", err);
	return rc;
}

static int submit(const struct sweep_args *a, const char *name, struct sweep_job *j)
{
	struct sweep_sbatch sb;
	sweep_sbatch_argv(&sb, a->gpuctl, sweep_levels[a->level], a->window_ns, a->out, a->partition, name, j->node);
	char *out = NULL, err[300];
	int rc = sweep_spawn_read(sb.argv, &out, err, sizeof(err));
	bool ok = sweep_job_submitted(j, rc, out, err);
	free(out);
	return ok ? 0 : -1;
}

/* One look at the jobs: squeue by the sweep's job name, then the result files. */
static int poll_jobs(struct cmd_ctx *ctx, const struct sweep_args *a, const char *name, struct sweep_job *jobs, size_t n,
		     long long waited_ns)
{
	char err[400];
	int rc = sweep_poll(a->out, name, jobs, n, waited_ns, a->start_timeout_ns, err, sizeof(err));
	if (rc)
		cmd_error(ctx, CMD_NAME, "%s", err);
	return rc;
}

static void write_text_cb(const void *f, FILE *o) { fleet_write_text(f, o); }
static void write_html_cb(const void *f, FILE *o) { fleet_write_html(f, o); }

static void warn_cb(void *ctx, const char *msg)
{
	cmd_error(ctx, CMD_NAME, "%s", msg);
}

/* Reads every node's result into the fleet (nodes without one as not swept). */
static int gather(struct cmd_ctx *ctx, const struct sweep_args *a, const struct sweep_job *jobs, size_t n, struct fleet *f)
{
	fleet_init(f, a->gather ? "" : sweep_levels[a->level], a->threshold);
	char err[300];
	int rc = sweep_gather(f, a->out, jobs, n, warn_cb, ctx, err, sizeof(err));
	if (rc)
		cmd_error(ctx, CMD_NAME, "%s", err);
	return rc;
}

static int write_reports(struct cmd_ctx *ctx, const struct sweep_args *a, const struct fleet *f)
{
	char path[4200];
	json_t *doc = fleet_to_json(f);
	snprintf(path, sizeof(path), "%s/fleet.json", a->out);
	int rc = doc ? sweep_write_file(path, sweep_write_json, doc) : (errno = ENOMEM, -1);
	json_decref(doc);
	if (!rc) {
		snprintf(path, sizeof(path), "%s/fleet.txt", a->out);
		rc = sweep_write_file(path, write_text_cb, f);
	}
	if (!rc) {
		snprintf(path, sizeof(path), "%s/fleet.html", a->out);
		rc = sweep_write_file(path, write_html_cb, f);
	}
	if (rc) {
		cmd_error(ctx, CMD_NAME, "cannot write '%s': %s", path, strerror(errno));
		return EXIT_IOERR;
	}
	return EXIT_OK;
}

/* --drain: the nodes fleet_drain_plan picks, as the health-check hook drains
 * (scontrol update); the others that call for a drain are named, not drained. */
static int drain_nodes(struct cmd_ctx *ctx, const struct sweep_args *a, const struct fleet *f)
{
	enum fleet_drain_plan *plan = calloc(f->n ? f->n : 1, sizeof(*plan));
	if (!plan) {
		cmd_error(ctx, CMD_NAME, "out of memory");
		return EXIT_SOFTWARE;
	}
	size_t cap = a->max_drain ? a->max_drain : fleet_drain_cap_default(f->n);
	(void)fleet_drain_plan(f, cap, plan);
	int rc = EXIT_OK;
	for (size_t i = 0; i < f->n; i++) {
		struct sweep_drain_result r;
		const char *name = f->node[i].name;
		sweep_drain_node(f, i, plan[i], &r);
		switch (r.outcome) {
		case SWEEP_DRAIN_NONE:
			break;
		case SWEEP_DRAIN_OVER_CAP:
			fprintf(ctx->out, "not drained %s: the drain cap is reached (%zu of %zu nodes; --max-drain N): %s\n",
				name, cap, f->n, r.reason);
			break;
		case SWEEP_DRAIN_LAST_OF_MODEL:
			fprintf(ctx->out, "not drained %s: the last node of its GPU model in service: %s\n", name, r.reason);
			break;
		case SWEEP_DRAIN_BAD_NAME:
			cmd_error(ctx, CMD_NAME, "not drained: bad node name '%s'", name);
			rc = EXIT_DATAERR;
			break;
		case SWEEP_DRAIN_UNREADABLE:
			cmd_error(ctx, CMD_NAME, "cannot read node '%s' (scontrol show node: %s)", name, r.err);
			rc = EXIT_UNAVAILABLE;
			break;
		case SWEEP_DRAIN_FAILED:
			cmd_error(ctx, CMD_NAME, "%s", r.err);
			rc = EXIT_UNAVAILABLE;
			break;
		case SWEEP_DRAIN_DRAINED:
			fprintf(ctx->out, "drained %s: %s\n", name, r.reason);
			break;
		case SWEEP_DRAIN_OTHERS:
			fprintf(ctx->out, "left %s as it is: drained by someone else (%s)\n", name, r.other);
			break;
		case SWEEP_DRAIN_ALREADY:
			fprintf(ctx->out, "left %s as it is: drained by a sweep already for the same reason\n", name);
			break;
		}
	}
	free(plan);
	return rc;
}

static int report(struct cmd_ctx *ctx, const struct sweep_args *a, struct sweep_job *jobs, size_t n, long long t0);

static int sweep(struct cmd_ctx *ctx, struct sweep_args *a)
{
	char err[4400];
	if (sweep_dir_make(a->out, err, sizeof(err)) != 0) {
		cmd_error(ctx, CMD_NAME, "%s", err);
		return EXIT_IOERR;
	}
	struct sweep_job *jobs = NULL;
	size_t n = 0;
	int rc = list_nodes(ctx, a, &jobs, &n);
	if (rc)
		return rc;
	sweep_results_forget(a->out, jobs, n); /* a result left from an earlier sweep in DIR is not this one's */
	char name[64];
	snprintf(name, sizeof(name), "gpuctl-sweep-%ld", (long)getpid());
	long long t0 = now_ns();
	size_t submitted = 0;
	for (size_t i = 0; i < n; i++)
		submitted += submit(a, name, &jobs[i]) == 0;
	if (!submitted) {
		cmd_error(ctx, CMD_NAME, "sbatch failed for every node (%s)", jobs[0].note);
		free(jobs);
		return EXIT_UNAVAILABLE;
	}
	size_t c[SWEEP_JOB_NSTATES], last[SWEEP_JOB_NSTATES] = { (size_t)-1 };
	for (;;) {
		long long waited = now_ns() - t0;
		rc = poll_jobs(ctx, a, name, jobs, n, waited);
		if (rc)
			break;
		sweep_counts(jobs, n, c);
		if (memcmp(c, last, sizeof(c)) != 0) {
			fprintf(ctx->err, "sweep: %zu done, %zu running, %zu pending, %zu failed, %zu not started (%.0f s)\n",
				c[SWEEP_JOB_DONE], c[SWEEP_JOB_RUNNING], c[SWEEP_JOB_PENDING], c[SWEEP_JOB_FAILED],
				c[SWEEP_JOB_NOT_STARTED], (double)waited / SEC);
			memcpy(last, c, sizeof(c));
		}
		if (c[SWEEP_JOB_PENDING] + c[SWEEP_JOB_RUNNING] == 0)
			break;
		if (waited >= a->timeout_ns) {
			for (size_t i = 0; i < n; i++)
				if (sweep_job_timeout(&jobs[i], a->timeout_ns))
					sweep_cancel(&jobs[i]);
			break;
		}
		struct timespec ts = { 0, POLL_NS };
		nanosleep(&ts, NULL);
	}
	if (rc) {
		for (size_t i = 0; i < n; i++)
			if (jobs[i].state == SWEEP_JOB_PENDING || jobs[i].state == SWEEP_JOB_RUNNING)
				sweep_cancel(&jobs[i]);
		free(jobs);
		return rc;
	}
	return report(ctx, a, jobs, n, t0);
}

/* The fleet from the jobs' results: its reports, printed, and --drain. Frees jobs. */
static int report(struct cmd_ctx *ctx, const struct sweep_args *a, struct sweep_job *jobs, size_t n, long long t0)
{
	struct fleet f;
	int rc = gather(ctx, a, jobs, n, &f);
	free(jobs);
	if (!rc)
		rc = write_reports(ctx, a, &f);
	if (!rc) {
		json_t *doc = a->json ? fleet_to_json(&f) : NULL;
		if (doc)
			sweep_write_json(doc, ctx->out);
		else
			fleet_write_text(&f, ctx->out);
		fprintf(ctx->err, "sweep: %zu nodes in %.1f s; %s/fleet.json, fleet.txt, fleet.html\n", n,
			(double)(now_ns() - t0) / SEC, a->out);
		json_decref(doc);
		int drc = a->drain ? drain_nodes(ctx, a, &f) : EXIT_OK;
		rc = drc ? drc : fleet_verdict(&f);
	}
	fleet_free(&f);
	return rc;
}

/* --gather: the report of the results already in DIR/nodes (a sweep that was
 * interrupted, or results copied together by hand), without Slurm. */
static int gather_dir(struct cmd_ctx *ctx, const struct sweep_args *a)
{
	struct sweep_job *jobs = NULL;
	size_t n = 0;
	char err[4400];
	int rc = sweep_jobs_from_dir(a->out, &jobs, &n, warn_cb, ctx, err, sizeof(err));
	if (rc) {
		cmd_error(ctx, CMD_NAME, "%s", err);
		return rc;
	}
	return report(ctx, a, jobs, n, now_ns());
}

/* ---- --compare OLD NEW ---------------------------------------------------------------------- */

static int load_fleet(struct cmd_ctx *ctx, const char *path, struct fleet *f)
{
	char err[4600];
	int rc = sweep_fleet_load(path, f, err, sizeof(err));
	if (rc)
		cmd_error(ctx, CMD_NAME, "%s", err);
	return rc;
}

static int compare(struct cmd_ctx *ctx, const struct sweep_args *a)
{
	struct fleet old, new;
	int rc = load_fleet(ctx, a->operand[0], &old);
	if (rc)
		return rc;
	rc = load_fleet(ctx, a->operand[1], &new);
	if (rc) {
		fleet_free(&old);
		return rc;
	}
	static char out[1 << 16];
	size_t changes = fleet_compare(&old, &new, out, sizeof(out));
	fprintf(ctx->out, "%s -> %s: %zu change%s (threshold %.1f%%)\n%s", a->operand[0], a->operand[1], changes,
		changes == 1 ? "" : "s", new.threshold_pct, out);
	fleet_free(&old);
	fleet_free(&new);
	return EXIT_OK;
}

/* ---- options -------------------------------------------------------------------------------- */

static int parse(struct cmd_ctx *ctx, int argc, char **argv, struct sweep_args *a)
{
	struct opt_parser p;
	struct opt_value v;
	int k;
	a->threshold = FLEET_DEFAULT_THRESHOLD_PCT;
	a->start_timeout_ns = 300 * SEC;
	a->timeout_ns = 3600 * SEC;
	a->window_ns = 1 * SEC;
	opt_init(&p, argc, argv, sweep_opts, NOPTS);
	while ((k = opt_next(&p, &v)) != OPT_DONE) {
		switch (k) {
		case OPT_HELP:
			help_print_cmd(ctx->out, &sweep_help);
			return -1;
		case OPT_ERROR:
			return help_opt_error(ctx, CMD_NAME, &p);
		case OPT_OPERAND:
			if (a->noperands == 2)
				return help_unexpected(ctx, CMD_NAME, v.text);
			a->operand[a->noperands++] = v.text;
			break;
		case SW_PARTITION: a->partition = v.text; break;
		case SW_NODES: a->nodes = v.text; break;
		case SW_LEVEL: a->level = (int)v.num; break;
		case SW_OUT: a->out = v.text; break;
		case SW_DRAIN: a->drain = true; break;
		case SW_THRESHOLD: {
			a->threshold = v.real;
			if (!(a->threshold > 0 && a->threshold < 100)) {
				cmd_error(ctx, CMD_NAME, "bad threshold '%s' (a percentage above 0 and under 100)", v.text);
				return EXIT_USAGE;
			}
			break;
		}
		case SW_START_TIMEOUT: a->start_timeout_ns = v.num; break;
		case SW_TIMEOUT: a->timeout_ns = v.num; break;
		case SW_WINDOW: a->window_ns = v.num; break;
		case SW_GPUCTL: a->gpuctl = v.text; break;
		case SW_JSON: a->json = true; break;
		case SW_COMPARE: a->compare = true; break;
		case SW_RUN_NODE: a->run_node = true; break;
		case SW_GATHER: a->gather = true; break;
		case SW_MAX_DRAIN: a->max_drain = (size_t)v.num; break;
		default: a->node = v.text; break; /* SW_NODE */
		}
	}
	if (a->compare != (a->noperands > 0) || (a->compare && a->noperands != 2)) {
		cmd_error(ctx, CMD_NAME, a->compare ? "--compare needs two files: OLD.json NEW.json"
						    : "unexpected argument '%s'", a->noperands ? a->operand[0] : "");
		return EXIT_USAGE;
	}
	if ((a->run_node || a->gather) && !a->out) {
		cmd_error(ctx, CMD_NAME, "%s needs --out DIR", a->run_node ? "--run-node" : "--gather");
		return EXIT_USAGE;
	}
	/* the job's shell line quotes these in '...' */
	const char *quoted[] = { a->out, a->gpuctl };
	for (int i = 0; i < 2; i++)
		if (quoted[i] && (strchr(quoted[i], '\'') || strchr(quoted[i], '\n') || strlen(quoted[i]) > 4000)) {
			cmd_error(ctx, CMD_NAME, "bad path '%s' (no quote or line end, at most 4000 characters)", quoted[i]);
			return EXIT_USAGE;
		}
	return EXIT_OK;
}

int slurm_sweep(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct sweep_args a = { 0 };
	/* argv[0] is "slurm": the options start after "sweep" */
	int rc = parse(ctx, argc - 1, argv + 1, &a);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (a.compare)
		return compare(ctx, &a);
	if (a.run_node)
		return sweep_run_node(ctx, &a);
	if (a.gather)
		return gather_dir(ctx, &a);
	char self[4096];
	if (!a.gpuctl) {
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0) {
			cmd_error(ctx, CMD_NAME, "cannot find this gpuctl (/proc/self/exe); give --gpuctl PATH");
			return EXIT_SOFTWARE;
		}
		self[n] = '\0';
		a.gpuctl = self;
	}
	char dir[64], out_abs[4096];
	if (!a.out) {
		time_t t = time(NULL);
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(dir, sizeof(dir), "gpuctl-sweep-%Y%m%d-%H%M%S", &tm);
		a.out = dir;
	}
	if (a.out[0] != '/') { /* the jobs run in their own directory */
		char cwd[2048];
		if (!getcwd(cwd, sizeof(cwd))) {
			cmd_error(ctx, CMD_NAME, "cannot read the current directory: %s", strerror(errno));
			return EXIT_IOERR;
		}
		snprintf(out_abs, sizeof(out_abs), "%s/%s", cwd, a.out);
		a.out = out_abs;
	}
	return sweep(ctx, &a);
}
