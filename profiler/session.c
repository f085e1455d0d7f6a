#include "profiler/session.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "profile/run_meta.h"
#include "profiler/evlist.h"
#include "profiler/proctab.h"
#include "profiler/recqueue.h"
#include "profiler/perf_record.h"
#include "profiler/ring.h"
#include "profiler/target.h"
#include "procfs/cpus.h"
#include "procfs/status.h"
#include "procfs/tasks.h"
#include "util/strtab.h"
#include "util/u64map.h"
#include "util/xalloc.h"

#define MAX_FRAMES KP_SESSION_MAX_FRAMES
#define ROUND_MS   100
/* Unwind cost histogram: 100 ns buckets up to 1 ms, then one bucket. */
#define COST_BUCKETS 10001

struct kp_session {
	struct kp_session_opts opts;
	struct kp_evlist ev; /* the events, their rings, the attr as opened */
	struct kp_perf_record_layout layout;
	int epfd, sigfd;
	sigset_t oldmask;
	bool have_target;
	struct kp_target target;

	struct kp_strtab *strings;
	struct kp_proctab *procs;
	struct kp_profile *prof;       /* what the recording becomes */
	struct kp_run_meta meta;       /* the run, written into prof's metadata */
	int *cpus;		       /* the CPUs sampled (meta.cpus) */
	struct utsname uts;	       /* the machine (meta.host, meta.kernel) */
	struct kp_u64map synth_failed; /* pids /proc could not describe */

	struct kp_recqueue queue; /* records read, not yet processed */
	uint64_t flush_before;	  /* start time of the previous round */
	pid_t (*exits)[2];	  /* EXIT records (pid, tid) not applied yet */
	size_t nexits, exits_cap, exits_ready;

	struct kp_unwinder *unw;
	uint32_t *cost; /* unwind cost histogram, COST_BUCKETS */
	uint64_t ncost;

