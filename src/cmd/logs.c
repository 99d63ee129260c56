/* logs.c - `gpuctl logs [-f] JOB`: a job's stdout (or stderr) through the
 * agent, which checks that it is yours (docs/pool.md). */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../pool/proto.h"
#include "pool_cmd.h"

#define FOLLOW_POLL_MS 200

static void usage(FILE *out)
{
	fprintf(out,
		"usage: gpuctl logs [-f|--follow] [--stderr] [--socket PATH] [--json] JOB\n\n"
		"Prints what job JOB wrote to stdout (--stderr: stderr). With -f, keeps printing\n"
		"until the job ends. --json: one chunk as JSON (data in base64, offset, size).\n");
}

int cmd_logs(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct pool_opts o = { 0 };
	bool follow = false;
	int stream = 1;
	uint64_t id = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(ctx->out);
			return EXIT_OK;
		}
		int f = pool_cmd_flag(ctx, "logs", argc, argv, &i, &o);
		if (f < 0)
			return EXIT_USAGE;
		if (f > 0)
			continue;
		if (strcmp(a, "-f") == 0 || strcmp(a, "--follow") == 0) {
			follow = true;
		} else if (strcmp(a, "--stderr") == 0) {
			stream = 2;
		} else if (a[0] == '-') {
			cmd_error(ctx, "logs", "unknown option '%s'; see 'gpuctl logs --help'", a);
			return EXIT_USAGE;
		} else if (id) {
			cmd_error(ctx, "logs", "one job at a time");
			return EXIT_USAGE;
		} else if (pool_cmd_job_id(ctx, "logs", a, &id)) {
			return EXIT_USAGE;
		}
	}
	if (!id) {
		cmd_error(ctx, "logs", "no job id given");
		return EXIT_USAGE;
	}
	if (o.json && follow) {
		cmd_error(ctx, "logs", "'--json' goes without '-f'");
		return EXIT_USAGE;
	}
	uint64_t offset = 0;
	for (;;) {
		json_t *req = pool_cmd_request("logs"), *resp;
		json_object_set_new(req, "job", json_integer((json_int_t)id));
		json_object_set_new(req, "stream", json_integer(stream));
		json_object_set_new(req, "offset", json_integer((json_int_t)offset));
		int rc = pool_cmd_call(ctx, "logs", &o, req, &resp);
		if (rc)
			return rc;
		if (o.json) {
			rc = pool_cmd_print_json(ctx, resp);
			json_decref(resp);
			return rc;
		}
		const char *b64 = json_string_value(json_object_get(resp, "data_b64"));
		size_t blen = b64 ? strlen(b64) : 0;
		unsigned char *data = malloc(blen / 4 * 3 + 1);
		long n = data && b64 ? proto_b64_decode(b64, data) : -1;
		if (n < 0) {
			free(data);
			json_decref(resp);
			cmd_error(ctx, "logs", "malformed answer from the agent");
			return EXIT_IOERR;
		}
		if (n > 0 && fwrite(data, 1, (size_t)n, ctx->out) != (size_t)n) {
			free(data);
			json_decref(resp);
			return EXIT_IOERR;
		}
		free(data);
		if (fflush(ctx->out) != 0) {
			json_decref(resp);
			return EXIT_IOERR; /* main says why */
		}
		offset = pool_json_u64(resp, "offset");
		uint64_t size = pool_json_u64(resp, "size");
		bool ended = json_is_true(json_object_get(resp, "ended"));
		json_decref(resp);
		if (offset < size)
			continue; /* more is there already */
		if (!follow || ended)
			return EXIT_OK;
		struct timespec ts = { 0, FOLLOW_POLL_MS * 1000000L };
		nanosleep(&ts, NULL);
	}
}
