// SPDX-License-Identifier: Apache-2.0
/* suggest.c - the nearest name to a mistyped word (suggest.h). */
#include "core/suggest.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

enum { SUGGEST_MAX = 64 }; /* longer words or names are never suggested */

/* a's comparable letters into out (caseless, without '-', '_', ' ', '.'); its length */
static size_t fold(const char *a, char *out)
{
	size_t n = 0;
	for (; *a && n < SUGGEST_MAX; a++) {
		unsigned char c = (unsigned char)*a;
		if (c == '-' || c == '_' || c == ' ' || c == '.')
			continue;
		out[n++] = (char)tolower(c);
	}
	if (*a)
		return SUGGEST_MAX + 1;
	out[n] = '\0';
	return n;
}

/* optimal string alignment distance of folded a[0..n) and b[0..m) */
static unsigned osa(const char *a, size_t n, const char *b, size_t m)
{
	unsigned d[SUGGEST_MAX + 1][SUGGEST_MAX + 1];
	for (size_t i = 0; i <= n; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			unsigned best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[n][m];
}

unsigned suggest_distance(const char *a, const char *b)
{
	char fa[SUGGEST_MAX + 1], fb[SUGGEST_MAX + 1];
	size_t n = fold(a, fa), m = fold(b, fb);
	if (n > SUGGEST_MAX || m > SUGGEST_MAX)
		return ~0u;
	return osa(fa, n, fb, m);
}

/* whether word (folded, w letters) is the whole start of name or of one of its words */
static int starts_a_word(const char *word, size_t w, const char *name)
{
	for (const char *p = name; *p; p++) {
		if (p != name && isalnum((unsigned char)p[-1]))
			continue;
		char f[SUGGEST_MAX + 1];
		if (fold(p, f) <= SUGGEST_MAX && strncmp(f, word, w) == 0)
			return 1;
	}
	return 0;
}

void suggest_consider(struct suggest *s, const char *name)
{
	char fw[SUGGEST_MAX + 1], fn[SUGGEST_MAX + 1];
	size_t w = fold(s->word, fw), n = fold(name, fn);
	if (w == 0 || w > SUGGEST_MAX || n > SUGGEST_MAX)
		return;
	unsigned cost, limit = w / 3 ? (unsigned)(w / 3) : 1;
	if (w >= 3 && n > w && starts_a_word(fw, w, name))
		cost = 0; /* "h200" in "H200 SXM": nearer than "B200", one letter off */
	else if ((cost = osa(fw, w, fn, n)) > limit)
		return;
	if (cost < s->cost) {
		s->best = name;
		s->cost = cost;
		s->ties = 0;
	} else if (cost > s->cost) {
		return;
	}
	for (unsigned i = 0; i < s->ties && i < SUGGEST_KEEP; i++)
		if (strcmp(s->tied[i], name) == 0)
			return; /* the same name listed twice (an alias row) */
	if (s->ties < SUGGEST_KEEP)
		s->tied[s->ties] = name;
	s->ties++;
}

const char *suggest_text(const struct suggest *s, char *out, size_t outlen)
{
	if (!outlen)
		return out;
	out[0] = '\0';
	if (!s->best)
		return out;
	size_t len = 0, shown = s->ties < SUGGEST_KEEP ? s->ties : SUGGEST_KEEP;
	len += (size_t)snprintf(out, outlen, " (did you mean ");
	for (size_t i = 0; i < shown && len < outlen; i++)
		len += (size_t)snprintf(out + len, outlen - len, "%s'%.60s'", i == 0 ? "" : i + 1 == shown ? " or " : ", ",
					s->tied[i]);
	if (len < outlen)
		snprintf(out + len, outlen - len, "?)");
	return out;
}
