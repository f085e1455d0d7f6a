/* The events and rings of a recording (see evlist.h). */
#include "profiler/evlist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "procfs/sysctl.h"
#include "profiler/perf_event.h"
#include "util/xalloc.h"

void kp_evlist_init(struct kp_evlist *el, const struct perf_event_attr *attr,
		    const char *event_name, unsigned ring_pages)
{
	memset(el, 0, sizeof(*el));
	el->attr = *attr;
	snprintf(el->event_name, sizeof(el->event_name), "%s", event_name);
	el->ring_pages = ring_pages;
	kp_u64map_init(&el->extra_ids);
}

size_t kp_evlist_add_extra(struct kp_evlist *el, const struct perf_event_attr *attr,
			   const char *event_name)
{
	struct kp_evlist_extra *x = &el->extra[el->nextra];

	x->attr = *attr;
	snprintf(x->name, sizeof(x->name), "%s", event_name);
	return el->nextra++;
}

size_t kp_evlist_extra_of(const struct kp_evlist *el, uint64_t id)
{
	uint64_t v;

	return el->nextra && kp_u64map_get(&el->extra_ids, id, &v) ? (size_t)v : 0;
}

void kp_evlist_fini(struct kp_evlist *el)
{
	for (size_t i = 0; i < el->nrings; i++)
		kp_ring_fini(&el->rings[i].ring);
	for (size_t i = 0; i < el->nfds; i++)
		close(el->fds[i]);
	kp_notes_fini(&el->notes);
	kp_u64map_fini(&el->extra_ids);
	for (size_t i = 0; i < el->nextra; i++)
		free(el->extra[i].fds);
	free(el->fds);
	free(el->rings);
	memset(el, 0, sizeof(*el));
}

static void push_fd(struct kp_evlist *el, int fd)
{
	kp_xgrow(&el->fds, &el->fds_cap, el->nfds + 1, sizeof(*el->fds));
	el->fds[el->nfds++] = fd;
}

/* Opens one event with the fallbacks a real machine needs: no build-ids in
 * MMAP2 on kernels before 5.12. */
static int open_one(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	int fd = kp_perf_open(attr, pid, cpu, -1);

	if (fd == -EINVAL && attr->build_id) {
		attr->build_id = 0;
		fd = kp_perf_open(attr, pid, cpu, -1);
	}
	return fd;
}

/* The event sampled where threads leave the CPU (kprof --off-cpu). */
static bool is_switch_event(const struct perf_event_attr *attr)
{
	return attr->type == PERF_TYPE_TRACEPOINT ||
	       (attr->type == PERF_TYPE_SOFTWARE && attr->config == PERF_COUNT_SW_CONTEXT_SWITCHES);
}

/* sched:sched_switch refused (tracefs says its id, but the raw record
 * needs CAP_PERFMON or perf_event_paranoid -1): the software
 * context-switch event fires at the same point, without the state. */
static void switch_fallback(struct kp_evlist *el, struct perf_event_attr *attr, char *name,
			    size_t size, int err)
{
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	snprintf(name, size, "context-switches");
	kp_notes_add(&el->notes,
		     "cannot open sched:sched_switch (%s): sampling the context-switches "
		     "event, so waits are told apart as blocked or preempted only, not "
		     "sleeping or uninterruptible",
		     strerror(-err));
}

/* The first event decides the attr: cycles may fall back to cpu-clock, an
 * unprivileged user may fall back to user-only sampling. */
static int open_first(struct kp_evlist *el, struct perf_event_attr *attr, char *name,
		      size_t name_size, pid_t pid, int cpu, struct kp_diag *d)
{
	bool excluded = false;
	int fd;

	/* The kernel checks permissions and PMU support in either order, so
	 * try the fallbacks until none applies. */
	for (;;) {
		fd = open_one(attr, pid, cpu);
		if (fd >= 0)
			break;
		if ((fd == -ENOENT || fd == -EOPNOTSUPP || fd == -ENODEV) &&
		    attr->type == PERF_TYPE_HARDWARE && attr->config == PERF_COUNT_HW_CPU_CYCLES) {
			attr->type = PERF_TYPE_SOFTWARE;
			attr->config = PERF_COUNT_SW_CPU_CLOCK;
			if (!el->quiet_cycles)
				kp_notes_add(&el->notes, "no hardware cycles event on this "
							 "machine (no PMU): sampling cpu-clock "
							 "instead");
			snprintf(name, name_size, "cpu-clock");
			continue;
		}
		if (attr->type == PERF_TYPE_TRACEPOINT && is_switch_event(attr)) {
			switch_fallback(el, attr, name, name_size, fd);
			continue;
		}
		if ((fd == -EACCES || fd == -EPERM) && !attr->exclude_kernel && pid > 0 &&
		    !is_switch_event(attr)) {
			/* paranoid 2 still lets users sample their own code */
			attr->exclude_kernel = 1;
			attr->exclude_callchain_kernel = 1;
			excluded = true;
			continue;
		}
		break;
	}
	if (fd >= 0 && excluded)
		kp_notes_add(&el->notes,
			     "perf_event_paranoid is %d: sampling user space only (no "
			     "kernel frames); run as root for both",
			     kp_perf_paranoid());
	if ((fd == -EACCES || fd == -EPERM) && is_switch_event(attr) && pid > 0 && geteuid() != 0)
		kp_diag_set(d, fd,
			    "off-CPU stacks are sampled where the kernel switches threads, in "
			    "kernel mode, and /proc/sys/kernel/perf_event_paranoid is %d: it lets "
			    "users sample user space only; run as root, give kprof CAP_PERFMON, "
			    "or set perf_event_paranoid to 1 (your own processes, kernel "
			    "included)",
			    kp_perf_paranoid());
	else if (fd < 0)
		kp_perf_explain(d, fd, name, pid, cpu);
	return fd;
}

