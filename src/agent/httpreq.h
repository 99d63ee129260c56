/* SPDX-License-Identifier: Apache-2.0 */
/*
 * httpreq.h - what a request to the agent asks for, from its raw target
 * ("/api/v1/gpus?gpu=0,3"), Accept and Accept-Encoding headers. Pure and fuzzed
 * (tests/fuzz/fuzz_httpreq.c); the HTTP server (http.c) only dispatches.
 */
#ifndef GPUCTL_HTTPREQ_H
#define GPUCTL_HTTPREQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTPREQ_MAX_TARGET 1024

enum agent_route { ROUTE_NONE = 0, ROUTE_INDEX, ROUTE_METRICS, ROUTE_GPUS, ROUTE_HEALTH, ROUTE_HEALTHZ,
		   ROUTE_HISTORY, ROUTE_APP_JS, ROUTE_APP_CSS, ROUTE_POOL };

struct http_req {
	enum agent_route route;
	uint64_t gpu_mask;   /* ?gpu=0,3,5-7 on the JSON endpoints; all bits set when absent */
	bool pretty;         /* ?pretty=1: indented JSON (/api/v1/gpus, health, pool) */
	bool gpus_asked;     /* ?gpu= was given */
	uint64_t since_ns;   /* /api/v1/history's ?since=SECONDS (Unix time, up to 9 decimals); 0 when absent */
	int status;          /* 200 if the target is good, else the HTTP error to send */
	char error[160];     /* one line for the error body */
};

/* Parses a request target (path and query). Always fills out->status. */
void http_req_parse(const char *target, size_t len, struct http_req *out);
/* A ?gpu= list that names an index past the server's n GPUs is a bad request
 * (400): -1 with msg filled in; 0 if it names none (or was not given). */
int http_req_check_gpus(const struct http_req *r, unsigned n, char *msg, size_t msglen);
/* True if an Accept header asks for OpenMetrics (application/openmetrics-text)
 * with a quality above 0. */
bool http_accept_openmetrics(const char *accept);
/* True if an Accept-Encoding header lets the answer be gzip: "gzip" (or
 * "x-gzip") with a quality above 0, or else "*" with a quality above 0.
 * NULL (no header) is false: such a client gets the plain text. */
bool http_accept_gzip(const char *accept_encoding);

/* Whether a request's Host header (name or address, and an optional :port)
 * names this agent, against DNS rebinding (a page of another site whose name
 * was made to point at the agent sends that name): an IPv4 literal, a
 * bracketed IPv6 literal, "localhost" or NAME.localhost, or one of names
 * (separated by commas or spaces: the machine's hostname and the configured
 * ones; "*" among them allows any). Case does not matter, nor one trailing
 * dot. A malformed one (a bad port, an empty name) is not allowed. */
bool http_host_allowed(const char *host, const char *names);

/* What the agent's front door (door.c) does with the start of a connection,
 * the bytes received so far, before the HTTP server takes it: the head of its
 * first request is checked here because libmicrohttpd 0.9.75 answers a request
 * without Host or with a bad Content-Length with its status line and headers
 * twice, and waits for the end of a line of binary junk until the timeout. */
enum http_head_verdict {
	HEAD_MORE = 0, /* incomplete and good so far: wait for more */
	HEAD_PASS,     /* a complete head the HTTP server can parse */
	HEAD_REFUSE,   /* answer *status with msg, then close */
	HEAD_CLOSE,    /* not HTTP at all (TLS, binary): close without a word */
};
/* Checks [buf, buf+len), the first bytes of a connection; limit is the most a
 * head may take (at len >= limit without its end: 414 if the request line has
 * not ended, else 431). On HEAD_REFUSE fills *status and msg (one line). */
enum http_head_verdict http_head_check(const char *buf, size_t len, size_t limit, int *status, char *msg,
				       size_t msglen);

#endif
