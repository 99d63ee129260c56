/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http.c - the agent's HTTP server on libmicrohttpd.
 *
 * The raw request target is parsed once, in MHD's URI callback, by the pure
 * http_req_parse() (fuzzed). Every answer is either a reference to the
 * current published buffer (/metrics: the stored gzip bytes, or the text
 * for a client that does not accept gzip; no copy, released when MHD is
 * done) or a small join of pre-rendered JSON pieces; nothing here calls the
 * backend.
 * Connections come through the door (door.c), which hands each to
 * libmicrohttpd once the head of its first request is complete and sound.
 * Limits: connection count, per-address count, idle/slow timeout, the door's
 * head size (431/414) and a per-connection memory pool.
 */
#include "agent_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/test_hold.h"
#include "door.h"
#include "history.h"
#include "httpreq.h"
#include "core/jscan.h"
#include "pool_agent.h"
#include "webpage.h"

/* per connection: request headers and MHD's own bookkeeping (a scrape needs < 1 KiB) */
#define CONN_MEMORY_LIMIT (4u * 1024u)
/* the most a request head may take (the door's limit: 431 or 414 past it);
 * under CONN_MEMORY_LIMIT, so that libmicrohttpd never refuses one itself */
#define HEAD_LIMIT 3072u

static const char CT_PROM[] = "text/plain; version=0.0.4; charset=utf-8";
static const char CT_OM[] = "application/openmetrics-text; version=1.0.0; charset=utf-8";
static const char CT_JSON[] = "application/json";
static const char CT_TEXT[] = "text/plain; charset=utf-8";

static const char CT_HTML[] = "text/html; charset=utf-8";
static const char CT_JS[] = "text/javascript; charset=utf-8";
static const char CT_CSS[] = "text/css; charset=utf-8";

struct ref_ctx {
	struct agent *a;
	struct published *p;
};

static void release_ref(void *cls)
{
	struct ref_ctx *r = cls;
	agent_release(r->a, r->p);
	free(r);
}

static enum MHD_Result send_response(struct MHD_Connection *c, unsigned status, struct MHD_Response *resp,
				     const char *content_type)
{
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	enum MHD_Result rc = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return rc;
}

__attribute__((format(printf, 3, 4))) static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status,
								      const char *fmt, ...)
{
	char body[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_COPY);
	if (resp && status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	return send_response(c, status, resp, CT_TEXT);
}

/* The exposition: a reference to the stored bytes (no copy; released when MHD
 * is done), the gzip ones for a client whose Accept-Encoding allows it. */
static enum MHD_Result send_published(struct agent *a, struct MHD_Connection *c, struct published *p,
				      const struct abuf *body, bool gzip, const char *content_type)
{
	struct ref_ctx *r = malloc(sizeof(*r));
	if (!r) {
		agent_release(a, p);
		return MHD_NO;
	}
	r->a = a;
	r->p = p;
	struct MHD_Response *resp =
		MHD_create_response_from_buffer_with_free_callback_cls(body->len, body->p, release_ref, r);
	if (!resp) {
		release_ref(r);
		return MHD_NO;
	}
	if (gzip)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	/* the same URL answers gzip or plain text by the request's Accept-Encoding */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	return send_response(c, MHD_HTTP_OK, resp, content_type);
}

/* A JSON document rendered for this request (rc: its rendering's); MHD frees b. */
static enum MHD_Result send_json_buf(struct MHD_Connection *c, int rc, struct abuf *b)
{
	if (rc) {
		abuf_free(b);
		return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "gpuctl agent: %s\n", "out of memory");
	}
	struct MHD_Response *resp = MHD_create_response_from_buffer(b->len, b->p, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		abuf_free(b);
		return MHD_NO;
	}
	return send_response(c, MHD_HTTP_OK, resp, CT_JSON);
}

static enum MHD_Result send_json(struct MHD_Connection *c, const struct api_doc *d, const struct http_req *req)
{
	struct abuf b;
	abuf_init(&b);
	return send_json_buf(c, api_doc_join(d, req->gpu_mask, req->pretty, &b), &b);
}

/* The web page's files (webpage.h), from the binary, with the page's CSP. */
static enum MHD_Result send_page_file(struct MHD_Connection *c, enum agent_route route)
{
	const unsigned char *data = webpage_index_html;
	size_t len = webpage_index_html_len;
	const char *type = CT_HTML;
	if (route == ROUTE_APP_JS) {
		data = webpage_app_js;
		len = webpage_app_js_len;
		type = CT_JS;
	} else if (route == ROUTE_APP_CSS) {
		data = webpage_app_css;
		len = webpage_app_css_len;
		type = CT_CSS;
	}
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)data, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Security-Policy", WEBPAGE_CSP);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	return send_response(c, MHD_HTTP_OK, resp, type);
}

