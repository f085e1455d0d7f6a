/* What the writers of kprof diff's reports share: which functions they
 * list and how a p-value, CPU seconds and a regression read. */
#include "diff/diff_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/textsafe.h"
#include "util/xalloc.h"

uint32_t *kp_diff_report_listed(const struct kp_diff *df, const struct kp_diff_report *r, size_t *n)
{
	size_t nfn = kp_diff_nfunctions(df), top = r->top && r->top < nfn ? r->top : nfn, k = 0;
	uint8_t *take = kp_xcalloc(nfn ? nfn : 1, 1);
	uint32_t *out = kp_xmalloc((nfn ? nfn : 1) * sizeof(*out));

	for (int col = 0; col < 2; col++)
		for (size_t i = 0; i < top; i++)
			take[kp_diff_order(df, col)[i]] = 1;
	for (size_t i = 0; r->gate && i < r->gate->n + r->gate->nskipped + r->gate->nvia; i++)
		take[r->gate->fn[i]] = 1;
	for (size_t i = 0; i < nfn; i++) {
		uint32_t fi = kp_diff_order(df, KP_DIFF_TOTAL)[i];

		if (take[fi])
			out[k++] = fi;
	}
	free(take);
	*n = k;
	return out;
}

void kp_diff_report_format_p(double p, char *buf, size_t size)
{
	if (p >= 0.001)
		snprintf(buf, size, "%.3f", p);
	else if (p > 0)
		snprintf(buf, size, "%.1e", p);
	else
		snprintf(buf, size, "<1e-300");
}

void kp_diff_report_format_seconds(const struct kp_diff_change *ch, char *buf, size_t size)
{
	double a = ch->seconds[0], b = ch->seconds[1], top = fmax(a, b), scale = 1;
	const char *unit = "s";
	int digits = 3;
	char rel[32];

	if (!isfinite(a) || !isfinite(b)) {
		if (size)
			buf[0] = '\0';
		return;
	}
	/* one unit for both, with about three significant digits */
	if (top >= 10) {
		digits = 1;
	} else if (top < 1e-4) {
		scale = 1e6;
		unit = "us";
		digits = 1;
	} else if (top < 0.1) {
		scale = 1e3;
		unit = "ms";
		digits = top < 0.01 ? 2 : 1;
	}
	if (a > 0)
		snprintf(rel, sizeof(rel), "%+.0f%%", 100 * (b - a) / a);
	else
		snprintf(rel, sizeof(rel), "%s", b > 0 ? "new" : "none");
	snprintf(buf, size, "%.*f -> %.*f %s (%s)", digits, a * scale, digits, b * scale, unit,
		 rel);
}

void kp_diff_report_format_adjustment(const struct kp_diff_gate *g, char *buf, size_t size)
{
	if (g->relabellings)
		snprintf(buf, size,
			 "a permutation test over %zu function%s (%zu relabellings of the runs)",
			 g->family, g->family == 1 ? "" : "s", g->relabellings);
	else
		snprintf(buf, size, "Holm over %zu function%s", g->family,
			 g->family == 1 ? "" : "s");
}

void kp_diff_report_format_regression(const struct kp_diff *df, const struct kp_diff_gate *g,
				      size_t k, char *buf, size_t size)
{
	const struct kp_diff_function *fn = kp_diff_function(df, g->fn[k]);
	const struct kp_diff_change *ch = &fn->col[KP_DIFF_TOTAL];
	char p[32], sec[96], adj[128];
	size_t len;

	kp_diff_report_format_adjustment(g, adj, sizeof(adj));
	kp_diff_report_format_p(g->p[k], p, sizeof(p));
	kp_diff_report_format_seconds(ch, sec, sizeof(sec));
	if (g->measure == KP_DIFF_TIME)
		snprintf(buf, size,
			 "CPU a run %s, more than %g%%; p %s after %s, "
			 "alpha %g, one-sided; total share %.2f%% -> %.2f%% (%+.2f points)",
			 sec, g->points, p, adj, kp_diff_alpha(df), ch->share[0], ch->share[1],
			 ch->change);
	else
		snprintf(buf, size,
			 "total share %.2f%% -> %.2f%% (%+.2f points, more than %g; p %s after "
			 "%s, alpha %g)",
			 ch->share[0], ch->share[1], ch->change, g->points, p, adj,
			 kp_diff_alpha(df));
	len = strlen(buf);
	if (g->measure != KP_DIFF_TIME && sec[0] && len < size)
		snprintf(buf + len, size - len, "; CPU a run %s", sec);
	len = strlen(buf);
	if (k >= g->n + g->nskipped && len < size) {
		/* the descendant's name, escaped as a name is (no control byte) */
		const struct kp_diff_function *v = kp_diff_function(df, g->via[k]);
		char *name = kp_textsafe_dup(v->name, v->name_len > 200 ? 200 : v->name_len);

		if (g->within[k])
			snprintf(buf + len, size - len,
				 "; within %s%s, named: the change is held there", name,
				 kp_frame_kind_note(v->kind));
		else
			snprintf(buf + len, size - len, "; explained: %s%s grew within its stacks",
				 name, kp_frame_kind_note(v->kind));
		free(name);
	}
}

