/* kprof: entry point and the table of subcommands. */
#include <stddef.h>
#include <string.h>

#include "cli/commands.h"
#include "util/outfile.h"

/* `kprof NAME ...` runs run(argc - 1, argv + 1). */
static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help; /* one line: what it does */
} commands[] = {
	{"collapse", kp_cmd_collapse, "perf script text -> folded stacks"},
	{"flamegraph", kp_cmd_flamegraph, "folded stacks -> a flame graph (SVG)"},
	{"symbolize", kp_cmd_symbolize, "addresses of an ELF file -> function names"},
	{"report", kp_cmd_report, "a profile -> any output format"},
	{"diff", kp_cmd_diff, "two profiles compared, a CI gate"},
	{"record", kp_cmd_record, "sample a command, processes or the machine (the default)"},
};

int main(int argc, char **argv)
{
	kp_outfile_hold_standard_fds();
	/* `kprof collapse|flamegraph|symbolize|report|diff|record ...` are
	 * subcommands; any other first word is the recording's option or
	 * command (a command that happens to be called "report" or "diff" runs
	 * with `kprof -- report`). */
	for (size_t i = 0; argc > 1 && i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	return kp_cmd_record(argc, argv);
}
