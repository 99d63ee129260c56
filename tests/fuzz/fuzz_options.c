/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_options.c - the option parser (core/opts.h) and the units grammar
 * (core/units.h) on arbitrary bytes, split at NUL bytes into argv: no crash,
 * no hang (also with stop_at_operand and pass_through, chosen by the
 * first word); every error is one line; every value returned is within its
 * option's bounds and is what the units parser reads from its text; every
 * duration and size the units parser accepts is written back (units_fmt_*)
 * as text that reads back to the same value; a token length reads back
 * from its digits; whole seconds (units_parse_seconds) agree with the
 * duration and are never a number alone but 0; bench --size's list reader
 * (bench_sizes_parse, units_parse_size per item) keeps its bounds. */
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "bench/suite.h"
#include "core/opts.h"
#include "core/units.h"

static const char *const kinds[] = { "a", "bb", "", NULL };
static const struct opt_spec specs[] = {
	{ "flag", 'f', OPT_FLAG, NULL, "x", NULL, 0, 0, NULL },
	{ "int", 'n', OPT_INT, NULL, "x", NULL, -10, 10, NULL },
	{ "any", 'a', OPT_INT, NULL, "x", NULL, 0, 0, NULL },
	{ "dur", 'd', OPT_DURATION, NULL, "x", NULL, 1000, 3600ll * 1000000000, NULL },
	{ "size", 's', OPT_SIZE, NULL, "x", NULL, 1, 1ll << 40, NULL },
	{ "str", 't', OPT_STRING, NULL, "x", NULL, 0, 0, NULL },
	{ "enum", 'e', OPT_ENUM, NULL, "x", NULL, 0, 0, kinds },
	{ "len", 'l', OPT_LENGTH, NULL, "x", NULL, 1, 1ll << 20, NULL },
	{ "hours", 'H', OPT_HOURS, NULL, "x", NULL, 0, OPT_MILLI(1e6), NULL },
	{ NULL, 'x', OPT_FLAG, NULL, NULL, NULL, 0, 0, NULL },
};
#define NSPECS (int)(sizeof(specs) / sizeof(specs[0]))

static void one_line(const char *err)
{
	if (!*err)
		__builtin_trap();
	for (const char *c = err; *c; c++)
		if ((unsigned char)*c < 0x20)
			__builtin_trap();
}

typedef int (*parse_fn)(const char *, uint64_t, uint64_t, uint64_t *, char *, size_t);
typedef void (*fmt_fn)(uint64_t, char *, size_t);

static void round_trip(const char *s, parse_fn parse, fmt_fn fmt)
{
	char err[256], text[32];
	uint64_t v, w;
	if (parse(s, 0, UINT64_MAX, &v, err, sizeof(err)) != 0) {
		one_line(err);
		return;
	}
	fmt(v, text, sizeof(text));
	if (parse(text, 0, UINT64_MAX, &w, err, sizeof(err)) != 0 || w != v)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[512];
	char *argv[34] = { (char *)"cmd" };
	int argc = 1;
	size_t n = size < sizeof(buf) - 1 ? size : sizeof(buf) - 1;
	memcpy(buf, data, n);
	buf[n] = '\0';
	for (size_t i = 0; i <= n && argc < 33;) {
		argv[argc++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	argv[argc] = NULL;
	static struct bench_plan plan;
	for (int i = 1; i < argc; i++) {
		char err[256];
		round_trip(argv[i], units_parse_duration, units_fmt_duration);
		round_trip(argv[i], units_parse_size, units_fmt_size);
		/* a length reads back from its decimal digits; whole seconds agree with the
		 * duration, and are never a number alone but 0 */
		uint64_t len, len2, secs, ns;
		char digits[24];
		if (units_parse_length(argv[i], 0, UINT64_MAX, &len, err, sizeof(err)) == 0) {
			snprintf(digits, sizeof(digits), "%llu", (unsigned long long)len);
			if (units_parse_length(digits, 0, UINT64_MAX, &len2, err, sizeof(err)) != 0 || len2 != len)
				__builtin_trap();
		} else {
			one_line(err);
		}
		if (units_parse_seconds(argv[i], "x", 0, UINT64_MAX, &secs, err, sizeof(err)) == 0) {
			if ((secs && units_is_bare_number(argv[i])) ||
			    units_parse_duration(argv[i], 0, UINT64_MAX, &ns, err, sizeof(err)) != 0 ||
			    ns != secs * UNITS_NS_PER_S)
				__builtin_trap();
		} else {
			one_line(err);
		}
		if (bench_sizes_parse(&plan, argv[i], err, sizeof(err)) != 0) {
			one_line(err);
			continue;
		}
		if (plan.nsizes < 1 || plan.nsizes > BENCH_MAX_SIZES)
			__builtin_trap();
		for (unsigned k = 0; k < plan.nsizes; k++)
			if (plan.sizes[k] < 1 || plan.sizes[k] > BENCH_MAX_SIZE)
				__builtin_trap();
	}

	struct opt_parser p;
	opt_init(&p, argc, argv, specs, (size_t)NSPECS);
	p.stop_at_operand = argc > 1 && argv[1][0] == 's';
	p.pass_through = argc > 1 && argv[1][0] == 'p';
	for (int steps = 0;; steps++) {
		struct opt_value v;
		int k = opt_next(&p, &v);
		if (steps > 2 * argc + (int)n || k < OPT_HELP || k >= NSPECS)
			__builtin_trap(); /* every call moves on; codes are the table's or the four */
		if (k == OPT_DONE)
			break;
		if (k == OPT_ERROR) {
			one_line(p.err);
			break;
		}
		if (k == OPT_OPERAND && !v.text)
			__builtin_trap();
		if (k < 0)
			continue;
		const struct opt_spec *s = &specs[k];
		long long min = s->min, max = s->max ? s->max : INT64_MAX;
		if (s->kind == OPT_FLAG && v.text)
			__builtin_trap();
		if ((s->kind == OPT_INT || s->kind == OPT_DURATION || s->kind == OPT_SIZE || s->kind == OPT_LENGTH) &&
		    (v.num < min || v.num > max))
			__builtin_trap();
		if (s->kind == OPT_ENUM && strcmp(kinds[v.num], v.text) != 0)
			__builtin_trap();
		char err[256];
		uint64_t u;
		if (s->kind == OPT_DURATION &&
		    (units_parse_duration(v.text, 0, UINT64_MAX, &u, err, sizeof(err)) || u != (uint64_t)v.num))
			__builtin_trap();
		if (s->kind == OPT_SIZE && (units_parse_size(v.text, 0, UINT64_MAX, &u, err, sizeof(err)) || u != (uint64_t)v.num))
			__builtin_trap();
		if (s->kind == OPT_LENGTH &&
		    (units_parse_length(v.text, 0, UINT64_MAX, &u, err, sizeof(err)) || u != (uint64_t)v.num))
			__builtin_trap();
		if (s->kind == OPT_HOURS && !(v.real >= (double)s->min / 1000.0 && v.real <= (double)s->max / 1000.0))
			__builtin_trap();
	}
	return 0;
}
