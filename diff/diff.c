/* kp_diff: one pass over each run's samples adds every sample's value and
 * count to the self column of its innermost frame and to the total
 * column of each distinct function on its stack; functions of all runs
 * meet by (name, kind) in one table. At the end of a run each function's
 * count in it joins the side's sums (the count, and its square over the
 * run's total, which is what the dispersion needs). kp_diff_finish then
 * tests and corrects each column (diff/stats.h). */
#include "diff/diff.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/strtab.h"
#include "util/u64map.h"
#include "util/xalloc.h"

#define NONE UINT32_MAX
/* a (function, kind) pair of one profile, for its cache */
#define KINDS 8

/* What one side's samples add to one function, exact (128-bit): a run
 * adds to its side's alone, and an add touches one or two cache lines. */
struct side_sums {
	kp_count value[2]; /* [column], in the side's decimals */
	kp_count cpu[2];   /* [column], nanoseconds */
	kp_count run[2];   /* [column]: x, the count in the current run */
	kp_count irq;	   /* the run's total-column counts taken inside an interrupt */
};

/* What a function's runs give the test, as doubles made once a run:
 * [column][side]. */
struct sums {
	double count[2][2]; /* sum over runs of x */
	double sq[2][2];    /* sum over runs of x^2 / n, n the run's total count */
	double irq;	    /* counts inside an interrupt, both sides */
};

struct kp_diff {
	struct kp_strtab *names;
	struct kp_u64map index; /* name id * KINDS + kind -> function index */
	struct kp_diff_function *fns;
	struct side_sums *side[2];
	struct sums *sums;
	/* beside fns, what every frame of every sample reads: kept apart
	 * from the sums so that they stay in the caches */
	uint64_t *stamp;    /* the last sample (epoch) that counted its total */
	uint8_t *irq_entry; /* its frames begin an interrupt */
	size_t nfns, cap;
	uint64_t epoch;
	uint32_t *order[2];
	size_t runs[2];
	kp_count total[2]; /* the shown value over the side's runs */
	unsigned decimals[2];
	double count_total[2], cpu_runs[2];
	size_t ntested[2];
	struct kp_stats_prior prior[2];
	double alpha, dispersion;
	bool gate_interrupts, finished;
};

const char *kp_diff_kind_name(enum kp_frame_kind kind)
{
	switch (kind) {
	case KP_FRAME_KERNEL:
		return "kernel";
	case KP_FRAME_JIT:
		return "jit";
	case KP_FRAME_INLINE:
		return "inline";
	default:
		return "user";
	}
}

/* True for a kernel function that begins the handling of a hardware or
 * soft interrupt (x86-64 and arm64 entry points): what runs below it on
 * a stack was not asked for by the code above it. Page faults and system
 * calls are the program's own. */
static bool is_interrupt_entry(const char *name, size_t len)
{
	static const char *const exact[] = {
		"asm_common_interrupt", "common_interrupt", "asm_spurious_interrupt",
		"spurious_interrupt", "asm_exc_nmi", "exc_nmi", "irq_exit_rcu", "__irq_exit_rcu",
		"do_softirq", "__do_softirq", "handle_softirqs", "do_softirq_own_stack",
		/* arm64 */
		"el1h_64_irq", "el0t_64_irq", "el1h_64_fiq", "el0t_64_fiq", "el1_interrupt",
		"el0_interrupt", "gic_handle_irq"};
	static const char *const prefix[] = {"asm_sysvec_", "sysvec_", "__sysvec_"};

	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (strlen(exact[i]) == len && memcmp(exact[i], name, len) == 0)
			return true;
	for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (len > strlen(prefix[i]) && memcmp(prefix[i], name, strlen(prefix[i])) == 0)
			return true;
	return false;
}

/* The index of function (name, kind), added if new. */
static uint32_t function_of(struct kp_diff *df, const char *name, size_t len,
			    enum kp_frame_kind kind)
{
	uint32_t id = kp_strtab_intern(df->names, name, len);
	uint64_t key = (uint64_t)id * KINDS + ((unsigned)kind & (KINDS - 1)), idx;
	struct kp_diff_function *fn;

