/* kprof diff's JSON report, for bots, written with jansson (schema in
 * docs/diff.md: fields are added, never changed or removed, within a
 * version). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff_report.h"
#include "util/utf8.h"
#include "util/xalloc.h"

static const char *const side_names[2] = {"base", "new"};

/* s[0..len) as a JSON string: invalid UTF-8 becomes U+FFFD (jansson
 * refuses it). */
static json_t *jstr(const char *s, size_t len)
{
	char *copy = NULL;
	size_t i = 0, k = 0;
	json_t *j;

	while (i < len) {
		uint32_t cp;
		size_t used = kp_utf8_next(s + i, len - i, &cp);

		if (cp == 0xfffd && used == 1 && !copy) {
			/* the first bad byte: from here on, a repaired copy */
			copy = kp_xmalloc(len * 3 + 1);
			memcpy(copy, s, i);
			k = i;
		}
		if (copy) {
			if (cp == 0xfffd && used == 1) {
				memcpy(copy + k, "\xef\xbf\xbd", 3);
				k += 3;
			} else {
				memcpy(copy + k, s + i, used);
				k += used;
			}
		}
		i += used;
	}
	j = copy ? json_stringn(copy, k) : json_stringn(s, len);
	free(copy);
	return j;
}

static json_t *jcstr(const char *s)
{
	return jstr(s, strlen(s));
}

/* An exact count as a JSON integer when it is whole and fits, else as the
 * nearest double. */
static json_t *jcount(kp_count v, unsigned decimals)
{
	if (decimals == 0 && v <= (kp_count)INT64_MAX)
		return json_integer((json_int_t)v);
	return json_real(kp_count_double(v, decimals));
}

/* A count the test used (a double): an integer when it is one. */
static json_t *jnumber(double v)
{
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return json_integer((json_int_t)v);
	return json_real(v);
}

/* A double JSON can hold (jansson refuses NaN and infinities). */
static json_t *jreal(double v)
{
	return json_real(isfinite(v) ? (v == 0 ? 0.0 : v) : 0.0);
}

/* A double, or null where it has none (NaN) or is unbounded (infinite
 * degrees of freedom: the normal). */
static json_t *jreal_or_null(double v)
{
	return isfinite(v) ? json_real(v == 0 ? 0.0 : v) : json_null();
}

static json_t *column(const struct kp_diff *df, const struct kp_diff_change *ch)
{
	json_t *c = json_object();
	unsigned decimals[2];

	kp_diff_total(df, KP_DIFF_BASE, &decimals[0]);
	kp_diff_total(df, KP_DIFF_NEW, &decimals[1]);
	json_object_set_new(c, "base", jreal(ch->share[0]));
	json_object_set_new(c, "new", jreal(ch->share[1]));
	json_object_set_new(c, "change", jreal(ch->change));
	json_object_set_new(c, "base_value", jcount(ch->value[0], decimals[0]));
	json_object_set_new(c, "new_value", jcount(ch->value[1], decimals[1]));
	json_object_set_new(c, "base_samples", jnumber(ch->count[0]));
	json_object_set_new(c, "new_samples", jnumber(ch->count[1]));
	json_object_set_new(c, "tested", json_boolean(ch->tested));
	json_object_set_new(c, "se", jreal(ch->se));
	json_object_set_new(c, "base_seconds", jreal_or_null(ch->seconds[0]));
	json_object_set_new(c, "new_seconds", jreal_or_null(ch->seconds[1]));
	json_object_set_new(c, "dispersion", jreal(ch->dispersion));
	json_object_set_new(c, "df", jreal_or_null(ch->df));
	json_object_set_new(c, "z", jreal(ch->z));
	json_object_set_new(c, "p", jreal(ch->p));
	json_object_set_new(c, "p_adjusted", jreal(ch->p_adj));
	json_object_set_new(c, "significant", json_boolean(ch->significant));
	return c;
}

/* The CPU time a run's test of a function (seconds), or null. */
static json_t *time_test(const struct kp_diff_time *tm)
{
	json_t *t;

	if (!tm->tested)
		return json_null();
	t = json_object();
	json_object_set_new(t, "base_seconds", jreal(tm->mean[0] / 1e9));
	json_object_set_new(t, "new_seconds", jreal(tm->mean[1] / 1e9));
	json_object_set_new(t, "growth", jreal_or_null(100 * tm->growth));
	json_object_set_new(t, "se", jreal(tm->se / 1e9));
	json_object_set_new(t, "dispersion", jreal(tm->dispersion / 1e9));
	json_object_set_new(t, "df", jreal_or_null(tm->df));
	json_object_set_new(t, "t", jreal(tm->t));
	json_object_set_new(t, "p", jreal(tm->p));
	return t;
}

