/* profiler/ is sampling (profile/ is the model it fills).
 *
 * kp_session: one recording, from opening the events to a profile.
 *
 *   kp_session_new      opens the events (and forks the command, held)
 *   kp_session_run      reads the rings until the command exits, the
 *                       duration ends, the targets are gone or a signal
 *                       arrives; adds each sample's location stack to the
 *                       profile as it goes
 *   kp_session_profile  the profile: the symbolizer names it, writers
 *                       write it (the session only records)
 */
#ifndef KP_PROFILER_SESSION_H
#define KP_PROFILER_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile/profile.h"
#include "profiler/session_types.h"
#include "profiler/hotspot_frames.h"
#include "profiler/node.h"
#include "profiler/offcpu.h"
#include "profiler/perf_event.h"
#include "symbolize/symbolize.h"
#include "unwind/unwind.h"
#include "util/diag.h"

struct kp_session;

/* The defaults: cycles at 99 Hz, build-ids, the kernel's stack depth (no
 * more than KP_SESSION_MAX_FRAMES), --switch-freq 1000 (session_opts.c). */
void kp_session_opts_init(struct kp_session_opts *o);
/* What the options ask of each other, before opening: -p/-t and a
 * system-wide target conflict (-EINVAL); --off-cpu takes no -e, --wall a
 * clock event (-ENOTSUP); --wall without -e samples cpu-clock, a tower per
 * thread. Returns 0 or the error with the reason in d. */
int kp_session_opts_check(struct kp_session_opts *o, bool event_given, struct kp_diag *d);
/* The command to run (argv, NULL-terminated; NULL: none) and whether it is
 * the target. Returns 0, or -EINVAL (reason in d) when there is nothing to
 * sample: no command, no ids, not system-wide. */
int kp_session_opts_command(struct kp_session_opts *o, char *const *argv, struct kp_diag *d);

/* Returns 0 or a negative errno with the reason in d. On -ENOENT/-EACCES
 * from exec the exit code (127/126) is in *exit_code. */
int kp_session_new(struct kp_session **out, const struct kp_session_opts *opts, int *exit_code,
		   struct kp_diag *d);
void kp_session_free(struct kp_session *s);

/* progress is called about four times a second while recording (may be NULL). */
int kp_session_run(struct kp_session *s,
		   void (*progress)(void *arg, const struct kp_session_stats *st), void *arg,
		   struct kp_diag *d);
/* kp_session_run in two steps, for a recording cut into windows
 * (profiler/window.h): kp_session_loop reads the rings until `until`
 * seconds into the recording (kp_session_elapsed) and returns true, or
 * returns false when the recording is over (the command exited, the
 * duration passed, the targets are gone, a signal came); kp_session_end
 * then stops the events, processes what is left, reaps the command and
 * completes the run's record. */
bool kp_session_loop(struct kp_session *s, double until,
		     void (*progress)(void *arg, const struct kp_session_stats *st), void *arg);
void kp_session_end(struct kp_session *s);
/* How many signals asking kprof to stop (SIGINT, SIGTERM, ...) came so
 * far, the pending ones read now (each also ends the recording, as in the
 * loop): for the naming after the recording, or of a window, to notice a
 * stop asked meanwhile. A system call, cheap enough to ask a few times a
 * second. */
unsigned kp_session_stop_signals(struct kp_session *s);
/* Seconds since the recording started; the Unix time in nanoseconds. */
double kp_session_elapsed(const struct kp_session *s);
uint64_t kp_session_unix_ns(void);

/* The recording as a profile (locations not named yet): value types
 * samples/count and the event's period (cpu/nanoseconds for cpu-clock and
 * task-clock, else EVENT/count), the run's metadata once kp_session_run
 * has returned. Owned by s. */
struct kp_profile *kp_session_profile(struct kp_session *s);
/* Once the symbolizer has named the profile: its frames left unnamed, by
 * kind, join the run's metadata (unresolved.KIND). */
void kp_session_count_unresolved(struct kp_session *s);
/* The same for p, a window's profile (profiler/window.h). */
void kp_session_count_unresolved_in(struct kp_session *s, struct kp_profile *p);

void kp_session_stats(const struct kp_session *s, struct kp_session_stats *st);
/* The command's exit status, shell style: 0 when there was no command
 * or kprof stopped it at -d's end. */
int kp_session_exit_code(const struct kp_session *s);
/* Sentences for the user collected while opening and recording (fallbacks,
 * exclusions, a JVM that could not be read), those not returned by an
 * earlier call: the ones of opening after kp_session_new, those of the
 * recording after it. Owned by the session. */
const char *const *kp_session_notes(struct kp_session *s, size_t *n);

#endif