static int add_ring(struct kp_evlist *el, int fd, int cpu, bool extra, int epfd, struct kp_diag *d);

/* Extra event i on (task, cpu), writing into the extra events' ring of
 * the CPU (*leader, the first opened there owns it); its sample id
 * remembered. Returns 0 or a negative errno (said in d). */
static int open_extra(struct kp_evlist *el, size_t i, pid_t task, int cpu, int *leader, bool first,
		      int epfd, struct kp_diag *d)
{
	struct kp_evlist_extra *x = &el->extra[i];
	uint64_t id;
	int fd;

	/* an event like the one before falls back as it did */
	if (first && i > 0 && x->attr.type == PERF_TYPE_TRACEPOINT &&
	    el->extra[i - 1].attr.type != PERF_TYPE_TRACEPOINT) {
		x->attr.type = el->extra[i - 1].attr.type;
		x->attr.config = el->extra[i - 1].attr.config;
		memcpy(x->name, el->extra[i - 1].name, sizeof(x->name));
	}
	fd = first ? open_first(el, &x->attr, x->name, sizeof(x->name), task, cpu, d)
		   : open_one(&x->attr, task, cpu);
	if (fd < 0) {
		if (!first)
			kp_perf_explain(d, fd, x->name, task, cpu);
		return fd;
	}
	push_fd(el, fd);
	kp_xgrow(&x->fds, &x->fds_cap, x->nfds + 1, sizeof(*x->fds));
	x->fds[x->nfds++] = fd;
	if (*leader < 0) {
		int err = add_ring(el, fd, cpu, true, epfd, d);

		if (err < 0)
			return err;
		*leader = fd;
	} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, *leader) < 0) {
		return kp_diag_errno(d, -errno, "cannot share the ring of CPU %d", cpu);
	}
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
		return kp_diag_errno(d, -errno, "cannot read the identifier of an event");
	kp_u64map_put(&el->extra_ids, id, i + 1);
	/* one that starts off stays off on its inherited copies too */
	if (x->off && !el->attr.enable_on_exec)
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	return 0;
}

static int add_ring(struct kp_evlist *el, int fd, int cpu, bool extra, int epfd, struct kp_diag *d)
{
	struct kp_evlist_ring *r = &el->rings[el->nrings];
	struct epoll_event ev = {.events = EPOLLIN};
	int err = kp_ring_mmap(&r->ring, fd, el->ring_pages);

	/* unprivileged users share perf_event_mlock_kb: settle for less */
	while ((err == -EPERM || err == -ENOMEM) && el->ring_pages > 8) {
		el->ring_pages /= 2;
		err = kp_ring_mmap(&r->ring, fd, el->ring_pages);
	}
	if (err < 0)
		return kp_diag_errno(d, err,
				     "cannot map the ring buffer of CPU %d (%u pages; "
				     "see /proc/sys/kernel/perf_event_mlock_kb)",
				     cpu, el->ring_pages);
	r->cpu = cpu;
	r->fd = fd;
	r->extra = extra;
	ev.data.u64 = el->nrings;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return kp_diag_errno(d, -errno, "epoll_ctl");
	el->nrings++;
	return 0;
}

/* Rings big enough for half a second of samples per CPU, five rounds, so
 * a loop held up by a slow round or a loaded machine loses nothing: a
 * sample reserves its whole stack snapshot in the ring however little of
 * it the kernel fills (kprof keeps only that part), ~17 KB by default, and
 * at 999 Hz a CPU writes 17 MB/s (a quarter of a second lost records on a
 * machine with twice as many busy threads as CPUs). The wakeup comes at a
 * quarter of the ring, so the 100 ms rounds rather than wakeups set the
 * pace. Total ring memory stays under 1 GiB (with extra events, two rings
 * a CPU). */
