/* Reading what /proc says about processes that were running before the
 * recording started (perf's "synthesized" events): comm and executable
 * mappings. */
#ifndef KP_PROCFS_MAPS_H
#define KP_PROCFS_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* One line of /proc/PID/maps. path points into the caller's line buffer. */
struct kp_maps_entry {
	uint64_t start, end, pgoff;
	uint32_t maj, min;
	uint64_t ino;
	bool exec;
	const char *path; /* "" for anonymous memory */
};

/* Parses one maps line (the trailing newline, if any, is removed in place).
 * Returns 0 or -EINVAL for a malformed (e.g. truncated) line. */
int kp_maps_parse_line(char *line, struct kp_maps_entry *e);

/* Calls fn for each well-formed executable mapping in the maps file f;
 * returns the number of malformed lines skipped. */
size_t kp_maps_read(FILE *f, void (*fn)(void *arg, const struct kp_maps_entry *e), void *arg);

/* Reads /proc/PID/task/TID/comm (or /proc/PID/comm when tid is 0) into buf
 * without the newline. Returns 0 or a negative errno. */
int kp_proc_read_comm(pid_t pid, pid_t tid, char *buf, size_t size);

#endif
