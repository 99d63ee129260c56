/* SPDX-License-Identifier: Apache-2.0 */
/* httpreq.c - request target and Accept parsing for the agent (see httpreq.h). */
#include "httpreq.h"
#include "core/gpu_select.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void fail(struct http_req *r, int status, const char *msg)
{
	r->status = status;
	snprintf(r->error, sizeof(r->error), "%s", msg);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decodes [s, s+n) into out (NUL-terminated); '+' is a space in queries. -1 if malformed. */
static int decode(const char *s, size_t n, char *out, size_t outlen, bool query)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '%') {
			if (i + 2 >= n)
				return -1;
			int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0)
				return -1;
			c = (char)(hi * 16 + lo);
			i += 2;
		} else if (c == '+' && query) {
			c = ' ';
		}
		if (c == '\0' || (unsigned char)c < 0x20 || c == 0x7f)
			return -1;
		if (w + 1 >= outlen)
			return -1;
		out[w++] = c;
	}
	out[w] = '\0';
	return 0;
}

static const struct { const char *path; enum agent_route route; } routes[] = {
	{ "/", ROUTE_INDEX },
	{ "/metrics", ROUTE_METRICS },
	{ "/api/v1/gpus", ROUTE_GPUS },
	{ "/api/v1/health", ROUTE_HEALTH },
	{ "/healthz", ROUTE_HEALTHZ },
	{ "/api/v1/history", ROUTE_HISTORY },
	{ "/app.js", ROUTE_APP_JS },
	{ "/app.css", ROUTE_APP_CSS },
	{ "/api/v1/pool", ROUTE_POOL },
};

/* "1764460800", "1764460800.25": Unix seconds, up to 9 decimals, before
 * the year 2286 -> ns. -1 on anything else (signs, exponents, inf, nan). */
static int parse_since(const char *s, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0, scale = 1000000000ull;
	const char *p = s;
	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		sec = sec * 10 + (uint64_t)(*p - '0');
		if (sec > 9999999999ull)
			return -1;
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		for (; isdigit((unsigned char)*p); p++) {
			if (scale == 1)
				return -1;
			scale /= 10;
			frac += (uint64_t)(*p - '0') * scale;
		}
	}
	if (*p)
		return -1;
	*ns = sec * 1000000000ull + frac;
	return 0;
}

void http_req_parse(const char *target, size_t len, struct http_req *out)
{
	memset(out, 0, sizeof(*out));
	out->gpu_mask = ~0ull;
	out->status = 200;
	if (len > HTTPREQ_MAX_TARGET) {
		fail(out, 414, "request target too long");
		return;
	}
	if (len == 0 || target[0] != '/') {
		fail(out, 400, "request target must start with '/'");
		return;
	}
	size_t plen = len;
	const char *q = memchr(target, '?', len);
	if (q)
		plen = (size_t)(q - target);
	const char *hash = memchr(target, '#', len);
	if (hash) {
		fail(out, 400, "fragment in request target");
		return;
	}
	char path[HTTPREQ_MAX_TARGET + 1];
	if (decode(target, plen, path, sizeof(path), false)) {
		fail(out, 400, "malformed percent-encoding in path");
		return;
	}
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (strcmp(path, routes[i].path) == 0)
			out->route = routes[i].route;
	if (out->route == ROUTE_NONE) {
		fail(out, 404, "no such endpoint (try /, /metrics, /api/v1/gpus, /api/v1/health, /api/v1/history, /api/v1/pool, "
			      "/healthz)");
		return;
	}
	if (!q)
		return;
	const char *p = q + 1, *end = target + len;
	while (p < end) {
		const char *amp = memchr(p, '&', (size_t)(end - p));
		const char *pe = amp ? amp : end;
		if (pe == p) {
			p = pe + 1;
			continue;
		}
		const char *eq = memchr(p, '=', (size_t)(pe - p));
		char key[64], value[HTTPREQ_MAX_TARGET + 1];
		const char *ke = eq ? eq : pe;
		if (decode(p, (size_t)(ke - p), key, sizeof(key), true) ||
		    decode(eq ? eq + 1 : pe, eq ? (size_t)(pe - eq - 1) : 0, value, sizeof(value), true)) {
			fail(out, 400, "malformed query parameter");
			return;
		}
		bool json = out->route == ROUTE_GPUS || out->route == ROUTE_HEALTH || out->route == ROUTE_HISTORY;
		if (json && strcmp(key, "gpu") == 0) {
			char why[120]; /* core/gpu_select.h: the one GPU-index list */
			if (gpu_select_indexes(value, &out->gpu_mask, why, sizeof(why))) {
				fail(out, 400, "bad gpu list (use e.g. gpu=0,3,5-7)");
				return;
			}
			out->gpus_asked = true;
		} else if (out->route == ROUTE_HISTORY && strcmp(key, "since") == 0) {
			if (parse_since(value, &out->since_ns)) {
				fail(out, 400, "bad value for since (Unix time in seconds, e.g. since=1764460800.25)");
				return;
			}
		} else if (((json && out->route != ROUTE_HISTORY) || out->route == ROUTE_POOL) &&
			   strcmp(key, "pretty") == 0) {
			if (strcmp(value, "1") && strcmp(value, "0") && strcmp(value, "true") && strcmp(value, "false") && *value) {
				fail(out, 400, "bad value for pretty (use 1 or 0)");
				return;
			}
			out->pretty = !*value || strcmp(value, "1") == 0 || strcmp(value, "true") == 0;
		} else {
			char msg[128];
			snprintf(msg, sizeof(msg), "unknown query parameter '%.40s'", key);
			fail(out, 400, msg);
			return;
		}
		p = pe + 1;
	}
}

