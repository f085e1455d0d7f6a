/* The shared library of the short-lived workload: all of its time is spent
 * here, in kpshort_lib_kprof -> kpshort_lib_leaf_kprof (a static function:
 * in the library's .symtab, not its .dynsym). */
#include <time.h>

double kpshort_lib_kprof(double seconds);

static volatile unsigned long sink;

/* CPU time, not wall time: on a loaded machine each process still spends
 * its 20 ms here, so the share of its samples in the library does not
 * depend on the load. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

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
	double start = cpu_now(), t;

	/* long enough between clock reads that the clock's system call is a
	 * small part of the time */
	while ((t = cpu_now()) < start + seconds)
		kpshort_lib_leaf_kprof(100000);
	__asm__ volatile("" ::: "memory"); /* keep the call a call */
	return t - start;
}
