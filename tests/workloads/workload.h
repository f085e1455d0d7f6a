/* Helpers shared by the workloads (each .c file here is a program of its
 * own, built with and without frame pointers). */
#ifndef KP_WORKLOAD_H
#define KP_WORKLOAD_H

#include <time.h>

/* Seconds on a clock: CLOCK_MONOTONIC for wall time, CLOCK_THREAD_CPUTIME_ID
 * or CLOCK_PROCESS_CPUTIME_ID for CPU time (so that a loaded machine does not
 * change how many samples a workload gives). */
static inline double kp_seconds(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs the statement CALL again and again until SLICE seconds of the
 * calling thread's CPU time have passed. Functions given slices in turn get
 * those shares of the thread's CPU time, and so of its cpu-clock samples,
 * whatever one call costs on this CPU (a loop's cost varies several times
 * over between machines and builds) and however busy the machine is. A
 * macro, not a function: an inlined helper would be an inline frame between
 * the caller and the function it calls. */
#define KP_SPIN_FOR(slice, call)                                                  \
	do {                                                                      \
		double kp_until_ = kp_seconds(CLOCK_THREAD_CPUTIME_ID) + (slice); \
		do {                                                              \
			call;                                                     \
		} while (kp_seconds(CLOCK_THREAD_CPUTIME_ID) < kp_until_);        \
	} while (0)

#endif