/* /api/v1/history as it is sent: rendered a GPU at a time (history.h's
 * cursor), so a request holds one GPU's part, not the whole document. */
struct history_stream {
	struct history_cursor *cur;
	struct abuf piece;
	size_t sent;       /* of piece */
};

static ssize_t history_stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct history_stream *s = cls;
	while (s->sent == s->piece.len) {
		abuf_reset(&s->piece);
		s->sent = 0;
		if (!history_cursor_next(s->cur, &s->piece))
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (s->piece.oom)
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	size_t n = s->piece.len - s->sent < max ? s->piece.len - s->sent : max;
	memcpy(buf, s->piece.p + s->sent, n);
	s->sent += n;
	return (ssize_t)n;
}

static void history_stream_free(void *cls)
{
	struct history_stream *s = cls;
	history_cursor_free(s->cur);
	abuf_free(&s->piece);
	free(s);
}

static enum MHD_Result send_history(struct agent *a, struct MHD_Connection *c, const struct http_req *req)
{
	if (!a->history)
		return send_text(c, MHD_HTTP_NOT_FOUND, "gpuctl agent: %s\n", "the history is off (history = off)");
	struct history_doc_opts o = {
		.gpu_mask = req->gpu_mask,
		.since_ns = req->since_ns,
		.simulated = a->be->ops == &gpu_backend_sim,
		.interval_ns = a->cfg.interval_ns,
	};
	struct history_stream *s = calloc(1, sizeof(*s));
	if (!s || !(s->cur = history_cursor_new(a->history, &o))) {
		free(s);
		return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "gpuctl agent: %s\n", "out of memory");
	}
	abuf_init(&s->piece);
	struct MHD_Response *resp =
		MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, history_stream_read, s, history_stream_free);
	if (!resp) {
		history_stream_free(s);
		return MHD_NO;
	}
	return send_response(c, MHD_HTTP_OK, resp, CT_JSON);
}

/* /api/v1/pool: the pool's queue (pool_queue_doc, rendered under the pool's
 * lock for this request), or {"pool":false} when the agent runs none, so
 * that the page learns it without an error. */
static enum MHD_Result send_pool(struct agent *a, struct MHD_Connection *c, const struct http_req *req)
{
	char *doc;
	if (!pool_agent_queue(a, &doc))
		doc = strdup("{\"pool\":false}\n");
	struct abuf b;
	abuf_init(&b);
	int rc = -1;
	enum jscan_tok first;
	if (doc && req->pretty) {
		/* indented as `gpuctl queue --json` prints it; as it is in the rare
		 * case jscan_pretty does not reproduce (e.g. over 256 keys) */
		if (jscan_pretty(doc, strlen(doc), NULL, &b, &first) != 0) {
			abuf_reset(&b);
			abuf_puts(&b, doc);
		}
		rc = b.oom ? -1 : 0;
		free(doc);
	} else if (doc) {
		b.p = doc; /* sent as it is: MHD frees it */
		b.len = b.cap = strlen(doc);
		rc = 0;
	}
	return send_json_buf(c, rc, &b);
}

/* Has variant v of *p rendered (agent_variant_ready). A tick may replace the
 * set meanwhile: then the new one is taken. False (and no reference held)
 * when it could not be. */
static bool variant_ready(struct agent *a, struct published **p, unsigned v)
{
	for (int tries = 0; !agent_variant_ready(a, *p, v); tries++) {
		agent_release(a, *p);
		if (tries == 2 || !(*p = agent_acquire(a)))
			return false;
	}
	return true;
}

/* Called with the raw target before MHD splits it: our parser sees exactly what came in. */
struct conn_req {
	struct http_req req;
	bool headers_seen; /* the handler's first call (headers only) has passed */
};

static void *uri_log(void *cls, const char *uri, struct MHD_Connection *c)
{
	(void)cls;
	(void)c;
	struct conn_req *cr = malloc(sizeof(*cr));
	if (cr) {
		http_req_parse(uri, strlen(uri), &cr->req);
		cr->headers_seen = false;
	}
	return cr;
}

/* the door's record of connection c (door.h), NULL if it has none */
static struct door_watch *watch_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

static void request_done(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode toe)
{
	struct agent *a = cls;
	(void)toe;
	http_door_answered(a->door, watch_of(c)); /* the next head's deadline runs from here */
	free(*req_cls);
	*req_cls = NULL;
}

