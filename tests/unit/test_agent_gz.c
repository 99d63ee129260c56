/* SPDX-License-Identifier: Apache-2.0 */
/* test_agent_gz.c - the agent's gzip bodies (src/agent/gz.c): what the
 * renderer writes through the window comes back byte for byte, through zlib
 * itself and through gz_reader in any block size; the window never holds the
 * whole text; damaged bodies and failed renders are errors, not text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "agent/gz.h"

/* Exposition-like text: n lines, each different. */
static void make_text(struct abuf *t, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		abuf_printf(t, "gpuctl_gpu_power_watts{gpu=\"%u\",uuid=\"GPU-%08x\",host=\"node\"} %u.%03u\n", i % 64,
			    (i % 64) * 2654435761u, i * 7u % 700u, i % 1000u);
}

/* Inflates with zlib directly (as an HTTP client would), not with gz.c. */
static size_t zlib_gunzip(const struct gz_body *b, char *out, size_t cap)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (Bytef *)b->gz.p;
	zs.avail_in = (uInt)b->gz.len;
	zs.next_out = (Bytef *)out;
	zs.avail_out = (uInt)cap;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	size_t n = cap - zs.avail_out;
	inflateEnd(&zs);
	return n;
}

/* Writes text through the window in pieces of the given size. */
static void write_through(struct gz_writer *w, struct gz_body *body, const struct abuf *text, size_t piece)
{
	struct abuf *win = gz_begin(w, body);
	size_t max_cap = 0;
	for (size_t off = 0; off < text->len; off += piece) {
		size_t n = text->len - off < piece ? text->len - off : piece;
		abuf_put(win, text->p + off, n);
		if (win->cap > max_cap)
			max_cap = win->cap;
	}
	/* the last append is still there (pool_metrics_append looks for "# EOF") */
	size_t last = text->len % piece ? text->len % piece : piece;
	assert_true(win->len >= (last < text->len ? last : text->len));
	assert_memory_equal(win->p + win->len - last, text->p + text->len - last, last);
	if (piece < 64 * 1024)
		assert_true(max_cap <= 64 * 1024); /* never the whole text */
	assert_int_equal(gz_end(w), 0);
	assert_false(w->ready); /* the deflate state is gone until the next body */
}

static void test_round_trip(void **state)
{
	(void)state;
	struct abuf text;
	abuf_init(&text);
	make_text(&text, 40000); /* ~3 MB: many windows */
	assert_false(text.oom);
	struct gz_writer w;
	assert_int_equal(gz_writer_init(&w), 0);
	struct gz_body body = { 0 };
	size_t pieces[] = { 1, 37, 4096, 70000, 3u << 20 };
	char *out = malloc(text.len + 16);
	assert_non_null(out);
	for (size_t k = 0; k < sizeof(pieces) / sizeof(pieces[0]); k++) {
		size_t piece = pieces[k];
		if (piece == 1) { /* byte by byte is slow: a shorter text */
			struct abuf small;
			abuf_init(&small);
			make_text(&small, 3000);
			write_through(&w, &body, &small, 1);
			assert_int_equal(body.raw_len, small.len);
			assert_int_equal(zlib_gunzip(&body, out, text.len + 16), small.len);
			assert_memory_equal(out, small.p, small.len);
			abuf_free(&small);
			continue;
		}
		write_through(&w, &body, &text, piece);
		assert_int_equal(body.raw_len, text.len);
		assert_true(body.gz.len * 4 < text.len); /* compressed */
		assert_int_equal(zlib_gunzip(&body, out, text.len + 16), text.len);
		assert_memory_equal(out, text.p, text.len);
		struct abuf back;
		abuf_init(&back);
		assert_int_equal(gz_inflate_all(&body, &back), 0);
		assert_int_equal(back.len, text.len);
		assert_memory_equal(back.p, text.p, text.len);
		abuf_free(&back);
	}
	free(out);
	gz_body_free(&body);
	gz_writer_free(&w);
	abuf_free(&text);
}

