/* kprof diff's statistics: the two-proportion z-test and Holm's correction
 * against values computed elsewhere (R's prop.test and p.adjust), and the
 * function table on built profiles: self and total, counts for the test
 * whatever the shares are of, 2000 functions of pure noise raising no
 * alarm at alpha 0.01 (while uncorrected tests would), a 10-point shift
 * raising exactly its alarm. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/diff.h"
#include "flamegraph/stats.h"
#include "kp_test.h"

static bool near(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fabs(b);
}

/* Pearson's chi-square of the 2x2 table (x1, n1 - x1; x2, n2 - x2): the
 * same test as the pooled z-test, X^2 = z^2, by another formula. */
static double chi_square(double x1, double n1, double x2, double n2)
{
	double obs[2][2] = {{x1, n1 - x1}, {x2, n2 - x2}}, n = n1 + n2, x2s = 0;
	double rows[2] = {n1, n2}, cols[2] = {x1 + x2, n - x1 - x2};

	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++) {
			double e = rows[i] * cols[j] / n;

			x2s += (obs[i][j] - e) * (obs[i][j] - e) / e;
		}
	return x2s;
}

static void test_two_proportions(void)
{
	/* R: prop.test(c(50, 70), c(100, 100), correct = FALSE):
	 * X-squared = 8.3333, p-value = 0.003892 */
	struct kp_ztest t = kp_stats_two_proportions(50, 100, 70, 100);

	CHECK(near(t.z, 2.8867513459, 1e-9));
	CHECK(near(t.z * t.z, 25.0 / 3, 1e-12));
	CHECK(near(t.p, 0.0038924171, 1e-7));
	/* the other way round: the sign only */
	t = kp_stats_two_proportions(70, 100, 50, 100);
	CHECK(near(t.z, -2.8867513459, 1e-9));
	CHECK(near(t.p, 0.0038924171, 1e-7));
	/* unequal totals, a shrink */
	t = kp_stats_two_proportions(412, 2000, 380, 2100);
	CHECK(near(t.z * t.z, chi_square(412, 2000, 380, 2100), 1e-12));
	CHECK(t.z < -2.03 && t.z > -2.04);
	CHECK(t.p > 0.04 && t.p < 0.045);
	t = kp_stats_two_proportions(3, 12000, 40, 9000);
	CHECK(near(t.z * t.z, chi_square(3, 12000, 40, 9000), 1e-12));
	/* equal shares of different totals: no difference */
	t = kp_stats_two_proportions(10, 100, 30, 300);
	CHECK(t.z == 0 && t.p == 1);
	/* always there, or never: nothing can differ */
	t = kp_stats_two_proportions(100, 100, 300, 300);
	CHECK(t.z == 0 && t.p == 1);
	t = kp_stats_two_proportions(0, 100, 0, 300);
	CHECK(t.z == 0 && t.p == 1);
	/* nonsense in, no alarm out */
	t = kp_stats_two_proportions(5, 0, 1, 10);
	CHECK(t.z == 0 && t.p == 1);
	t = kp_stats_two_proportions(11, 10, 1, 10);
	CHECK(t.z == 0 && t.p == 1);
	t = kp_stats_two_proportions(NAN, 10, 1, 10);
	CHECK(t.z == 0 && t.p == 1);
}

static void test_normal_p(void)
{
	CHECK(near(kp_stats_normal_p(1.959963985), 0.05, 1e-8));
	CHECK(near(kp_stats_normal_p(-2.575829304), 0.01, 1e-8));
	CHECK(kp_stats_normal_p(0) == 1);
	/* R: 2 * pnorm(-10) = 1.523971e-23: the tail keeps its precision */
	CHECK(near(kp_stats_normal_p(10), 1.523971e-23, 1e-6));
	CHECK(kp_stats_normal_p(30) > 0 && kp_stats_normal_p(30) < 1e-190);
}