/* Each connection libmicrohttpd serves is watched by the door (door.h). */
static void conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
			enum MHD_ConnectionNotificationCode toe)
{
	struct agent *a = cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		*socket_context = ci ? http_door_started(a->door, ci->connect_fd) : NULL;
	} else {
		http_door_closed(a->door, *socket_context);
		*socket_context = NULL;
	}
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload_data, size_t *upload_data_size, void **req_cls)
{
	struct agent *a = cls;
	struct conn_req *cr = *req_cls;
	(void)url;
	(void)upload_data;
	if (!cr)
		return MHD_NO;
	const struct http_req *req = &cr->req;
	if (*upload_data_size > 0)
		return MHD_NO; /* a body was refused on the first call already */
	if (!cr->headers_seen) {
		http_door_head_done(a->door, watch_of(c));
		/* Bad requests are answered at once (the connection then closes, which
		 * is what they deserve); good ones on the second call, because a
		 * response queued on the first makes libmicrohttpd drop keep-alive. */
		if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
			return send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "gpuctl agent: method %.16s not allowed (use GET)\n",
					 method);
		const char *clen = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if ((clen && strcmp(clen, "0") != 0) ||
		    MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
			return send_text(c, MHD_HTTP_CONTENT_TOO_LARGE, "gpuctl agent: %s\n", "a GET request has no body");
		if (req->status != 200)
			return send_text(c, (unsigned)req->status, "gpuctl agent: %s\n", req->error);
		/* DNS rebinding: a page of another site whose name points here */
		const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
		if (host && !http_host_allowed(host, a->host_names))
			return send_text(c, 421, "gpuctl agent: %s\n",
					 "this agent does not answer to that Host name (add it to allowed_hosts)");
		/* the door checked a connection's first request; a later one is checked here */
		if (strcmp(version, MHD_HTTP_VERSION_1_1) == 0 &&
		    !MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST))
			return send_text(c, MHD_HTTP_BAD_REQUEST, "gpuctl agent: %s\n",
					 "an HTTP/1.1 request needs a Host header");
		char msg[96];
		if (http_req_check_gpus(req, a->be->gpu_count, msg, sizeof(msg)))
			return send_text(c, MHD_HTTP_BAD_REQUEST, "gpuctl agent: %s\n", msg);
		cr->headers_seen = true;
		return MHD_YES;
	}

	/* tests/cli/agent_stop.sh: an HTTP worker wedged while it answers */
	test_hold("GPUCTL_TEST_HOLD_HTTP");
	if (req->route == ROUTE_INDEX || req->route == ROUTE_APP_JS || req->route == ROUTE_APP_CSS)
		return send_page_file(c, req->route);
	if (req->route == ROUTE_HISTORY)
		return send_history(a, c, req);
	if (req->route == ROUTE_POOL)
		return send_pool(a, c, req);
	struct published *p = agent_acquire(a);
	if (!p)
		return send_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "gpuctl agent: %s\n", "no data yet");
	enum MHD_Result rc;
	switch (req->route) {
	case ROUTE_METRICS: {
		const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
		unsigned fmt = http_accept_openmetrics(accept) ? EXPO_OM : EXPO_TEXT;
		const char *ae = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
		bool gzip = http_accept_gzip(ae);
		if (!variant_ready(a, &p, expo_variant(fmt, gzip)))
			return send_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "gpuctl agent: %s\n",
					 "the exposition could not be rendered");
		return send_published(a, c, p, gzip ? &p->expo[fmt].gz : &p->plain[fmt], gzip,
				      fmt == EXPO_OM ? CT_OM : CT_PROM);
	}
	case ROUTE_GPUS:
		if (!variant_ready(a, &p, VAR_GPUS))
			return send_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "gpuctl agent: %s\n",
					 "the document could not be rendered");
		rc = send_json(c, &p->gpus, req);
		break;
	case ROUTE_HEALTH:
		rc = send_json(c, &p->health, req);
		break;
	case ROUTE_HEALTHZ: {
		/* live while the render thread keeps publishing */
		uint64_t age = clock_mono_ns() - p->mono_ns;
		bool fresh = age < 3 * a->cfg.interval_ns + 1000000000ull;
		rc = send_text(c, fresh ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, "%s\n", fresh ? "ok" : "stale");
		break;
	}
	default:
		rc = send_text(c, MHD_HTTP_NOT_FOUND, "gpuctl agent: %s\n", "no such endpoint");
		break;
	}
	agent_release(a, p);
	return rc;
}

