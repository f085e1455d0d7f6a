/* The flame-graph long options (flamegraph.pl's names and meanings),
 * shared by `kprof flamegraph` and the recorder when it writes SVG. */
#ifndef KP_CLI_SVG_OPTIONS_H
#define KP_CLI_SVG_OPTIONS_H

#include <getopt.h>
#include <stdio.h>

#include "flamegraph/svg.h"

/* Applies option val with argument arg (may be NULL) to o. Returns 1 when
 * handled, 0 when val is not an SVG option, -1 on a bad value (after
 * printing the error). Strings are not copied: arg must outlive o. */
int kp_svg_options_apply(int val, const char *arg, struct kp_svg_opts *o);

/* getopt_long's table: own[0..nown) followed by the SVG options (each
 * val in 1000..1099), ending in a zero entry. The caller frees it. */
struct option *kp_svg_options_with(const struct option *own, size_t nown);

/* One line per option. */
void kp_svg_options_help(FILE *out);

#endif
