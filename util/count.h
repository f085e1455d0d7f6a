/* kp_count: exact sample counts and weights.
 *
 * A count is an unsigned 128-bit integer in units of 10^-decimals, where
 * the number of decimals belongs to the table that holds the counts
 * (folded text may say "0.25"; recorded profiles and perf script periods
 * are integers, decimals 0). Sums never round: 2^64 samples of the largest
 * 64-bit period still fit, and what is read prints back digit for digit.
 * Doubles appear only where a picture needs a position or a share. */
#ifndef KP_UTIL_COUNT_H
#define KP_UTIL_COUNT_H

#include <stdbool.h>
#include <stddef.h>

typedef unsigned __int128 kp_count;

/* Most decimals a count may have (10^19 still leaves 2^64 of range). */
#define KP_COUNT_MAX_DECIMALS 19
/* A buffer for kp_count_format: 39 digits, a point, a NUL, and margin. */
#define KP_COUNT_BUF 48

/* *acc += v, unless that overflows: then false and *acc unchanged. */
static inline bool kp_count_add(kp_count *acc, kp_count v)
{
	if (*acc + v < *acc)
		return false;
	*acc += v;
	return true;
}

/* *v *= 10^digits, unless that overflows: then false and *v unchanged. */
bool kp_count_shift(kp_count *v, unsigned digits);

/* Parses s[0..len): digits, optionally a '.' and more digits (flamegraph.pl's
 * /\d+(\.\d*)?/). Sets *v and *decimals (digits after the point, trailing
 * zeros dropped). Returns 0, -EINVAL for anything else, -ERANGE when the
 * value does not fit or has more than KP_COUNT_MAX_DECIMALS decimals that
 * are not zero. */
int kp_count_parse(const char *s, size_t len, kp_count *v, unsigned *decimals);

/* Writes v (in units of 10^-decimals) in the shortest exact form: "12",
 * "0.25" (never an exponent, no trailing zeros). buf has at least
 * KP_COUNT_BUF bytes. Returns the length. */
size_t kp_count_format(kp_count v, unsigned decimals, char *buf);

/* v as the nearest double (for positions and shares). */
double kp_count_double(kp_count v, unsigned decimals);

#endif