	struct kp_session_stats st;
	struct timespec t_start;
	bool stop;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* What the events are opened on: every task (-1) system-wide, the held
 * command, or the threads of -p (each process's, listed now) or -t.
 * Returns their number, the array in *out (caller frees). */
static size_t target_tasks(const struct kp_session *s, pid_t **out)
{
	pid_t *tasks = NULL;
	size_t ntasks = 0;

	if (s->opts.system_wide || s->opts.command_is_target) {
		tasks = kp_xmalloc(sizeof(*tasks));
		tasks[ntasks++] = s->opts.system_wide ? -1 : s->target.pid;
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
	kp_profile_add_value_type(s->prof, "samples", "count", 0);
	kp_profile_add_value_type(s->prof, clock ? "cpu" : ev, clock ? "nanoseconds" : "count", 0);
	m->version = s->opts.version;
	m->argv = s->opts.kprof_argv;
	m->argc = s->opts.kprof_argc;
	if (uname(&s->uts) == 0) {
		m->host = s->uts.nodename;
		m->kernel = s->uts.release;
	}
	m->event = ev;
	if (s->ev.attr.freq)
		m->frequency = s->ev.attr.sample_freq;
	else
		m->period = s->ev.attr.sample_period;
	s->cpus = cpus;
	m->cpus = cpus;
	m->ncpus = ncpus;
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

int kp_session_new(struct kp_session **out, const struct kp_session_opts *opts, int *exit_code,
		   struct kp_diag *d)
{
	struct kp_session *s = kp_xcalloc(1, sizeof(*s));
	sigset_t mask;
	int *cpus = NULL, ncpus, err;

	*out = NULL;
	*exit_code = 0;
	s->opts = *opts;
	s->epfd = s->sigfd = -1;
	s->strings = kp_strtab_new();
	s->procs = kp_proctab_new(s->strings);
	kp_u64map_init(&s->synth_failed);
	kp_recqueue_init(&s->queue);
	{
		struct perf_event_attr attr;

		kp_perf_attr_init(&attr, &s->layout, &opts->attr);
		kp_evlist_init(&s->ev, &attr, opts->attr.event.name, opts->ring_pages);
	}
	s->unw = kp_unwind_new(&(struct kp_unwind_objects){object_fd, opts->sym});
	s->cost = kp_xcalloc(COST_BUCKETS, sizeof(*s->cost));

	/* signals arrive through the epoll loop, not as interruptions: every
	 * one that would end kprof ends the recording instead (stop_signals) */
	stop_signals(&mask);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &s->oldmask);
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->sigfd < 0 || s->epfd < 0) {
		err = kp_diag_errno(d, -errno, "cannot set up the event loop");
		goto fail;
	}
	{
		struct epoll_event ev = {.events = EPOLLIN, .data.u64 = UINT64_MAX};

		epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->sigfd, &ev);
	}

	ncpus = kp_cpus_online(&cpus);
	if (opts->cpus) {
		err = kp_cpus_check(opts->cpus, opts->ncpus, cpus, ncpus, d);
		if (err < 0)
			goto fail;
		free(cpus);
		ncpus = (int)opts->ncpus;
		cpus = kp_xmalloc(opts->ncpus * sizeof(int));
		memcpy(cpus, opts->cpus, opts->ncpus * sizeof(int));
	}
	if (ncpus <= 0) {
		err = kp_diag_set(d, -EINVAL, "no CPU to sample");
		goto fail;
	}
	kp_evlist_size_rings(&s->ev, (size_t)ncpus);

	if (opts->argv && opts->argv[0]) {
		err = kp_target_fork(&s->target, opts->argv, &s->oldmask, d);
		if (err < 0)
			goto fail;
		s->have_target = true;
	}
	if (opts->command_is_target) {
		s->ev.attr.inherit = 1;
		s->ev.attr.enable_on_exec = 1;
	} else if (!opts->system_wide) {
		s->ev.attr.inherit = !opts->pids_are_tids;
	}
	{
		pid_t *tasks;
		size_t ntasks = target_tasks(s, &tasks);

		err = kp_evlist_open(&s->ev, tasks, ntasks, cpus, (size_t)ncpus, s->epfd, d);
		free(tasks);
		if (err < 0)
			goto fail;
	}
	start_profile(s, cpus, (size_t)ncpus);
	cpus = NULL; /* the session's now */

	/* Describe what already runs (perf's synthesized events): after the
	 * events exist, so nothing that happens in between is missed. */
	if (!opts->command_is_target)
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
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &s->t_start);
	s->flush_before = 0;
	if (s->have_target) {
		err = kp_target_start(&s->target, opts->argv[0], d);
		if (err < 0) {
			*exit_code = err == -ENOENT ? 127 : 126;
			goto fail;
		}
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
	kp_evlist_fini(&s->ev);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->sigfd >= 0)
		close(s->sigfd);
	sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
	kp_profile_free(s->prof);
	kp_unwind_free(s->unw);
	free(s->cost);
	kp_proctab_free(s->procs);
	kp_strtab_free(s->strings);
	kp_u64map_fini(&s->synth_failed);
	kp_recqueue_fini(&s->queue);
	free(s->exits);
	free(s->cpus);
	free(s);
}

/* ---- turning a sample into a location stack ---- */

/* Makes sure pid is described: a pid the table has never heard of (it
 * started between the events and the /proc scan, or its records were lost)
 * is read from /proc once. */
static void know_pid(struct kp_session *s, pid_t pid)
{
	uint64_t dummy;

	if (pid <= 0 || kp_proctab_has(s->procs, pid) ||
	    kp_u64map_get(&s->synth_failed, (uint64_t)pid, &dummy))
		return;
	if (kp_proctab_synthesize(s->procs, pid) < 0)
		kp_u64map_put(&s->synth_failed, (uint64_t)pid, 1);
}