	if (kp_u64map_get(&df->index, key, &idx))
		return (uint32_t)idx;
	if (df->nfns == df->cap) {
		/* the sums beside fns grow with it */
		kp_xgrow(&df->fns, &df->cap, df->nfns + 1, sizeof(*df->fns));
		df->sums = kp_xrealloc(df->sums, df->cap * sizeof(*df->sums));
		for (int side = 0; side < 2; side++)
			df->side[side] =
				kp_xrealloc(df->side[side], df->cap * sizeof(*df->side[side]));
		df->stamp = kp_xrealloc(df->stamp, df->cap * sizeof(*df->stamp));
		df->irq_entry = kp_xrealloc(df->irq_entry, df->cap * sizeof(*df->irq_entry));
	}
	fn = &df->fns[df->nfns];
	memset(fn, 0, sizeof(*fn));
	memset(&df->sums[df->nfns], 0, sizeof(*df->sums));
	memset(&df->side[0][df->nfns], 0, sizeof(*df->side[0]));
	memset(&df->side[1][df->nfns], 0, sizeof(*df->side[1]));
	df->stamp[df->nfns] = 0;
	df->irq_entry[df->nfns] = kind == KP_FRAME_KERNEL && is_interrupt_entry(name, len);
	/* the strtab's strings live as long as the table */
	fn->name = kp_strtab_str(df->names, id);
	fn->name_len = len;
	fn->kind = kind;
	kp_u64map_put(&df->index, key, df->nfns);
	return (uint32_t)df->nfns++;
}

/* The diff's function of a profile's (function id, kind), through a cache
 * of those pairs: names are looked up once per function, not per frame. */
static uint32_t cached_function(struct kp_diff *df, const struct kp_profile *p, uint32_t *cache,
				uint32_t fn, unsigned kind)
{
	uint32_t *slot = &cache[(size_t)fn * KINDS + (kind & (KINDS - 1))];

	if (*slot == NONE) {
		const struct kp_profile_function *pf = kp_profile_function_at(p, fn);
		size_t len;
		const char *name = kp_profile_str(p, pf->name, &len);

		*slot = function_of(df, name, len, (enum kp_frame_kind)kind);
	}
	return *slot;
}

struct run {
	int side;
	unsigned shift; /* decimals this run's values gain to meet the side's */
	unsigned count_decimals;
	size_t value, count;
	long cpu;
};

static void add(struct kp_diff *df, uint32_t fi, int col, const struct run *r,
		const kp_count *values)
{
	struct side_sums *s = &df->side[r->side][fi];
	kp_count v = values[r->value];

	if (r->shift)
		kp_count_shift(&v, r->shift); /* checked not to overflow: check_run */
	s->value[col] += v;
	s->run[col] += values[r->count];
	if (r->cpu >= 0)
		s->cpu[col] += values[r->cpu];
}

/* Adds every sample of p to its side; then each function's count in the
 * run to the side's sums. */
