/* kp_diff's statistics: each function's dispersion measured from the runs
 * and moderated toward the prior of all (diff/stats.h), the share and CPU
 * time tests, Holm's correction, and the gate's permutation test and
 * detectability. */
#include "diff/diffP.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* The sides' total counts n and runs k: the runs' own, or a relabelling's
 * (the gate's permutation test). */
struct sides {
	double n[2], k[2];
};

static struct sides observed_sides(const struct kp_diff *df)
{
	return (struct sides){{df->count_total[0], df->count_total[1]},
			      {(double)df->runs[0], (double)df->runs[1]}};
}

/* The quasi-binomial dispersion of one function's column measured from
 * the runs: Pearson's chi-square over the runs of both sides, each side
 * around its own pooled share, over its residual degrees of freedom
 * (*dof): the runs less one of each side where the share is neither 0 nor
 * 1 (a side where the function is in no sample, or in all, says nothing
 * of how its share varies). Sides sd. */
static double dispersion_at(const struct sides *sd, const double count[2], const double sq[2],
			    double *dof)
{
	double chi2 = 0;

	*dof = 0;
	for (int side = 0; side < 2; side++) {
		double x = count[side], n = sd->n[side], pi = x / n;

		/* sum (x_i - n_i pi)^2 / (n_i pi (1 - pi)), expanded */
		if (pi > 0 && pi < 1) {
			chi2 += fmax(0, sq[side] - x * x / n) / (pi * (1 - pi));
			*dof += sd->k[side] - 1;
		}
	}
	return *dof > 0 ? chi2 / *dof : 0;
}

double kp_diff_stats_measured_dispersion(const struct kp_diff *df, const double count[2],
					 const double sq[2], double *dof)
{
	struct sides sd = observed_sides(df);

	return dispersion_at(&sd, count, sq, dof);
}

/* The quasi-Poisson dispersion of a function's CPU time a run: with t the
 * nanoseconds of each run (sums t[side], tsq[side] of t and t^2), the
 * variance of t is taken to be phi times its side's mean mu; phi is
 * sum (t - mu_side)^2 / mu_side over the runs of both sides, over the
 * runs less one of each side where mu is not 0 (*dof). */
static double time_dispersion_at(const struct sides *sd, const double t[2], const double tsq[2],
				 double *dof)
{
	double chi2 = 0;

	*dof = 0;
	for (int side = 0; side < 2; side++) {
		double k = sd->k[side], mu = t[side] / k;

		if (mu > 0) {
			chi2 += fmax(0, tsq[side] - t[side] * t[side] / k) / mu;
			*dof += k - 1;
		}
	}
	return *dof > 0 ? chi2 / *dof : 0;
}

double kp_diff_stats_time_dispersion(const struct kp_diff *df, const double t[2],
				     const double tsq[2], double *dof)
{
	struct sides sd = observed_sides(df);

	return time_dispersion_at(&sd, t, tsq, dof);
}

/* The dispersion a function's test takes, and its degrees of freedom:
 * its own moderated toward the prior (the posterior of limma's moderated
 * t, on the prior's degrees of freedom and its own), but never below its
 * own: the prior lends steadiness to a function whose few runs happen to
 * look too steady; it must not hide one whose share follows the
 * neighbours more than the others'. The prior's alone when the runs say
 * nothing of the function; the binomial when nothing does. */
void kp_diff_stats_take_dispersion(struct kp_stats_prior prior, double phi, double dof,
				   double floor, double *disp, double *tdf)
{
	double post = kp_stats_moderate(prior, phi, dof);

	if (dof > 0 || prior.df > 0) {
		*disp = phi > post ? phi : post;
		*tdf = dof + prior.df;
	} else {
		*disp = 1;
		*tdf = HUGE_VAL;
	}
	if (*disp < floor)
		*disp = floor;
}

/* The test of a change of share between counts[side] of the sides'
 * total counts under the dispersion and degrees of freedom in ch: its
 * standard error (points) and t (z). */
static void share_test_at(const struct sides *sd, const double count[2], struct kp_diff_change *ch)
{
	const double *n = sd->n;
	double q = (count[0] + count[1]) / (n[0] + n[1]);
	double se = sqrt(ch->dispersion * q * (1 - q) * (1 / n[0] + 1 / n[1]));

	ch->se = 100 * se;
	ch->z = se > 0 ? (count[1] / n[1] - count[0] / n[0]) / se : 0;
	ch->p = ch->z ? kp_stats_t_p(ch->z, ch->df) : 1;
}

void kp_diff_stats_share_test(const struct kp_diff *df, const double count[2],
			      struct kp_diff_change *ch)
{
	struct sides sd = observed_sides(df);

	share_test_at(&sd, count, ch);
}

/* The shares, seconds, tests and Holm's adjustment of one column. */
void kp_diff_stats_finish_column(struct kp_diff *df, int col)
{
	size_t nf = df->nfns ? df->nfns : 1, m = 0;
	double *p = kp_xmalloc(nf * sizeof(*p)), *phi = kp_xmalloc(nf * sizeof(*phi));
	double *dof = kp_xmalloc(nf * sizeof(*dof));
	uint32_t *tested = kp_xmalloc(nf * sizeof(*tested));
	bool measured = kp_diff_measured(df), seconds = kp_diff_has_seconds(df);

	for (size_t i = 0; i < df->nfns; i++) {
		struct kp_diff_change *ch = &df->fns[i].col[col];
		const struct sums *s = &df->sums[i];

		for (int side = 0; side < 2; side++) {
			ch->value[side] = df->side[side][i].value[col];
			ch->count[side] = s->count[col][side];
			/* the ratio first: value <= total keeps it <= 1, so the
			 * share is <= 100 (100 * value, rounded, can pass 100 *
			 * total for counts past 2^53 / 100) */
			ch->share[side] = 100 * (kp_count_double(df->side[side][i].value[col], 0) /
						 kp_count_double(df->total[side], 0));
			ch->seconds[side] =
				seconds ? kp_count_double(df->side[side][i].cpu[col], 0) / 1e9 /
						  (double)df->runs[side]
					: nan("");
		}
		ch->change = ch->share[KP_DIFF_NEW] - ch->share[KP_DIFF_BASE];
		ch->p = ch->p_adj = 1;
		ch->tested = ch->count[KP_DIFF_BASE] > 0 || ch->count[KP_DIFF_NEW] > 0;
		if (ch->tested) {
			phi[m] = measured ? kp_diff_stats_measured_dispersion(df, s->count[col],
									      s->sq[col], &dof[m])
					  : 0;
			tested[m++] = (uint32_t)i;
		}
	}
	df->prior[col] =
		measured ? kp_stats_variance_prior(phi, dof, m)
			 : (struct kp_stats_prior){df->dispersion ? df->dispersion : 1, HUGE_VAL};
	for (size_t k = 0; k < m; k++) {
		struct kp_diff_change *ch = &df->fns[tested[k]].col[col];

		if (measured) {
			kp_diff_stats_take_dispersion(df->prior[col], phi[k], dof[k],
						      df->dispersion, &ch->dispersion, &ch->df);
		} else {
			ch->dispersion = df->prior[col].var;
			ch->df = HUGE_VAL;
		}
		kp_diff_stats_share_test(df, ch->count, ch);
		p[k] = ch->p;
	}
	kp_stats_holm(p, m, p);
	for (size_t k = 0; k < m; k++) {
		struct kp_diff_change *ch = &df->fns[tested[k]].col[col];

		ch->p_adj = p[k];
		ch->significant = p[k] <= df->alpha;
	}
	df->ntested[col] = m;
	free(p);
	free(phi);
	free(dof);
	free(tested);
}

/* The CPU time a run's test of one function (sums t, tsq of its runs'
 * nanoseconds a side) under the dispersion and df already in tm: the
 * difference of the sides' means against its standard error at the
 * pooled mean, sqrt(phi mu (1/k_BASE + 1/k_NEW)) (a score test: defined
 * when a side is 0), one-sided toward growth. */
static void time_test_at(const struct sides *sd, const double t[2], struct kp_diff_time *tm)
{
	double kb = sd->k[0], kn = sd->k[1];
	double pooled = (t[0] + t[1]) / (kb + kn);

	tm->mean[0] = t[0] / kb;
	tm->mean[1] = t[1] / kn;
	tm->growth =
		tm->mean[0] > 0 ? tm->mean[1] / tm->mean[0] - 1 : (tm->mean[1] > 0 ? HUGE_VAL : 0);
	tm->se = sqrt(tm->dispersion * pooled * (1 / kb + 1 / kn));
	tm->t = tm->se > 0 ? (tm->mean[1] - tm->mean[0]) / tm->se : 0;
	tm->p = tm->t ? kp_stats_t_p(tm->t, tm->df) : 1;
	/* one-sided: the upper tail */
	tm->p = tm->t > 0 ? tm->p / 2 : 1 - tm->p / 2;
}

void kp_diff_stats_time_test(const struct kp_diff *df, const double t[2], struct kp_diff_time *tm)
{
	struct sides sd = observed_sides(df);

	time_test_at(&sd, t, tm);
}

/* Every function's CPU time a run tested (several runs a side, CPU
 * nanoseconds in every run): quasi-Poisson dispersions, moderated as the
 * shares' are. */
void kp_diff_stats_finish_time(struct kp_diff *df)
{
	size_t nf = df->nfns ? df->nfns : 1, m = 0;
	double *phi = kp_xmalloc(nf * sizeof(*phi)), *dof = kp_xmalloc(nf * sizeof(*dof));
	uint32_t *tested = kp_xmalloc(nf * sizeof(*tested));

	for (size_t i = 0; i < df->nfns; i++) {
		const struct sums *s = &df->sums[i];

		df->fns[i].time = (struct kp_diff_time){.tested = false};
		if (s->t[0] > 0 || s->t[1] > 0) {
			phi[m] = kp_diff_stats_time_dispersion(df, s->t, s->tsq, &dof[m]);
			tested[m++] = (uint32_t)i;
		}
	}
	df->time_prior = kp_stats_variance_prior(phi, dof, m);
	for (size_t k = 0; k < m; k++) {
		struct kp_diff_time *tm = &df->fns[tested[k]].time;

		kp_diff_stats_take_dispersion(df->time_prior, phi[k], dof[k], 0, &tm->dispersion,
					      &tm->df);
		kp_diff_stats_time_test(df, df->sums[tested[k]].t, tm);
		tm->tested = true;
	}
	free(phi);
	free(dof);
	free(tested);
}

/* What a function holding half of the samples must grow by to pass the
 * first step of Holm's correction over m tests, with the total column's
 * typical dispersion. */
double kp_diff_stats_resolution(const struct kp_diff *df, size_t m)
{
	const struct kp_stats_prior *pr = &df->prior[KP_DIFF_TOTAL];
	double phi = pr->var, dof = HUGE_VAL;

	if (kp_diff_measured(df)) {
		dof = kp_diff_residual_df(df) + pr->df;
		if (phi < df->dispersion)
			phi = df->dispersion;
	}
	return 100 * kp_stats_t_quantile(df->alpha / (double)(m ? m : 1), dof) *
	       sqrt(phi * 0.25 * (1 / df->count_total[0] + 1 / df->count_total[1]));
}

/* The one-sided p-value of a t (or z) on df degrees of freedom: P(T >= t). */
double kp_diff_stats_upper_p(double t, double dof)
{
	double p = t ? kp_stats_t_p(t, dof) : 1;

	return t > 0 ? p / 2 : 1 - p / 2;
}

/* The one-sided quantile: the t with P(T >= t) = p. */
double kp_diff_stats_upper_quantile(double p, double dof)
{
	/* the two-sided quantile is of 2p, defined below p 0.5 only (--alpha
	 * goes to 0.5): above, the lower tail's, mirrored */
	if (p == 0.5)
		return 0;
	return p < 0.5 ? kp_stats_t_quantile(2 * p, dof) : -kp_stats_t_quantile(2 * (1 - p), dof);
}

/* The gate's permutation test: Westfall and Young's step-down minP over
 * relabellings of the runs (which are BASE's and which NEW's), the
 * statistic of each function its one-sided p-value as the gate computes
 * it, every dispersion and the prior fitted again for each relabelling.
 * Under no change the runs of both sides are exchangeable, so the chance
 * that any function of the family passes alpha is at most alpha, exactly,
 * whatever the dependence between functions and however far the runs'
 * noise is from the model's; and it uses that dependence (shares move
 * together), where Holm assumes the worst. */
#define PERM_EXACT_MAX 2000 /* every relabelling when there are at most this many */
#define PERM_DRAWN     1000 /* else this many drawn at random, and the runs' own */
#define PERM_WORK      4e8  /* run entries times relabellings, at most */

struct perm {
	const struct kp_diff *df;
	enum kp_diff_measure measure;
	double points;	     /* the gate's growth: points of share, or percent of time */
	const uint32_t *fam; /* the functions tested: fam[0..nfam) */
	size_t nfam;
	uint32_t *prior_fn; /* the functions whose dispersions the prior is fitted to */
	uint32_t *slot;	    /* [function]: its place in prior_fn */
	size_t nprior;
	double *acc; /* [function][4]: x (or t) and its square term, each side */
	double *phi, *dof;
};

/* Each family function's one-sided p-value with the runs' sides lab[run]. */
static void relabelled_p(struct perm *pm, const uint8_t *lab, double *p)
{
	const struct kp_diff *df = pm->df;
	bool time = pm->measure == KP_DIFF_TIME;
	struct sides sd = {{0, 0}, {0, 0}};
	struct kp_stats_prior prior;

	for (size_t r = 0; r < df->nrun_info; r++) {
		sd.n[lab[r]] += df->run_info[r].n;
		sd.k[lab[r]] += 1;
	}
	for (size_t j = 0; j < pm->nprior; j++)
		memset(&pm->acc[4 * (size_t)pm->prior_fn[j]], 0, 4 * sizeof(double));
	for (size_t e = 0; e < df->nentries; e++) {
		const struct run_entry *en = &df->entries[e];
		double *a = &pm->acc[4 * (size_t)en->fn];
		int s = lab[en->run];
		double v = time ? en->t : en->x;

		a[s] += v;
		a[2 + s] += time ? v * v : v * v / df->run_info[en->run].n;
	}
	for (size_t j = 0; j < pm->nprior; j++) {
		const double *a = &pm->acc[4 * (size_t)pm->prior_fn[j]];

		pm->phi[j] = time ? time_dispersion_at(&sd, a, a + 2, &pm->dof[j])
				  : dispersion_at(&sd, a, a + 2, &pm->dof[j]);
	}
	prior = kp_stats_variance_prior(pm->phi, pm->dof, pm->nprior);
	for (size_t i = 0; i < pm->nfam; i++) {
		uint32_t f = pm->fam[i], j = pm->slot[f];
		const double *a = &pm->acc[4 * (size_t)f];

		if (time) {
			struct kp_diff_time tm = {0};

			kp_diff_stats_take_dispersion(prior, pm->phi[j], pm->dof[j], 0,
						      &tm.dispersion, &tm.df);
			time_test_at(&sd, a, &tm);
			p[i] = 100 * tm.growth > pm->points ? tm.p : 1;
		} else {
			struct kp_diff_change ch = {0};

			kp_diff_stats_take_dispersion(prior, pm->phi[j], pm->dof[j], df->dispersion,
						      &ch.dispersion, &ch.df);
			share_test_at(&sd, a, &ch);
			p[i] = 100 * (a[1] / sd.n[1] - a[0] / sd.n[0]) > pm->points
				       ? kp_diff_stats_upper_p(ch.z, ch.df)
				       : 1;
		}
	}
}

/* A splitmix64 step: the relabellings drawn are the same every time. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* The b-th relabelling into lab: exact, the next combination of k NEW runs
 * of n in c[] (b 0: the first); drawn, k runs at random (b 0: the runs'
 * own). */
static void relabelling(const struct kp_diff *df, bool exact, size_t b, uint32_t *c,
			uint64_t *state, uint8_t *lab)
{
	size_t n = df->nrun_info, k = df->runs[1];

	memset(lab, 0, n);
	if (exact) {
		if (b == 0) {
			for (size_t i = 0; i < k; i++)
				c[i] = (uint32_t)i;
		} else {
			size_t i = k;

			while (i > 0 && c[i - 1] == n - k + i - 1)
				i--;
			c[i - 1]++;
			for (size_t j = i; j < k; j++)
				c[j] = c[j - 1] + 1;
		}
		for (size_t i = 0; i < k; i++)
			lab[c[i]] = 1;
		return;
	}
	if (b == 0) {
		for (size_t r = 0; r < n; r++)
			lab[r] = (uint8_t)df->run_info[r].side;
		return;
	}
	for (size_t r = 0; r < n; r++)
		c[r] = (uint32_t)r;
	for (size_t i = 0; i < k; i++) {
		size_t j = i + (size_t)(next_random(state) % (n - i));
		uint32_t t = c[i];

		c[i] = c[j];
		c[j] = t;
		lab[c[i]] = 1;
	}
}

/* How many relabellings the test makes (*exact: all of them), 0 when too
 * few can reach alpha (fewer than 2 / alpha) or the work is too much. */
static size_t relabellings(const struct kp_diff *df, bool *exact)
{
	double n = (double)df->nrun_info, k = (double)df->runs[1], all = 1;
	double work = PERM_WORK / (double)(df->nentries ? df->nentries : 1), take;

	for (double i = 0; i < k; i++)
		all = all * (n - i) / (i + 1);
	all = round(all);
	*exact = all <= PERM_EXACT_MAX && all <= work;
	take = *exact ? all : fmin(PERM_DRAWN + 1, work);
	return take * df->alpha >= 2 ? (size_t)take : 0;
}

static int by_value_asc(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

static int by_p_of(const void *pa, const void *pb, void *arg)
{
	const double *p = arg;
	double a = p[*(const uint32_t *)pa], b = p[*(const uint32_t *)pb];

	return (a > b) - (a < b);
}

static void perm_init(struct perm *pm, const struct kp_diff *df, enum kp_diff_measure measure)
{
	size_t nf = df->nfns ? df->nfns : 1;

	memset(pm, 0, sizeof(*pm));
	pm->df = df;
	pm->measure = measure;
	pm->prior_fn = kp_xmalloc(nf * sizeof(*pm->prior_fn));
	pm->slot = kp_xmalloc(nf * sizeof(*pm->slot));
	pm->acc = kp_xcalloc(4 * nf, sizeof(*pm->acc));
	pm->phi = kp_xmalloc(nf * sizeof(*pm->phi));
	pm->dof = kp_xmalloc(nf * sizeof(*pm->dof));
	/* the prior's functions, as finish_column's and finish_time's */
	for (size_t i = 0; i < df->nfns; i++) {
		const struct sums *s = &df->sums[i];
		bool in = measure == KP_DIFF_TIME ? s->t[0] > 0 || s->t[1] > 0
						  : s->count[KP_DIFF_TOTAL][0] > 0 ||
							    s->count[KP_DIFF_TOTAL][1] > 0;

		pm->slot[i] = (uint32_t)pm->nprior;
		if (in)
			pm->prior_fn[pm->nprior++] = (uint32_t)i;
	}
}

static void perm_fini(struct perm *pm)
{
	free(pm->prior_fn);
	free(pm->slot);
	free(pm->acc);
	free(pm->phi);
	free(pm->dof);
}

/* The step-down minP adjustment of the gate's family fam[0..m) (and,
 * single-step beside the family, of the functions passed over,
 * fam[m..nfam)) into adj[0..nfam): the share of relabellings whose least
 * p-value over the family's functions from the j-th smallest on is at
 * most the j-th smallest observed, made monotone. Returns the
 * relabellings made (0: not made, too few; adj untouched) and in *level
 * the alpha-quantile of the relabellings' least p-value (what a function
 * alone must reach). */
static size_t permutation_adjust(const struct kp_diff *df, enum kp_diff_measure measure,
				 double points, const uint32_t *fam, size_t m, size_t nfam,
				 double *adj, double *level)
{
	bool exact;
	size_t nb = relabellings(df, &exact), n = df->nrun_info, nk;
	struct perm pm;
	double *obs, *pb, *qmin, *count;
	uint32_t *ord, *c;
	uint8_t *lab;
	uint64_t state = 0x6b70726f66u; /* "kprof" */

	if (!nb || !m || !kp_diff_measured(df))
		return 0;
	perm_init(&pm, df, measure);
	pm.points = points;
	pm.fam = fam;
	pm.nfam = nfam;
	obs = kp_xmalloc(nfam * sizeof(*obs));
	pb = kp_xmalloc(nfam * sizeof(*pb));
	count = kp_xcalloc(nfam, sizeof(*count));
	qmin = kp_xmalloc(nb * sizeof(*qmin));
	ord = kp_xmalloc(m * sizeof(*ord));
	c = kp_xmalloc((n ? n : 1) * sizeof(*c));
	lab = kp_xmalloc(n ? n : 1);
	for (size_t r = 0; r < n; r++)
		lab[r] = (uint8_t)df->run_info[r].side;
	relabelled_p(&pm, lab, obs);
	for (size_t j = 0; j < m; j++)
		ord[j] = (uint32_t)j;
	qsort_r(ord, m, sizeof(*ord), by_p_of, obs);
	for (size_t b = 0; b < nb; b++) {
		double q = 1;

		relabelling(df, exact, b, c, &state, lab);
		relabelled_p(&pm, lab, pb);
		for (size_t j = m; j-- > 0;) {
			q = fmin(q, pb[ord[j]]);
			count[ord[j]] += q <= obs[ord[j]];
		}
		qmin[b] = q;
		for (size_t e = m; e < nfam; e++)
			count[e] += fmin(q, pb[e]) <= obs[e];
	}
	for (size_t j = 0; j < m; j++) {
		adj[ord[j]] = count[ord[j]] / (double)nb;
		if (j && adj[ord[j]] < adj[ord[j - 1]])
			adj[ord[j]] = adj[ord[j - 1]];
	}
	for (size_t e = m; e < nfam; e++)
		adj[e] = count[e] / (double)nb;
	qsort(qmin, nb, sizeof(*qmin), by_value_asc);
	nk = (size_t)floor(df->alpha * (double)nb);
	/* a function alone passes when its p is below the (nk + 1)-th least */
	*level = fmin(df->alpha, fmax(qmin[nk < nb ? nk : nb - 1], df->alpha / (double)m));
	perm_fini(&pm);
	free(obs);
	free(pb);
	free(count);
	free(qmin);
	free(ord);
	free(c);
	free(lab);
	return nb;
}

/* The smallest growth caught with 95% probability by a test of standard
 * error se (points, or percent of the mean) on dof degrees of freedom that
 * must reach the one-sided p-value level (the strictest step of the
 * gate's adjustment). */
static double detectable_at(double se, double dof, double level)
{
	return (kp_diff_stats_upper_quantile(level, dof) +
		kp_diff_stats_upper_quantile(0.05, dof)) *
	       se;
}

struct detect {
	double d, se, dof, size; /* size: share, or CPU ns a run */
	uint32_t fn;
};

static int by_detect(const void *pa, const void *pb)
{
	const struct detect *a = pa, *b = pb;

	return (a->d > b->d) - (a->d < b->d);
}

/* The gate's detectable growth (median and largest over the family) and
 * the runs a side that would bring the median function's to points. */
void kp_diff_stats_detectability(const struct kp_diff *df, struct kp_diff_gate *g,
				 const uint8_t *member)
{
	struct detect *d = kp_xmalloc((df->nfns ? df->nfns : 1) * sizeof(*d));
	size_t nd = 0;
	double kb = (double)df->runs[0], kn = (double)df->runs[1];
	double resid = kp_diff_residual_df(df);

	g->detectable = g->detectable_max = nan("");
	g->detectable_fn = NONE;
	g->runs_needed = 0;
	for (size_t i = 0; i < df->nfns; i++) {
		double se, dof, size;

		const struct kp_diff_change *ch = &df->fns[i].col[KP_DIFF_TOTAL];
		double mean = (ch->share[0] + ch->share[1]) / 2;

		/* one run a side: the family is the column's, but only these
		 * can grow by points */
		if (!member[i] || (g->measure == KP_DIFF_SHARE &&
				   !(mean > g->points / 2 && mean < 100 - g->points / 2)))
			continue;
		if (g->measure == KP_DIFF_TIME) {
			const struct kp_diff_time *tm = &df->fns[i].time;
			double pooled = (tm->mean[0] * kb + tm->mean[1] * kn) / (kb + kn);

			se = 100 * tm->se / pooled;
			dof = tm->df;
			size = pooled;
		} else {
			se = df->fns[i].col[KP_DIFF_TOTAL].se;
			dof = df->fns[i].col[KP_DIFF_TOTAL].df;
			size = mean / 100;
		}
		d[nd++] = (struct detect){detectable_at(se, dof, g->level), se, dof, size,
					  (uint32_t)i};
	}
	if (nd) {
		struct detect medf, *med = &medf;

		qsort(d, nd, sizeof(*d), by_detect);
		g->detectable_max = d[nd - 1].d;
		g->detectable_fn = d[nd - 1].fn;
		/* the typical function: the family's median size, with the
		 * column's typical dispersion (the prior's) on the degrees of
		 * freedom a function measured in every run has */
		for (size_t a = 1; a < nd; a++) /* by size: insertion, tens */
			for (size_t b = a; b > 0 && d[b].size < d[b - 1].size; b--) {
				struct detect t = d[b];

				d[b] = d[b - 1];
				d[b - 1] = t;
			}
		medf = d[(nd - 1) / 2];
		if (g->measure == KP_DIFF_TIME) {
			medf.dof = kp_diff_residual_df(df) + df->time_prior.df;
			medf.se = 100 * sqrt(df->time_prior.var / medf.size * (1 / kb + 1 / kn));
		} else {
			struct kp_stats_prior pr = df->prior[KP_DIFF_TOTAL];
			double phi = pr.var < df->dispersion ? df->dispersion : pr.var;

			medf.dof = kp_diff_measured(df) ? resid + pr.df : HUGE_VAL;
			medf.se = 100 * sqrt(phi * medf.size * (1 - medf.size) *
					     (1 / df->count_total[0] + 1 / df->count_total[1]));
		}
		medf.d = detectable_at(medf.se, medf.dof, g->level);
		g->detectable = medf.d;
		/* with k runs a side the variance of the change scales as
		 * (1/k + 1/k) against (1/kb + 1/kn) now (for shares with each
		 * side's mean samples a run: the same), the degrees of freedom
		 * as the runs' */
		for (size_t k = 1; k <= KP_DIFF_RUNS_MAX; k++) {
			double scale = sqrt((2 / (double)k) / (1 / kb + 1 / kn)), dof = med->dof;

			if (g->measure == KP_DIFF_SHARE) {
				double nb = df->count_total[0] / kb, nn = df->count_total[1] / kn;

				scale = sqrt((1 / ((double)k * nb) + 1 / ((double)k * nn)) /
					     (1 / df->count_total[0] + 1 / df->count_total[1]));
			}
			if (isfinite(dof) && kp_diff_measured(df)) {
				if (2 * k < 3)
					continue; /* one run a side measures nothing */
				dof = dof - resid + (double)(2 * k - 2);
			}
			if (detectable_at(med->se * scale, dof, g->level) <= g->points) {
				g->runs_needed = k;
				break;
			}
		}
	}
	free(d);
}

/* The gate's adjusted p-values, in place of the raw ones in p (by family
 * position pos[function] - 1 of m): the permutation test's, over the
 * family's members (what is passed over adjusted beside them), when the
 * runs allow enough relabellings (its count returned, *family the members,
 * *level what one function must reach); else Holm's over the m (0
 * returned). */
size_t kp_diff_stats_gate_adjust(const struct kp_diff *df, enum kp_diff_measure measure,
				 double points, const uint32_t *pos, const uint8_t *member,
				 size_t m, double *p, size_t *family, double *level)
{
	uint32_t *fam = kp_xmalloc((m ? m : 1) * sizeof(*fam));
	double *adj = kp_xmalloc((m ? m : 1) * sizeof(*adj));
	size_t nm = 0, nfam = 0, nb;

	for (int part = 0; part < 2; part++)
		for (size_t i = 0; i < df->nfns; i++)
			if (pos[i] && member[i] == !part)
				fam[nfam++] = (uint32_t)i;
	for (size_t i = 0; i < df->nfns; i++)
		nm += pos[i] && member[i];
	nb = permutation_adjust(df, measure, points, fam, nm, nfam, adj, level);
	if (nb) {
		for (size_t k = 0; k < nfam; k++)
			p[pos[fam[k]] - 1] = adj[k];
		*family = nm;
	} else {
		kp_stats_holm(p, m, p);
	}
	free(fam);
	free(adj);
	return nb;
}
