/* kprof record: placeholder. */
#include "cli/commands.h"

int kp_cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	kp_err("record: not built yet");
	return 2;
}
