/* kp_diff_input: one side of `kprof diff` (BASE or NEW) read into a diff:
 * a profile file, or a directory holding several runs of one build
 * (every *.kprof, *.folded, *.zst in it). Runs are read one at a time and
 * freed once added, so a directory of a hundred recordings costs the
 * memory of its largest, beside the diff's sums and the folded table of
 * the differential flame graph. */
#ifndef KP_DIFF_DIFF_INPUT_H
#define KP_DIFF_DIFF_INPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "diff/diff.h"
#include "profile/folded.h"
#include "profile/fold.h"
#include "formats/load.h"
#include "profile/profile.h"
#include "util/diag.h"

struct kp_diff_input_opts {
	struct kp_load_opts load;
	const char *value; /* the value shares are of (--value); NULL: the first */
	/* --from, --to: each run's profile of that time only (NULL: from its
	 * start, to its end; profile/timeline.h) */
	const char *from, *to;
	/* When set, every run's stacks are added to this differential table
	 * as into says (KP_FOLD_BEFORE or KP_FOLD_AFTER), with the value. */
	struct kp_folded *fold;
	enum kp_fold_into into;
	/* Called with each warning (a line without "kprof: warning: "). */
	void (*warn)(void *arg, const char *msg);
	void *warn_arg;
};

/* What was read of a side. */
struct kp_diff_input {
	const char *path; /* as given */
	size_t runs;
	bool directory;
	/* a profile holding only the first run's metadata; value, unit and
	 * counts are the names of the values read (strings of meta) */
	struct kp_profile *meta;
	const char *value, *unit, *counts;
};

/* Adds the runs at path ("-": stdin; a directory: its profiles in
 * version order of their names, never through a symbolic link, hidden
 * files and other names left out) to side of df. Returns 0, or a negative
 * errno with a one-line message naming the file in d: unreadable,
 * damaged, a directory with no profile, a run lacking the value, runs of
 * different events or commands in one directory. s is filled either way;
 * free it with kp_diff_input_fini. */
int kp_diff_input_load(struct kp_diff *df, enum kp_diff_side side, const char *path,
		       const struct kp_diff_input_opts *o, struct kp_diff_input *s,
		       struct kp_diag *d);
void kp_diff_input_fini(struct kp_diff_input *s);

/* Whether the shares of file1 are of the value of those of file0:
 * value1 and value0 are the same name. A CPU profile's first value
 * ("samples") and an off-CPU one's ("off-cpu") are no measure of each
 * other. Returns 0, or -EINVAL with a line naming both files and --value
 * in d. */
int kp_diff_input_same_value(const char *value0, const char *file0, const char *value1,
			     const char *file1, struct kp_diag *d);

#endif
