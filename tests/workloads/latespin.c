/* Sleeps first, then spins: a process that takes no CPU sample for a
 * while, so a profiler meets its binary only late (after the file may have
 * been deleted or replaced). Stack: main -> late_outer_kprof -> late_leaf_kprof
 * Usage: latespin DELAY SECONDS */
#include <stdlib.h>
#include <time.h>

#include "workload.h"

static volatile unsigned long sink;

/* the volatile local gives the leaf a frame, see spin.c */
__attribute__((noinline, noclone)) static void late_leaf_kprof(unsigned long n)
{
	volatile unsigned long acc = 0;

	for (unsigned long i = 0; i < n; i++)
		acc += i ^ 9;
	sink += acc;
}

__attribute__((noinline, noclone)) static void late_outer_kprof(double seconds)
{
	double end = kp_seconds(CLOCK_MONOTONIC) + seconds;

	while (kp_seconds(CLOCK_MONOTONIC) < end)
		late_leaf_kprof(200000);
	__asm__ volatile("" ::: "memory"); /* keep the call a call */
}

int main(int argc, char **argv)
{
	double delay = argc > 1 ? atof(argv[1]) : 0.5;
	double seconds = argc > 2 ? atof(argv[2]) : 1.0;
	struct timespec ts = {(time_t)delay, (long)((delay - (double)(time_t)delay) * 1e9)};

	nanosleep(&ts, NULL);
	late_outer_kprof(seconds);
	return 0;
}
