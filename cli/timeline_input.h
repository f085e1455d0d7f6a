/* Several recordings read as one timeline (`kprof report A.kprof B.kprof`,
 * the windows of one `kprof --every` run): each loaded, put in time order
 * by its origin, and joined on the first's time axis (profile/timeline.h). */
#ifndef KP_CLI_TIMELINE_INPUT_H
#define KP_CLI_TIMELINE_INPUT_H

#include <stddef.h>

#include "formats/load.h"
#include "profile/profile.h"

/* Loads paths[0..n) (n >= 2) into one new profile (*out, the caller
 * frees): the metadata of the first in time, its duration the span of
 * all. Returns 0, or 1 after saying why in one line: a file that does not
 * load, keeps no time or holds other values; two that overlap in time. */
int kp_timeline_input_load(char *const *paths, size_t n, const struct kp_load_opts *lo,
			   struct kp_profile **out);

/* The same for the *.kprof files of directory dir (a day of `kprof
 * --every` windows; regular files only, no symbolic link followed), or,
 * when it holds none, 1 after saying so. */
int kp_timeline_input_dir(const char *dir, const struct kp_load_opts *lo, struct kp_profile **out);

#endif
