/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slurm.c - `gpuctl slurm VERB` (docs/slurm.md):
 *   gres-conf     gres.conf lines and the slurm.conf NodeName fragment
 *   health-check  HealthCheckProgram: drain on FAIL, resume what it drained
 *   job-start     prolog: record a Slurm job's GPUs with the agent
 *   job-end       epilog: end it (accounting kept), optional AdminComment
 *   stats         one line of a Slurm job's GPU statistics
 *   sweep         fleet acceptance over Slurm (slurm_sweep.c)
 */
#include "cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/abuf.h"
#include "core/units.h"
#include "sampler/sampler.h"
#include "slurm/gres.h"
#include "slurm/node.h"
#include "pool/slurm_req.h"
#include "slurm/cpu_cores.h"
#include "slurm/scontrol.h"
#include "slurm/summary.h"
#include "health_cmd.h"
#include "help.h"
#include "pool_cmd.h"
#include "slurm_sweep.h"

/* what `gpuctl slurm [VERB] --help` says (help.h); the verbs' functions are in cmd_slurm's table */
static const struct sub_help verb_help[] = {
	{ "gres-conf", "[--node NAME] [--dev-dir DIR] [--type NAME] [--no-fragment]",
	  "gres.conf lines for this node (Type, File, Cores, Links = NVLink counts; MIG instances\n"
	  "as MultipleFiles) and the slurm.conf 'NodeName ... Gres=' fragment\n",
	  "0 written, 64 usage (a bad --node or --type), 65 a CPU list it cannot turn into cores, 66/69 no server" },
	{ "health-check", "[--node NAME] [--window DURATION] [--idle] [--scontrol PATH] [--dry-run]",
	  "for HealthCheckProgram: on FAIL drains the node with 'gpuctl: GPU N RULE';\n"
	  "when healthy again resumes it, only if gpuctl drained it\n",
	  "0 PASS, 1 WARN, 2 FAIL (drained), 64 usage, 69 the node or scontrol could not be read or updated" },
	{ "job-start", "--job ID --gpus LIST --uid UID [--user NAME] [--socket PATH]",
	  "for the Prolog (PrologFlags=Alloc): the agent accounts the job's GPUs\n",
	  "0 done, 64 usage, 65 the agent refused, 74 the exchange failed, 75 no agent" },
	{ "job-end", "--job ID [--state done|failed|cancelled|timeout] [--socket PATH]",
	  "for the Epilog: ends the accounting (the statistics stay)\n",
	  "0 done, 64 usage, 65 the agent refused (no such Slurm job), 74 the exchange failed, 75 no agent" },
	{ "stats", "--job ID [--admin-comment [--scontrol PATH]] [--socket PATH] [--json]",
	  "the job's GPU statistics so far (or final) in one line; --admin-comment\n"
	  "also writes them to the running job's AdminComment (scontrol update)\n",
	  "0 done, 64 usage, 65 the agent refused, 69 scontrol failed, 74 the exchange failed, 75 no agent" },
	{ "sweep", SLURM_SWEEP_USAGE, SLURM_SWEEP_WHAT, SLURM_SWEEP_EXITS }, /* slurm_sweep.c */
};
static const char verb_notes[] = "Environment defaults: SLURMD_NODENAME (--node), SLURM_JOB_ID (--job),\n"
				 "SLURM_JOB_GPUS (--gpus), SLURM_JOB_UID (--uid), SLURM_JOB_USER (--user).\n";
#define NVERBS (sizeof(verb_help) / sizeof(verb_help[0]))
enum { VERB_GRES_CONF, VERB_HEALTH_CHECK, VERB_JOB_START, VERB_JOB_END, VERB_STATS, VERB_SWEEP };

