/* A recording's lifecycle and loop (see session.h). */
#include "profiler/session.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "profiler/hotspot_frames.h"
#include "profiler/node.h"
#include "profiler/profilerP.h"
#include "procfs/cpus.h"
#include "procfs/status.h"
#include "procfs/tasks.h"
#include "profile/wait.h"
#include "util/xalloc.h"

#define ROUND_MS 100
/* A held command's rounds (names_promptly), each naming what the rings
 * were read past but for ORDER_MARGIN_NS: a record whose writer was
 * preempted between its time and its write may come that late */
#define PROMPT_MS	20
#define ORDER_MARGIN_NS 10000000ull

/* What the events are opened on: every task (-1) system-wide, the held
 * command, or the threads of -p (each process's, listed now) or -t.
 * Returns their number, the array in *out (caller frees). */
static size_t target_tasks(const struct kp_session *s, pid_t **out)
{
	pid_t *tasks = NULL;
	size_t ntasks = 0;

	if (s->opts.system_wide || s->opts.command_is_target || s->sideband_wide) {
		tasks = kp_xmalloc(sizeof(*tasks));
		tasks[ntasks++] = s->opts.system_wide || s->sideband_wide ? -1 : s->target.pid;
	} else {
		for (size_t i = 0; i < s->opts.npids; i++) {
			pid_t *t;
			size_t n;

			if (s->opts.pids_are_tids) {
				t = kp_xmalloc(sizeof(*t));
				t[0] = s->opts.pids[i];
				n = 1;
			} else {
				n = kp_tasks_of(s->opts.pids[i], &t);
			}
			tasks = kp_xrealloc(tasks, (ntasks + n) * sizeof(*tasks));
			memcpy(tasks + ntasks, t, n * sizeof(*t));
			ntasks += n;
			free(t);
		}
	}
	*out = tasks;
	return ntasks;
}

/* A thread's comm as a string of the profile (the process table's
 * strings are the recorder's own). */
static uint32_t comm_of(void *arg, pid_t pid, pid_t tid)
{
	struct kp_session *s = arg;
	const char *comm = kp_strtab_str(s->strings, kp_proctab_comm_of(s->procs, pid, tid));

	return kp_profile_intern(s->prof, comm, strlen(comm));
}

/* A record's time as ms of the profile's time axis (kp_sample_ms). */
static uint32_t ms_of(void *arg, uint64_t time)
{
	return kp_sample_ms(arg, time);
}

static void start_offcpu(struct kp_session *s)
{
	struct kp_offcpu_opts o = {
		.prof = s->prof,
		.wall = s->opts.mode == KP_SESSION_WALL,
		.min_wait_ns = s->opts.min_wait_ns,
		.state_off = s->switch_state.offset,
		.state_size = s->have_switch_state ? s->switch_state.size : 0,
		.root_pid = s->opts.root_pid,
		.root_tid = s->opts.root_tid,
		.comm_of = comm_of,
		.ms_of = ms_of,
		.arg = s,
	};

	s->offcpu = kp_offcpu_new(&o);
}

/* The profile's value types, once the event is known (cycles may have
 * fallen back to cpu-clock): a sample, and its period in the event's unit.
 * The run's record starts here: what was sampled, where, from when. */
