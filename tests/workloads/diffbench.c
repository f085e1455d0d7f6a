/* A benchmark for kprof diff: rounds of fixed work in four functions of
 * equal cost,
 *   main -> db_round_kprof -> db_parse_kprof, db_hash_kprof, db_sort_kprof,
 *                              db_render_kprof
 * repeated until SECONDS of the process's CPU time have passed (so a busy
 * machine changes how long it takes, not how many samples it gives). Each
 * function does the same arithmetic, ITERATIONS steps a call; NAME=PERCENT
 * makes one of them do PERCENT% more (hash=60: db_hash_kprof 60% slower),
 * as a change to the code would. Each takes a quarter of the time, or with
 * hash=60, db_hash_kprof 1.6 / 4.6 = 34.8% and the others 21.7%.
 * steps=N sets ITERATIONS; random makes each call's work uniform in 0 to
 * twice that (the same mean), drawn afresh each run: with long calls,
 * consecutive samples land in the same call of random length, the
 * clustering docs/diff.md measures.
 * Usage: diffbench SECONDS [steps=N] [random] [parse|hash|sort|render=PERCENT] */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload.h"

#define ITERATIONS 20000

static volatile unsigned long sink;

/* The same loop in each function, each with its own increment so that the
 * compiler does not fold four identical functions into one (a volatile
 * local gives each a frame of its own: see spin.c). */
#define WORK(name, inc)                                                          \
	__attribute__((noinline, noclone)) static void name(unsigned long steps) \
	{                                                                        \
		volatile unsigned long acc = steps;                              \
		for (unsigned long i = 0; i < steps; i++)                        \
			acc = acc * 6364136223846793005ULL + (inc);              \
		sink += acc;                                                     \
	}
WORK(db_parse_kprof, 1442695040888963407ULL)
WORK(db_hash_kprof, 1442695040888963409ULL)
WORK(db_sort_kprof, 1442695040888963411ULL)
WORK(db_render_kprof, 1442695040888963413ULL)

static const char *const names[4] = {"parse", "hash", "sort", "render"};
static unsigned long steps[4], percent[4];
static bool random_work;
static unsigned long long rng;

/* The steps of one call: steps[k], or with random_work uniform in
 * [0, 2 * steps[k]] (xorshift64: any sequence will do). */
static unsigned long steps_of(int k)
{
	if (!random_work)
		return steps[k];
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned long)(rng % (2 * steps[k] + 1));
}

__attribute__((noinline, noclone)) static void db_round_kprof(void)
{
	db_parse_kprof(steps_of(0));
	db_hash_kprof(steps_of(1));
	db_sort_kprof(steps_of(2));
	db_render_kprof(steps_of(3));
	__asm__ volatile("" ::: "memory"); /* keep the last call a call */
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2, end;
	unsigned long iterations = ITERATIONS;

	for (int a = 2; a < argc; a++) {
		const char *eq = strchr(argv[a], '=');
		int k;

		if (strncmp(argv[a], "steps=", 6) == 0) {
			iterations = strtoul(argv[a] + 6, NULL, 10);
			continue;
		}
		if (strcmp(argv[a], "random") == 0) {
			random_work = true;
			continue;
		}
		for (k = 0; k < 4; k++)
			if (eq && strlen(names[k]) == (size_t)(eq - argv[a]) &&
			    strncmp(argv[a], names[k], (size_t)(eq - argv[a])) == 0)
				break;
		if (k == 4) {
			fprintf(stderr, "usage: diffbench SECONDS [steps=N] [random] "
					"[parse|hash|sort|render=PERCENT]\n");
			return 2;
		}
		percent[k] = strtoul(eq + 1, NULL, 10);
	}
	for (int k = 0; k < 4; k++)
		steps[k] = iterations + iterations * percent[k] / 100;
	rng = (unsigned long long)(kp_seconds(CLOCK_REALTIME) * 1e9) | 1;
	end = kp_seconds(CLOCK_PROCESS_CPUTIME_ID) + seconds;
	while (kp_seconds(CLOCK_PROCESS_CPUTIME_ID) < end)
		db_round_kprof();
	return 0;
}
