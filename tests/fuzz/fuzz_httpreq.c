/* fuzz_httpreq.c - the agent's request-target, Accept and Accept-Encoding
 * parsing on arbitrary bytes: the first line is the target, the rest is given
 * to both header parsers. */
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
	if (nl) {
		size_t alen = size - tlen - 1;
		char *accept = malloc(alen + 1);
		if (!accept)
			return 0;
		memcpy(accept, nl + 1, alen);
		accept[alen] = '\0';
		(void)http_accept_openmetrics(accept);
		(void)http_accept_gzip(accept);
		free(accept);
	}
	return 0;
}
