/* procfs/ is the only reader of /proc and /sys.
 *
 * tracefs: the id and field layout of a kernel tracepoint, which a perf
 * event of type PERF_TYPE_TRACEPOINT names by id and whose raw record
 * (PERF_SAMPLE_RAW) holds its fields at the offsets its format file says.
 * Read from /sys/kernel/tracing, or the older /sys/kernel/debug/tracing;
 * kprof never mounts either (root may: mount -t tracefs nodev
 * /sys/kernel/tracing). */
#ifndef KP_PROCFS_TRACEFS_H
#define KP_PROCFS_TRACEFS_H

#include <stdint.h>

struct kp_tracefs_field {
	unsigned offset, size; /* bytes, in the raw record */
};

/* The id of tracepoint SYSTEM:NAME ("sched", "sched_switch") into *id and,
 * when field is given, where that field is into *f. Returns 0, or a
 * negative errno: -ENOENT when no tracefs is mounted or it has no such
 * tracepoint or field, -EACCES when it may not be read (only root may, as
 * a rule). */
int kp_tracefs_event(const char *system, const char *name, const char *field, uint64_t *id,
		     struct kp_tracefs_field *f);

#endif
