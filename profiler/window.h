/* profiler/ is sampling (profile/ is the model it fills).
 *
 * A recording cut into consecutive windows (kprof --every): each window
 * is a profile of its own, handed over when it ends, and the next window
 * starts where it ended, so every sample is in exactly one window and
 * their times follow without a gap or an overlap. What the recording
 * knows (the process table, the symbolizer's objects, the unwinder's
 * tables) lives across windows; between two of them kp_window_trim lets
 * go of what no live process needs any more, so memory stays flat over
 * hours of process churn (docs/continuous.md).
 *
 * kp_window_run is that loop, handing each window, named, to its caller:
 *
 *   for (;;) {
 *       bool more = kp_session_loop(s, next_end, NULL, NULL);
 *       if (!more) kp_session_end(s);
 *       kp_window_cut(s, &w);           the window's profile
 *       kp_window_name(sym, s, w.prof); kp_window_named(s, &w);
 *       w.jitdump_notes = the new ones;
 *       fn(arg, &w, ...);               written, pushed; counted in *t
 *       kp_profile_free(w.prof);
 *       if (!more) break;
 *       kp_window_trim(s, seconds);
 *   }
 *
 * CPU profiles only (the off-CPU module keeps the profile's locations). */
#ifndef KP_PROFILER_WINDOW_H
#define KP_PROFILER_WINDOW_H

#include <stdint.h>

#include "profile/profile.h"
#include "profiler/session.h"
#include "symbolize/symbolize.h"

struct kp_window {
	struct kp_profile *prof;    /* the caller's: names it, writes it, frees it */
	uint64_t from_ns, until_ns; /* Unix time, nanoseconds: [from, until) */
	uint64_t samples, lost;	    /* in this window (lost: records the kernel dropped) */
	uint64_t throttled;	    /* times the kernel throttled sampling in it */
	unsigned index;		    /* 0 for the first window */
	bool last;		    /* the recording ended with it */
	/* the jitdumps cut short while recording or naming this window, not
	 * said with an earlier one: to say with the window, not after hours
	 * (kp_sym_jitdump_cut_notes; the symbolizer's) */
	const char *const *jitdump_notes;
	size_t njitdump_notes;
};

/* What kp_window_run handed over in all. */
struct kp_window_totals {
	unsigned windows;
	uint64_t samples;
};

/* Hands over the window recorded since the last cut (or the start): what
 * the rings hold now is in it. The session starts the next window, with
 * the same value types. After kp_session_end, the last window (its end
 * the recording's). */
void kp_window_cut(struct kp_session *s, struct kp_window *w);

/* A kp_sym_between_fn for naming a window while the next is recorded
 * (arg: the session): reads the rings into the session's queue, at most
 * every 50 ms, so that they do not overflow meanwhile. */
void kp_window_keep_reading(void *session);

/* After the window's profile was named: its frames left unnamed join its
 * metadata (unresolved.KIND), as for a whole run. */
void kp_window_named(struct kp_session *s, struct kp_window *w);

/* Between windows (of window_seconds each), once the last one was named:
 * what the symbolizer keeps of names is bounded, exited processes' JIT
 * maps go, objects no sample used for KP_WINDOW_IDLE_SECONDS (and at
 * least two windows) are released (the
 * unwinder's tables and the process table's references to them with
 * them), and pids /proc could not describe may be tried again (pids are
 * reused over hours). */
void kp_window_trim(struct kp_session *s, double window_seconds);

/* Names the frames of prof (the run's, or a window's): a stop signal that
 * comes meanwhile (a second Ctrl-C, a SIGTERM) cuts a download under way
 * and leaves the rest unnamed, so that the profile is written at once. */
void kp_window_name(struct kp_symbolizer *sym, struct kp_session *s, struct kp_profile *prof);

/* What kp_window_run hands each window to, named: w->prof is the loop's,
 * freed when fn returns; named_seconds, what naming it took (the rings
 * waited meanwhile). */
typedef void (*kp_window_fn)(void *arg, struct kp_window *w, double named_seconds);

/* Records window after window of seconds each until the recording ends
 * (a stop signal, the duration, the command's end), each cut, named and
 * handed to fn; after a stop signal the last window is named without
 * downloading, so that kprof ends on time. The next cut is the next
 * multiple of seconds after now: a window that took long to name makes
 * the next one longer, never a gap. */
void kp_window_run(struct kp_session *s, struct kp_symbolizer *sym, double seconds, kp_window_fn fn,
		   void *arg, struct kp_window_totals *t);

/* How long an object may go unused before it is released: long enough
 * that one sampled now and then is not read again and again (reading a
 * large binary's symbols and unwind tables costs more than a window's
 * samples), short enough that upgraded and vanished binaries do not pile
 * up: memory follows the binaries of the last two minutes. */
#define KP_WINDOW_IDLE_SECONDS 120

#endif