static void add_samples(struct kp_diff *df, const struct kp_profile *p, const struct run *r)
{
	size_t nfn = kp_profile_nfunctions(p);
	uint32_t *cache = kp_xmalloc((nfn ? nfn : 1) * KINDS * sizeof(*cache));
	uint32_t unknown = NONE;
	double n = kp_count_double(kp_profile_total(p, r->count), r->count_decimals);

	memset(cache, 0xff, (nfn ? nfn : 1) * KINDS * sizeof(*cache));
	for (size_t i = 0; i < kp_profile_nsamples(p); i++) {
		struct kp_profile_root root;
		const kp_count *values;
		size_t nloc;
		const uint32_t *locs = kp_profile_sample(p, i, &root, &nloc, &values);
		uint32_t leaf = NONE;
		bool in_irq = false;

		df->epoch++;
		for (size_t j = 0; j < nloc; j++) {
			size_t nfr;
			const struct kp_profile_frame *fr =
				kp_profile_frames(p, locs[j], &nfr, NULL);

			for (size_t k = 0; k < (fr ? nfr : 1); k++) {
				uint32_t fi;

				if (fr) {
					fi = cached_function(df, p, cache, fr[k].function,
							     fr[k].kind);
				} else {
					/* a location never named, as the folded writer shows it */
					if (unknown == NONE)
						unknown = function_of(df, "[unknown]", 9,
								      KP_FRAME_USER);
					fi = unknown;
				}
				in_irq |= df->irq_entry[fi];
				if (df->stamp[fi] != df->epoch) {
					df->stamp[fi] = df->epoch;
					add(df, fi, KP_DIFF_TOTAL, r, values);
					if (in_irq)
						df->side[r->side][fi].irq += values[r->count];
				}
				leaf = fi;
			}
		}
		if (leaf != NONE)
			add(df, leaf, KP_DIFF_SELF, r, values);
	}
	free(cache);
	for (size_t f = 0; f < df->nfns; f++) {
		struct side_sums *ss = &df->side[r->side][f];
		struct sums *s = &df->sums[f];

		for (int col = 0; col < 2; col++) {
			double x = kp_count_double(ss->run[col], r->count_decimals);

			s->count[col][r->side] += x;
			s->sq[col][r->side] += x * x / n;
			ss->run[col] = 0;
		}
		s->irq += kp_count_double(ss->irq, r->count_decimals);
		ss->irq = 0;
	}
}

static int check_index(const struct kp_profile *p, size_t v, const char *what, struct kp_diag *d)
{
	if (v >= kp_profile_nvalues(p))
		return kp_diag_set(d, -EINVAL, "no value %zu for the %s", v, what);
	if (kp_profile_total(p, v) == 0)
		return kp_diag_set(d, -ENODATA, "the %s add up to 0", what);
	return 0;
}

/* The run's values checked, and their decimals met with the side's: a run
 * with more decimals than the runs before raises the side's (their sums
 * shifted), one with fewer is shifted itself. */
static int check_run(struct kp_diff *df, int side, const struct kp_profile *p,
		     const struct kp_diff_values *v, struct run *r, struct kp_diag *d)
{
	unsigned dec;
	kp_count total;
	int err = check_index(p, v->value, "shares", d);

	if (err < 0 || (err = check_index(p, v->count, "sample counts", d)) < 0)
		return err;
	if (v->cpu >= 0 && (size_t)v->cpu >= kp_profile_nvalues(p))
		return kp_diag_set(d, -EINVAL, "no value %ld for the CPU time", v->cpu);
	dec = kp_profile_value_type(p, v->value)->decimals;
	*r = (struct run){.side = side,
			  .count_decimals = kp_profile_value_type(p, v->count)->decimals,
			  .value = v->value,
			  .count = v->count,
			  .cpu = v->cpu};
	if (df->runs[side] && dec != df->decimals[side]) {
		if (dec < df->decimals[side]) {
			r->shift = df->decimals[side] - dec;
		} else {
			unsigned up = dec - df->decimals[side];
			kp_count t = df->total[side];

			/* the largest sum is the total: if it shifts, all do */
			if (!kp_count_shift(&t, up))
				return kp_diag_set(d, -ERANGE,
						   "the values cannot be summed exactly");
			df->total[side] = t;
			for (size_t f = 0; f < df->nfns; f++)
				for (int col = 0; col < 2; col++)
					kp_count_shift(&df->side[side][f].value[col], up);
			df->decimals[side] = dec;
		}
	} else if (!df->runs[side]) {
		df->decimals[side] = dec;
	}
	total = kp_profile_total(p, v->value);
	if (!kp_count_shift(&total, r->shift) || !kp_count_add(&df->total[side], total))
		return kp_diag_set(d, -ERANGE, "the values cannot be summed exactly");
	return 0;
}

struct kp_diff *kp_diff_new(const struct kp_diff_opts *o)
{
	struct kp_diff *df = kp_xcalloc(1, sizeof(*df));

	df->names = kp_strtab_new();
	kp_u64map_init(&df->index);
	df->alpha = o->alpha > 0 && o->alpha < 1 ? o->alpha : 0.01;
	df->dispersion = o->dispersion > 0 && isfinite(o->dispersion) ? o->dispersion : 0;
	df->gate_interrupts = o->gate_interrupts;
	return df;
}

