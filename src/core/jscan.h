/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jscan.h - reading the agent's answers without building a jansson tree.
 *
 * `gpuctl queue` with 10 000 queued jobs spent most of its time loading the
 * 1.9 MB answer into jansson objects, dumping them again and freeing them
 * (bench/RESULTS.md, "Pool (simulated)"). This is a pull tokenizer over a
 * buffer that accepts what jansson's json_loadb(buf, len, 0) accepts, and a
 * re-indenter built on it that writes a document byte for byte as jansson's
 * json_dumpf(JSON_INDENT(2)) would after loading it. Pure: no I/O.
 */
#ifndef GPUCTL_POOL_JSCAN_H
#define GPUCTL_POOL_JSCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/abuf.h"

enum jscan_tok {
	JS_ERROR,   /* malformed (sticky: every later call returns it too) */
	JS_EOF,     /* the document ended (only whitespace after it) */
	JS_OBJ,     /* '{' */
	JS_OBJ_END, /* '}' */
	JS_ARR,     /* '[' */
	JS_ARR_END, /* ']' */
	JS_KEY,     /* an object's key, in str/len; its value is the next token */
	JS_STR,     /* a string value, in str/len */
	JS_INT,     /* an integer (no fraction, no exponent), in num */
	JS_REAL,    /* any other number (its text: tok/toklen) */
	JS_TRUE,
	JS_FALSE,
	JS_NULL,
};

/* As jansson's parser (JSON_PARSER_MAX_DEPTH). */
#define JSCAN_MAX_DEPTH 2048

struct jscan {
	const char *p, *end;
	unsigned depth;                              /* containers open */
	unsigned char in_obj[JSCAN_MAX_DEPTH / 8 + 1]; /* bit per depth: object (1) or array (0) */
	unsigned char st;                            /* internal: what may come next */
	char *str;                                   /* JS_KEY, JS_STR: decoded UTF-8, NUL-terminated */
	size_t len, cap;
	long long num;                               /* JS_INT */
	const char *tok;                             /* JS_INT, JS_REAL: the number's text */
	size_t toklen;
};

void jscan_init(struct jscan *s, const char *buf, size_t len);
void jscan_free(struct jscan *s);
enum jscan_tok jscan_next(struct jscan *s);
/* After a value's first token t: skips the rest of that value (a whole
 * object or array; nothing for a scalar). 0, or -1 when malformed. */
int jscan_skip(struct jscan *s, enum jscan_tok t);

/*
 * Appends to out the document in buf[0..len) as jansson writes it with
 * JSON_INDENT(2) after json_loadb and json_object_del(doc, drop_key), plus a
 * final newline (json_write in core/json_util.c). Only for a top-level
 * object; *dropped is the first token of drop_key's value (JS_EOF: absent).
 * Returns 0, or -1 (out then holds partial text) when the document is
 * anything this does not reproduce exactly: malformed JSON, not an object,
 * real numbers, duplicate keys, over 256 keys in one object, or nesting over
 * 60 deep. A caller then goes through jansson, which decides.
 */
int jscan_pretty(const char *buf, size_t len, const char *drop_key, struct abuf *out, enum jscan_tok *dropped);

#endif
