/* A program with phases in time: phase_one_kprof for 2 units of CPU time,
 * phase_two_kprof for 1, phase_one_kprof again for 1; a unit is SCALE
 * seconds. Each phase's start and end (Unix seconds, CLOCK_REALTIME) go to
 * FILE, a line "NAME START END" each, so that a test slices by them.
 * With "sleep", each phase sleeps its time instead (one nanosleep: a wait
 * of the whole phase, for --off-cpu and --wall).
 * Stack: main -> phase_one_kprof | phase_two_kprof -> phase_leaf_kprof
 *                                                   | nanosleep (sleep)
 * Usage: phases SCALE FILE [sleep] */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload.h"

static volatile unsigned long sink;
static bool sleeping;

/* seconds in one sleep (again where a signal cut it short) */
static void sleep_for(double seconds)
{
	struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};

	while (nanosleep(&ts, &ts) != 0)
		;
}

__attribute__((noinline, noclone)) static void phase_leaf_kprof(unsigned long n)
{
	volatile unsigned long acc = 0;

	for (unsigned long i = 0; i < n; i++)
		acc += i ^ 5;
	sink += acc;
}

__attribute__((noinline, noclone)) static void phase_one_kprof(double seconds)
{
	if (sleeping)
		sleep_for(seconds);
	else
		KP_SPIN_FOR(seconds, phase_leaf_kprof(20000));
	__asm__ volatile("" ::: "memory"); /* keep the call a call */
}

/* its own loop count: GCC's -fipa-icf folds identical functions into one */
__attribute__((noinline, noclone)) static void phase_two_kprof(double seconds)
{
	if (sleeping)
		sleep_for(seconds + 1e-9); /* not folded into phase_one_kprof */
	else
		KP_SPIN_FOR(seconds, phase_leaf_kprof(30000));
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	double scale = argc > 1 ? atof(argv[1]) : 1.0, t;
	FILE *out = argc > 2 ? fopen(argv[2], "w") : stdout;

	if (!out)
		return 1;
	sleeping = argc > 3 && strcmp(argv[3], "sleep") == 0;
	t = kp_seconds(CLOCK_REALTIME);
	phase_one_kprof(2 * scale);
	fprintf(out, "one %.6f %.6f\n", t, kp_seconds(CLOCK_REALTIME));
	t = kp_seconds(CLOCK_REALTIME);
	phase_two_kprof(scale);
	fprintf(out, "two %.6f %.6f\n", t, kp_seconds(CLOCK_REALTIME));
	t = kp_seconds(CLOCK_REALTIME);
	phase_one_kprof(scale);
	fprintf(out, "one %.6f %.6f\n", t, kp_seconds(CLOCK_REALTIME));
	return fclose(out) ? 1 : 0;
}
