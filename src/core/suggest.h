/* SPDX-License-Identifier: Apache-2.0 */
/*
 * suggest.h - "did you mean": the name nearest to a word a user mistyped,
 * from any list (options, catalog models, simulated servers, columns). Pure.
 *
 *   struct suggest s = SUGGEST_INIT("jsn");
 *   for (...) suggest_consider(&s, name);
 *   if (s.best) ... "did you mean '%s'?", s.best
 *
 * Names are compared ignoring case, '-', '_', ' ' and '.': an edit distance
 * (insert, delete, change, swap of two neighbours) of at most a third of the
 * word's length (at least 1), or the word standing whole at the start of a
 * name or a word of it ("h200" -> "H200 SXM"), counts as near; the nearest
 * wins, a name the word starts first.
 */
#ifndef GPUCTL_SUGGEST_H
#define GPUCTL_SUGGEST_H

#include <stddef.h>

enum { SUGGEST_KEEP = 4 }; /* names kept when several are as near */

struct suggest {
	const char *word;  /* what the user typed */
	const char *best;  /* the nearest name so far; NULL: none near enough */
	unsigned cost;     /* its distance (0: the word starts the name or one of its words) */
	unsigned ties;     /* names as near as best (best counted) */
	const char *tied[SUGGEST_KEEP]; /* the first of them, best first */
};
#define SUGGEST_INIT(w) { (w), NULL, ~0u, 0, { NULL } }

/* Takes name into account. */
void suggest_consider(struct suggest *s, const char *name);
/* " (did you mean 'a'?)", " (did you mean 'a' or 'b'?)" (up to SUGGEST_KEEP
 * names), or "" when nothing was near; into out, returned. */
const char *suggest_text(const struct suggest *s, char *out, size_t outlen);
/* The edit distance of a and b, compared as above (letters only, caseless). */
unsigned suggest_distance(const char *a, const char *b);

#endif
