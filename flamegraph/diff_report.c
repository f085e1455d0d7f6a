#include "flamegraph/diff_report.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/xmlout.h"
#include "util/xalloc.h"

/* Names longer than this are cut in the text table (not in JSON). */
#define TEXT_NAME_MAX 200

static const char *const side_names[2] = {"base", "new"};

/* A p-value in a few characters: 0.034, 1.2e-45, <1e-300 (below what a
 * double holds). */
static void format_p(double p, char *buf, size_t size)
{
	if (p >= 0.001)
		snprintf(buf, size, "%.3f", p);
	else if (p > 0)
		snprintf(buf, size, "%.1e", p);
	else
		snprintf(buf, size, "<1e-300");
}

/* An exact count with thousands separators: 12,345 or 1,234.5. */
static void format_count(kp_count v, unsigned decimals, char *buf)
{
	char digits[KP_COUNT_BUF];
	size_t len = kp_count_format(v, decimals, digits), intlen, k = 0;
	const char *dot = memchr(digits, '.', len);

	intlen = dot ? (size_t)(dot - digits) : len;
	for (size_t i = 0; i < len; i++) {
		buf[k++] = digits[i];
		if (i + 1 < intlen && (intlen - i - 1) % 3 == 0)
			buf[k++] = ',';
	}
	buf[k] = '\0';
}

/* The functions a report lists: the top of each column and every
 * regression, each once, ordered by the size of the total change. */
static uint32_t *listed(const struct kp_diff *df, const struct kp_diff_report *r, size_t *n)
{
	size_t nfn = kp_diff_nfunctions(df), top = r->top && r->top < nfn ? r->top : nfn, k = 0;
	uint8_t *take = kp_xcalloc(nfn ? nfn : 1, 1);
	uint32_t *out = kp_xmalloc((nfn ? nfn : 1) * sizeof(*out)), *reg = NULL;
	size_t nreg = r->gate ? kp_diff_regressions(df, r->fail_above, &reg) : 0;

	for (int col = 0; col < 2; col++)
		for (size_t i = 0; i < top; i++)
			take[kp_diff_order(df, col)[i]] = 1;
	for (size_t i = 0; i < nreg; i++)
		take[reg[i]] = 1;
	for (size_t i = 0; i < nfn; i++) {
		uint32_t fi = kp_diff_order(df, KP_DIFF_TOTAL)[i];

		if (take[fi])
			out[k++] = fi;
	}
	free(take);
	free(reg);
	*n = k;
	return out;
}

static void print_column(const struct kp_diff *df, const struct kp_diff_report *r, FILE *out,
			 enum kp_diff_column col)
{
	size_t nfn = kp_diff_nfunctions(df), top = r->top && r->top < nfn ? r->top : nfn;
	char p[32];

	fprintf(out, "%s share (%s), largest changes first:\n",
		col == KP_DIFF_TOTAL ? "Total" : "Self",
		col == KP_DIFF_TOTAL ? "the function and what it calls" : "the function alone");
	fprintf(out, "  %8s  %8s  %8s  %9s    %s\n", "base", "new", "change", "p (Holm)",
		"function");
	for (size_t i = 0, shown = 0; i < nfn && shown < top; i++) {
		const struct kp_diff_function *fn = kp_diff_function(df, kp_diff_order(df, col)[i]);
		const struct kp_diff_change *ch = &fn->col[col];
		int len = fn->name_len > TEXT_NAME_MAX ? TEXT_NAME_MAX : (int)fn->name_len;

		/* never in the column in either profile (a caller's self) */
		if (!ch->tested)
			continue;
		shown++;
		format_p(ch->p_adj, p, sizeof(p));
		fprintf(out, "  %7.2f%%  %7.2f%%  %+8.2f  %9s %s  %.*s%s%s\n", ch->share[0],
			ch->share[1], ch->change == 0 ? 0.0 : ch->change, p,
			ch->significant ? "*" : " ", len, fn->name,
			len < (int)fn->name_len ? "..." : "", kp_frame_kind_note(fn->kind));
	}
}

/* What a recording says of its run: "; cpu-clock, 2.51 s: kprof -F 999 --
 * ./bench" (nothing for folded text). */
static void print_run(FILE *out, const struct kp_profile *p)
{
	const char *event = p ? kp_profile_meta(p, KP_META_EVENT) : NULL;
	const char *duration = p ? kp_profile_meta(p, KP_META_DURATION) : NULL;
	const char *command = p ? kp_profile_meta(p, KP_META_COMMAND) : NULL;

	if (!event && !duration && !command)
		return;
	fputs(";", out);
	if (event)
		fprintf(out, " %s", event);
	if (duration)
		fprintf(out, "%s %s s", event ? "," : "", duration);
	if (command)
		fprintf(out, ": %.200s", command);
}

