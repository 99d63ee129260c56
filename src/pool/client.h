/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client.h - one request to the pool's control socket (the commands'
 * and the benchmark's side of proto.h). No printing.
 */
#ifndef GPUCTL_POOL_CLIENT_H
#define GPUCTL_POOL_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum pool_call_status {
	POOL_CALL_OK = 0,        /* *resp holds the answer (which may say ok: false) */
	POOL_CALL_NO_AGENT = -1, /* nothing listens on the socket */
	POOL_CALL_IO = -2,       /* the exchange failed or the answer is malformed */
};

/* Sends req, returns the response in *resp (a new reference). */
int pool_call(const char *socket_path, const json_t *req, json_t **resp, char *err, size_t errlen);

/* Sends req and returns the answer's bytes as read (NUL-terminated, the
 * caller frees them), not parsed: `queue` reads 10 000 jobs without a
 * jansson tree (jscan.h). An empty answer is POOL_CALL_IO. */
int pool_call_raw(const char *socket_path, const json_t *req, char **answer, size_t *answer_len, char *err,
		  size_t errlen);
/* Sends req and reads an answer whose line is followed by raw bytes (logs
 * with raw): the line's object in *head, then its "length" bytes copied to
 * out as they arrive (*copied of them; fewer when the agent sent fewer;
 * *write_failed when out refused them). */
int pool_call_stream(const char *socket_path, const json_t *req, json_t **head, FILE *out, uint64_t *copied,
		     bool *write_failed, char *err, size_t errlen);
/* The answer as a JSON object, or NULL with err set ("malformed answer from the agent: ..."). */
json_t *pool_answer_parse(const char *answer, size_t len, char *err, size_t errlen);

#endif
