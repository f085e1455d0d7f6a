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

#include "profile/run_meta.h"
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
	kp_count run_cpu;  /* the total column's CPU nanoseconds in the current run */
	kp_count irq;	   /* the run's total-column counts taken inside an interrupt */
};

/* What a function's runs give the test, as doubles made once a run:
 * [column][side]. */
struct sums {
	double count[2][2];  /* sum over runs of x */
	double sq[2][2];     /* sum over runs of x^2 / n, n the run's total count */
	double t[2], tsq[2]; /* [side]: sum over runs of the total column's CPU
			      * nanoseconds t, and of t^2 (the time gate) */
	double irq;	     /* counts inside an interrupt, both sides */
};

/* Where a function B was below a function A in a sample (B's outermost
 * frame deeper than A's): what A's total holds of B's, per run, for the
 * gate's attribution. Sums over runs, [side]: */
struct pair_sums {
	uint32_t a, b;
	double x[2], sq[2], cross[2];	/* x_AB, x_AB^2 / n, x_A x_AB / n (counts) */
	double t[2], tsq[2], tcross[2]; /* t_AB, t_AB^2, t_A t_AB (CPU ns) */
};

/* Pairs are kept among a run's functions holding at least this fraction of
 * its samples (total), at most PAIR_FUNCTIONS of them, the largest: what
 * the gate can name holds more, and a pair left out of a run holds less
 * than the smaller function's count there. */
#define PAIR_MIN_SHARE 0.002
#define PAIR_FUNCTIONS 64

/* One function's count and CPU time in one run (its total column), kept
 * for the gate's permutation test: the runs relabelled, every function's
 * test is made again from these. */
struct run_entry {
	uint32_t fn, run;
	double x, t; /* the count, the CPU nanoseconds */
};

/* One run's total count and side. */
struct run_info {
	double n;
	int side;
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
	struct kp_stats_prior time_prior; /* of the CPU time a run's dispersions */
	struct pair_sums *pairs;
	size_t npairs, pairs_cap;
	struct kp_u64map pair_index; /* a << 32 | b -> pairs index */
	size_t ended_runs;	     /* runs whose recording says the command exited */
	struct run_entry *entries;   /* every run's functions, run by run */
	size_t nentries, entries_cap;
	struct run_info *run_info; /* [run], in the order added */
	size_t nrun_info;
	double alpha, dispersion;
	bool gate_interrupts, attribute, finished;
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

/* True for a kernel function that re-enables interrupts (the kernel names
 * them so: local_irq_enable's native_irq_enable and its paravirt forms,
 * pvm_irq_enable, xen_irq_enable, __raw_callee_save_*; the
 * *_irqrestore unlocks; and the scheduler's finish_task_switch, where a
 * task switched back in does it). An interrupt that came while they were off,
 * the sampling timer's among them, is delivered there: the samples at it
 * are time its callers spent with interrupts off, which their own totals
 * hold, and how many land on it follows how many interrupts the machine
 * takes. Interrupt work, to the gate. */
static bool enables_interrupts(const char *name, size_t len)
{
	/* finish_task_switch: where a task switched back in turns interrupts
	 * on again (finish_lock_switch, inlined; .isra and the like are
	 * compiler clones of it) */
	static const char *const part[] = {"irq_enable", "irqrestore", "irq_restore",
					   "finish_task_switch"};

	for (size_t i = 0; i < sizeof(part) / sizeof(part[0]); i++) {
		size_t n = strlen(part[i]);

		for (size_t at = 0; at + n <= len; at++)
			if (memcmp(name + at, part[i], n) == 0)
				return true;
	}
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
	df->irq_entry[df->nfns] = kind != KP_FRAME_KERNEL	  ? 0
				  : is_interrupt_entry(name, len) ? 1
				  : enables_interrupts(name, len) ? 2
								  : 0;
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
	if (r->cpu >= 0) {
		s->cpu[col] += values[r->cpu];
		if (col == KP_DIFF_TOTAL)
			s->run_cpu += values[r->cpu];
	}
}

static int by_run_count_desc(const void *pa, const void *pb, void *arg)
{
	const struct side_sums *ss = arg;
	kp_count a = ss[*(const uint32_t *)pa].run[KP_DIFF_TOTAL];
	kp_count b = ss[*(const uint32_t *)pb].run[KP_DIFF_TOTAL];

	return a > b ? -1 : a < b;
}

static struct pair_sums *pair_of(struct kp_diff *df, uint32_t a, uint32_t b)
{
	uint64_t key = (uint64_t)a << 32 | b, idx;