/* A q parameter's value is above 0: some digit of it before any exponent is
 * not 0 ("q=0", "q=0.000" and garbage are 0; "q=.5", "q=1" are not). */
static bool qvalue_positive(const char *v, const char *e)
{
	for (; v < e && *v != ';' && *v != 'e' && *v != 'E'; v++)
		if (*v >= '1' && *v <= '9')
			return true;
	return false;
}

/* How a header that lists tokens with parameters (Accept, Accept-Encoding:
 * "a;q=0.5, b") treats token: -1 not listed, 0 listed only with q=0, 1
 * listed with a quality above 0. Case-insensitive. */
static int list_quality(const char *header, const char *token)
{
	size_t toklen = strlen(token);
	int best = -1;
	const char *p = header;
	while (p && *p) {
		size_t n = strcspn(p, ",");
		const char *s = p, *e = p + n;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		size_t tlen = strcspn(s, ";,");
		if (s + tlen > e)
			tlen = (size_t)(e - s);
		while (tlen > 0 && (s[tlen - 1] == ' ' || s[tlen - 1] == '\t'))
			tlen--;
		if (tlen == toklen && strncasecmp(s, token, tlen) == 0) {
			bool zero = false;
			for (const char *k = s + tlen; k < e; k++) {
				if (*k != ';')
					continue;
				const char *v = k + 1;
				while (v < e && (*v == ' ' || *v == '\t'))
					v++;
				if (e - v >= 2 && (v[0] == 'q' || v[0] == 'Q') && v[1] == '=')
					zero = !qvalue_positive(v + 2, e);
			}
			if (!zero)
				return 1;
			best = 0;
		}
		p = *e ? e + 1 : e;
	}
	return best;
}

bool http_accept_openmetrics(const char *accept)
{
	return list_quality(accept, "application/openmetrics-text") == 1;
}

bool http_accept_gzip(const char *accept_encoding)
{
	int q = list_quality(accept_encoding, "gzip");
	int x = list_quality(accept_encoding, "x-gzip"); /* RFC 9110: the same coding */
	if (x > q)
		q = x;
	if (q >= 0)
		return q == 1;
	return list_quality(accept_encoding, "*") == 1;
}

int http_req_check_gpus(const struct http_req *r, unsigned n, char *msg, size_t msglen)
{
	uint64_t known = n >= 64 ? ~0ull : (1ull << n) - 1;
	if (!r->gpus_asked || !(r->gpu_mask & ~known))
		return 0;
	unsigned bad = (unsigned)__builtin_ctzll(r->gpu_mask & ~known);
	if (n)
		snprintf(msg, msglen, "GPU index %u out of range (0-%u)", bad, n - 1);
	else
		snprintf(msg, msglen, "GPU index %u out of range (no GPU)", bad);
	return -1;
}

