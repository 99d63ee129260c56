/* SPDX-License-Identifier: Apache-2.0 */
/* queue.c - `gpuctl queue`: the pool's running and pending jobs, each pending
 * one with the scheduler's reason (docs/pool.md). */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/table.h"
#include "core/jscan.h"
#include "pool/queue_view.h"
#include "help.h"
#include "pool_cmd.h"

static const struct opt_spec queue_opts[] = { POOL_OPT_SPECS };

static const struct cmd_help queue_help = {
	.name = "queue",
	.usage = "[--socket PATH] [--json]",
	.what = "Everyone's jobs, one line each: running ones, then pending ones in the order they will be\n"
		"considered. Columns: ID, USER, NAME, STATE, GPUS (the GPUs a job holds, or what it asks\n"
		"for), PRIO, TIME (running or waiting for how long), REASON (why a pending job waits, e.g.\n"
		"\"waiting for 4 NVLink-connected GPUs\", and the first one's expected start when the\n"
		"running jobs' time limits tell it; for a running job, a warning such as \"idle allocation:\n"
		"SM activity < 5% for 30m\"); then how many run and wait. --json: the agent's answer.\n",
	.opts = queue_opts,
	.nopts = sizeof(queue_opts) / sizeof(queue_opts[0]),
	.exits = POOL_CMD_EXIT_CODES,
};

/* The answer without "ok", as pool_cmd_print_json writes it, re-indented
 * straight from its text; through jansson only when it is not the plain
 * successful answer jscan_pretty reproduces (an error, anything unusual). */
static int print_json(struct cmd_ctx *ctx, const char *answer, size_t len)
{
	struct abuf out;
	abuf_init(&out);
	enum jscan_tok ok;
	int rc;
	if (jscan_pretty(answer, len, "ok", &out, &ok) == 0 && ok == JS_TRUE) {
		rc = fwrite(out.p, 1, out.len, ctx->out) == out.len ? EXIT_OK : EXIT_IOERR;
	} else {
		json_t *resp;
		rc = pool_cmd_answer(ctx, "queue", answer, len, &resp);
		if (rc == EXIT_OK)
			rc = pool_cmd_print_json(ctx, resp);
		json_decref(resp);
	}
	abuf_free(&out);
	return rc;
}

static void row_gpus(const struct queue_view *v, const struct queue_row *r, bool pending, char *gpus, size_t n)
{
	if (pending) {
		const char *mig = queue_view_str(v, r->req_mig);
		if (mig)
			snprintf(gpus, n, "(MIG %s)", mig);
		else
			snprintf(gpus, n, "(%lld%s)", r->req_gpus, r->req_nvlink ? " NVLink" : "");
		return;
	}
	snprintf(gpus, n, "%s", r->gpus);
	if (r->has_mig_instance) {
		size_t l = strlen(gpus);
		snprintf(gpus + l, n - l, " (MIG gi %lld)", r->mig_gi);
	}
	if (!gpus[0])
		snprintf(gpus, n, "-");
}

static uint64_t positive(long long v)
{
	return v > 0 ? (uint64_t)v : 0;
}

static int print_table(struct cmd_ctx *ctx, const char *answer, size_t len)
{
	struct queue_view v;
	if (queue_view_read(answer, len, &v) != 0 || !v.ok) {
		/* jansson says what is wrong, or the agent's error */
		queue_view_free(&v);
		json_t *resp;
		int rc = pool_cmd_answer(ctx, "queue", answer, len, &resp);
		json_decref(resp);
		if (rc == EXIT_OK) {
			cmd_error(ctx, "queue", "malformed answer from the agent");
			rc = EXIT_IOERR;
		}
		return rc;
	}
	pool_cmd_sim_banner(ctx, v.simulated);
	struct table *t = table_new(8);
	const char *heads[] = { "ID", "USER", "NAME", "STATE", "GPUS", "PRIO", "TIME", "REASON" };
	for (unsigned c = 0; c < 8; c++)
		table_col(t, c, heads[c], c == 0 || c == 5 ? TABLE_RIGHT : TABLE_LEFT);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	uint64_t now_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	for (size_t i = 0; i < v.n; i++) {
		const struct queue_row *r = &v.rows[i];
		char gpus[128], dur[32];
		const char *state = queue_view_str(&v, r->state);
		bool pending = state && strcmp(state, "pending") == 0;
		row_gpus(&v, r, pending, gpus, sizeof(gpus));
		uint64_t since = positive(pending ? r->submit_ns : r->start_ns);
		pool_fmt_duration(since && now_ns > since ? now_ns - since : 0, dur, sizeof(dur));
		table_row(t);
		table_cellf(t, "%llu", (unsigned long long)positive(r->id));
		table_cell(t, queue_view_str(&v, r->user));
		const char *name = queue_view_str(&v, r->name);
		table_cell(t, name && name[0] ? name : "-");
		table_cell(t, state);
		table_cell(t, gpus);
		table_cellf(t, "%lld", r->priority);
		table_cellf(t, "%s%s", pending ? "waiting " : "", dur);
		const char *warning = queue_view_str(&v, r->warning); /* a running job's: an idle allocation */
		const char *reason = pending ? queue_view_str(&v, r->reason) : warning ? warning : "";
		if (pending && r->est_start_ns > 0) { /* the head: when running jobs' time limits free its GPUs */
			char when[32];
			pool_fmt_time(positive(r->est_start_ns), when, sizeof(when));
			table_cellf(t, "%s; expected start %s", reason ? reason : "", when);
		} else {
			table_cell(t, reason);
		}
	}
	table_print(t, ctx->out);
	table_free(t);
	fprintf(ctx->out, "%lld running, %lld pending\n", v.running, v.pending);
	queue_view_free(&v);
	return EXIT_OK;
}

int cmd_queue(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct pool_opts o = { 0 };
	struct opt_parser p;
	struct opt_value v;
	int opt, opt_rc;
	opt_init(&p, argc, argv, queue_help.opts, queue_help.nopts);
	while ((opt = help_opt_next(ctx, &queue_help, &p, &v, &opt_rc)) != OPT_DONE) {
		if (opt == OPT_HELP || opt == OPT_ERROR)
			return opt_rc;
		pool_cmd_take(&o, opt, &v);
	}
	char *answer;
	size_t len;
	int rc = pool_cmd_call_raw(ctx, "queue", &o, pool_cmd_request("queue"), &answer, &len);
	if (rc)
		return rc;
	rc = o.json ? print_json(ctx, answer, len) : print_table(ctx, answer, len);
	free(answer);
	return rc;
}
