/* Inline frames whose places are known, half of the CPU time each (in
 * slices of CPU time, see KP_SPIN_FOR):
 *   main -> inl_single_caller_kprof -> inl_single_kprof (inlined)
 *   main -> inl_caller_kprof -> inl_outer_kprof (inlined)
 *                            -> inl_inner_kprof (inlined into inl_outer_kprof)
 * Only the two callers exist as machine code; the always_inline functions
 * exist only in the DWARF (DW_TAG_inlined_subroutine).
 * Usage: inline CPU_SECONDS */
#include <stdlib.h>
#include <time.h>

#include "workload.h"

static volatile unsigned long sink;

static inline __attribute__((always_inline)) unsigned long inl_inner_kprof(unsigned long n)
{
	volatile unsigned long acc = 0;

	for (unsigned long i = 0; i < n; i++)
		acc += i * i;
	return acc;
}

static inline __attribute__((always_inline)) unsigned long inl_outer_kprof(unsigned long n)
{
	unsigned long r = inl_inner_kprof(n);

	return r ^ (r >> 7);
}

static inline __attribute__((always_inline)) unsigned long inl_single_kprof(unsigned long n)
{
	volatile unsigned long acc = 1;

	for (unsigned long i = 0; i < n; i++)
		acc ^= i + (acc << 1);
	return acc;
}

__attribute__((noinline, noclone)) static void inl_single_caller_kprof(unsigned long n)
{
	sink += inl_single_kprof(n);
	__asm__ volatile("" ::: "memory"); /* keep the call a call */
}

__attribute__((noinline, noclone)) static void inl_caller_kprof(unsigned long n)
{
	sink += inl_outer_kprof(n);
	__asm__ volatile("" ::: "memory"); /* keep the call a call */
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	/* CPU time, as spin.c: a loaded machine changes the run's length, not
	 * its number of samples */
	double end = kp_seconds(CLOCK_THREAD_CPUTIME_ID) + seconds;

	while (kp_seconds(CLOCK_THREAD_CPUTIME_ID) < end) {
		KP_SPIN_FOR(0.01, inl_caller_kprof(100000));
		KP_SPIN_FOR(0.01, inl_single_caller_kprof(100000));
	}
	return 0;
}
