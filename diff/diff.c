/* kp_diff: one pass over each run's samples adds every sample's value and
 * count to the self column of its innermost frame and to the total
 * column of each distinct function on its stack; functions of all runs
 * meet by (name, kind) in one table. At the end of a run each function's
 * count in it joins the side's sums (the count, and its square over the
 * run's total, which is what the dispersion needs). kp_diff_finish then
 * tests and corrects each column (diff_stats.c); the gate is diff_gate.c's. */
#include "diff/diffP.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile/run_meta.h"
#include "util/strtab.h"
#include "util/u64map.h"
#include "util/xalloc.h"

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
		kp_diff_stats_finish_time(df);
	for (int col = 0; col < 2; col++) {
		struct order_ctx c = {df, col};

		kp_diff_stats_finish_column(df, col);
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