static void test_reader_blocks(void **state)
{
	(void)state;
	struct abuf text;
	abuf_init(&text);
	make_text(&text, 5000);
	struct gz_writer w;
	assert_int_equal(gz_writer_init(&w), 0);
	struct gz_body body = { 0 };
	write_through(&w, &body, &text, 512);
	size_t blocks[] = { 1, 7, 32768 };
	for (size_t k = 0; k < 3; k++) {
		struct gz_reader r;
		assert_int_equal(gz_reader_begin(&r, &body), 0);
		struct abuf back;
		abuf_init(&back);
		char buf[32768];
		long n;
		while ((n = gz_read(&r, buf, blocks[k])) > 0) {
			assert_true((size_t)n <= blocks[k]);
			abuf_put(&back, buf, (size_t)n);
		}
		assert_int_equal(n, 0);
		assert_int_equal(gz_read(&r, buf, sizeof(buf)), 0); /* stays at the end */
		assert_int_equal(back.len, text.len);
		assert_memory_equal(back.p, text.p, text.len);
		abuf_free(&back);
		gz_reader_end(&r);
	}
	gz_body_free(&body);
	gz_writer_free(&w);
	abuf_free(&text);
}

static void test_empty_body(void **state)
{
	(void)state;
	struct gz_writer w;
	assert_int_equal(gz_writer_init(&w), 0);
	struct gz_body body = { 0 };
	gz_begin(&w, &body);
	assert_int_equal(gz_end(&w), 0);
	assert_int_equal(body.raw_len, 0);
	assert_true(body.gz.len >= 20); /* a gzip header and trailer */
	struct abuf back;
	abuf_init(&back);
	assert_int_equal(gz_inflate_all(&body, &back), 0);
	assert_int_equal(back.len, 0);
	abuf_free(&back);
	gz_body_free(&body);
	gz_writer_free(&w);
}

static void test_damaged(void **state)
{
	(void)state;
	struct abuf text;
	abuf_init(&text);
	make_text(&text, 2000);
	struct gz_writer w;
	assert_int_equal(gz_writer_init(&w), 0);
	struct gz_body body = { 0 };
	write_through(&w, &body, &text, 100);
	struct abuf back;
	abuf_init(&back);

	size_t full = body.gz.len;
	body.gz.len = full / 2; /* truncated */
	assert_int_equal(gz_inflate_all(&body, &back), -1);
	body.gz.len = full;
	abuf_reset(&back);
	body.gz.p[full - 6] ^= 0x55; /* the CRC-32 of the trailer no longer matches */
	assert_int_equal(gz_inflate_all(&body, &back), -1);
	body.gz.p[full - 6] ^= 0x55;
	body.gz.p[0] = 'x'; /* not gzip */
	abuf_reset(&back);
	assert_int_equal(gz_inflate_all(&body, &back), -1);
	struct gz_reader r;
	assert_int_equal(gz_reader_begin(&r, &body), 0);
	char buf[64];
	assert_int_equal(gz_read(&r, buf, sizeof(buf)), -1);
	gz_reader_end(&r);

	/* a render that ran out of memory leaves no body, not a partial one */
	struct abuf *win = gz_begin(&w, &body);
	abuf_puts(win, "gpuctl_gpu_up 1\n");
	win->oom = true;
	assert_int_equal(gz_end(&w), -1);
	assert_int_equal(body.raw_len, 0);
	assert_int_equal(body.gz.len, 0);
	/* and the writer is good for the next one */
	write_through(&w, &body, &text, 4096);
	abuf_reset(&back);
	assert_int_equal(gz_inflate_all(&body, &back), 0);
	assert_int_equal(back.len, text.len);
	abuf_free(&back);
	gz_body_free(&body);
	gz_writer_free(&w);
	abuf_free(&text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_reader_blocks),
		cmocka_unit_test(test_empty_body),
		cmocka_unit_test(test_damaged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