/* Each verb's option table (core/opts.h); sweep's is in slurm_sweep.c. */
enum { GRES_NODE, GRES_DEV_DIR, GRES_TYPE, GRES_NO_FRAGMENT };
static const struct opt_spec gres_opts[] = {
	[GRES_NODE] = { "node", 0, OPT_STRING, "NAME", "the node's name in the lines", "this host's", 0, 0, NULL },
	[GRES_DEV_DIR] = { "dev-dir", 0, OPT_STRING, "DIR", "the device nodes' directory in File=", "/dev", 0, 0, NULL },
	[GRES_TYPE] = { "type", 0, OPT_STRING, "NAME", "the GPUs' Type= (no spaces, ':', ',' or '=')", "from the model", 0, 0,
			NULL },
	[GRES_NO_FRAGMENT] = { "no-fragment", 0, OPT_FLAG, NULL, "leave out the slurm.conf fragment", NULL, 0, 0, NULL },
};
enum { HC_NODE, HC_WINDOW, HC_IDLE, HC_SCONTROL, HC_DRY_RUN };
static const struct opt_spec hc_opts[] = {
	[HC_NODE] = { "node", 0, OPT_STRING, "NAME", "the node to drain or resume", "$SLURMD_NODENAME, else the host name", 0,
		      0, NULL },
	[HC_WINDOW] = { "window", 0, OPT_DURATION, NULL, "the health check's window, 0 to 10m (docs/units.md)", "1s", 0,
			600 * (long long)UNITS_NS_PER_S, NULL },
	[HC_IDLE] = { "idle", 0, OPT_FLAG, NULL, "the GPUs should be idle (no process, no load)", NULL, 0, 0, NULL },
	[HC_SCONTROL] = { "scontrol", 0, OPT_STRING, "PATH", "the scontrol to run", "scontrol", 0, 0, NULL },
	[HC_DRY_RUN] = { "dry-run", 0, OPT_FLAG, NULL, "say what it would do (\"would drain NODE: reason\"), change\n"
			 "nothing; without a working scontrol the node counts as not drained", NULL, 0, 0, NULL },
};
/* job-start, job-end and stats: one table (each verb's usage line says what it takes) */
enum { JOB_ID = POOL_OPT_FIRST_OWN, JOB_GPUS, JOB_UID, JOB_USER, JOB_STATE, JOB_SCONTROL, JOB_ADMIN_COMMENT };
static const struct opt_spec job_opts[] = {
	POOL_OPT_SPECS,
	[JOB_ID] = { "job", 0, OPT_STRING, "ID", "the Slurm job", "$SLURM_JOB_ID", 0, 0, NULL },
	[JOB_GPUS] = { "gpus", 0, OPT_STRING, "LIST", "job-start: its GPUs (Slurm's list, 0,2-3)", "$SLURM_JOB_GPUS", 0, 0,
		       NULL },
	[JOB_UID] = { "uid", 0, OPT_STRING, "UID", "job-start: its user id", "$SLURM_JOB_UID", 0, 0, NULL },
	[JOB_USER] = { "user", 0, OPT_STRING, "NAME", "job-start: its user name", "$SLURM_JOB_USER", 0, 0, NULL },
	[JOB_STATE] = { "state", 0, OPT_STRING, "STATE", "job-end: how it ended (done, failed, cancelled, timeout)", "done",
			0, 0, NULL },
	[JOB_SCONTROL] = { "scontrol", 0, OPT_STRING, "PATH", "stats --admin-comment: the scontrol to run", "scontrol", 0, 0,
			   NULL },
	[JOB_ADMIN_COMMENT] = { "admin-comment", 0, OPT_FLAG, NULL, "stats: also write the line to the job's AdminComment",
				NULL, 0, 0, NULL },
};
#define NOPTS_OF(t) (sizeof(t) / sizeof((t)[0]))
static const struct { const struct opt_spec *opts; size_t n; } verb_opts[] = {
	[VERB_GRES_CONF] = { gres_opts, NOPTS_OF(gres_opts) },
	[VERB_HEALTH_CHECK] = { hc_opts, NOPTS_OF(hc_opts) },
	[VERB_JOB_START] = { job_opts, NOPTS_OF(job_opts) },
	[VERB_JOB_END] = { job_opts, NOPTS_OF(job_opts) },
	[VERB_STATS] = { job_opts, NOPTS_OF(job_opts) },
};