/* What the symbolizer needs to know of mapping m of pid. */
static struct kp_sym_mapping sym_mapping(const struct kp_session *s, pid_t pid,
					 const struct kp_map *m)
{
	return (struct kp_sym_mapping){
		.pid = pid,
		.path = kp_strtab_str(s->strings, m->path),
		.start = m->start,
		.end = m->end,
		.pgoff = m->pgoff,
		.maj = m->maj,
		.min = m->min,
		.ino = m->ino,
		.build_id = m->build_id_size ? m->build_id : NULL,
		.build_id_len = m->build_id_size,
	};
}

/* The symbolizer object behind mapping m of pid (a file or the vDSO),
 * registered the first time it is needed; 0 for anything else. A memfd
 * is decided then, while the process still lives to reach it: a program
 * run from memory when it holds ELF (m becomes KP_MAP_FILE), else JIT
 * code (KP_MAP_ANON). */
static uint32_t map_object(struct kp_session *s, pid_t pid, struct kp_map *m)
{
	struct kp_sym_mapping sm;

	if (m->obj || m->kind == KP_MAP_ANON || m->kind == KP_MAP_OTHER)
		return m->obj;
	sm = sym_mapping(s, pid, m);
	if (m->kind == KP_MAP_MEMFD) {
		m->obj = kp_sym_memfd_get(s->opts.sym, &sm);
		m->kind = m->obj ? KP_MAP_FILE : KP_MAP_ANON;
	} else {
		m->obj = kp_sym_object_get(s->opts.sym, &sm);
	}
	return m->obj;
}

static struct kp_loc user_loc(struct kp_session *s, pid_t pid, uint64_t addr)
{
	struct kp_loc loc = {.addr = addr, .kind = KP_LOC_UNKNOWN};
	struct kp_map *m = kp_proctab_find_map(s->procs, pid, addr);

	/* No mapping: a stale or garbage frame pointer (the outermost frames
	 * of code built without them) more often than not. JIT code is always
	 * in a mapping: mmap and mprotect(PROT_EXEC) both report it. */
	if (!m || m->kind == KP_MAP_OTHER)
		return loc;
	loc.obj = map_object(s, pid, m);
	if (m->kind == KP_MAP_ANON) {
		loc.kind = KP_LOC_JIT;
		loc.obj = kp_sym_jit_get(s->opts.sym, pid);
		return loc;
	}
	loc.kind = KP_LOC_USER;
	loc.addr = addr - m->start + m->pgoff;
	return loc;
}

/* The unwinder's view of the process table. */
struct map_arg {
	struct kp_session *s;
	pid_t pid;
};

static bool find_map(void *arg, uint64_t addr, struct kp_unwind_map *out)
{
	struct map_arg *a = arg;
	struct kp_map *m = kp_proctab_find_map(a->s->procs, a->pid, addr);

	if (!m || m->kind == KP_MAP_OTHER)
		return false;
	out->start = m->start;
	out->end = m->end;
	out->pgoff = m->pgoff;
	out->obj = m->kind == KP_MAP_ANON ? 0 : map_object(a->s, a->pid, m);
	return true;
}

/* Is addr code of pid (a mapping that is not [vsyscall]-like)? */
static bool is_code(struct kp_session *s, pid_t pid, uint64_t addr)
{
	struct kp_map *m = kp_proctab_find_map(s->procs, pid, addr);

	return m && m->kind != KP_MAP_OTHER;
}

/* A frame-pointer chain from the kernel, leaf first, is cut at the first
 * return address that is not code: what follows is garbage (code built
 * without frame pointers leaves other values in rbp). Returns the frames
 * kept; *cut says it was cut. */
static size_t validate_fp(struct kp_session *s, pid_t pid, const uint64_t *ips, size_t n, bool *cut)
{
	*cut = false;
	for (size_t i = 1; i < n; i++) {
		if (!is_code(s, pid, ips[i])) {
			*cut = true;
			return i;
		}
	}
	return n;
}