static void start_profile(struct kp_session *s, int *cpus, size_t ncpus)
{
	const char *ev = s->ev.event_name;
	bool clock = strcmp(ev, "cpu-clock") == 0 || strcmp(ev, "task-clock") == 0;
	struct kp_run_meta *m = &s->meta;
	struct timespec now;

	s->prof = kp_profile_new();
	if (s->opts.mode != KP_SESSION_CPU) {
		/* the tracepoint may have fallen back (evlist.c) */
		s->have_switch_state = s->have_switch_state && s->ev.nextra &&
				       s->ev.extra[0].attr.type == PERF_TYPE_TRACEPOINT;
		s->st.switch_event = s->bpf ? "bpf:sched_switch" : s->ev.extra[0].name;
		snprintf(s->event_desc, sizeof(s->event_desc), "%s%s%s",
			 s->opts.mode == KP_SESSION_WALL ? ev : "",
			 s->opts.mode == KP_SESSION_WALL ? "," : "", s->st.switch_event);
		ev = s->event_desc;
	}
	/* the value types of the mode (profile/wait.h) */
	if (s->opts.mode != KP_SESSION_CPU) {
		kp_wait_value_types(s->prof, s->opts.mode == KP_SESSION_WALL);
	} else {
		kp_profile_add_value_type(s->prof, "samples", "count", 0);
		kp_profile_add_value_type(s->prof, clock ? "cpu" : ev,
					  clock ? "nanoseconds" : "count", 0);
	}
	if (s->opts.mode != KP_SESSION_CPU) {
		start_offcpu(s);
		if (s->bpf) {
			struct epoll_event e = {.events = EPOLLIN, .data.u64 = UINT64_MAX - 1};

			epoll_ctl(s->epfd, EPOLL_CTL_ADD, kp_offcpu_bpf_fd(s->bpf), &e);
		}
		s->stack_budget = s->opts.switch_freq * ncpus * ROUND_MS / 1000;
		if (s->opts.switch_freq && !s->stack_budget)
			s->stack_budget = 1;
	}
	m->version = s->opts.version;
	m->argv = s->opts.kprof_argv;
	m->argc = s->opts.kprof_argc;
	if (uname(&s->uts) == 0) {
		m->host = s->uts.nodename;
		m->kernel = s->uts.release;
	}
	m->event = ev;
	if (s->opts.mode == KP_SESSION_OFFCPU)
		; /* the switch event's rate is the kernel's to set */
	else if (s->ev.attr.freq)
		m->frequency = s->ev.attr.sample_freq;
	else
		m->period = s->ev.attr.sample_period;
	s->cpus = cpus;
	m->cpus = cpus;
	m->ncpus = ncpus;
	m->system_wide = s->opts.system_wide;
	m->roots = s->opts.root_tid   ? KP_RUN_ROOTS_TID
		   : s->opts.root_pid ? KP_RUN_ROOTS_PID
				      : KP_RUN_ROOTS_COMM;
	clock_gettime(CLOCK_REALTIME, &now);
	m->start = now.tv_sec;
}

/* The signals whose default action ends a process, but for those that
 * report its own faults (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS,
 * SIGABRT): sent to a recording kprof, each stops the recording, is passed
 * on to the command and the profile is written, as for SIGINT. A signal
 * ignored when kprof starts (nohup's SIGHUP) stays ignored. */
static void stop_signals(sigset_t *mask)
{
	static const int ends[] = {SIGINT,  SIGTERM,   SIGHUP,	SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
				   SIGPIPE, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGIO};

	sigemptyset(mask);
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		sigaddset(mask, ends[i]);
#ifdef SIGPWR
	sigaddset(mask, SIGPWR);
#endif
#ifdef SIGSTKFLT /* not on every architecture */
	sigaddset(mask, SIGSTKFLT);
#endif
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaddset(mask, sig);
}

/* The unwinder reads unwind tables from the files the symbolizer holds. */
static int object_fd(void *sym, uint32_t obj)
{
	return kp_sym_object_fd(sym, obj);
}

/* JIT code's unwinding info, from the process's jitdump as read so far. */
static bool jit_unwind(void *sym, pid_t pid, uint64_t addr, struct kp_unwind_jit *out)
{
	struct kp_sym_jit_unwind ju;

	if (!kp_sym_jit_unwind_info(sym, pid, addr, &ju))
		return false;
	*out = (struct kp_unwind_jit){.start = ju.start,
				      .end = ju.end,
				      .key = ju.key,
				      .eh_frame = ju.eh_frame,
				      .hdr = ju.hdr,
				      .eh_frame_len = ju.eh_frame_len,
				      .hdr_len = ju.hdr_len};
	return true;
}

/* A few bytes of a process's code, for the unwinder to know CPython's
 * perf trampolines by (docs/unwinding.md). */
static ssize_t process_code(void *arg, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	return kp_tasks_read_mem(pid, addr, buf, len);
}

/* A jitdump's load is JIT code unless it lies in a file the process
 * maps (V8's embedded builtins, in node's binary, named from its
 * symbols). Code in no mapping yet is kept: its MMAP2 record may still
 * be queued. */
static bool jit_code(void *arg, pid_t pid, uint64_t start, uint64_t end)
{
	struct kp_session *s = arg;
	const struct kp_mapping *m = kp_proctab_find_map(s->procs, pid, start);

	(void)end;
	return !m || (m->kind != KP_MAPPING_FILE && m->kind != KP_MAPPING_VDSO);
}

