/* /proc/sys: the kernel's tunables kprof reads (perf_event_paranoid,
 * perf_event_max_stack). */
#ifndef KP_PROCFS_SYSCTL_H
#define KP_PROCFS_SYSCTL_H

/* Reads the integer /proc/sys/NAME starts with ("kernel/perf_event_paranoid")
 * into *v. Returns 0, -EINVAL when it does not start with one, or a
 * negative errno when it cannot be read. */
int kp_sysctl_read(const char *name, long *v);

#endif
