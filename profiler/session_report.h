/* profiler/ is sampling (profile/ is the model it fills).
 *
 * What a recording's counts say to the user (session_report.c), one line
 * each, handed to the caller, who prints them (profiler/ prints nothing):
 * why no sample was recorded, the run's summary line, why stacks were cut
 * and what would keep them whole, the off-CPU line, the lost records and
 * the throttling with what would avoid them, the jitdumps read in part,
 * and --stats's lines (unwinding, Java, node, jitdumps). */
#ifndef KP_PROFILER_SESSION_REPORT_H
#define KP_PROFILER_SESSION_REPORT_H

#include <stdbool.h>

#include "profile/profile.h"
#include "profiler/session.h"

/* A line for the user: a warning, or a line of the summary; no prefix, no
 * newline; foreign bytes (the profile's path in where) not escaped yet. */
typedef void (*kp_report_fn)(void *arg, bool warning, const char *line);

/* Why no sample was recorded (a warning): the likely reason for what o
 * sampled. */
void kp_session_report_empty(const struct kp_session_opts *o, const struct kp_session_stats *st,
			     kp_report_fn fn, void *arg);

/* The run's summary line for p, its named profile, written to where
 * ("a.svg, b.folded"): samples, lost records, processes, the frames left
 * unresolved, the stacks truncated and why; then, when a cause the user
 * can act on cut 1% of the stacks, what would keep them whole. */
void kp_session_report_run(const struct kp_session_opts *o, const struct kp_session_stats *st,
			   const struct kp_profile *p, const char *where, kp_report_fn fn,
			   void *arg);

/* After the run's line: the off-CPU line (--off-cpu, --wall), the losses
 * (kp_session_report_losses) and with stats, how stacks were unwound and
 * what the Java, node and jitdump readers did. */
void kp_session_report_details(const struct kp_session_opts *o, const struct kp_session_stats *st,
			       bool stats, kp_report_fn fn, void *arg);

/* When the session lost records or was throttled: how many, why, what
 * would avoid it (a whole run's and the windows' of kprof --every). */
void kp_session_report_losses(const struct kp_session_stats *st, kp_report_fn fn, void *arg);

/* The jitdumps cut short (by kprof's cap on what it keeps, or its read
 * budget), when any was (a warning: names were lost, said even with -q). */
void kp_session_report_jitdumps(const struct kp_session_stats *st, kp_report_fn fn, void *arg);

#endif
