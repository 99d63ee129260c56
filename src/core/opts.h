/* SPDX-License-Identifier: Apache-2.0 */
/*
 * opts.h - the one option parser: each command has a table of its options
 * (name, short letter, kind of value, help text, default) and reads argv
 * through opt_next, one option at a time, in a loop over its codes. The same
 * table prints --help (src/cmd/help.h: help_print_cmd). Pure: no I/O; errors
 * are one line in the parser's err (docs/units.md says the grammar).
 *
 *   --name VALUE, --name=VALUE, -x VALUE, -xVALUE; flags bundle (-qj);
 *   -h and --help ask for help; "--" ends the options; a value may start
 *   with '-' ("--window -1" is the value -1, refused by its bounds).
 * Long names are matched whole (no abbreviations).
 */
#ifndef GPUCTL_OPTS_H
#define GPUCTL_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum opt_kind {
	OPT_FLAG,     /* no value */
	OPT_INT,      /* a decimal integer in [min, max] */
	OPT_DURATION, /* units_parse_duration, ns in [min, max] */
	OPT_SIZE,     /* units_parse_size, bytes in [min, max] */
	OPT_STRING,   /* any text (not empty) */
	OPT_ENUM,     /* one of choices */
	OPT_NUMBER,   /* a decimal number (1.5, 2e3; a k, M, B or G, T after it: x 1e3, 1e6, 1e9, 1e12)
		       * in [min, max] thousandths (OPT_MILLI): every such row gives its range, which
		       * --help shows (both 0: the parser refuses every value) */
	OPT_LENGTH,   /* units_parse_length: whole tokens, K and M powers of 1024 (4k = 4096), in [min, max] */
	OPT_HOURS,    /* hours: a number (1.5) or a duration with a unit (2h, 90m, 1d12h), in [min, max]
		       * thousandths of an hour (OPT_MILLI) */
};

struct opt_spec {
	const char *name;     /* long name without "--"; NULL: a short letter only */
	char short_name;      /* 'i' for -i; 0: none */
	enum opt_kind kind;
	const char *arg;      /* what help calls the value ("SPEC"); NULL: the kind's word */
	const char *help;     /* lines separated by '\n'; NULL: left out of --help (a kept spelling) */
	const char *def;      /* the default help shows; NULL: none */
	long long min, max;   /* OPT_INT, OPT_DURATION (ns), OPT_SIZE (bytes), OPT_LENGTH; both 0: 0 to
			       * LLONG_MAX; OPT_NUMBER, OPT_HOURS: thousandths, OPT_MILLI(lo), OPT_MILLI(hi) */
	const char *const *choices; /* OPT_ENUM: NULL-terminated */
};
/* An OPT_NUMBER row's bound: x in thousandths (up to 9.2e15). */
#define OPT_MILLI(x) ((long long)((x) * 1000.0))

struct opt_value {
	const char *text; /* the value as given; NULL for a flag */
	long long num;    /* OPT_INT; OPT_DURATION ns; OPT_SIZE bytes; OPT_ENUM the choice's index; OPT_LENGTH */
	double real;      /* OPT_NUMBER: finite, in the row's range; OPT_LENGTH as num; OPT_HOURS hours */
};

/* What opt_next returns besides an index into the table. */
enum {
	OPT_DONE = -1,    /* no more arguments */
	OPT_ERROR = -2,   /* err says why (usage error) */
	OPT_OPERAND = -3, /* not an option: value.text is it */
	OPT_HELP = -4,    /* -h or --help */
};

struct opt_parser {
	int argc;
	char **argv;
	const struct opt_spec *specs;
	size_t nspecs;
	int index;            /* the next argv element to read */
	bool options_ended;   /* "--" seen (or the first operand, with stop_at_operand) */
	bool stop_at_operand; /* everything from the first operand on is an operand (a command to run) */
	bool pass_through;    /* only the table's options are taken: anything else (an unknown option,
			       * -h, --help, "--" and all after it) is an operand, as given (main's
			       * global options, taken out of a line that is the command's) */
	const char *bundle;   /* the rest of "-qj" after -q */
	char err[256];
	bool err_see_help;    /* the error is an unknown option: the message points at --help */
};

/* Reads argv[1..argc-1] against specs[0..n-1]. */
void opt_init(struct opt_parser *p, int argc, char **argv, const struct opt_spec *specs, size_t n);
/* The next option (its index in the table, *v its value), or OPT_DONE,
 * OPT_ERROR, OPT_OPERAND, OPT_HELP. */
int opt_next(struct opt_parser *p, struct opt_value *v);
/* The option as a user would spell it: "--interval" or "-d" (for messages). */
const char *opt_spelling(const struct opt_spec *s, char *out, size_t outlen);
/* Whether s's value text is valid for its kind and bounds; fills *v. Used
 * by opt_next; a command checks a value it read elsewhere with it. */
int opt_value_parse(const struct opt_spec *s, const char *text, struct opt_value *v, char *err, size_t errlen);
/* The same, the value named in messages as name ("interval" for a setting of
 * a file: "option 'interval': duration '5ms' out of range (10ms to 1h)"). */
int opt_value_parse_as(const struct opt_spec *s, const char *name, const char *text, struct opt_value *v, char *err,
		       size_t errlen);

#endif