static void test_holm(void)
{
	/* R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") = 0.03 0.06 0.06 0.02 */
	double p[] = {0.01, 0.04, 0.03, 0.005}, adj[4];
	/* R: p.adjust(c(0.001, 0.2, 0.05, 0.5), "holm") = 0.004 0.40 0.15 0.50 */
	double q[] = {0.001, 0.2, 0.05, 0.5};
	/* ties keep one value; capped at 1 */
	double r[] = {0.5, 0.02, 0.02, 0.6};

	kp_stats_holm(p, 4, adj);
	CHECK(near(adj[0], 0.03, 1e-12));
	CHECK(near(adj[1], 0.06, 1e-12));
	CHECK(near(adj[2], 0.06, 1e-12));
	CHECK(near(adj[3], 0.02, 1e-12));
	/* in place */
	kp_stats_holm(q, 4, q);
	CHECK(near(q[0], 0.004, 1e-12));
	CHECK(near(q[1], 0.4, 1e-12));
	CHECK(near(q[2], 0.15, 1e-12));
	CHECK(near(q[3], 0.5, 1e-12));
	kp_stats_holm(r, 4, r);
	CHECK(near(r[1], 0.08, 1e-12));
	CHECK(near(r[2], 0.08, 1e-12));
	CHECK(r[0] == 1 && r[3] == 1);
	/* one test: unchanged */
	p[0] = 0.3;
	kp_stats_holm(p, 1, adj);
	CHECK(adj[0] == 0.3);
	kp_stats_holm(p, 0, adj);
}

/* splitmix64: a fixed, portable sequence */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) / 9007199254740992.0;
}

/* A profile of nsamples draws from weights[0..nfn): each a stack
 * bench;main;group_(i % 20);fn_i, values samples and cpu (cpu_per
 * nanoseconds a sample, fn_heavy's heavy). */
static struct kp_profile *draw(const double *weights, size_t nfn, size_t nsamples, uint64_t *rng,
			       size_t heavy, uint64_t heavy_cpu)
{
	struct kp_profile *p = kp_profile_new();
	double *cum = malloc(nfn * sizeof(*cum)), sum = 0;
	uint64_t *hits = calloc(nfn, sizeof(*hits));
	struct kp_profile_root root = {.comm = kp_profile_intern(p, "bench", 5)};

	kp_profile_add_value_type(p, "samples", "count", 0);
	kp_profile_add_value_type(p, "cpu", "nanoseconds", 0);
	for (size_t i = 0; i < nfn; i++)
		cum[i] = sum += weights[i];
	for (size_t k = 0; k < nsamples; k++) {
		double u = rng_unit(rng) * sum;
		size_t lo = 0, hi = nfn - 1;

		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (cum[mid] > u)
				hi = mid;
			else
				lo = mid + 1;
		}
		hits[lo]++;
	}
	for (size_t i = 0; i < nfn; i++) {
		char g[32], f[32];
		uint32_t locs[3];
		kp_count values[2] = {hits[i], hits[i] * (i == heavy ? heavy_cpu : 1000000)};

		if (!hits[i])
			continue;
		snprintf(g, sizeof(g), "group_%zu", i % 20);
		snprintf(f, sizeof(f), "fn_%zu", i);
		locs[0] = kp_profile_named_location(p, "main", 4, KP_FRAME_USER);
		locs[1] = kp_profile_named_location(p, g, strlen(g), KP_FRAME_USER);
		locs[2] = kp_profile_named_location(p, f, strlen(f), KP_FRAME_USER);
		kp_profile_add(p, &root, locs, 3, values);
	}
	free(cum);
	free(hits);
	return p;
}

static const struct kp_diff_function *find(const struct kp_diff *df, const char *name)
{
	for (size_t i = 0; i < kp_diff_nfunctions(df); i++)
		if (strcmp(kp_diff_function(df, i)->name, name) == 0)
			return kp_diff_function(df, i);
	return NULL;
}

