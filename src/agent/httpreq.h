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

enum agent_route { ROUTE_NONE = 0, ROUTE_INDEX, ROUTE_METRICS, ROUTE_GPUS, ROUTE_HEALTH, ROUTE_HEALTHZ };

struct http_req {
	enum agent_route route;
	uint64_t gpu_mask;   /* ?gpu=0,3,5-7 on the JSON endpoints; all bits set when absent */
	bool pretty;         /* ?pretty=1: indented JSON */
	int status;          /* 200 if the target is good, else the HTTP error to send */
	char error[160];     /* one line for the error body */
};

/* Parses a request target (path and query). Always fills out->status. */
void http_req_parse(const char *target, size_t len, struct http_req *out);
/* True if an Accept header asks for OpenMetrics (application/openmetrics-text)
 * with a quality above 0. */
bool http_accept_openmetrics(const char *accept);
/* True if an Accept-Encoding header lets the answer be gzip: "gzip" (or
 * "x-gzip") with a quality above 0, or else "*" with a quality above 0.
 * NULL (no header) is false: such a client gets the plain text. */
bool http_accept_gzip(const char *accept_encoding);

#endif
