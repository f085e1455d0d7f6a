/* Runs a program from memory, as container runtimes (runc's re-exec of
 * itself) and self-re-executing programs do: copies PROGRAM into
 * memfd_create(NAME) and fexecve's it. The process's code is then mapped
 * from "/memfd:NAME (deleted)": no file on disk holds it, only the memfd
 * (reachable through /proc/PID/map_files while the process lives).
 * Usage: memfd_exec [-n NAME] PROGRAM [ARGS...]
 * NAME defaults to "kprof-memfd-test"; it may hold spaces or the text
 * "(deleted)". The memfd is close-on-exec, so the program holds no
 * descriptor of it: only its mappings keep it alive. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern char **environ;

static void die(const char *what)
{
	perror(what);
	exit(126);
}

int main(int argc, char **argv)
{
	const char *name = "kprof-memfd-test";
	char buf[65536];
	ssize_t n;
	int argi = 1, in, fd;

	if (argc > 2 && strcmp(argv[1], "-n") == 0) {
		name = argv[2];
		argi = 3;
	}
	if (argi >= argc) {
		fprintf(stderr, "usage: memfd_exec [-n NAME] PROGRAM [ARGS...]\n");
		return 2;
	}
	in = open(argv[argi], O_RDONLY | O_CLOEXEC);
	if (in < 0)
		die(argv[argi]);
	fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		die("memfd_create");
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(fd, buf + off, (size_t)(n - off));

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				die("write");
			off += w;
		}
	}
	if (n < 0)
		die("read");
	close(in);
	fexecve(fd, argv + argi, environ);
	die("fexecve");
	return 126;
}
