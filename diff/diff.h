/* kp_diff: what changed between two builds' profiles, function by
 * function, whether the change is more than noise, and the CI gate on it
 * (`kprof diff`).
 *
 * Each side, BASE and NEW, is one run or several runs of one build (each
 * a profile, added one at a time: the diff keeps sums, never a profile).
 * A function is a frame name with its kind (user, kernel, JIT, inline),
 * as the flame graph and the top table show them; the root frame (the
 * comm) is not a function. For each function and each side:
 *   self   the value of the samples whose innermost frame it is;
 *   total  the value of the samples it appears in (once a sample, even
 *          when it recurses);
 * as a share of the side's total of that value over all its runs, in
 * percent. The change is NEW's share minus BASE's, in percentage points.
 *
 * Significance is tested on sample counts, not on the shown value (a
 * period in nanoseconds is a weight, not an observation):
 *   one run a side  a two-proportion z-test (binomial counts, or F times
 *                   their variance with a dispersion F);
 *   several runs    a t-test of the change against a quasi-binomial
 *                   dispersion measured from the runs, each function's
 *                   own moderated by an empirical Bayes prior fitted to
 *                   all functions', never below its own.
 * The p-values of each column (self, total) are adjusted with Holm's
 * method over the functions that column tests (those with a count in
 * either side), so that the chance of any false "significant" in a
 * column is at most alpha however many functions there are. See
 * docs/diff.md and diff/stats.h. */
#ifndef KP_DIFF_DIFF_H
#define KP_DIFF_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diff/stats.h"
#include "profile/profile.h"
#include "util/diag.h"
#include "util/frame.h"

struct kp_diff;

enum kp_diff_side { KP_DIFF_BASE, KP_DIFF_NEW };
enum kp_diff_column { KP_DIFF_SELF, KP_DIFF_TOTAL };

struct kp_diff_opts {
	double alpha; /* 0 < alpha < 1; 0 means 0.01 */
	/* One run a side: the variance of a count is this times the
	 * binomial one (clustered samples; z is divided by its square root).
	 * Several runs: the least dispersion a function is given. 0 means 1
	 * with one run a side, no floor with several. */
	double dispersion;
	/* The gate (kp_diff_gate) fires on interrupt work too (by default it
	 * passes over it: it lands on whatever runs). */
	bool gate_interrupts;
	/* Keep which functions' samples were below which (a second pass over
	 * each run's samples): the gate names a function whose growth is a
	 * descendant's as that descendant's, not its own. */
	bool attribute;
};

/* Which values of a run's profile the diff reads (indexes). */
struct kp_diff_values {
	size_t value; /* the shares are of this value */
	size_t count; /* the test counts this value (samples) */
	long cpu;     /* nanoseconds of CPU, for seconds a run; -1: none */
};

/* One column (self or total) of one function. */
struct kp_diff_change {
	kp_count value[2];  /* the shown value over the side's runs, exact */
	double count[2];    /* the sample counts the test uses, summed */
	double share[2];    /* percent of each side's total value */
	double change;	    /* share[NEW] - share[BASE], percentage points */
	double se;	    /* the change's standard error (points) under the test's model */
	double seconds[2];  /* CPU seconds a run (its cpu value / runs), NAN without */
	double dispersion;  /* the count variance the test took, times the binomial one */
	double df;	    /* the test's degrees of freedom (INFINITY: the normal) */
	double z, p, p_adj; /* the test (z: t with several runs); p_adj after
			     * Holm (1 when not tested) */
	bool tested;	    /* a count in either side: part of the column's family */
	bool significant;   /* p_adj <= alpha */
};

/* A function's CPU time a run (the total column's nanoseconds of CPU,
 * each run's), tested when kp_diff_time_tested: quasi-Poisson (the
 * variance of a run's time phi times its mean), phi measured from the
 * runs and moderated as the shares' dispersions are. */
struct kp_diff_time {
	double mean[2];	   /* nanoseconds a run, BASE and NEW */
	double growth;	   /* mean[NEW] / mean[BASE] - 1; INFINITY: none in BASE */
	double se;	   /* the standard error of mean[NEW] - mean[BASE], ns */
	double dispersion; /* phi, nanoseconds */
	double df;	   /* the test's degrees of freedom */
	double t, p;	   /* p one-sided: P(T >= t), the growth */
	bool tested;
};

