/* What `kprof report` reads: one profile (any format kp_load_profile
 * reads), or several recordings or a directory of them as one timeline
 * (formats/timeline_load.h); the range of --from and --to of it, and what
 * to draw of it (the roots it was recorded with, a value by name). */
#ifndef KP_FORMATS_LOAD_RANGE_H
#define KP_FORMATS_LOAD_RANGE_H

#include <stdbool.h>
#include <stddef.h>

#include "formats/load.h"
#include "profile/fold.h"
#include "profile/profile.h"
#include "util/diag.h"
#include "util/notes.h"

struct kp_load_range_opts {
	struct kp_load_opts load;
	const char *from, *to; /* the range (profile/timeline.h), or NULL */
	bool no_time;	       /* the profile's time axis left out */
};

/* Reads paths[0..n) (n >= 1; several, or one directory: one timeline)
 * into a new profile (*p, the caller frees, also after a failure), the
 * range of o->from and o->to only. info (one profile read) says what was
 * skipped; warnings gets what the range leaves out. Returns 0, -1 with d
 * saying why a file does not load, or -2 with d "FILE: why" when the range
 * cannot be cut (the caller names its command). */
int kp_load_range(char *const *paths, size_t n, const struct kp_load_range_opts *o,
		  struct kp_profile **p, struct kp_load_info *info, struct kp_notes *warnings,
		  struct kp_diag *d);

/* fold's roots as p was recorded (--pid, --tid), unless it asks for some,
 * and the value named value (NULL: the first). Returns 0, or -1 with d
 * saying "no value 'NAME' (it has: ...)". */
int kp_load_range_fold(const struct kp_profile *p, const char *value, struct kp_fold_opts *fold,
		       struct kp_diag *d);

#endif
