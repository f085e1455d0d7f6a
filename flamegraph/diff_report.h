/* The outputs of `kprof diff` besides the flame graph: a text table for
 * people and JSON for bots (written with jansson), both listing the
 * functions whose self and total share changed most, with both shares,
 * the change in points, the test and the gate's verdict. The JSON schema
 * is in docs/diff.md. */
#ifndef KP_FLAMEGRAPH_DIFF_REPORT_H
#define KP_FLAMEGRAPH_DIFF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "flamegraph/diff.h"
#include "profile/profile.h"
#include "util/diag.h"

struct kp_diff_report {
	const char *file[2];		     /* BASE's and NEW's file names, as given */
	const struct kp_profile *profile[2]; /* for their metadata (may be NULL) */
	const char *value, *unit;	     /* what the shares are of: "samples", "count" */
	const char *counts;		     /* the value the test counts: "samples" */
	size_t top;			     /* functions a column lists; 0: all */
	bool gate;			     /* --fail-above was given */
	double fail_above;		     /* its points */
};

/* The table: for total and for self share, the top functions by the size
 * of their change, then the gate's verdict when there is one. Returns 0
 * or -EIO. */
int kp_diff_write_text(const struct kp_diff *df, const struct kp_diff_report *r, FILE *out);

/* The JSON document (docs/diff.md): the union of each column's top
 * functions and every regression, largest total change first. Names are
 * made valid UTF-8 (invalid bytes become U+FFFD). Returns 0 or a negative
 * errno (d set). */
int kp_diff_write_json(const struct kp_diff *df, const struct kp_diff_report *r, FILE *out,
		       struct kp_diag *d);

#endif
