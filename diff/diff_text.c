/* kprof diff's reports in text: the table for people and job logs, the
 * Markdown comment for a pull request, and GitHub Actions annotations. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff_report.h"
#include "profile/run_meta.h"
#include "util/count.h"
#include "util/frame.h"
#include "util/textsafe.h"
#include "util/xalloc.h"

/* Names longer than this are cut in tables (not in JSON). */
#define NAME_MAX_BYTES 200
#define WRAP	       78
/* In the method's paragraph, a space where put_wrapped may not break: the
 * one before a foreign field and those inside it, so that no wrapped line
 * starts with text kprof did not write. A control byte, so never in
 * escaped text. */
#define NBSP	  "\001"
#define NBSP_CHAR '\001'

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

static int name_len(const struct kp_diff_function *fn)
{
	return (int)kp_textsafe_cut(fn->name, fn->name_len, NAME_MAX_BYTES);
}

/* Text from outside (a function's name, a path, a recording's command or
 * value names) in the text report: escaped (util/textsafe.h), so no byte
 * of it is a control byte or ends the line; every line that carries one
 * begins with kprof's own words, so none starts a workflow command. */
static void put_foreign(FILE *out, const char *s, size_t len)
{
	kp_textsafe_write(out, s, len);
}

/* A function's name, cut for a table, then its kind's note. */
static void put_name(FILE *out, const struct kp_diff_function *fn)
{
	put_foreign(out, fn->name, (size_t)name_len(fn));
	fprintf(out, "%s%s", name_len(fn) < (int)fn->name_len ? "..." : "",
		kp_frame_kind_note(fn->kind));
}

/* A Markdown code span holding s[0..len) as literal text (CommonMark
 * 0.30, "Code spans"), in a new string (the caller frees it): escaped
 * first (util/textsafe.h), then fenced by one backtick more than its
 * longest run of backticks, with a space inside each fence (stripped by
 * the renderer; it lets the text begin or end with a backtick). In a code
 * span no byte is Markdown: no link, image, emphasis, entity or HTML. In a
 * table cell (cell) every '|' is written "\|": GFM splits a row into
 * cells before it parses code spans, and gives "\|" back as '|' in
 * them. */
