#include "profiler/session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "profiler/proctab.h"
#include "profiler/recqueue.h"
#include "profiler/record.h"
#include "profiler/ring.h"
#include "profiler/stacktab.h"
#include "profiler/target.h"
#include "util/strtab.h"
#include "util/u64map.h"
#include "util/xalloc.h"

#define MAX_FRAMES 512
#define ROUND_MS   100

struct cpu_ring {
	int cpu;
	int fd; /* the event whose ring this is */
	struct kp_ring ring;
};

struct kp_session {
	struct kp_session_opts opts;
	struct perf_event_attr attr;
	struct kp_record_layout layout;
	char event_name[64];

	int *fds; /* every event fd */
	size_t nfds, fds_cap;
	struct cpu_ring *rings;
	size_t nrings;
	int epfd, sigfd;
	sigset_t oldmask;
	bool have_target;
	struct kp_target target;

	struct kp_strtab *strings;
	struct kp_proctab *procs;
	struct kp_stacktab *stacks;
	struct kp_u64map synth_failed; /* pids /proc could not describe */

	struct kp_recqueue queue; /* records read, not yet processed */
	uint64_t flush_before;	  /* start time of the previous round */
	pid_t (*exits)[2];	  /* EXIT records (pid, tid) not applied yet */
	size_t nexits, exits_cap, exits_ready;

	struct kp_session_stats st;
	struct timespec t_start;
	bool stop;
	char **notes;
	size_t nnotes, notes_cap;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void add_note(struct kp_session *s, char *note)
{
	kp_xgrow(&s->notes, &s->notes_cap, s->nnotes + 1, sizeof(*s->notes));
	s->notes[s->nnotes++] = note;
}

int kp_cpulist_parse(const char *str, int **cpus)
{
	int *v = NULL;
	size_t n = 0, cap = 0;
	const char *p = str;

	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p || a < 0 || a > 65535)
			goto bad;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a || b > 65535)
				goto bad;
			p = end;
		}
		for (long c = a; c <= b; c++) {
			kp_xgrow(&v, &cap, n + 1, sizeof(*v));
			v[n++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			goto bad;
		else if (*p == '\n')
			break;
	}
	if (!n)
		goto bad;
	*cpus = v;
	return (int)n;
bad:
	free(v);
	return -EINVAL;
}

static int online_cpus(int **cpus)
{
	char buf[4096];
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int n;

	if (f && fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return kp_cpulist_parse(buf, cpus);
	}
	if (f)
		fclose(f);
	n = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (n <= 0)
		n = 1;
	*cpus = kp_xmalloc((size_t)n * sizeof(int));
	for (int i = 0; i < n; i++)
		(*cpus)[i] = i;
	return n;
}

/* "0-3,6" for the sorted list v[0..n) */
static void format_cpulist(const int *v, int n, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && len + 24 < size; i++) {
		int j = i;

		while (j + 1 < n && v[j + 1] == v[j] + 1)
			j++;
		if (j > i)
			len += (size_t)snprintf(buf + len, size - len, "%s%d-%d", len ? "," : "",
						v[i], v[j]);
		else
			len += (size_t)snprintf(buf + len, size - len, "%s%d", len ? "," : "",
						v[i]);
		i = j;
	}
}

/* Every CPU of -C must be online: the kernel's own answer for another one
 * (ENODEV, or EINVAL blamed on the frequency) would mislead. */
static int check_cpus(const int *want, size_t nwant, const int *online, int nonline,
		      struct kp_diag *d)
{
	for (size_t i = 0; i < nwant; i++) {
		bool found = false;
		char list[256];

		for (int j = 0; j < nonline && !found; j++)
			found = online[j] == want[i];
		if (found)
			continue;
		format_cpulist(online, nonline, list, sizeof(list));
		return kp_diag_set(d, -ENODEV, "-C: CPU %d %s; the online CPUs are %s", want[i],
				   want[i] < (int)sysconf(_SC_NPROCESSORS_CONF) ? "is offline"
										: "does not exist",
				   list);
	}
	return 0;
}

static void push_fd(struct kp_session *s, int fd)
{
	kp_xgrow(&s->fds, &s->fds_cap, s->nfds + 1, sizeof(*s->fds));
	s->fds[s->nfds++] = fd;
}

/* Opens one event with the fallbacks a real machine needs: no build-ids in
 * MMAP2 on kernels before 5.12. */
