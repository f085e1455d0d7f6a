/* A syscall-heavy workload: most of its time is in the kernel, copying
 * zeroes out of /dev/zero:  main -> sys_reader -> read(2).
 * Usage: syscalls SECONDS */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static char buf[1 << 16];

__attribute__((noinline, noclone)) static void sys_reader(double seconds)
{
	int fd = open("/dev/zero", O_RDONLY);
	struct timespec ts;
	double end;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + seconds;
	for (;;) {
		for (int i = 0; i < 64; i++)
			if (read(fd, buf, sizeof(buf)) < 0)
				exit(1);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9 >= end)
			break;
	}
	close(fd);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	sys_reader(argc > 1 ? atof(argv[1]) : 1.0);
	return 0;
}
