/* kprof: entry point and subcommand dispatch. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

void kp_err(const char *fmt, ...)
{
	va_list ap;

	fputs("kprof: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void kp_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("kprof: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int main(int argc, char **argv)
{
	/* `kprof collapse ...` and `kprof flamegraph ...` are subcommands; any
	 * other first word is the recording's option or command (a command
	 * that happens to be called "collapse" runs with `kprof -- collapse`). */
	if (argc > 1 && strcmp(argv[1], "collapse") == 0)
		return kp_cmd_collapse(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "flamegraph") == 0)
		return kp_cmd_flamegraph(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "record") == 0)
		return kp_cmd_record(argc - 1, argv + 1);
	return kp_cmd_record(argc, argv);
}
