/* A comparator called back from glibc's qsort (Debian's libc is built
 * without frame pointers, so a frame-pointer walk from the comparator
 * loses everything above libc):
 *   main -> sort_outer_kprof -> qsort (libc) -> ... -> cmp_kprof
 * The comparator is made slow so that nearly every sample is in it.
 * Usage: qsortcb SECONDS (CPU time) */
#include <stdlib.h>
#include <time.h>

#include "workload.h"

#define N 4096

static volatile unsigned long sink;
static unsigned keys[N];

__attribute__((noinline, noclone)) static int cmp_kprof(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	unsigned long h = x;

	/* burn some time on each comparison, in registers */
	for (int i = 0; i < 200; i++) {
		h = h * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(h));
	}
	sink += h & 1;
	return x < y ? -1 : x > y;
}

__attribute__((noinline, noclone)) static void sort_outer_kprof(double seconds)
{
	double end = kp_seconds(CLOCK_PROCESS_CPUTIME_ID) + seconds;
	unsigned seed = 1;

	while (kp_seconds(CLOCK_PROCESS_CPUTIME_ID) < end) {
		for (int i = 0; i < N; i++) {
			seed = seed * 1103515245u + 12345u;
			keys[i] = seed >> 8;
		}
		qsort(keys, N, sizeof(keys[0]), cmp_kprof);
	}
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	sort_outer_kprof(argc > 1 ? atof(argv[1]) : 1.0);
	return 0;
}