/* The verb's --help: its verb_help row with its option table (not sweep's: slurm_sweep.c has it). */
static struct cmd_help verb_cmd_help(unsigned verb, char name[32])
{
	snprintf(name, 32, "slurm %s", verb_help[verb].name);
	return (struct cmd_help){ .name = name, .usage = verb_help[verb].usage, .what = verb_help[verb].what,
				  .opts = verb_opts[verb].opts, .nopts = verb_opts[verb].n, .notes = verb_notes,
				  .exits = verb_help[verb].exits };
}

/* The parser over the verb's table, from argv[2] on (argv[1] is the verb). */
static void verb_opt_init(struct opt_parser *p, unsigned verb, int argc, char **argv)
{
	opt_init(p, argc - 1, argv + 1, verb_opts[verb].opts, verb_opts[verb].n);
}

/* help_opt_next with the verb's help: OPT_ERROR with *rc 64 after its line is
 * printed. (--help never gets here: cmd_slurm answers it first.) */
static int verb_opt_next(struct cmd_ctx *ctx, unsigned verb, struct opt_parser *p, struct opt_value *v, int *rc)
{
	char name[32];
	struct cmd_help h = verb_cmd_help(verb, name);
	return help_opt_next(ctx, &h, p, v, rc);
}

static int parse_u64(const struct cmd_ctx *ctx, const char *what, const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = s && *s ? strtoull(s, &end, 10) : 0;
	if (!s || !*s || *end || errno || v > max || *s == '-' || (v == 0 && strcmp(what, "uid") != 0)) {
		cmd_error(ctx, "slurm", "bad %s '%s'", what, s ? s : "");
		return EXIT_USAGE;
	}
	*out = v;
	return EXIT_OK;
}

/* ---- gres-conf -------------------------------------------------------------------- */

static int with_backend(struct cmd_ctx *ctx, struct gpu_backend *be)
{
	if (ctx->be)
		return EXIT_OK;
	return cmd_open_backend(ctx, be);
}

static void drop_backend(struct cmd_ctx *ctx, struct gpu_backend *be)
{
	if (ctx->be == be) {
		gpu_backend_close(be);
		ctx->be = NULL;
	}
}

static int do_gres_conf(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct slurm_gres_opts o = { 0 };
	bool fragment = true;
	struct opt_parser p;
	struct opt_value v;
	int opt, opt_rc;
	verb_opt_init(&p, VERB_GRES_CONF, argc, argv);
	while ((opt = verb_opt_next(ctx, VERB_GRES_CONF, &p, &v, &opt_rc)) != OPT_DONE) {
		if (opt == OPT_HELP || opt == OPT_ERROR)
			return opt_rc;
		switch (opt) {
		case GRES_NODE: o.node = v.text; break;
		case GRES_DEV_DIR: o.dev_dir = v.text; break;
		case GRES_TYPE: o.type = v.text; break;
		case GRES_NO_FRAGMENT: fragment = false; break;
		}
	}
	if (o.type && (!o.type[0] || strpbrk(o.type, " :,=\t"))) {
		cmd_error(ctx, "slurm gres-conf", "bad type '%s' (no spaces, ':', ',' or '=')", o.type);
		return EXIT_USAGE;
	}
	if (o.node && !slurm_node_name_ok(o.node)) {
		cmd_error(ctx, "slurm gres-conf", "bad node name '%s' (letters, digits, '.', '-', '_' and a host list's [,])",
			  o.node);
		return EXIT_USAGE;
	}
	struct gpu_backend be = { 0 };
	int rc = with_backend(ctx, &be);
	if (rc)
		return rc;
	static int cpu_core[SLURM_MAX_CPUS];
	unsigned ncpu = 0;
	if (!ctx->sys.simulated && slurm_host_cpu_cores("/sys", cpu_core, &ncpu) == 0) {
		o.cpu_core = cpu_core;
		o.ncpu = ncpu;
	}
	struct snapshot *snap = cmd_take_snapshot(ctx, "slurm gres-conf", GPU_GRP_BASIC, &rc);
	if (!snap) {
		drop_backend(ctx, &be);
		return rc;
	}
	struct abuf out;
	abuf_init(&out);
	char err[256];
	rc = slurm_gres_conf_file(snap, &o, ctx->sys.server_name, ctx->sys.simulated, fragment, &out, err, sizeof(err));
	if (rc)
		cmd_error(ctx, "slurm gres-conf", "%s", err);
	else
		fputs(out.p, ctx->out);
	abuf_free(&out);
	free(snap);
	drop_backend(ctx, &be);
	return rc ? EXIT_DATAERR : EXIT_OK;
}