/* A JIT maps its jitdump for perf to find it (an MMAP2 record, or a line
 * of /proc/PID/maps for a process already running): the file is opened
 * now, while the process lives, and read as it grows (kp_sym_jit_poll,
 * each round). */
static void jitdump_mapped(void *arg, const struct kp_mapping *m)
{
	struct kp_session *s = arg;

	/* and a JVM maps libjvm.so, whose VM structs name its Java frames */
	kp_hsframes_mapped(s->hs, m);
	if (!kp_sym_path_is_jitdump(m->path))
		return;
	kp_sym_jitdump_mapped(s->opts.sym, m);
	kp_node_jitdump(s->node, m->pid);
}

/* The command stopped at its exit (profiler/target.h): the samples of
 * every process up to now are named while its memory is still there
 * (node's and HotSpot's frames are read from it), one round's work at
 * most, naming within its time budget (node.c). */
static uint64_t now_ns(void);

static void command_exits(void *arg)
{
	struct kp_session *s = arg;
	uint64_t t0 = now_ns();

	kp_dispatch_read(s);
	kp_dispatch_flush_now(s, 0);
	s->st.exit_held = true;
	s->st.exit_hold_ns = now_ns() - t0;
}

/* Signals arrive through the epoll loop, not as interruptions: every one
 * that would end kprof ends the recording instead (stop_signals). */
static int open_loop(struct kp_session *s, struct kp_diag *d)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = UINT64_MAX};
	sigset_t mask;

	stop_signals(&mask);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &s->oldmask);
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->sigfd < 0 || s->epfd < 0)
		return kp_diag_errno(d, -errno, "cannot set up the event loop");
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->sigfd, &ev);
	return 0;
}

/* The CPUs to sample: -C's, each online, else every online CPU. Returns
 * their number (the array in *out, caller frees) or a negative errno. */
static int choose_cpus(const struct kp_session_opts *opts, int **out, struct kp_diag *d)
{
	int *cpus = NULL, ncpus, err;

	*out = NULL;
	ncpus = kp_cpus_online(&cpus);
	if (opts->cpus) {
		err = kp_cpus_check(opts->cpus, opts->ncpus, cpus, ncpus, d);
		free(cpus);
		if (err < 0)
			return err;
		ncpus = (int)opts->ncpus;
		cpus = kp_xmalloc(opts->ncpus * sizeof(int));
		memcpy(cpus, opts->cpus, opts->ncpus * sizeof(int));
	}
	if (ncpus <= 0) {
		free(cpus);
		return kp_diag_set(d, -EINVAL, "no CPU to sample");
	}
	*out = cpus;
	return ncpus;
}

/* The command, forked and held until the events exist, and what the
 * events inherit: the command's children, a process's new threads. */
static int prepare_target(struct kp_session *s, struct kp_diag *d)
{
	const struct kp_session_opts *opts = &s->opts;

	if (opts->argv && opts->argv[0]) {
		int err = kp_target_fork(&s->target, opts->argv, &s->oldmask, d);

		if (err < 0)
			return err;
		s->have_target = true;
	}
	if (s->sideband_wide) {
		/* every task's side-band, the BPF program choosing the targets */
	} else if (opts->command_is_target) {
		s->ev.attr.inherit = 1;
		s->ev.attr.enable_on_exec = 1;
	} else if (!opts->system_wide) {
		s->ev.attr.inherit = !opts->pids_are_tids;
	}
	return 0;
}

/* Describes what already runs (perf's synthesized events): after the
 * events exist, so nothing that happens in between is missed. */
static void describe_running(struct kp_session *s)
{
	const struct kp_session_opts *opts = &s->opts;

	if (!opts->command_is_target || s->sideband_wide)
		kp_evlist_enable(&s->ev, true);
	if (opts->system_wide) {
		kp_proctab_synthesize_all(s->procs);
	} else if (!opts->command_is_target) {
		for (size_t i = 0; i < opts->npids; i++) {
			struct kp_status st;

			/* -t TID: the process is the thread's tgid */
			if (kp_status_read(opts->pids[i], &st) < 0 || !st.tgid)
				st.tgid = opts->pids[i];
			kp_proctab_synthesize(s->procs, st.tgid);
			kp_u64map_put(&s->tree, (uint64_t)st.tgid, 1);
		}
	} else if (s->have_target) {
		kp_u64map_put(&s->tree, (uint64_t)s->target.pid, 1);
	}
}

