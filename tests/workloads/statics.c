/* Static (not exported) hot functions calling each other, for
 * tests/e2e/symbols_stripped.sh: a stripped copy names them only by where
 * its unwind table says each starts. Shares of the CPU time, by the
 * thread's CPU clock (KP_SPIN_FOR), whatever the machine's load:
 *   main -> st_run -> st_parse -> st_hash   a half
 *   main -> st_run -> st_parse              a quarter (st_parse's own loop)
 *   main -> st_run -> st_eval               a quarter
 * Usage: statics SECONDS */
#include <stdlib.h>
#include <time.h>

#include "workload.h"

#define NI __attribute__((noinline, noclone))

static volatile unsigned long sink;

NI static unsigned long st_hash(unsigned long n)
{
	volatile unsigned long acc = 0;

	for (unsigned long i = 0; i < n; i++)
		acc += i * 0x9e3779b97f4a7c15ul;
	return acc;
}

NI static void st_parse(int hash)
{
	volatile unsigned long acc = 0;

	if (hash) {
		sink += st_hash(200000);
	} else {
		for (unsigned long i = 0; i < 200000; i++)
			acc += i ^ (i >> 3);
		sink += acc;
	}
	__asm__ volatile("" ::: "memory"); /* keep the call a call, not a tail jump */
}

NI static void st_eval(unsigned long n)
{
	volatile unsigned long acc = 1;

	for (unsigned long i = 0; i < n; i++)
		acc = acc * 3 + i;
	sink += acc;
}

NI static void st_run(double seconds)
{
	double end = kp_seconds(CLOCK_THREAD_CPUTIME_ID) + seconds;

	while (kp_seconds(CLOCK_THREAD_CPUTIME_ID) < end) {
		KP_SPIN_FOR(0.010, st_parse(1));
		KP_SPIN_FOR(0.005, st_parse(0));
		KP_SPIN_FOR(0.005, st_eval(200000));
	}
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	st_run(argc > 1 ? atof(argv[1]) : 1.0);
	return 0;
}
