/* SPDX-License-Identifier: Apache-2.0 */
/* jscan.c - see jscan.h. The grammar is RFC 8259 with jansson's limits:
 * strings valid UTF-8 without \u0000, integers that fit a long long, reals
 * that do not overflow, at most JSCAN_MAX_DEPTH containers deep. */
#include "core/jscan.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
	ST_VALUE, /* a value (the document's, after ':' or after ',' in an array) */
	ST_FIRST, /* just after '{' or '[': its end, a key or a value */
	ST_KEY,   /* after ',' in an object: a key */
	ST_AFTER, /* after a value: ',' or the container's end (or the document's) */
	ST_DONE,
	ST_ERR,
};

void jscan_init(struct jscan *s, const char *buf, size_t len)
{
	memset(s, 0, sizeof(*s));
	s->p = buf;
	s->end = buf + len;
	s->st = ST_VALUE;
}

void jscan_free(struct jscan *s)
{
	free(s->str);
	s->str = NULL;
	s->cap = s->len = 0;
}

static enum jscan_tok fail(struct jscan *s)
{
	s->st = ST_ERR;
	return JS_ERROR;
}

static void skip_ws(struct jscan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\t' || *s->p == '\r'))
		s->p++;
}

static bool top_is_obj(const struct jscan *s)
{
	unsigned d = s->depth;
	return s->in_obj[d / 8] >> (d % 8) & 1;
}

static bool str_room(struct jscan *s, size_t extra)
{
	if (s->len + extra + 1 <= s->cap)
		return true;
	size_t cap = s->cap ? s->cap : 256;
	while (cap < s->len + extra + 1)
		cap *= 2;
	char *p = realloc(s->str, cap);
	if (!p)
		return false;
	s->str = p;
	s->cap = cap;
	return true;
}

static int hex4(const char *p)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/* Length of the valid UTF-8 sequence at p (first byte >= 0x80), 0 if invalid:
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_seq(const unsigned char *p, const unsigned char *end)
{
	unsigned char c = p[0];
	size_t n;
	unsigned char lo = 0x80, hi = 0xBF;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
	return n;
}

static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xC0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
	o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* A byte a string holds as it is: printable ASCII but '"' and '\\'. */
static inline bool plain_byte(unsigned char c)
{
	/* bit c of four 64-bit words; 0x20-0x7f without 0x22 and 0x5c */
	static const uint64_t plain[4] = { 0xfffffffbffffffffull & ~0xffffffffull, 0xffffffffefffffffull, 0, 0 };
	return plain[c >> 6] >> (c & 63) & 1;
}

