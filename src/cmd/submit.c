/* SPDX-License-Identifier: Apache-2.0 */
/*
 * submit.c - `gpuctl submit`: queue a command on the pool (docs/pool.md).
 * Sends the command, the current directory and the environment; the agent
 * answers with the job id at once. The command runs without a shell unless
 * --shell is given.
 */
#include "cmd.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "help.h"
#include "core/gpu_select.h"
#include "pool/proto.h"
#include "pool_cmd.h"

extern char **environ;

enum {
	OPT_SUBMIT_GPUS = POOL_OPT_FIRST_OWN,
	OPT_SUBMIT_GPU_IDS,
	OPT_SUBMIT_MIG,
	OPT_SUBMIT_MEM,
	OPT_SUBMIT_NVLINK,
	OPT_SUBMIT_PRIORITY,
	OPT_SUBMIT_TIME,
	OPT_SUBMIT_NAME,
	OPT_SUBMIT_AFTER,
	OPT_SUBMIT_SHELL,
	OPT_SUBMIT_IMAGE,
	OPT_SUBMIT_RUNTIME,
	OPT_SUBMIT_MOUNT,
	OPT_SUBMIT_ENV,
	OPT_SUBMIT_ID_ONLY,
};
static const struct opt_spec submit_opts[] = {
	POOL_OPT_SPECS,
	[OPT_SUBMIT_GPUS] = { "gpus", 0, OPT_INT, NULL, "whole GPUs", "1", 1, 64, NULL },
	[OPT_SUBMIT_GPU_IDS] = { "gpu-ids", 0, OPT_STRING, "LIST", "only these GPUs, e.g. 0,2,5-7 (with --gpus N: N of them)",
				 NULL, 0, 0, NULL },
	[OPT_SUBMIT_MIG] = { "mig", 0, OPT_STRING, "PROFILE", "one MIG slice of that profile, e.g. 1g.10gb", NULL, 0, 0,
			     NULL },
	[OPT_SUBMIT_MEM] = { "mem-per-gpu", 0, OPT_SIZE, NULL, "free memory each GPU must have (e.g. 40G, 512M; docs/units.md)",
			     NULL, 1, (long long)PROTO_MAX_BYTES, NULL },
	[OPT_SUBMIT_NVLINK] = { "nvlink", 0, OPT_FLAG, NULL, "every pair of its GPUs connected by NVLink", NULL, 0, 0, NULL },
	[OPT_SUBMIT_PRIORITY] = { "priority", 0, OPT_INT, "P", "-1000..1000, higher runs first", "0", -PROTO_MAX_PRIORITY,
				  PROTO_MAX_PRIORITY, NULL },
	[OPT_SUBMIT_TIME] = { "time", 0, OPT_STRING, "LIMIT",
			      "time limit: SIGTERM, then SIGKILL; a duration in whole seconds:\n"
			      "90s, 30m, 2h, 1.5h, 1d, 1h30m (docs/units.md), or Slurm's MM:SS,\n"
			      "HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS; a number alone is refused",
			      NULL, 0, 0, NULL },
	[OPT_SUBMIT_NAME] = { "name", 0, OPT_STRING, "NAME", "a name to show in the queue", NULL, 0, 0, NULL },
	[OPT_SUBMIT_AFTER] = { "after", 0, OPT_INT, "JOB", "start only once JOB has ended (whatever its outcome)", NULL, 1,
			       INT64_MAX, NULL },
	[OPT_SUBMIT_SHELL] = { "shell", 0, OPT_FLAG, NULL, "run COMMAND (one string) with /bin/sh -c", NULL, 0, 0, NULL },
	[OPT_SUBMIT_IMAGE] = { "image", 0, OPT_STRING, "IMAGE",
			       "run COMMAND in a container of IMAGE (podman or docker, as you) with exactly\n"
			       "its GPUs (CDI); refused when the image needs a newer CUDA than the\n"
			       "driver's (docs/containers.md)",
			       NULL, 0, 0, NULL },
	[OPT_SUBMIT_RUNTIME] = { "runtime", 0, OPT_STRING, "NAME", "the container runtime: podman (the default) or docker",
				 NULL, 0, 0, NULL },
	[OPT_SUBMIT_MOUNT] = { "mount", 0, OPT_STRING, "SRC:DST[:ro]", "bind-mount SRC at DST in the container (repeatable)",
			       NULL, 0, 0, NULL },
	[OPT_SUBMIT_ENV] = { "env", 0, OPT_STRING, "KEY=VALUE", "set in the container (repeatable; it gets none of yours)",
			     NULL, 0, 0, NULL },
	[OPT_SUBMIT_ID_ONLY] = { "id-only", 0, OPT_FLAG, NULL, "print the job id only", NULL, 0, 0, NULL },
};

