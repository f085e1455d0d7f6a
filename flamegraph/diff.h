/* kp_diff: what changed between two profiles, function by function, and
 * whether the change is more than sampling noise (`kprof diff`).
 *
 * A function is a frame name with its kind (user, kernel, JIT, inline),
 * as the flame graph and the top table show them; the root frame (the
 * comm) is not a function. For each function and each profile:
 *   self   the value of the samples whose innermost frame it is;
 *   total  the value of the samples it appears in (once a sample, even
 *          when it recurses);
 * as a share of the profile's total of that value, in percent. The change
 * is NEW's share minus BASE's, in percentage points.
 *
 * Significance is a two-proportion z-test (flamegraph/stats.h) on sample
 * counts, not on the shown value: a period in nanoseconds is a weight,
 * and a test on weights would take every nanosecond for an independent
 * observation. The p-values of each column (self, total) are adjusted
 * with Holm's method over the functions that column tests (those with a
 * count in either profile), so that the chance of any false "significant"
 * in a column is at most alpha however many functions there are. See
 * docs/diff.md. */
#ifndef KP_FLAMEGRAPH_DIFF_H
#define KP_FLAMEGRAPH_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "util/diag.h"
#include "util/frame.h"

struct kp_diff;

enum kp_diff_side { KP_DIFF_BASE, KP_DIFF_NEW };
enum kp_diff_column { KP_DIFF_SELF, KP_DIFF_TOTAL };

struct kp_diff_opts {
	/* per side (KP_DIFF_BASE, KP_DIFF_NEW): the value shares are of, and
	 * the value that counts samples for the test (often the same) */
	size_t value[2];
	size_t count[2];
	double alpha;	   /* 0 < alpha < 1; 0 means 0.01 */
	double dispersion; /* quasi-binomial: the variance of a count is this
			    * times the binomial one (clustered samples);
			    * z is divided by its square root; 0 means 1 */
};

/* One column (self or total) of one function. */
struct kp_diff_change {
	kp_count value[2];  /* the shown value, exact, in its profile's units */
	double count[2];    /* the sample counts the test uses */
	double share[2];    /* percent of each profile's total value */
	double change;	    /* share[NEW] - share[BASE], percentage points */
	double z, p, p_adj; /* the test; p_adj after Holm (1 when not tested) */
	bool tested;	    /* a count in either profile: part of the column's family */
	bool significant;   /* p_adj <= alpha */
};

struct kp_diff_function {
	const char *name; /* owned by the diff */
	size_t name_len;
	enum kp_frame_kind kind;
	struct kp_diff_change col[2]; /* KP_DIFF_SELF, KP_DIFF_TOTAL */
};

/* Compares base with new. Returns a new diff (the caller frees it; it
 * does not keep the profiles), or NULL with d set: -EINVAL for a value
 * index a profile does not have, -ENODATA when a profile's total of a
 * value or count is 0. */
struct kp_diff *kp_diff_new(const struct kp_profile *base, const struct kp_profile *new_,
			    const struct kp_diff_opts *o, struct kp_diag *d);
void kp_diff_free(struct kp_diff *df);

double kp_diff_alpha(const struct kp_diff *df);
double kp_diff_dispersion(const struct kp_diff *df);
/* The total of the shown value (exact, with its decimals) and of the
 * counts, per side. */
kp_count kp_diff_total(const struct kp_diff *df, enum kp_diff_side side, unsigned *decimals);
double kp_diff_total_count(const struct kp_diff *df, enum kp_diff_side side);
/* How many functions the column tested (the size of Holm's family). */
size_t kp_diff_ntested(const struct kp_diff *df, enum kp_diff_column col);

size_t kp_diff_nfunctions(const struct kp_diff *df);
const struct kp_diff_function *kp_diff_function(const struct kp_diff *df, size_t i);
/* Function indexes by the size of their change in column col, largest
 * |change| first (ties: the smaller p, then the name). kp_diff_nfunctions
 * entries, owned by the diff. */
const uint32_t *kp_diff_order(const struct kp_diff *df, enum kp_diff_column col);

/* The regressions a CI gate fails on: functions whose total share grew by
 * more than points AND whose growth is significant, largest growth first.
 * Returns how many; *out (may be NULL) gets a new array of their indexes
 * that the caller frees. */
size_t kp_diff_regressions(const struct kp_diff *df, double points, uint32_t **out);

/* "user", "kernel", "jit", "inline". */
const char *kp_diff_kind_name(enum kp_frame_kind kind);

#endif
