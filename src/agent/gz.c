/* SPDX-License-Identifier: Apache-2.0 */
/* gz.c - gzip bodies for the agent's stored responses (see gz.h). */
#include "gz.h"

#include <limits.h>
#include <string.h>

#include "core/pages.h"

/* Level 1 (zlib's fastest): on a 64-GPU exposition 25x smaller in about
 * 5 ms, against 10 ms for the default level's 31x (bench/RESULTS.md). */
#define GZ_LEVEL 1
#define GZ_WINDOW_BITS (15 + 16) /* 32 KiB window, gzip header and trailer */
/* zlib's default is 8 (a 128 KiB hash on top of the 128 KiB window state);
 * 4 halves the deflate state to 136 KiB and, on the 2.16 MB exposition of 64
 * GPUs, compresses as well (83.0 vs 85.3 KB) and a little faster. */
#define GZ_MEM_LEVEL 4
#define GZ_WINDOW_BYTES (16u * 1024u) /* text held before it is compressed (resident: 64 KiB was no better) */
#define GZ_OUT_STEP (16u * 1024u)

/* Runs deflate over in[0, n) (flush: Z_NO_FLUSH or Z_FINISH) into dst. */
static int deflate_into(struct gz_writer *w, const char *in, size_t n, int flush)
{
	struct abuf *out = &w->dst->gz;
	w->zs.next_in = (Bytef *)(uintptr_t)in;
	w->zs.avail_in = (uInt)n;
	for (;;) {
		if (!abuf_reserve(out, GZ_OUT_STEP))
			return -1;
		size_t room = out->cap - out->len - 1;
		if (room > UINT_MAX)
			room = UINT_MAX;
		w->zs.next_out = (Bytef *)out->p + out->len;
		w->zs.avail_out = (uInt)room;
		int rc = deflate(&w->zs, flush);
		out->len += room - w->zs.avail_out;
		out->p[out->len] = '\0';
		if (rc == Z_STREAM_END)
			return 0;
		if (rc != Z_OK && rc != Z_BUF_ERROR)
			return -1;
		if (flush == Z_NO_FLUSH && w->zs.avail_in == 0)
			return 0;
	}
}

static int window_sink(void *ctx, const char *p, size_t n)
{
	struct gz_writer *w = ctx;
	if (!w->dst || n > UINT_MAX)
		return -1;
	w->raw_len += n;
	return deflate_into(w, p, n, Z_NO_FLUSH);
}

/* deflate's state (136 KiB at GZ_MEM_LEVEL 4: window, hash chains, pending output) is
 * mapped for each body and unmapped at its end, so that between renderings
 * (most of every tick) it is not resident; from the heap, glibc would keep it.
 * Each block starts with its length, which zfree needs. */
#define GZ_BLOCK_HEAD 16u

static voidpf map_alloc(voidpf opaque, uInt items, uInt size)
{
	(void)opaque;
	size_t n = (size_t)items * size + GZ_BLOCK_HEAD;
	void *p = pages_alloc(n);
	if (!p)
		return Z_NULL;
	memcpy(p, &n, sizeof(n));
	return (char *)p + GZ_BLOCK_HEAD;
}

static void map_free(voidpf opaque, voidpf address)
{
	(void)opaque;
	if (!address)
		return;
	char *p = (char *)address - GZ_BLOCK_HEAD;
	size_t n;
	memcpy(&n, p, sizeof(n));
	pages_free(p, n);
}

