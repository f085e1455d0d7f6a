/* Reaching a process's files the way it sees them: /proc/PID/map_files for
 * mappings (deleted or replaced files, as root), /proc/PID/root for its
 * mount namespace (containers), /proc/PID/status for its pid namespace and
 * user. Internal to symbolize/. */
#ifndef KP_SYMBOLIZE_PROCFS_H
#define KP_SYMBOLIZE_PROCFS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct kp_sym_proc_status {
	pid_t nspid;	/* innermost NStgid (the pid the process sees), 0 if unknown */
	uid_t uids[4];	/* real, effective, saved, filesystem */
	bool have_uids; /* uids valid */
};

/* Reads the NStgid and Uid lines of /proc/PID/status. Returns 0 or a
 * negative errno (-ENOENT once the process is gone). */
int kp_sym_proc_status(pid_t pid, struct kp_sym_proc_status *st);
/* Parses the text of a status file (for tests and the function above). */
int kp_sym_proc_status_parse(const char *text, struct kp_sym_proc_status *st);

/* Returns an O_PATH descriptor of the process's root directory (valid after
 * the process exits), or a negative errno. Caller closes. */
int kp_sym_proc_open_root(pid_t pid);
/* True when rootfd is the same directory as our own "/". */
bool kp_sym_proc_same_root(int rootfd);

/* Opens path (absolute, as the process sees it) under rootfd as if rootfd
 * were "/" (symlinks included: openat2 RESOLVE_IN_ROOT, or a plain
 * relative openat on kernels without it). flags get O_CLOEXEC. Returns an
 * fd or a negative errno. */
int kp_sym_open_in_root(int rootfd, const char *path, int flags);

/* Opens a file read-only, raising RLIMIT_NOFILE to its hard limit once
 * when the process runs out of descriptors. Returns fd or -errno. */
int kp_sym_open(const char *path, int flags);
int kp_sym_openat(int dirfd, const char *path, int flags);

struct kp_sym_mapping;

/* Opens the regular file behind a mapping: /proc/PID/map_files/START-END,
 * then /proc/PID/root/PATH, then PATH (a " (deleted)" suffix dropped); a
 * memfd (kp_sym_path_is_memfd) through map_files alone, with no
 * *debug_path. When the mapping gives an inode, the file opened must have
 * it. Returns
 * an fd (caller closes) or a negative errno. *debug_path receives a new
 * heap string (caller frees) naming the file in our own mount namespace,
 * for debuglink lookups, or NULL. */
int kp_sym_proc_open_mapping(const struct kp_sym_mapping *m, char **debug_path);

#endif
