/* kp_folded_read: folded text ("a;b;c 12" lines, as FlameGraph's
 * stackcollapse scripts and kprof write it) read into a folded table
 * (profile/folded.h). `kprof flamegraph` reads its input so, and
 * kp_load (formats/load.h) a folded file. */
#ifndef KP_FORMATS_FOLDED_READ_H
#define KP_FORMATS_FOLDED_READ_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/folded.h"
#include "util/diag.h"

/* The longest line kp_folded_read takes, in bytes, its newline not
 * counted: 16 MiB. A real stack is far shorter (kprof records at most 1024
 * addresses a stack, perf at most some 8000; 16 MiB is 8000 frames of 2 KB
 * names), and the cap bounds what reading one line costs: the line, and 8
 * bytes a frame for a line of empty frames (";;;..."), some 150 MB at
 * most. Overridable at build time, to test that path with small inputs
 * (tests/fuzz). */
#ifndef KP_FOLDED_MAX_LINE
#define KP_FOLDED_MAX_LINE (16u << 20)
#endif

/* Options for reading folded text. */
struct kp_folded_read_opts {
	bool strict; /* fail at the first bad line instead of skipping it */
	/* When reading the stream fails: why, for the message (may be NULL:
	 * errno's text), e.g. kp_zstd_reader_error of the reader behind it. */
	const char *(*read_error)(const void *arg);
	const void *read_error_arg;
	/* Where to put what the counts are when the text says it in a
	 * "# countname: UNIT" comment line (kprof collapse --header): the
	 * first such UNIT of letters, digits and -_./, at most
	 * countname_size - 1 bytes, when countname is "" (the caller's
	 * start: a later file's line does not replace it); untouched when
	 * there is none. NULL: not asked. */
	char *countname;
	size_t countname_size;
};

/* Reads folded text ("a;b;c 12" per line; CRLF, blank lines and '#'
 * comment lines skipped; counts integer or decimal, kept exact;
 * _[k]/_[j]/_[i] suffixes become frame kinds; a line with two counts,
 * "a;b;c 10 12", is a differential stack, BEFORE AFTER, as flamegraph.pl
 * reads difffolded.pl's output). name is used in messages
 * ("FILE:LINE: ..."). A line is bad when it does not end in whitespace and
 * a count (digits, optionally a '.' and more digits), as flamegraph.pl
 * reads it, or its count cannot be kept exact (more than 38 digits or 19
 * decimals). Bad lines are skipped and counted in *bad_lines (may be NULL;
 * counting goes on from its value, so one counter serves several files),
 * and the diag describes the first one even though the call succeeds.
 * With opts->strict the first bad line fails the call instead.
 *
 * Input that is not text fails the call, whatever opts->strict says, with
 * "FILE:LINE: why" in the diag, and nothing after it is read: a NUL byte
 * (-EINVAL; binary data, which folded text never holds: kprof's writers
 * turn control characters in names into '?'), a line longer than
 * KP_FOLDED_MAX_LINE (-E2BIG; found before more of it is buffered, so an
 * endless line costs that much memory, not all of it), and an error
 * reading in (-EIO, or -ENOMEM when the line cannot be buffered): never
 * taken for the end of the input. Returns 0 or a negative errno (diag
 * set). */
int kp_folded_read(struct kp_folded *f, FILE *in, const char *name,
		   const struct kp_folded_read_opts *opts, uint64_t *bad_lines, struct kp_diag *d);

/* What kp_folded_read_files read besides the stacks: the lines skipped,
 * the first of them named ("FILE:LINE: why"), for a warning. */
struct kp_folded_skipped {
	uint64_t lines;
	struct kp_diag first;
};

/* Reads the folded files paths[0..n) ("-": stdin; none: stdin) into f,
 * merged, as `kprof flamegraph` draws them. Returns 0, or -1 with d saying
 * why nothing can be drawn: a file that cannot be read (a directory: "give
 * folded files"), no valid stack. */
int kp_folded_read_files(struct kp_folded *f, char *const *paths, size_t n,
			 const struct kp_folded_read_opts *ro, struct kp_folded_skipped *skipped,
			 struct kp_diag *d);

#endif
