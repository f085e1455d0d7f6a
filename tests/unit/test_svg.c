/* The SVG writer through its API (what the recorder uses): metadata lines,
 * kinds, escaping, errors, and the terminal report. Geometry against
 * flamegraph.pl is tests/golden/svg_geometry.sh. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/svg.h"
#include "formats/top.h"
#include "kp_test.h"

static struct kp_folded *sample_table(void)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_frame a[] = {{"myprog", KP_FRAME_ROOT},
			       {"main", KP_FRAME_USER},
			       {"compute", KP_FRAME_USER},
			       {"sys_write", KP_FRAME_KERNEL}};
	struct kp_frame b[] = {{"myprog", KP_FRAME_ROOT},
			       {"main", KP_FRAME_USER},
			       {"compute", KP_FRAME_USER},
			       {"compute", KP_FRAME_USER},
			       {"inl<T>", KP_FRAME_INLINE}};

	kp_folded_add(f, a, 4, 30);
	kp_folded_add(f, b, 5, 70);
	return f;
}

static char *write_svg(const struct kp_folded *f, const struct kp_svg_opts *o, int *err,
		       struct kp_diag *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	*err = kp_svg_write(f, o, out, d);
	fclose(out);
	return buf;
}

static void test_info_lines_and_kinds(void)
{
	struct kp_folded *f = sample_table();
	struct kp_svg_opts o;
	struct kp_diag d = {{0}};
	const char *info[] = {"kprof -F 99 ./myprog <arg>", "cycles at 99 Hz, 1.0 s"};
	int err;
	char *svg;

	kp_svg_opts_init(&o);
	o.info_lines = info;
	o.n_info_lines = 2;
	svg = write_svg(f, &o, &err, &d);
	CHECK_EQ_INT(err, 0);
	CHECK(strstr(svg,
		     "class=\"info\" x=\"600.00\" y=\"48\">kprof -F 99 ./myprog &lt;arg&gt;<") !=
	      NULL);
	CHECK(strstr(svg, "class=\"info\" x=\"600.00\" y=\"64\">cycles at 99 Hz, 1.0 s<") != NULL);
	/* 6 levels (96) + 36 + 34, and 12*2 + 16 for two lines */
	CHECK(strstr(svg, "height=\"206\"") != NULL);
	/* suffixes are not shown; kinds are coloured, inline names escaped */
	CHECK(strstr(svg, "<title>sys_write (30 samples, 30.00%)</title>") != NULL);
	CHECK(strstr(svg, "<title>inl&lt;T&gt; (70 samples, 70.00%)</title>") != NULL);
	CHECK(strstr(svg, "_[k]") == NULL);
	CHECK(strstr(svg, "<title>all (100 samples, 100%)</title>") != NULL);
	/* recursion: compute appears twice on one stack, two boxes */
	CHECK(strstr(svg, "<title>compute (100 samples, 100.00%)</title>") != NULL);
	CHECK(strstr(svg, "<title>compute (70 samples, 70.00%)</title>") != NULL);
	free(svg);
	kp_folded_free(f);
}

static void test_errors(void)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_svg_opts o;
	struct kp_diag d = {{0}};
	int err;
	char *svg;

	kp_svg_opts_init(&o);
	svg = write_svg(f, &o, &err, &d);
	CHECK_EQ_INT(err, -ENODATA);
	CHECK_EQ_STR(d.msg, "no samples to draw");
	free(svg);
	kp_folded_free(f);

	f = sample_table();
	o.colors = "plaid";
	svg = write_svg(f, &o, &err, &d);
	CHECK_EQ_INT(err, -EINVAL);
	free(svg);
	kp_svg_opts_init(&o);
	o.width = 10;
	svg = write_svg(f, &o, &err, &d);
	CHECK_EQ_INT(err, -EINVAL);
	free(svg);
	kp_folded_free(f);
	CHECK(kp_svg_palette_known("java"));
	CHECK(!kp_svg_palette_known("time"));
	CHECK(kp_svg_bgcolors_known("#a0B1c2"));
	CHECK(!kp_svg_bgcolors_known("#a0B1c"));
}