static uint64_t ns_between(const struct timespec *a, const struct timespec *b)
{
	return (uint64_t)((b->tv_sec - a->tv_sec) * 1000000000LL + (b->tv_nsec - a->tv_nsec));
}

/* The sample's user stack, leaf first, into user[0..max) from the kernel's
 * chain kc[0..nkc) (chain_full: it stopped at the kernel's depth limit)
 * and/or the snapshot, as the mode says. Returns the number of frames;
 * *cut says the stack is not whole. */
static size_t user_stack(struct kp_session *s, const struct kp_sample *smp, const uint64_t *kc,
			 size_t nkc, bool chain_full, uint64_t *user, size_t max, bool *cut)
{
	enum kp_callgraph mode = s->opts.attr.callgraph;
	struct map_arg ma = {s, (pid_t)smp->pid};
	struct kp_unwind_input in = {
		.pid = (pid_t)smp->pid,
		.regs = smp->regs,
		.regs_mask = smp->regs ? s->layout.sample_regs_user : 0,
		.stack = smp->stack,
		.stack_len = smp->stack ? (size_t)smp->stack_dyn_size : 0,
		.find_map = find_map,
		.map_arg = &ma,
	};
	bool regs = smp->regs_abi == PERF_SAMPLE_REGS_ABI_64 && smp->regs && smp->pid > 0;
	struct kp_unwind_result res;
	struct timespec t0, t1;
	uint64_t ns;
	size_t n;

	*cut = false;
	if (mode == KP_CALLGRAPH_FP || !regs) {
		/* the kernel's chain, validated; its leaf repaired */
		n = nkc < max ? nkc : max;
		memcpy(user, kc, n * sizeof(*user));
		n = validate_fp(s, (pid_t)smp->pid, user, n, cut);
		if (n && regs && n < max) {
			uint64_t ret = kp_unwind_leaf(s->unw, &in, n > 1 ? user[1] : 0);

			if (ret) {
				memmove(user + 2, user + 1, (n - 1) * sizeof(*user));
				user[1] = ret;
				n++;
				s->st.leaf_repaired++;
			}
		}
		if (chain_full)
			*cut = true; /* the kernel stopped at its depth limit */
		if (*cut)
			s->st.fp_cut++;
		return n;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	kp_unwind_stack(s->unw, &in, user, max, &res);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = ns_between(&t0, &t1) / 100;
	s->cost[ns < COST_BUCKETS - 1 ? ns : COST_BUCKETS - 1]++;
	s->ncost++;
	s->st.unwind_ns_total += ns_between(&t0, &t1);
	s->st.unwound++;
	s->st.ends[res.end]++;
	n = res.n;
	if (res.end == KP_UNWIND_OUTERMOST)
		return n;
	*cut = true;
	/* auto: past the end of the snapshot, the kernel's frame-pointer chain
	 * goes on from the last frame found, where the two agree */
	if (mode == KP_CALLGRAPH_AUTO && res.end == KP_UNWIND_SNAPSHOT && n > 1) {
		for (size_t j = nkc; j-- > 1;) {
			bool kcut;
			size_t more;

			if (kc[j] != user[n - 1])
				continue;
			more = nkc - j - 1 < max - n ? nkc - j - 1 : max - n;
			memcpy(user + n, kc + j + 1, more * sizeof(*user));
			/* validate from the spliced frame on */
			more = validate_fp(s, (pid_t)smp->pid, user + n - 1, more + 1, &kcut) - 1;
			n += more;
			*cut = kcut || chain_full;
			s->st.spliced++;
			break;
		}
	}
	return n;
}

/* The sample's comm as a string of the profile (the process table's
 * strings are the recorder's own). */
static uint32_t comm_of(struct kp_session *s, const struct kp_sample *smp)
{
	const char *comm;

	if (smp->pid == 0)
		comm = "swapper";
	else
		comm = kp_strtab_str(
			s->strings, kp_proctab_comm_of(s->procs, (pid_t)smp->pid, (pid_t)smp->tid));
	return kp_profile_intern(s->prof, comm, strlen(comm));
}

static void process_sample(struct kp_session *s, const struct kp_sample *smp)
{
	uint32_t locs[MAX_FRAMES + 1];
	uint64_t kern[MAX_FRAMES], kc[MAX_FRAMES], user[MAX_FRAMES];
	size_t nk = 0, nkc = 0, nu = 0, n = 0;
	enum { CTX_KERNEL, CTX_USER, CTX_OTHER } ctx = smp->user_mode ? CTX_USER : CTX_KERNEL;
	struct kp_profile_root root;
	kp_count values[2] = {1, smp->period};
	const uint64_t *ips = smp->ips;
	uint64_t nr = smp->nr;
	bool cut = false;

	s->st.samples++;
	if (!nr) {
		ips = &smp->ip;
		nr = 1;
	}
	know_pid(s, (pid_t)smp->pid);
	/* the callchain, leaf first, split by context */
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ip = ips[i];

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			ctx = ip == (uint64_t)PERF_CONTEXT_KERNEL ? CTX_KERNEL
			      : ip == (uint64_t)PERF_CONTEXT_USER ? CTX_USER
								  : CTX_OTHER;
			continue;
		}
		if (ctx == CTX_KERNEL && nk < MAX_FRAMES)
			kern[nk++] = ip;
		else if (ctx == CTX_USER && ip && nkc < MAX_FRAMES)
			kc[nkc++] = ip;
	}
	if (!nkc && smp->user_mode)
		kc[nkc++] = smp->ip; /* -g dwarf asks for no user chain */
	/* the kernel's limit counts kernel and user entries together */
	if (smp->pid > 0)
		nu = user_stack(s, smp, kc, nkc, nk + nkc >= s->ev.attr.sample_max_stack, user,
				MAX_FRAMES - nk, &cut);
	/* return addresses point after the call: look up the call */
	for (size_t i = 0; i < nk; i++) {
		struct kp_loc loc = {.addr = kern[i] - (i && kern[i]), .kind = KP_LOC_KERNEL};

		locs[n++] = kp_profile_location(s->prof, &loc);
	}
	for (size_t i = 0; i < nu; i++) {
		struct kp_loc loc = user_loc(s, (pid_t)smp->pid, user[i] - (i && user[i]));

		locs[n++] = kp_profile_location(s->prof, &loc);
	}
	if (cut) {
		struct kp_loc loc = {.kind = KP_LOC_TRUNCATED};

		locs[n++] = kp_profile_location(s->prof, &loc);
		s->st.truncated++;
	}
	/* the callchain is leaf first; stacks are stored root first */
	for (size_t i = 0; i < n / 2; i++) {
		uint32_t t = locs[i];

		locs[i] = locs[n - 1 - i];
		locs[n - 1 - i] = t;
	}
	root.comm = comm_of(s, smp);
	root.pid = s->opts.root_pid || s->opts.root_tid ? smp->pid : 0;
	root.tid = s->opts.root_tid ? smp->tid : 0;
	/* a sum past 2^128 would need more samples than time allows */
	kp_profile_add(s->prof, &root, locs, n, values);
}

