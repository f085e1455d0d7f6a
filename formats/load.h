/* kp_load_profile: sniffing and loading any profile file kprof reads: folded
 * text, zstd-compressed folded text (.zst, recognised by its magic, not its
 * name), and .kprof recordings. `kprof report` and `kprof diff` start here. */
#ifndef KP_FORMATS_LOAD_H
#define KP_FORMATS_LOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/profile.h"
#include "util/diag.h"

struct kp_load_opts {
	bool strict;	       /* folded text: fail at the first bad line */
	bool regular_only;     /* a regular file, never through a symbolic link
				* (a FIFO or device is refused, not opened) */
	const char *countname; /* folded text: the value's name (default "samples") */
};

struct kp_load_info {
	const char *format; /* "folded", "folded (zstd)", "kprof"; static storage */
	uint64_t bad_lines; /* folded text: lines skipped */
	char first_bad[sizeof(
		((struct kp_diag *)0)->msg)]; /* the first of them, "FILE:LINE: why" */
	bool differential;		      /* folded text of "stack BEFORE AFTER" lines: the
					       * profile holds AFTER only */
};

/* Reads path ("-": stdin) into a new profile (*out, the caller frees).
 * Returns 0, or a negative errno with a one-line message naming the file
 * in d: unreadable, a directory, damaged or truncated compressed data, no
 * valid stack, a link or no regular file with regular_only. Bad lines of folded text are skipped
 * and described in info (may be NULL). */
int kp_load_profile(const char *path, const struct kp_load_opts *o, struct kp_profile **out,
		    struct kp_load_info *info, struct kp_diag *d);

#endif