/* The events of the mode: the sampled event (CPU); the switch event
 * (off-CPU); both on the same rings, told apart by sample id (wall). The
 * switch event is sched:sched_switch where tracefs names it, whose raw
 * record says sleeping or uninterruptible; else (or when the kernel
 * refuses it, evlist.c) the software context-switch event. */
static void init_events(struct kp_session *s, const struct kp_session_opts *opts)
{
	struct perf_event_attr attr, sw;
	uint64_t tp_id = 0;
	const char *sw_name = "context-switches";
	int err;

	kp_perf_attr_init(&attr, &s->layout, &opts->attr);
	if (opts->mode == KP_SESSION_CPU) {
		kp_evlist_init(&s->ev, &attr, opts->attr.event.name, opts->ring_pages);
		return;
	}
	if (s->bpf) {
		/* the kernel times the waits and samples the stacks: side-band
		 * records only (--off-cpu), or the clock's samples (--wall) */
		if (opts->mode == KP_SESSION_OFFCPU) {
			struct perf_event_attr side;

			kp_perf_sideband_attr_init(&side, &attr);
			side.context_switch = 0;
			kp_evlist_init(&s->ev, &side, "dummy", opts->ring_pages);
		} else {
			kp_evlist_init(&s->ev, &attr, opts->attr.event.name, opts->ring_pages);
		}
		return;
	}
	err = kp_tracefs_event("sched", "sched_switch", "prev_state", &tp_id, &s->switch_state);
	if (err == 0) {
		s->have_switch_state = true;
		sw_name = "sched:sched_switch";
	} else {
		tp_id = 0;
	}
	/* one record layout for both events, told apart by identifier: the
	 * CPU clock's raw record is the kernel's empty one */
	attr.sample_type |= PERF_SAMPLE_RAW | PERF_SAMPLE_IDENTIFIER;
	s->layout.sample_type = attr.sample_type;
	kp_perf_switch_attr_init(&sw, &attr, tp_id, 0, opts->attr.stack_dump_size != 0);
	if (opts->mode == KP_SESSION_OFFCPU) {
		struct perf_event_attr side;

		kp_perf_sideband_attr_init(&side, &attr);
		kp_evlist_init(&s->ev, &side, "dummy", opts->ring_pages);
	} else {
		attr.context_switch = 1; /* the clock's event writes the SWITCH records */
		kp_evlist_init(&s->ev, &attr, opts->attr.event.name, opts->ring_pages);
	}
	/* every switch sampled, and for a storm the kernel's frequency mode
	 * (bound_stacks) */
	kp_evlist_add_extra(&s->ev, &sw, sw_name);
	if (opts->switch_freq) {
		kp_perf_switch_attr_init(&sw, &attr, tp_id, opts->switch_freq,
					 opts->attr.stack_dump_size != 0);
		kp_evlist_add_extra(&s->ev, &sw, sw_name);
		s->ev.extra[1].off = true;
	}
	if (!tp_id)
		kp_notes_add(&s->ev.notes,
			     "%s: sampling the context-switches event, so waits are told apart "
			     "as blocked or preempted only, not sleeping or uninterruptible",
			     err == -EACCES ? "tracefs may not be read (root may)"
					    : "no tracefs with sched:sched_switch (root may mount "
					      "it: mount -t tracefs nodev /sys/kernel/tracing)");
}

/* The waits timed in the kernel where the BPF program loads (offcpu_bpf.h);
 * else, unless --switch-source bpf asked for it, perf's SWITCH records
 * with a note saying why. */