static void process_record(struct kp_session *s, const struct perf_event_header *hdr)
{
	struct kp_perf_record rec;
	int err = kp_perf_record_parse(&s->layout, hdr, &rec);

	if (err == -ENOTSUP)
		return;
	if (err < 0) {
		s->st.bad_records++;
		return;
	}
	switch (rec.type) {
	case PERF_RECORD_SAMPLE:
		process_sample(s, &rec.sample);
		break;
	case PERF_RECORD_MMAP2:
		/* libunwind keeps rules by address: forget them when code that
		 * had rules may have changed (JITs map anonymous code all the
		 * time, which has none) */
		if (rec.mmap2.filename[0] == '/' ||
		    kp_proctab_overlaps_file(s->procs, (pid_t)rec.mmap2.pid, rec.mmap2.addr,
					     rec.mmap2.addr + rec.mmap2.len))
			kp_unwind_flush(s->unw, (pid_t)rec.mmap2.pid);
		kp_proctab_mmap(s->procs, (pid_t)rec.mmap2.pid, rec.mmap2.addr, rec.mmap2.len,
				rec.mmap2.pgoff, rec.mmap2.maj, rec.mmap2.min, rec.mmap2.ino,
				rec.mmap2.filename, rec.mmap2.build_id, rec.mmap2.build_id_size);
		break;
	case PERF_RECORD_COMM:
		if (rec.comm.exec)
			kp_unwind_forget(s->unw, (pid_t)rec.comm.pid);
		kp_proctab_comm(s->procs, (pid_t)rec.comm.pid, (pid_t)rec.comm.tid, rec.comm.comm,
				rec.comm.exec);
		break;
	case PERF_RECORD_FORK:
		kp_proctab_fork(s->procs, (pid_t)rec.task.pid, (pid_t)rec.task.ppid,
				(pid_t)rec.task.tid, (pid_t)rec.task.ptid);
		break;
	case PERF_RECORD_EXIT:
		/* applied one flush later: a sample of the exiting task read a
		 * little out of order must still find its process */
		kp_xgrow(&s->exits, &s->exits_cap, s->nexits + 1, sizeof(*s->exits));
		s->exits[s->nexits][0] = (pid_t)rec.task.pid;
		s->exits[s->nexits][1] = (pid_t)rec.task.tid;
		s->nexits++;
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		s->st.lost += rec.lost;
		break;
	case PERF_RECORD_THROTTLE:
		s->st.throttled++;
		break;
	default:
		break;
	}
}

