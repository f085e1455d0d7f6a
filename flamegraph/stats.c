#include "flamegraph/stats.h"

#include <math.h>
#include <stdlib.h>

#include "util/xalloc.h"

double kp_stats_normal_p(double z)
{
	/* erfc keeps its relative precision far into the tail, where 1 - erf
	 * would round to 0: p-values of 1e-300 stay ordered for Holm */
	return erfc(fabs(z) / sqrt(2.0));
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
