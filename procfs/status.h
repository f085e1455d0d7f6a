/* /proc/PID/status: the process of a thread (Tgid), the pid it sees in
 * its own pid namespace (NStgid), its user ids, its resident memory and
 * its pending signals. */
#ifndef KP_PROCFS_STATUS_H
#define KP_PROCFS_STATUS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct kp_status {
	pid_t tgid;	       /* the thread group (process), 0 if unknown */
	pid_t nspid;	       /* innermost NStgid (the pid the process sees), 0 if unknown */
	uid_t uids[4];	       /* real, effective, saved, filesystem */
	bool have_uids;	       /* uids valid */
	unsigned long rss_kib; /* VmRSS, KiB; 0 if unknown (a kernel thread) */
	uint64_t sig_pending;  /* SigPnd | ShdPnd: bit N-1 for signal N pending */
};

/* Reads the Tgid, NStgid, Uid, VmRSS, SigPnd and ShdPnd lines of /proc/PID/status (of a thread
 * too). Returns 0 or a negative errno (-ENOENT once the process is gone). */
int kp_status_read(pid_t pid, struct kp_status *st);
/* The same of kprof itself (/proc/self/status: --stats says its memory). */
int kp_status_read_self(struct kp_status *st);
/* Parses the text of a status file, a newline in front (for tests and the
 * function above). Returns 0. */
int kp_status_parse(const char *text, struct kp_status *st);

#endif
