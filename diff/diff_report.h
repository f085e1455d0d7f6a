/* The outputs of `kprof diff`: the differential flame graph (diff_svg.c),
 * and the reports, each listing the functions whose share changed most
 * with both shares, the change in points, its standard error, the test,
 * the CPU time a run, and the gate's verdict:
 *   text      for people and job logs          (diff_text.c)
 *   markdown  a pull-request comment           (diff_text.c)
 *   github    GitHub Actions annotations       (diff_text.c)
 *   json      for bots, written with jansson   (diff_json.c)
 *   junit     JUnit XML for CI test reports    (diff_junit.c)
 * The JSON schema is in docs/diff.md. This file's helpers are what the
 * writers share. */
#ifndef KP_DIFF_DIFF_REPORT_H
#define KP_DIFF_DIFF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diff/diff.h"
#include "flamegraph/svg.h"
#include "profile/folded.h"
#include "profile/profile.h"
#include "util/diag.h"

struct kp_diff_report {
	const char *file[2]; /* BASE's and NEW's paths as given: a file or a directory */
	/* each side's first run, for its metadata (may be NULL) */
	const struct kp_profile *profile[2];
	const char *value, *unit;	 /* what the shares are of: "samples", "count" */
	const char *counts;		 /* the value the test counts: "samples" */
	size_t top;			 /* functions a column lists; 0: all */
	const struct kp_diff_gate *gate; /* --fail-above's verdict; NULL: none */
	const char *command; /* the kprof diff command line (markdown, junit); may be NULL */
};

/* The table: the method, then for total and for self share the top
 * functions by the size of their change, then the gate's verdict when
 * there is one. Returns 0 or -EIO. */
int kp_diff_text_write(const struct kp_diff *df, const struct kp_diff_report *r, FILE *out);

/* A pull-request comment: the verdict first, the regressions, a table of
 * the significant changes of total share (at most top), the method and
 * the command line. Returns 0 or -EIO. */
int kp_diff_text_write_markdown(const struct kp_diff *df, const struct kp_diff_report *r,
				FILE *out);

/* GitHub Actions workflow commands: an ::error:: line per regression, a
 * ::warning:: for interrupt work not gated and for a --fail-above below
 * the resolution, a ::notice:: with the verdict. Returns 0 or -EIO. */
int kp_diff_text_write_github(const struct kp_diff *df, const struct kp_diff_report *r, FILE *out);

/* The JSON document (docs/diff.md): the union of each column's top
 * functions and every regression, largest total change first. Names are
 * made valid UTF-8 (invalid bytes become U+FFFD). Returns 0 or a negative
 * errno (d set). */
int kp_diff_json_write(const struct kp_diff *df, const struct kp_diff_report *r, FILE *out,
		       struct kp_diag *d);

/* JUnit XML: one test case a listed function (the union as for JSON),
 * failed when it is a regression. Returns 0 or -EIO. */
int kp_diff_junit_write(const struct kp_diff *df, const struct kp_diff_report *r, FILE *out);

struct kp_diff_svg_opts {
	const struct kp_svg_opts *svg; /* the user's; title and subtitle NULL: the diff's own */
	bool base_shape;	       /* f's AFTER is BASE (--base-shape) */
	const char *value;	       /* --value, or NULL: names the count unless --countname
					* ("us" for a value in time, r->unit "nanoseconds") */
};

/* The differential flame graph of f (the differential folded table whose
 * AFTER is NEW's shape, or BASE's with o->base_shape): red where a share
 * grew, blue where it shrank, each function's CPU time a run in its
 * tooltip; titled "Differential Flame Graph" and subtitled with r's files
 * unless o->svg says otherwise. Returns 0 or a negative errno (d set). */
int kp_diff_svg_write(const struct kp_diff *df, const struct kp_diff_report *r,
		      const struct kp_folded *f, const struct kp_diff_svg_opts *o, FILE *out,
		      struct kp_diag *d);

/* ---- shared by the writers ---- */

/* The functions a report lists: the top of each column and every
 * regression, each once, ordered by the size of the total change. Returns
 * a new array (the caller frees it) of *n indexes. */
uint32_t *kp_diff_report_listed(const struct kp_diff *df, const struct kp_diff_report *r,
				size_t *n);

/* A p-value in a few characters: 0.034, 1.2e-45, <1e-300. */
void kp_diff_report_format_p(double p, char *buf, size_t size);

/* CPU seconds a run, BASE and NEW in one unit with the relative change:
 * "0.182 -> 0.238 s (+30%)", "12.1 -> 9.4 ms (-22%)", "0 -> 3.1 ms
 * (new)". Empty when the change has no seconds. */
void kp_diff_report_format_seconds(const struct kp_diff_change *ch, char *buf, size_t size);

/* How the gate's p-values were adjusted, for "p 0.004 after ...": "Holm
 * over 14 functions" or "a permutation test over 41 functions (252
 * relabellings of the runs)". */
void kp_diff_report_format_adjustment(const struct kp_diff_gate *g, char *buf, size_t size);

/* The line after the name of the gate's k-th function (a regression or
 * interrupt work passed over): "total share 15.81% -> 19.52% (+3.71
 * points, more than 2; p 1.2e-12 after Holm over 14 functions, alpha
 * 0.01); CPU a run 0.182 -> 0.238 s (+30%)" (what stderr, the text and
 * GitHub say). */
void kp_diff_report_format_regression(const struct kp_diff *df, const struct kp_diff_gate *g,
				      size_t k, char *buf, size_t size);

/* Each regression of the gate as kprof names it on stderr, "regression:
 * NAME[ KIND]: " (the name cut at 200 bytes) and its line above, passed
 * to say: a CI log shows them whatever the outputs. */
void kp_diff_report_regressions(const struct kp_diff *df, const struct kp_diff_gate *g,
				void (*say)(void *arg, const char *line), void *arg);

/* What the gate tests, for a verdict: "total share grew by more than 2
 * points" or "CPU time a run grew by more than 15%". */
void kp_diff_gate_format_what(const struct kp_diff_gate *g, char *buf, size_t size);

/* What the gate can see, in a sentence or two: "With these runs the gate
 * catches a growth of 3.1 points with 95% probability (the family's
 * median function; 5.2 in the noisiest, NAME); 9 runs a side would
 * resolve 2 points." and, when points is below it, "Note: ..." (the
 * warning). Names escaped as on a terminal. */
void kp_diff_gate_format_seeing(const struct kp_diff *df, const struct kp_diff_gate *g, char *buf,
				size_t size);

/* The warning kprof prints when kp_diff_gate_unresolved: "5 + 5 runs
 * resolve growths of total share from 2.70 points (...): --fail-above 2
 * can pass a smaller real regression; 9 runs a side would resolve it". */
void kp_diff_gate_format_warning(const struct kp_diff *df, const struct kp_diff_gate *g, char *buf,
				 size_t size);

/* True when points is below what the runs resolve (the detectable growth
 * of the family's median function): the gate would pass a regression of
 * points it cannot see. */
bool kp_diff_gate_unresolved(const struct kp_diff_gate *g);

#endif
