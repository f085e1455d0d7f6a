/* kp_diff: one pass over each profile's samples adds every sample's value
 * and count to the self column of its innermost frame and to the total
 * column of each distinct function on its stack; functions of both
 * profiles meet by (name, kind) in one table. Then each column is tested
 * and corrected (flamegraph/stats.h). */
#include "flamegraph/diff.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/stats.h"
#include "util/strtab.h"
#include "util/u64map.h"
#include "util/xalloc.h"

#define NONE UINT32_MAX
/* a (function, kind) pair of one profile, for its cache */
#define KINDS 8

/* Exact sums of one function: [column][side]. */
struct sums {
	kp_count value[2][2];
	kp_count count[2][2];
};

struct kp_diff {
	struct kp_strtab *names;
	struct kp_u64map index; /* name id * KINDS + kind -> function index */
	struct kp_diff_function *fns;
	struct sums *sums;
	uint64_t *stamp; /* the last sample (epoch) that counted a function's total */
	size_t nfns, cap;
	uint64_t epoch;
	uint32_t *order[2];
	kp_count total[2], count_total[2];
	unsigned decimals[2], count_decimals[2];
	size_t ntested[2];
	double alpha, dispersion;
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
		/* the arrays beside fns grow with it */
		kp_xgrow(&df->fns, &df->cap, df->nfns + 1, sizeof(*df->fns));
		df->sums = kp_xrealloc(df->sums, df->cap * sizeof(*df->sums));
		df->stamp = kp_xrealloc(df->stamp, df->cap * sizeof(*df->stamp));
	}
	fn = &df->fns[df->nfns];
	memset(fn, 0, sizeof(*fn));
	memset(&df->sums[df->nfns], 0, sizeof(*df->sums));
	df->stamp[df->nfns] = 0;
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

static void add(struct kp_diff *df, uint32_t fi, int col, int side, kp_count value, kp_count count)
{
	df->sums[fi].value[col][side] += value;
	df->sums[fi].count[col][side] += count;
}

/* Adds every sample of p to side. */
static void add_profile(struct kp_diff *df, const struct kp_profile *p, int side, size_t v,
			size_t c)
{
	size_t nfn = kp_profile_nfunctions(p);
	uint32_t *cache = kp_xmalloc((nfn ? nfn : 1) * KINDS * sizeof(*cache));
	uint32_t unknown = NONE;

	memset(cache, 0xff, (nfn ? nfn : 1) * KINDS * sizeof(*cache));
	for (size_t i = 0; i < kp_profile_nsamples(p); i++) {
		struct kp_profile_root root;
		const kp_count *values;
		size_t n;
		const uint32_t *locs = kp_profile_sample(p, i, &root, &n, &values);
		kp_count value = values[v], count = values[c];
		uint32_t leaf = NONE;

		df->epoch++;
		for (size_t j = 0; j < n; j++) {
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
				if (df->stamp[fi] != df->epoch) {
					df->stamp[fi] = df->epoch;
					add(df, fi, KP_DIFF_TOTAL, side, value, count);
				}
				leaf = fi;
			}
		}
		if (leaf != NONE)
			add(df, leaf, KP_DIFF_SELF, side, value, count);
	}
	free(cache);
}