static char *md_span_str(const char *s, size_t len, bool cell)
{
	char *t = kp_textsafe_dup(s, len), *out, *o;
	size_t run = 0, longest = 0, n = strlen(t);

	for (size_t i = 0; i < n; i++) {
		run = t[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	o = out = kp_xmalloc(2 * (longest + 2) + 2 * n + 1);
	memset(o, '`', longest + 1);
	o += longest + 1;
	*o++ = ' ';
	for (size_t i = 0; i < n; i++) {
		if (cell && t[i] == '|')
			*o++ = '\\';
		*o++ = t[i];
	}
	*o++ = ' ';
	memset(o, '`', longest + 1);
	o += longest + 1;
	*o = '\0';
	free(t);
	return out;
}

static void md_span(FILE *out, const char *s, size_t len, bool cell)
{
	char *span = md_span_str(s, len, cell);

	fputs(span, out);
	free(span);
}

/* A foreign field of the method's paragraph (a value's name), rendered in
 * a new string (the caller frees it): for the text, escaped with its
 * spaces unbreakable; for Markdown, a code span. */
static char *para_field(const char *s, bool md)
{
	size_t len = kp_textsafe_cut(s, strlen(s), 100); /* the paragraph holds it */
	char *t;

	if (md)
		return md_span_str(s, len, false);
	t = kp_textsafe_dup(s, len);
	for (char *c = t; *c; c++)
		if (*c == ' ')
			*c = NBSP_CHAR;
	return t;
}

/* "5 runs, " for a side of several runs. */
static const char *runs_of(const struct kp_diff *df, int side, char *buf, size_t size)
{
	size_t n = kp_diff_runs(df, side);

	if (n == 1)
		return "";
	snprintf(buf, size, "%zu runs, ", n);
	return buf;
}

/* What a recording says of its run: "; cpu-clock, 2.51 s: kprof -F 999 --
 * ./bench" (nothing for folded text). */
static void print_run(FILE *out, const struct kp_profile *p)
{
	struct kp_run_meta m = {0};
	const char *event, *duration, *command;

	if (p)
		kp_run_meta_read(p, &m);
	event = m.event;
	duration = m.text.duration;
	command = m.command;
	if (!event && !duration && !command)
		return;
	fputs(";", out);
	if (event) {
		fputc(' ', out);
		put_foreign(out, event, strlen(event));
	}
	if (duration) {
		fputs(event ? ", " : " ", out);
		put_foreign(out, duration, strlen(duration));
		fputs(" s", out);
	}
	if (command) {
		fputs(": ", out);
		put_foreign(out, command, kp_textsafe_cut(command, strlen(command), 200));
	}
}

/* The method in a paragraph (no line breaks): the test, its model, the
 * correction and the resolution; the value names in it rendered for
 * Markdown (md) or the text (NBSP before and inside them). */
static void method(const struct kp_diff *df, const struct kp_diff_report *r, bool md, char *buf,
		   size_t size)
{
	size_t n = 0;
	struct kp_stats_prior prior = kp_diff_prior(df, KP_DIFF_TOTAL);
	bool other_counts = strcmp(r->value, r->counts) != 0;
	char *value = para_field(r->value, md), *counts = para_field(r->counts, md);

#define ADD(...) (n += (size_t)snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__))
	ADD("Shares of" NBSP "%s", value);
	if (other_counts)
		ADD(", tested on the counts of" NBSP "%s", counts);
	ADD(". Significant (*): p <= %g ", kp_diff_alpha(df));
	if (kp_diff_measured(df)) {
		ADD("in a t-test of each change against how much the function's share varied "
		    "between the %zu + %zu runs (a quasi-binomial dispersion",
		    kp_diff_runs(df, KP_DIFF_BASE), kp_diff_runs(df, KP_DIFF_NEW));
		if (isinf(prior.df))
			ADD(": all functions' %.3g where a function's own is not larger",
			    prior.var);
		else if (prior.df > 0)
			ADD(", each function's own moderated toward all functions' %.3g on %.1f "
			    "degrees of freedom, never below its own",
			    prior.var, prior.df);
		ADD(")");
		if (kp_diff_dispersion(df))
			ADD(", at least %g times the binomial variance (--dispersion)",
			    kp_diff_dispersion(df));
	} else {
		ADD("in a two-proportion z-test on the counts of" NBSP "%s", counts);
	}
	ADD(", after Holm's correction over the functions compared (%zu for total share, %zu "
	    "for self share).",
	    kp_diff_ntested(df, KP_DIFF_TOTAL), kp_diff_ntested(df, KP_DIFF_SELF));
	if (!kp_diff_measured(df)) {
		ADD(" One run a side: how much shares vary between runs was not measured, only "
		    "sampling noise");
		if (kp_diff_dispersion(df) && kp_diff_dispersion(df) != 1)
			ADD(", counts taken to vary %g times as much as independent samples would "
			    "(--dispersion)",
			    kp_diff_dispersion(df));
		ADD("; record several runs a side to measure it.");
	}
#undef ADD
	free(value);
	free(counts);
}

/* The paragraph as it is, its unbreakable spaces as spaces. */
static void put_para(FILE *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len && s[i]; i++)
		fputc(s[i] == NBSP_CHAR ? ' ' : s[i], out);
}

/* s as lines of at most width columns (words are never cut). */
static void put_wrapped(FILE *out, const char *s, int width)
{
	while (*s) {
		int len = (int)strlen(s), cut = len;

		if (len > width) {
			cut = width;
			while (cut > 0 && s[cut] != ' ')
				cut--;
			if (cut == 0)
				cut = (int)(strchr(s, ' ') ? strchr(s, ' ') - s : len);
		}
		put_para(out, s, (size_t)cut);
		fputc('\n', out);
		s += cut;
		while (*s == ' ')
			s++;
	}
}

static void print_column(const struct kp_diff *df, const struct kp_diff_report *r, FILE *out,
			 enum kp_diff_column col)
{
	size_t nfn = kp_diff_nfunctions(df), top = r->top && r->top < nfn ? r->top : nfn;
	bool seconds = kp_diff_has_seconds(df);
	char p[32], sec[96];

	fprintf(out, "%s share (%s), largest changes first:\n",
		col == KP_DIFF_TOTAL ? "Total" : "Self",
		col == KP_DIFF_TOTAL ? "the function and what it calls" : "the function alone");
	fprintf(out, "  %8s  %8s  %8s  %6s  %9s    ", "base", "new", "change", "+- se", "p (Holm)");
	if (seconds)
		fprintf(out, "%-27s  ", "CPU a run");
	fputs("function\n", out);
	for (size_t i = 0, shown = 0; i < nfn && shown < top; i++) {
		const struct kp_diff_function *fn = kp_diff_function(df, kp_diff_order(df, col)[i]);
		const struct kp_diff_change *ch = &fn->col[col];

		/* never in the column in either profile (a caller's self) */
		if (!ch->tested)
			continue;
		shown++;
		kp_diff_report_format_p(ch->p_adj, p, sizeof(p));
		fprintf(out, "  %7.2f%%  %7.2f%%  %+8.2f  %6.2f  %9s %s  ", ch->share[0],
			ch->share[1], ch->change == 0 ? 0.0 : ch->change, ch->se, p,
			ch->significant ? "*" : " ");
		if (seconds) {
			kp_diff_report_format_seconds(ch, sec, sizeof(sec));
			fprintf(out, "%-27s  ", sec);
		}
		put_name(out, fn);
		fputc('\n', out);
	}
}

/* The gate's k-th function: "  - NAME [kernel]: total share ..." (the
 * dash is kprof's: the line never starts with the name) */
static void print_gated(const struct kp_diff *df, const struct kp_diff_gate *g, size_t k, FILE *out)
{
	const struct kp_diff_function *fn = kp_diff_function(df, g->fn[k]);
	char line[1024];

	kp_diff_report_format_regression(df, g, k, line, sizeof(line));
	fputs("  - ", out);
	put_name(out, fn);
	fprintf(out, ": %s\n", line);
}

static void print_gate(const struct kp_diff *df, const struct kp_diff_gate *g, FILE *out)
{
	char what[160], see[1024];

	kp_diff_gate_format_what(g, what, sizeof(what));
	fprintf(out, "\nGate (--fail-above %g%s): ", g->points,
		g->measure == KP_DIFF_TIME ? "%" : "");
	if (!g->n)
		fprintf(out, "pass: no function's %s significantly.\n", what);
	else
		fprintf(out, "FAIL: %zu function%s whose %s significantly:\n", g->n,
			g->n == 1 ? "" : "s", what);
	for (size_t k = 0; k < g->n; k++)
		print_gated(df, g, k, out);
	if (g->nskipped)
		fprintf(out, "Not gated: interrupt work, which lands on whatever runs "
			     "(--gate-interrupts gates it):\n");
	for (size_t k = g->n; k < g->n + g->nskipped; k++)
		print_gated(df, g, k, out);
	if (g->nvia)
		fprintf(out, "Not named on their own: their growth is another's, named above:\n");
	for (size_t k = g->n + g->nskipped; k < g->n + g->nskipped + g->nvia; k++)
		print_gated(df, g, k, out);
	if (g->relabellings)
		fprintf(out,
			"(One-sided test of growth; a permutation test (Westfall and Young's "
			"step-down minP, %zu relabellings of the runs) over the %zu function%s "
			"that "
			"could hold such a growth and can be named.)\n",
			g->relabellings, g->family, g->family == 1 ? "" : "s");
	else
		fprintf(out,
			"(One-sided test of growth; Holm's correction over the %zu function%s that "
			"could hold such a growth.)\n",
			g->family, g->family == 1 ? "" : "s");
	kp_diff_gate_format_seeing(df, g, see, sizeof(see));
	fprintf(out, "%s\n", see);
}

int kp_diff_text_write(const struct kp_diff *df, const struct kp_diff_report *r, FILE *out)
{
	char num[KP_COUNT_BUF * 2], runs[32], para[4096];

	for (int s = 0; s < 2; s++) {
		unsigned decimals;
		kp_count total = kp_diff_total(df, s, &decimals);

		format_count(total, decimals, num);
		fprintf(out, "%-4s  ", s ? "NEW" : "BASE");
		put_foreign(out, r->file[s], strlen(r->file[s]));
		fprintf(out, ": %s%s ", runs_of(df, s, runs, sizeof(runs)), num);
		put_foreign(out, r->value, strlen(r->value));
		if (strcmp(r->value, r->counts) != 0) {
			format_count((kp_count)llround(kp_diff_total_count(df, s)), 0, num);
			fputs(" (", out);
			put_foreign(out, r->unit, strlen(r->unit));
			fprintf(out, "), %s ", num);
			put_foreign(out, r->counts, strlen(r->counts));
		}
		print_run(out, r->profile[s]);
		fputc('\n', out);
	}
	method(df, r, false, para, sizeof(para));
	put_wrapped(out, para, WRAP);
	fputc('\n', out);
	print_column(df, r, out, KP_DIFF_TOTAL);
	fputc('\n', out);
	print_column(df, r, out, KP_DIFF_SELF);
	if (r->gate)
		print_gate(df, r->gate, out);
	return ferror(out) ? -EIO : 0;
}

/* Markdown. */

/* A function name in a table cell: a code span (md_span), then its
 * kind's note, kprof's own words. */
static void md_name(FILE *out, const struct kp_diff_function *fn)
{
	md_span(out, fn->name, (size_t)name_len(fn), true);
	fprintf(out, "%s%s", name_len(fn) < (int)fn->name_len ? "..." : "",
		kp_frame_kind_note(fn->kind));
}

static void md_row(FILE *out, const struct kp_diff_function *fn, bool seconds)
{
	const struct kp_diff_change *ch = &fn->col[KP_DIFF_TOTAL];
	char p[32], sec[96];

	kp_diff_report_format_p(ch->p_adj, p, sizeof(p));
	fputs("| ", out);
	md_name(out, fn);
	fprintf(out, " | %.2f%% | %.2f%% | %s%+.2f%s | %.2f | %s |", ch->share[0], ch->share[1],
		ch->change > 0 ? "**" : "", ch->change, ch->change > 0 ? "**" : "", ch->se, p);
	if (seconds) {
		kp_diff_report_format_seconds(ch, sec, sizeof(sec));
		fprintf(out, " %s |", sec);
	}
	fputc('\n', out);
}

static void md_table_head(FILE *out, bool seconds)
{
	fprintf(out, "| function | base | new | change (points) | +- se | p (Holm) |%s\n",
		seconds ? " CPU a run |" : "");
	fprintf(out, "| --- | ---: | ---: | ---: | ---: | ---: |%s\n", seconds ? " ---: |" : "");
}

/* The gate's functions fn[from..from + n) as a table under a heading
 * line (NULL: none), nothing when n is 0. */
static void md_gate_table(FILE *out, const struct kp_diff *df, const struct kp_diff_gate *g,
			  size_t from, size_t n, const char *heading)
{
	bool seconds = kp_diff_has_seconds(df);

	if (!n)
		return;
	if (heading)
		fprintf(out, "%s\n\n", heading);
	md_table_head(out, seconds);
	for (size_t i = from; i < from + n; i++)
		md_row(out, kp_diff_function(df, g->fn[i]), seconds);
	fputc('\n', out);
}

int kp_diff_text_write_markdown(const struct kp_diff *df, const struct kp_diff_report *r, FILE *out)
{
	const struct kp_diff_gate *g = r->gate;
	size_t nreg = g ? g->n : 0, nfn = kp_diff_nfunctions(df), top = r->top ? r->top : nfn;
	size_t shown = 0;
	bool seconds = kp_diff_has_seconds(df);
	char para[4096], runs[32];

	if (!g)
		fputs("### kprof diff\n\n", out);
	else if (nreg)
		fprintf(out, "### kprof diff: FAIL, %zu regression%s\n\n", nreg,
			nreg == 1 ? "" : "s");
	else
		fputs("### kprof diff: pass\n\n", out);
	if (g) {
		char what[160];

		kp_diff_gate_format_what(g, what, sizeof(what));
		fprintf(out, "%s function's %s significantly.\n\n",
			nreg ? (nreg == 1 ? "One" : "These") : "No", what);
		md_gate_table(out, df, g, 0, nreg, NULL);
		md_gate_table(out, df, g, nreg, g->nskipped,
			      "Not gated, as interrupt work that lands on whatever runs "
			      "(`--gate-interrupts` gates it):");
		md_gate_table(out, df, g, nreg + g->nskipped, g->nvia,
			      "Not named on their own, their growth being another's (the "
			      "`kprof diff` text says whose):");
		{
			char see[1024];

			kp_diff_gate_format_seeing(df, g, see, sizeof(see));
			/* numbers and kprof's words only: no name in it */
			fprintf(out, "%s%s\n\n", kp_diff_gate_unresolved(g) ? "**Note:** " : "",
				see);
		}
	}
	for (size_t i = 0; i < nfn && shown < top; i++) {
		uint32_t fi = kp_diff_order(df, KP_DIFF_TOTAL)[i];
		const struct kp_diff_function *fn = kp_diff_function(df, fi);
		bool listed = false;

		for (size_t k = 0; g && k < g->n + g->nskipped + g->nvia; k++)
			listed |= g->fn[k] == fi && (k < nreg || k >= nreg + g->nskipped);
		if (!fn->col[KP_DIFF_TOTAL].significant || listed)
			continue;
		if (!shown++) {
			fprintf(out,
				"%s significant changes of total share (the function and what it "
				"calls), largest first:\n\n",
				nreg ? "Other" : "The");
			md_table_head(out, seconds);
		}
		md_row(out, fn, seconds);
	}
	if (shown)
		fputc('\n', out);
	else if (!nreg)
		fputs("No significant change of total share.\n\n", out);
	fputs("<details><summary>How this was compared</summary>\n\n", out);
	for (int s = 0; s < 2; s++) {
		char num[KP_COUNT_BUF * 2];

		format_count((kp_count)llround(kp_diff_total_count(df, s)), 0, num);
		fprintf(out, "%s ", s ? "NEW" : "BASE");
		md_span(out, r->file[s], strlen(r->file[s]), false);
		fprintf(out, ": %s%s ", runs_of(df, s, runs, sizeof(runs)), num);
		md_span(out, r->counts, strlen(r->counts), false);
		fprintf(out, ".%s\n", s ? "\n" : "");
	}
	method(df, r, true, para, sizeof(para));
	put_para(out, para, sizeof(para));
	if (g)
		fprintf(out,
			" The gate's p-values are corrected over the %zu function%s whose shares "
			"could hold a growth of %g points%s.",
			g->family, g->family == 1 ? "" : "s", g->points,
			g->relabellings ? " (a permutation test: the runs relabelled)" : "");
	fputs("\n\n", out);
	if (r->command) {
		md_span(out, r->command, strlen(r->command), false);
		fputs("\n\n", out);
	}
	fputs("</details>\n", out);
	return ferror(out) ? -EIO : 0;
}

/* GitHub Actions. */

/* s as a workflow command's data (property: also its ':' and ','). */
static void gh_escape(FILE *out, const char *s, size_t len, bool property)
{
	for (size_t i = 0; i < len; i++) {
		switch (s[i]) {
		case '%':
			fputs("%25", out);
			break;
		case '\r':
			fputs("%0D", out);
			break;
		case '\n':
			fputs("%0A", out);
			break;
		case ':':
			fputs(property ? "%3A" : ":", out);
			break;
		case ',':
			fputs(property ? "%2C" : ",", out);
			break;
		default:
			fputc(s[i], out);
		}
	}
}

static void gh_function(FILE *out, const char *level, const char *title, const struct kp_diff *df,
			const struct kp_diff_gate *g, size_t k)
{
	const struct kp_diff_function *fn = kp_diff_function(df, g->fn[k]);
	const char *note = kp_frame_kind_note(fn->kind);
	char line[1024], *name;

	kp_diff_report_format_regression(df, g, k, line, sizeof(line));
	fprintf(out, "::%s title=", level);
	gh_escape(out, title, strlen(title), true);
	fputs("::", out);
	/* escaped for the log first: the runner shows the line as it is */
	name = kp_textsafe_dup(fn->name, (size_t)name_len(fn));
	gh_escape(out, name, strlen(name), false);
	free(name);
	gh_escape(out, note, strlen(note), false);
	fputs(": ", out);
	gh_escape(out, line, strlen(line), false);
	fputc('\n', out);
}

int kp_diff_text_write_github(const struct kp_diff *df, const struct kp_diff_report *r, FILE *out)
{
	const struct kp_diff_gate *g = r->gate;
	char msg[1024];

	for (size_t k = 0; g && k < g->n; k++)
		gh_function(out, "error", "kprof diff: regression", df, g, k);
	for (size_t k = g ? g->n : 0; g && k < g->n + g->nskipped; k++)
		gh_function(out, "warning", "kprof diff: interrupt work, not gated", df, g, k);
	for (size_t k = g ? g->n + g->nskipped : 0; g && k < g->n + g->nskipped + g->nvia; k++)
		gh_function(out, "notice", "kprof diff: another's growth", df, g, k);
	if (g && kp_diff_gate_unresolved(g)) {
		kp_diff_gate_format_seeing(df, g, msg, sizeof(msg));
		fputs("::warning title=kprof diff::", out);
		gh_escape(out, msg, strlen(msg), false);
		fputc('\n', out);
	}
	if (g) {
		char what[160];

		kp_diff_gate_format_what(g, what, sizeof(what));
		snprintf(msg, sizeof(msg),
			 "%s: %zu function%s whose %s significantly (%zu + %zu runs)",
			 g->n ? "FAIL" : "pass", g->n, g->n == 1 ? "" : "s", what,
			 kp_diff_runs(df, KP_DIFF_BASE), kp_diff_runs(df, KP_DIFF_NEW));
	} else
		snprintf(msg, sizeof(msg), "compared %zu + %zu runs (no gate: --fail-above)",
			 kp_diff_runs(df, KP_DIFF_BASE), kp_diff_runs(df, KP_DIFF_NEW));
	fputs("::notice title=kprof diff::", out);
	gh_escape(out, msg, strlen(msg), false);
	fputc('\n', out);
	return ferror(out) ? -EIO : 0;
}