int kp_diff_write_text(const struct kp_diff *df, const struct kp_diff_report *r, FILE *out)
{
	char num[KP_COUNT_BUF * 2], pbuf[32];

	for (int s = 0; s < 2; s++) {
		unsigned decimals;
		kp_count total = kp_diff_total(df, s, &decimals);

		format_count(total, decimals, num);
		fprintf(out, "%-4s  %s: %s %s", s ? "NEW" : "BASE", r->file[s], num, r->value);
		if (strcmp(r->value, r->counts) != 0) {
			format_count((kp_count)llround(kp_diff_total_count(df, s)), 0, num);
			fprintf(out, " (%s), %s %s", r->unit, num, r->counts);
		}
		print_run(out, r->profile[s]);
		fputc('\n', out);
	}
	fprintf(out,
		"Shares of %s. Significant (*): p <= %g in a two-proportion z-test on the counts\n"
		"of %s%s, after Holm's correction over the functions compared (%zu for total\n"
		"share, %zu for self share).\n",
		r->value, kp_diff_alpha(df), strcmp(r->counts, "samples") ? "" : "samples",
		strcmp(r->counts, "samples") ? r->counts : "", kp_diff_ntested(df, KP_DIFF_TOTAL),
		kp_diff_ntested(df, KP_DIFF_SELF));
	if (kp_diff_dispersion(df) != 1)
		fprintf(out,
			"Counts taken to vary %g times as much as independent samples would "
			"(--dispersion).\n",
			kp_diff_dispersion(df));
	fputc('\n', out);
	print_column(df, r, out, KP_DIFF_TOTAL);
	fputc('\n', out);
	print_column(df, r, out, KP_DIFF_SELF);
	if (r->gate) {
		uint32_t *reg;
		size_t n = kp_diff_regressions(df, r->fail_above, &reg);

		fprintf(out, "\nGate (--fail-above %g): ", r->fail_above);
		if (!n)
			fprintf(out,
				"pass: no function's total share grew by more than %g points "
				"significantly.\n",
				r->fail_above);
		else
			fprintf(out,
				"FAIL: %zu function%s grew by more than %g points of total share, "
				"significantly:\n",
				n, n == 1 ? "" : "s", r->fail_above);
		for (size_t i = 0; i < n; i++) {
			const struct kp_diff_function *fn = kp_diff_function(df, reg[i]);
			const struct kp_diff_change *ch = &fn->col[KP_DIFF_TOTAL];

			format_p(ch->p_adj, pbuf, sizeof(pbuf));
			fprintf(out, "  %.*s%s: %.2f%% -> %.2f%% (%+.2f points, p %s after Holm)\n",
				(int)(fn->name_len > TEXT_NAME_MAX ? TEXT_NAME_MAX : fn->name_len),
				fn->name, kp_frame_kind_note(fn->kind), ch->share[0], ch->share[1],
				ch->change, pbuf);
		}
		free(reg);
	}
	return ferror(out) ? -EIO : 0;
}

/* JSON. */

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
	json_object_set_new(c, "z", jreal(ch->z));
	json_object_set_new(c, "p", jreal(ch->p));
	json_object_set_new(c, "p_adjusted", jreal(ch->p_adj));
	json_object_set_new(c, "significant", json_boolean(ch->significant));
	return c;
}

static json_t *function(const struct kp_diff *df, uint32_t fi, bool both)
{
	const struct kp_diff_function *fn = kp_diff_function(df, fi);
	json_t *f = json_object();

	json_object_set_new(f, "function", jstr(fn->name, fn->name_len));
	json_object_set_new(f, "kind", jcstr(kp_diff_kind_name(fn->kind)));
	if (both) {
		json_object_set_new(f, "self", column(df, &fn->col[KP_DIFF_SELF]));
		json_object_set_new(f, "total", column(df, &fn->col[KP_DIFF_TOTAL]));
	} else {
		const struct kp_diff_change *ch = &fn->col[KP_DIFF_TOTAL];

		json_object_set_new(f, "base", jreal(ch->share[0]));
		json_object_set_new(f, "new", jreal(ch->share[1]));
		json_object_set_new(f, "change", jreal(ch->change));
		json_object_set_new(f, "p_adjusted", jreal(ch->p_adj));
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
	for (size_t i = 0; p && i < kp_profile_nmeta(p); i++) {
		const char *key, *value;

		kp_profile_meta_at(p, i, &key, &value);
		json_object_set_new(meta, key, jcstr(value));
	}
	json_object_set_new(o, "metadata", meta);
	return o;
}

int kp_diff_write_json(const struct kp_diff *df, const struct kp_diff_report *r, FILE *out,
		       struct kp_diag *d)
{
	json_t *root = json_object(), *value = json_object(), *test = json_object();
	json_t *tested = json_object(), *fns = json_array();
	size_t n;
	uint32_t *list = listed(df, r, &n);
	int err = 0;

	json_object_set_new(root, "kprof_diff", json_integer(1));
	for (int s = 0; s < 2; s++)
		json_object_set_new(root, side_names[s], side(df, r, s));
	json_object_set_new(value, "type", jcstr(r->value));
	json_object_set_new(value, "unit", jcstr(r->unit));
	json_object_set_new(root, "value", value);
	json_object_set_new(test, "method", jcstr("two-proportion z-test, pooled, two-sided"));
	json_object_set_new(test, "counts", jcstr(r->counts));
	json_object_set_new(test, "alpha", jreal(kp_diff_alpha(df)));
	json_object_set_new(test, "correction", jcstr("holm"));
	json_object_set_new(test, "dispersion", jreal(kp_diff_dispersion(df)));
	json_object_set_new(tested, "self", json_integer((json_int_t)kp_diff_ntested(df, 0)));
	json_object_set_new(tested, "total", json_integer((json_int_t)kp_diff_ntested(df, 1)));
	json_object_set_new(test, "tested", tested);
	json_object_set_new(root, "test", test);
	if (r->gate) {
		json_t *gate = json_object(), *regs = json_array();
		uint32_t *reg;
		size_t nreg = kp_diff_regressions(df, r->fail_above, &reg);

		json_object_set_new(gate, "fail_above", jreal(r->fail_above));
		json_object_set_new(gate, "status", jcstr(nreg ? "fail" : "pass"));
		for (size_t i = 0; i < nreg; i++)
			json_array_append_new(regs, function(df, reg[i], false));
		json_object_set_new(gate, "regressions", regs);
		json_object_set_new(root, "gate", gate);
		free(reg);
	} else {
		json_object_set_new(root, "gate", json_null());
	}
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