struct kp_diff_function {
	const char *name; /* owned by the diff */
	size_t name_len;
	enum kp_frame_kind kind;
	struct kp_diff_change col[2]; /* KP_DIFF_SELF, KP_DIFF_TOTAL */
	struct kp_diff_time time;     /* its CPU time a run (tested or not) */
	/* interrupt work: most of its samples were taken inside a hardware
	 * or soft interrupt (below an interrupt entry frame), work that lands
	 * on whatever runs, not the program's own; or it is a kernel function
	 * that turns interrupts back on (irq_enable, irqrestore,
	 * finish_task_switch), where pending interrupts are delivered */
	bool interrupt;
};

/* A new, empty diff (the caller frees it). */
struct kp_diff *kp_diff_new(const struct kp_diff_opts *o);
void kp_diff_free(struct kp_diff *df);

/* Adds p as one run of side; nothing of p is kept. Returns 0, or -EINVAL
 * for an index p does not have, -ENODATA when p's total of a value is 0,
 * -ERANGE when the exact sums would overflow (d set; the diff is then
 * unchanged). Not after kp_diff_finish. */
int kp_diff_add_run(struct kp_diff *df, enum kp_diff_side side, const struct kp_profile *p,
		    const struct kp_diff_values *v, struct kp_diag *d);

/* Computes the shares, the tests and the orders, once, after the last
 * run and before anything below is asked. Returns 0, or -ENODATA (d set)
 * when a side has no run. */
int kp_diff_finish(struct kp_diff *df, struct kp_diag *d);

/* kp_diff_new, one run of base and one of new, kp_diff_finish: NULL with
 * d set on error. */
struct kp_diff *kp_diff_compare(const struct kp_profile *base, const struct kp_profile *new_,
				const struct kp_diff_values v[2], const struct kp_diff_opts *o,
				struct kp_diag *d);

double kp_diff_alpha(const struct kp_diff *df);
/* The --dispersion given (0: none). */
double kp_diff_dispersion(const struct kp_diff *df);
/* Runs added to side. */
size_t kp_diff_runs(const struct kp_diff *df, enum kp_diff_side side);
/* True when the runs measure how shares vary (more than two runs in
 * all): the t-test; false: the z-test on binomial counts. */
bool kp_diff_measured(const struct kp_diff *df);
/* The residual degrees of freedom of each function's dispersion (runs
 * minus 2) and the prior fitted to the column's dispersions (df 0: none;
 * INFINITY: every function took the prior's). */
double kp_diff_residual_df(const struct kp_diff *df);
struct kp_stats_prior kp_diff_prior(const struct kp_diff *df, enum kp_diff_column col);
/* True when every run had CPU nanoseconds: the changes have seconds. */
bool kp_diff_has_seconds(const struct kp_diff *df);
/* True when the CPU time a run is tested: two runs or more a side, each
 * with CPU nanoseconds. */
bool kp_diff_time_tested(const struct kp_diff *df);
/* True when every run's recording says its command ran to its end
 * (metadata end=exit): a benchmark of fixed work did all of it. */
bool kp_diff_ran_to_end(const struct kp_diff *df);
/* The prior fitted to the CPU time dispersions (nanoseconds). */
struct kp_stats_prior kp_diff_time_prior(const struct kp_diff *df);
/* The total of the shown value (exact, with its decimals) and of the
 * counts, per side, over its runs. */
kp_count kp_diff_total(const struct kp_diff *df, enum kp_diff_side side, unsigned *decimals);
double kp_diff_total_count(const struct kp_diff *df, enum kp_diff_side side);
/* How many functions the column tested (the size of Holm's family). */
size_t kp_diff_ntested(const struct kp_diff *df, enum kp_diff_column col);

size_t kp_diff_nfunctions(const struct kp_diff *df);
const struct kp_diff_function *kp_diff_function(const struct kp_diff *df, size_t i);
/* The function (name, kind), or NULL. */
const struct kp_diff_function *kp_diff_find(const struct kp_diff *df, const char *name, size_t len,
					    enum kp_frame_kind kind);
/* Function indexes by the size of their change in column col, largest
 * |change| first (ties: the smaller p, then the name). kp_diff_nfunctions
 * entries, owned by the diff. */
const uint32_t *kp_diff_order(const struct kp_diff *df, enum kp_diff_column col);

/* What the gate measures: a function's total share, in percentage points
 * (--fail-above 2), or its CPU time a run, in percent (--fail-above 15%). */
enum kp_diff_measure { KP_DIFF_SHARE, KP_DIFF_TIME };

