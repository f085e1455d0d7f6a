/* kp_folded: the folded table, stack of named frames -> count.
 *
 * This is the meeting point of everything: the recorder fills it from
 * symbolized location stacks, `kprof flamegraph` fills it from folded text,
 * and every writer (folded text, SVG, later .kprof, pprof, speedscope) reads
 * it. Frame names are interned in the table; a frame is (name, kind), and
 * the kind is what the _[k] / _[j] / _[i] suffixes encode in folded text. */
#ifndef KP_FLAMEGRAPH_FOLDED_H
#define KP_FLAMEGRAPH_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/diag.h"
#include "util/frame.h"

struct kp_folded;

struct kp_folded *kp_folded_new(void);
void kp_folded_free(struct kp_folded *f);

/* Adds count to the stack frames[0..n) (root first). Names are copied (made
 * safe for folded text: ';' becomes ':', control characters become '?').
 * Adding the same stack twice sums the counts. */
void kp_folded_add(struct kp_folded *f, const struct kp_frame *frames, size_t n, double count);

/* Options for reading folded text. */
struct kp_folded_read_opts {
	bool ignore_bad_lines; /* skip and count lines without a count instead of failing */
};

/* Reads folded text ("a;b;c 12" per line; CRLF and blank lines tolerated;
 * counts integer or decimal; _[k]/_[j]/_[i] suffixes become frame kinds).
 * name is used in messages ("FILE:LINE: ..."). Returns 0 or a negative errno
 * with the diag naming file and line. *bad_lines (may be NULL) is
 * incremented for each skipped line. */
int kp_folded_read(struct kp_folded *f, FILE *in, const char *name,
		   const struct kp_folded_read_opts *opts, uint64_t *bad_lines, struct kp_diag *d);

/* Flags for kp_folded_write. */
enum {
	KP_FOLDED_ANNOTATE_KERNEL = 1 << 0, /* append _[k] to kernel frames */
	KP_FOLDED_ANNOTATE_JIT = 1 << 1,    /* append _[j] to JIT frames */
	KP_FOLDED_ANNOTATE_INLINE = 1 << 2, /* append _[i] to inline frames */
	KP_FOLDED_ANNOTATE_ALL = 7,
};

/* Writes one "a;b;c COUNT" line per stack, lines sorted bytewise (as
 * `LC_ALL=C sort`), so the same profile always prints the same bytes.
 * Returns 0 or a negative errno. */
int kp_folded_write(const struct kp_folded *f, FILE *out, unsigned flags);

/* Read access for writers: stacks in unspecified order. */
size_t kp_folded_nstacks(const struct kp_folded *f);
/* Frames of stack i (root first), valid until the table changes or is freed. */
const struct kp_frame *kp_folded_stack(const struct kp_folded *f, size_t i, size_t *n,
				       double *count);
/* Sum of all counts. */
double kp_folded_total(const struct kp_folded *f);

#endif