static void open_bpf(struct kp_session *s, const struct kp_session_opts *opts)
{
	struct kp_offcpu_bpf_opts bo = {
		.all_tasks = opts->system_wide,
		.follow = !opts->pids_are_tids,
		.user_chain = opts->attr.callgraph != KP_CALLGRAPH_DWARF,
		.copy_stack = opts->attr.callgraph != KP_CALLGRAPH_FP,
		.min_wait_ns = opts->min_wait_ns,
		.switch_freq = opts->switch_freq,
		.ncpus = (size_t)sysconf(_SC_NPROCESSORS_ONLN),
	};
	if (opts->mode == KP_SESSION_CPU || opts->switch_source == KP_SWITCH_PERF)
		return;
	if (opts->cpus) {
		/* the program sees every CPU */
		s->bpf_err =
			kp_diag_set(&s->bpf_why, -ENOTSUP, "-C limits the CPUs, which it does not");
		return;
	}
	if (opts->pids_are_tids) {
		bo.tids = opts->pids;
		bo.ntids = opts->npids;
	} else {
		bo.tgids = opts->pids;
		bo.ntgids = opts->npids;
	}
	s->bpf_err = kp_offcpu_bpf_open(&s->bpf, &bo, &s->bpf_why);
	/* a command's or -p's side-band on every task: per-thread events
	 * cost the program at every switch (docs/offcpu.md) */
	if (!s->bpf_err)
		s->sideband_wide = opts->mode == KP_SESSION_OFFCPU && !opts->system_wide;
}

/* The session's tables, before anything is opened. */
static struct kp_session *session_alloc(const struct kp_session_opts *opts)
{
	struct kp_session *s = kp_xcalloc(1, sizeof(*s));

	s->opts = *opts;
	s->epfd = s->sigfd = -1;
	s->strings = kp_strtab_new();
	s->procs = kp_proctab_new(s->strings);
	kp_proctab_on_map(s->procs, jitdump_mapped, s);
	kp_u64map_init(&s->synth_failed);
	kp_u64map_init(&s->dispatch_frames);
	kp_u64map_init(&s->tree);
	kp_recqueue_init(&s->queue);
	open_bpf(s, opts);
	init_events(s, opts);
	s->ev.quiet_cycles = opts->event_is_default;
	if (s->bpf_err && opts->switch_source == KP_SWITCH_AUTO)
		kp_notes_add(&s->ev.notes,
			     "waits timed from perf's SWITCH records, not in the kernel: %s",
			     s->bpf_why.msg);
	s->hs = kp_hsframes_new(s);
	s->unw = kp_unwind_new(&(struct kp_unwind_objects){object_fd, opts->sym, jit_unwind,
							   process_code, kp_hsframes_step, s->hs});
	kp_sym_set_jit_code_check(opts->sym, jit_code, s);
	s->node = kp_node_new();
	s->cost = kp_xcalloc(COST_BUCKETS, sizeof(*s->cost));
	return s;
}

int kp_session_new(struct kp_session **out, const struct kp_session_opts *opts, int *exit_code,
		   struct kp_diag *d)
{
	struct kp_session *s = session_alloc(opts);
	int *cpus = NULL, ncpus, err;
	pid_t *tasks;
	size_t ntasks;

	*out = NULL;
	*exit_code = 0;
	if (s->bpf_err && opts->switch_source == KP_SWITCH_BPF) {
		err = kp_diag_set(d, s->bpf_err, "--switch-source bpf: %s", s->bpf_why.msg);
		goto fail;
	}
	err = open_loop(s, d);
	if (err < 0)
		goto fail;
	ncpus = choose_cpus(opts, &cpus, d);
	if (ncpus < 0) {
		err = ncpus;
		goto fail;
	}
	kp_evlist_size_rings(&s->ev, (size_t)ncpus);
	err = prepare_target(s, d);
	if (err < 0)
		goto fail;
	ntasks = target_tasks(s, &tasks);
	err = kp_evlist_open(&s->ev, tasks, ntasks, cpus, (size_t)ncpus, s->epfd, d);
	free(tasks);
	if (err < 0)
		goto fail;
	start_profile(s, cpus, (size_t)ncpus);
	cpus = NULL; /* the session's now */
	describe_running(s);
	clock_gettime(CLOCK_MONOTONIC, &s->t_start);
	s->cut_unix_ns = kp_session_unix_ns();
	/* samples' times (CLOCK_MONOTONIC) become the profile's time axis */
	s->mono0_ns = (uint64_t)s->t_start.tv_sec * 1000000000ULL + (uint64_t)s->t_start.tv_nsec;
	s->unix0_ns = s->cut_unix_ns;
	kp_profile_time_start(s->prof, s->unix0_ns);
	s->flush_before = 0;
	if (s->have_target) {
		if (s->bpf && opts->command_is_target)
			kp_offcpu_bpf_exec(s->bpf, s->target.pid);
		err = kp_target_start(&s->target, opts->argv[0], d);
		if (err < 0) {
			*exit_code = err == -ENOENT ? 127 : 126;
			goto fail;
		}
		s->target.at_exit = command_exits;
		s->target.at_exit_arg = s;
		s->st.exit_hold_err = kp_target_hold_exit(&s->target);
	}
	*out = s;
	return 0;
fail:
	free(cpus);
	if (s->have_target && !s->target.exited)
		kp_target_abort(&s->target);
	s->have_target = false;
	kp_session_free(s);
	return err;
}

