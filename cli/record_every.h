/* kprof --every: continuous profiling, window after window
 * (record_every.c; docs/continuous.md). */
#ifndef KP_CLI_RECORD_EVERY_H
#define KP_CLI_RECORD_EVERY_H

#include <stdbool.h>

#include "cli/record_args.h"
#include "profiler/session.h"
#include "profiler/window.h"
#include "symbolize/symbolize.h"

/* The pushes of a continuous recording (record_push.c): each window as
 * gzip'd pprof to every --push server, through push/. */
struct kp_record_push;

/* Sets up the pushes c asks for (none: *out NULL). Returns 0, or the exit
 * status after saying why (a bad URL, label, header, spool directory). */
int kp_record_push_new(struct kp_record_push **out, const struct kp_record_args *c,
		       const char *command);
/* Hands window w over (encoded now; sent in the background). */
void kp_record_push_window(struct kp_record_push *p, const struct kp_window *w);
/* At the end: waits a while for what is still queued, says what was
 * delivered, kept or lost (quiet: only when a window was not delivered).
 * Returns 0, or 1 when windows were lost or dropped. */
int kp_record_push_finish(struct kp_record_push *p, bool quiet);
void kp_record_push_free(struct kp_record_push *p);

/* Before recording: the -o patterns must expand and their directories
 * take files; source lines are read only when a window file keeps them
 * (c->sym.no_lines). Returns 0 or the exit status after saying why. */
int kp_record_every_check(struct kp_record_args *c);

/* Records window after window until the recording ends, writing each to
 * the -o patterns' files and handing it to push (may be NULL). Returns 0,
 * or 1 when a window's files could not be written. */
int kp_record_every(struct kp_record_args *c, struct kp_session *sess, struct kp_symbolizer *sym,
		    struct kp_record_push *push);

#endif
