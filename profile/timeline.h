/* kp_timeline: a profile by time, from its events (profile.h, "time"):
 * the profile of a range of its time, and profiles of one run's windows
 * (or of any runs of one machine) joined on one time axis.
 *
 * A slice counts each sample's events in the range: its values are its
 * whole values times the share of its events' milliseconds that fall in
 * the range (a sample taken is 1 ms, a wait its length, so a wait that
 * straddles the range counts the part inside; the count of samples taken
 * exactly; a period summed over samples in proportion). Samples with no
 * event (samples past the bound) are in no slice. */
#ifndef KP_PROFILE_TIMELINE_H
#define KP_PROFILE_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/profile.h"
#include "util/diag.h"

/* How many of p's events have a ms in [from_ms, to_ms) (ms from its origin). */
size_t kp_timeline_count(const struct kp_profile *p, uint64_t from_ms, uint64_t to_ms);

/* How many of p's samples have no event (samples past the bound, waits
 * of a recording before waits kept time): no slice holds them. */
size_t kp_timeline_untimed(const struct kp_profile *p);

/* The ms of p's last event (0 when none). */
uint32_t kp_timeline_last_ms(const struct kp_profile *p);

/* A new profile of what p's events in [from_ms, to_ms) took: p's value
 * types, locations, names, mappings and metadata, the samples with events
 * in the range, those events (on p's origin), and the metadata "range"
 * (FROM-TO, seconds from the origin, "1.250-3.000"); its start, duration
 * and samples, when p's metadata has them, the range's (to its last
 * event). p must be timed. The caller frees it. */
struct kp_profile *kp_timeline_slice(const struct kp_profile *p, uint64_t from_ms, uint64_t to_ms);

/* A new empty profile on p's time axis (p's origin), with p's value
 * types and metadata: what kp_timeline_join adds profiles to (it keeps
 * every event they have). */
struct kp_profile *kp_timeline_new_like(const struct kp_profile *p);

/* Adds p to q: p's samples, and its events on q's axis (p's origin must
 * not be before q's; events before q's last are taken as at its time).
 * Objects of p that q holds as other files (another path or build-id)
 * get ids of their own. Returns 0, or -EINVAL with d saying why: value
 * types that differ, p not timed, p starting before q. */
int kp_timeline_join(struct kp_profile *q, const struct kp_profile *p, struct kp_diag *d);

/* s as ms on the time axis of a profile whose origin is origin_ns (Unix
 * ns): seconds from the origin ("12", "1.5"), or a UTC wall-clock time,
 * "2026-12-06T01:02:03" (a space for the T, fractions of a second and a
 * final Z allowed) or "01:02:03", "01:02" (on the origin's day, or the next when
 * that is more than 12 hours before the origin). A time before the origin
 * is 0. Returns 0, or -EINVAL with d saying what is accepted. */
int kp_timeline_parse(const char *s, uint64_t origin_ns, uint64_t *ms, struct kp_diag *d);

/* Replaces *p by its slice from `from` to `to` (kp_timeline_parse's
 * strings; NULL: the start, the end). Returns 0, or -EINVAL with d saying
 * why (for a message "FILE: why"): p keeps no time, a time that does not
 * parse, from not before to, no event in the range (and where the events
 * are). *p is unchanged on failure. */
int kp_timeline_slice_spec(struct kp_profile **p, const char *from, const char *to,
			   struct kp_diag *d);

#endif
