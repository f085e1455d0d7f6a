/* Exits with the status given, or kills itself with a signal:
 * exitcode N | exitcode -SIG | exitcode wait (sleeps until signalled) */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "wait") == 0) {
		for (;;)
			pause();
	}
	if (argc > 1 && argv[1][0] == '-') {
		signal(atoi(argv[1] + 1), SIG_DFL);
		raise(atoi(argv[1] + 1));
	}
	return argc > 1 ? atoi(argv[1]) : 0;
}
