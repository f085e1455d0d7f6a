/* A JIT whose code lives in a memfd rather than in anonymous memory, as
 * JITs under W^X rules do to keep no page writable and executable at once
 * (the same memfd mapped twice: read-write where the compiler writes,
 * read-execute where the code runs). The executable mapping is then named
 * "/memfd:kprof-memfd-jit (deleted)" like a program run from a memfd, but
 * it holds no ELF file: only the process's /tmp/perf-PID.map names it.
 *
 * Stack of the copy:   main -> run_memfd_jit_kprof -> kprof_jit_memfd_spin (JIT)
 *
 * Usage: memfd_jit SECONDS (of the process's own CPU time)
 * Prints "pid N" so the caller can remove the map. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "jit_template.h"
#include "workload.h"

typedef uint64_t (*jit_fn)(uint64_t n);

static volatile uint64_t sink;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

__attribute__((noinline, noclone)) static void run_memfd_jit_kprof(jit_fn fn, uint64_t n)
{
	sink += fn(n);
	__asm__ volatile("" ::: "memory"); /* a call, not a tail jump */
}

int main(int argc, char **argv)
{
#ifndef KP_HAVE_TEMPLATE
	(void)argc;
	(void)argv;
	fprintf(stderr, "memfd_jit: no code template for this architecture\n");
	return 77;
#else
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	size_t len = (size_t)(kp_jit_template_end - kp_jit_template);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char map_path[64];
	char *rw, *rx;
	FILE *f;
	int fd;

	fd = memfd_create("kprof-memfd-jit", MFD_CLOEXEC);
	if (fd < 0)
		die("memfd_create");
	if (ftruncate(fd, (off_t)page) != 0)
		die("ftruncate");
	rw = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	rx = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	if (rw == MAP_FAILED || rx == MAP_FAILED)
		die("mmap");
	close(fd); /* the mappings keep the memfd */
	memcpy(rw, kp_jit_template, len);
	__builtin___clear_cache(rx, rx + len);

	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(map_path, "w");
	if (!f)
		die(map_path);
	fprintf(f, "%lx %zx kprof_jit_memfd_spin\n", (unsigned long)(uintptr_t)rx, len);
	if (fclose(f) != 0)
		die(map_path);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);

	double end = kp_seconds(CLOCK_PROCESS_CPUTIME_ID) + seconds;
	while (kp_seconds(CLOCK_PROCESS_CPUTIME_ID) < end)
		run_memfd_jit_kprof((jit_fn)(uintptr_t)rx, 2000000);
	return 0;
#endif
}
