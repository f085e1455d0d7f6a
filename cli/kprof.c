/* kprof: entry point and subcommand dispatch. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "util/xalloc.h"

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

char *kp_default_cache_dir(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (xdg && xdg[0] == '/')
		return kp_xasprintf("%s/kprof", xdg);
	if (home && home[0] == '/')
		return kp_xasprintf("%s/.cache/kprof", home);
	return NULL;
}

/* A closed stdin, stdout or stderr (`2>&-`) would be taken by the next
 * file opened: an output would receive kprof's messages, a recording the
 * command's. Each is held open on /dev/null instead. */
static void hold_standard_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int got;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
		if (got < 0)
			_exit(1); /* no /dev/null: nowhere safe to write, or to say so */
		if (got != fd) {
			dup2(got, fd);
			close(got);
		}
	}
}

int main(int argc, char **argv)
{
	hold_standard_fds();
	/* `kprof collapse|flamegraph|symbolize|report|diff|record ...` are
	 * subcommands; any other first word is the recording's option or
	 * command (a command that happens to be called "report" or "diff" runs
	 * with `kprof -- report`). */
	if (argc > 1 && strcmp(argv[1], "collapse") == 0)
		return kp_cmd_collapse(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "flamegraph") == 0)
		return kp_cmd_flamegraph(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "symbolize") == 0)
		return kp_cmd_symbolize(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "report") == 0)
		return kp_cmd_report(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "diff") == 0)
		return kp_cmd_diff(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "record") == 0)
		return kp_cmd_record(argc - 1, argv + 1);
	return kp_cmd_record(argc, argv);
}
