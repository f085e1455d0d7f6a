/* A session's options (profiler/session_types.h): their defaults, and what
 * they ask of each other, checked before anything is opened so that a
 * recording that cannot be made is said at once, in a kp_diag for the
 * caller to print. */
#include <errno.h>
#include <string.h>

#include "profiler/session.h"

void kp_session_opts_init(struct kp_session_opts *o)
{
	memset(o, 0, sizeof(*o));
	kp_perf_event_lookup("cycles", &o->attr.event);
	o->attr.freq = 99;
	o->switch_freq = 1000;
	o->attr.build_id = true;
	o->attr.max_stack =
		(uint16_t)(kp_perf_max_stack() < KP_SESSION_MAX_FRAMES ? kp_perf_max_stack()
								       : KP_SESSION_MAX_FRAMES);
}

/* --off-cpu and --wall: what they need of the sampling options. Wall-clock
 * shares weigh on-CPU samples by their time, so the event is a clock. */
static int check_mode(struct kp_session_opts *o, bool event_given, struct kp_diag *d)
{
	uint32_t type = o->attr.event.type;
	uint64_t config = o->attr.event.config;
	bool clock = type == PERF_TYPE_SOFTWARE &&
		     (config == PERF_COUNT_SW_CPU_CLOCK || config == PERF_COUNT_SW_TASK_CLOCK);

	if (o->mode == KP_SESSION_OFFCPU && event_given)
		return kp_diag_set(d, -ENOTSUP,
				   "--off-cpu samples where threads leave the CPU: -e does not "
				   "apply");
	if (o->mode != KP_SESSION_WALL)
		return 0;
	if (event_given && !clock)
		return kp_diag_set(d, -ENOTSUP,
				   "--wall weighs on-CPU samples by their time: -e cpu-clock or "
				   "task-clock, not %s",
				   o->attr.event.name);
	if (!event_given)
		kp_perf_event_lookup("cpu-clock", &o->attr.event);
	/* wall-clock time is a thread's: one tower per thread */
	if (!o->root_pid)
		o->root_tid = true;
	return 0;
}

int kp_session_opts_check(struct kp_session_opts *o, bool event_given, struct kp_diag *d)
{
	if (o->npids && o->system_wide)
		return kp_diag_set(d, -EINVAL, "-p/-t and -a/-C cannot be combined");
	return check_mode(o, event_given, d);
}

int kp_session_opts_command(struct kp_session_opts *o, char *const *argv, struct kp_diag *d)
{
	o->argv = argv;
	o->command_is_target = argv && !o->system_wide && !o->npids;
	if (!argv && !o->system_wide && !o->npids)
		return kp_diag_set(d, -EINVAL,
				   "nothing to sample: give a command, -a, -C, -p or -t");
	return 0;
}