static void test_noise_raises_no_alarm(void)
{
	enum { NFN = 2000, N = 60000 };
	double *w = malloc(NFN * sizeof(*w));
	uint64_t rng = 20261201;
	struct kp_diff_opts o = {.value = {0, 0}, .count = {0, 0}, .alpha = 0.01};
	struct kp_diag d = {{0}};
	struct kp_profile *a, *b;
	struct kp_diff *df;
	size_t raw = 0, sig = 0;

	/* a long tail, as real profiles have: a few hot functions */
	for (size_t i = 0; i < NFN; i++)
		w[i] = 1.0 / (double)(i + 10);
	a = draw(w, NFN, N, &rng, NFN, 0);
	b = draw(w, NFN, N, &rng, NFN, 0);
	df = kp_diff_new(a, b, &o, &d);
	CHECK(df != NULL);
	/* main, 20 groups, 2000 functions (every one drawn at least once in
	 * one of the two) */
	CHECK_EQ_INT(kp_diff_nfunctions(df), 1 + 20 + NFN);
	CHECK_EQ_INT(kp_diff_ntested(df, KP_DIFF_TOTAL), 1 + 20 + NFN);
	CHECK_EQ_INT(kp_diff_ntested(df, KP_DIFF_SELF), NFN);
	for (size_t i = 0; i < kp_diff_nfunctions(df); i++) {
		const struct kp_diff_function *fn = kp_diff_function(df, i);

		for (int col = 0; col < 2; col++) {
			raw += fn->col[col].p <= 0.01;
			sig += fn->col[col].significant;
		}
	}
	/* about 1% of 4000 tests pass 0.01 uncorrected: the correction is
	 * what keeps them quiet */
	CHECK(raw >= 10);
	fprintf(stderr, "noise: %zu raw p <= 0.01 of %zu tests\n", raw,
		kp_diff_ntested(df, 0) + kp_diff_ntested(df, 1));
	CHECK_EQ_INT(sig, 0);
	CHECK_EQ_INT(kp_diff_regressions(df, 0, NULL), 0);
	kp_diff_free(df);
	kp_profile_free(a);
	kp_profile_free(b);
	free(w);
}

static void test_real_shift_raises_its_alarm(void)
{
	enum { NFN = 200, N = 5000 };
	double w[NFN], sum = 0;
	uint64_t rng = 7;
	struct kp_diff_opts o = {.value = {0, 0}, .count = {0, 0}};
	struct kp_diag d = {{0}};
	struct kp_profile *a, *b;
	struct kp_diff *df;
	const struct kp_diff_function *fn;
	uint32_t *reg;
	size_t nreg;

	for (size_t i = 0; i < NFN; i++)
		sum += w[i] = 1.0 / (double)(i + 10);
	/* fn_7: 15% of the time, then 25% */
	w[7] = 0;
	sum -= 1.0 / 17;
	w[7] = sum * 0.15 / 0.85;
	a = draw(w, NFN, N, &rng, NFN, 0);
	w[7] = sum * 0.25 / 0.75;
	b = draw(w, NFN, N, &rng, NFN, 0);
	df = kp_diff_new(a, b, &o, &d);
	CHECK(kp_diff_alpha(df) == 0.01);
	fn = find(df, "fn_7");
	CHECK(fn && fn->col[KP_DIFF_TOTAL].significant && fn->col[KP_DIFF_SELF].significant);
	CHECK(fn && fn->col[KP_DIFF_TOTAL].change > 7 && fn->col[KP_DIFF_TOTAL].change < 13);
	CHECK(fn &&
	      near(fn->col[KP_DIFF_TOTAL].share[0],
		   100 * fn->col[KP_DIFF_TOTAL].count[0] / kp_diff_total_count(df, 0), 1e-12));
	/* the gate: fn_7 and its caller group_7 (whose total holds fn_7's) grew
	 * by more than 5 points, the largest growth first */
	nreg = kp_diff_regressions(df, 5, &reg);
	CHECK_EQ_INT(nreg, 2);
	if (nreg == 2) {
		const struct kp_diff_function *r0 = kp_diff_function(df, reg[0]);
		const struct kp_diff_function *r1 = kp_diff_function(df, reg[1]);

		CHECK((strcmp(r0->name, "fn_7") == 0 && strcmp(r1->name, "group_7") == 0) ||
		      (strcmp(r0->name, "group_7") == 0 && strcmp(r1->name, "fn_7") == 0));
		CHECK(r0->col[KP_DIFF_TOTAL].change >= r1->col[KP_DIFF_TOTAL].change);
	}
	free(reg);
	/* above the shift, nothing fails */
	CHECK_EQ_INT(kp_diff_regressions(df, 15, NULL), 0);
	/* the largest change first */
	CHECK_EQ_STR(kp_diff_function(df, kp_diff_order(df, KP_DIFF_SELF)[0])->name, "fn_7");
	/* main is in every sample of both: 100% each, not tested as a change */
	fn = find(df, "main");
	CHECK(fn && fn->col[KP_DIFF_TOTAL].change == 0 && !fn->col[KP_DIFF_TOTAL].significant);
	CHECK(fn && !fn->col[KP_DIFF_SELF].tested);

	/* overdispersed counts (clustered samples): z shrinks by the square
	 * root of the dispersion, and a large one silences the shift */
	double z1 = find(df, "fn_7")->col[KP_DIFF_TOTAL].z;
	struct kp_diff *d4;

	o.dispersion = 4;
	d4 = kp_diff_new(a, b, &o, &d);
	CHECK(kp_diff_dispersion(d4) == 4 && kp_diff_dispersion(df) == 1);
	fn = find(d4, "fn_7");
	CHECK(fn && near(fn->col[KP_DIFF_TOTAL].z, z1 / 2, 1e-12));
	CHECK(fn && near(fn->col[KP_DIFF_TOTAL].p, kp_stats_normal_p(z1 / 2), 1e-12));
	kp_diff_free(d4);
	o.dispersion = z1 * z1 / 4; /* z 2: not significant after Holm */
	d4 = kp_diff_new(a, b, &o, &d);
	CHECK_EQ_INT(kp_diff_regressions(d4, 5, NULL), 0);
	kp_diff_free(d4);
	kp_diff_free(df);
	kp_profile_free(a);
	kp_profile_free(b);
}

