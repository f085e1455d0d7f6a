/* kprof diff as JUnit XML, the test report every CI system shows: a test
 * case a listed function (kp_diff_report_listed), failed when the gate
 * names it, skipped when the gate passed over it as interrupt work. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff_report.h"
#include "flamegraph/xmlout.h"
#include "util/textsafe.h"
#include "util/xalloc.h"

/* Foreign text (a name, a path, the command line) as XML: escaped for a
 * log first (util/textsafe.h: a report printed in a CI job's log holds no
 * control byte, bidi control or "##["), then for XML. */
static void xml_foreign(FILE *out, const char *s, size_t len)
{
	char *t = kp_textsafe_dup(s, len);

	kp_xml_escape(out, t, strlen(t));
	free(t);
}

static void xml_str(FILE *out, const char *s)
{
	kp_xml_escape(out, s, strlen(s));
}

/* The change of total share, for a passing case's output. */
static void change_line(const struct kp_diff_change *ch, char *buf, size_t size)
{
	char p[32], sec[96];

	kp_diff_report_format_p(ch->p_adj, p, sizeof(p));
	kp_diff_report_format_seconds(ch, sec, sizeof(sec));
	snprintf(buf, size, "total share %.2f%% -> %.2f%% (%+.2f points, p %s after Holm%s)%s%s",
		 ch->share[0], ch->share[1], ch->change, p, ch->significant ? ", significant" : "",
		 sec[0] ? "; CPU a run " : "", sec);
}

int kp_diff_junit_write(const struct kp_diff *df, const struct kp_diff_report *r, FILE *out)
{
	const struct kp_diff_gate *g = r->gate;
	size_t n, nfail = 0, nskip = 0;
	uint32_t *list = kp_diff_report_listed(df, r, &n);
	/* per function: its place in the gate's list + 1, 0: not there */
	uint32_t *gated =
		kp_xcalloc(kp_diff_nfunctions(df) ? kp_diff_nfunctions(df) : 1, sizeof(*gated));
	char line[1024];

	for (size_t k = 0; g && k < g->n + g->nskipped; k++)
		gated[g->fn[k]] = (uint32_t)k + 1;
	for (size_t i = 0; i < n; i++) {
		nfail += gated[list[i]] && gated[list[i]] <= g->n;
		nskip += gated[list[i]] && gated[list[i]] > g->n;
	}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
	fprintf(out,
		"<testsuites name=\"kprof diff\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\">\n",
		n, nfail, nskip);
	fputs("<testsuite name=\"kprof diff ", out);
	xml_foreign(out, r->file[0], strlen(r->file[0]));
	fputc(' ', out);
	xml_foreign(out, r->file[1], strlen(r->file[1]));
	fprintf(out, "\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\" errors=\"0\">\n", n, nfail,
		nskip);
	fputs("<properties>\n", out);
	if (r->command) {
		fputs("<property name=\"command\" value=\"", out);
		xml_foreign(out, r->command, strlen(r->command));
		fputs("\"/>\n", out);
	}
	fprintf(out, "<property name=\"runs\" value=\"%zu + %zu\"/>\n",
		kp_diff_runs(df, KP_DIFF_BASE), kp_diff_runs(df, KP_DIFF_NEW));
	if (g)
		fprintf(out, "<property name=\"fail_above\" value=\"%g\"/>\n", g->points);
	fputs("</properties>\n", out);
	for (size_t i = 0; i < n; i++) {
		const struct kp_diff_function *fn = kp_diff_function(df, list[i]);
		const char *note = kp_frame_kind_note(fn->kind);
		uint32_t k = gated[list[i]];

		fputs("<testcase classname=\"kprof.diff\" name=\"", out);
		xml_foreign(out, fn->name, fn->name_len);
		xml_str(out, note);
		fputs("\" time=\"0\">", out);
		if (k) {
			kp_diff_report_format_regression(df, g, k - 1, line, sizeof(line));
			fputs(k <= g->n ? "<failure type=\"regression\" message=\""
					: "<skipped message=\"interrupt work, not gated: ",
			      out);
			xml_str(out, line);
			fputs("\"/>", out);
		} else {
			change_line(&fn->col[KP_DIFF_TOTAL], line, sizeof(line));
			fputs("<system-out>", out);
			xml_str(out, line);
			fputs("</system-out>", out);
		}
		fputs("</testcase>\n", out);
	}
	fputs("</testsuite>\n</testsuites>\n", out);
	free(gated);
	free(list);
	return ferror(out) ? -EIO : 0;
}