void kp_diff_report_regressions(const struct kp_diff *df, const struct kp_diff_gate *g,
				void (*say)(void *arg, const char *line), void *arg)
{
	char line[1024], msg[1400];

	for (size_t k = 0; k < g->n; k++) {
		const struct kp_diff_function *fn = kp_diff_function(df, g->fn[k]);

		kp_diff_report_format_regression(df, g, k, line, sizeof(line));
		snprintf(msg, sizeof(msg), "regression: %.*s%s: %s",
			 (int)(fn->name_len > 200 ? 200 : fn->name_len), fn->name,
			 kp_frame_kind_note(fn->kind), line);
		say(arg, msg);
	}
}

void kp_diff_gate_format_what(const struct kp_diff_gate *g, char *buf, size_t size)
{
	if (g->measure == KP_DIFF_TIME)
		snprintf(buf, size, "CPU time a run grew by more than %g%%", g->points);
	else
		snprintf(buf, size, "total share grew by more than %g points", g->points);
}

bool kp_diff_gate_unresolved(const struct kp_diff_gate *g)
{
	return (isfinite(g->detectable) && g->detectable > g->points) || g->small_grew;
}

/* The time gate's functions that grew past points unseen, said into buf
 * after its len bytes (numbers and kprof's words only: no name). */
static void format_small(const struct kp_diff_gate *g, char *buf, size_t size, size_t len)
{
	if (!g->small_grew || g->small_fn == UINT32_MAX || len >= size)
		return;
	snprintf(buf + len, size - len,
		 " %s%zu function%s whose CPU time a run grew past %g%% significantly (Bonferroni "
		 "over those left out) hold%s too few samples a run to be tested at these runs "
		 "(fewer than %.0f; the "
		 "largest has %.0f): %s cannot fail the gate (more runs a side, longer runs, or "
		 "a higher frequency).",
		 len ? "" : "Unseen: ", g->small_grew, g->small_grew == 1 ? "" : "s", g->points,
		 g->small_grew == 1 ? "s" : "", ceil(g->small_needs), g->small_has,
		 g->small_grew == 1 ? "it" : "they");
}

void kp_diff_gate_format_seeing(const struct kp_diff *df, const struct kp_diff_gate *g, char *buf,
				size_t size)
{
	const char *unit = g->measure == KP_DIFF_TIME ? "%" : " points";
	char runs[96];
	size_t len;

	if (!isfinite(g->detectable)) {
		snprintf(buf, size, "No function could hold such a growth: nothing to see.");
		return;
	}
	if (g->runs_needed)
		snprintf(runs, sizeof(runs), "%zu run%s a side would resolve %g%s", g->runs_needed,
			 g->runs_needed == 1 ? "" : "s", g->points, unit);
	else
		snprintf(runs, sizeof(runs), "more than %d runs a side would be needed for %g%s",
			 KP_DIFF_RUNS_MAX, g->points, unit);
	snprintf(buf, size,
		 "Seen: these runs catch a growth of %.*f%s with 95%% probability in a typical "
		 "function that could fail the gate (%.*f%s in the noisiest)%s; %s.",
		 g->measure == KP_DIFF_TIME ? 0 : 2, g->detectable, unit,
		 g->measure == KP_DIFF_TIME ? 0 : 2, g->detectable_max, unit,
		 kp_diff_measured(df) ? "" : ", sampling noise alone (one run a side)", runs);
	len = strlen(buf);
	if (g->detectable > g->points && len < size)
		snprintf(buf + len, size - len,
			 " Note: --fail-above %g%s is below what these runs resolve: a real "
			 "regression of that size can pass (more runs a side, or longer ones).",
			 g->points, g->measure == KP_DIFF_TIME ? "%" : "");
	format_small(g, buf, size, strlen(buf));
}

void kp_diff_gate_format_warning(const struct kp_diff *df, const struct kp_diff_gate *g, char *buf,
				 size_t size)
{
	bool time = g->measure == KP_DIFF_TIME;
	char need[64] = "";

	if (g->runs_needed)
		snprintf(need, sizeof(need), "; %zu run%s a side would resolve it", g->runs_needed,
			 g->runs_needed == 1 ? "" : "s");
	if (isfinite(g->detectable) && g->detectable > g->points)
		snprintf(buf, size,
			 "%zu + %zu runs resolve growths of %s from %.*f%s (95%% probability, a "
			 "typical function that could fail the gate): --fail-above %g%s can pass a "
			 "smaller real regression%s (docs/diff.md)",
			 kp_diff_runs(df, KP_DIFF_BASE), kp_diff_runs(df, KP_DIFF_NEW),
			 time ? "CPU time a run" : "total share", time ? 0 : 2, g->detectable,
			 time ? "%" : " points", g->points, time ? "%" : "", need);
	else
		*buf = 0;
	if (*buf && g->small_grew)
		snprintf(buf + strlen(buf), size - strlen(buf), ";");
	format_small(g, buf, size, strlen(buf));
}