/* Shares of cpu time, the test on sample counts: a function whose samples
 * weigh ten times more has a far larger share of the time, but the same
 * number of samples is no evidence of a change. */
static void test_counts_not_weights(void)
{
	enum { NFN = 10, N = 4000 };
	double w[NFN];
	uint64_t rng = 11, rng2 = 11;
	struct kp_diff_opts o = {.value = {1, 1}, .count = {0, 0}};
	struct kp_diag d = {{0}};
	struct kp_profile *a, *b;
	struct kp_diff *df;
	const struct kp_diff_function *fn;

	for (size_t i = 0; i < NFN; i++)
		w[i] = 1;
	a = draw(w, NFN, N, &rng, 3, 1000000);
	b = draw(w, NFN, N, &rng2, 3, 10000000); /* the same draws */
	df = kp_diff_new(a, b, &o, &d);
	fn = find(df, "fn_3");
	CHECK(fn && fn->col[KP_DIFF_SELF].change > 40);
	CHECK(fn && fn->col[KP_DIFF_SELF].count[0] == fn->col[KP_DIFF_SELF].count[1]);
	CHECK(fn && fn->col[KP_DIFF_SELF].z == 0 && !fn->col[KP_DIFF_SELF].significant);
	CHECK(fn && fn->col[KP_DIFF_SELF].value[1] == 10 * fn->col[KP_DIFF_SELF].value[0]);
	CHECK_EQ_INT(kp_diff_regressions(df, 1, NULL), 0);
	kp_diff_free(df);
	/* a value index a profile lacks, a total of 0 */
	o.value[1] = 2;
	CHECK(kp_diff_new(a, b, &o, &d) == NULL);
	CHECK(strstr(d.msg, "NEW: no value 2") != NULL);
	kp_profile_free(a);
	kp_profile_free(b);
}

/* Self is the innermost frame, total counts a function once a sample even
 * when it recurses; kinds tell functions apart; an unnamed location is
 * [unknown]. */