static const struct cmd_help submit_help = {
	.name = "submit",
	.usage = "[--gpus N | --gpu-ids LIST | --mig PROFILE] [--mem-per-gpu SIZE] [--nvlink]\n"
		 "                     [--priority P] [--time LIMIT] [--name NAME] [--after JOB] [--shell]\n"
		 "                     [--image IMAGE [--runtime podman|docker] [--mount SRC:DST[:ro]]... [--env K=V]...]\n"
		 "                     [--socket PATH] [--json | --id-only] [--] COMMAND [ARGS...]",
	.what = "Queues COMMAND on the GPU pool (the agent started with --pool) and prints its job id.\n"
		"It runs as you, in this directory, with this environment and CUDA_VISIBLE_DEVICES set\n"
		"to its GPUs' UUIDs (MIG UUID for a slice); stdout/stderr go to files ('gpuctl logs').\n"
		"Options end at COMMAND's first word (or at \"--\").\n",
	.opts = submit_opts,
	.nopts = sizeof(submit_opts) / sizeof(submit_opts[0]),
	.exits = POOL_CMD_EXIT_CODES,
	.operands = true,
};

/* The request is JSON: a string that is not UTF-8 cannot be sent (jansson would drop it). */
static bool is_utf8(const char *s)
{
	json_t *t = json_string(s);
	json_decref(t);
	return t != NULL;
}

/* --image, --runtime, --mount, --env: checked as the agent checks them
 * (container.h); --mount and --env add to s->mounts and s->cenv (arrays of
 * CONTAINER_MAX_MOUNTS and CONTAINER_MAX_ENV of argv's strings). 0, or -1 with msg. */
static int container_flag(struct proto_submit *s, const char *flag, const char *v, char *msg, size_t len)
{
	if (!is_utf8(v)) {
		snprintf(msg, len, "the value of '%s' is not valid UTF-8", flag);
		return -1;
	}
	if (strcmp(flag, "--image") == 0) {
		if (container_check_image(v, msg, len))
			return -1;
		snprintf(s->image, sizeof(s->image), "%s", v);
		return 0;
	}
	if (strcmp(flag, "--runtime") == 0) {
		if (strlen(v) >= sizeof(s->runtime)) {
			snprintf(msg, len, "unknown runtime (podman or docker)");
			return -1;
		}
		if (container_check_runtime(v, msg, len))
			return -1;
		snprintf(s->runtime, sizeof(s->runtime), "%s", v);
		return 0;
	}
	bool mount = strcmp(flag, "--mount") == 0;
	char ***list = mount ? &s->mounts : &s->cenv;
	size_t *n = mount ? &s->nmounts : &s->ncenv;
	if (*n >= (mount ? CONTAINER_MAX_MOUNTS : CONTAINER_MAX_ENV)) {
		snprintf(msg, len, "more than %u '%s' options", mount ? CONTAINER_MAX_MOUNTS : CONTAINER_MAX_ENV, flag);
		return -1;
	}
	if (mount ? container_check_mount(v, msg, len) : container_check_env(v, msg, len))
		return -1;
	(*list)[(*n)++] = (char *)v; /* argv's: lives as long as the command */
	return 0;
}