static json_t *function(const struct kp_diff *df, uint32_t fi, bool both)
{
	const struct kp_diff_function *fn = kp_diff_function(df, fi);
	json_t *f = json_object();

	json_object_set_new(f, "function", jstr(fn->name, fn->name_len));
	json_object_set_new(f, "kind", jcstr(kp_diff_kind_name(fn->kind)));
	json_object_set_new(f, "interrupt", json_boolean(fn->interrupt));
	if (both) {
		json_object_set_new(f, "self", column(df, &fn->col[KP_DIFF_SELF]));
		json_object_set_new(f, "total", column(df, &fn->col[KP_DIFF_TOTAL]));
		json_object_set_new(f, "time", time_test(&fn->time));
	} else {
		const struct kp_diff_change *ch = &fn->col[KP_DIFF_TOTAL];

		json_object_set_new(f, "base", jreal(ch->share[0]));
		json_object_set_new(f, "new", jreal(ch->share[1]));
		json_object_set_new(f, "change", jreal(ch->change));
		json_object_set_new(f, "p_adjusted", jreal(ch->p_adj));
		json_object_set_new(f, "base_seconds", jreal_or_null(ch->seconds[0]));
		json_object_set_new(f, "new_seconds", jreal_or_null(ch->seconds[1]));
	}
	return f;
}

static json_t *side(const struct kp_diff *df, const struct kp_diff_report *r, int s)
{
	json_t *o = json_object(), *meta = json_object();
	const struct kp_profile *p = r->profile[s];
	unsigned decimals;
	kp_count total = kp_diff_total(df, s, &decimals);

	json_object_set_new(o, "file", jcstr(r->file[s] ? r->file[s] : ""));
	json_object_set_new(o, "total", jcount(total, decimals));
	json_object_set_new(o, "samples", jnumber(kp_diff_total_count(df, s)));
	json_object_set_new(o, "runs", json_integer((json_int_t)kp_diff_runs(df, s)));
	for (size_t i = 0; p && i < kp_profile_nmeta(p); i++) {
		const char *key, *value;

		kp_profile_meta_at(p, i, &key, &value);
		json_object_set_new(meta, key, jcstr(value));
	}
	json_object_set_new(o, "metadata", meta);
	return o;
}

/* The gate's verdict (docs/diff.md's "gate"). */
/* Function fn's name (a new reference), or null for UINT32_MAX. */
static json_t *jfunction_or_null(const struct kp_diff *df, uint32_t fn)
{
	const struct kp_diff_function *w;

	if (fn == UINT32_MAX)
		return json_null();
	w = kp_diff_function(df, fn);
	return jstr(w->name, w->name_len);
}

static json_t *gate_json(const struct kp_diff *df, const struct kp_diff_gate *g)
{
	json_t *gate = json_object(), *regs = json_array(), *skipped = json_array();
	json_t *explained = json_array();
	bool time = g->measure == KP_DIFF_TIME;

	json_object_set_new(gate, "fail_above", jreal(g->points));
	json_object_set_new(gate, "measure", jcstr(time ? "time" : "share"));
	json_object_set_new(gate, "test",
			    jcstr(time ? "CPU time a run: quasi-Poisson t-test, moderated, "
					 "one-sided"
				  : kp_diff_measured(df)
					  ? "total share: quasi-binomial t-test, "
					    "moderated, one-sided"
					  : "total share: two-proportion z-test, one-sided"));
	json_object_set_new(gate, "ran_to_end", json_boolean(kp_diff_ran_to_end(df)));
	json_object_set_new(gate, "status", jcstr(g->n ? "fail" : "pass"));
	for (size_t k = 0; k < g->n + g->nskipped + g->nvia; k++) {
		json_t *f = function(df, g->fn[k], false);
		const struct kp_diff_function *fn = kp_diff_function(df, g->fn[k]);

		/* after the gate's correction over its family, not the column's */
		json_object_set_new(f, "p_adjusted", jreal(g->p[k]));
		json_object_set_new(f, "time_growth",
				    fn->time.tested ? jreal_or_null(100 * fn->time.growth)
						    : json_null());
		if (k >= g->n + g->nskipped) {
			const struct kp_diff_function *v = kp_diff_function(df, g->via[k]);

			json_object_set_new(f, "via", jstr(v->name, v->name_len));
			json_object_set_new(f, "via_kind", jcstr(kp_diff_kind_name(v->kind)));
			json_object_set_new(f, "within", json_boolean(g->within[k]));
		}
		json_array_append_new(k < g->n		       ? regs
				      : k < g->n + g->nskipped ? skipped
							       : explained,
				      f);
	}
	json_object_set_new(gate, "regressions", regs);
	json_object_set_new(gate, "skipped", skipped);
	json_object_set_new(gate, "explained", explained);
	json_object_set_new(gate, "family", json_integer((json_int_t)g->family));
	json_object_set_new(gate, "correction", jcstr(g->relabellings ? "westfall-young" : "holm"));
	json_object_set_new(gate, "relabellings", json_integer((json_int_t)g->relabellings));
	json_object_set_new(gate, "level", jreal_or_null(g->level));
	json_object_set_new(gate, "resolution", jreal(g->resolution));
	json_object_set_new(gate, "detectable", jreal_or_null(g->detectable));
	json_object_set_new(gate, "detectable_max", jreal_or_null(g->detectable_max));
	json_object_set_new(gate, "detectable_max_function",
			    jfunction_or_null(df, g->detectable_fn));
	json_object_set_new(gate, "runs_needed",
			    g->runs_needed ? json_integer((json_int_t)g->runs_needed)
					   : json_null());
	/* the time gate's functions that grew past it with too few samples
	 * a run to show it: unseen */
	json_object_set_new(gate, "unseen", json_integer((json_int_t)g->small_grew));
	json_object_set_new(gate, "unseen_largest", jfunction_or_null(df, g->small_fn));
	json_object_set_new(gate, "unseen_below",
			    g->measure == KP_DIFF_TIME ? jreal(ceil(g->small_needs)) : json_null());
	return gate;
}