	if (kp_u64map_get(&df->pair_index, key, &idx))
		return &df->pairs[idx];
	kp_xgrow(&df->pairs, &df->pairs_cap, df->npairs + 1, sizeof(*df->pairs));
	memset(&df->pairs[df->npairs], 0, sizeof(*df->pairs));
	df->pairs[df->npairs].a = a;
	df->pairs[df->npairs].b = b;
	kp_u64map_put(&df->pair_index, key, df->npairs);
	return &df->pairs[df->npairs++];
}

/* The pairs of one run (before its counts join the side's sums): among
 * the run's largest functions (PAIR_MIN_SHARE, PAIR_FUNCTIONS), for each
 * sample, each function below another's outermost frame. A second pass
 * over the samples, made only for the gate's attribution. */
static void add_pairs(struct kp_diff *df, const struct kp_profile *p, const struct run *r,
		      const uint32_t *cache, size_t ncache, double n)
{
	struct side_sums *ss = df->side[r->side];
	uint32_t *heavy = kp_xmalloc((df->nfns ? df->nfns : 1) * sizeof(*heavy));
	uint32_t *slot = kp_xmalloc((df->nfns ? df->nfns : 1) * sizeof(*slot));
	size_t nh = 0;
	double *mx, *mt;
	uint32_t onstack[PAIR_FUNCTIONS];

	for (size_t f = 0; f < df->nfns; f++) {
		slot[f] = NONE;
		if (kp_count_double(ss[f].run[KP_DIFF_TOTAL], r->count_decimals) >=
		    PAIR_MIN_SHARE * n)
			heavy[nh++] = (uint32_t)f;
	}
	qsort_r(heavy, nh, sizeof(*heavy), by_run_count_desc, ss);
	if (nh > PAIR_FUNCTIONS)
		nh = PAIR_FUNCTIONS;
	if (nh < 2) {
		free(heavy);
		free(slot);
		return;
	}
	for (size_t h = 0; h < nh; h++)
		slot[heavy[h]] = (uint32_t)h;
	mx = kp_xcalloc(nh * nh, sizeof(*mx));
	mt = kp_xcalloc(nh * nh, sizeof(*mt));
	for (size_t i = 0; i < kp_profile_nsamples(p); i++) {
		struct kp_profile_root root;
		const kp_count *values;
		size_t nloc, m = 0;
		const uint32_t *locs = kp_profile_sample(p, i, &root, &nloc, &values);
		double x = kp_count_double(values[r->count], r->count_decimals);
		double t = r->cpu >= 0 ? kp_count_double(values[r->cpu], 0) : 0;

		df->epoch++;
		for (size_t j = 0; j < nloc; j++) {
			size_t nfr;
			const struct kp_profile_frame *fr =
				kp_profile_frames(p, locs[j], &nfr, NULL);

			for (size_t k = 0; fr && k < nfr; k++) {
				size_t c = (size_t)fr[k].function * KINDS +
					   ((unsigned)fr[k].kind & (KINDS - 1));
				uint32_t fi = c < ncache ? cache[c] : NONE;

				if (fi == NONE || slot[fi] == NONE || df->stamp[fi] == df->epoch)
					continue;
				df->stamp[fi] = df->epoch;
				/* outermost first: every function before is above it */
				for (size_t a = 0; a < m; a++) {
					mx[onstack[a] * nh + slot[fi]] += x;
					mt[onstack[a] * nh + slot[fi]] += t;
				}
				onstack[m++] = slot[fi];
			}
		}
	}
	for (size_t a = 0; a < nh; a++)
		for (size_t b = 0; b < nh; b++) {
			double x = mx[a * nh + b], t = mt[a * nh + b];
			double xa =
				kp_count_double(ss[heavy[a]].run[KP_DIFF_TOTAL], r->count_decimals);
			double ta = kp_count_double(ss[heavy[a]].run_cpu, 0);
			struct pair_sums *ps;
			int s = r->side;

			if (!(x > 0))
				continue;
			ps = pair_of(df, heavy[a], heavy[b]);
			ps->x[s] += x;
			ps->sq[s] += x * x / n;
			ps->cross[s] += xa * x / n;
			ps->t[s] += t;
			ps->tsq[s] += t * t;
			ps->tcross[s] += ta * t;
		}
	free(mx);
	free(mt);
	free(heavy);
	free(slot);
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
				in_irq |= df->irq_entry[fi] == 1;
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
	if (df->attribute)
		add_pairs(df, p, r, cache, (nfn ? nfn : 1) * KINDS, n);
	free(cache);
	for (size_t f = 0; f < df->nfns; f++) {
		struct side_sums *ss = &df->side[r->side][f];
		struct sums *s = &df->sums[f];
		double t = kp_count_double(ss->run_cpu, 0);

		s->t[r->side] += t;
		s->tsq[r->side] += t * t;
		ss->run_cpu = 0;

		if (ss->run[KP_DIFF_TOTAL] || t > 0) {
			if (df->nentries == df->entries_cap) {
				df->entries_cap = df->entries_cap ? 2 * df->entries_cap : 1024;
				df->entries = kp_xrealloc(df->entries,
							  df->entries_cap * sizeof(*df->entries));
			}
			df->entries[df->nentries++] = (struct run_entry){
				(uint32_t)f, (uint32_t)df->nrun_info,
				kp_count_double(ss->run[KP_DIFF_TOTAL], r->count_decimals), t};
		}
		for (int col = 0; col < 2; col++) {
			double x = kp_count_double(ss->run[col], r->count_decimals);

			s->count[col][r->side] += x;
			s->sq[col][r->side] += x * x / n;
			ss->run[col] = 0;
		}
		s->irq += kp_count_double(ss->irq, r->count_decimals);
		ss->irq = 0;
	}
	df->run_info = kp_xrealloc(df->run_info, (df->nrun_info + 1) * sizeof(*df->run_info));
	df->run_info[df->nrun_info++] = (struct run_info){n, r->side};
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
	df->attribute = o->attribute;
	kp_u64map_init(&df->pair_index);
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
	{
		struct kp_run_meta m;

		kp_run_meta_read(p, &m);
		df->ended_runs += m.end == KP_RUN_END_EXIT;
	}
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

bool kp_diff_time_tested(const struct kp_diff *df)
{
	return df->runs[0] >= 2 && df->runs[1] >= 2 && kp_diff_has_seconds(df);
}

bool kp_diff_ran_to_end(const struct kp_diff *df)
{
	return df->ended_runs == df->runs[0] + df->runs[1];
}

struct kp_stats_prior kp_diff_time_prior(const struct kp_diff *df)
{
	return df->time_prior;
}

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

static double measured_dispersion(const struct kp_diff *df, const double count[2],
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

static double time_dispersion(const struct kp_diff *df, const double t[2], const double tsq[2],
			      double *dof)
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
static void take_dispersion(struct kp_stats_prior prior, double phi, double dof, double floor,
			    double *disp, double *tdf)
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

static void share_test(const struct kp_diff *df, const double count[2], struct kp_diff_change *ch)
{
	struct sides sd = observed_sides(df);

	share_test_at(&sd, count, ch);
}

/* The shares, seconds, tests and Holm's adjustment of one column. */
static void finish_column(struct kp_diff *df, int col)
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
			phi[m] = measured ? measured_dispersion(df, s->count[col], s->sq[col],
								&dof[m])
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
			take_dispersion(df->prior[col], phi[k], dof[k], df->dispersion,
					&ch->dispersion, &ch->df);
		} else {
			ch->dispersion = df->prior[col].var;
			ch->df = HUGE_VAL;
		}
		share_test(df, ch->count, ch);
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

static void time_test(const struct kp_diff *df, const double t[2], struct kp_diff_time *tm)
{
	struct sides sd = observed_sides(df);

	time_test_at(&sd, t, tm);
}

/* Every function's CPU time a run tested (several runs a side, CPU
 * nanoseconds in every run): quasi-Poisson dispersions, moderated as the
 * shares' are. */
static void finish_time(struct kp_diff *df)
{
	size_t nf = df->nfns ? df->nfns : 1, m = 0;
	double *phi = kp_xmalloc(nf * sizeof(*phi)), *dof = kp_xmalloc(nf * sizeof(*dof));
	uint32_t *tested = kp_xmalloc(nf * sizeof(*tested));

	for (size_t i = 0; i < df->nfns; i++) {
		const struct sums *s = &df->sums[i];

		df->fns[i].time = (struct kp_diff_time){.tested = false};
		if (s->t[0] > 0 || s->t[1] > 0) {
			phi[m] = time_dispersion(df, s->t, s->tsq, &dof[m]);
			tested[m++] = (uint32_t)i;
		}
	}
	df->time_prior = kp_stats_variance_prior(phi, dof, m);
	for (size_t k = 0; k < m; k++) {
		struct kp_diff_time *tm = &df->fns[tested[k]].time;

		take_dispersion(df->time_prior, phi[k], dof[k], 0, &tm->dispersion, &tm->df);
		time_test(df, df->sums[tested[k]].t, tm);
		tm->tested = true;
	}
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

		df->fns[i].interrupt = (all > 0 && s->irq > all / 2) || df->irq_entry[i] == 2;
	}
	if (kp_diff_time_tested(df))
		finish_time(df);
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
	free(df->pairs);
	kp_u64map_fini(&df->pair_index);
	free(df->entries);
	free(df->run_info);
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

/* The one-sided p-value of a t (or z) on df degrees of freedom: P(T >= t). */
static double upper_p(double t, double dof)
{
	double p = t ? kp_stats_t_p(t, dof) : 1;

	return t > 0 ? p / 2 : 1 - p / 2;
}

/* The one-sided quantile: the t with P(T >= t) = p. */
static double upper_quantile(double p, double dof)
{
	return kp_stats_t_quantile(2 * p, dof);
}

double kp_diff_gate_p(const struct kp_diff *df, enum kp_diff_measure measure, size_t i,
		      double *growth)
{
	const struct kp_diff_function *fn = &df->fns[i];

	if (measure == KP_DIFF_TIME) {
		*growth = 100 * fn->time.growth;
		return fn->time.tested ? fn->time.p : 1;
	}
	*growth = fn->col[KP_DIFF_TOTAL].change;
	return fn->col[KP_DIFF_TOTAL].tested
		       ? upper_p(fn->col[KP_DIFF_TOTAL].z, fn->col[KP_DIFF_TOTAL].df)
		       : 1;
}

/* Whether function i is in the gate's family at points. */
static bool in_family(const struct kp_diff *df, enum kp_diff_measure measure, double points,
		      size_t i)
{
	if (measure == KP_DIFF_TIME) {
		const struct kp_diff_time *tm = &df->fns[i].time;
		const struct kp_diff_change *ch = &df->fns[i].col[KP_DIFF_TOTAL];
		double kb = (double)df->runs[0], kn = (double)df->runs[1];
		double samples = (ch->count[0] + ch->count[1]) / (kb + kn);

		if (!tm->tested || !(samples > 0))
			return false;
		/* a growth of points percent at the pooled samples a run,
		 * against the least noise a sampled time has (Poisson: one
		 * sample's variance a sample): significant alone (above the
		 * normal's one-sided quantile of alpha)? Smaller functions
		 * cannot show such a growth at these runs at all; the pooled
		 * count says nothing of the direction. */
		return points / 100 * sqrt(samples / (1 / kb + 1 / kn)) >
		       upper_quantile(df->alpha, HUGE_VAL);
	}
	{
		const struct kp_diff_change *ch = &df->fns[i].col[KP_DIFF_TOTAL];
		double mean = (ch->share[0] + ch->share[1]) / 2;

		/* a growth above points needs NEW's share above points, and
		 * BASE's below 100 - points: the mean in between, with half
		 * of points each side. With one run a side the family stays
		 * the whole column: the binomial model cannot be checked
		 * against runs, and a function that varies more than it says
		 * gets through a small family more often (bench-gate: 6.5%
		 * false alarms against 2.5%) */
		return ch->tested &&
		       (!kp_diff_measured(df) || (mean > points / 2 && mean < 100 - points / 2));
	}
}

/* The growth of A's total (share or time) less the part of it under B
 * (pair ps): tested as A's own is, with A' = A - AB run by run. True when
 * that rest is itself a regression (grew by more than points, one-sided
 * p times the family's size at most alpha: Bonferroni, the strictest
 * step of Holm's). */
static bool rest_grew(const struct kp_diff *df, enum kp_diff_measure measure, double points,
		      size_t m, uint32_t a, const struct pair_sums *ps)
{
	const struct sums *s = &df->sums[a];
	double dof, phi, growth, p;

	if (measure == KP_DIFF_TIME) {
		struct kp_diff_time tm = {0};
		double t[2], tsq[2];

		for (int side = 0; side < 2; side++) {
			t[side] = s->t[side] - ps->t[side];
			tsq[side] = s->tsq[side] - 2 * ps->tcross[side] + ps->tsq[side];
		}
		phi = time_dispersion(df, t, tsq, &dof);
		take_dispersion(df->time_prior, phi, dof, 0, &tm.dispersion, &tm.df);
		time_test(df, t, &tm);
		/* of A's own time: would A's growth, B's part taken out, still
		 * pass points percent of A? */
		growth = s->t[0] > 0
				 ? 100 * (tm.mean[1] - tm.mean[0]) / (s->t[0] / (double)df->runs[0])
				 : HUGE_VAL;
		p = tm.p;
	} else {
		struct kp_diff_change ch = {0};
		double x[2], sq[2];

		for (int side = 0; side < 2; side++) {
			x[side] = s->count[KP_DIFF_TOTAL][side] - ps->x[side];
			sq[side] = s->sq[KP_DIFF_TOTAL][side] - 2 * ps->cross[side] + ps->sq[side];
		}
		if (kp_diff_measured(df)) {
			phi = measured_dispersion(df, x, sq, &dof);
			take_dispersion(df->prior[KP_DIFF_TOTAL], phi, dof, df->dispersion,
					&ch.dispersion, &ch.df);
		} else {
			ch.dispersion = df->prior[KP_DIFF_TOTAL].var;
			ch.df = HUGE_VAL;
		}
		share_test(df, x, &ch);
		growth = 100 * (x[1] / df->count_total[1] - x[0] / df->count_total[0]);
		p = upper_p(ch.z, ch.df);
	}
	return growth > points && p * (double)m <= df->alpha;
}

/* The via of each of the gate's candidates cand[0..nc) (NONE: named):
 * a candidate whose growth the growth under another candidate below it
 * explains. A chain (A above B above C, C the change) resolves to a
 * descendant that is itself named where there is one. */
static void attribute(const struct kp_diff *df, enum kp_diff_measure measure, double points,
		      size_t m, const uint32_t *cand, size_t nc, uint32_t *via)
{
	for (size_t i = 0; i < nc; i++) {
		double best = -HUGE_VAL;

		via[i] = NONE;
		for (size_t j = 0; df->attribute && j < nc; j++) {
			uint64_t key = (uint64_t)cand[i] << 32 | cand[j], idx;
			const struct pair_sums *ps;
			double under;

			if (j == i || !kp_u64map_get(&df->pair_index, key, &idx))
				continue;
			ps = &df->pairs[idx];
			if (rest_grew(df, measure, points, m, cand[i], ps))
				continue;
			/* the descendant whose part grew most */
			under = measure == KP_DIFF_TIME ? ps->t[1] / (double)df->runs[1] -
								  ps->t[0] / (double)df->runs[0]
							: ps->x[1] / df->count_total[1] -
								  ps->x[0] / df->count_total[0];
			if (under > best) {
				best = under;
				via[i] = (uint32_t)j;
			}
		}
	}
	/* follow each chain to a named one (at most nc steps: a cycle of
	 * functions each under the other names them all) */
	for (size_t i = 0; i < nc; i++) {
		uint32_t k = via[i];

		for (size_t step = 0; k != NONE && via[k] != NONE && step < nc; step++)
			k = via[k];
		if (k != NONE && via[k] != NONE)
			k = NONE;
		via[i] = k;
	}
	for (size_t i = 0; i < nc; i++)
		if (via[i] != NONE && via[via[i]] != NONE)
			via[i] = NONE;
}

/* Whether B's samples are A's (pair ps, B below A): every sample of B is
 * under A, in both builds (PRIVATE_SHARE of them: an unwinding glitch
 * aside), and B holds at least half of A's: A is B's driver, B A's
 * helper, and what a profile shows of A's change and of B's is the same
 * (samples cannot tell "A calls B more" from "B is slower a call"). */
#define PRIVATE_SHARE 0.99
static bool holds_privately(const struct kp_diff *df, const struct pair_sums *ps)
{
	const struct sums *a = &df->sums[ps->a], *b = &df->sums[ps->b];

	for (int side = 0; side < 2; side++)
		if (!(ps->x[side] >= PRIVATE_SHARE * b->count[KP_DIFF_TOTAL][side]))
			return false;
	return ps->x[0] + ps->x[1] >= (a->count[KP_DIFF_TOTAL][0] + a->count[KP_DIFF_TOTAL][1]) / 2;
}

static double pooled_total(const struct kp_diff *df, uint32_t f)
{
	return df->sums[f].count[KP_DIFF_TOTAL][0] + df->sums[f].count[KP_DIFF_TOTAL][1];
}

/* Each named candidate (via NONE) climbs to the outermost candidate that
 * holds it privately (holds_privately), step by step (a library call in a
 * function, the system call in the library call, ...): the change is
 * named there. What was explained by the named one, and the named one,
 * are then listed under the holder: within[] set for those below it. */
static void name_holders(const struct kp_diff *df, const uint32_t *cand, size_t nc, uint32_t *via,
			 uint8_t *within)
{
	for (size_t b = 0; b < nc; b++) {
		size_t top = b;

		if (via[b] != NONE)
			continue;
		for (size_t step = 0; step < nc; step++) {
			size_t best = SIZE_MAX;
			double most = pooled_total(df, cand[top]);

			for (size_t a = 0; a < nc; a++) {
				uint64_t key = (uint64_t)cand[a] << 32 | cand[top], idx;

				if (a == top || pooled_total(df, cand[a]) <= most ||
				    !kp_u64map_get(&df->pair_index, key, &idx) ||
				    !holds_privately(df, &df->pairs[idx]))
					continue;
				most = pooled_total(df, cand[a]);
				best = a;
			}
			if (best == SIZE_MAX)
				break;
			top = best;
		}
		if (top == b)
			continue;
		for (size_t i = 0; i < nc; i++)
			if (i != top && (via[i] == b || i == b)) {
				uint64_t key = (uint64_t)cand[top] << 32 | cand[i], idx;

				via[i] = (uint32_t)top;
				within[i] = kp_u64map_get(&df->pair_index, key, &idx);
			}
		via[top] = NONE;
		within[top] = 0;
	}
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

			take_dispersion(prior, pm->phi[j], pm->dof[j], 0, &tm.dispersion, &tm.df);
			time_test_at(&sd, a, &tm);
			p[i] = tm.p;
		} else {
			struct kp_diff_change ch = {0};

			take_dispersion(prior, pm->phi[j], pm->dof[j], df->dispersion,
					&ch.dispersion, &ch.df);
			share_test_at(&sd, a, &ch);
			p[i] = upper_p(ch.z, ch.df);
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
				 const uint32_t *fam, size_t m, size_t nfam, double *adj,
				 double *level)
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
	return (upper_quantile(level, dof) + upper_quantile(0.05, dof)) * se;
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
static void detectability(const struct kp_diff *df, struct kp_diff_gate *g, const uint8_t *member)
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
static size_t gate_adjust(const struct kp_diff *df, enum kp_diff_measure measure,
			  const uint32_t *pos, const uint8_t *member, size_t m, double *p,
			  size_t *family, double *level)
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
	nb = permutation_adjust(df, measure, fam, nm, nfam, adj, level);
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

void kp_diff_gate(const struct kp_diff *df, double points, struct kp_diff_gate *g)
{
	kp_diff_gate_measure(df, KP_DIFF_SHARE, points, g);
}

void kp_diff_gate_measure(const struct kp_diff *df, enum kp_diff_measure measure, double points,
			  struct kp_diff_gate *g)
{
	size_t nf = df->nfns ? df->nfns : 1, m = 0, nc = 0;
	double *p = kp_xmalloc(nf * sizeof(*p));
	uint32_t *pos = kp_xmalloc(nf * sizeof(*pos)); /* family position + 1, 0: out */
	uint8_t *member = kp_xcalloc(nf, 1);
	uint32_t *cand = kp_xmalloc(nf * sizeof(*cand)), *via = kp_xmalloc(nf * sizeof(*via));
	double *cand_p = kp_xmalloc(nf * sizeof(*cand_p));
	uint8_t *within = kp_xcalloc(nf, 1);
	bool pass_over = !df->gate_interrupts;

	memset(g, 0, sizeof(*g));
	g->measure = measure;
	g->points = points;
	g->fn = kp_xmalloc(nf * sizeof(*g->fn));
	g->p = kp_xmalloc(nf * sizeof(*g->p));
	g->via = kp_xmalloc(nf * sizeof(*g->via));
	g->within = kp_xcalloc(nf, 1);
	for (size_t i = 0; i < df->nfns; i++) {
		double growth;

		pos[i] = 0;
		if (measure == KP_DIFF_TIME && !kp_diff_time_tested(df))
			continue;
		if (in_family(df, measure, points, i)) {
			p[m++] = kp_diff_gate_p(df, measure, i, &growth);
			pos[i] = (uint32_t)m;
			member[i] = !(pass_over && df->fns[i].interrupt);
		}
	}
	g->family = m;
	g->level = df->alpha / (double)(m ? m : 1);
	g->relabellings = gate_adjust(df, measure, pos, member, m, p, &g->family, &g->level);
	g->resolution = resolution(df, m);
	/* the candidates in the total column's order (by |change|) for
	 * shares, by growth for time */
	for (size_t k = 0; k < df->nfns; k++) {
		uint32_t i = df->order[KP_DIFF_TOTAL][k];
		double adj = pos[i] ? p[pos[i] - 1] : 1, growth;

		kp_diff_gate_p(df, measure, i, &growth);
		if (!(growth > points) || adj > df->alpha)
			continue;
		cand_p[nc] = adj;
		cand[nc++] = i;
	}
	if (measure == KP_DIFF_TIME)
		for (size_t a = 1; a < nc; a++) /* insertion: tens at most */
			for (size_t b = a; b > 0 && df->fns[cand[b]].time.growth >
							    df->fns[cand[b - 1]].time.growth;
			     b--) {
				uint32_t t = cand[b];
				double tp = cand_p[b];

				cand[b] = cand[b - 1];
				cand[b - 1] = t;
				cand_p[b] = cand_p[b - 1];
				cand_p[b - 1] = tp;
			}
	attribute(df, measure, points, g->family, cand, nc, via);
	name_holders(df, cand, nc, via, within);
	/* named, then what is passed over (interrupt work, one run a side),
	 * then what a descendant explains */
	for (int part = 0; part < 3; part++)
		for (size_t c = 0; c < nc; c++) {
			uint32_t i = cand[c];
			bool skip = pass_over && df->fns[i].interrupt;
			int is = skip ? 1 : via[c] != NONE ? 2 : 0;
			size_t at = g->n + g->nskipped + g->nvia;

			if (is != part)
				continue;
			g->fn[at] = i;
			g->p[at] = cand_p[c];
			g->via[at] = is == 2 ? cand[via[c]] : i;
			g->within[at] = within[c];
			if (is == 0)
				g->n++;
			else if (is == 1)
				g->nskipped++;
			else
				g->nvia++;
		}
	detectability(df, g, member);
	free(p);
	free(pos);
	free(member);
	free(cand);
	free(via);
	free(cand_p);
	free(within);
}

void kp_diff_gate_fini(struct kp_diff_gate *g)
{
	free(g->fn);
	free(g->p);
	free(g->via);
	free(g->within);
	memset(g, 0, sizeof(*g));
}