int kp_diff_add_run(struct kp_diff *df, enum kp_diff_side side, const struct kp_profile *p,
		    const struct kp_diff_values *v, struct kp_diag *d)
{
	struct run r;
	int err;

	if (df->finished)
		return kp_diag_set(d, -EINVAL, "the diff is finished");
	err = check_run(df, side, p, v, &r, d);
	if (err < 0)
		return err;
	add_samples(df, p, &r);
	df->count_total[side] += kp_count_double(kp_profile_total(p, v->count), r.count_decimals);
	df->cpu_runs[side] += v->cpu >= 0;
	df->runs[side]++;
	return 0;
}

bool kp_diff_measured(const struct kp_diff *df)
{
	return df->runs[0] + df->runs[1] > 2;
}

double kp_diff_residual_df(const struct kp_diff *df)
{
	return kp_diff_measured(df) ? (double)(df->runs[0] + df->runs[1] - 2) : 0;
}

bool kp_diff_has_seconds(const struct kp_diff *df)
{
	return df->cpu_runs[0] == (double)df->runs[0] && df->cpu_runs[1] == (double)df->runs[1];
}

/* The quasi-binomial dispersion of one function's column measured from
 * the runs: Pearson's chi-square over the runs of both sides, each side
 * around its own pooled share, over its residual degrees of freedom
 * (*dof): the runs less one of each side where the share is neither 0 nor
 * 1 (a side where the function is in no sample, or in all, says nothing
 * of how its share varies). */
static double measured_dispersion(const struct kp_diff *df, const struct sums *s, int col,
				  double *dof)
{
	double chi2 = 0;

	*dof = 0;
	for (int side = 0; side < 2; side++) {
		double x = s->count[col][side], n = df->count_total[side], pi = x / n;

		/* sum (x_i - n_i pi)^2 / (n_i pi (1 - pi)), expanded */
		if (pi > 0 && pi < 1) {
			chi2 += fmax(0, s->sq[col][side] - x * x / n) / (pi * (1 - pi));
			*dof += (double)df->runs[side] - 1;
		}
	}
	return *dof > 0 ? chi2 / *dof : 0;
}

/* The dispersion a function's test takes, and its degrees of freedom:
 * its own moderated toward the prior (the posterior of limma's moderated
 * t, on the prior's degrees of freedom and its own), but never below its
 * own: the prior lends steadiness to a function whose few runs happen to
 * look too steady; it must not hide one whose share follows the
 * neighbours more than the others'. The prior's alone when the runs say
 * nothing of the function; the binomial when nothing does. */
static void take_dispersion(const struct kp_diff *df, struct kp_stats_prior prior, double phi,
			    double dof, struct kp_diff_change *ch)
{
	double post = kp_stats_moderate(prior, phi, dof);

	if (dof > 0 || prior.df > 0) {
		ch->dispersion = phi > post ? phi : post;
		ch->df = dof + prior.df;
	} else {
		ch->dispersion = 1;
		ch->df = HUGE_VAL;
	}
	if (ch->dispersion < df->dispersion)
		ch->dispersion = df->dispersion;
}

