/* Off-CPU marker frames (see wait.h). */
#include "profile/wait.h"

#include <string.h>

#include "profile/profile.h"

#define PREFIX "[off-cpu: "

static const char *const names[KP_WAIT_NKINDS] = {
	[KP_WAIT_SLEEPING] = PREFIX "sleeping]",
	[KP_WAIT_UNINTERRUPTIBLE] = PREFIX "uninterruptible]",
	[KP_WAIT_PREEMPTED] = PREFIX "preempted]",
	[KP_WAIT_BLOCKED] = PREFIX "blocked]",
	[KP_WAIT_OTHER] = PREFIX "other]",
};

const char *kp_wait_frame_name(enum kp_wait_kind kind)
{
	return (unsigned)kind < KP_WAIT_NKINDS ? names[kind] : names[KP_WAIT_OTHER];
}

bool kp_wait_is_frame(const char *name, size_t len)
{
	return len > sizeof(PREFIX) - 1 && memcmp(name, PREFIX, sizeof(PREFIX) - 1) == 0 &&
	       name[len - 1] == ']';
}

void kp_wait_value_types(struct kp_profile *p, bool wall)
{
	if (wall) {
		kp_profile_add_value_type(p, KP_VALUE_WALL, "nanoseconds", 0);
		kp_profile_add_value_type(p, "samples", "count", 0);
		kp_profile_add_value_type(p, "cpu", "nanoseconds", 0);
		kp_profile_add_value_type(p, KP_VALUE_OFFCPU, "nanoseconds", 0);
	} else {
		kp_profile_add_value_type(p, KP_VALUE_OFFCPU, "nanoseconds", 0);
		kp_profile_add_value_type(p, "samples", "count", 0);
	}
}
