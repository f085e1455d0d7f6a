/* kprof flamegraph: placeholder until the subcommand lands. */
#include "cli/commands.h"

int kp_cmd_flamegraph(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	kp_err("flamegraph: not built yet");
	return 2;
}
