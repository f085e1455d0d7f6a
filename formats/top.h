/* kp_top: the terminal table of the top functions by self and by total
 * share (what kprof shows on a terminal instead of dumping XML). */
#ifndef KP_FORMATS_TOP_H
#define KP_FORMATS_TOP_H

#include <stddef.h>
#include <stdio.h>

#include "profile/folded.h"

/* Prints the top n functions of f by self and by total share. Returns 0,
 * or -EIO when out fails. */
int kp_top_write(const struct kp_folded *f, FILE *out, size_t n, const char *countname);

#endif
