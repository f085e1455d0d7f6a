/* A noisy neighbour, as on a shared CI runner (scripts/bench-gate,
 * e2e/diff_gate): two threads, each switched on and off at random for
 * 0.1 to 2 s at a time,
 *   thrash  writes a cache line in every 64 bytes of a 128 MiB buffer,
 *           again and again: the caches and memory bandwidth are shared
 *   io      writes 4 MiB to a file and fsyncs it, again and again: disk
 *           interrupts land on whatever runs, the page cache churns
 * until SECONDS have passed (0: until killed). dir=PATH is where the file
 * goes (default $TMPDIR or /tmp; removed at the end, also on SIGTERM).
 * Usage: neighbour [SECONDS] [dir=PATH] [seed=N] */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

#define THRASH_BYTES (128u << 20)
#define IO_BYTES     (4u << 20)

static char path[4096];
static volatile sig_atomic_t stop;
static double end_time;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t next_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static int over(void)
{
	return stop || (end_time > 0 && kp_seconds(CLOCK_MONOTONIC) >= end_time);
}

/* Sleeps or works (work(arg) in a loop) for random spells until over(). */
static void spells(uint64_t seed, void (*work)(void *), void *arg)
{
	uint64_t x = seed | 1;

	while (!over()) {
		double spell = 0.1 + (double)(next_random(&x) % 1900) / 1000;
		double until = kp_seconds(CLOCK_MONOTONIC) + spell;

		if (next_random(&x) & 1) {
			while (!over() && kp_seconds(CLOCK_MONOTONIC) < until)
				work(arg);
		} else {
			while (!over() && kp_seconds(CLOCK_MONOTONIC) < until)
				usleep(20000);
		}
	}
}

static void thrash_once(void *arg)
{
	volatile unsigned char *buf = arg;

	for (size_t i = 0; i < THRASH_BYTES && !stop; i += 64)
		buf[i]++;
}

static void io_once(void *arg)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		return;
	if (write(fd, arg, IO_BYTES) == (ssize_t)IO_BYTES)
		fsync(fd);
	close(fd);
}

static uint64_t seed;

static void *thrash_thread(void *arg)
{
	spells(seed * 3, thrash_once, arg);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *dir = getenv("TMPDIR");
	double seconds = 0;
	unsigned char *thrash_buf, *io_buf;
	pthread_t t;

	seed = (uint64_t)(kp_seconds(CLOCK_REALTIME) * 1e6);
	for (int a = 1; a < argc; a++) {
		if (strncmp(argv[a], "dir=", 4) == 0)
			dir = argv[a] + 4;
		else if (strncmp(argv[a], "seed=", 5) == 0)
			seed = strtoull(argv[a] + 5, NULL, 10);
		else
			seconds = atof(argv[a]);
	}
	snprintf(path, sizeof(path), "%s/neighbour.%d.out", dir && *dir ? dir : "/tmp",
		 (int)getpid());
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	if (seconds > 0)
		end_time = kp_seconds(CLOCK_MONOTONIC) + seconds;
	thrash_buf = calloc(1, THRASH_BYTES);
	io_buf = malloc(IO_BYTES);
	if (!thrash_buf || !io_buf) {
		fputs("neighbour: out of memory\n", stderr);
		return 1;
	}
	memset(io_buf, 0x5a, IO_BYTES);
	if (pthread_create(&t, NULL, thrash_thread, thrash_buf) != 0) {
		fputs("neighbour: cannot start a thread\n", stderr);
		return 1;
	}
	spells(seed * 7 + 1, io_once, io_buf);
	pthread_join(t, NULL);
	unlink(path);
	return 0;
}