void kp_session_free(struct kp_session *s)
{
	if (!s)
		return;
	if (s->have_target && !s->target.exited) {
		kill(s->target.pid, SIGKILL);
		kp_target_reap(&s->target, true);
	}
	kp_offcpu_free(s->offcpu);
	kp_offcpu_bpf_free(s->bpf);
	kp_evlist_fini(&s->ev);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->sigfd >= 0)
		close(s->sigfd);
	sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
	kp_profile_free(s->prof);
	kp_sym_set_jit_code_check(s->opts.sym, NULL, NULL); /* the table goes */
	kp_unwind_free(s->unw);
	kp_hsframes_free(s->hs);
	kp_node_free(s->node);
	free(s->cost);
	kp_proctab_free(s->procs);
	kp_strtab_free(s->strings);
	kp_u64map_fini(&s->synth_failed);
	kp_u64map_fini(&s->dispatch_frames);
	kp_u64map_fini(&s->tree);
	kp_recqueue_fini(&s->queue);
	free(s->exits);
	free(s->cpus);
	free(s);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t kp_session_unix_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static double elapsed(const struct kp_session *s)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)(ts.tv_sec - s->t_start.tv_sec) +
	       (double)(ts.tv_nsec - s->t_start.tv_nsec) / 1e9;
}

double kp_session_elapsed(const struct kp_session *s)
{
	return elapsed(s);
}

static void forward_signal(struct kp_session *s, int sig)
{
	if (s->have_target && !s->target.exited)
		kill(s->target.pid, sig);
}

/* True while any -p/-t target still exists. */
static bool targets_alive(const struct kp_session *s)
{
	for (size_t i = 0; i < s->opts.npids; i++)
		if (kill(s->opts.pids[i], 0) == 0 || errno == EPERM)
			return true;
	return false;
}

/* in_loop: the command's exit stop may name samples into the profile
 * here; outside the loop (the naming of a window) its other stops are
 * let go at once and the exit stop is kept for the loop's next round. */
static void handle_signals(struct kp_session *s, bool in_loop)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			s->target.defer_exit = !in_loop;
			if (s->have_target && kp_target_reap(&s->target, false))
				s->stop = true;
			s->target.defer_exit = false;
			continue;
		}
		/* SIGINT, SIGTERM, ... (stop_signals): stop, and pass it on;
		 * SIGPIPE is about kprof's own output: the command gets SIGTERM */
		forward_signal(s, si.ssi_signo == SIGPIPE ? SIGTERM : (int)si.ssi_signo);
		s->stop = true;
		s->nstop_signals++;
	}
}

unsigned kp_session_stop_signals(struct kp_session *s)
{
	if (s->sigfd >= 0)
		handle_signals(s, false);
	return s->nstop_signals;
}

/* At a switch storm the stacks copied and unwound stay bounded: every
 * switch is sampled (extra event 0) until a window of ROUND_MS holds more
 * switches than --switch-freq a second per CPU allows; then the event in
 * the kernel's frequency mode (extra event 1) takes over, until a window
 * holds fewer than half as many. The recording starts with every switch:
 * the frequency mode raises its period at a burst and keeps it while a
 * thread blocks now and then, so a thread's first long wait could go
 * without its stack. A storm from the first instant fills the switch
 * events' own rings before the session reads them: stack samples are
 * lost (counted), never the SWITCH records, which time every wait. Turning
 * one off and the other on reaches their inherited copies in every thread
 * (docs/offcpu.md). */