/* The shares, tests and Holm's adjustment of one column. */
static void finish_column(struct kp_diff *df, int col)
{
	double *p = kp_xmalloc((df->nfns ? df->nfns : 1) * sizeof(*p));
	uint32_t *tested = kp_xmalloc((df->nfns ? df->nfns : 1) * sizeof(*tested));
	size_t m = 0;

	for (size_t i = 0; i < df->nfns; i++) {
		struct kp_diff_change *ch = &df->fns[i].col[col];
		const struct sums *s = &df->sums[i];
		struct kp_ztest t;

		for (int side = 0; side < 2; side++) {
			ch->value[side] = s->value[col][side];
			ch->count[side] =
				kp_count_double(s->count[col][side], df->count_decimals[side]);
			/* the ratio first: value <= total keeps it <= 1, so the
			 * share is <= 100 (100 * value, rounded, can pass 100 *
			 * total for counts past 2^53 / 100) */
			ch->share[side] = 100 * (kp_count_double(s->value[col][side], 0) /
						 kp_count_double(df->total[side], 0));
		}
		ch->change = ch->share[KP_DIFF_NEW] - ch->share[KP_DIFF_BASE];
		ch->p = ch->p_adj = 1;
		ch->tested = ch->count[KP_DIFF_BASE] > 0 || ch->count[KP_DIFF_NEW] > 0;
		if (!ch->tested)
			continue;
		t = kp_stats_two_proportions(
			ch->count[KP_DIFF_BASE], kp_diff_total_count(df, KP_DIFF_BASE),
			ch->count[KP_DIFF_NEW], kp_diff_total_count(df, KP_DIFF_NEW));
		/* with overdispersion the counts vary more than binomially:
		 * the same difference is fewer standard errors away */
		ch->z = t.z / sqrt(df->dispersion);
		ch->p = df->dispersion == 1 ? t.p : kp_stats_normal_p(ch->z);
		p[m] = ch->p;
		tested[m++] = (uint32_t)i;
	}
	kp_stats_holm(p, m, p);
	for (size_t k = 0; k < m; k++) {
		struct kp_diff_change *ch = &df->fns[tested[k]].col[col];

		ch->p_adj = p[k];
		ch->significant = p[k] <= df->alpha;
	}
	df->ntested[col] = m;
	free(p);
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

static int check_value(const struct kp_profile *p, size_t v, const char *side, const char *what,
		       struct kp_diag *d)
{
	if (v >= kp_profile_nvalues(p))
		return kp_diag_set(d, -EINVAL, "%s: no value %zu for the %s", side, v, what);
	if (kp_profile_total(p, v) == 0)
		return kp_diag_set(d, -ENODATA, "%s: the %s add up to 0", side, what);
	return 0;
}

struct kp_diff *kp_diff_new(const struct kp_profile *base, const struct kp_profile *new_,
			    const struct kp_diff_opts *o, struct kp_diag *d)
{
	const struct kp_profile *ps[2] = {base, new_};
	static const char *const sides[2] = {"BASE", "NEW"};
	struct kp_diff *df;

	for (int s = 0; s < 2; s++)
		if (check_value(ps[s], o->value[s], sides[s], "shares", d) < 0 ||
		    check_value(ps[s], o->count[s], sides[s], "sample counts", d) < 0)
			return NULL;
	df = kp_xcalloc(1, sizeof(*df));
	df->names = kp_strtab_new();
	kp_u64map_init(&df->index);
	df->alpha = o->alpha > 0 && o->alpha < 1 ? o->alpha : 0.01;
	df->dispersion = o->dispersion > 0 && isfinite(o->dispersion) ? o->dispersion : 1;
	for (int s = 0; s < 2; s++) {
		df->total[s] = kp_profile_total(ps[s], o->value[s]);
		df->decimals[s] = kp_profile_value_type(ps[s], o->value[s])->decimals;
		df->count_total[s] = kp_profile_total(ps[s], o->count[s]);
		df->count_decimals[s] = kp_profile_value_type(ps[s], o->count[s])->decimals;
		add_profile(df, ps[s], s, o->value[s], o->count[s]);
	}
	for (int col = 0; col < 2; col++) {
		struct order_ctx c = {df, col};

		finish_column(df, col);
		df->order[col] = kp_xmalloc((df->nfns ? df->nfns : 1) * sizeof(uint32_t));
		for (size_t i = 0; i < df->nfns; i++)
			df->order[col][i] = (uint32_t)i;
		qsort_r(df->order[col], df->nfns, sizeof(uint32_t), by_change, &c);
	}
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
	free(df->stamp);
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

kp_count kp_diff_total(const struct kp_diff *df, enum kp_diff_side side, unsigned *decimals)
{
	if (decimals)
		*decimals = df->decimals[side];
	return df->total[side];
}

double kp_diff_total_count(const struct kp_diff *df, enum kp_diff_side side)
{
	return kp_count_double(df->count_total[side], df->count_decimals[side]);
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

const uint32_t *kp_diff_order(const struct kp_diff *df, enum kp_diff_column col)
{
	return df->order[col];
}

size_t kp_diff_regressions(const struct kp_diff *df, double points, uint32_t **out)
{
	uint32_t *r = kp_xmalloc((df->nfns ? df->nfns : 1) * sizeof(*r));
	size_t n = 0;

	/* the total column's order is by |change|: the growths keep it */
	for (size_t k = 0; k < df->nfns; k++) {
		uint32_t i = df->order[KP_DIFF_TOTAL][k];
		const struct kp_diff_change *ch = &df->fns[i].col[KP_DIFF_TOTAL];

		if (ch->change > points && ch->significant)
			r[n++] = i;
	}
	if (out)
		*out = r;
	else
		free(r);
	return n;
}
