/* What the files of kp_diff share: the diff itself (struct kp_diff: the
 * functions met, each side's sums, the pairs and run entries the gate
 * needs) and the steps each file takes of it. diff.c adds the runs'
 * samples and finishes the comparison; diff_stats.c makes its statistics
 * (dispersions, their prior, the share and time tests, Holm's correction,
 * the gate's permutation test and detectability); diff_gate.c gates and
 * attributes growth. Private to those files. */
#ifndef KP_DIFF_DIFFP_H
#define KP_DIFF_DIFFP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diff/diff.h"
#include "util/strtab.h"
#include "util/u64map.h"

#define NONE UINT32_MAX
/* a (function, kind) pair of one profile, for its cache */
#define KINDS 8

/* What one side's samples add to one function, exact (128-bit): a run
 * adds to its side's alone, and an add touches one or two cache lines. */
struct side_sums {
	kp_count value[2]; /* [column], in the side's decimals */
	kp_count cpu[2];   /* [column], nanoseconds */
	kp_count run[2];   /* [column]: x, the count in the current run */
	kp_count run_cpu;  /* the total column's CPU nanoseconds in the current run */
	kp_count irq;	   /* the run's total-column counts taken inside an interrupt */
};

/* What a function's runs give the test, as doubles made once a run:
 * [column][side]. */
struct sums {
	double count[2][2];  /* sum over runs of x */
	double sq[2][2];     /* sum over runs of x^2 / n, n the run's total count */
	double t[2], tsq[2]; /* [side]: sum over runs of the total column's CPU
			      * nanoseconds t, and of t^2 (the time gate) */
	double irq;	     /* counts inside an interrupt, both sides */
};

/* Where a function B was below a function A in a sample (B's outermost
 * frame deeper than A's): what A's total holds of B's, per run, for the
 * gate's attribution. Sums over runs, [side]: */
struct pair_sums {
	uint32_t a, b;
	double x[2], sq[2], cross[2];	/* x_AB, x_AB^2 / n, x_A x_AB / n (counts) */
	double t[2], tsq[2], tcross[2]; /* t_AB, t_AB^2, t_A t_AB (CPU ns) */
};

/* Pairs are kept among a run's functions holding at least this fraction of
 * its samples (total), at most PAIR_FUNCTIONS of them, the largest: what
 * the gate can name holds more, and a pair left out of a run holds less
 * than the smaller function's count there. */
#define PAIR_MIN_SHARE 0.002
#define PAIR_FUNCTIONS 64

/* One function's count and CPU time in one run (its total column), kept
 * for the gate's permutation test: the runs relabelled, every function's
 * test is made again from these. */
struct run_entry {
	uint32_t fn, run;
	double x, t; /* the count, the CPU nanoseconds */
};

/* One run's total count and side. */
struct run_info {
	double n;
	int side;
};

struct kp_diff {
	struct kp_strtab *names;
	struct kp_u64map index; /* name id * KINDS + kind -> function index */
	struct kp_diff_function *fns;
	struct side_sums *side[2];
	struct sums *sums;
	/* beside fns, what every frame of every sample reads: kept apart
	 * from the sums so that they stay in the caches */
	uint64_t *stamp;    /* the last sample (epoch) that counted its total */
	uint8_t *irq_entry; /* its frames begin an interrupt */
	size_t nfns, cap;
	uint64_t epoch;
	uint32_t *order[2];
	size_t runs[2];
	kp_count total[2]; /* the shown value over the side's runs */
	unsigned decimals[2];
	double count_total[2], cpu_runs[2];
	size_t ntested[2];
	struct kp_stats_prior prior[2];
	struct kp_stats_prior time_prior; /* of the CPU time a run's dispersions */
	struct pair_sums *pairs;
	size_t npairs, pairs_cap;
	struct kp_u64map pair_index; /* a << 32 | b -> pairs index */
	size_t ended_runs;	     /* runs whose recording says the command exited */
	struct run_entry *entries;   /* every run's functions, run by run */
	size_t nentries, entries_cap;
	struct run_info *run_info; /* [run], in the order added */
	size_t nrun_info;
	double alpha, dispersion;
	bool gate_interrupts, attribute, finished;
};

/* diff_stats.c: the tests (see there for each). The dispersions and tests
 * are at the runs' own sides; the gate's attribution tests a rest with
 * them too (diff_gate.c). */
double kp_diff_stats_measured_dispersion(const struct kp_diff *df, const double count[2],
					 const double sq[2], double *dof);
double kp_diff_stats_time_dispersion(const struct kp_diff *df, const double t[2],
				     const double tsq[2], double *dof);
void kp_diff_stats_take_dispersion(struct kp_stats_prior prior, double phi, double dof,
				   double floor, double *disp, double *tdf);
void kp_diff_stats_share_test(const struct kp_diff *df, const double count[2],
			      struct kp_diff_change *ch);
void kp_diff_stats_time_test(const struct kp_diff *df, const double t[2], struct kp_diff_time *tm);
double kp_diff_stats_upper_p(double t, double dof);
double kp_diff_stats_upper_quantile(double p, double dof);
/* kp_diff_finish's steps */
void kp_diff_stats_finish_column(struct kp_diff *df, int col);
void kp_diff_stats_finish_time(struct kp_diff *df);
/* kp_diff_gate_measure's steps */
double kp_diff_stats_resolution(const struct kp_diff *df, size_t m);
size_t kp_diff_stats_gate_adjust(const struct kp_diff *df, enum kp_diff_measure measure,
				 double points, const uint32_t *pos, const uint8_t *member,
				 size_t m, double *p, size_t *family, double *level);
void kp_diff_stats_detectability(const struct kp_diff *df, struct kp_diff_gate *g,
				 const uint8_t *member);

#endif
