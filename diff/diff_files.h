/* kp_diff_files: what `kprof diff BASE NEW` computes before it writes
 * anything: both sides read (each a profile or a directory of runs,
 * diff/diff_input.h), the comparison finished, the sides' metadata
 * compared (warnings), the gate at --fail-above decided. The command
 * parses its arguments, calls kp_diff_files_read and kp_diff_files_finish,
 * and writes the outputs from what this holds.
 *
 * Contract: messages travel as text, never printed here: errors in the
 * diag (each call's own; the caller says which command failed), warnings
 * through opts->warn. Everything a struct kp_diff_files points to is owned
 * by it and lives until kp_diff_files_fini. */
#ifndef KP_DIFF_DIFF_FILES_H
#define KP_DIFF_DIFF_FILES_H

#include <stdbool.h>

#include "diff/diff.h"
#include "diff/diff_input.h"
#include "formats/load.h"
#include "profile/folded.h"
#include "util/diag.h"

struct kp_diff_files_opts {
	const char *path[2];	  /* BASE, NEW: a profile, a directory of runs, "-" */
	struct kp_diff_opts diff; /* alpha, dispersion, gate_interrupts */
	struct kp_load_opts load; /* --strict */
	const char *value;	  /* the value shares are of; NULL: each profile's first */
	/* --from, --to (NEW's; BASE's too unless given its own), --base-from,
	 * --base-to: the time of each profile compared (profile/timeline.h) */
	const char *range[4];
	/* Build the differential folded table (BEFORE AFTER a stack) that
	 * the flame graph and the folded output draw; AFTER is NEW's shape,
	 * BASE's with base_shape. */
	bool fold, base_shape;
	/* The CI gate: the functions whose total share grew by more than
	 * fail_above points, significantly (kp_diff_gate). */
	bool gate;
	double fail_above;
	enum kp_diff_measure measure; /* of the gate: share points or time percent */
	/* Called with each warning (a line without "kprof: warning: "). */
	void (*warn)(void *arg, const char *msg);
	void *warn_arg;
};

struct kp_diff_files {
	struct kp_diff *df;
	struct kp_diff_input side[2]; /* BASE, NEW */
	struct kp_folded *fold;	      /* the differential table, or NULL */
	struct kp_diff_gate gate;     /* filled when opts.gate */
};

/* Zeroes f, then reads both sides into a new diff (and the differential
 * table when o->fold). Returns 0, or a negative errno with a line naming
 * the file in d (diff/diff_input.h says which; also when the sides'
 * shares would be of values of different names). */
int kp_diff_files_read(struct kp_diff_files *f, const struct kp_diff_files_opts *o,
		       struct kp_diag *d);

/* Finishes the comparison, warns when the sides were recorded differently
 * (other events, other commands: their shares may differ for other
 * reasons than the change), and decides the gate when o->gate (warning
 * when the runs cannot see a growth of fail_above). Returns 0,
 * or a negative errno with d set (the comparison cannot be made). */
int kp_diff_files_finish(struct kp_diff_files *f, const struct kp_diff_files_opts *o,
			 struct kp_diag *d);

/* The report's header for f's writers (diff/diff_report.h): the sides as
 * o names them, what the shares are of, top functions a column, the gate
 * when o->gate, the command line (may be NULL); r points into f and o. */
struct kp_diff_report;
void kp_diff_files_report(const struct kp_diff_files *f, const struct kp_diff_files_opts *o,
			  size_t top, const char *command, struct kp_diff_report *r);

/* Frees what f holds. Safe on a zeroed struct and after a failure. */
void kp_diff_files_fini(struct kp_diff_files *f);

#endif
