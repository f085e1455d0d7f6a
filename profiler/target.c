#include "profiler/target.h"

#include <linux/capability.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procfs/status.h"
#include "util/xalloc.h"

int kp_target_fork(struct kp_target *t, char *const argv[], const sigset_t *sigmask,
		   struct kp_diag *d)
{
	int go[2], errp[2];
	pid_t pid, parent = getpid();

	memset(t, 0, sizeof(*t));
	t->go_fd = t->err_fd = -1;
	if (pipe2(go, O_CLOEXEC) < 0)
		return kp_diag_errno(d, -errno, "pipe");
	if (pipe2(errp, O_CLOEXEC) < 0) {
		int err = -errno;

		close(go[0]);
		close(go[1]);
		return kp_diag_errno(d, err, "pipe");
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(go[0]);
		close(go[1]);
		close(errp[0]);
		close(errp[1]);
		return kp_diag_errno(d, err, "fork");
	}
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(errp[0]);
		/* the command does not outlive kprof: were kprof killed (SIGKILL,
		 * which it cannot catch), the command would run on unobserved
		 * under init. The kernel drops this for a set-user-ID program. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
			_exit(127);
		sigprocmask(SIG_SETMASK, sigmask, NULL);
		/* wait until kprof's events are attached to us */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		if (write(errp[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(e == ENOENT ? 127 : 126);
	}
	close(go[0]);
	close(errp[1]);
	t->pid = pid;
	t->go_fd = go[1];
	t->err_fd = errp[0];
	return 0;
}

/* The file execvp would have run for cmd: cmd itself when it holds a '/',
 * else the first regular file of that name in $PATH. Heap, or NULL. */
static char *file_of_command(const char *cmd)
{
	const char *path = getenv("PATH");
	struct stat st;

	if (strchr(cmd, '/'))
		return stat(cmd, &st) == 0 && S_ISREG(st.st_mode) ? kp_xstrdup(cmd) : NULL;
	for (const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p;) {
		size_t len = strcspn(p, ":");
		char *f = kp_xasprintf("%.*s%s%s", (int)len, p, len ? "/" : "", cmd);

		if (stat(f, &st) == 0 && S_ISREG(st.st_mode))
			return f;
		free(f);
		p += len + (p[len] == ':');
	}
	return NULL;
}

/* exec's ENOENT: the command, or the interpreter that runs it, is missing. */
static int why_not_found(const char *cmd, struct kp_diag *d)
{
	char *file = file_of_command(cmd), line[256] = "";
	FILE *f = file ? fopen(file, "re") : NULL;
	int err = -ENOENT;

	if (!file)
		return kp_diag_set(d, err, "%s: command not found", cmd);
	if (f && fgets(line, sizeof(line), f) && strncmp(line, "#!", 2) == 0) {
		char *interp = line + 2;

		interp += strspn(interp, " \t");
		interp[strcspn(interp, " \t\r\n")] = '\0';
		kp_diag_set(d, err, "%s: its interpreter %s (the script's #! line) is not found",
			    cmd, interp);
	} else {
		kp_diag_set(d, err,
			    "%s: cannot execute: its program interpreter (the dynamic loader it "
			    "names) is not found",
			    cmd);
	}
	if (f)
		fclose(f);
	free(file);
	return err;
}

int kp_target_start(struct kp_target *t, const char *cmd, struct kp_diag *d)
{
	int e = 0;
	ssize_t n;

	if (write(t->go_fd, "g", 1) != 1) {
		int err = -errno;

		close(t->go_fd);
		t->go_fd = -1;
		return kp_diag_errno(d, err, "cannot start %s", cmd);
	}
	close(t->go_fd);
	t->go_fd = -1;
	do {
		n = read(t->err_fd, &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(t->err_fd);
	t->err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		kp_target_reap(t, true);
		if (e == ENOENT)
			return why_not_found(cmd, d);
		return kp_diag_errno(d, -e, "%s: cannot execute", cmd);
	}
	return 0;
}

void kp_target_abort(struct kp_target *t)
{
	if (t->go_fd >= 0)
		close(t->go_fd); /* the child reads EOF and exits 127 */
	if (t->err_fd >= 0)
		close(t->err_fd);
	t->go_fd = t->err_fd = -1;
	if (t->pid > 0 && !t->exited)
		kp_target_reap(t, true);
}

/* Whether kprof may trace with CAP_SYS_PTRACE: a set-user-ID program
 * exec'd under a tracer without it runs without its privilege (sudo would
 * refuse), so an unprivileged kprof holds nothing. */
static bool may_trace_privileged(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2] = {{0}};

	if (syscall(SYS_capget, &h, data) != 0)
		return false;
	return data[CAP_SYS_PTRACE / 32].effective & (1u << (CAP_SYS_PTRACE % 32));
}

int kp_target_hold_exit(struct kp_target *t)
{
	if (!may_trace_privileged()) {
		t->trace_err = -EACCES;
		return t->trace_err;
	}
	/* the main thread alone: its exit stop comes before the process's
	 * memory goes, even when another thread calls exit_group */
	if (ptrace(PTRACE_SEIZE, t->pid, NULL, (void *)(long)PTRACE_O_TRACEEXIT) != 0) {
		t->trace_err = -errno;
		return t->trace_err;
	}
	t->traced = true;
	return 0;
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* A stop signal delivered after a SIGCONT was sent: as untraced, the
 * SIGCONT wins (kprof itself stopped by a terminal's ^Z, then resumed,
 * only sees the command's SIGTSTP after the shell's SIGCONT). */
static bool cont_pending(pid_t pid)
{
	struct kp_status st;

	return kp_status_read(pid, &st) == 0 && (st.sig_pending & (1ull << (SIGCONT - 1)));
}

/* At its exit stop: its samples named (at_exit), it goes on exiting. */
static void let_exit(struct kp_target *t)
{
	t->exit_pending = false;
	if (t->at_exit)
		t->at_exit(t->at_exit_arg);
	ptrace(PTRACE_DETACH, t->pid, NULL, NULL);
	t->traced = false;
	t->held_exit = true;
}

/* One stop of the held command (man 2 ptrace: PTRACE_SEIZE, group-stop,
 * signal-delivery-stop), let go at once. A ptrace call failing with ESRCH
 * (the command killed meanwhile) leaves nothing to do. */
static void on_stop(struct kp_target *t, int status)
{
	int sig = WSTOPSIG(status), event = (status >> 16) & 0xff;

	if (event == PTRACE_EVENT_EXIT) {
		t->exit_pending = true;
		if (!t->defer_exit)
			let_exit(t);
	} else if (event == PTRACE_EVENT_STOP) {
		/* a group stop (job control) is kept; any other (the end of one,
		 * a SIGTRAP) goes on */
		if (is_stop_signal(sig))
			ptrace(PTRACE_LISTEN, t->pid, NULL, NULL);
		else
			ptrace(PTRACE_CONT, t->pid, NULL, NULL);
	} else if (event) {
		ptrace(PTRACE_CONT, t->pid, NULL, NULL); /* not asked for */
	} else {
		/* a signal on its way: it is delivered */
		struct timespec ts;
		uint64_t now;

		if (is_stop_signal(sig) && cont_pending(t->pid))
			sig = 0;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		if (now - t->sig_window_ns >= 1000000000ull) {
			t->sig_window_ns = now;
			t->nsig_window = 0;
		}
		if (++t->nsig_window > KP_TARGET_MAX_SIGNALS) {
			/* each stop costs it a round trip through kprof: a
			 * command living on signals goes on untraced */
			ptrace(PTRACE_DETACH, t->pid, NULL, (void *)(long)sig);
			t->traced = false;
			t->let_go = true;
			return;
		}
		ptrace(PTRACE_CONT, t->pid, NULL, (void *)(long)sig);
	}
}

bool kp_target_reap(struct kp_target *t, bool block)
{
	int status;
	pid_t r;

	if (t->exited || t->pid <= 0)
		return t->exited;
	if (t->exit_pending && !t->defer_exit)
		let_exit(t);
	for (;;) {
		r = waitpid(t->pid, &status, block ? 0 : WNOHANG);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != t->pid)
			return false; /* still running (or no such child) */
		if (WIFSTOPPED(status)) {
			if (t->traced)
				on_stop(t, status);
			continue;
		}
		t->exited = true;
		t->traced = false;
		t->status = status;
		return true;
	}
}

int kp_target_exit_code(const struct kp_target *t)
{
	if (!t->exited)
		return 0;
	if (WIFEXITED(t->status))
		return WEXITSTATUS(t->status);
	if (WIFSIGNALED(t->status))
		return 128 + WTERMSIG(t->status);
	return 1;
}
