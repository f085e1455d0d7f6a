/* The files of kprof --every's windows: each -o PATTERN named for a
 * window's start (docs/continuous.md). */
#ifndef KP_OUTPUT_WINDOW_FILES_H
#define KP_OUTPUT_WINDOW_FILES_H

#include <time.h>

#include "util/diag.h"

/* The file of pattern for window index, which starts at Unix time t: the
 * pattern's strftime fields of t (local time), or when something not to
 * be replaced holds that name (a directory, another user's file or link:
 * kp_outfile_in_the_way), the first free of NAME.1.EXT ... NAME.99.EXT
 * (the format's extension kept, so that it still chooses the format).
 * Returns a new string, or NULL with why in d; moved says what was in the
 * way and where the file goes instead ("": nothing was). */
char *kp_window_files_path(const char *pattern, time_t t, unsigned index, struct kp_diag *d,
			   struct kp_diag *moved);

#endif
