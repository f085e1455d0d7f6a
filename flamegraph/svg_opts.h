/* kp_svg_opts: the options of the flame-graph SVG (flamegraph/svg.h), a
 * type alone: the layout (flamegraph/layout.h) reads them without
 * depending on the writer that draws it. */
#ifndef KP_FLAMEGRAPH_SVG_OPTS_H
#define KP_FLAMEGRAPH_SVG_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/folded.h"

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

#endif
