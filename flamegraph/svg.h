/* kp_svg: the interactive flame-graph SVG writer (flamegraph.pl's picture,
 * written natively: same frames, x, y and widths for the same input and
 * options; inline CSS and JavaScript for search, zoom and tooltips). */
#ifndef KP_FLAMEGRAPH_SVG_H
#define KP_FLAMEGRAPH_SVG_H

#include <stdbool.h>
#include <stdio.h>

#include "profile/folded.h"
#include "util/diag.h"

struct kp_svg_opts {
	const char *title;     /* default "Flame Graph" ("Icicle Graph" when inverted) */
	const char *subtitle;  /* NULL: none */
	int width;	       /* image width, default 1200 */
	int frame_height;      /* --height, default 16 */
	double fontsize;       /* default 12 */
	const char *fonttype;  /* default "Verdana" */
	double minwidth;       /* px, default 0.1; "N%" handled by the option parser */
	bool minwidth_percent; /* minwidth is a percentage of the width */
	const char *countname; /* NULL (the default): "samples"; "us" for time */
	const char *nametype;  /* default "Function:" */
	const char *colors;    /* palette, default "hot" */
	const char *bgcolors;  /* yellow, blue, green, grey or #rrggbb; NULL: by palette */
	bool hash, random, inverted, reverse, flamechart, negate;
	double total;		       /* --total: 0 means sum of counts */
	const char *notes;	       /* embedded in the SVG as notes */
	const char *const *info_lines; /* extra metadata lines under the title (recording) */
	size_t n_info_lines;
	bool allow_empty; /* draw a "No samples" graph instead of failing (recording) */
	double fontwidth; /* average glyph width relative to fontsize, default 0.59 */
	double factor;	  /* --factor: scale counts in titles, default 1 */
	/* Differential tables (kp_folded_differential): */
	bool diff_shares;  /* deltas are changes of share (kprof diff): BEFORE is
			    * scaled to AFTER's total, titles say points */
	bool diff_swapped; /* diff_shares: AFTER holds BASE (kprof diff
			    * --base-shape): titles still say NEW - BASE */
	/* More for a frame's title, after its counts: kprof diff gives a
	 * function's CPU time a run. Returns text (escaped here), or NULL
	 * for nothing; it must live until the next call. */
	const char *(*frame_note)(void *arg, const char *name, size_t len, enum kp_frame_kind kind);
	void *frame_note_arg;
};

void kp_svg_opts_init(struct kp_svg_opts *o);

/* Writes the flame graph of f (differential when f is: colours and
 * titles as flamegraph.pl gives difffolded.pl's two-count lines; negate
 * swaps the hues). A frame with off-CPU time in it (stacks ending in a
 * marker frame, profile/wait.h) says its share of it in its title, "; 80%
 * off-CPU", and is drawn in the io palette's blues when that is more than
 * half of it; a table without such stacks draws as before. Returns 0 or a negative errno (diag
 * set): -ENODATA when f holds no samples (nothing to draw), -EINVAL for bad options (unknown
 * palette or background, width too small), -EIO when out fails. Options are not copied; strings in
 * o must outlive the call. */
int kp_svg_write(const struct kp_folded *f, const struct kp_svg_opts *o, FILE *out,
		 struct kp_diag *d);

/* True when name is a palette kp_svg_write knows (hot, mem, io, wakeup,
 * chain, java, js, perl, red, green, blue, aqua, yellow, purple, orange). */
bool kp_svg_palette_known(const char *name);
/* True for the --bgcolors values: yellow, blue, green, grey or #rrggbb. */
bool kp_svg_bgcolors_known(const char *name);

#endif
