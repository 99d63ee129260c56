/* queue.c - `gpuctl queue`: the pool's running and pending jobs, each pending
 * one with the scheduler's reason (docs/pool.md). */
#include "cmd.h"

#include <string.h>
#include <time.h>

#include "../core/table.h"
#include "pool_cmd.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: gpuctl queue [--socket PATH] [--json]\n\n"
		"Running jobs, then pending jobs in the order they will be considered, with why each waits\n"
		"(\"waiting for 4 NVLink-connected GPUs\", \"GPU 3 unhealthy\"). Everyone's jobs are listed;\n"
		"commands are shown for your own only.\n");
}

int cmd_queue(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct pool_opts o = { 0 };
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(ctx->out);
			return EXIT_OK;
		}
		int f = pool_cmd_flag(ctx, "queue", argc, argv, &i, &o);
		if (f < 0)
			return EXIT_USAGE;
		if (f == 0) {
			cmd_error(ctx, "queue", "unknown option '%s'; see 'gpuctl queue --help'", argv[i]);
			return EXIT_USAGE;
		}
	}
	json_t *resp;
	int rc = pool_cmd_call(ctx, "queue", &o, pool_cmd_request("queue"), &resp);
	if (rc)
		return rc;
	if (o.json) {
		rc = pool_cmd_print_json(ctx, resp);
		json_decref(resp);
		return rc;
	}
	pool_cmd_banner(ctx, resp);
	struct table *t = table_new(8);
	const char *heads[] = { "ID", "USER", "NAME", "STATE", "GPUS", "PRIO", "TIME", "REASON" };
	for (unsigned c = 0; c < 8; c++)
		table_col(t, c, heads[c], c == 0 || c == 5 ? TABLE_RIGHT : TABLE_LEFT);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	uint64_t now_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	size_t i;
	json_t *j;
	json_array_foreach(json_object_get(resp, "jobs"), i, j) {
		char gpus[128], dur[32];
		const char *state = json_string_value(json_object_get(j, "state"));
		bool pending = state && strcmp(state, "pending") == 0;
		if (pending) {
			const json_t *req = json_object_get(j, "request");
			const char *mig = json_string_value(json_object_get(req, "mig"));
			if (mig)
				snprintf(gpus, sizeof(gpus), "(MIG %s)", mig);
			else
				snprintf(gpus, sizeof(gpus), "(%lld%s)", (long long)json_integer_value(json_object_get(req, "gpus")),
					 json_is_true(json_object_get(req, "nvlink")) ? " NVLink" : "");
		} else {
			pool_fmt_gpus(j, gpus, sizeof(gpus));
		}
		uint64_t since = pending ? pool_json_u64(j, "submit_ns") : pool_json_u64(j, "start_ns");
		pool_fmt_duration(since && now_ns > since ? now_ns - since : 0, dur, sizeof(dur));
		table_row(t);
		table_cellf(t, "%llu", (unsigned long long)pool_json_u64(j, "id"));
		table_cell(t, json_string_value(json_object_get(j, "user")));
		const char *name = json_string_value(json_object_get(j, "name"));
		table_cell(t, name && name[0] ? name : "-");
		table_cell(t, state);
		table_cell(t, gpus);
		table_cellf(t, "%lld", (long long)json_integer_value(json_object_get(j, "priority")));
		table_cellf(t, "%s%s", pending ? "waiting " : "", dur);
		table_cell(t, pending ? json_string_value(json_object_get(j, "reason")) : "");
	}
	table_print(t, ctx->out);
	table_free(t);
	fprintf(ctx->out, "%lld running, %lld pending\n", (long long)json_integer_value(json_object_get(resp, "running")),
		(long long)json_integer_value(json_object_get(resp, "pending")));
	json_decref(resp);
	return EXIT_OK;
}