static void test_self_total_kinds(void)
{
	struct kp_profile *a = kp_profile_new(), *b = kp_profile_new();
	struct kp_profile_root root = {0};
	struct kp_diff_opts o = {.alpha = 0.05};
	struct kp_diag d = {{0}};
	struct kp_loc raw = {.addr = 0x1234, .kind = KP_LOC_USER};
	struct kp_diff *df;
	const struct kp_diff_function *fn;
	uint32_t l[4];
	kp_count v;

	kp_profile_add_value_type(a, "samples", "count", 0);
	kp_profile_add_value_type(b, "samples", "count", 0);
	root.comm = kp_profile_intern(a, "p", 1);
	l[0] = kp_profile_named_location(a, "f", 1, KP_FRAME_USER);
	l[1] = kp_profile_named_location(a, "f", 1, KP_FRAME_USER);
	l[2] = kp_profile_named_location(a, "f", 1, KP_FRAME_KERNEL);
	v = 6;
	kp_profile_add(a, &root, l, 3, &v);
	v = 4;
	kp_profile_add(a, &root, l, 2, &v);
	root.comm = kp_profile_intern(b, "p", 1);
	l[0] = kp_profile_named_location(b, "f", 1, KP_FRAME_USER);
	l[1] = kp_profile_location(b, &raw);
	v = 10;
	kp_profile_add(b, &root, l, 2, &v);
	df = kp_diff_new(a, b, &o, &d);
	CHECK_EQ_INT(kp_diff_nfunctions(df), 3);
	fn = find(df, "f");
	CHECK(fn && fn->kind == KP_FRAME_USER);
	/* f (user): in all 10 samples of each, the leaf of 4 of BASE's */
	CHECK(fn && fn->col[KP_DIFF_TOTAL].value[0] == 10 && fn->col[KP_DIFF_TOTAL].value[1] == 10);
	CHECK(fn && fn->col[KP_DIFF_SELF].value[0] == 4 && fn->col[KP_DIFF_SELF].value[1] == 0);
	CHECK(fn && near(fn->col[KP_DIFF_SELF].change, -40, 1e-12));
	fn = find(df, "[unknown]");
	CHECK(fn && fn->col[KP_DIFF_SELF].value[1] == 10 && fn->col[KP_DIFF_SELF].share[1] == 100);
	CHECK_EQ_STR(kp_diff_kind_name(KP_FRAME_KERNEL), "kernel");
	kp_diff_free(df);
	kp_profile_free(a);
	kp_profile_free(b);
}

/* A function in every sample has a share of 100 %, not more, whatever
 * the total: 100 * v / t rounds 100 * v first, and for counts past 2^53 /
 * 100 (difffolded.pl sums of byte counts, weights) that can land above
 * 100 * t (found by fuzzing, tests/fuzz/fuzz_diff.c). */
static void test_share_of_everything_is_100(void)
{
	struct kp_profile *p = kp_profile_new();
	struct kp_profile_root root = {.comm = kp_profile_intern(p, "p", 1)};
	struct kp_diff_opts o = {0};
	struct kp_diag d = {{0}};
	struct kp_diff *df;
	const struct kp_diff_function *fn;
	/* 854520155250997454214805: 100 * v / v is 100.00000000000001 in doubles */
	kp_count v = (kp_count)85452015525ULL * 10000000000000ULL + 997454214805ULL;
	uint32_t l;

	kp_profile_add_value_type(p, "samples", "count", 0);
	l = kp_profile_named_location(p, "f", 1, KP_FRAME_USER);
	kp_profile_add(p, &root, &l, 1, &v);
	df = kp_diff_new(p, p, &o, &d);
	fn = find(df, "f");
	CHECK(fn != NULL);
	for (int c = 0; fn && c < 2; c++)
		for (int side = 0; side < 2; side++)
			CHECK(fn->col[c].share[side] == 100);
	kp_diff_free(df);
	kp_profile_free(p);
}

KP_TEST_MAIN(test_two_proportions, test_normal_p, test_holm, test_noise_raises_no_alarm,
	     test_real_shift_raises_its_alarm, test_counts_not_weights, test_self_total_kinds,
	     test_share_of_everything_is_100)
