/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto.h - the pool's control protocol (pure: parse and serialize, no I/O).
 *
 * A client connects to the agent's Unix socket, writes one JSON object (a
 * request), shuts down its writing side and reads one JSON object back (the
 * response): {"ok": true, ...} or {"ok": false, "error": "one line"}.
 * Who is asking is never in the request: the agent takes it from the
 * socket's peer credentials (SO_PEERCRED). docs/pool.md lists every field.
 *
 * proto_parse_request() is the only code that reads what a client sent; it
 * checks every field's type, range and size, so a malformed or hostile
 * request is refused here with a message and changes nothing.
 */
#ifndef GPUCTL_POOL_PROTO_H
#define GPUCTL_POOL_PROTO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/mig_profile.h"
#include "core/units.h"
#include "pool/container.h"

#define PROTO_VERSION 1
#define PROTO_MAX_REQUEST (4u << 20)    /* bytes of one request (environment included) */
#define PROTO_MAX_ARGS 4096u
#define PROTO_MAX_ENV 4096u
#define PROTO_MAX_STRING (128u << 10)   /* one argument or environment entry */
#define PROTO_MAX_PATH 4096u
#define PROTO_NAME_LEN 64u
#define PROTO_MAX_PRIORITY 1000
#define PROTO_MAX_TIME_S (366ull * 86400ull)
#define PROTO_MAX_LOG_CHUNK (1u << 20)  /* bytes of log one request returns */

enum proto_op { OP_PING = 0, OP_SUBMIT, OP_QUEUE, OP_SHOW, OP_CANCEL, OP_LOGS, OP_JOBS };

struct proto_submit {
	unsigned gpus;               /* whole GPUs (0 with mig set) */
	uint64_t gpu_ids;            /* bitmask of allowed GPU indexes; 0: any */
	char mig[MIG_PROFILE_LEN];   /* MIG profile ("1g.10gb") or "" */
	uint64_t mem_per_gpu;        /* bytes free needed on each GPU; 0: any */
	bool nvlink;                 /* every pair NVLink-connected */
	int priority;                /* -1000..1000, higher first */
	uint64_t time_limit_s;       /* 0: none */
	char name[PROTO_NAME_LEN + 1];
	uint64_t after;              /* job id to wait for; 0: none */
	bool shell;                  /* run argv[0] through /bin/sh -c */
	char cwd[PROTO_MAX_PATH];
	size_t argc;
	char **argv;
	size_t envc;
	char **env;                  /* "KEY=VALUE" */
	/* a container job (container.h): argv is the command in the container */
	char image[CONTAINER_IMAGE_LEN]; /* "" for a bare job */
	char runtime[16];            /* "podman" (default) */
	size_t nmounts;
	char **mounts;               /* "SRC:DST[:ro]" */
	size_t ncenv;
	char **cenv;                 /* "KEY=VALUE" set in the container */
};

struct proto_request {
	enum proto_op op;
	uint64_t job;                /* show, cancel, logs */
	struct proto_submit sub;     /* submit */
	int stream;                  /* logs: 1 stdout, 2 stderr */
	uint64_t offset;             /* logs: byte offset */
	uint64_t max_bytes;          /* logs: at most this many (<= PROTO_MAX_LOG_CHUNK) */
	bool raw;                    /* logs: the bytes follow the answer's line as they are (no base64, no max_bytes) */
	bool all_users;              /* jobs: everyone's (default: the caller's own; root only) */
	bool history;                /* jobs: ended jobs too */
	unsigned limit;              /* jobs: at most this many, newest first (0: 100) */
};

/* Parses one request. Returns 0, or -1 with a one-line message; on error
 * nothing needs freeing. On success call proto_request_free(). */
int proto_parse_request(const char *buf, size_t len, struct proto_request *out, char *err, size_t errlen);
void proto_request_free(struct proto_request *r);
/* The request as JSON (what a client sends); NULL when out of memory. */
json_t *proto_request_json(const struct proto_request *r);

/* --time -> seconds (1 .. PROTO_MAX_TIME_S): a duration as core/units.h
 * reads it ("90s", "2h", "1h30m", "1.5h") in whole seconds, or Slurm's MM:SS,
 * HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS; anything else ("1h30", "25:99:99",
 * "1500ms") refused. A number alone (minutes in sbatch, seconds in gpuctl's
 * durations) is refused with the fix: "write 30m or 30s" (units_parse_seconds). */
int proto_parse_time_limit(const char *s, uint64_t *seconds, char *err, size_t errlen);
/* The largest byte size a request or a pool setting takes, read by
 * core/units.h's units_parse_size from 1 byte up. */
#define PROTO_MAX_BYTES UNITS_SIZE_MAX

/* Base64 (RFC 4648) for log bytes, which need not be UTF-8. encode: out holds
 * 4 * ((n + 2) / 3) + 1 bytes. decode: returns the length, or -1 when malformed;
 * out holds 3 * (strlen(in) / 4) bytes. */
void proto_b64_encode(const unsigned char *in, size_t n, char *out);
long proto_b64_decode(const char *in, unsigned char *out);

/* The error response {"ok": false, "error": msg} (a new reference). */
json_t *proto_error(const char *msg);
/* proto_error with a printf-style message (at most 299 bytes). */
json_t *proto_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