/* The shares, seconds, tests and Holm's adjustment of one column. */
static void finish_column(struct kp_diff *df, int col)
{
	size_t nf = df->nfns ? df->nfns : 1, m = 0;
	double *p = kp_xmalloc(nf * sizeof(*p)), *phi = kp_xmalloc(nf * sizeof(*phi));
	double *dof = kp_xmalloc(nf * sizeof(*dof));
	uint32_t *tested = kp_xmalloc(nf * sizeof(*tested));
	double n[2] = {df->count_total[0], df->count_total[1]};
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
			phi[m] = measured ? measured_dispersion(df, s, col, &dof[m]) : 0;
			tested[m++] = (uint32_t)i;
		}
	}
	df->prior[col] =
		measured ? kp_stats_variance_prior(phi, dof, m)
			 : (struct kp_stats_prior){df->dispersion ? df->dispersion : 1, HUGE_VAL};
	for (size_t k = 0; k < m; k++) {
		struct kp_diff_change *ch = &df->fns[tested[k]].col[col];
		double q = (ch->count[0] + ch->count[1]) / (n[0] + n[1]), se;

		if (measured) {
			take_dispersion(df, df->prior[col], phi[k], dof[k], ch);
		} else {
			ch->dispersion = df->prior[col].var;
			ch->df = HUGE_VAL;
		}
		se = sqrt(ch->dispersion * q * (1 - q) * (1 / n[0] + 1 / n[1]));
		ch->se = 100 * se;
		ch->z = se > 0 ? (ch->count[1] / n[1] - ch->count[0] / n[0]) / se : 0;
		ch->p = ch->z ? kp_stats_t_p(ch->z, ch->df) : 1;
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

struct order_ctx {
	const struct kp_diff *df;
	int col;
};

static int by_change(const void *pa, const void *pb, void *arg)
{
	const struct order_ctx *c = arg;
	const struct kp_diff_function *a = &c->df->fns[*(const uint32_t *)pa];
	const struct kp_diff_function *b = &c->df->fns[*(const uint32_t *)pb];
	double da = fabs(a->col[c->col].change), db = fabs(b->col[c->col].change);
	size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
	int r;

	if (da != db)
		return da > db ? -1 : 1;
	if (a->col[c->col].p != b->col[c->col].p)
		return a->col[c->col].p < b->col[c->col].p ? -1 : 1;
	r = memcmp(a->name, b->name, n);
	if (r)
		return r;
	if (a->name_len != b->name_len)
		return a->name_len < b->name_len ? -1 : 1;
	return (int)a->kind - (int)b->kind;
}

/* What a function holding half of the samples must grow by to pass the
 * first step of Holm's correction over m tests, with the total column's
 * typical dispersion. */
static double resolution(const struct kp_diff *df, size_t m)
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

int kp_diff_finish(struct kp_diff *df, struct kp_diag *d)
{
	if (df->finished)
		return 0;
	if (!df->runs[KP_DIFF_BASE] || !df->runs[KP_DIFF_NEW])
		return kp_diag_set(d, -ENODATA, "%s has no run",
				   df->runs[KP_DIFF_BASE] ? "NEW" : "BASE");
	for (size_t i = 0; i < df->nfns; i++) {
		const struct sums *s = &df->sums[i];
		double all = s->count[KP_DIFF_TOTAL][0] + s->count[KP_DIFF_TOTAL][1];

		df->fns[i].interrupt = all > 0 && s->irq > all / 2;
	}
	for (int col = 0; col < 2; col++) {
		struct order_ctx c = {df, col};

		finish_column(df, col);
		df->order[col] = kp_xmalloc((df->nfns ? df->nfns : 1) * sizeof(uint32_t));
		for (size_t i = 0; i < df->nfns; i++)
			df->order[col][i] = (uint32_t)i;
		qsort_r(df->order[col], df->nfns, sizeof(uint32_t), by_change, &c);
	}
	df->finished = true;
	return 0;
}

struct kp_diff *kp_diff_compare(const struct kp_profile *base, const struct kp_profile *new_,
				const struct kp_diff_values v[2], const struct kp_diff_opts *o,
				struct kp_diag *d)
{
	struct kp_diff *df = kp_diff_new(o);
	const struct kp_profile *p[2] = {base, new_};
	struct kp_diag rd = {{0}};

	for (int s = 0; s < 2; s++)
		if (kp_diff_add_run(df, s, p[s], &v[s], &rd) < 0) {
			kp_diag_set(d, -EINVAL, "%s: %s", s ? "NEW" : "BASE", rd.msg);
			kp_diff_free(df);
			return NULL;
		}
	kp_diff_finish(df, d);
	return df;
}

void kp_diff_free(struct kp_diff *df)
{
	if (!df)
		return;
	kp_strtab_free(df->names);
	kp_u64map_fini(&df->index);
	free(df->fns);
	free(df->sums);
	free(df->side[0]);
	free(df->side[1]);
	free(df->stamp);
	free(df->irq_entry);
	free(df->order[0]);
	free(df->order[1]);
	free(df);
}

double kp_diff_alpha(const struct kp_diff *df)
{
	return df->alpha;
}

double kp_diff_dispersion(const struct kp_diff *df)
{
	return df->dispersion;
}

size_t kp_diff_runs(const struct kp_diff *df, enum kp_diff_side side)
{
	return df->runs[side];
}

struct kp_stats_prior kp_diff_prior(const struct kp_diff *df, enum kp_diff_column col)
{
	return df->prior[col];
}

kp_count kp_diff_total(const struct kp_diff *df, enum kp_diff_side side, unsigned *decimals)
{
	if (decimals)
		*decimals = df->decimals[side];
	return df->total[side];
}

double kp_diff_total_count(const struct kp_diff *df, enum kp_diff_side side)
{
	return df->count_total[side];
}

size_t kp_diff_ntested(const struct kp_diff *df, enum kp_diff_column col)
{
	return df->ntested[col];
}

size_t kp_diff_nfunctions(const struct kp_diff *df)
{
	return df->nfns;
}

const struct kp_diff_function *kp_diff_function(const struct kp_diff *df, size_t i)
{
	return &df->fns[i];
}

const struct kp_diff_function *kp_diff_find(const struct kp_diff *df, const char *name, size_t len,
					    enum kp_frame_kind kind)
{
	uint32_t id = kp_strtab_find(df->names, name, len);
	uint64_t idx;

	if (!id ||
	    !kp_u64map_get(&df->index, (uint64_t)id * KINDS + ((unsigned)kind & (KINDS - 1)), &idx))
		return NULL;
	return &df->fns[idx];
}

const uint32_t *kp_diff_order(const struct kp_diff *df, enum kp_diff_column col)
{
	return df->order[col];
}

void kp_diff_gate(const struct kp_diff *df, double points, struct kp_diff_gate *g)
{
	size_t nf = df->nfns ? df->nfns : 1, m = 0;
	double *p = kp_xmalloc(nf * sizeof(*p));
	uint32_t *member = kp_xmalloc(nf * sizeof(*member)); /* family position + 1, 0: out */
	bool pass_over = !df->gate_interrupts && !kp_diff_measured(df);

	memset(g, 0, sizeof(*g));
	g->points = points;
	g->fn = kp_xmalloc(nf * sizeof(*g->fn));
	g->p = kp_xmalloc(nf * sizeof(*g->p));
	for (size_t i = 0; i < df->nfns; i++) {
		const struct kp_diff_change *ch = &df->fns[i].col[KP_DIFF_TOTAL];

		/* the mean of the two shares: a growth above points leaves NEW's
		 * share above points, and so the mean above points / 2. With one
		 * run a side the family stays the whole column: the binomial
		 * model cannot be checked against runs, and a function that
		 * varies more than it says gets through a small family more
		 * often (bench-gate: 6.5% false alarms against 2.5%) */
		member[i] = 0;
		if (ch->tested &&
		    (!kp_diff_measured(df) || (ch->share[0] + ch->share[1]) / 2 > points / 2)) {
			p[m++] = ch->p;
			member[i] = (uint32_t)m;
		}
	}
	kp_stats_holm(p, m, p);
	g->family = m;
	g->resolution = resolution(df, m);
	/* regressions first, then what is passed over, each in the total
	 * column's order (by |change|: the growths keep it) */
	for (int skipped = 0; skipped < 2; skipped++)
		for (size_t k = 0; k < df->nfns; k++) {
			uint32_t i = df->order[KP_DIFF_TOTAL][k];
			double adj = member[i] ? p[member[i] - 1] : 1;

			if (!(df->fns[i].col[KP_DIFF_TOTAL].change > points) || adj > df->alpha ||
			    (pass_over && df->fns[i].interrupt) != (skipped == 1))
				continue;
			g->fn[g->n + g->nskipped] = i;
			g->p[g->n + g->nskipped] = adj;
			if (skipped)
				g->nskipped++;
			else
				g->n++;
		}
	free(p);
	free(member);
}

void kp_diff_gate_fini(struct kp_diff_gate *g)
{
	free(g->fn);
	free(g->p);
	memset(g, 0, sizeof(*g));
}