/* ---- health-check ------------------------------------------------------------------- */

static int do_health_check(int argc, char **argv, struct cmd_ctx *ctx)
{
	const char *node = getenv("SLURMD_NODENAME"), *scontrol = "scontrol";
	double window = 1.0;
	bool idle = false, dry = false;
	struct opt_parser p;
	struct opt_value v;
	int opt, opt_rc;
	verb_opt_init(&p, VERB_HEALTH_CHECK, argc, argv);
	while ((opt = verb_opt_next(ctx, VERB_HEALTH_CHECK, &p, &v, &opt_rc)) != OPT_DONE) {
		if (opt == OPT_HELP || opt == OPT_ERROR)
			return opt_rc;
		switch (opt) {
		case HC_NODE: node = v.text; break;
		case HC_WINDOW: window = (double)v.num / 1e9; break;
		case HC_IDLE: idle = true; break;
		case HC_SCONTROL: scontrol = v.text; break;
		case HC_DRY_RUN: dry = true; break;
		}
	}
	char host[256];
	if (!node || !node[0]) {
		if (gethostname(host, sizeof(host)) != 0)
			snprintf(host, sizeof(host), "localhost");
		host[strcspn(host, ".")] = '\0';
		node = host;
	}
	if (!slurm_host_name_ok(node)) { /* it reaches scontrol */
		char q[41];
		cmd_error(ctx, "slurm health-check", "bad node name '%s' (letters, digits, '.', '-', '_'; not ALL)",
			  units_quoted(node, q));
		return EXIT_USAGE;
	}
	struct gpu_backend be = { 0 };
	int rc = with_backend(ctx, &be);
	if (rc)
		return rc;
	struct health_run *hr = calloc(1, sizeof(*hr));
	if (!hr) {
		drop_backend(ctx, &be);
		cmd_error(ctx, "slurm health-check", "out of memory");
		return EXIT_SOFTWARE;
	}
	hr->opts.expect_idle = idle;
	rc = health_run_collect(ctx, "slurm health-check", hr, window, NULL, NULL);
	if (rc) {
		free(hr);
		drop_backend(ctx, &be);
		return rc;
	}
	enum health_verdict verdict = health_run_verdict(hr);
	char reason[SLURM_REASON_LEN];
	bool fail = slurm_drain_reason(&hr->rep, hr->mask, reason, sizeof(reason));
	free(hr);
	drop_backend(ctx, &be);

	struct slurm_node_info ni;
	char err[400];
	bool known = scontrol_show_node(scontrol, node, &ni, err, sizeof(err)) == 0;
	if (dry && !known) { /* a dry run needs no scontrol: the node counts as not drained */
		memset(&ni, 0, sizeof(ni));
		snprintf(ni.state, sizeof(ni.state), "unknown (no scontrol)");
	} else if (!known) {
		cmd_error(ctx, "slurm health-check", "cannot read node '%s' from '%s show node' (%s)", node, scontrol, err);
		return EXIT_UNAVAILABLE;
	}
	enum slurm_hc_action act = slurm_health_decide(fail, reason, &ni);
	fprintf(ctx->out, "%s: health %s; node %s%s%s; action: %s%s%s\n", node, health_verdict_name(verdict), ni.state,
		ni.reason[0] ? ", reason: " : "", ni.reason, slurm_hc_action_name(act), fail ? ", " : "",
		fail ? reason : "");
	if (dry) {
		if (act == SLURM_HC_DRAIN)
			fprintf(ctx->out, "would drain %s: %s\n", node, reason);
		else if (act == SLURM_HC_RESUME)
			fprintf(ctx->out, "would resume %s\n", node);
		else
			fprintf(ctx->out, "would leave %s as it is\n", node);
		return health_exit_code(verdict);
	}
	if (act == SLURM_HC_NONE || act == SLURM_HC_KEEP_OTHERS)
		return health_exit_code(verdict);
	if (scontrol_node_action(scontrol, node, act, reason, err, sizeof(err)) != 0) {
		cmd_error(ctx, "slurm health-check", "%s", err);
		return EXIT_UNAVAILABLE;
	}
	return health_exit_code(verdict);
}

