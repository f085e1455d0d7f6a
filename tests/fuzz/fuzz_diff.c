/* `kprof diff` (diff/diff.h, stats.h, diff_report.h): two folded
 * texts, BASE and NEW, read into profiles as the loader reads folded text,
 * then what cli/cmd_diff.c does with them: the function table (without
 * and with --dispersion, and with each profile as two runs of its side,
 * which measures the dispersion), the --fail-above gate, the text, JSON,
 * Markdown, JUnit and GitHub reports and the differential flame graph.
 *
 * Checks: the diff is refused exactly when a profile's total is 0; every
 * share is finite and in 0..100 %, every z finite, every p-value and
 * Holm-adjusted p-value in [0, 1] (not NaN); the adjusted p-values are at
 * least the raw ones and are Holm's, worked out again here (sorted by raw
 * p: max over j <= k of min(1, (m - j + 1) p(j)), so monotone); a function
 * is tested exactly when it has a count in either profile, and significant
 * exactly when its adjusted p-value is at most alpha; self <= total (value,
 * count and share); the values add up to each side's exact total; the
 * order is a permutation by |change|; a dispersion F divides every z by
 * sqrt F and never makes a change more significant; with runs, every
 * dispersion is finite and >= 0, every df > 0, the standard errors
 * finite; the gate's
 * regressions are exactly the functions whose total share grew by more
 * than PCT significantly, and the text report's and the JSON's verdicts
 * (parsed back with jansson) say the same; BASE against itself changes
 * nothing and the gate passes.
 *
 * Input: byte 0 options (bits 0-1 alpha 0.01, 0.05, 1e-6, 0.5; bits 2-3
 * --top 0 (all), 1, 3, 20; bit 4 --base-shape; bit 5 --negate; bit 6
 * --strict reading), byte 1 the gate's PCT (byte * 100 / 255 points),
 * byte 2 the dispersion (1 + byte), bytes 3-4 BASE's length (little
 * endian; cut to what is left), then BASE's text and NEW's.
 *
 * Seeds (corpus/diff/, see its README): pairs of small files of
 * tests/golden/data. In tests/fuzz/CMakeLists.txt: kp_fuzz_target(diff
 * fuzz_diff.c), KP_FUZZ_RUNS_diff (docs/fuzzing.md). */
#include <jansson.h>
#include <math.h>
#include <stdbool.h>

#include "diff/diff.h"
#include "diff/diff_report.h"
#include "formats/folded_read.h"
#include "profile/folded.h"
#include "profile/fold.h"
#include "diff/stats.h"
#include "flamegraph/svg.h"
#include "fuzz.h"
#include "profile/profile.h"

static const double alphas[4] = {0.01, 0.05, 1e-6, 0.5};
/* shares and counts of the first value, no CPU time (folded text) */
static const struct kp_diff_values samples[2] = {{0, 0, -1}, {0, 0, -1}};
static const size_t tops[4] = {0, 1, 3, 20};
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	devnull = fopen("/dev/null", "we");
	if (!devnull)
		abort();
	return 0;
}

/* Folded text into a profile, as kp_load_profile does; NULL when the
 * loader refuses it (a read error, no stack). */
static struct kp_profile *load(const uint8_t *text, size_t n, bool strict)
{
	struct kp_folded_read_opts ro = {.strict = strict};
	struct kp_folded *f = kp_folded_new();
	struct kp_profile *p = NULL;
	struct kp_diag d = {{0}};
	uint64_t bad = 0;
	char *s = fuzz_strndup(text, n);
	FILE *in = fmemopen(s, n, "r");

	FUZZ_CHECK(in != NULL);
	if (kp_folded_read(f, in, "fuzz.folded", &ro, &bad, &d) == 0 && kp_folded_nstacks(f))
		p = kp_fold_to_profile(f, NULL);
	fclose(in);
	free(s);
	kp_folded_free(f);
	return p;
}

static bool in_01(double v)
{
	return v >= 0 && v <= 1; /* false for NaN */
}

static int cmp_by_p(const void *a, const void *b)
{
	const struct kp_diff_change *x = *(const struct kp_diff_change *const *)a,
				    *y = *(const struct kp_diff_change *const *)b;

	return (x->p > y->p) - (x->p < y->p);
}

static bool close_to(double a, double b)
{
	return fabs(a - b) <= 1e-9 + 1e-9 * fabs(b);
}

