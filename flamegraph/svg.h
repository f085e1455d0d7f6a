/* kp_svg: the interactive flame-graph SVG writer (flamegraph.pl's picture,
 * written natively: same frames, x, y and widths for the same input and
 * options; inline CSS and JavaScript for search, zoom and tooltips). */
#ifndef KP_FLAMEGRAPH_SVG_H
#define KP_FLAMEGRAPH_SVG_H

#include <stdbool.h>
#include <stdio.h>

#include "flamegraph/svg_opts.h"
#include "profile/folded.h"
#include "util/diag.h"

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