int cmd_submit(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct pool_opts o = { 0 };
	struct proto_request r;
	memset(&r, 0, sizeof(r));
	r.op = OP_SUBMIT;
	struct proto_submit *s = &r.sub;
	char *mounts[CONTAINER_MAX_MOUNTS], *cenv[CONTAINER_MAX_ENV];
	s->mounts = mounts;
	s->cenv = cenv;
	bool id_only = false, have_gpus = false;
	char msg[256];
	struct opt_parser p;
	struct opt_value v;
	int opt, opt_rc, i = argc; /* argv[i]: COMMAND's first word */
	opt_init(&p, argc, argv, submit_help.opts, submit_help.nopts);
	p.stop_at_operand = true;
	while ((opt = help_opt_next(ctx, &submit_help, &p, &v, &opt_rc)) != OPT_DONE) {
		if (opt == OPT_HELP || opt == OPT_ERROR)
			return opt_rc;
		if (opt == OPT_OPERAND) {
			i = p.index - 1;
			break;
		}
		if (pool_cmd_take(&o, opt, &v))
			continue;
		int rc = 0;
		switch (opt) {
		case OPT_SUBMIT_GPUS:
			s->gpus = (unsigned)v.num;
			have_gpus = true;
			break;
		case OPT_SUBMIT_GPU_IDS:
			rc = gpu_select_indexes(v.text, &s->gpu_ids, msg, sizeof(msg));
			break;
		case OPT_SUBMIT_MIG: {
			char q[41];
			rc = strlen(v.text) >= sizeof(s->mig);
			snprintf(s->mig, sizeof(s->mig), "%s", v.text);
			if (rc)
				snprintf(msg, sizeof(msg), "bad MIG profile '%s'", units_quoted(v.text, q));
			break;
		}
		case OPT_SUBMIT_MEM:
			s->mem_per_gpu = (uint64_t)v.num;
			break;
		case OPT_SUBMIT_NVLINK:
			s->nvlink = true;
			break;
		case OPT_SUBMIT_PRIORITY:
			s->priority = (int)v.num;
			break;
		case OPT_SUBMIT_TIME:
			rc = proto_parse_time_limit(v.text, &s->time_limit_s, msg, sizeof(msg));
			break;
		case OPT_SUBMIT_NAME:
			rc = strlen(v.text) > PROTO_NAME_LEN || !is_utf8(v.text);
			snprintf(s->name, sizeof(s->name), "%.*s", PROTO_NAME_LEN, v.text); /* a longer one is refused */
			if (rc)
				snprintf(msg, sizeof(msg), "%s", strlen(v.text) > PROTO_NAME_LEN ? "name longer than 64 bytes"
												  : "name is not valid UTF-8");
			break;
		case OPT_SUBMIT_AFTER:
			s->after = (uint64_t)v.num;
			break;
		case OPT_SUBMIT_SHELL:
			s->shell = true;
			break;
		case OPT_SUBMIT_IMAGE:
		case OPT_SUBMIT_RUNTIME:
		case OPT_SUBMIT_MOUNT:
		case OPT_SUBMIT_ENV: {
			char flag[64];
			rc = container_flag(s, opt_spelling(&submit_opts[opt], flag, sizeof(flag)), v.text, msg, sizeof(msg));
			break;
		}
		case OPT_SUBMIT_ID_ONLY:
			id_only = true;
			break;
		}
		if (rc) {
			cmd_error(ctx, "submit", "%s", msg);
			return EXIT_USAGE;
		}
	}
	if (i >= argc) {
		cmd_error(ctx, "submit", "no command given (gpuctl submit [options] -- COMMAND ...)");
		return EXIT_USAGE;
	}
	if (s->mig[0] && (have_gpus || s->gpu_ids || s->nvlink)) {
		cmd_error(ctx, "submit", "'--mig' goes without '--gpus', '--gpu-ids' and '--nvlink'");
		return EXIT_USAGE;
	}
	if (!s->image[0] && (s->runtime[0] || s->nmounts || s->ncenv)) {
		cmd_error(ctx, "submit", "'--runtime', '--mount' and '--env' go with '--image'");
		return EXIT_USAGE;
	}
	if (s->shell && argc - i != 1) {
		cmd_error(ctx, "submit", "with '--shell' give the command as one string");
		return EXIT_USAGE;
	}
	for (int k = i; k < argc; k++)
		if (!is_utf8(argv[k])) {
			cmd_error(ctx, "submit", "word %d of the command is not valid UTF-8 (the request is JSON)", k - i + 1);
			return EXIT_USAGE;
		}
	if (!getcwd(s->cwd, sizeof(s->cwd))) {
		cmd_error(ctx, "submit", "cannot read the current directory: %s", strerror(errno));
		return EXIT_IOERR;
	}
	s->argc = (size_t)(argc - i);
	s->argv = argv + i;
	size_t envc = 0;
	while (environ && environ[envc])
		envc++;
	/* what JSON cannot carry is left out, and said (jansson dropped it silently) */
	char **env = calloc(envc + 1, sizeof(char *));
	if (!env) {
		cmd_error(ctx, "submit", "out of memory");
		return EXIT_SOFTWARE;
	}
	s->env = env;
	s->envc = 0;
	for (size_t k = 0; k < envc; k++) {
		if (is_utf8(environ[k])) {
			env[s->envc++] = environ[k];
			continue;
		}
		const char *eq = strchr(environ[k], '=');
		int keylen = eq ? (int)(eq - environ[k]) : (int)strlen(environ[k]);
		char key[80];
		snprintf(key, sizeof(key), "%.*s", keylen < 64 ? keylen : 64, environ[k]);
		cmd_error(ctx, "submit", "warning: the environment variable %s is not valid UTF-8: the job does not get it",
			  is_utf8(key) ? key : "(its name is not UTF-8 either)");
	}
	json_t *req = proto_request_json(&r);
	free(env);
	json_t *resp;
	int rc = pool_cmd_call(ctx, "submit", &o, req, &resp);
	if (rc)
		return rc;
	if (o.json) {
		rc = pool_cmd_print_json(ctx, resp);
	} else if (id_only) {
		fprintf(ctx->out, "%llu\n", (unsigned long long)pool_json_u64(resp, "job"));
	} else {
		pool_cmd_banner(ctx, resp);
		fprintf(ctx->out, "job %llu submitted (pending)\n", (unsigned long long)pool_json_u64(resp, "job"));
	}
	json_decref(resp);
	return rc;
}