static void quiet_logger(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	(void)fmt;
	(void)ap;
}

/* The listening socket (the door accepts on it): bound, listening, non-blocking. */
static int listen_socket(const struct sockaddr_storage *ss, socklen_t len)
{
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)ss, len) != 0 || listen(fd, 1024) != 0) {
		int e = errno; /* the caller says why: "Address already in use" */
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int agent_http_start(struct agent *a, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(struct sockaddr_in);
	memset(&ss, 0, sizeof(ss));
	const char *host = a->cfg.listen_host;
	if (!host[0]) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_ANY);
		in->sin_port = htons((uint16_t)a->cfg.port);
	} else {
		struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
		char port[8];
		snprintf(port, sizeof(port), "%u", a->cfg.port);
		int gai = getaddrinfo(host, port, &hints, &res);
		if (gai != 0 || !res) {
			snprintf(err, errlen, "cannot resolve listen address '%s': %s", host, gai_strerror(gai));
			return -1;
		}
		memcpy(&ss, res->ai_addr, res->ai_addrlen);
		sslen = res->ai_addrlen;
		freeaddrinfo(res);
	}
	char machine[256] = "";
	if (gethostname(machine, sizeof(machine) - 1) != 0)
		machine[0] = '\0';
	snprintf(a->host_names, sizeof(a->host_names), "%s,%s,%s", machine, a->cfg.hostname, a->cfg.allowed_hosts);
	int lfd = listen_socket(&ss, sslen);
	if (lfd < 0) {
		snprintf(err, errlen, "cannot listen on %s%s%s:%u: %s", ss.ss_family == AF_INET6 ? "[" : "",
			 host[0] ? host : "*", ss.ss_family == AF_INET6 ? "]" : "", a->cfg.port, strerror(errno));
		return -1;
	}
	struct sockaddr_storage bound;
	socklen_t blen = sizeof(bound);
	a->port = a->cfg.port;
	if (getsockname(lfd, (struct sockaddr *)&bound, &blen) == 0)
		a->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
							    : ((struct sockaddr_in *)&bound)->sin_port);
	/* libmicrohttpd listens on nothing: the door (door.c) hands it each
	 * connection once the head of its first request is complete and sound */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET |
			 MHD_USE_ITC;
	unsigned threads = a->cfg.threads ? a->cfg.threads : 1;
	a->httpd = MHD_start_daemon(flags, 0, NULL, NULL, handle, a,
		MHD_OPTION_URI_LOG_CALLBACK, uri_log, NULL,
		MHD_OPTION_NOTIFY_COMPLETED, request_done, a,
		MHD_OPTION_NOTIFY_CONNECTION, conn_notify, a,
		/* the door holds the limits (door.h): libmicrohttpd's are above
		 * them, each worker able to take them all */
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)a->cfg.max_connections * threads + threads,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, 0u,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)a->cfg.connection_timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY_LIMIT,
		MHD_OPTION_THREAD_POOL_SIZE, threads,
		MHD_OPTION_THREAD_STACK_SIZE, (size_t)AGENT_THREAD_STACK_BYTES,
		/* lenient: the door checked the first request strictly, and the
		 * handler checks Host on later ones (libmicrohttpd 0.9.75's own
		 * refusal sends its headers twice) */
		MHD_OPTION_STRICT_FOR_CLIENT, 0,
		MHD_OPTION_EXTERNAL_LOGGER, quiet_logger, NULL,
		MHD_OPTION_END);
	if (!a->httpd) {
		close(lfd);
		snprintf(err, errlen, "cannot start the HTTP server");
		return -1;
	}
	struct http_door_limits lim = {
		.max_waiting = a->cfg.max_connections,
		.max_served = a->cfg.max_connections,
		.per_ip = a->cfg.per_ip_connections,
		.head_timeout_ns = (uint64_t)a->cfg.header_timeout_s * 1000000000ull,
		.head_limit = HEAD_LIMIT,
		.stack_bytes = AGENT_THREAD_STACK_BYTES,
	};
	if (http_door_start(&a->door, lfd, a->httpd, &lim, err, errlen)) {
		MHD_stop_daemon(a->httpd);
		a->httpd = NULL;
		return -1;
	}
	return 0;
}

void agent_http_stop(struct agent *a)
{
	http_door_stop(a->door); /* no new connection for libmicrohttpd */
	if (a->httpd) {
		MHD_stop_daemon(a->httpd);
		a->httpd = NULL;
	}
	http_door_free(a->door);
	a->door = NULL;
}
