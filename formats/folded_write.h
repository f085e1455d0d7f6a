/* kp_folded_write: the one writer of folded text, from a folded table
 * (profile/folded.h): `kprof -o x.folded`, `kprof report -f folded`, the
 * differential stacks of `kprof diff`, and `kprof collapse` (in
 * stackcollapse-perf.pl's order, KP_FOLDED_BY_STACK). */
#ifndef KP_FORMATS_FOLDED_WRITE_H
#define KP_FORMATS_FOLDED_WRITE_H

#include <stdio.h>

#include "profile/folded.h"

/* Writes one "a;b;c COUNT" line per stack ("a;b;c BEFORE AFTER" for the
 * stacks of a differential table that have a BEFORE), lines sorted
 * bytewise (as `LC_ALL=C sort`), so the same profile always prints the
 * same bytes. A leaf whose name ends in a blank and a number (and no kind
 * suffix) gets a ';' after it ("a;JIT code 12; 5"), so that the line reads
 * back as one stack and its counts, not as a differential line.
 * Returns 0 or a negative errno. */
int kp_folded_write(const struct kp_folded *f, FILE *out, unsigned flags);

#endif
