/* profiler/ is sampling (profile/ is the model it fills).
 *
 * kp_target: the command kprof runs. It is forked at once but held on a pipe
 * until the events exist (they are opened on its pid with enable_on_exec),
 * then released to exec; an exec failure comes back through a second,
 * close-on-exec pipe so kprof can answer 127/126 like a shell. */
#ifndef KP_PROFILER_TARGET_H
#define KP_PROFILER_TARGET_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "util/diag.h"

struct kp_target {
	pid_t pid;
	int go_fd;  /* write end: one byte releases the child */
	int err_fd; /* read end: errno of a failed exec, EOF on success */
	bool exited;
	int status; /* waitpid status once exited */
};

/* Forks argv[0] (searched in PATH) held before exec. sigmask is what the
 * child restores before exec (kprof blocks signals it reads via signalfd).
 * Returns 0 or a negative errno. */
int kp_target_fork(struct kp_target *t, char *const argv[], const sigset_t *sigmask,
		   struct kp_diag *d);
/* Releases the child to exec and waits for the outcome. Returns 0 once the
 * exec succeeded, or -errno of the failed exec (diag: "cmd: not found"...). */
int kp_target_start(struct kp_target *t, const char *cmd, struct kp_diag *d);
/* Kills and reaps a child that will never be started. */
void kp_target_abort(struct kp_target *t);
/* Reaps the child without blocking (block: wait). Returns true once exited. */
bool kp_target_reap(struct kp_target *t, bool block);
/* The shell-style exit status: the code, or 128+N for signal N. */
int kp_target_exit_code(const struct kp_target *t);

#endif
