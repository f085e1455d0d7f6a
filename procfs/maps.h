/* /proc/PID/maps: the mappings of processes that were running before the
 * recording started (perf's "synthesized" events), and our own. */
#ifndef KP_PROCFS_MAPS_H
#define KP_PROCFS_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "procfs/mapping.h"

/* Parses one maps line (the trailing newline, if any, is removed in place)
 * into m: its path points into the line, its kind is the path's, its pid
 * is 0, it has no object nor build-id. Returns 0 or -EINVAL for a
 * malformed (e.g. truncated) line. */
int kp_maps_parse_line(char *line, struct kp_mapping *m);

/* Calls fn for each well-formed executable mapping in the maps file f
 * (m valid during the call only); returns the number of malformed lines
 * skipped. */
size_t kp_maps_read(FILE *f, void (*fn)(void *arg, const struct kp_mapping *m), void *arg);

/* Calls fn for each executable mapping of /proc/PID/maps (kp_maps_read),
 * its pid set. Returns 0 or a negative errno when the file cannot be
 * opened. */
int kp_maps_read_pid(pid_t pid, void (*fn)(void *arg, const struct kp_mapping *m), void *arg);

/* The extent of our own mapping whose path is name ("[vdso]") in
 * /proc/self/maps. Returns 0, -ENOENT when there is none, or a negative
 * errno. */
int kp_maps_find_self(const char *name, uint64_t *start, uint64_t *end);

#endif
