/* topo.c - placeholder until the command lands (being written now). */
#include "cmd.h"
int cmd_topo(int argc, char **argv, struct cmd_ctx *ctx)
{
	(void)argc; (void)argv;
	cmd_error(ctx, "topo", "not built yet");
	return EXIT_SOFTWARE;
}
