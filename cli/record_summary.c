/* What a recording says on stderr besides errors: the progress line on a
 * terminal, and the lines of profiler/session_report.h (why no sample was
 * recorded, the summary line, with --stats how stacks were unwound) with
 * what named each module's frames (symbolize/unknown_report.h) among them. */
#include "cli/record_summary.h"

#include <stdio.h>

#include "cli/messages.h"
#include "symbolize/unknown_report.h"

/* The progress line on a terminal: rewritten in place. */
void kp_record_summary_progress(void *arg, const struct kp_session_stats *st)
{
	(void)arg;
	if (st->seconds < 1.0)
		return;
	fprintf(stderr, "\rkprof: recording %.1f s, %llu samples, %llu lost \033[K", st->seconds,
		(unsigned long long)st->samples, (unsigned long long)st->lost);
}

void kp_record_say(void *arg, bool warning, const char *line)
{
	(void)arg;
	if (warning)
		kp_warn("%s", line);
	else
		kp_say("%s", line);
}

static void say_line(void *arg, const char *line)
{
	kp_record_say(arg, false, line);
}

void kp_record_summary_print(const struct kp_record_args *c, const struct kp_session_stats *st,
			     const struct kp_profile *p, const char *where)
{
	kp_session_report_jitdumps(st, kp_record_say, NULL);
	if (c->quiet)
		return;
	kp_session_report_run(&c->sess, st, p, where, kp_record_say, NULL);
	kp_sym_unknown_report(p, say_line, NULL);
	kp_session_report_details(&c->sess, st, c->stats, kp_record_say, NULL);
}