/* Every function's columns, Holm, the totals and the order. */
static void check_diff(const struct kp_diff *df)
{
	size_t nf = kp_diff_nfunctions(df);
	double alpha = kp_diff_alpha(df);
	const struct kp_diff_change **tested = malloc((nf ? nf : 1) * sizeof(*tested));
	kp_count self_sum[2] = {0, 0};
	unsigned dec[2];
	kp_count total[2] = {kp_diff_total(df, KP_DIFF_BASE, &dec[0]),
			     kp_diff_total(df, KP_DIFF_NEW, &dec[1])};

	FUZZ_CHECK(tested != NULL);
	for (size_t i = 0; i < nf; i++) {
		const struct kp_diff_function *fn = kp_diff_function(df, i);
		const struct kp_diff_change *s = &fn->col[KP_DIFF_SELF],
					    *t = &fn->col[KP_DIFF_TOTAL];

		FUZZ_CHECK(fn->name != NULL);
		for (int c = 0; c < 2; c++) {
			const struct kp_diff_change *ch = &fn->col[c];

			for (int side = 0; side < 2; side++) {
				FUZZ_CHECK(isfinite(ch->share[side]));
				FUZZ_CHECK(ch->share[side] >= 0 && ch->share[side] <= 100);
				FUZZ_CHECK(ch->count[side] >= 0 && isfinite(ch->count[side]));
				FUZZ_CHECK(ch->value[side] <= total[side]);
			}
			FUZZ_CHECK(isfinite(ch->change) && isfinite(ch->z));
			FUZZ_CHECK(isfinite(ch->se) && ch->se >= 0);
			FUZZ_CHECK(!ch->tested ||
				   (isfinite(ch->dispersion) && ch->dispersion >= 0 && ch->df > 0));
			FUZZ_CHECK(close_to(ch->change, ch->share[1] - ch->share[0]));
			FUZZ_CHECK(in_01(ch->p) && in_01(ch->p_adj));
			FUZZ_CHECK(ch->p_adj >= ch->p);
			FUZZ_CHECK(ch->tested == (ch->count[0] > 0 || ch->count[1] > 0));
			FUZZ_CHECK(ch->tested || (ch->p_adj == 1 && ch->z == 0));
			FUZZ_CHECK(ch->significant == (ch->tested && ch->p_adj <= alpha));
		}
		for (int side = 0; side < 2; side++) {
			FUZZ_CHECK(s->value[side] <= t->value[side]);
			FUZZ_CHECK(s->count[side] <= t->count[side]);
			FUZZ_CHECK(s->share[side] <= t->share[side]);
			self_sum[side] += s->value[side];
		}
	}
	/* a sample has at most one leaf function: self values add up to at
	 * most the total (less for stacks of a root alone) */
	FUZZ_CHECK(self_sum[0] <= total[0] && self_sum[1] <= total[1]);

	for (int c = 0; c < 2; c++) {
		const uint32_t *order = kp_diff_order(df, (enum kp_diff_column)c);
		uint8_t *seen = calloc(nf ? nf : 1, 1);
		size_t m = 0;
		double best = 0;

		FUZZ_CHECK(seen != NULL);
		for (size_t k = 0; k < nf; k++) {
			const struct kp_diff_change *ch = &kp_diff_function(df, order[k])->col[c];

			FUZZ_CHECK(order[k] < nf && !seen[order[k]]);
			seen[order[k]] = 1;
			FUZZ_CHECK(k == 0 || fabs(ch->change) <= best);
			best = fabs(ch->change);
			if (ch->tested)
				tested[m++] = ch;
		}
		free(seen);
		FUZZ_CHECK(m == kp_diff_ntested(df, (enum kp_diff_column)c));
		/* Holm, again: ties get the same adjusted value in any order */
		qsort(tested, m, sizeof(*tested), cmp_by_p);
		double run = 0;

		for (size_t k = 0; k < m; k++) {
			double v = (double)(m - k) * tested[k]->p;

			if (v > 1)
				v = 1;
			if (v > run)
				run = v;
			FUZZ_CHECK(close_to(tested[k]->p_adj, run));
			FUZZ_CHECK(k == 0 || tested[k]->p_adj >= tested[k - 1]->p_adj);
		}
	}
	free((void *)tested);
}

