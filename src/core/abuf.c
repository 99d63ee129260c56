/* SPDX-License-Identifier: Apache-2.0 */
/* abuf.c - growable byte buffer (see abuf.h). */
#include "abuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pages.h"

#define ABUF_FIRST_CAP 256

void abuf_init(struct abuf *b)
{
	memset(b, 0, sizeof(*b));
}

void abuf_free(struct abuf *b)
{
	free(b->p);
	abuf_init(b);
}

void abuf_reset(struct abuf *b)
{
	b->len = 0;
	b->oom = false;
	if (b->p)
		b->p[0] = '\0';
}

bool abuf_drain(struct abuf *b)
{
	if (b->oom)
		return false;
	if (b->sink && b->len > 0) {
		if (b->sink(b->sink_ctx, b->p, b->len) != 0) {
			b->oom = true;
			return false;
		}
		abuf_reset(b);
	}
	return true;
}

bool abuf_reserve(struct abuf *b, size_t extra)
{
	if (b->oom)
		return false;
	if (b->sink && b->len > 0 && b->len + extra + 1 > b->sink_at && !abuf_drain(b))
		return false;
	if (b->len + extra + 1 <= b->cap)
		return true;
	/* small first: the JSON documents are 128 buffers per response set of a
	 * few hundred bytes each, and 4 KiB each kept ~1 MiB resident at 64 GPUs */
	size_t cap = b->cap ? b->cap : ABUF_FIRST_CAP;
	while (cap < b->len + extra + 1) {
		if (cap > SIZE_MAX / 2) {
			b->oom = true;
			return false;
		}
		cap *= 2;
	}
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void abuf_put(struct abuf *b, const char *s, size_t n)
{
	if (!abuf_reserve(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void abuf_puts(struct abuf *b, const char *s)
{
	abuf_put(b, s, strlen(s));
}

void abuf_putc(struct abuf *b, char c)
{
	abuf_put(b, &c, 1);
}

void abuf_printf(struct abuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char tmp[256];
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if ((size_t)n < sizeof(tmp)) {
		abuf_put(b, tmp, (size_t)n);
		return;
	}
	if (!abuf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void abuf_put_u64(struct abuf *b, uint64_t v)
{
	char tmp[24];
	int i = (int)sizeof(tmp);
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	abuf_put(b, tmp + i, sizeof(tmp) - (size_t)i);
}

void abuf_put_scaled(struct abuf *b, uint64_t v, unsigned decimals)
{
	if (decimals > 18)
		decimals = 18;
	uint64_t div = 1;
	for (unsigned i = 0; i < decimals; i++)
		div *= 10;
	abuf_put_u64(b, v / div);
	uint64_t frac = v % div;
	if (!frac)
		return;
	char tmp[20];
	unsigned n = decimals;
	for (unsigned i = n; i > 0; i--) {
		tmp[i - 1] = (char)('0' + frac % 10);
		frac /= 10;
	}
	while (n > 0 && tmp[n - 1] == '0')
		n--;
	abuf_putc(b, '.');
	abuf_put(b, tmp, n);
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if it is not one. */
static size_t utf8_seq(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	size_t n;
	unsigned min;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		min = 0x10000;
	} else {
		return 0;
	}
	unsigned cp = s[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* The valid sequence of n bytes at p is a control character: C0, DEL or C1
 * (U+0080-U+009F, which some terminals obey as ESC sequences). */
static bool is_control(const unsigned char *p, size_t n)
{
	return (n == 1 && (p[0] < 0x20 || p[0] == 0x7f)) || (n == 2 && p[0] == 0xc2 && p[1] <= 0x9f);
}

static bool control_but_newline(const unsigned char *p, size_t n)
{
	return is_control(p, n) && p[0] != '\n';
}

/* ... or one a terminal must not get: any control, U+2028-U+202E or U+2066-U+2069. */
static bool term_unsafe(const unsigned char *p, size_t n)
{
	if (is_control(p, n))
		return true;
	if (n == 3 && p[0] == 0xe2)
		return (p[1] == 0x80 && p[2] >= 0xa8 && p[2] <= 0xae) || (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9);
	return false;
}

/* Copies src to dst with '?' for every invalid byte and every character
 * unsafe() refuses; dst may be src (the output is never longer). */
static char *clean(char *dst, size_t dstlen, const char *src, bool (*unsafe)(const unsigned char *, size_t))
{
	if (!dstlen)
		return dst;
	const unsigned char *p = (const unsigned char *)src;
	size_t w = 0;
	while (*p) {
		size_t n = utf8_seq(p);
		bool bad = n == 0 || unsafe(p, n);
		if (w + (bad ? 1 : n) >= dstlen)
			break;
		if (bad)
			dst[w++] = '?';
		else
			memmove(dst + w, p, n); /* in place: dst + w never passes p */
		w += bad ? 0 : n;
		p += n ? n : 1; /* a character refused is one '?', an invalid byte each */
	}
	dst[w] = '\0';
	return dst;
}

void utf8_clean(char *dst, size_t dstlen, const char *src)
{
	clean(dst, dstlen, src, control_but_newline);
}

char *term_clean(char *dst, size_t dstlen, const char *src)
{
	return clean(dst, dstlen, src, term_unsafe);
}

void abuf_drop_pages(struct abuf *b)
{
	abuf_reset(b);
	pages_drop_inside(b->p, b->cap);
}
