/* The files of kprof --every's windows: each -o PATTERN named for a
 * window's start (docs/continuous.md). */
#ifndef KP_OUTPUT_WINDOW_FILES_H
#define KP_OUTPUT_WINDOW_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "util/diag.h"

struct kp_output_ctx;

/* The file of pattern for window index, which starts at Unix time t: the
 * pattern's strftime fields of t (local time), or when something not to
 * be replaced holds that name (a directory, another user's file or link:
 * kp_outfile_in_the_way), the first free of NAME.1.EXT ... NAME.99.EXT
 * (the format's extension kept, so that it still chooses the format).
 * Returns a new string, or NULL with why in d; moved says what was in the
 * way and where the file goes instead ("": nothing was). */
char *kp_window_files_path(const char *pattern, time_t t, unsigned index, struct kp_diag *d,
			   struct kp_diag *moved);

/* What writing the windows has to say, through the caller: an error, a
 * warning (a name moved aside, a file --keep could not remove), or an
 * error on an -o extension no format has (the caller lists the formats). */
enum kp_window_files_note {
	KP_WINDOW_FILES_ERROR,
	KP_WINDOW_FILES_WARNING,
	KP_WINDOW_FILES_UNKNOWN_EXT
};
typedef void kp_window_files_say_fn(void *arg, enum kp_window_files_note note, const char *msg);

/* The -o patterns of a recording, in the profile's formats (format: -f,
 * or NULL for each name's extension), their last keep windows' files kept
 * (0: all). patterns are borrowed for the object's life. */
struct kp_window_files;

/* Whether a window file of these patterns keeps source lines. */
bool kp_window_files_lines(const char *format, const char *const *patterns, size_t n);
/* The first window's files, created and discarded before recording: a
 * pattern or directory that cannot work fails at once. Returns 0 or the
 * exit status after saying why through say. */
int kp_window_files_check(const char *format, const char *const *patterns, size_t n,
			  kp_window_files_say_fn *say, void *arg);
/* Owned by the caller: kp_window_files_free. */
struct kp_window_files *kp_window_files_new(const char *format, const char *const *patterns,
					    size_t n, unsigned keep, kp_window_files_say_fn *say,
					    void *arg);
/* Writes ctx to the files of window index, which starts at Unix time t;
 * with --keep the oldest files beyond keep go. Returns 0, or -1 after
 * saying why (the recording goes on). */
int kp_window_files_write(struct kp_window_files *w, const struct kp_output_ctx *ctx, time_t t,
			  unsigned index);
void kp_window_files_free(struct kp_window_files *w);

#endif