static int open_one(struct kp_session *s, pid_t pid, int cpu)
{
	int fd = kp_perf_open(&s->attr, pid, cpu, -1);

	if (fd == -EINVAL && s->attr.build_id) {
		s->attr.build_id = 0;
		fd = kp_perf_open(&s->attr, pid, cpu, -1);
	}
	return fd;
}

/* The first event decides the attr: cycles may fall back to cpu-clock, an
 * unprivileged user may fall back to user-only sampling. */
static int open_first(struct kp_session *s, pid_t pid, int cpu, struct kp_diag *d)
{
	bool excluded = false;
	int fd;

	/* The kernel checks permissions and PMU support in either order, so
	 * try the fallbacks until none applies. */
	for (;;) {
		fd = open_one(s, pid, cpu);
		if (fd >= 0)
			break;
		if ((fd == -ENOENT || fd == -EOPNOTSUPP || fd == -ENODEV) &&
		    s->attr.type == PERF_TYPE_HARDWARE &&
		    s->attr.config == PERF_COUNT_HW_CPU_CYCLES) {
			s->attr.type = PERF_TYPE_SOFTWARE;
			s->attr.config = PERF_COUNT_SW_CPU_CLOCK;
			add_note(s, kp_xasprintf("no hardware cycles event on this machine (no "
						 "PMU): sampling cpu-clock instead"));
			snprintf(s->event_name, sizeof(s->event_name), "cpu-clock");
			continue;
		}
		if ((fd == -EACCES || fd == -EPERM) && !s->attr.exclude_kernel && pid > 0) {
			/* paranoid 2 still lets users sample their own code */
			s->attr.exclude_kernel = 1;
			s->attr.exclude_callchain_kernel = 1;
			excluded = true;
			continue;
		}
		break;
	}
	if (fd >= 0 && excluded)
		add_note(s, kp_xasprintf("perf_event_paranoid is %d: sampling user space only (no "
					 "kernel frames); run as root for both",
					 kp_perf_paranoid()));
	if (fd < 0)
		kp_perf_explain(d, fd, s->event_name, pid, cpu);
	return fd;
}

static int add_ring(struct kp_session *s, int fd, int cpu, struct kp_diag *d)
{
	struct cpu_ring *r = &s->rings[s->nrings];
	struct epoll_event ev = {.events = EPOLLIN};
	int err = kp_ring_mmap(&r->ring, fd, s->opts.ring_pages);

	/* unprivileged users share perf_event_mlock_kb: settle for less */
	while ((err == -EPERM || err == -ENOMEM) && s->opts.ring_pages > 8) {
		s->opts.ring_pages /= 2;
		err = kp_ring_mmap(&r->ring, fd, s->opts.ring_pages);
	}
	if (err < 0)
		return kp_diag_errno(d, err,
				     "cannot map the ring buffer of CPU %d (%u pages; "
				     "see /proc/sys/kernel/perf_event_mlock_kb)",
				     cpu, s->opts.ring_pages);
	r->cpu = cpu;
	r->fd = fd;
	ev.data.u64 = s->nrings;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return kp_diag_errno(d, -errno, "epoll_ctl");
	s->nrings++;
	return 0;
}

/* All tasks of process pid (from /proc/PID/task), or just pid. */
static size_t list_tasks(pid_t pid, pid_t **out)
{
	char path[64];
	DIR *dir;
	struct dirent *de;
	pid_t *v = NULL;
	size_t n = 0, cap = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (dir) {
		while ((de = readdir(dir))) {
			pid_t tid = (pid_t)atoi(de->d_name);

			if (tid <= 0)
				continue;
			kp_xgrow(&v, &cap, n + 1, sizeof(*v));
			v[n++] = tid;
		}
		closedir(dir);
	}
	if (!n) {
		v = kp_xmalloc(sizeof(*v));
		v[n++] = pid;
	}
	*out = v;
	return n;
}

/* Opens the events. System-wide: one per CPU. A command or pids: one per
 * (task, CPU), the first on each CPU owning the ring and the others
 * redirected into it (PERF_EVENT_IOC_SET_OUTPUT), so there is one ring per
 * CPU whatever the number of threads. */