/* The string at s->p (its opening quote) decoded into s->str. */
static bool read_string(struct jscan *s)
{
	s->p++;
	s->len = 0;
	for (;;) {
		/* a run of plain bytes at once */
		const char *run = s->p;
		while (s->p < s->end && plain_byte((unsigned char)*s->p))
			s->p++;
		size_t n = (size_t)(s->p - run);
		if (n) {
			if (!str_room(s, n))
				return false;
			memcpy(s->str + s->len, run, n);
			s->len += n;
		}
		if (s->p >= s->end)
			return false;
		unsigned char c = (unsigned char)*s->p;
		if (c == '"') {
			s->p++;
			if (!str_room(s, 0))
				return false;
			s->str[s->len] = '\0';
			return true;
		}
		if (c < 0x20)
			return false;
		if (!str_room(s, 4))
			return false;
		if (c >= 0x80) {
			size_t k = utf8_seq((const unsigned char *)s->p, (const unsigned char *)s->end);
			if (!k)
				return false;
			memcpy(s->str + s->len, s->p, k);
			s->len += k;
			s->p += k;
			continue;
		}
		/* an escape */
		if (s->end - s->p < 2)
			return false;
		char e = s->p[1];
		s->p += 2;
		char out;
		switch (e) {
		case '"': out = '"'; break;
		case '\\': out = '\\'; break;
		case '/': out = '/'; break;
		case 'b': out = '\b'; break;
		case 'f': out = '\f'; break;
		case 'n': out = '\n'; break;
		case 'r': out = '\r'; break;
		case 't': out = '\t'; break;
		case 'u': {
			if (s->end - s->p < 4)
				return false;
			int v = hex4(s->p);
			if (v < 0)
				return false;
			s->p += 4;
			uint32_t cp = (uint32_t)v;
			if (cp >= 0xDC00 && cp <= 0xDFFF)
				return false;
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				if (s->end - s->p < 6 || s->p[0] != '\\' || s->p[1] != 'u')
					return false;
				int lo = hex4(s->p + 2);
				if (lo < 0xDC00 || lo > 0xDFFF)
					return false;
				s->p += 6;
				cp = 0x10000 + ((cp - 0xD800) << 10) + (uint32_t)(lo - 0xDC00);
			}
			if (cp == 0)
				return false; /* jansson refuses NUL without JSON_ALLOW_NUL */
			s->len += put_utf8(s->str + s->len, cp);
			continue;
		}
		default:
			return false;
		}
		s->str[s->len++] = out;
	}
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static enum jscan_tok read_number(struct jscan *s)
{
	const char *b = s->p, *p = s->p, *e = s->end;
	bool real = false;
	if (p < e && *p == '-')
		p++;
	if (p >= e || !is_digit(*p))
		return JS_ERROR;
	if (*p == '0') {
		p++;
		if (p < e && is_digit(*p))
			return JS_ERROR;
	} else {
		while (p < e && is_digit(*p))
			p++;
	}
	if (p < e && *p == '.') {
		real = true;
		p++;
		if (p >= e || !is_digit(*p))
			return JS_ERROR;
		while (p < e && is_digit(*p))
			p++;
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		real = true;
		p++;
		if (p < e && (*p == '+' || *p == '-'))
			p++;
		if (p >= e || !is_digit(*p))
			return JS_ERROR;
		while (p < e && is_digit(*p))
			p++;
	}
	s->tok = b;
	s->toklen = (size_t)(p - b);
	s->p = p;
	if (!real) {
		/* digits accumulated as a negative number: LLONG_MIN fits too */
		const char *d = b + (*b == '-');
		long long v = 0;
		for (; d < p; d++) {
			int digit = *d - '0';
			if (v < (LLONG_MIN + digit) / 10)
				return JS_ERROR; /* jansson: "too big integer" */
			v = v * 10 - digit;
		}
		if (*b != '-') {
			if (v == LLONG_MIN)
				return JS_ERROR;
			v = -v;
		}
		s->num = v;
		return JS_INT;
	}
	char text[64];
	/* only overflow matters (jansson refuses it); a long mantissa is cut
	 * to its first digits, which cannot turn a finite value infinite */
	char *big = NULL;
	const char *t = b;
	if (s->toklen >= sizeof(text)) {
		big = malloc(s->toklen + 1);
		if (!big)
			return JS_ERROR;
		memcpy(big, b, s->toklen);
		big[s->toklen] = '\0';
		t = big;
	} else {
		memcpy(text, b, s->toklen);
		text[s->toklen] = '\0';
		t = text;
	}
	errno = 0;
	double v = strtod(t, NULL);
	bool over = errno == ERANGE && isinf(v);
	free(big);
	return over ? JS_ERROR : JS_REAL;
}

static bool lit(struct jscan *s, const char *word, size_t n)
{
	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
		return false;
	s->p += n;
	return true;
}

static enum jscan_tok open_container(struct jscan *s, bool obj)
{
	if (s->depth >= JSCAN_MAX_DEPTH)
		return fail(s);
	s->depth++;
	unsigned d = s->depth;
	if (obj)
		s->in_obj[d / 8] |= (unsigned char)(1u << (d % 8));
	else
		s->in_obj[d / 8] &= (unsigned char)~(1u << (d % 8));
	s->p++;
	s->st = ST_FIRST;
	return obj ? JS_OBJ : JS_ARR;
}

static enum jscan_tok read_value(struct jscan *s)
{
	if (s->p >= s->end)
		return fail(s);
	char c = *s->p;
	enum jscan_tok t;
	if (c == '{')
		return open_container(s, true);
	if (c == '[')
		return open_container(s, false);
	if (c == '"') {
		if (!read_string(s))
			return fail(s);
		t = JS_STR;
	} else if (c == '-' || is_digit(c)) {
		t = read_number(s);
		if (t == JS_ERROR)
			return fail(s);
	} else if (c == 't' && lit(s, "true", 4)) {
		t = JS_TRUE;
	} else if (c == 'f' && lit(s, "false", 5)) {
		t = JS_FALSE;
	} else if (c == 'n' && lit(s, "null", 4)) {
		t = JS_NULL;
	} else {
		return fail(s);
	}
	s->st = ST_AFTER;
	return t;
}

