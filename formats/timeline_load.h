/* Several recordings read as one timeline (`kprof report A.kprof B.kprof`,
 * the windows of one `kprof --every` run): each loaded, put in time order
 * by its origin, and joined on the first's time axis (profile/timeline.h). */
#ifndef KP_FORMATS_TIMELINE_LOAD_H
#define KP_FORMATS_TIMELINE_LOAD_H

#include <stddef.h>

#include "formats/load.h"
#include "profile/profile.h"

/* Loads paths[0..n) (n >= 2) into one new profile (*out, the caller
 * frees): the metadata of the first in time, its duration the span of
 * all. Returns 0, or 1 with why in d (one line): a file that does not
 * load, keeps no time or holds other values; two that overlap in time. */
int kp_timeline_load_files(char *const *paths, size_t n, const struct kp_load_opts *lo,
			   struct kp_profile **out, struct kp_diag *d);

/* The same for the *.kprof files of directory dir (a day of `kprof
 * --every` windows; regular files only, no symbolic link followed), or,
 * when it holds none, 1 with that in d. */
int kp_timeline_load_dir(const char *dir, const struct kp_load_opts *lo, struct kp_profile **out,
			 struct kp_diag *d);

#endif