/* ---- reading the rings in rounds, processing in time order ---- */

/* Forgets the first n exited tasks. A JIT process's map is only opened
 * and kept here (cheap); it is read after the window, when folding. */
static void apply_exits(struct kp_session *s, size_t n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		if (kp_proctab_exit(s->procs, s->exits[i][0], s->exits[i][1])) {
			kp_sym_process_exit(s->opts.sym, s->exits[i][0]);
			kp_unwind_forget(s->unw, s->exits[i][0]);
		}
	memmove(s->exits, s->exits + n, (s->nexits - n) * sizeof(*s->exits));
	s->nexits -= n;
}

static void process_queued(void *arg, const struct perf_event_header *hdr)
{
	process_record(arg, hdr);
}

/* Processes queued records older than limit in time order; keeps the rest.
 * A record is only processed once every ring has been read past its time,
 * so a sample never comes before the MMAP2 or COMM it depends on. */
static void flush_queue(struct kp_session *s, uint64_t limit)
{
	apply_exits(s, s->exits_ready);
	s->exits_ready = s->nexits;
	kp_recqueue_flush(&s->queue, limit, process_queued, s);
}

static void read_round(struct kp_session *s, bool final)
{
	uint64_t start = now_ns();

	for (size_t i = 0; i < s->ev.nrings; i++) {
		struct kp_ring *r = &s->ev.rings[i].ring;
		const struct perf_event_header *hdr;

		if (!kp_ring_read_init(r))
			continue;
		/* a sample's stack copy is queued only as far as it is valid:
		 * the kernel reserves 8 KiB, a stack uses a fraction of it */
		while ((hdr = kp_ring_read_event(r))) {
			void *at = kp_recqueue_reserve(&s->queue, hdr->size,
						       kp_perf_record_time(&s->layout, hdr));

			kp_recqueue_trim(&s->queue, kp_perf_record_compact(&s->layout, hdr, at));
		}
		kp_ring_read_done(r);
	}
	flush_queue(s, final ? UINT64_MAX : s->flush_before);
	s->flush_before = start;
	if (final)
		apply_exits(s, s->nexits);
}

