/* Fixed work on every CPU, for measuring what profiling costs the profiled
 * program (scripts/bench-unwind): THREADS threads each run ROUNDS rounds of
 *   worker -> bw_level3_kprof -> bw_level2_kprof -> bw_level1_kprof ->
 *   bw_leaf_kprof
 * with a little stack in use at each level, and the program prints the
 * wall-clock seconds the work took. Usage: busywork ROUNDS [THREADS] */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

static volatile unsigned long sink;

__attribute__((noinline, noclone)) static unsigned long bw_leaf_kprof(unsigned long x)
{
	for (int i = 0; i < 2000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

#define LEVEL(name, callee)                                                           \
	__attribute__((noinline, noclone)) static unsigned long name(unsigned long x) \
	{                                                                             \
		volatile unsigned long buf[8];                                        \
		for (int i = 0; i < 8; i++)                                           \
			buf[i] = x + (unsigned long)i;                                \
		x = callee(buf[x & 7]) ^ callee(buf[(x >> 3) & 7]);                   \
		return x;                                                             \
	}
LEVEL(bw_level1_kprof, bw_leaf_kprof)
LEVEL(bw_level2_kprof, bw_level1_kprof)
LEVEL(bw_level3_kprof, bw_level2_kprof)

static long rounds;

static void *worker(void *arg)
{
	unsigned long x = (unsigned long)(uintptr_t)arg;

	for (long r = 0; r < rounds; r++)
		x = bw_level3_kprof(x);
	sink += x;
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t t[256];
	double start;

	rounds = argc > 1 ? atol(argv[1]) : 1000;
	if (n < 1)
		n = 1;
	if (n > 256)
		n = 256;
	start = kp_seconds(CLOCK_MONOTONIC);
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%.3f\n", kp_seconds(CLOCK_MONOTONIC) - start);
	return 0;
}
