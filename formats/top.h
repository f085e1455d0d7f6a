/* kp_top: the terminal table of the top functions by self and by total
 * share (what kprof shows on a terminal instead of dumping XML). */
#ifndef KP_FORMATS_TOP_H
#define KP_FORMATS_TOP_H

#include <stddef.h>
#include <stdio.h>

#include "profile/folded.h"

/* Prints the top n functions of f by self and by total share. countname
 * names the counts ("samples", or the value's name, "cpu"; NULL:
 * "samples"); unit is NULL for counts, or what a count is ("us": the
 * value in microseconds), which the columns then say. When stacks end in
 * an off-CPU marker frame (profile/wait.h), the first line says their
 * share; a wait's self count goes to the innermost frame of the program
 * that waited (the call that blocked, not the kernel's way into the
 * scheduler), and the markers are listed in the total table (the time
 * spent waiting that way). Returns 0, or -EIO when
 * out fails. */
int kp_top_write(const struct kp_folded *f, FILE *out, size_t n, const char *countname,
		 const char *unit);

#endif