/* The CI gate at points (--fail-above): the functions whose total share
 * grew by more than points (or whose CPU time a run grew by more than
 * points percent) AND whose growth is significant, one-sided (a shrink
 * never fails the gate), after a correction over the gate's own family
 * (a permutation test of the runs' labels, Westfall and Young's step-down
 * minP, when the runs allow 2 / alpha relabellings or more; else Holm's),
 * largest growth first:
 *   share, several runs a side: the functions whose mean share (of
 *     BASE's and NEW's) is in (points / 2, 100 - points / 2), the only
 *     ones whose share can grow by points (independent filtering: the
 *     mean says nothing of the direction); one run a side: the column's;
 *   time: the functions whose pooled CPU time a run is enough for a growth
 *     of points percent to be significant alone at the column's typical
 *     dispersion.
 * Interrupt work is passed over unless gate_interrupts. A function whose growth is explained by a
 * named descendant's (its total less the part of it under the descendant did not grow by points
 * significantly) is listed as via that descendant, not as a regression (when the diff kept the
 * pairs: opts.attribute). */
struct kp_diff_gate {
	enum kp_diff_measure measure;
	double points;
	/* the functions the adjustment is over: Holm's (every function of
	 * the family), or the permutation test's (those it can name:
	 * interrupt work passed over is adjusted beside them) */
	size_t family;
	/* relabellings of the runs the permutation test made (Westfall and
	 * Young's step-down minP); 0: Holm's correction instead (too few runs
	 * for a p-value at alpha: fewer than 2 / alpha relabellings) */
	size_t relabellings;
	/* the one-sided p-value one function must reach at the adjustment's
	 * strictest step: alpha / family for Holm; the alpha-quantile of the
	 * relabellings' least p-value over the family */
	double level;
	size_t n;	 /* regressions: fn[0..n) */
	size_t nskipped; /* interrupt work passed over: fn[n..n + nskipped) */
	size_t nvia;	 /* explained by a descendant: fn[n + nskipped..) + nvia */
	uint32_t *fn;	 /* function indexes */
	double *p;	 /* beside fn: each one's one-sided p-value after Holm over the family */
	uint32_t *via;	 /* beside fn: the descendant that explains it (fn[k] for the others) */
	/* beside fn: 1 when fn[k] is within via[k] instead: via[k], named, an
	 * ancestor that holds the change privately (its samples, each
	 * step up mostly the one below) */
	uint8_t *within;
	/* the smallest growth the test can find significant in a function
	 * holding half of the samples, with the column's typical dispersion
	 * and the first step of Holm's correction, two-sided (share only; as
	 * schema 1 had it) */
	double resolution;
	/* The smallest growth (points, or percent of time) the gate catches
	 * with 95% probability at the strictest step of Holm's correction
	 * (alpha / family, one-sided): in a typical function of the family
	 * (its median share or CPU time a run, the column's typical
	 * dispersion: the prior's), and the largest of the family's
	 * functions' own (their own dispersions), in detectable_fn. NAN: no
	 * family. */
	double detectable, detectable_max;
	uint32_t detectable_fn;
	/* Runs a side at which the typical function's detectable growth is at
	 * most points (its noise shrinking as 1 / sqrt(runs)); 0: more than
	 * KP_DIFF_RUNS_MAX. */
	size_t runs_needed;
	/* The time gate's functions whose CPU time a run grew past points,
	 * significantly (one-sided p times those left out at most alpha:
	 * Bonferroni), but that hold too
	 * few samples a run for a growth of points to show at these runs
	 * (fewer than small_needs): left out of the family, they cannot fail
	 * the gate; the one of most samples in small_fn (UINT32_MAX: none). */
	size_t small_grew;
	uint32_t small_fn;
	double small_has; /* small_fn's samples a run, both sides pooled */
	double small_needs;
};

#define KP_DIFF_RUNS_MAX 1000

/* Fills g (the share gate); free it with kp_diff_gate_fini. */
void kp_diff_gate(const struct kp_diff *df, double points, struct kp_diff_gate *g);
/* Fills g for measure: KP_DIFF_TIME needs kp_diff_time_tested (else the
 * gate is empty). */
void kp_diff_gate_measure(const struct kp_diff *df, enum kp_diff_measure measure, double points,
			  struct kp_diff_gate *g);
void kp_diff_gate_fini(struct kp_diff_gate *g);

/* The one-sided p-value of a function's growth, as the gate tests it
 * (before Holm), and the growth (points or percent). */
double kp_diff_gate_p(const struct kp_diff *df, enum kp_diff_measure measure, size_t i,
		      double *growth);

/* "user", "kernel", "jit", "inline". */
const char *kp_diff_kind_name(enum kp_frame_kind kind);

#endif
