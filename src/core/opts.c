/* SPDX-License-Identifier: Apache-2.0 */
/* opts.c - the option parser over a command's option table (opts.h). */
#include "opts.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numfmt.h"
#include "suggest.h"
#include "units.h"

void opt_init(struct opt_parser *p, int argc, char **argv, const struct opt_spec *specs, size_t n)
{
	memset(p, 0, sizeof(*p));
	p->argc = argc;
	p->argv = argv;
	p->specs = specs;
	p->nspecs = n;
	p->index = 1;
}

const char *opt_spelling(const struct opt_spec *s, char *out, size_t outlen)
{
	if (s->name)
		snprintf(out, outlen, "--%s", s->name);
	else
		snprintf(out, outlen, "-%c", s->short_name);
	return out;
}

static void bounds(const struct opt_spec *s, long long *min, long long *max)
{
	*min = s->min;
	*max = s->max;
	if (!*min && !*max)
		*max = LLONG_MAX;
}

static int parse_int(const struct opt_spec *s, const char *name, const char *text, long long *out, char *err,
		     size_t errlen)
{
	char q[41];
	long long min, max;
	bounds(s, &min, &max);
	const char *t = text[0] == '-' ? text + 1 : text;
	char *end = NULL;
	errno = 0;
	long long v = strtoll(text, &end, 10);
	/* decimal digits only: strtoll also takes spaces, '+' and "0x" */
	if (*t < '0' || *t > '9' || strspn(t, "0123456789") != strlen(t) || *end || errno || v < min || v > max) {
		snprintf(err, errlen, "option '%s': '%s' is not a whole number from %lld to %lld", name,
			 units_quoted(text, q), min, max);
		return -1;
	}
	*out = v;
	return 0;
}

/* A decimal number with an optional k/M/B|G/T multiplier, finite, in
 * [fmin, fmax]; never hex, "inf" or "nan" (strtod takes them). */
static int parse_number(const struct opt_spec *s, const char *name, const char *text, double *out, char *err,
			size_t errlen)
{
	char q[41];
	double lo = (double)s->min / 1000.0, hi = (double)s->max / 1000.0;
	if (!(lo < hi)) {
		snprintf(err, errlen, "option '%s' has no range (a bug)", name);
		return -1;
	}
	size_t digits = strspn(text, "0123456789.eE+-");
	char *end = NULL;
	double v = digits ? strtod(text, &end) : NAN;
	if (end && end > text && end <= text + digits) {
		switch (*end) {
		case 'k': case 'K': v *= 1e3; end++; break;
		case 'm': case 'M': v *= 1e6; end++; break;
		case 'b': case 'B': case 'g': case 'G': v *= 1e9; end++; break;
		case 't': case 'T': v *= 1e12; end++; break;
		default: break;
		}
	}
	if (!end || end == text || end > text + digits + 1 || *end || !isfinite(v) || v < lo || v > hi) {
		char nlo[48], nhi[48];
		snprintf(err, errlen, "option '%s': '%s' is not a number from %s to %s", name, units_quoted(text, q),
			 numfmt(nlo, sizeof(nlo), lo, 6), numfmt(nhi, sizeof(nhi), hi, 6));
		return -1;
	}
	*out = v;
	return 0;
}

/* Hours: a number, or a duration with a unit ("2h", "90m", "1d12h"), in the
 * row's range (thousandths of an hour). */
static int parse_hours(const struct opt_spec *s, const char *name, const char *text, double *out, char *err,
		       size_t errlen)
{
	char q[41], why[200];
	size_t n = strlen(text);
	if (!n || !strchr("smhd", text[n - 1]))
		return parse_number(s, name, text, out, err, errlen);
	uint64_t ns;
	double lo = (double)s->min / 1000.0, hi = (double)s->max / 1000.0;
	if (units_parse_duration(text, 0, UINT64_MAX, &ns, why, sizeof(why)) || (double)ns / 3.6e12 < lo ||
	    (double)ns / 3.6e12 > hi) {
		char l[48], h[48];
		snprintf(err, errlen, "option '%s': '%s' is not a number of hours from %s to %s nor a duration (2h, 90m, 1d)",
			 name, units_quoted(text, q), numfmt(l, sizeof(l), lo, 6), numfmt(h, sizeof(h), hi, 6));
		return -1;
	}
	*out = (double)ns / 3.6e12;
	return 0;
}

