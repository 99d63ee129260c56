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

#include "pool/proto.h"
#include "pool_cmd.h"

extern char **environ;

static void usage(FILE *out)
{
	fprintf(out,
		"usage: gpuctl submit [--gpus N | --gpu-ids LIST | --mig PROFILE] [--mem-per-gpu BYTES] [--nvlink]\n"
		"                     [--priority P] [--time LIMIT] [--name NAME] [--after JOB] [--shell]\n"
		"                     [--image IMAGE [--runtime podman] [--mount SRC:DST[:ro]]... [--env K=V]...]\n"
		"                     [--socket PATH] [--json | --id-only] -- COMMAND [ARGS...]\n\n"
		"Queues COMMAND on the GPU pool (the agent started with --pool) and prints its job id.\n"
		"It runs as you, in this directory, with this environment and CUDA_VISIBLE_DEVICES set\n"
		"to its GPUs' UUIDs (MIG UUID for a slice); stdout/stderr go to files ('gpuctl logs').\n\n"
		"options:\n"
		"  --gpus N            whole GPUs (default 1)\n"
		"  --gpu-ids LIST      only these GPUs, e.g. 0,2,5-7 (with --gpus N: N of them)\n"
		"  --mig PROFILE       one MIG slice of that profile, e.g. 1g.10gb\n"
		"  --mem-per-gpu SIZE  free memory each GPU must have (e.g. 40G, 512M)\n"
		"  --nvlink            every pair of its GPUs connected by NVLink\n"
		"  --priority P        -1000..1000, higher runs first (default 0)\n"
		"  --time LIMIT        time limit: SIGTERM, then SIGKILL; Slurm's MM (minutes), MM:SS,\n"
		"                      HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, or units: 90s, 2h, 1d, 1h30m\n"
		"  --name NAME         a name to show in the queue\n"
		"  --after JOB         start only once JOB has ended (whatever its outcome)\n"
		"  --shell             run COMMAND (one string) with /bin/sh -c\n"
		"  --image IMAGE       run COMMAND in a container of IMAGE (podman, as you) with exactly\n"
		"                      its GPUs (CDI); refused when the image needs a newer CUDA than the\n"
		"                      driver's (docs/containers.md)\n"
		"  --runtime NAME      the container runtime: podman (the default and only one)\n"
		"  --mount SRC:DST[:ro] bind-mount SRC at DST in the container (repeatable)\n"
		"  --env KEY=VALUE     set in the container (repeatable; it gets none of yours)\n"
		"  --socket PATH       the agent's control socket (default: $GPUCTL_POOL_SOCKET,\n"
		"                      /run/gpuctl/pool.sock, or $XDG_RUNTIME_DIR/gpuctl-pool.sock)\n"
		"  --json              print the answer as JSON; --id-only: print the id only\n"
		POOL_CMD_EXITS);
}

/* The request is JSON: a string that is not UTF-8 cannot be sent (jansson would drop it). */
static bool is_utf8(const char *s)
{
	json_t *t = json_string(s);
	json_decref(t);
	return t != NULL;
}

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;
	errno = 0;
	if (!*s || *s == '-')
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || errno || v > max)
		return -1;
	*out = v;
	return 0;
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
			snprintf(msg, len, "unknown runtime (podman)");
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
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(ctx->out);
			return EXIT_OK;
		}
		int f = pool_cmd_flag(ctx, "submit", argc, argv, &i, &o);
		if (f < 0)
			return EXIT_USAGE;
		if (f > 0)
			continue;
		if (strcmp(a, "--nvlink") == 0) {
			s->nvlink = true;
			continue;
		}
		if (strcmp(a, "--shell") == 0) {
			s->shell = true;
			continue;
		}
		if (strcmp(a, "--id-only") == 0) {
			id_only = true;
			continue;
		}
		static const char *const value_flags[] = { "--gpus", "--gpu-ids", "--mig", "--mem-per-gpu", "--priority",
							   "--time", "--name", "--after", "--image", "--runtime",
							   "--mount", "--env" };
		const char *v = NULL, *flag = NULL;
		bool bad = false;
		for (size_t k = 0; k < sizeof(value_flags) / sizeof(value_flags[0]) && !v && !bad; k++) {
			v = pool_cmd_value(argc, argv, &i, value_flags[k], &bad);
			flag = value_flags[k];
		}
		if (bad) {
			cmd_error(ctx, "submit", "option '%s' needs a value", flag);
			return EXIT_USAGE;
		}
		if (!v) {
			cmd_error(ctx, "submit", "unknown option '%s'; see 'gpuctl submit --help'", a);
			return EXIT_USAGE;
		}
		unsigned long long u;
		int rc = 0;
		if (strcmp(flag, "--gpus") == 0) {
			rc = parse_uint(v, 64, &u) || u == 0;
			s->gpus = (unsigned)u;
			have_gpus = true;
			if (rc)
				snprintf(msg, sizeof(msg), "bad GPU count '%s' (1 to 64)", v);
		} else if (strcmp(flag, "--gpu-ids") == 0) {
			rc = proto_parse_gpu_ids(v, &s->gpu_ids, msg, sizeof(msg));
		} else if (strcmp(flag, "--mig") == 0) {
			rc = strlen(v) >= sizeof(s->mig) || !*v;
			snprintf(s->mig, sizeof(s->mig), "%s", v);
			if (rc)
				snprintf(msg, sizeof(msg), "bad MIG profile '%s'", v);
		} else if (strcmp(flag, "--mem-per-gpu") == 0) {
			rc = proto_parse_bytes(v, &s->mem_per_gpu, msg, sizeof(msg));
		} else if (strcmp(flag, "--priority") == 0) {
			char *end;
			errno = 0;
			long p = strtol(v, &end, 10);
			rc = !*v || *end || errno || p < -PROTO_MAX_PRIORITY || p > PROTO_MAX_PRIORITY;
			s->priority = (int)p;
			if (rc)
				snprintf(msg, sizeof(msg), "bad priority '%s' (-1000 to 1000)", v);
		} else if (strcmp(flag, "--time") == 0) {
			rc = proto_parse_time_limit(v, &s->time_limit_s, msg, sizeof(msg));
		} else if (strcmp(flag, "--name") == 0) {
			rc = strlen(v) > PROTO_NAME_LEN || !is_utf8(v);
			snprintf(s->name, sizeof(s->name), "%.*s", PROTO_NAME_LEN, v); /* a longer one is refused just below */
			if (rc)
				snprintf(msg, sizeof(msg), "%s", strlen(v) > PROTO_NAME_LEN ? "name longer than 64 bytes"
											     : "name is not valid UTF-8");
		} else if (strcmp(flag, "--image") == 0 || strcmp(flag, "--runtime") == 0 || strcmp(flag, "--mount") == 0 ||
			   strcmp(flag, "--env") == 0) {
			rc = container_flag(s, flag, v, msg, sizeof(msg));
		} else if (strcmp(flag, "--after") == 0) {
			rc = parse_uint(v, INT64_MAX, &u) || u == 0;
			s->after = u;
			if (rc)
				snprintf(msg, sizeof(msg), "bad job id '%s'", v);
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