/* The gate's permutation test (enough relabellings of the runs for a
 * p-value at alpha): its family is the functions that could hold a growth
 * above pct less the interrupt work it passes over; every p-value it
 * lists is at least one relabelling's share (the runs' own count) and at
 * most 1 and alpha; what it lists grew by more than pct, in the family
 * (what it passes over: interrupt work), largest first; the level one
 * function must reach is in (0, alpha]. */
static void check_permuted_gate(const struct kp_diff *df, double pct, bool pass_over,
				const struct kp_diff_gate *g)
{
	size_t nf = kp_diff_nfunctions(df), m = 0;
	double alpha = kp_diff_alpha(df), nb = (double)g->relabellings;

	FUZZ_CHECK(nb * alpha >= 2 && kp_diff_measured(df));
	for (size_t i = 0; i < nf; i++) {
		const struct kp_diff_function *fn = kp_diff_function(df, i);
		const struct kp_diff_change *t = &fn->col[KP_DIFF_TOTAL];
		double mean = (t->share[0] + t->share[1]) / 2;

		m += t->tested && mean > pct / 2 && mean < 100 - pct / 2 &&
		     !(pass_over && fn->interrupt);
	}
	FUZZ_CHECK(g->family == m);
	FUZZ_CHECK(g->level > 0 && g->level <= alpha);
	for (size_t k = 0; k < g->n + g->nskipped + g->nvia; k++) {
		const struct kp_diff_function *fn = kp_diff_function(df, g->fn[k]);
		const struct kp_diff_change *t = &fn->col[KP_DIFF_TOTAL];
		double mean = (t->share[0] + t->share[1]) / 2;
		bool skipped = k >= g->n && k < g->n + g->nskipped;

		FUZZ_CHECK(t->change > pct && mean > pct / 2 && mean < 100 - pct / 2);
		FUZZ_CHECK(g->p[k] * nb >= 1 - 1e-9 && g->p[k] <= alpha);
		FUZZ_CHECK(skipped == (pass_over && fn->interrupt));
		FUZZ_CHECK(k == 0 || k == g->n || k == g->n + g->nskipped ||
			   t->change <=
				   kp_diff_function(df, g->fn[k - 1])->col[KP_DIFF_TOTAL].change);
		FUZZ_CHECK(k < g->n + g->nskipped || g->via[k] != g->fn[k]);
	}
}

/* The gate at pct, worked out again: its family is every tested function
 * (with several runs a side: whose mean share is above pct / 2), its p-values Holm's over that
 * family, at most the column's; its regressions exactly the growths above
 * pct significant in that family (interrupt work apart when one run a
 * side passes over it), largest first. Fills g (the caller finis it);
 * returns the number of regressions. */
static size_t check_gate(const struct kp_diff *df, double pct, bool pass_over,
			 struct kp_diff_gate *g)
{
	size_t nf = kp_diff_nfunctions(df), m = 0, want[2] = {0, 0};
	double *p = malloc((nf ? nf : 1) * sizeof(*p)), *adj = malloc((nf ? nf : 1) * sizeof(*adj));
	uint32_t *member = calloc(nf ? nf : 1, sizeof(*member));
	double alpha = kp_diff_alpha(df);