/* As opt_value_parse, the option named in messages as the user spelled it. */
static int value_parse(const struct opt_spec *s, const char *name, const char *text, struct opt_value *v, char *err,
		       size_t errlen)
{
	char msg[200], q[41];
	long long min, max;
	uint64_t u = 0;
	bounds(s, &min, &max);
	v->text = text;
	v->num = 0;
	switch (s->kind) {
	case OPT_FLAG:
		v->text = NULL;
		return 0;
	case OPT_INT:
		return parse_int(s, name, text, &v->num, err, errlen);
	case OPT_NUMBER:
		return parse_number(s, name, text, &v->real, err, errlen);
	case OPT_HOURS:
		return parse_hours(s, name, text, &v->real, err, errlen);
	case OPT_DURATION:
	case OPT_SIZE:
	case OPT_LENGTH:
		if ((s->kind == OPT_DURATION ? units_parse_duration
		     : s->kind == OPT_SIZE   ? units_parse_size
					     : units_parse_length)(
			    text, (uint64_t)(min < 0 ? 0 : min), (uint64_t)max, &u, msg, sizeof(msg))) {
			/* the option's name, then the units module's reason after it */
			int n = snprintf(err, errlen, "option '%s': ", name);
			if (n > 0 && (size_t)n < errlen)
				snprintf(err + n, errlen - (size_t)n, "%s", msg);
			return -1;
		}
		v->num = (long long)u;
		v->real = (double)u;
		return 0;
	case OPT_STRING:
		if (!*text) {
			snprintf(err, errlen, "option '%s' needs a value", name);
			return -1;
		}
		return 0;
	case OPT_ENUM: {
		size_t len = 0;
		for (int i = 0; s->choices && s->choices[i]; i++) {
			if (strcmp(s->choices[i], text) == 0) {
				v->num = i;
				return 0;
			}
		}
		len = (size_t)snprintf(err, errlen, "option '%s': '%s' is not one of ",
				       name, units_quoted(text, q));
		for (int i = 0; s->choices && s->choices[i] && len < errlen; i++)
			len += (size_t)snprintf(err + len, errlen - len, "%s%s", i ? ", " : "", s->choices[i]);
		return -1;
	}
	}
	snprintf(err, errlen, "option '%s' has no kind", name);
	return -1;
}

int opt_value_parse_as(const struct opt_spec *s, const char *name, const char *text, struct opt_value *v, char *err,
		       size_t errlen)
{
	return value_parse(s, name, text, v, err, errlen);
}

int opt_value_parse(const struct opt_spec *s, const char *text, struct opt_value *v, char *err, size_t errlen)
{
	char name[64];
	return value_parse(s, opt_spelling(s, name, sizeof(name)), text, v, err, errlen);
}

static int find_long(const struct opt_parser *p, const char *name, size_t len)
{
	for (size_t i = 0; i < p->nspecs; i++)
		if (p->specs[i].name && strlen(p->specs[i].name) == len && strncmp(p->specs[i].name, name, len) == 0)
			return (int)i;
	return -1;
}

static int find_short(const struct opt_parser *p, char c)
{
	for (size_t i = 0; i < p->nspecs; i++)
		if (p->specs[i].short_name == c)
			return (int)i;
	return -1;
}

/* Option i, spelled as given (its short letter or long name), with its value
 * text (NULL: the next argument is the value). */
static int take(struct opt_parser *p, int i, bool as_short, const char *text, struct opt_value *v)
{
	char name[64];
	const struct opt_spec *s = &p->specs[i];
	if (as_short)
		snprintf(name, sizeof(name), "-%c", s->short_name);
	else
		snprintf(name, sizeof(name), "--%s", s->name);
	if (s->kind != OPT_FLAG && !text) {
		if (p->index >= p->argc) {
			snprintf(p->err, sizeof(p->err), "option '%s' needs a value", name);
			return OPT_ERROR;
		}
		text = p->argv[p->index++];
	}
	return value_parse(s, name, text ? text : "", v, p->err, sizeof(p->err)) ? OPT_ERROR : i;
}