/* ---- job-start, job-end, stats --------------------------------------------------------- */

struct job_args {
	const char *job, *gpus, *uid, *user, *state, *scontrol;
	bool admin_comment;
	struct pool_opts po;
};

static int job_args_parse(int argc, char **argv, struct cmd_ctx *ctx, unsigned verb, const char *cmd,
			  struct job_args *a)
{
	a->job = getenv("SLURM_JOB_ID");
	a->gpus = getenv("SLURM_JOB_GPUS");
	a->uid = getenv("SLURM_JOB_UID");
	a->user = getenv("SLURM_JOB_USER");
	a->scontrol = "scontrol";
	struct opt_parser p;
	struct opt_value v;
	int opt, opt_rc;
	verb_opt_init(&p, verb, argc, argv);
	while ((opt = verb_opt_next(ctx, verb, &p, &v, &opt_rc)) != OPT_DONE) {
		if (opt == OPT_HELP || opt == OPT_ERROR)
			return EXIT_USAGE;
		if (pool_cmd_take(&a->po, opt, &v))
			continue;
		switch (opt) {
		case JOB_ID: a->job = v.text; break;
		case JOB_GPUS: a->gpus = v.text; break;
		case JOB_UID: a->uid = v.text; break;
		case JOB_USER: a->user = v.text; break;
		case JOB_STATE: a->state = v.text; break;
		case JOB_SCONTROL: a->scontrol = v.text; break;
		case JOB_ADMIN_COMMENT: a->admin_comment = true; break;
		}
	}
	if (!a->job) {
		cmd_error(ctx, cmd, "which Slurm job? (--job ID or SLURM_JOB_ID)");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* Sends a Slurm request; EXIT_OK with *resp, or the error printed. */
static int slurm_call(struct cmd_ctx *ctx, const char *cmd, struct job_args *a, const struct slurm_req *r,
		      json_t **resp)
{
	return pool_cmd_call(ctx, cmd, &a->po, slurm_req_json(r), resp);
}

static int do_job_start(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct job_args a = { 0 };
	int rc = job_args_parse(argc, argv, ctx, VERB_JOB_START, "slurm job-start", &a);
	if (rc)
		return rc;
	struct slurm_req r = { .op = SLURM_OP_START };
	uint64_t uid;
	char err[200];
	if (parse_u64(ctx, "job id", a.job, SLURM_JOB_MAX, &r.job) || !a.uid ||
	    parse_u64(ctx, "uid", a.uid, UINT32_MAX - 1, &uid))
		return EXIT_USAGE;
	r.uid = (uint32_t)uid;
	if (slurm_gpu_list_parse(a.gpus ? a.gpus : "", &r.gpu_mask, err, sizeof(err))) {
		cmd_error(ctx, "slurm job-start", "%s", err);
		return EXIT_USAGE;
	}
	if (a.user && strlen(a.user) <= SLURM_USER_LEN)
		snprintf(r.user, sizeof(r.user), "%s", a.user);
	json_t *resp;
	rc = slurm_call(ctx, "slurm job-start", &a, &r, &resp);
	if (rc)
		return rc;
	if (a.po.json) {
		rc = pool_cmd_print_json(ctx, resp);
		json_decref(resp);
		return rc;
	}
	fprintf(ctx->out, "Slurm job %llu: GPU accounting started (agent job %llu)\n", (unsigned long long)r.job,
		(unsigned long long)pool_json_u64(resp, "job"));
	json_decref(resp);
	return EXIT_OK;
}

static int show(struct cmd_ctx *ctx, const char *cmd, struct job_args *a, uint64_t job, json_t **resp)
{
	struct slurm_req r = { .op = SLURM_OP_SHOW, .job = job };
	return slurm_call(ctx, cmd, a, &r, resp);
}

static int do_job_end(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct job_args a = { 0 };
	int rc = job_args_parse(argc, argv, ctx, VERB_JOB_END, "slurm job-end", &a);
	if (rc)
		return rc;
	if (a.admin_comment) {
		cmd_error(ctx, "slurm job-end", "Slurm refuses AdminComment for a job that ended; use 'gpuctl slurm stats "
			  "--admin-comment' while it runs (the SPANK plugin's admin_comment=1 does)");
		return EXIT_USAGE;
	}
	struct slurm_req r = { .op = SLURM_OP_END };
	if (parse_u64(ctx, "job id", a.job, SLURM_JOB_MAX, &r.job))
		return EXIT_USAGE;
	snprintf(r.state, sizeof(r.state), "%s", a.state ? a.state : "done");
	json_t *resp;
	rc = slurm_call(ctx, "slurm job-end", &a, &r, &resp);
	if (rc)
		return rc;
	json_decref(resp);
	rc = show(ctx, "slurm job-end", &a, r.job, &resp);
	if (rc)
		return rc;
	char line[400];
	slurm_stats_summary(json_object_get(resp, "job"), line, sizeof(line));
	fprintf(ctx->out, "Slurm job %llu: %s\n", (unsigned long long)r.job, line);
	json_decref(resp);
	return EXIT_OK;
}

/* Slurm refuses AdminComment updates of a finished job: this runs while it
 * still runs (the SPANK plugin at a step's end, or the job itself). */
static int write_admin_comment(struct cmd_ctx *ctx, struct job_args *a, uint64_t job, const char *line)
{
	char err[500];
	if (scontrol_job_comment(a->scontrol, (unsigned long long)job, line, err, sizeof(err)) != 0) {
		cmd_error(ctx, "slurm stats", "%s", err);
		return EXIT_UNAVAILABLE;
	}
	return EXIT_OK;
}

static int do_stats(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct job_args a = { 0 };
	int rc = job_args_parse(argc, argv, ctx, VERB_STATS, "slurm stats", &a);
	if (rc)
		return rc;
	uint64_t job;
	if (parse_u64(ctx, "job id", a.job, SLURM_JOB_MAX, &job))
		return EXIT_USAGE;
	json_t *resp;
	rc = show(ctx, "slurm stats", &a, job, &resp);
	if (rc)
		return rc;
	if (a.po.json) {
		rc = pool_cmd_print_json(ctx, resp);
		json_decref(resp);
		return rc;
	}
	pool_cmd_banner(ctx, resp);
	char line[400];
	slurm_stats_summary(json_object_get(resp, "job"), line, sizeof(line));
	fprintf(ctx->out, "Slurm job %llu: %s\n", (unsigned long long)job, line);
	json_decref(resp);
	if (a.admin_comment)
		return write_admin_comment(ctx, &a, job, line);
	return EXIT_OK;
}

int cmd_slurm(int argc, char **argv, struct cmd_ctx *ctx)
{
	int v = help_sub_find(ctx, "slurm", verb_help, NVERBS, argc, argv);
	if (v == HELP_SUB_HELP)
		help_print_subs(ctx->out, "slurm", verb_help, NVERBS, verb_notes);
	if (v < 0)
		return v == HELP_SUB_HELP ? EXIT_OK : EXIT_USAGE;
	/* in verb_help's order */
	static int (*const verbs[NVERBS])(int, char **, struct cmd_ctx *) = {
		do_gres_conf, do_health_check, do_job_start, do_job_end, do_stats, slurm_sweep,
	};
	if (help_asked(argc, argv, 2)) {
		/* sweep reads its options from a table: its help lists each one */
		char name[32];
		if (v == VERB_SWEEP) {
			slurm_sweep_help(ctx->out);
		} else {
			struct cmd_help h = verb_cmd_help((unsigned)v, name);
			help_print_cmd(ctx->out, &h);
		}
		return EXIT_OK;
	}
	return verbs[v](argc, argv, ctx);
}
