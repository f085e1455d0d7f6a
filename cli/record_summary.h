/* What `kprof [record]` says of a run on stderr (record_summary.c). */
#ifndef KP_CLI_RECORD_SUMMARY_H
#define KP_CLI_RECORD_SUMMARY_H

#include "cli/record_args.h"
#include "profile/profile.h"
#include "profiler/session.h"

/* The progress line on a terminal, rewritten in place: a session's
 * progress callback (arg unused). */
void kp_record_summary_progress(void *arg, const struct kp_session_stats *st);

/* Warns that no sample was recorded, and the likely reason for what c
 * sampled. */
void kp_record_summary_no_samples(const struct kp_record_args *c,
				  const struct kp_session_stats *st);

/* The summary line of the run (none with -q), the lost records' advice,
 * and with --stats the unwinding line; p is the named profile, where says
 * where it went ("a.svg, b.folded"). */
/* The line saying which jitdumps were cut short (by kprof's cap on what
 * it keeps, or its read budget), when any was: printed whatever -q says
 * nothing of, since names were lost. */
void kp_record_summary_jitdumps(const struct kp_session_stats *st);
void kp_record_summary_print(const struct kp_record_args *c, const struct kp_session_stats *st,
			     const struct kp_profile *p, const char *where);

/* The losses' line, when the session lost records or was throttled:
 * how many, why, what would avoid it (a whole run's summary and the
 * windows' of kprof --every, with or without --stats). */
void kp_record_summary_losses(const struct kp_session_stats *st);

/* For each module (file, process's JIT code, no mapping, the kernel)
 * with the most frames of p not named by a symbol, down to half a percent
 * of all: what share each way named and what would name the rest. One
 * line each, at most five (record_modules.c). */
void kp_record_modules_print(const struct kp_profile *p);

#endif
