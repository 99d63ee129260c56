/* SPDX-License-Identifier: Apache-2.0 */
/* help.c - --help of commands with subcommands, from their tables (help.h). */
#include "core/numfmt.h"
#include "help.h"

#include <string.h>

#include "cmd.h"
#include "core/units.h"

void help_print_subs(FILE *out, const char *cmd, const struct sub_help *subs, size_t n, const char *notes)
{
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s gpuctl %s %s %s\n", i ? "      " : "usage:", cmd, subs[i].name, subs[i].usage);
	fputc('\n', out);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%s:\n", subs[i].name);
		/* indent each line of the text */
		for (const char *p = subs[i].what; *p;) {
			const char *nl = strchr(p, '\n');
			size_t len = nl ? (size_t)(nl - p) : strlen(p);
			fprintf(out, "  %.*s\n", (int)len, p);
			p += len + (nl ? 1 : 0);
		}
	}
	if (notes)
		fprintf(out, "\n%s", notes);
	fputs("\nexit codes:\n", out);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "  %-13s %s\n", subs[i].name, subs[i].exits);
}

void help_print_sub(FILE *out, const char *cmd, const struct sub_help *s, const char *notes)
{
	fprintf(out, "usage: gpuctl %s %s %s\n\n%s", cmd, s->name, s->usage, s->what);
	if (notes)
		fprintf(out, "\n%s", notes);
	fprintf(out, "\nexit codes: %s\n", s->exits);
}

int help_sub_find(const struct cmd_ctx *ctx, const char *cmd, const struct sub_help *subs, size_t n, int argc,
		  char **argv)
{
	if (argc < 2) {
		char list[256] = "";
		size_t len = 0;
		for (size_t i = 0; i < n && len < sizeof(list); i++)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i == 0 ? "" : i + 1 < n ? ", " : " or ",
						subs[i].name);
		cmd_error(ctx, cmd, "a subcommand is needed (%s); see 'gpuctl %s --help'", list, cmd);
		return HELP_SUB_BAD;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)
		return HELP_SUB_HELP;
	for (size_t i = 0; i < n; i++)
		if (strcmp(argv[1], subs[i].name) == 0)
			return (int)i;
	char q[41];
	cmd_error(ctx, cmd, "unknown subcommand '%s'; see 'gpuctl %s --help'", units_quoted(argv[1], q), cmd);
	return HELP_SUB_BAD;
}

bool help_asked(int argc, char **argv, int from)
{
	for (int i = from; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return true;
	return false;
}

/* What help calls an option's value when the table does not say. */
static void value_word(const struct opt_spec *s, char *out, size_t outlen)
{
	static const char *const words[] = { [OPT_FLAG] = "", [OPT_INT] = "N", [OPT_DURATION] = "DURATION",
					     [OPT_SIZE] = "SIZE", [OPT_STRING] = "VALUE", [OPT_ENUM] = "",
					     [OPT_NUMBER] = "X", [OPT_LENGTH] = "N", [OPT_HOURS] = "HOURS" };
	size_t len = 0;
	out[0] = '\0';
	if (s->arg) {
		snprintf(out, outlen, "%s", s->arg);
		return;
	}
	if (s->kind != OPT_ENUM) {
		snprintf(out, outlen, "%s", words[s->kind]);
		return;
	}
	for (int i = 0; s->choices && s->choices[i] && len < outlen; i++)
		len += (size_t)snprintf(out + len, outlen - len, "%s%s", i ? "|" : "", s->choices[i]);
}

/* "  -i, --id SPEC" or "      --json": the option as help's left column shows it. */
static void option_term(const struct opt_spec *s, char *out, size_t outlen)
{
	char value[96];
	value_word(s, value, sizeof(value));
	int len = s->short_name ? snprintf(out, outlen, "  -%c%s", s->short_name, s->name ? ", " : "")
				: snprintf(out, outlen, "      ");
	if (len < 0 || (size_t)len >= outlen)
		return;
	if (s->name)
		len += snprintf(out + len, outlen - (size_t)len, "--%s", s->name);
	if (*value && (size_t)len < outlen)
		snprintf(out + len, outlen - (size_t)len, " %s", value);
}

static void print_indented(FILE *out, const char *text, int indent)
{
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (p != text)
			fprintf(out, "\n%*s", indent, "");
		fprintf(out, "%.*s", (int)len, p);
		p += len + (nl ? 1 : 0);
	}
}

void help_print_cmd(FILE *out, const struct cmd_help *h)
{
	static const struct opt_spec help_opt = { "help", 'h', OPT_FLAG, NULL, "this help", NULL, 0, 0, NULL };
	char term[160];
	int width = 0;
	for (size_t i = 0; i <= h->nopts; i++) {
		const struct opt_spec *s = i < h->nopts ? &h->opts[i] : &help_opt;
		if (!s->help)
			continue;
		option_term(s, term, sizeof(term));
		if ((int)strlen(term) > width)
			width = (int)strlen(term);
	}
	width += 2;
	fprintf(out, "usage: gpuctl %s%s%s\n\n%s\n", h->name ? h->name : "", h->name ? " " : "", h->usage, h->what);
	for (size_t i = 0; i <= h->nopts; i++) {
		const struct opt_spec *s = i < h->nopts ? &h->opts[i] : &help_opt;
		if (!s->help)
			continue;
		option_term(s, term, sizeof(term));
		fprintf(out, "%-*s", width, term);
		print_indented(out, s->help, width);
		if (s->kind == OPT_NUMBER || s->kind == OPT_HOURS) { /* the range the parser holds it to */
			char lo[48], hi[48];
			fprintf(out, " (%s to %s)", numfmt(lo, sizeof(lo), (double)s->min / 1000.0, 6),
				numfmt(hi, sizeof(hi), (double)s->max / 1000.0, 6));
		}
		if (s->def)
			fprintf(out, " (default %s)", s->def);
		fputc('\n', out);
	}
	if (h->more) {
		fputc('\n', out);
		h->more(out);
	}
	if (h->notes)
		fprintf(out, "\n%s", h->notes);
	fprintf(out, "\nexit codes: %s\n", h->exits);
}

int help_usage_error(const struct cmd_ctx *ctx, const char *cmd, const char *msg)
{
	cmd_error(ctx, cmd, "%s; see '%s %s --help'", msg, ctx->prog, cmd);
	return EXIT_USAGE;
}

int help_opt_error(const struct cmd_ctx *ctx, const char *cmd, const struct opt_parser *p)
{
	if (p->err_see_help)
		return help_usage_error(ctx, cmd, p->err);
	cmd_error(ctx, cmd, "%s", p->err);
	return EXIT_USAGE;
}

int help_unexpected(const struct cmd_ctx *ctx, const char *cmd, const char *arg)
{
	char msg[128], q[41];
	snprintf(msg, sizeof(msg), "unexpected argument '%s'", units_quoted(arg, q));
	return help_usage_error(ctx, cmd, msg);
}

int help_opt_next(const struct cmd_ctx *ctx, const struct cmd_help *h, struct opt_parser *p, struct opt_value *v,
		  int *rc)
{
	int k = opt_next(p, v);
	*rc = EXIT_OK;
	if (k == OPT_HELP) {
		help_print_cmd(ctx->out, h);
	} else if (k == OPT_ERROR) {
		*rc = help_opt_error(ctx, h->name, p);
	} else if (k == OPT_OPERAND && !h->operands) {
		*rc = help_unexpected(ctx, h->name, v->text);
		k = OPT_ERROR;
	}
	return k;
}