static int deflate_start(struct gz_writer *w)
{
	memset(&w->zs, 0, sizeof(w->zs));
	w->zs.zalloc = map_alloc;
	w->zs.zfree = map_free;
	if (deflateInit2(&w->zs, GZ_LEVEL, Z_DEFLATED, GZ_WINDOW_BITS, GZ_MEM_LEVEL, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	w->ready = true;
	return 0;
}

static void deflate_stop(struct gz_writer *w)
{
	if (w->ready)
		deflateEnd(&w->zs);
	w->ready = false;
}

int gz_writer_init(struct gz_writer *w)
{
	memset(w, 0, sizeof(*w));
	/* started once here so that a writer that cannot be had fails early */
	if (deflate_start(w) != 0)
		return -1;
	deflate_stop(w);
	abuf_init(&w->window);
	if (!abuf_reserve(&w->window, GZ_WINDOW_BYTES - 1)) {
		gz_writer_free(w);
		return -1;
	}
	return 0;
}

void gz_writer_free(struct gz_writer *w)
{
	deflate_stop(w);
	abuf_free(&w->window);
	memset(w, 0, sizeof(*w));
}

struct abuf *gz_begin(struct gz_writer *w, struct gz_body *dst)
{
	w->dst = dst;
	w->raw_len = 0;
	abuf_reset(&dst->gz);
	dst->raw_len = 0;
	abuf_reset(&w->window);
	w->window.sink = window_sink;
	w->window.sink_ctx = w;
	w->window.sink_at = GZ_WINDOW_BYTES;
	if (!w->ready && deflate_start(w) != 0)
		w->window.oom = true;
	return &w->window;
}

int gz_end(struct gz_writer *w)
{
	struct gz_body *dst = w->dst;
	if (!dst)
		return -1;
	int rc = abuf_drain(&w->window) ? deflate_into(w, "", 0, Z_FINISH) : -1;
	if (rc == 0 && !dst->gz.oom) {
		dst->raw_len = w->raw_len;
	} else {
		abuf_reset(&dst->gz);
		dst->raw_len = 0;
		rc = -1;
	}
	w->window.sink = NULL;
	w->dst = NULL;
	deflate_stop(w);
	return rc;
}

void gz_body_free(struct gz_body *b)
{
	abuf_free(&b->gz);
	b->raw_len = 0;
}

int gz_reader_begin(struct gz_reader *r, const struct gz_body *src)
{
	memset(r, 0, sizeof(*r));
	if (src->gz.len > UINT_MAX || inflateInit2(&r->zs, GZ_WINDOW_BITS) != Z_OK)
		return -1;
	r->ready = true;
	r->src = src;
	r->zs.next_in = (Bytef *)(uintptr_t)src->gz.p;
	r->zs.avail_in = (uInt)src->gz.len;
	return 0;
}

long gz_read(struct gz_reader *r, char *buf, size_t max)
{
	if (!r->ready)
		return -1;
	if (r->done || max == 0)
		return 0;
	if (max > UINT_MAX)
		max = UINT_MAX;
	if (max > LONG_MAX)
		max = LONG_MAX;
	r->zs.next_out = (Bytef *)buf;
	r->zs.avail_out = (uInt)max;
	int rc = inflate(&r->zs, Z_NO_FLUSH);
	long got = (long)(max - r->zs.avail_out);
	if (rc == Z_STREAM_END) {
		r->done = true;
		return got;
	}
	/* Z_BUF_ERROR with nothing produced: the input ended before the stream did */
	if (rc != Z_OK || got == 0)
		return -1;
	return got;
}

void gz_reader_end(struct gz_reader *r)
{
	if (r->ready)
		inflateEnd(&r->zs);
	memset(r, 0, sizeof(*r));
}

int gz_inflate_all(const struct gz_body *src, struct abuf *out)
{
	struct gz_reader r;
	if (!abuf_reserve(out, src->raw_len) || gz_reader_begin(&r, src)) /* one allocation */
		return -1;
	int rc = 0;
	for (;;) {
		if (!abuf_reserve(out, GZ_OUT_STEP)) {
			rc = -1;
			break;
		}
		long n = gz_read(&r, out->p + out->len, out->cap - out->len - 1);
		if (n < 0) {
			rc = -1;
			break;
		}
		out->len += (size_t)n;
		out->p[out->len] = '\0';
		if (n == 0)
			break;
	}
	if (rc == 0 && (!r.done || out->oom))
		rc = -1;
	gz_reader_end(&r);
	return rc;
}
