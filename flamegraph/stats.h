/* kp_stats: the statistics behind `kprof diff`'s "significant": a
 * two-proportion z-test on sample counts, and Holm's step-down correction
 * for testing many functions at once. See docs/diff.md for what they
 * assume. */
#ifndef KP_FLAMEGRAPH_STATS_H
#define KP_FLAMEGRAPH_STATS_H

#include <stddef.h>

struct kp_ztest {
	double z; /* > 0 when the second proportion is the larger */
	double p; /* two-sided p-value */
};

/* The pooled two-proportion z-test of x1 of n1 against x2 of n2 (counts,
 * 0 <= x <= n, n > 0): z = (x2/n2 - x1/n1) / sqrt(q (1 - q) (1/n1 + 1/n2))
 * with q = (x1 + x2) / (n1 + n2). When q is 0 or 1 the proportions are
 * equal and cannot differ: z 0, p 1. Arguments out of range give z 0, p 1. */
struct kp_ztest kp_stats_two_proportions(double x1, double n1, double x2, double n2);

/* The two-sided p-value of a standard normal deviate: P(|Z| >= |z|). */
double kp_stats_normal_p(double z);

/* Holm's step-down adjustment of the p-values p[0..m) into adj[0..m) (may
 * be p itself): with the p-values sorted, p(1) <= ... <= p(m), the k-th
 * smallest becomes max over j <= k of min(1, (m - j + 1) p(j)). Rejecting
 * every hypothesis whose adjusted p-value is at most alpha keeps the
 * probability of any false rejection at most alpha, whatever the
 * dependence between the tests. */
void kp_stats_holm(const double *p, size_t m, double *adj);

#endif
