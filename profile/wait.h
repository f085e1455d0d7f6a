/* profile/ is the profile model (profiler/ is the sampling that fills it).
 *
 * Off-CPU time in a profile (kprof --off-cpu, --wall; docs/offcpu.md):
 * a stack of time spent off CPU ends in one marker frame that names the
 * kind of wait, "[off-cpu: sleeping]" and the like, below the kernel's
 * scheduler frames. The marker is an ordinary frame of a user kind, so it
 * survives folded text, .kprof, pprof and speedscope as it is, and any
 * reader (the SVG's palette, the top table) can tell an off-CPU stack from
 * an on-CPU one by its last frame alone.
 *
 * Value types of these profiles (the first is the one drawn by default):
 *   --off-cpu  "off-cpu"/"nanoseconds", "samples"/"count"
 *   --wall     "wall"/"nanoseconds", "samples"/"count",
 *              "cpu"/"nanoseconds", "off-cpu"/"nanoseconds"
 * where wall = cpu + off-cpu for every sample. Folded text and the SVG
 * count time values in microseconds (as bcc's offcputime -f writes). */
#ifndef KP_PROFILE_WAIT_H
#define KP_PROFILE_WAIT_H

#include <stdbool.h>
#include <stddef.h>

enum kp_wait_kind {
	KP_WAIT_SLEEPING = 0,	 /* S: waiting for an event (a lock, a pipe, a timer) */
	KP_WAIT_UNINTERRUPTIBLE, /* D: usually disk I/O or a kernel lock */
	KP_WAIT_PREEMPTED,	 /* R: runnable, waiting for a CPU */
	KP_WAIT_BLOCKED,	 /* S or D: the kernel did not say which */
	KP_WAIT_OTHER,		 /* stopped, traced, idle or parked */
	KP_WAIT_NKINDS
};

/* The marker frame's name, "[off-cpu: sleeping]" (static storage). */
const char *kp_wait_frame_name(enum kp_wait_kind kind);

/* Is name[0..len) a marker frame (of any kind)? */
bool kp_wait_is_frame(const char *name, size_t len);

/* Value type names of off-CPU and wall-clock profiles. */
#define KP_VALUE_OFFCPU "off-cpu"
#define KP_VALUE_WALL	"wall"

struct kp_profile;

/* Adds the value types of an off-CPU profile (wall: a wall-clock one) to
 * p, which has none yet, in the order above. */
void kp_wait_value_types(struct kp_profile *p, bool wall);

#endif