	FUZZ_CHECK(p && adj && member);
	kp_diff_gate(df, pct, g);
	for (size_t i = 0; i < nf; i++) {
		const struct kp_diff_change *t = &kp_diff_function(df, i)->col[KP_DIFF_TOTAL];

		double mean = (t->share[0] + t->share[1]) / 2;

		/* one-sided: a growth's p is half the two-sided one */
		if (t->tested &&
		    (!kp_diff_measured(df) || (mean > pct / 2 && mean < 100 - pct / 2))) {
			p[m++] = t->z > 0 ? t->p / 2 : 1 - t->p / 2;
			member[i] = (uint32_t)m;
		}
	}
	if (g->relabellings) {
		check_permuted_gate(df, pct, pass_over, g);
		goto out;
	}
	FUZZ_CHECK(g->family == m);
	kp_stats_holm(p, m, adj);
	for (size_t i = 0; i < nf; i++) {
		const struct kp_diff_function *fn = kp_diff_function(df, i);
		const struct kp_diff_change *t = &fn->col[KP_DIFF_TOTAL];

		if (member[i] && t->change > pct && adj[member[i] - 1] <= alpha)
			want[pass_over && fn->interrupt]++;
		/* a growth above pct is in the family whenever it is tested
		 * (one-sided, its Holm can rank it before the column's does,
		 * with a larger factor: no order between the two adjusted) */
		if (t->tested && t->change > pct)
			FUZZ_CHECK(member[i]);
	}
	/* what a descendant explains is listed apart, never dropped */
	FUZZ_CHECK(g->n + g->nvia == want[0] && g->nskipped == want[1]);
	for (size_t k = 0; k < g->n + g->nskipped + g->nvia; k++) {
		const struct kp_diff_function *fn = kp_diff_function(df, g->fn[k]);
		const struct kp_diff_change *t = &fn->col[KP_DIFF_TOTAL];
		bool skipped = k >= g->n && k < g->n + g->nskipped;

		FUZZ_CHECK(t->change > pct && member[g->fn[k]]);
		FUZZ_CHECK(close_to(g->p[k], adj[member[g->fn[k]] - 1]) && g->p[k] <= alpha);
		FUZZ_CHECK(g->p[k] >= t->p / 2 * (1 - 1e-12) && g->p[k] <= 1);
		FUZZ_CHECK(skipped == (pass_over && fn->interrupt));
		FUZZ_CHECK(k == 0 || k == g->n || k == g->n + g->nskipped ||
			   t->change <=
				   kp_diff_function(df, g->fn[k - 1])->col[KP_DIFF_TOTAL].change);
		/* via another regression, never itself */
		FUZZ_CHECK(k < g->n + g->nskipped || g->via[k] != g->fn[k]);
	}
out:
	FUZZ_CHECK(isfinite(g->resolution) || m == 0);
	free(p);
	free(adj);
	free(member);
	return g->n;
}

static double jnum(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	FUZZ_CHECK(v && json_is_number(v));
	return json_number_value(v);
}

static void check_json_column(json_t *c, double alpha)
{
	FUZZ_CHECK(json_is_object(c));
	FUZZ_CHECK(jnum(c, "base") >= 0 && jnum(c, "base") <= 100);
	FUZZ_CHECK(jnum(c, "new") >= 0 && jnum(c, "new") <= 100);
	FUZZ_CHECK(in_01(jnum(c, "p")) && in_01(jnum(c, "p_adjusted")));
	if (json_is_true(json_object_get(c, "significant")))
		FUZZ_CHECK(jnum(c, "p_adjusted") <= alpha * (1 + 1e-8));
}

/* The text and JSON reports: written, the JSON parsed back, and both
 * verdicts the gate's (nreg regressions). */
static void check_reports(const struct kp_diff *df, const struct kp_diff_report *r, size_t nreg)
{
	struct fuzz_out out;
	struct kp_diag d;
	json_error_t jerr;
	json_t *root, *gate, *fns, *reg;
	const char *verdict;
	double alpha = kp_diff_alpha(df);
	char *buf;
	size_t len;

	fuzz_out_open(&out);
	FUZZ_CHECK(kp_diff_text_write(df, r, out.f) == 0);
	buf = fuzz_out_close(&out, &len);
	verdict = strstr(buf, "\nGate (--fail-above ");
	FUZZ_CHECK(verdict != NULL);
	verdict = strstr(verdict, "): ");
	FUZZ_CHECK(verdict != NULL);
	if (nreg) {
		size_t n = 0;

		FUZZ_CHECK(sscanf(verdict, "): FAIL: %zu function", &n) == 1 && n == nreg);
	} else {
		FUZZ_CHECK(strncmp(verdict, "): pass", 7) == 0);
	}
	free(buf);

	fuzz_out_open(&out);
	FUZZ_CHECK(kp_diff_json_write(df, r, out.f, &d) == 0);
	buf = fuzz_out_close(&out, &len);
	root = json_loadb(buf, len, 0, &jerr);
	FUZZ_CHECK(root != NULL && json_is_object(root));
	FUZZ_CHECK(jnum(root, "kprof_diff") == 1);
	gate = json_object_get(root, "gate");
	FUZZ_CHECK(json_is_object(gate));
	FUZZ_CHECK(strcmp(json_string_value(json_object_get(gate, "status")),
			  nreg ? "fail" : "pass") == 0);
	reg = json_object_get(gate, "regressions");
	FUZZ_CHECK(json_is_array(reg) && json_array_size(reg) == nreg);
	for (size_t i = 0; i < nreg; i++) {
		json_t *e = json_array_get(reg, i);

		FUZZ_CHECK(jnum(e, "change") >= r->gate->points * (1 - 1e-8) - 1e-8);
		FUZZ_CHECK(jnum(e, "p_adjusted") <= alpha * (1 + 1e-8));
	}
	fns = json_object_get(root, "functions");
	FUZZ_CHECK(json_is_array(fns) && json_array_size(fns) <= kp_diff_nfunctions(df));
	if (r->top == 0)
		FUZZ_CHECK(json_array_size(fns) == kp_diff_nfunctions(df));
	for (size_t i = 0; i < json_array_size(fns); i++) {
		json_t *e = json_array_get(fns, i);

		check_json_column(json_object_get(e, "self"), alpha);
		check_json_column(json_object_get(e, "total"), alpha);
	}
	json_decref(root);
	free(buf);
}

