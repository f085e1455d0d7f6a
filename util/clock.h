/* The monotonic clock in seconds, for measuring how long a step took
 * (never for a timestamp in a file: those are CLOCK_REALTIME's). */
#ifndef KP_UTIL_CLOCK_H
#define KP_UTIL_CLOCK_H

#include <time.h>

static inline double kp_clock_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