static void test_report_top(void)
{
	struct kp_folded *f = sample_table();
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	CHECK_EQ_INT(kp_top_write(f, out, 20, "samples", NULL), 0);
	fclose(out);
	CHECK(strstr(buf, "100 samples in 2 distinct stacks.") != NULL);
	/* self: leaves only */
	CHECK(strstr(buf, "   70.00%              70  inl<T> [inlined]\n"
			  "   30.00%              30  sys_write [kernel]\n") != NULL);
	/* total: recursive compute counted once per stack, the root left out */
	CHECK(strstr(buf, "  100.00%             100  compute\n") != NULL);
	CHECK(strstr(buf, "myprog") == NULL);
	free(buf);
	kp_folded_free(f);
}

/* kprof diff's graph: deltas of share (BEFORE scaled to AFTER's total),
 * titles in points of self and total share, NEW - BASE even when AFTER
 * holds BASE; flamegraph.pl's colours. */
static void test_differential_shares(void)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_frame a[] = {{"m", KP_FRAME_USER}, {"a", KP_FRAME_USER}};
	struct kp_frame b[] = {{"m", KP_FRAME_USER}, {"b", KP_FRAME_USER}};
	struct kp_svg_opts o;
	struct kp_diag d = {{0}};
	int err;
	char *svg;

	/* BEFORE: a 50, b 50 of 100; AFTER: a 100, b 300 of 400 */
	kp_folded_add_diff(f, a, 2, 50, 100, 0);
	kp_folded_add_diff(f, b, 2, 50, 300, 0);
	kp_svg_opts_init(&o);
	o.diff_shares = true;
	svg = write_svg(f, &o, &err, &d);
	CHECK_EQ_INT(err, 0);
	/* a: 50% -> 25%, -25 points; in AFTER's counts 100 - 200 = -100 of
	 * the largest |delta| 100: full blue */
	CHECK(strstr(svg, "<title>a (100 samples, 25.00%; self -25.00, total -25.00 points)</title>"
			  "<rect x=\"10.0\" y=\"37\" width=\"295.0\" height=\"15.0\" "
			  "fill=\"#0000ff\"") != NULL);
	CHECK(strstr(svg, "<title>b (300 samples, 75.00%; self +25.00, total +25.00 points)</title>"
			  "<rect x=\"305.0\" y=\"37\" width=\"885.0\" height=\"15.0\" "
			  "fill=\"#ff0000\"") != NULL);
	/* m: no self change, all of both */
	CHECK(strstr(svg,
		     "<title>m (400 samples, 100.00%; self 0.00, total 0.00 points)</title>") !=
	      NULL);
	free(svg);
	/* the same counts read as flamegraph.pl reads them: raw deltas */
	o.diff_shares = false;
	svg = write_svg(f, &o, &err, &d);
	CHECK(strstr(svg, "<title>a (100 samples, 25.00%; +12.50%)</title>") != NULL);
	CHECK(strstr(svg, "<title>b (300 samples, 75.00%; +62.50%)</title>") != NULL);
	free(svg);
	/* AFTER holds BASE: the titles still say NEW - BASE; negate swaps
	 * the hues */
	o.diff_shares = o.diff_swapped = o.negate = true;
	svg = write_svg(f, &o, &err, &d);
	CHECK(strstr(svg, "self +25.00, total +25.00 points)</title><rect x=\"10.0\" y=\"37\" "
			  "width=\"295.0\" height=\"15.0\" fill=\"#ff0000\"") != NULL);
	free(svg);
	kp_folded_free(f);
}

KP_TEST_MAIN(test_info_lines_and_kinds, test_errors, test_report_top, test_differential_shares)
