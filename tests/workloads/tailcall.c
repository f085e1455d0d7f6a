/* A hot leaf reached through a tail call, built with and without frame
 * pointers:
 *   main -> tc_outer_kprof -> tc_dispatch_kprof -(tail call)-> tc_leaf_kprof
 * tc_dispatch_kprof jumps to the leaf instead of calling it, so its frame
 * is gone while the leaf runs: the true stack is
 *   main;tc_outer_kprof;tc_leaf_kprof
 * tc_leaf_kprof keeps everything in registers and sets up no frame (GCC
 * omits it in a leaf that needs no stack, frame pointers or not), so a
 * frame-pointer walk from it skips its caller: main;tc_leaf_kprof, unless
 * the leaf is repaired from its CFI.
 * Spins for SECONDS of CPU time. Usage: tailcall SECONDS */
#include <stdlib.h>
#include <time.h>

#include "workload.h"

static volatile unsigned long sink;

__attribute__((noinline, noclone)) static unsigned long tc_leaf_kprof(unsigned long n)
{
	unsigned long acc = 0;

	for (unsigned long i = 0; i < n; i++) {
		acc += (i * i) ^ (acc >> 3);
		__asm__ volatile("" : "+r"(acc)); /* keep the loop, in registers */
	}
	return acc;
}

/* -O2 turns this call into a jump (a sibling call) */
__attribute__((noinline, noclone)) static unsigned long tc_dispatch_kprof(unsigned long n)
{
	return tc_leaf_kprof(n | 1);
}

__attribute__((noinline, noclone)) static void tc_outer_kprof(double seconds)
{
	double end = kp_seconds(CLOCK_PROCESS_CPUTIME_ID) + seconds;

	while (kp_seconds(CLOCK_PROCESS_CPUTIME_ID) < end)
		sink += tc_dispatch_kprof(2000000);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	tc_outer_kprof(argc > 1 ? atof(argv[1]) : 1.0);
	return 0;
}
