/* info.c - placeholder until the command lands (being written now). */
#include "cmd.h"
int cmd_info(int argc, char **argv, struct cmd_ctx *ctx)
{
	(void)argc; (void)argv;
	cmd_error(ctx, "info", "not built yet");
	return EXIT_SOFTWARE;
}