int kp_diff_json_write(const struct kp_diff *df, const struct kp_diff_report *r, FILE *out,
		       struct kp_diag *d)
{
	json_t *root = json_object(), *value = json_object(), *test = json_object();
	json_t *tested = json_object(), *fns = json_array(), *priors = json_object();
	size_t n;
	uint32_t *list = kp_diff_report_listed(df, r, &n);
	int err = 0;

	json_object_set_new(root, "kprof_diff", json_integer(1));
	for (int s = 0; s < 2; s++)
		json_object_set_new(root, side_names[s], side(df, r, s));
	json_object_set_new(value, "type", jcstr(r->value));
	json_object_set_new(value, "unit", jcstr(r->unit));
	json_object_set_new(root, "value", value);
	json_object_set_new(
		test, "method",
		jcstr(kp_diff_measured(df)
			      ? "t-test of the share against a quasi-binomial dispersion "
				"measured from the runs, moderated (empirical Bayes), "
				"two-sided"
			      : "two-proportion z-test, pooled, two-sided"));
	json_object_set_new(test, "measured", json_boolean(kp_diff_measured(df)));
	json_object_set_new(test, "counts", jcstr(r->counts));
	json_object_set_new(test, "alpha", jreal(kp_diff_alpha(df)));
	json_object_set_new(test, "correction", jcstr("holm"));
	/* one run a side: the dispersion assumed; several: the least one
	 * given (--dispersion), 0 for none */
	json_object_set_new(
		test, "dispersion",
		jreal(kp_diff_dispersion(df) || kp_diff_measured(df) ? kp_diff_dispersion(df) : 1));
	json_object_set_new(test, "residual_df", jreal(kp_diff_residual_df(df)));
	for (int c = 0; c < 2; c++) {
		struct kp_stats_prior pr = kp_diff_prior(df, c);
		json_t *prior = json_object();

		json_object_set_new(prior, "dispersion", jreal(pr.var));
		json_object_set_new(prior, "df", jreal_or_null(pr.df));
		json_object_set_new(priors, c ? "total" : "self", prior);
	}
	json_object_set_new(test, "prior", priors);
	json_object_set_new(tested, "self", json_integer((json_int_t)kp_diff_ntested(df, 0)));
	json_object_set_new(tested, "total", json_integer((json_int_t)kp_diff_ntested(df, 1)));
	json_object_set_new(test, "tested", tested);
	json_object_set_new(root, "test", test);
	json_object_set_new(root, "gate", r->gate ? gate_json(df, r->gate) : json_null());
	for (size_t i = 0; i < n; i++)
		json_array_append_new(fns, function(df, list[i], true));
	json_object_set_new(root, "functions", fns);
	if (json_dumpf(root, out, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) < 0 ||
	    fputc('\n', out) == EOF || ferror(out))
		err = kp_diag_errno(d, -(errno ? errno : EIO), "cannot write the JSON");
	json_decref(root);
	free(list);
	return err;
}
