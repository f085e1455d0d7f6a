/* profiler/ is sampling (profile/ is the model it fills).
 *
 * kp_target: the command kprof runs. It is forked at once but held on a pipe
 * until the events exist (they are opened on its pid with enable_on_exec),
 * then released to exec; an exec failure comes back through a second,
 * close-on-exec pipe so kprof can answer 127/126 like a shell.
 *
 * Once it runs, it is held at its exit (kp_target_hold_exit): traced with
 * ptrace's PTRACE_O_TRACEEXIT alone, it stops there before its memory is
 * released, kprof names its last samples from that memory (at_exit), and
 * lets it go on exiting. Every other stop tracing brings is passed
 * through as it comes (kp_target_reap): a signal goes on to the command,
 * a stop signal stops it (job control). */
#ifndef KP_PROFILER_TARGET_H
#define KP_PROFILER_TARGET_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/diag.h"

#define KP_TARGET_MAX_SIGNALS 100

struct kp_target {
	pid_t pid;
	int go_fd;  /* write end: one byte releases the child */
	int err_fd; /* read end: errno of a failed exec, EOF on success */
	bool exited;
	int status;	/* waitpid status once exited */
	bool traced;	/* held at its exit: seized, not detached yet */
	bool held_exit; /* it stopped at its exit and at_exit ran */
	int trace_err;	/* -errno of the PTRACE_SEIZE that failed, else 0 */
	bool let_go;	/* detached early: its signals came too fast */
	/* defer_exit: at_exit cannot run now (the caller is between the
	 * rounds that may name); the exit stop is then kept (exit_pending)
	 * until the next kp_target_reap without it */
	bool defer_exit, exit_pending;
	uint64_t sig_window_ns; /* the second its signals are counted in */
	unsigned nsig_window;	/* and how many came in it */
	/* Called at the exit stop, its memory still there, before it goes on
	 * exiting (NULL: none). Must return soon: the command waits. */
	void (*at_exit)(void *arg);
	void *at_exit_arg;
};

/* Forks argv[0] (searched in PATH) held before exec. sigmask is what the
 * child restores before exec (kprof blocks signals it reads via signalfd).
 * Returns 0 or a negative errno. */
int kp_target_fork(struct kp_target *t, char *const argv[], const sigset_t *sigmask,
		   struct kp_diag *d);
/* Releases the child to exec and waits for the outcome. Returns 0 once the
 * exec succeeded, or -errno of the failed exec (diag: "cmd: not found"...). */
int kp_target_start(struct kp_target *t, const char *cmd, struct kp_diag *d);
/* Holds the running command at its exit (see above). Returns 0, -EACCES
 * when kprof lacks CAP_SYS_PTRACE (a set-user-ID program the command runs
 * would lose its privilege under such a tracer), or the -errno of
 * PTRACE_SEIZE (-EPERM: another tracer, Yama's ptrace_scope 3, a
 * set-user-ID command), also in trace_err: then it runs as it would
 * untraced and is only reaped. */
int kp_target_hold_exit(struct kp_target *t);
/* Kills and reaps a child that will never be started. */
void kp_target_abort(struct kp_target *t);
/* Reaps the child without blocking (block: wait). Returns true once
 * exited. The stops of a held command are handled on the way, each at
 * once: a signal's is continued with the signal, a stop signal's group
 * stop is kept (PTRACE_LISTEN), the exit's calls at_exit then detaches. */
bool kp_target_reap(struct kp_target *t, bool block);
/* The shell-style exit status: the code, or 128+N for signal N. */
int kp_target_exit_code(const struct kp_target *t);

#endif
