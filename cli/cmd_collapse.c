/* kprof collapse: placeholder until the subcommand lands. */
#include "cli/commands.h"

int kp_cmd_collapse(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	kp_err("collapse: not built yet");
	return 2;
}