static int open_events(struct kp_session *s, const int *cpus, size_t ncpus, struct kp_diag *d)
{
	pid_t *tasks = NULL;
	size_t ntasks = 0;
	int err = 0;

	s->rings = kp_xcalloc(ncpus, sizeof(*s->rings));
	if (s->opts.system_wide) {
		ntasks = 1;
		tasks = kp_xmalloc(sizeof(*tasks));
		tasks[0] = -1;
	} else if (s->opts.command_is_target) {
		ntasks = 1;
		tasks = kp_xmalloc(sizeof(*tasks));
		tasks[0] = s->target.pid;
	} else {
		for (size_t i = 0; i < s->opts.npids; i++) {
			pid_t *t;
			size_t n;

			if (s->opts.pids_are_tids) {
				t = kp_xmalloc(sizeof(*t));
				t[0] = s->opts.pids[i];
				n = 1;
			} else {
				n = list_tasks(s->opts.pids[i], &t);
			}
			tasks = kp_xrealloc(tasks, (ntasks + n) * sizeof(*tasks));
			memcpy(tasks + ntasks, t, n * sizeof(*t));
			ntasks += n;
			free(t);
		}
	}
	for (size_t c = 0; c < ncpus; c++) {
		int leader = -1;

		for (size_t t = 0; t < ntasks; t++) {
			int fd = s->nfds == 0 ? open_first(s, tasks[t], cpus[c], d)
					      : open_one(s, tasks[t], cpus[c]);

			if (fd == -ESRCH && ntasks > 1)
				continue; /* a thread that exited meanwhile */
			if (fd < 0) {
				if (s->nfds)
					kp_perf_explain(d, fd, s->event_name, tasks[t], cpus[c]);
				err = fd;
				goto out;
			}
			push_fd(s, fd);
			if (leader < 0) {
				leader = fd;
				err = add_ring(s, fd, cpus[c], d);
				if (err < 0)
					goto out;
			} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, leader) < 0) {
				err = kp_diag_errno(d, -errno, "cannot share the ring of CPU %d",
						    cpus[c]);
				goto out;
			}
		}
	}
	if (!s->nrings)
		err = kp_diag_set(d, -ESRCH, "no task left to sample");
out:
	free(tasks);
	return err;
}

