/* kp_stats: the statistics behind `kprof diff`'s "significant": a
 * two-proportion z-test on the sample counts of one run a side, a t-test
 * of the change in share against a quasi-binomial dispersion measured
 * from several runs a side (moderated across functions by an empirical
 * Bayes prior), and Holm's step-down correction for testing many
 * functions at once. Distributions and special functions come from GSL.
 * See docs/diff.md for the model and what it assumes. */
#ifndef KP_DIFF_STATS_H
#define KP_DIFF_STATS_H

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

/* The two-sided p-value of Student's t on df degrees of freedom,
 * P(|T| >= |t|); df INFINITY (or above 1e7) is the normal. NaN t or df
 * <= 0 give 1. */
double kp_stats_t_p(double t, double df);

/* The |t| whose two-sided p-value is p (0 < p < 1) on df degrees of
 * freedom (INFINITY: the normal). */
double kp_stats_t_quantile(double p, double df);

/* An empirical Bayes prior for the variances of many tests (limma's
 * fitFDist without covariate, Smyth 2004): the variance estimates s2[i]
 * (>= 0), each on df[i] degrees of freedom (those on none are left out),
 * taken as scaled chi-squares around a common scaled inverse chi-square
 * prior with scale var on df degrees of freedom. df is INFINITY when the
 * estimates vary no more than their own degrees of freedom explain (then
 * var is their mean), 0 when there are fewer than two estimates (var is
 * the one, or 1). Zeros are moved to 1e-5 times the median (and the
 * median, if it is 0, to 1), as limma does. */
struct kp_stats_prior {
	double var, df;
};
struct kp_stats_prior kp_stats_variance_prior(const double *s2, const double *df, size_t n);

/* The posterior variance of an estimate s2 on df degrees of freedom under
 * the prior: (prior.df prior.var + df s2) / (prior.df + df), the prior's
 * var when its df is INFINITY. */
double kp_stats_moderate(struct kp_stats_prior prior, double s2, double df);

/* Holm's step-down adjustment of the p-values p[0..m) into adj[0..m) (may
 * be p itself): with the p-values sorted, p(1) <= ... <= p(m), the k-th
 * smallest becomes max over j <= k of min(1, (m - j + 1) p(j)). Rejecting
 * every hypothesis whose adjusted p-value is at most alpha keeps the
 * probability of any false rejection at most alpha, whatever the
 * dependence between the tests. */
void kp_stats_holm(const double *p, size_t m, double *adj);

#endif