/* The reports without a JSON parser: each written whole. */
static void check_other_reports(const struct kp_diff *df, const struct kp_diff_report *r)
{
	struct fuzz_out out;
	char *buf;
	size_t len;

	fuzz_out_open(&out);
	FUZZ_CHECK(kp_diff_text_write_markdown(df, r, out.f) == 0);
	buf = fuzz_out_close(&out, &len);
	FUZZ_CHECK(strncmp(buf, "### kprof diff", 14) == 0);
	free(buf);
	fuzz_out_open(&out);
	FUZZ_CHECK(kp_diff_text_write_github(df, r, out.f) == 0);
	buf = fuzz_out_close(&out, &len);
	/* every line a workflow command: no name breaks one */
	for (char *line = buf; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		FUZZ_CHECK(strncmp(line, "::", 2) == 0);
	free(buf);
	fuzz_out_open(&out);
	FUZZ_CHECK(kp_diff_junit_write(df, r, out.f) == 0);
	buf = fuzz_out_close(&out, &len);
	FUZZ_CHECK(strstr(buf, "</testsuites>\n") != NULL);
	free(buf);
}

/* Each profile as nruns runs of its side: the dispersion is measured (it
 * is 0 for identical runs), the columns keep their invariants, the gate
 * (five runs a side: its permutation test, 252 relabellings) and every
 * report hold. */
static void check_runs(struct kp_profile *const p[2], const struct kp_diff_opts *o,
		       const struct kp_diff_report *r, int nruns)
{
	struct kp_diff *df = kp_diff_new(o);
	struct kp_diff_report rr = *r;
	struct kp_diff_gate g;
	struct kp_diag d;
	size_t nreg;

	for (int run = 0; run < nruns; run++)
		for (int s = 0; s < 2; s++)
			FUZZ_CHECK(kp_diff_add_run(df, s, p[s], &samples[s], &d) == 0);
	FUZZ_CHECK(kp_diff_finish(df, &d) == 0);
	FUZZ_CHECK(kp_diff_measured(df) && kp_diff_runs(df, KP_DIFF_NEW) == (size_t)nruns);
	check_diff(df);
	/* measured: nothing is passed over */
	nreg = check_gate(df, r->gate->points, !o->gate_interrupts, &g);
	{
		/* the time gate: no CPU values here, nothing tested */
		struct kp_diff_gate t;

		kp_diff_gate_measure(df, KP_DIFF_TIME, r->gate->points, &t);
		FUZZ_CHECK(t.n + t.nskipped + t.nvia <= t.family);
		kp_diff_gate_fini(&t);
	}
	rr.gate = &g;
	check_reports(df, &rr, nreg);
	check_other_reports(df, &rr);
	kp_diff_gate_fini(&g);
	kp_diff_free(df);
}

/* The differential flame graph as cmd_diff draws it. */
static void write_svg(const struct kp_profile *const p[2], bool base_shape, bool negate)
{
	struct kp_folded *f = kp_folded_new();
	int after = base_shape ? 0 : 1;
	struct kp_fold_opts ob = {.into = KP_FOLD_BEFORE}, oa = {.into = KP_FOLD_AFTER};
	struct kp_svg_opts so;
	struct kp_diag d;

	if (kp_fold_add_profile(f, p[!after], &ob) && kp_fold_add_profile(f, p[after], &oa)) {
		kp_svg_opts_init(&so);
		so.diff_shares = true;
		so.diff_swapped = base_shape;
		so.negate = negate != base_shape;
		so.title = "Differential Flame Graph";
		FUZZ_CHECK(kp_svg_write(f, &so, devnull, &d) == 0);
	}
	kp_folded_free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t opt = fuzz_byte(&in), pct_b = fuzz_byte(&in), disp_b = fuzz_byte(&in);
	size_t blen = fuzz_byte(&in);
	double pct = pct_b * 100.0 / 255;
	struct kp_diff_opts o = {.alpha = alphas[opt & 3], .attribute = (opt & 8) != 0};
	struct kp_profile *p[2];
	struct kp_diff *df, *dd, *self;
	struct kp_diag d;
	struct kp_diff_gate gate, gate_d, gate_self;
	size_t nreg, nreg_d;
	bool empty;

	blen |= (size_t)fuzz_byte(&in) << 8;
	if (blen > in.n)
		blen = in.n;
	p[0] = load(in.p, blen, opt & 64);
	p[1] = load(in.p + blen, in.n - blen, opt & 64);
	if (!p[0] || !p[1])
		goto out_profiles;

	empty = !kp_profile_total(p[0], 0) || !kp_profile_total(p[1], 0);
	df = kp_diff_compare(p[0], p[1], samples, &o, &d);
	FUZZ_CHECK(!df == empty);
	if (!df)
		goto out_profiles;
	check_diff(df);
	FUZZ_CHECK(kp_diff_dispersion(df) == 0 && !kp_diff_measured(df));
	nreg = check_gate(df, pct, true, &gate);

	/* --dispersion F: z over sqrt F, nothing more significant */
	o.dispersion = 1 + disp_b;
	dd = kp_diff_compare(p[0], p[1], samples, &o, &d);
	FUZZ_CHECK(dd != NULL && kp_diff_nfunctions(dd) == kp_diff_nfunctions(df));
	check_diff(dd);
	for (size_t i = 0; i < kp_diff_nfunctions(df); i++)
		for (int c = 0; c < 2; c++) {
			const struct kp_diff_change *a = &kp_diff_function(df, i)->col[c],
						    *b = &kp_diff_function(dd, i)->col[c];

			FUZZ_CHECK(close_to(b->z, a->z / sqrt(o.dispersion)));
			FUZZ_CHECK(b->p >= a->p && b->p_adj >= a->p_adj);
			FUZZ_CHECK(!b->significant || a->significant);
		}
	nreg_d = check_gate(dd, pct, true, &gate_d);
	FUZZ_CHECK(nreg_d <= nreg);

	{
		const struct kp_profile_value_type *vt = kp_profile_value_type(p[1], 0);
		struct kp_diff_report r = {
			.file = {"base.folded", "new.folded"},
			.profile = {p[0], p[1]},
			.value = kp_profile_str(p[1], vt->type, NULL),
			.unit = kp_profile_str(p[1], vt->unit, NULL),
			.counts = kp_profile_str(p[1], vt->type, NULL),
			.top = tops[(opt >> 2) & 3],
			.gate = &gate,
		};

		check_reports(df, &r, nreg);
		r.gate = &gate_d;
		check_reports(dd, &r, nreg_d);
		r.gate = &gate;
		check_runs(p, &o, &r, 2);
		check_runs(p, &o, &r, 5);
	}
	write_svg((const struct kp_profile *const *)p, opt & 16, opt & 32);

	/* BASE against itself: no change, nothing significant, the gate passes */
	o.dispersion = 0;
	self = kp_diff_compare(p[0], p[0], samples, &o, &d);
	FUZZ_CHECK(self != NULL);
	for (size_t i = 0; i < kp_diff_nfunctions(self); i++)
		for (int c = 0; c < 2; c++) {
			const struct kp_diff_change *ch = &kp_diff_function(self, i)->col[c];

			FUZZ_CHECK(ch->change == 0 && !ch->significant);
		}
	kp_diff_gate(self, 0, &gate_self);
	FUZZ_CHECK(gate_self.n == 0 && gate_self.nskipped == 0);
	kp_diff_gate_fini(&gate_self);
	kp_diff_free(self);

	kp_diff_gate_fini(&gate_d);
	kp_diff_gate_fini(&gate);
	kp_diff_free(dd);
	kp_diff_free(df);
out_profiles:
	kp_profile_free(p[0]);
	kp_profile_free(p[1]);
	return 0;
}