void kp_evlist_size_rings(struct kp_evlist *el, size_t ncpus)
{
	uint64_t rate = el->attr.freq ? el->attr.sample_freq : 1000;
	uint64_t rec = 128 + 8 * (uint64_t)el->attr.sample_max_stack +
		       8 * (uint64_t)__builtin_popcountll(el->attr.sample_regs_user) +
		       el->attr.sample_stack_user;
	uint64_t want = rate * rec / 2 / 4096, pages = 128;
	uint64_t nrings = ncpus * (el->nextra ? 2 : 1);

	/* a switch storm writes two SWITCH records a switch, hundreds of
	 * thousands a second, beside the switch event's own samples */
	if (el->attr.context_switch || el->nextra)
		want += 2048;

	if (!el->ring_pages) {
		while (pages < want && pages < 4096 && (pages * 2) * 4096 * nrings <= (1ULL << 30))
			pages *= 2;
		el->ring_pages = (unsigned)pages;
	}
	/* a user's rings share perf_event_mlock_kb a CPU (root's do not):
	 * every ring gets its share, not the first ones all of it */
	if (geteuid() != 0) {
		long kb;

		if (kp_sysctl_read("kernel/perf_event_mlock_kb", &kb) == 0 && kb > 0) {
			uint64_t share = (uint64_t)kb * ncpus / 4 / nrings;

			while (el->ring_pages > 8 && el->ring_pages + 1 > share)
				el->ring_pages /= 2;
		}
	}
	el->attr.wakeup_watermark = (uint32_t)(el->ring_pages * 4096ULL / 4);
	if (el->attr.wakeup_watermark < 64 * 1024)
		el->attr.wakeup_watermark = 64 * 1024;
	/* off-CPU: the session bounds the switch event's stacks as it reads
	 * them, so it reads often at a storm (profiler/session.c) */
	if (el->nextra && el->attr.wakeup_watermark > 256 * 1024)
		el->attr.wakeup_watermark = 256 * 1024;
}

int kp_evlist_open(struct kp_evlist *el, const pid_t *tasks, size_t ntasks, const int *cpus,
		   size_t ncpus, int epfd, struct kp_diag *d)
{
	int err = 0;

	el->rings = kp_xcalloc(ncpus * (el->nextra ? 2 : 1), sizeof(*el->rings));
	/* extra events follow the first's targets and ring settings; one
	 * that starts off is opened off */
	for (size_t i = 0; i < el->nextra; i++) {
		struct perf_event_attr *a = &el->extra[i].attr;

		a->inherit = el->attr.inherit;
		a->enable_on_exec = el->attr.enable_on_exec && !el->extra[i].off;
		a->disabled = 1;
		a->watermark = el->attr.watermark;
		a->wakeup_watermark = el->attr.wakeup_watermark;
	}
	for (size_t c = 0; c < ncpus; c++) {
		int leader = -1, extra_leader = -1;

		for (size_t t = 0; t < ntasks; t++) {
			bool first = el->nfds == 0;
			int fd = first ? open_first(el, &el->attr, el->event_name,
						    sizeof(el->event_name), tasks[t], cpus[c], d)
				       : open_one(&el->attr, tasks[t], cpus[c]);

			if (fd == -ESRCH && ntasks > 1)
				continue; /* a thread that exited meanwhile */
			if (fd < 0) {
				if (el->nfds)
					kp_perf_explain(d, fd, el->event_name, tasks[t], cpus[c]);
				err = fd;
				goto out;
			}
			push_fd(el, fd);
			if (leader < 0) {
				leader = fd;
				err = add_ring(el, fd, cpus[c], false, epfd, d);
				if (err < 0)
					goto out;
			} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, leader) < 0) {
				err = kp_diag_errno(d, -errno, "cannot share the ring of CPU %d",
						    cpus[c]);
				goto out;
			}
			for (size_t i = 0; i < el->nextra; i++) {
				err = open_extra(el, i, tasks[t], cpus[c], &extra_leader, first,
						 epfd, d);
				if (err < 0)
					goto out;
			}
		}
	}
	if (!el->nrings)
		err = kp_diag_set(d, -ESRCH, "no task left to sample");
out:
	return err;
}

void kp_evlist_enable(struct kp_evlist *el, bool on)
{
	for (size_t i = 0; i < el->nfds; i++)
		ioctl(el->fds[i], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
	/* extra events turned off stay off */
	for (size_t i = 0; on && i < el->nextra; i++)
		for (size_t k = 0; el->extra[i].off && k < el->extra[i].nfds; k++)
			ioctl(el->extra[i].fds[k], PERF_EVENT_IOC_DISABLE, 0);
}

void kp_evlist_enable_extra(struct kp_evlist *el, size_t i, bool on)
{
	struct kp_evlist_extra *x = &el->extra[i];

	if (x->off == !on)
		return;
	x->off = !on;
	for (size_t k = 0; k < x->nfds; k++)
		ioctl(x->fds[k], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}