/* hint's quoted names written as options: 'json' -> '--json' */
static void opt_hint_dashes(char *hint, size_t len)
{
	char out[200];
	size_t o = 0;
	int open = 0;
	for (const char *h = hint; *h && o + 3 < sizeof(out); h++) {
		out[o++] = *h;
		if (*h == '\'') {
			open = !open;
			if (open) {
				out[o++] = '-';
				out[o++] = '-';
			}
		}
	}
	if (o >= len)
		o = len - 1;
	memcpy(hint, out, o);
	hint[o] = '\0';
}

static int next_short(struct opt_parser *p, struct opt_value *v)
{
	char c = *p->bundle++, q[41];
	char letter[2] = { c, '\0' };
	if (c == 'h')
		return p->bundle = NULL, OPT_HELP;
	int i = find_short(p, c);
	if (i < 0) {
		snprintf(p->err, sizeof(p->err), "unknown option '-%s'", units_quoted(letter, q));
		p->err_see_help = true;
		p->bundle = NULL;
		return OPT_ERROR;
	}
	if (p->specs[i].kind == OPT_FLAG) {
		if (!*p->bundle)
			p->bundle = NULL;
		return take(p, i, true, NULL, v);
	}
	const char *attached = *p->bundle ? p->bundle : NULL; /* -i0 */
	p->bundle = NULL;
	return take(p, i, true, attached, v);
}

int opt_next(struct opt_parser *p, struct opt_value *v)
{
	*v = (struct opt_value){ NULL, 0, 0 };
	if (p->bundle)
		return next_short(p, v);
	if (p->index >= p->argc)
		return OPT_DONE;
	const char *a = p->argv[p->index++];
	if (p->options_ended || a[0] != '-' || a[1] == '\0') {
		if (p->stop_at_operand)
			p->options_ended = true;
		v->text = a;
		return OPT_OPERAND;
	}
	if (a[1] != '-') {
		if (p->pass_through && (a[1] == 'h' || find_short(p, a[1]) < 0))
			return v->text = a, OPT_OPERAND;
		p->bundle = a + 1;
		return next_short(p, v);
	}
	if (a[2] == '\0') { /* "--" */
		p->options_ended = true;
		if (p->pass_through)
			return v->text = a, OPT_OPERAND;
		return opt_next(p, v);
	}
	const char *name = a + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	int i = find_long(p, name, len);
	if (p->pass_through && i < 0)
		return v->text = a, OPT_OPERAND;
	if (len == 4 && strncmp(name, "help", 4) == 0 && !eq)
		return OPT_HELP;
	if (i < 0) {
		char spelled[41], typed[41], hint[160];
		snprintf(typed, sizeof(typed), "%.*s", (int)(len < 40 ? len : 40), name);
		struct suggest near = SUGGEST_INIT(typed);
		for (size_t k = 0; k < p->nspecs; k++)
			if (p->specs[k].name && p->specs[k].help) /* kept spellings are not offered */
				suggest_consider(&near, p->specs[k].name);
		suggest_text(&near, hint, sizeof(hint));
		if (near.best) /* the names as options: (did you mean '--json'?) */
			opt_hint_dashes(hint, sizeof(hint));
		snprintf(p->err, sizeof(p->err), "unknown option '--%.*s'%s", (int)(len < 38 ? len : 38),
			 units_quoted(name, spelled), hint);
		p->err_see_help = true;
		return OPT_ERROR;
	}
	if (eq && p->specs[i].kind == OPT_FLAG) {
		snprintf(p->err, sizeof(p->err), "option '--%s' takes no value", p->specs[i].name);
		return OPT_ERROR;
	}
	return take(p, i, false, eq ? eq + 1 : NULL, v);
}
