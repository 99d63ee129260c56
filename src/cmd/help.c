/* help.c - --help of commands with subcommands, from their tables (help.h). */
#include "help.h"

#include <string.h>

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

bool help_asked(int argc, char **argv, int from)
{
	for (int i = from; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return true;
	return false;
}