static enum jscan_tok read_key(struct jscan *s)
{
	if (s->p >= s->end || *s->p != '"' || !read_string(s))
		return fail(s);
	skip_ws(s);
	if (s->p >= s->end || *s->p != ':')
		return fail(s);
	s->p++;
	s->st = ST_VALUE;
	return JS_KEY;
}

static enum jscan_tok close_container(struct jscan *s)
{
	bool obj = top_is_obj(s);
	s->p++;
	s->depth--;
	s->st = ST_AFTER;
	return obj ? JS_OBJ_END : JS_ARR_END;
}

enum jscan_tok jscan_next(struct jscan *s)
{
	skip_ws(s);
	switch (s->st) {
	case ST_VALUE:
		return read_value(s);
	case ST_KEY:
		return read_key(s);
	case ST_FIRST:
		if (s->p < s->end && *s->p == (top_is_obj(s) ? '}' : ']'))
			return close_container(s);
		return top_is_obj(s) ? read_key(s) : read_value(s);
	case ST_AFTER:
		if (s->depth == 0) {
			if (s->p != s->end)
				return fail(s);
			s->st = ST_DONE;
			return JS_EOF;
		}
		if (s->p >= s->end)
			return fail(s);
		if (*s->p == (top_is_obj(s) ? '}' : ']'))
			return close_container(s);
		if (*s->p != ',')
			return fail(s);
		s->p++;
		skip_ws(s);
		return top_is_obj(s) ? read_key(s) : read_value(s);
	case ST_DONE:
		return JS_EOF;
	default:
		return JS_ERROR;
	}
}

int jscan_skip(struct jscan *s, enum jscan_tok t)
{
	if (t == JS_ERROR || t == JS_EOF || t == JS_KEY || t == JS_OBJ_END || t == JS_ARR_END)
		return -1;
	if (t != JS_OBJ && t != JS_ARR)
		return 0;
	unsigned d = s->depth - 1;
	for (;;) {
		enum jscan_tok n = jscan_next(s);
		if (n == JS_ERROR || n == JS_EOF)
			return -1;
		if ((n == JS_OBJ_END || n == JS_ARR_END) && s->depth == d)
			return 0;
	}
}

/* ---- jansson's JSON_INDENT(2) layout ---------------------------------------- */

enum { PRETTY_MAX_DEPTH = 60, PRETTY_MAX_KEYS = 256 };

/* abuf_put and abuf_putc with the common case (room left) inline: the
 * re-indenter appends a few bytes at a time, millions of times */
static inline bool room(struct abuf *o, size_t n)
{
	return (!o->oom && o->len + n + 1 <= o->cap) || abuf_reserve(o, n);
}

static inline void put(struct abuf *o, const char *s, size_t n)
{
	if (!room(o, n))
		return;
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = '\0';
}

static inline void putch(struct abuf *o, char c)
{
	if (!room(o, 1))
		return;
	o->p[o->len++] = c;
	o->p[o->len] = '\0';
}

static void put_indent(struct abuf *o, unsigned depth)
{
	static const char spaces[2 * PRETTY_MAX_DEPTH + 2] =
		"                                                                                "
		"                                        ";
	size_t n = 2 * (size_t)depth;
	if (!room(o, n + 1))
		return;
	o->p[o->len] = '\n';
	memcpy(o->p + o->len + 1, spaces, n);
	o->len += n + 1;
	o->p[o->len] = '\0';
}

/* The decoded string re-escaped as jansson's dump_string does by default:
 * '"' and '\\', the short escapes, \u00XX (upper-case hex) for the other
 * control characters; everything else (UTF-8 included) as it is. */
static void put_string(struct abuf *o, const char *str, size_t len)
{
	if (!room(o, len * 6 + 2))
		return;
	char *w = o->p + o->len;
	*w++ = '"';
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)str[i];
		if (c >= 0x20 && c != '"' && c != '\\') {
			*w++ = (char)c;
			continue;
		}
		*w++ = '\\';
		switch (c) {
		case '"': *w++ = '"'; break;
		case '\\': *w++ = '\\'; break;
		case '\b': *w++ = 'b'; break;
		case '\f': *w++ = 'f'; break;
		case '\n': *w++ = 'n'; break;
		case '\r': *w++ = 'r'; break;
		case '\t': *w++ = 't'; break;
		default: {
			static const char hex[] = "0123456789ABCDEF";
			*w++ = 'u';
			*w++ = '0';
			*w++ = '0';
			*w++ = hex[c >> 4];
			*w++ = hex[c & 15];
		}
		}
	}
	*w++ = '"';
	o->len = (size_t)(w - o->p);
	o->p[o->len] = '\0';
}