static double elapsed(const struct kp_session *s)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)(ts.tv_sec - s->t_start.tv_sec) +
	       (double)(ts.tv_nsec - s->t_start.tv_nsec) / 1e9;
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

static void handle_signals(struct kp_session *s)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			if (s->have_target && kp_target_reap(&s->target, false))
				s->stop = true;
			continue;
		}
		/* SIGINT, SIGTERM, ... (stop_signals): stop, and pass it on;
		 * SIGPIPE is about kprof's own output: the command gets SIGTERM */
		forward_signal(s, si.ssi_signo == SIGPIPE ? SIGTERM : (int)si.ssi_signo);
		s->stop = true;
	}
}

int kp_session_run(struct kp_session *s,
		   void (*progress)(void *arg, const struct kp_session_stats *st), void *arg,
		   struct kp_diag *d)
{
	struct epoll_event evs[64];
	double last_progress = 0;
	int rounds = 0;

	(void)d;
	while (!s->stop) {
		int timeout = ROUND_MS;
		double t;

		if (s->opts.duration > 0) {
			double left = s->opts.duration - elapsed(s);

			if (left <= 0)
				break;
			if (left * 1000 < timeout)
				timeout = (int)(left * 1000) + 1;
		}
		if (epoll_wait(s->epfd, evs, 64, timeout) < 0 && errno != EINTR)
			break;
		handle_signals(s);
		if (s->have_target && !s->target.exited && kp_target_reap(&s->target, false))
			s->stop = true;
		read_round(s, false);
		t = elapsed(s);
		if (!s->have_target && s->opts.npids && (++rounds % 5) == 0 && !targets_alive(s))
			s->stop = true;
		if (progress && t - last_progress >= 0.25) {
			last_progress = t;
			s->st.seconds = t;
			s->st.nprocs = kp_proctab_nprocs_seen(s->procs);
			progress(arg, &s->st);
		}
	}
	s->st.seconds = elapsed(s);
	kp_evlist_enable(&s->ev, false);
	read_round(s, true);

	/* The recording is over; a command still running (duration ended, or
	 * kprof was interrupted) is asked to stop, then waited for. */
	if (s->have_target && !s->target.exited) {
		if (s->opts.duration > 0 && s->st.seconds >= s->opts.duration)
			kill(s->target.pid, SIGTERM);
		for (int i = 0; i < 300 && !kp_target_reap(&s->target, false); i++)
			usleep(10000);
		if (!s->target.exited) {
			kill(s->target.pid, SIGKILL);
			kp_target_reap(&s->target, true);
		}
	}
	s->st.nprocs = kp_proctab_nprocs_seen(s->procs);
	s->meta.duration = s->st.seconds;
	s->meta.samples = s->st.samples;
	s->meta.lost = s->st.lost;
	s->meta.have_end = true;
	kp_run_meta_write(&s->meta, s->prof);
	return 0;
}

void kp_session_count_unresolved(struct kp_session *s)
{
	kp_count frames;

	kp_profile_frame_counts(s->prof, 0, &frames, s->meta.unresolved);
	s->meta.have_unresolved = true;
	kp_run_meta_write(&s->meta, s->prof);
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
	st->ring_pages = s->ev.ring_pages;
	st->unwind_ns_p50 = cost_quantile(s, 0.5);
	st->unwind_ns_p99 = cost_quantile(s, 0.99);
	kp_unwind_stats(s->unw, &st->tables);
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
	return s->have_target ? kp_target_exit_code(&s->target) : 0;
}

const char *const *kp_session_notes(const struct kp_session *s, size_t *n)
{
	return kp_notes_list(&s->ev.notes, n);
}
