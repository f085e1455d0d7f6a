/* A CPU-bound workload whose stack is deeper than perf's 8 KiB copy and
 * shallower than kprof's 16 KiB (docs/unwinding.md, "The copy's size"):
 *   main -> deep_kprof (DEPTH frames of about 256 bytes each, 40 by
 *   default: some 10 KiB) -> deep_leaf_kprof
 * The leaf spins for SECONDS of the thread's CPU time. Built without frame
 * pointers, only a copy that holds the whole stack unwinds it to main.
 * Usage: deepstack SECONDS [DEPTH] */
#include <stdlib.h>
#include <time.h>

#include "workload.h"

static volatile unsigned long sink;

__attribute__((noinline, noclone)) static void deep_leaf_kprof(double seconds)
{
	double end = kp_seconds(CLOCK_THREAD_CPUTIME_ID) + seconds;
	volatile unsigned long acc = 0;

	while (kp_seconds(CLOCK_THREAD_CPUTIME_ID) < end)
		for (unsigned long i = 0; i < 100000; i++)
			acc += i * i;
	sink += acc;
}

/* Each level keeps 256 bytes of its own on the stack (used after the call,
 * so the compiler keeps the frame and the call is no tail call). */
__attribute__((noinline, noclone)) static void deep_kprof(int depth, double seconds)
{
	volatile unsigned char pad[240];

	pad[0] = (unsigned char)depth;
	if (depth > 0)
		deep_kprof(depth - 1, seconds);
	else
		deep_leaf_kprof(seconds);
	sink += pad[0];
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	int depth = argc > 2 ? atoi(argv[2]) : 40;

	deep_kprof(depth, seconds);
	return 0;
}
