/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gz.h - the agent keeps its exposition gzip-compressed (2.16 MB of text at
 * 64 GPUs is about 85 KB of gzip; Prometheus always asks for gzip), so:
 *
 *   - gz_writer compresses while metrics_render writes: the renderer's abuf
 *     is a 16 KiB window whose sink is deflate, so the whole text is never
 *     held. One writer per rendering thread; its deflate state exists only
 *     from gz_begin to gz_end (mapped, so unmapped between renderings).
 *   - gz_reader inflates a stored body again, a block at a time;
 *     gz_inflate_all with it, once per tick, the text for the clients that
 *     do not accept gzip (curl without --compressed).
 *
 * No I/O, no clock: unit-tested in tests/unit/test_agent_gz.c.
 */
#ifndef GPUCTL_GZ_H
#define GPUCTL_GZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "core/abuf.h"

/* A body as it is stored: gzip bytes and the length of the text they hold. */
struct gz_body {
	struct abuf gz;
	size_t raw_len;
};

struct gz_writer {
	z_stream zs;
	bool ready;          /* deflate's state exists: from gz_begin to gz_end */
	struct abuf window;  /* what the renderer writes into (sink: deflate) */
	struct gz_body *dst; /* between gz_begin and gz_end */
	size_t raw_len;
};

/* 0, or -1 when out of memory. */
int gz_writer_init(struct gz_writer *w);
void gz_writer_free(struct gz_writer *w);
/* Starts a new body in dst (its memory is kept, its content dropped) and
 * returns the buffer to render into. */
struct abuf *gz_begin(struct gz_writer *w, struct gz_body *dst);
/* Finishes the body begun last. 0, or -1 (out of memory, or a render failed:
 * the window was oom); dst then holds no valid body (raw_len 0, empty). */
int gz_end(struct gz_writer *w);

void gz_body_free(struct gz_body *b);

struct gz_reader {
	z_stream zs;
	bool ready, done;
	const struct gz_body *src;
};

/* Starts inflating src (which must stay unchanged until gz_reader_end). 0 or -1. */
int gz_reader_begin(struct gz_reader *r, const struct gz_body *src);
/* Writes up to max bytes of the text into buf. Returns the count (0 at the
 * end), or -1 when the body is damaged or memory ran out. */
long gz_read(struct gz_reader *r, char *buf, size_t max);
void gz_reader_end(struct gz_reader *r);

/* The whole text of src appended to out (agent_render_once). 0 or -1. */
int gz_inflate_all(const struct gz_body *src, struct abuf *out);

#endif
