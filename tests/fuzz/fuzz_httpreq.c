/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_httpreq.c - the agent's request-target, Accept and Accept-Encoding
 * parsing on arbitrary bytes: the first line is the target, the rest is given
 * to both header parsers; and the whole input, as the start of a connection,
 * to the door's head check (http_head_check), at several limits; the rest also
 * as a Host header (http_host_allowed). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/httpreq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	const char *nl = memchr(s, '\n', size);
	size_t tlen = nl ? (size_t)(nl - s) : size;
	struct http_req r;
	http_req_parse(s, tlen, &r);
	if (r.status == 200 && r.route == ROUTE_NONE)
		__builtin_trap();
	if (r.status != 200 && (!r.error[0] || r.status < 400 || r.status > 499))
		__builtin_trap();
	for (size_t limit = 1; limit <= 4096; limit *= 8) {
		int status = 0;
		char msg[160] = "";
		size_t n = size < limit ? size : limit;
		enum http_head_verdict v = http_head_check(s, n, limit, &status, msg, sizeof(msg));
		if (v == HEAD_REFUSE && (status < 400 || status > 599 || !msg[0]))
			__builtin_trap();
		if (v == HEAD_MORE && n >= limit)
			__builtin_trap(); /* a full buffer is never "more" */
	}
	if (nl) {
		size_t alen = size - tlen - 1;
		char *accept = malloc(alen + 1);
		if (!accept)
			return 0;
		memcpy(accept, nl + 1, alen);
		accept[alen] = '\0';
		(void)http_accept_openmetrics(accept);
		(void)http_accept_gzip(accept);
		(void)http_host_allowed(accept, "gpu01, gpu01.example.org");
		free(accept);
	}
	return 0;
}
