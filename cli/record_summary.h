/* What `kprof [record]` says of a run on stderr (record_summary.c). */
#ifndef KP_CLI_RECORD_SUMMARY_H
#define KP_CLI_RECORD_SUMMARY_H

#include "cli/record_args.h"
#include "profile/profile.h"
#include "profiler/session.h"
#include "profiler/session_report.h"

/* The progress line on a terminal, rewritten in place: a session's
 * progress callback (arg unused). */
void kp_record_summary_progress(void *arg, const struct kp_session_stats *st);

/* The lines of profiler/session_report.h said (arg unused): a warning,
 * or a line of the summary, escaped (cli/messages.h). */
void kp_record_say(void *arg, bool warning, const char *line);

/* The jitdumps read in part (whatever -q says), then unless -q the
 * summary line of the run, what named each module's frames, and the
 * details: p is the named profile, where says where it went ("a.svg,
 * b.folded"). */
void kp_record_summary_print(const struct kp_record_args *c, const struct kp_session_stats *st,
			     const struct kp_profile *p, const char *where);

#endif
