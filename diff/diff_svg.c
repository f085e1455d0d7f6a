/* The differential flame graph of `kprof diff -f svg`: the folded
 * table's AFTER shape (NEW's, or BASE's with --base-shape) coloured by the
 * change of each function's share, with its CPU time a run in the
 * tooltips. */
#include <stdio.h>
#include <string.h>

#include "diff/diff_report.h"

/* The differential flame graph's tooltip note: the function's CPU time a
 * run in BASE and NEW. */
struct seconds_note {
	const struct kp_diff *df;
	char buf[160];
};

static const char *seconds_note(void *arg, const char *name, size_t len, enum kp_frame_kind kind)
{
	struct seconds_note *sn = arg;
	const struct kp_diff_function *fn = kp_diff_find(sn->df, name, len, kind);
	char sec[96];

	if (!fn)
		return NULL;
	char *paren;

	kp_diff_report_format_seconds(&fn->col[KP_DIFF_TOTAL], sec, sizeof(sec));
	if (!sec[0])
		return NULL;
	/* no parenthesis inside the title's own: viewers (and flamegraph.pl's
	 * script) take the name as what comes before the last "(" */
	paren = strrchr(sec, '(');
	if (paren && paren > sec) {
		/* "a -> b s (+30%)" -> "a -> b s, +30%" */
		paren[-1] = ',';
		paren[0] = ' ';
		sec[strlen(sec) - 1] = '\0';
	}
	snprintf(sn->buf, sizeof(sn->buf), "the function: CPU a run %s", sec);
	return sn->buf;
}

int kp_diff_svg_write(const struct kp_diff *df, const struct kp_diff_report *r,
		      const struct kp_folded *f, const struct kp_diff_svg_opts *o, FILE *out,
		      struct kp_diag *d)
{
	struct kp_svg_opts so = *o->svg;
	struct seconds_note sn = {.df = df};
	char subtitle[1024];

	so.diff_shares = true;
	so.diff_swapped = o->base_shape;
	/* BASE as AFTER: its deltas are BASE - NEW, so growth is negative */
	so.negate = so.negate != o->base_shape;
	so.frame_note = seconds_note;
	so.frame_note_arg = &sn;
	if (!so.title)
		so.title = "Differential Flame Graph";
	/* the titles count what the shares are of: time in microseconds, as
	 * the fold counts it */
	if (!so.countname && r->unit && strcmp(r->unit, "nanoseconds") == 0)
		so.countname = "us";
	else if (!so.countname && o->value)
		so.countname = o->value;
	if (!so.subtitle) {
		snprintf(subtitle, sizeof(subtitle),
			 "%s's shape; red: share grew from %s to %s, blue: share shrank",
			 o->base_shape ? r->file[0] : r->file[1], r->file[0], r->file[1]);
		so.subtitle = subtitle;
	}
	return kp_svg_write(f, &so, out, d);
}
