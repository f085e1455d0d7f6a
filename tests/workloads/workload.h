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

#endif
