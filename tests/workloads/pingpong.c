/* A switch storm whose waits are known (scripts/bench-offcpu): two threads
 * pass one byte back and forth through two pipes, ROUNDS round trips, each
 * thread blocked in read() while the other runs:
 *   main -> ping -> read                          (the main thread)
 *   start_thread -> pong_main -> pong -> read     (the other)
 * so nearly all of the program's off-CPU time is under ping and pong, and
 * each round trip is two context switches. Pinned to one CPU (the CPU
 * argument: both threads bound to it, as taskset -c CPU would, without a
 * taskset process in the profile) the switches go straight from one thread
 * to the other; unpinned, on two CPUs, each wait is an idle CPU woken up.
 * Prints its own wall time, its switches (both threads, from getrusage) and
 * their rate on stdout:
 *   pingpong: ROUNDS round trips, WALL s, SWITCHES switches, RATE switches/s
 * Usage: pingpong [ROUNDS [CPU]]     (default 100000 round trips, unpinned) */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "workload.h"

static int to_pong[2], to_ping[2];

__attribute__((noinline, noclone)) static void ping(long rounds)
{
	char c = 'x';

	for (long i = 0; i < rounds; i++) {
		if (write(to_pong[1], &c, 1) != 1 || read(to_ping[0], &c, 1) != 1) {
			perror("pingpong");
			exit(1);
		}
	}
	__asm__ volatile("" ::: "memory"); /* keep the call a call, not a tail jump */
}

__attribute__((noinline, noclone)) static void pong(long rounds)
{
	char c;

	for (long i = 0; i < rounds; i++) {
		if (read(to_pong[0], &c, 1) != 1 || write(to_ping[1], &c, 1) != 1) {
			perror("pingpong");
			exit(1);
		}
	}
	__asm__ volatile("" ::: "memory");
}

static void *pong_main(void *arg)
{
	pong(*(long *)arg);
	return NULL;
}

static long switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 100000;
	pthread_t t;
	double start, wall;
	long sw0, sw;

	if (rounds <= 0 || pipe(to_pong) || pipe(to_ping)) {
		fprintf(stderr, "usage: pingpong [ROUNDS > 0 [CPU]]\n");
		return 2;
	}
	if (argc > 2) { /* before the thread starts: it inherits the mask */
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(atoi(argv[2]), &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("pingpong: sched_setaffinity");
			return 1;
		}
	}
	sw0 = switches();
	start = kp_seconds(CLOCK_MONOTONIC);
	if (pthread_create(&t, NULL, pong_main, &rounds))
		return 1;
	ping(rounds);
	pthread_join(t, NULL);
	wall = kp_seconds(CLOCK_MONOTONIC) - start;
	sw = switches() - sw0;
	printf("pingpong: %ld round trips, %.3f s, %ld switches, %.0f switches/s\n", rounds, wall,
	       sw, (double)sw / wall);
	return 0;
}