/* An integer as jansson prints it: its text is already that, but for "-0" */
static void put_int(struct abuf *o, const struct jscan *s)
{
	if (s->num == 0)
		putch(o, '0');
	else
		put(o, s->tok, s->toklen);
}

struct key_at {
	size_t off, len;
};

int jscan_pretty(const char *buf, size_t len, const char *drop_key, struct abuf *out, enum jscan_tok *dropped)
{
	struct jscan s;
	jscan_init(&s, buf, len);
	*dropped = JS_EOF;
	unsigned members[PRETTY_MAX_DEPTH + 1];
	size_t key_from[PRETTY_MAX_DEPTH + 1];
	struct key_at *keys = NULL;
	size_t nkeys = 0, capkeys = 0;
	bool after_key = false, seen_drop = false;
	int rc = -1;
	enum jscan_tok t = jscan_next(&s);
	if (t != JS_OBJ)
		goto out;
	abuf_reserve(out, len * 2); /* the indentation about doubles it: one allocation */
	putch(out, '{');
	members[1] = 0;
	key_from[1] = 0;
	for (;;) {
		t = jscan_next(&s);
		unsigned d = s.depth;
		if (t == JS_OBJ_END || t == JS_ARR_END) {
			/* the container at depth d + 1 closed */
			if (members[d + 1])
				put_indent(out, d);
			putch(out, t == JS_OBJ_END ? '}' : ']');
			nkeys = key_from[d + 1];
			after_key = false;
			if (d == 0)
				break;
			continue;
		}
		if (t == JS_KEY) {
			if (d == 1 && drop_key && strcmp(s.str, drop_key) == 0 && strlen(drop_key) == s.len) {
				if (seen_drop)
					goto out;
				seen_drop = true;
				*dropped = jscan_next(&s);
				if (jscan_skip(&s, *dropped) != 0)
					goto out;
				continue;
			}
			if (members[d]++)
				putch(out, ',');
			put_indent(out, d);
			size_t at = out->len;
			put_string(out, s.str, s.len);
			size_t klen = out->len - at;
			if (out->oom || nkeys - key_from[d] >= PRETTY_MAX_KEYS)
				goto out;
			for (size_t k = key_from[d]; k < nkeys; k++)
				if (keys[k].len == klen && memcmp(out->p + keys[k].off, out->p + at, klen) == 0)
					goto out; /* a duplicate: jansson keeps one of them */
			if (nkeys == capkeys) {
				size_t c = capkeys ? capkeys * 2 : 64;
				struct key_at *g = realloc(keys, c * sizeof(*g));
				if (!g)
					goto out;
				keys = g;
				capkeys = c;
			}
			keys[nkeys++] = (struct key_at){ at, klen };
			put(out, ": ", 2);
			after_key = true;
			continue;
		}
		/* a value: in an array it is a member of its own */
		unsigned vd = t == JS_OBJ || t == JS_ARR ? d - 1 : d;
		if (!after_key) {
			if (members[vd]++)
				putch(out, ',');
			put_indent(out, vd);
		}
		after_key = false;
		switch (t) {
		case JS_OBJ:
		case JS_ARR:
			if (d > PRETTY_MAX_DEPTH)
				goto out;
			members[d] = 0;
			key_from[d] = nkeys;
			putch(out, t == JS_OBJ ? '{' : '[');
			break;
		case JS_STR:
			put_string(out, s.str, s.len);
			break;
		case JS_INT:
			put_int(out, &s);
			break;
		case JS_TRUE:
			put(out, "true", 4);
			break;
		case JS_FALSE:
			put(out, "false", 5);
			break;
		case JS_NULL:
			put(out, "null", 4);
			break;
		default: /* JS_REAL (jansson reformats it), JS_ERROR */
			goto out;
		}
	}
	if (jscan_next(&s) != JS_EOF)
		goto out;
	putch(out, '\n');
	rc = out->oom ? -1 : 0;
out:
	free(keys);
	jscan_free(&s);
	return rc;
}