static void bound_stacks(struct kp_session *s)
{
	double t;

	if (s->ev.nextra < 2)
		return;
	t = elapsed(s);
	if (!s->storm && s->window_switches > s->stack_budget) {
		s->storm = true;
		/* from now, a switch out without its sample is one the
		 * frequency mode left out, which its samples' periods count */
		kp_offcpu_sampling(s->offcpu, now_ns(), true);
		kp_evlist_enable_extra(&s->ev, 1, true);
		kp_evlist_enable_extra(&s->ev, 0, false);
	}
	if (t < s->window_end)
		return;
	if (s->storm && s->window_switches < s->stack_budget / 2) {
		s->storm = false;
		kp_evlist_enable_extra(&s->ev, 0, true);
		kp_evlist_enable_extra(&s->ev, 1, false);
		kp_offcpu_sampling(s->offcpu, now_ns(), false);
	} else if (s->storm && s->window_switches > s->stack_budget) {
		s->st.storm_windows++;
	}
	s->window_end = t + ROUND_MS / 1000.0;
	s->window_switches = 0;
}

/* Whether the samples are named at once, in short rounds: while the
 * command is held, as node's JIT frames are read from its memory, which
 * may not last (docs/node.md: a node that ends its event loop unmaps V8's
 * heap before its exit stop; young functions move). The same work as in
 * longer rounds (kprof's CPU time measured the same). Not for a JVM:
 * HotSpot's code heaps, read with its VM structs, grow as code is
 * committed and are read again each second; read at its start they miss
 * the code of the next second (docs/java.md). Its exit stop names its
 * last round. */
static bool names_promptly(const struct kp_session *s)
{
	return s->have_target && s->target.traced && !kp_hsframes_any_jvm(s->hs);
}

/* Reads the rings until `until` seconds into the recording, or until the
 * recording ends (the command exits, the duration passes, the targets are
 * gone, a signal comes: s->stop). Returns true when `until` came first. */
bool kp_session_loop(struct kp_session *s, double until,
		     void (*progress)(void *arg, const struct kp_session_stats *st), void *arg)
{
	struct epoll_event evs[64];

	while (!s->stop) {
		bool prompt = names_promptly(s);
		int timeout = prompt ? PROMPT_MS : ROUND_MS;
		double t = elapsed(s), left = until - t;

		if (s->opts.duration > 0 && s->opts.duration - t <= left) {
			left = s->opts.duration - t;
			if (left <= 0)
				return false;
		} else if (left <= 0) {
			return true;
		}
		if (left * 1000 < timeout)
			timeout = (int)(left * 1000) + 1;
		if (epoll_wait(s->epfd, evs, 64, timeout) < 0 && errno != EINTR)
			return false;
		handle_signals(s, true);
		if (s->have_target && !s->target.exited && kp_target_reap(&s->target, false))
			s->stop = true;
		/* the bound first: processing a storm's stacks takes a while */
		kp_dispatch_read(s);
		bound_stacks(s);
		if (prompt)
			kp_dispatch_flush_now(s, ORDER_MARGIN_NS);
		else
			kp_dispatch_flush(s, false);
		t = elapsed(s);
		if (!s->have_target && s->opts.npids && (++s->rounds % 5) == 0 && !targets_alive(s))
			s->stop = true;
		if (progress && t - s->last_progress >= 0.25) {
			s->last_progress = t;
			s->st.seconds = t;
			s->st.nprocs = kp_proctab_nprocs_seen(s->procs);
			progress(arg, &s->st);
		}
	}
	return false;
}

/* The recording is over: the events stop, what the rings still hold is
 * processed, open waits end, the command is asked to stop and reaped, and
 * the run's record is complete. */
