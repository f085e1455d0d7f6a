/* Reaching a process's files the way it sees them: /proc/PID/map_files for
 * mappings (deleted or replaced files, as root), /proc/PID/root for its
 * mount namespace (containers); and opening files at all without running
 * out of descriptors (RLIMIT_NOFILE raised once). */
#ifndef KP_PROCFS_ROOT_H
#define KP_PROCFS_ROOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procfs/mapping.h"

/* Returns an O_PATH descriptor of the process's root directory (valid after
 * the process exits), or a negative errno. Caller closes. */
int kp_root_of(pid_t pid);
/* True when rootfd is the same directory as our own "/". */
bool kp_root_is_ours(int rootfd);

/* The name in our own namespace of path (absolute, as process pid sees
 * it): /proc/PID/rootPATH, cut to fit buf. */
void kp_root_name(pid_t pid, const char *path, char *buf, size_t size);

/* What our descriptor fd names (the link /proc/self/fd/FD: a path,
 * "/memfd:NAME (deleted)", ...), at most size bytes, not NUL-terminated.
 * Returns its length or a negative errno. */
ssize_t kp_root_fd_link(int fd, char *buf, size_t size);

/* Opens path (absolute, as the process sees it) under rootfd as if rootfd
 * were "/" (symlinks included: openat2 RESOLVE_IN_ROOT, or a plain
 * relative openat on kernels without it). flags get O_CLOEXEC. Returns an
 * fd or a negative errno. */
int kp_root_open_in(int rootfd, const char *path, int flags);

/* Opens a file in our own namespace, raising RLIMIT_NOFILE to its hard
 * limit once when the process runs out of descriptors; flags get
 * O_CLOEXEC. Returns fd or -errno. */
int kp_root_open(const char *path, int flags);
int kp_root_openat(int dirfd, const char *path, int flags);

/* Opens /proc/PID/map_files/START-END: the very file process pid maps at
 * [start, end), even deleted or replaced (root only); nothing about it is
 * checked. flags get O_CLOEXEC. Returns an fd or a negative errno. */
int kp_root_open_map_file(pid_t pid, uint64_t start, uint64_t end, int flags);

/* Opens the regular file behind a mapping: /proc/PID/map_files/START-END,
 * then /proc/PID/root/PATH, then PATH (a " (deleted)" suffix dropped); a
 * memfd (its path says so, whatever its kind became) through map_files
 * alone, with no *debug_path. When the mapping
 * gives an inode, the file opened must have it. Returns an fd (caller
 * closes) or a negative errno. *debug_path receives a new heap string
 * (caller frees) naming the file in our own mount namespace, for
 * debuglink lookups, or NULL. */
int kp_root_open_mapping(const struct kp_mapping *m, char **debug_path);

#endif
