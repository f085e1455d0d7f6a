/* kprof --every: continuous profiling, window after window
 * (record_every.c; docs/continuous.md). */
#ifndef KP_CLI_RECORD_EVERY_H
#define KP_CLI_RECORD_EVERY_H

#include <stdbool.h>

#include "cli/record_args.h"
#include "profiler/session.h"
#include "profiler/window.h"
#include "push/windows.h"
#include "symbolize/symbolize.h"

/* The pushes c asks for (push/windows.h; none: *out NULL), for command
 * (NULL: none). Returns 0, or the exit status after saying why (a bad
 * URL, label, header, spool directory). */
int kp_record_every_push(struct kp_push_windows **out, const struct kp_record_args *c,
			 const char *command);

/* Before recording: the -o patterns must expand and their directories
 * take files; source lines are read only when a window file keeps them
 * (c->sym.no_lines). Returns 0 or the exit status after saying why. */
int kp_record_every_check(struct kp_record_args *c);

/* Records window after window until the recording ends, writing each to
 * the -o patterns' files and handing it to push (may be NULL), then says
 * what was pushed. Returns 0, or 1 when a window's files could not be
 * written or windows were not delivered. */
int kp_record_every(struct kp_record_args *c, struct kp_session *sess, struct kp_symbolizer *sym,
		    struct kp_push_windows *push);

#endif
