/* A CPU-bound workload whose stack is known:
 *   main -> spin_outer -> spin_middle -> spin_leaf
 * Each thread spins for SECONDS of its own CPU time (not wall time), so the
 * number of samples does not depend on how busy the machine is.
 * Usage: spin SECONDS [THREADS] */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "workload.h"

static volatile unsigned long sink;

/* The volatile local gives spin_leaf a stack frame: GCC builds frameless
 * leaf functions without a frame pointer even with
 * -mno-omit-leaf-frame-pointer, and a frame-pointer walk from such a leaf
 * skips its caller (as with perf). */
__attribute__((noinline, noclone)) static void spin_leaf(unsigned long n)
{
	volatile unsigned long acc = 0;

	for (unsigned long i = 0; i < n; i++)
		acc += i * i;
	sink += acc;
}

__attribute__((noinline, noclone)) static void spin_middle(unsigned long n)
{
	spin_leaf(n);
	__asm__ volatile("" ::: "memory"); /* keep the call a call, not a tail jump */
}

__attribute__((noinline, noclone)) static void spin_outer(double seconds)
{
	double end = kp_seconds(CLOCK_THREAD_CPUTIME_ID) + seconds;

	while (kp_seconds(CLOCK_THREAD_CPUTIME_ID) < end)
		spin_middle(200000);
	__asm__ volatile("" ::: "memory");
}

static void *thread_main(void *arg)
{
	spin_outer(*(double *)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	int nthreads = argc > 2 ? atoi(argv[2]) : 0;
	pthread_t t[64];

	if (nthreads > 64)
		nthreads = 64;
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, thread_main, &seconds);
	spin_outer(seconds);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