static void enable_all(struct kp_session *s, bool on)
{
	for (size_t i = 0; i < s->nfds; i++)
		ioctl(s->fds[i], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
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
	if (!s->opts.ring_pages)
		s->opts.ring_pages = 128;
	s->epfd = s->sigfd = -1;
	s->strings = kp_strtab_new();
	s->procs = kp_proctab_new(s->strings);
	s->stacks = kp_stacktab_new();
	kp_u64map_init(&s->synth_failed);
	kp_recqueue_init(&s->queue);
	snprintf(s->event_name, sizeof(s->event_name), "%s", opts->attr.event.name);
	kp_perf_attr_init(&s->attr, &s->layout, &opts->attr);

	/* signals arrive through the epoll loop, not as interruptions */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
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

	ncpus = online_cpus(&cpus);
	if (opts->cpus) {
		err = check_cpus(opts->cpus, opts->ncpus, cpus, ncpus, d);
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

	if (opts->argv && opts->argv[0]) {
		err = kp_target_fork(&s->target, opts->argv, &s->oldmask, d);
		if (err < 0)
			goto fail;
		s->have_target = true;
	}
	if (opts->command_is_target) {
		s->attr.inherit = 1;
		s->attr.enable_on_exec = 1;
	} else if (!opts->system_wide) {
		s->attr.inherit = !opts->pids_are_tids;
	}
	err = open_events(s, cpus, (size_t)ncpus, d);
	if (err < 0)
		goto fail;
	free(cpus);
	cpus = NULL;

	/* Describe what already runs (perf's synthesized events): after the
	 * events exist, so nothing that happens in between is missed. */
	if (!opts->command_is_target)
		enable_all(s, true);
	if (opts->system_wide) {
		kp_proctab_synthesize_all(s->procs);
	} else if (!opts->command_is_target) {
		for (size_t i = 0; i < opts->npids; i++) {
			uint64_t tgid = (uint64_t)opts->pids[i];
			char path[64], line[256];
			FILE *f;

			/* -t TID: the process is the thread's tgid */
			snprintf(path, sizeof(path), "/proc/%d/status", (int)opts->pids[i]);
			f = fopen(path, "re");
			while (f && fgets(line, sizeof(line), f))
				if (sscanf(line, "Tgid: %lu", &tgid) == 1)
					break;
			if (f)
				fclose(f);
			kp_proctab_synthesize(s->procs, (pid_t)tgid);
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
	for (size_t i = 0; i < s->nrings; i++)
		kp_ring_fini(&s->rings[i].ring);
	for (size_t i = 0; i < s->nfds; i++)
		close(s->fds[i]);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->sigfd >= 0)
		close(s->sigfd);
	sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
	free(s->fds);
	free(s->rings);
	kp_stacktab_free(s->stacks);
	kp_proctab_free(s->procs);
	kp_strtab_free(s->strings);
	kp_u64map_fini(&s->synth_failed);
	kp_recqueue_fini(&s->queue);
	free(s->exits);
	for (size_t i = 0; i < s->nnotes; i++)
		free(s->notes[i]);
	free(s->notes);
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

static void process_sample(struct kp_session *s, const struct kp_sample *smp)
{
	uint32_t locs[MAX_FRAMES];
	size_t n = 0;
	enum { CTX_KERNEL, CTX_USER, CTX_OTHER } ctx = smp->user_mode ? CTX_USER : CTX_KERNEL;
	bool first = true;
	struct kp_stack_root root;
	const uint64_t *ips = smp->ips;
	uint64_t nr = smp->nr;

	s->st.samples++;
	if (!nr) {
		ips = &smp->ip;
		nr = 1;
	}
	know_pid(s, (pid_t)smp->pid);
	for (uint64_t i = 0; i < nr && n < MAX_FRAMES; i++) {
		uint64_t ip = ips[i];
		struct kp_loc loc;

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			ctx = ip == (uint64_t)PERF_CONTEXT_KERNEL ? CTX_KERNEL
			      : ip == (uint64_t)PERF_CONTEXT_USER ? CTX_USER
								  : CTX_OTHER;
			first = true;
			continue;
		}
		/* return addresses point after the call: look up the call */
		if (!first && ip)
			ip--;
		first = false;
		if (ctx == CTX_KERNEL) {
			loc = (struct kp_loc){.addr = ip, .kind = KP_LOC_KERNEL};
		} else if (ctx == CTX_USER) {
			if (ip == 0)
				continue;
			loc = user_loc(s, (pid_t)smp->pid, ip);
		} else {
			continue;
		}
		locs[n++] = kp_stacktab_loc(s->stacks, &loc);
	}
	/* the callchain is leaf first; stacks are stored root first */
	for (size_t i = 0; i < n / 2; i++) {
		uint32_t t = locs[i];

		locs[i] = locs[n - 1 - i];
		locs[n - 1 - i] = t;
	}
	root.comm = smp->pid == 0 ? kp_strtab_intern(s->strings, "swapper", 7)
				  : kp_proctab_comm_of(s->procs, (pid_t)smp->pid, (pid_t)smp->tid);
	root.pid = s->opts.root_pid || s->opts.root_tid ? smp->pid : 0;
	root.tid = s->opts.root_tid ? smp->tid : 0;
	kp_stacktab_add(s->stacks, &root, locs, n, 1);
}

static void process_record(struct kp_session *s, const struct perf_event_header *hdr)
{
	struct kp_record rec;
	int err = kp_record_parse(&s->layout, hdr, &rec);

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
		kp_proctab_mmap(s->procs, (pid_t)rec.mmap2.pid, rec.mmap2.addr, rec.mmap2.len,
				rec.mmap2.pgoff, rec.mmap2.maj, rec.mmap2.min, rec.mmap2.ino,
				rec.mmap2.filename, rec.mmap2.build_id, rec.mmap2.build_id_size);
		break;
	case PERF_RECORD_COMM:
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

/* Forgets the first n exited tasks. */
static void apply_exits(struct kp_session *s, size_t n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		if (kp_proctab_exit(s->procs, s->exits[i][0], s->exits[i][1]))
			kp_sym_process_exit(s->opts.sym, s->exits[i][0]);
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

	for (size_t i = 0; i < s->nrings; i++) {
		struct kp_ring *r = &s->rings[i].ring;
		const struct perf_event_header *hdr;

		if (!kp_ring_read_init(r))
			continue;
		while ((hdr = kp_ring_read_event(r)))
			kp_recqueue_push(&s->queue, hdr, kp_record_time(&s->layout, hdr));
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
		/* SIGINT, SIGTERM, SIGHUP: stop, and pass it on */
		forward_signal(s, (int)si.ssi_signo);
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
	enable_all(s, false);
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
	return 0;
}

/* ---- symbolizing and folding ---- */

struct loc_frames {
	size_t off, n;
	bool resolved;
};

/* Orders location ids by (kind, object). */
static int cmp_loc_object(const void *a, const void *b, void *arg)
{
	const struct kp_loc *x = kp_stacktab_loc_at(arg, *(const uint32_t *)a);
	const struct kp_loc *y = kp_stacktab_loc_at(arg, *(const uint32_t *)b);

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->obj < y->obj ? -1 : x->obj > y->obj;
}

void kp_session_fold(struct kp_session *s, struct kp_folded *f)
{
	size_t nlocs = kp_stacktab_nlocs(s->stacks);
	struct loc_frames *lf = kp_xcalloc(nlocs ? nlocs : 1, sizeof(*lf));
	struct kp_frame *arena = NULL, *stack = NULL;
	size_t narena = 0, arena_cap = 0, stack_cap = 0;
	struct kp_sym_frames sf = {0};
	char rootbuf[128];
	uint32_t *order;

	/* once per distinct location, object by object, each object's file and
	 * debuginfo released once its last location is named */
	order = kp_xmalloc((nlocs ? nlocs : 1) * sizeof(*order));
	for (size_t i = 0; i < nlocs; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, nlocs, sizeof(*order), cmp_loc_object, s->stacks);
	{
		uint64_t *kaddrs = kp_xmalloc((nlocs ? nlocs : 1) * sizeof(*kaddrs));
		size_t nk = 0;

		for (size_t i = 0; i < nlocs; i++)
			if (kp_stacktab_loc_at(s->stacks, (uint32_t)i)->kind == KP_LOC_KERNEL)
				kaddrs[nk++] = kp_stacktab_loc_at(s->stacks, (uint32_t)i)->addr;
		kp_sym_kernel_hint(s->opts.sym, kaddrs, nk);
		free(kaddrs);
	}
	for (size_t k = 0; k < nlocs; k++) {
		uint32_t i = order[k];
		const struct kp_loc *loc = kp_stacktab_loc_at(s->stacks, i);

		lf[i].resolved = kp_sym_resolve(s->opts.sym, loc, &sf);
		lf[i].off = narena;
		lf[i].n = sf.n;
		kp_xgrow(&arena, &arena_cap, narena + sf.n, sizeof(*arena));
		for (size_t j = 0; j < sf.n; j++)
			arena[narena + j] = (struct kp_frame){sf.frames[j].name, sf.frames[j].kind};
		narena += sf.n;
		if (loc->kind == KP_LOC_USER &&
		    (k + 1 == nlocs || cmp_loc_object(&order[k], &order[k + 1], s->stacks) != 0))
			kp_sym_object_done(s->opts.sym, loc->obj);
	}
	kp_sym_frames_fini(&sf);
	free(order);

	for (size_t i = 0; i < kp_stacktab_nstacks(s->stacks); i++) {
		struct kp_stack_root root;
		size_t n, nf = 0;
		uint64_t count;
		const uint32_t *locs = kp_stacktab_stack(s->stacks, i, &root, &n, &count);
		const char *comm = kp_strtab_str(s->strings, root.comm);

		if (root.tid)
			snprintf(rootbuf, sizeof(rootbuf), "%s-%u/%u", comm, root.pid, root.tid);
		else if (s->opts.root_pid)
			snprintf(rootbuf, sizeof(rootbuf), "%s-%u", comm, root.pid);
		else
			snprintf(rootbuf, sizeof(rootbuf), "%s", comm);
		kp_xgrow(&stack, &stack_cap, 1, sizeof(*stack));
		stack[nf++] = (struct kp_frame){rootbuf, KP_FRAME_ROOT};
		for (size_t j = 0; j < n; j++) {
			const struct loc_frames *l = &lf[locs[j]];
			const struct kp_loc *loc = kp_stacktab_loc_at(s->stacks, locs[j]);

			kp_xgrow(&stack, &stack_cap, nf + l->n, sizeof(*stack));
			memcpy(stack + nf, arena + l->off, l->n * sizeof(*stack));
			nf += l->n;
			s->st.frames += count;
			if (!l->resolved)
				s->st.unresolved[loc->kind & 3] += count;
		}
		kp_folded_add(f, stack, nf, count);
	}
	free(stack);
	free(arena);
	free(lf);
}

void kp_session_stats(const struct kp_session *s, struct kp_session_stats *st)
{
	*st = s->st;
	st->event = s->event_name;
	st->freq = s->attr.freq ? s->attr.sample_freq : 0;
	st->period = s->attr.freq ? 0 : s->attr.sample_period;
}

int kp_session_exit_code(const struct kp_session *s)
{
	return s->have_target ? kp_target_exit_code(&s->target) : 0;
}

const char *const *kp_session_notes(const struct kp_session *s, size_t *n)
{
	*n = s->nnotes;
	return (const char *const *)s->notes;
}
