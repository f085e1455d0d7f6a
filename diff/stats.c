#include "diff/stats.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sf_psi.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* Beyond this many degrees of freedom Student's t is the normal to 12
 * digits (GSL's inverse fails far beyond it). */
#define T_NORMAL_DF 1e12

double kp_stats_normal_p(double z)
{
	/* erfc keeps its relative precision far into the tail, where 1 - erf
	 * would round to 0: p-values of 1e-300 stay ordered for Holm */
	return erfc(fabs(z) / sqrt(2.0));
}

double kp_stats_t_p(double t, double df)
{
	if (isnan(t) || !(df > 0))
		return 1;
	if (df > T_NORMAL_DF)
		return kp_stats_normal_p(t);
	/* the upper tail of |t|, twice: Q keeps its precision far out */
	return 2 * gsl_cdf_tdist_Q(fabs(t), df);
}

double kp_stats_t_quantile(double p, double df)
{
	if (!(p > 0 && p < 1) || !(df > 0))
		return nan("");
	if (df > T_NORMAL_DF)
		return gsl_cdf_ugaussian_Qinv(p / 2);
	return gsl_cdf_tdist_Qinv(p / 2, df);
}

/* GSL's special functions through their _e forms, which report domain
 * errors instead of calling GSL's error handler (which aborts). */
static double digamma(double x)
{
	gsl_sf_result r;

	return gsl_sf_psi_e(x, &r) == 0 ? r.val : nan("");
}

static double trigamma(double x)
{
	gsl_sf_result r;

	return gsl_sf_psi_1_e(x, &r) == 0 ? r.val : nan("");
}

static double tetragamma(double x)
{
	gsl_sf_result r;

	return gsl_sf_psi_n_e(2, x, &r) == 0 ? r.val : nan("");
}

/* The y > 0 with trigamma(y) = x: limma's trigammaInverse, Newton's
 * method from 0.5 + 1/x (trigamma is convex and decreasing). */
static double trigamma_inverse(double x)
{
	double y;

	if (x > 1e7)
		return 1 / sqrt(x);
	if (x < 1e-6)
		return 1 / x;
	y = 0.5 + 1 / x;
	for (int iter = 0; iter < 50; iter++) {
		double tri = trigamma(y), dif = tri * (1 - tri / x) / tetragamma(y);

		if (!isfinite(dif))
			break;
		y += dif;
		if (-dif / y < 1e-8)
			break;
	}
	return y;
}

/* The n-th smallest of v[0..k) (n < k), v reordered so that those before
 * it are at most it (Hoare's selection). */
static double select_nth(double *v, size_t k, size_t n)
{
	size_t lo = 0, hi = k - 1;

	while (lo < hi) {
		double pivot = v[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;

		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				double t = v[i];

				v[i] = v[j];
				v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (n <= j)
			hi = j;
		else if (n >= i)
			lo = i;
		else
			break;
	}
	return v[n];
}

#define DF_CACHE 8
struct df_terms {
	double d, shift, tri; /* shift: log(d / 2) - digamma(d / 2) */
};

struct kp_stats_prior kp_stats_variance_prior(const double *s2, const double *df, size_t n)
{
	struct df_terms cache[DF_CACHE];
	struct kp_stats_prior prior = {1, 0};
	double *x = kp_xmalloc((n ? n : 1) * sizeof(*x)), *d = kp_xmalloc((n ? n : 1) * sizeof(*d));
	double median, emean = 0, evar = 0, mean = 0, tri = 0;
	size_t k = 0;

	/* estimates on no degrees of freedom say nothing */
	for (size_t i = 0; i < n; i++)
		if (df[i] > 1e-15 && isfinite(df[i]) && isfinite(s2[i])) {
			x[k] = s2[i] > 0 ? s2[i] : 0;
			d[k++] = df[i];
		}
	if (k < 2) {
		if (k == 1)
			prior.var = x[0];
		goto out;
	}
	{
		double *sorted = kp_xmalloc(k * sizeof(*sorted));

		memcpy(sorted, x, k * sizeof(*x));
		median = select_nth(sorted, k, k / 2);
		if (k % 2 == 0) {
			/* the lower middle: the largest of those below the upper */
			double lo = sorted[0];

			for (size_t i = 1; i < k / 2; i++)
				lo = sorted[i] > lo ? sorted[i] : lo;
			median = (lo + median) / 2;
		}
		free(sorted);
	}
	if (median == 0)
		median = 1;
	/* log(s2) of a scaled chi-square on d: its mean is log(var) +
	 * digamma(d/2) - log(d/2), its variance trigamma(d/2) plus the
	 * prior's own, trigamma(d0/2) */
	for (size_t i = 0, nc = 0; i < k; i++) {
		/* the degrees of freedom take a few values (the runs less one
		 * of each side): each one's terms computed once (the gate's
		 * permutation test fits a prior per relabelling) */
		size_t c = 0;

		while (c < nc && cache[c].d != d[i])
			c++;
		if (c == nc && nc < DF_CACHE)
			cache[nc++] = (struct df_terms){d[i], log(d[i] / 2) - digamma(d[i] / 2),
							trigamma(d[i] / 2)};
		if (x[i] < 1e-5 * median)
			x[i] = 1e-5 * median;
		mean += x[i];
		if (c < nc) {
			x[i] = log(x[i]) + cache[c].shift;
			tri += cache[c].tri;
		} else {
			x[i] = log(x[i]) - digamma(d[i] / 2) + log(d[i] / 2);
			tri += trigamma(d[i] / 2);
		}
		emean += x[i];
	}
	mean /= (double)k;
	emean /= (double)k;
	for (size_t i = 0; i < k; i++)
		evar += (x[i] - emean) * (x[i] - emean);
	evar = evar / (double)(k - 1) - tri / (double)k;
	if (evar > 0) {
		prior.df = 2 * trigamma_inverse(evar);
		prior.var = exp(emean + digamma(prior.df / 2) - log(prior.df / 2));
	} else {
		prior.df = HUGE_VAL;
		prior.var = mean;
	}
out:
	free(x);
	free(d);
	return prior;
}

double kp_stats_moderate(struct kp_stats_prior prior, double s2, double df)
{
	if (isinf(prior.df))
		return prior.var;
	if (!(prior.df + df > 0))
		return s2;
	return (prior.df * prior.var + df * s2) / (prior.df + df);
}

struct kp_ztest kp_stats_two_proportions(double x1, double n1, double x2, double n2)
{
	struct kp_ztest t = {0, 1};
	double q, se;

	if (!(n1 > 0 && n2 > 0 && x1 >= 0 && x2 >= 0 && x1 <= n1 && x2 <= n2))
		return t;
	q = (x1 + x2) / (n1 + n2);
	se = sqrt(q * (1 - q) * (1 / n1 + 1 / n2));
	if (!(se > 0))
		return t;
	t.z = (x2 / n2 - x1 / n1) / se;
	t.p = kp_stats_normal_p(t.z);
	return t;
}

struct ranked {
	double p;
	size_t i;
};

static int by_p(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;

	if (a->p != b->p)
		return a->p < b->p ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

void kp_stats_holm(const double *p, size_t m, double *adj)
{
	struct ranked *r;
	double running = 0;

	if (!m)
		return;
	r = kp_xmalloc(m * sizeof(*r));
	for (size_t i = 0; i < m; i++)
		r[i] = (struct ranked){isnan(p[i]) ? 1 : p[i], i};
	qsort(r, m, sizeof(*r), by_p);
	for (size_t k = 0; k < m; k++) {
		double a = (double)(m - k) * r[k].p;

		/* step-down: an adjusted p-value is never below the one before */
		if (a > 1)
			a = 1;
		if (a > running)
			running = a;
		adj[r[k].i] = running;
	}
	free(r);
}