void kp_session_end(struct kp_session *s)
{
	uint64_t end;

	s->st.seconds = elapsed(s);
	kp_evlist_enable(&s->ev, false);
	end = now_ns();
	kp_dispatch_round(s, true);
	/* a command still held names nothing more: the profile is complete
	 * (it waited at its exit, if it got there, through the round above) */
	s->target.at_exit = NULL;
	/* waits still open end with the recording */
	if (s->bpf)
		kp_bpf_records_finish(s, end);
	if (s->offcpu) {
		kp_offcpu_finish(s->offcpu, end);
		s->st.off = *kp_offcpu_stats(s->offcpu);
		if (s->bpf)
			kp_bpf_records_count(s);
		kp_offcpu_free(s->offcpu);
		s->offcpu = NULL;
	}

	/* How the command's run ended, before kprof stops it: a command that
	 * exited on its own did all its work (kprof diff's time gate needs
	 * that); its exit status is not kprof's business here. */
	if (s->have_target)
		s->meta.end = !s->target.exited
				      ? (s->opts.duration > 0 && s->st.seconds >= s->opts.duration
						 ? KP_RUN_END_DURATION
						 : KP_RUN_END_STOPPED)
			      : WIFSIGNALED(s->target.status) ? KP_RUN_END_SIGNAL
							      : KP_RUN_END_EXIT;
	/* The recording is over; a command still running (duration ended, or
	 * kprof was interrupted) is asked to stop, then waited for. */
	if (s->have_target && !s->target.exited) {
		if (s->opts.duration > 0 && s->st.seconds >= s->opts.duration) {
			kill(s->target.pid, SIGTERM);
			s->ended_target = true;
		}
		for (int i = 0; i < 300 && !kp_target_reap(&s->target, false); i++)
			usleep(10000);
		if (!s->target.exited) {
			kill(s->target.pid, SIGKILL);
			kp_target_reap(&s->target, true);
		}
	}
	s->st.nprocs = kp_proctab_nprocs_seen(s->procs);
	s->meta.duration = s->st.seconds - s->cut_t0;
	s->meta.samples = s->st.samples + s->st.off.stacks - s->cut_samples0;
	s->meta.lost = s->st.lost - s->cut_lost0;
	s->meta.throttled = s->st.throttled - s->cut_throttled0;
	s->meta.have_end = true;
	kp_run_meta_write(&s->meta, s->prof);
	s->ended = true;
}

int kp_session_run(struct kp_session *s,
		   void (*progress)(void *arg, const struct kp_session_stats *st), void *arg,
		   struct kp_diag *d)
{
	(void)d;
	kp_session_loop(s, INFINITY, progress, arg);
	kp_session_end(s);
	return 0;
}

void kp_session_count_unresolved(struct kp_session *s)
{
	kp_session_count_unresolved_in(s, s->prof);
}

void kp_session_count_unresolved_in(struct kp_session *s, struct kp_profile *p)
{
	kp_count frames;
	int v = kp_profile_find_value(p, "samples");

	/* frames of sampled stacks, not of nanoseconds */
	kp_profile_frame_counts(p, v < 0 ? 0 : (size_t)v, &frames, s->meta.unresolved);
	s->meta.have_unresolved = true;
	kp_run_meta_write(&s->meta, p);
}

/* The smallest cost whose bucket reaches the share q of all unwinds. */
static uint64_t cost_quantile(const struct kp_session *s, double q)
{
	uint64_t want = (uint64_t)((double)s->ncost * q), acc = 0;

	if (!s->ncost)
		return 0;
	for (size_t i = 0; i < COST_BUCKETS; i++) {
		acc += s->cost[i];
		if (acc > want)
			return (uint64_t)i * 100 + 50;
	}
	return (COST_BUCKETS - 1) * 100ULL;
}

void kp_session_stats(const struct kp_session *s, struct kp_session_stats *st)
{
	*st = s->st;
	st->exit_let_go = s->have_target && s->target.let_go;
	st->ring_pages = s->ev.ring_pages;
	st->unwind_ns_p50 = cost_quantile(s, 0.5);
	st->unwind_ns_p99 = cost_quantile(s, 0.99);
	kp_unwind_stats(s->unw, &st->tables);
	kp_hsframes_stats(s->hs, &st->java);
	kp_sym_stats(s->opts.sym, &st->sym);
	if (s->node)
		kp_node_stats(s->node, &st->node);
	st->event = s->ev.event_name;
	st->freq = s->ev.attr.freq ? s->ev.attr.sample_freq : 0;
	st->period = s->ev.attr.freq ? 0 : s->ev.attr.sample_period;
}

struct kp_profile *kp_session_profile(struct kp_session *s)
{
	return s->prof;
}

int kp_session_exit_code(const struct kp_session *s)
{
	/* the end of -d is not the command's failure (perf exits 0 there) */
	if (!s->have_target || s->ended_target)
		return 0;
	return kp_target_exit_code(&s->target);
}

const char *const *kp_session_notes(struct kp_session *s, size_t *n)
{
	const char *const *all = kp_notes_list(&s->ev.notes, n);
	size_t told = s->notes_told;

	s->notes_told = *n;
	*n -= told;
	return *n ? all + told : NULL;
}
