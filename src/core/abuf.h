/* SPDX-License-Identifier: Apache-2.0 */
/* abuf.h - a growable byte buffer the agent renders into (exposition text,
 * JSON). An allocation failure sets oom and later appends do nothing, so a
 * renderer checks once at the end.
 *
 * With a sink set, the buffer is a window instead: when an append would take
 * it past sink_at bytes, what it holds goes to the sink first (the agent
 * compresses its exposition this way, never holding the whole text). The
 * last append is always still in the buffer. */
#ifndef GPUCTL_ABUF_H
#define GPUCTL_ABUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct abuf {
	char *p;       /* NUL-terminated while not oom */
	size_t len, cap;
	bool oom;
	/* optional: 0 on success; a failure sets oom */
	int (*sink)(void *ctx, const char *p, size_t n);
	void *sink_ctx;
	size_t sink_at;
};

void abuf_init(struct abuf *b);
void abuf_free(struct abuf *b);
void abuf_reset(struct abuf *b); /* len = 0, keeps the memory */
/* Empties b and gives the whole pages of its memory back to the kernel: the
 * buffer stays allocated, and what the next appends write comes back as
 * zeroed pages (for a buffer that sits unread between renderings). */
void abuf_drop_pages(struct abuf *b);
/* Hands what the buffer holds to its sink (if any) and empties it. false when oom. */
bool abuf_drain(struct abuf *b);
bool abuf_reserve(struct abuf *b, size_t extra);
void abuf_put(struct abuf *b, const char *s, size_t n);
void abuf_puts(struct abuf *b, const char *s);
void abuf_putc(struct abuf *b, char c);
void abuf_printf(struct abuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void abuf_put_u64(struct abuf *b, uint64_t v);
/* Copies src with every byte that is not part of valid UTF-8, and every
 * control character (C0, DEL, C1) but '\n', replaced by '?' (names from /proc are bytes).
 * NUL-terminated, truncated at a character boundary. */
void utf8_clean(char *dst, size_t dstlen, const char *src);
/* The one sanitizer of text for a terminal (docs/json.md, "Names from the
 * system"): copies src with every byte that is not part of valid UTF-8, every
 * control character (C0 with '\n', '\t', ESC and BEL; DEL; C1, U+0080-U+009F)
 * and the characters that move or reorder text (U+2028-U+202E line and
 * paragraph separators and bidirectional embeddings, U+2066-U+2069 isolates)
 * replaced by '?', so that a process name, a job's command or a file name
 * prints as one line that cannot drive the terminal. The result is never
 * longer than src, so dst may be src (cleaned in place). NUL-terminated,
 * truncated at a character boundary; returns dst. */
char *term_clean(char *dst, size_t dstlen, const char *src);
/* v / 10^decimals printed exactly, trailing zeros dropped: (350123, 3) -> "350.123". */
void abuf_put_scaled(struct abuf *b, uint64_t v, unsigned decimals);

#endif
