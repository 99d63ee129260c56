/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_poolproto.c - the pool's control-protocol parser (and the value
 * syntaxes submit uses) on arbitrary bytes: no crash, a one-line error, and
 * what parses is within bounds and survives a round trip. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu_select.h"
#include "pool/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_request r;
	char err[256];
	if (proto_parse_request((const char *)data, size, &r, err, sizeof(err)) != 0) {
		if (!err[0] || strchr(err, '\n'))
			__builtin_trap();
	} else {
		if (r.op == OP_SUBMIT) {
			const struct proto_submit *s = &r.sub;
			if (s->argc == 0 || !s->argv || s->cwd[0] != '/' || s->gpus > 64 ||
			    (s->mig[0] && (s->gpus || s->gpu_ids)) || (!s->mig[0] && s->gpus == 0) ||
			    s->priority < -PROTO_MAX_PRIORITY || s->priority > PROTO_MAX_PRIORITY ||
			    s->time_limit_s > PROTO_MAX_TIME_S || strlen(s->name) > PROTO_NAME_LEN)
				__builtin_trap();
			for (size_t i = 0; i < s->envc; i++)
				if (!strchr(s->env[i], '=') || s->env[i][0] == '=')
					__builtin_trap();
			/* a container job's fields pass container.h's checks; a bare job has none */
			char cerr[256];
			if (!s->image[0] && (s->runtime[0] || s->nmounts || s->ncenv))
				__builtin_trap();
			if (s->image[0] && (container_check_image(s->image, cerr, sizeof(cerr)) ||
					    container_check_runtime(s->runtime, cerr, sizeof(cerr))))
				__builtin_trap();
			for (size_t i = 0; i < s->nmounts; i++)
				if (container_check_mount(s->mounts[i], cerr, sizeof(cerr)))
					__builtin_trap();
			for (size_t i = 0; i < s->ncenv; i++)
				if (container_check_env(s->cenv[i], cerr, sizeof(cerr)))
					__builtin_trap();
		}
		if (r.max_bytes > PROTO_MAX_LOG_CHUNK || (r.op == OP_LOGS && r.stream != 1 && r.stream != 2))
			__builtin_trap();
		/* what a client would send parses back to the same request */
		json_t *j = proto_request_json(&r);
		char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
		if (text) {
			struct proto_request r2;
			if (proto_parse_request(text, strlen(text), &r2, err, sizeof(err)) != 0)
				__builtin_trap();
			if (r2.op != r.op || r2.job != r.job || r2.sub.argc != r.sub.argc || r2.sub.gpus != r.sub.gpus)
				__builtin_trap();
			if (strcmp(r2.sub.image, r.sub.image) != 0 || r2.sub.nmounts != r.sub.nmounts ||
			    r2.sub.ncenv != r.sub.ncenv)
				__builtin_trap();
			proto_request_free(&r2);
		}
		free(text);
		json_decref(j);
		proto_request_free(&r);
	}
	/* the value syntaxes on the same bytes, as a string */
	char s[64];
	size_t n = size < sizeof(s) - 1 ? size : sizeof(s) - 1;
	memcpy(s, data, n);
	s[n] = '\0';
	uint64_t v;
	if (proto_parse_time_limit(s, &v, err, sizeof(err)) == 0 && (v == 0 || v > PROTO_MAX_TIME_S))
		__builtin_trap();
	if (gpu_select_indexes(s, &v, err, sizeof(err)) == 0 && v == 0)
		__builtin_trap();
	unsigned char out[48];
	if (strlen(s) <= 64 && proto_b64_decode(s, out) > 48)
		__builtin_trap();
	return 0;
}
