/* The shared library of the short-lived workload: all of its time is spent
 * here, in kpshort_lib_kprof -> kpshort_lib_leaf_kprof (a static function:
 * in the library's .symtab, not its .dynsym). */
#include <time.h>

#include "../workload.h"

double kpshort_lib_kprof(double seconds);

static volatile unsigned long sink;

/* the volatile local gives the leaf a frame, see tests/workloads/spin.c */
__attribute__((noinline, noclone)) static void kpshort_lib_leaf_kprof(unsigned long n)
{
	volatile unsigned long acc = 0;

	for (unsigned long i = 0; i < n; i++)
		acc += i * 3;
	sink += acc;
}

__attribute__((noinline)) double kpshort_lib_kprof(double seconds)
{
	double start = kp_seconds(CLOCK_PROCESS_CPUTIME_ID), t;

	/* long enough between clock reads that the clock's system call is a
	 * small part of the time */
	while ((t = kp_seconds(CLOCK_PROCESS_CPUTIME_ID)) < start + seconds)
		kpshort_lib_leaf_kprof(100000);
	__asm__ volatile("" ::: "memory"); /* keep the call a call */
	return t - start;
}