/* RFC 9110 token characters (methods, header names) */
static bool is_tchar(unsigned char c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static enum http_head_verdict refuse(int *status, char *msg, size_t msglen, int code, const char *why)
{
	*status = code;
	snprintf(msg, msglen, "%s", why);
	return HEAD_REFUSE;
}

/* One header line [p, e) (no line end): checks its form, counts Host, checks
 * Content-Length. 0, or -1 with the refusal filled in. */
static int check_header(const char *p, const char *e, unsigned *hosts, int *status, char *msg, size_t msglen)
{
	const char *n = p;
	while (n < e && is_tchar((unsigned char)*n))
		n++;
	if (n == p || n == e || *n != ':') {
		refuse(status, msg, msglen, 400, "malformed header line");
		return -1;
	}
	size_t nlen = (size_t)(n - p);
	const char *v = n + 1, *ve = e;
	while (v < ve && (*v == ' ' || *v == '\t'))
		v++;
	while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
		ve--;
	if (nlen == 4 && strncasecmp(p, "host", 4) == 0)
		(*hosts)++;
	if (nlen == 14 && strncasecmp(p, "content-length", 14) == 0) {
		bool digits = v < ve && ve - v <= 18;
		for (const char *d = v; digits && d < ve; d++)
			digits = *d >= '0' && *d <= '9';
		if (!digits) {
			refuse(status, msg, msglen, 400, "bad Content-Length (a decimal number of bytes)");
			return -1;
		}
	}
	return 0;
}

enum http_head_verdict http_head_check(const char *buf, size_t len, size_t limit, int *status, char *msg,
				       size_t msglen)
{
	size_t i = 0;
	/* a client may send empty lines before a request (RFC 9112 2.2) */
	while (i < len && (buf[i] == '\r' || buf[i] == '\n'))
		i++;
	/* the method, a token: anything else is not HTTP and gets no answer */
	size_t m = i;
	while (m < len && m - i < 32 && is_tchar((unsigned char)buf[m]))
		m++;
	if (m < len && (m == i || buf[m] != ' '))
		return HEAD_CLOSE;
	if (m == len && m - i >= 32)
		return HEAD_CLOSE;
	/* control characters (but tab and line ends) never belong in a head */
	const char *end = NULL;
	for (size_t k = i; k < len; k++) {
		unsigned char c = (unsigned char)buf[k];
		if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f)
			return HEAD_CLOSE;
		if (c == '\n' && k + 1 < len && (buf[k + 1] == '\n' || (buf[k + 1] == '\r' && k + 2 < len && buf[k + 2] == '\n'))) {
			end = buf + k + 1;
			break;
		}
	}
	if (!end) {
		if (len < limit)
			return HEAD_MORE;
		if (!memchr(buf + i, '\n', len - i))
			return refuse(status, msg, msglen, 414, "request line too long");
		return refuse(status, msg, msglen, 431, "request headers too large");
	}
	/* request line: METHOD SP TARGET SP HTTP/1.x */
	const char *line = buf + i, *le = memchr(line, '\n', (size_t)(end - line));
	const char *lend = le > line && le[-1] == '\r' ? le - 1 : le;
	const char *target = buf + m + 1;
	const char *sp = memchr(target, ' ', (size_t)(lend - target));
	if (!sp || sp == target || memchr(sp + 1, ' ', (size_t)(lend - sp - 1)))
		return refuse(status, msg, msglen, 400, "malformed request line");
	size_t vlen = (size_t)(lend - sp - 1);
	bool v11 = vlen == 8 && memcmp(sp + 1, "HTTP/1.1", 8) == 0;
	bool v10 = vlen == 8 && memcmp(sp + 1, "HTTP/1.0", 8) == 0;
	if (!v11 && !v10) {
		if (vlen == 8 && memcmp(sp + 1, "HTTP/", 5) == 0)
			return refuse(status, msg, msglen, 505, "HTTP version not supported (use HTTP/1.1)");
		return refuse(status, msg, msglen, 400, "malformed request line");
	}
	/* header lines, up to the empty one */
	unsigned hosts = 0;
	for (const char *p = le + 1; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl > p && nl[-1] == '\r' ? nl - 1 : nl;
		if (e == p)
			break;
		if (*p == ' ' || *p == '\t')
			return refuse(status, msg, msglen, 400, "folded header line");
		if (check_header(p, e, &hosts, status, msg, msglen))
			return HEAD_REFUSE;
		p = nl + 1;
	}
	if (hosts > 1)
		return refuse(status, msg, msglen, 400, "more than one Host header");
	if (v11 && hosts == 0)
		return refuse(status, msg, msglen, 400, "an HTTP/1.1 request needs a Host header");
	return HEAD_PASS;
}

/* ---- Host ------------------------------------------------------------------- */

/* [s, s+n) equals name, whatever the case, and one trailing dot on either */
static bool name_eq(const char *s, size_t n, const char *name, size_t nlen)
{
	if (n && s[n - 1] == '.')
		n--;
	if (nlen && name[nlen - 1] == '.')
		nlen--;
	return n && n == nlen && strncasecmp(s, name, n) == 0;
}

bool http_host_allowed(const char *host, const char *names)
{
	char name[256];
	size_t len = strlen(host);
	const char *end = host + len;
	bool v6 = host[0] == '[';
	const char *colon = v6 ? (memchr(host, ']', len) ? (const char *)memchr(host, ']', len) + 1 : NULL)
			       : memchr(host, ':', len);
	if (v6 && !colon)
		return false;
	if (colon && colon < end) {
		if (*colon != ':' || end - colon < 2 || end - colon > 6)
			return false;
		for (const char *c = colon + 1; c < end; c++)
			if (!isdigit((unsigned char)*c))
				return false;
		end = colon;
	}
	size_t n = (size_t)(end - host);
	if (v6) {
		if (n < 3 || n - 2 >= sizeof(name))
			return false;
		memcpy(name, host + 1, n - 2);
		name[n - 2] = '\0';
		struct in6_addr a6;
		return inet_pton(AF_INET6, name, &a6) == 1;
	}
	if (n == 0 || n >= sizeof(name))
		return false;
	memcpy(name, host, n);
	name[n] = '\0';
	struct in_addr a4;
	if (inet_pton(AF_INET, name, &a4) == 1)
		return true;
	if (name_eq(name, n, "localhost", 9))
		return true;
	const char *dot_local = ".localhost";
	size_t trim = name[n - 1] == '.' ? n - 1 : n;
	if (trim > 10 && strncasecmp(name + trim - 10, dot_local, 10) == 0)
		return true;
	for (const char *p = names; p && *p;) {
		size_t skip = strspn(p, ", ");
		p += skip;
		size_t w = strcspn(p, ", ");
		if (!w)
			break;
		if ((w == 1 && *p == '*') || name_eq(name, n, p, w))
			return true;
		p += w;
	}
	return false;
}
