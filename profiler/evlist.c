/* The events and rings of a recording (see evlist.h). */
#include "profiler/evlist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "profiler/perf_event.h"
#include "util/xalloc.h"

void kp_evlist_init(struct kp_evlist *el, const struct perf_event_attr *attr,
		    const char *event_name, unsigned ring_pages)
{
	memset(el, 0, sizeof(*el));
	el->attr = *attr;
	snprintf(el->event_name, sizeof(el->event_name), "%s", event_name);
	el->ring_pages = ring_pages;
}

void kp_evlist_fini(struct kp_evlist *el)
{
	for (size_t i = 0; i < el->nrings; i++)
		kp_ring_fini(&el->rings[i].ring);
	for (size_t i = 0; i < el->nfds; i++)
		close(el->fds[i]);
	kp_notes_fini(&el->notes);
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
static int open_one(struct kp_evlist *el, pid_t pid, int cpu)
{
	int fd = kp_perf_open(&el->attr, pid, cpu, -1);

	if (fd == -EINVAL && el->attr.build_id) {
		el->attr.build_id = 0;
		fd = kp_perf_open(&el->attr, pid, cpu, -1);
	}
	return fd;
}

/* The first event decides the attr: cycles may fall back to cpu-clock, an
 * unprivileged user may fall back to user-only sampling. */
static int open_first(struct kp_evlist *el, pid_t pid, int cpu, struct kp_diag *d)
{
	bool excluded = false;
	int fd;

	/* The kernel checks permissions and PMU support in either order, so
	 * try the fallbacks until none applies. */
	for (;;) {
		fd = open_one(el, pid, cpu);
		if (fd >= 0)
			break;
		if ((fd == -ENOENT || fd == -EOPNOTSUPP || fd == -ENODEV) &&
		    el->attr.type == PERF_TYPE_HARDWARE &&
		    el->attr.config == PERF_COUNT_HW_CPU_CYCLES) {
			el->attr.type = PERF_TYPE_SOFTWARE;
			el->attr.config = PERF_COUNT_SW_CPU_CLOCK;
			kp_notes_add(&el->notes, "no hardware cycles event on this machine (no "
						 "PMU): sampling cpu-clock instead");
			snprintf(el->event_name, sizeof(el->event_name), "cpu-clock");
			continue;
		}
		if ((fd == -EACCES || fd == -EPERM) && !el->attr.exclude_kernel && pid > 0) {
			/* paranoid 2 still lets users sample their own code */
			el->attr.exclude_kernel = 1;
			el->attr.exclude_callchain_kernel = 1;
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
	if (fd < 0)
		kp_perf_explain(d, fd, el->event_name, pid, cpu);
	return fd;
}

static int add_ring(struct kp_evlist *el, int fd, int cpu, int epfd, struct kp_diag *d)
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
	ev.data.u64 = el->nrings;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return kp_diag_errno(d, -errno, "epoll_ctl");
	el->nrings++;
	return 0;
}

/* Rings big enough for half a second of samples per CPU, five rounds, so
 * a loop held up by a slow round or a loaded machine loses nothing: a
 * sample with a stack snapshot is ~9 KB, and at 999 Hz a CPU writes 9 MB/s
 * (a quarter of a second lost records on a machine with twice as many busy
 * threads as CPUs). The wakeup comes at a quarter of the ring, so the
 * 100 ms rounds rather than wakeups set the pace. Total ring memory stays
 * under 1 GiB. */
void kp_evlist_size_rings(struct kp_evlist *el, size_t ncpus)
{
	uint64_t rate = el->attr.freq ? el->attr.sample_freq : 1000;
	uint64_t rec = 128 + 8 * (uint64_t)el->attr.sample_max_stack +
		       8 * (uint64_t)__builtin_popcountll(el->attr.sample_regs_user) +
		       el->attr.sample_stack_user;
	uint64_t want = rate * rec / 2 / 4096, pages = 128;

	if (!el->ring_pages) {
		while (pages < want && pages < 4096 && (pages * 2) * 4096 * ncpus <= (1ULL << 30))
			pages *= 2;
		el->ring_pages = (unsigned)pages;
	}
	el->attr.wakeup_watermark = (uint32_t)(el->ring_pages * 4096ULL / 4);
	if (el->attr.wakeup_watermark < 64 * 1024)
		el->attr.wakeup_watermark = 64 * 1024;
}

int kp_evlist_open(struct kp_evlist *el, const pid_t *tasks, size_t ntasks, const int *cpus,
		   size_t ncpus, int epfd, struct kp_diag *d)
{
	int err = 0;

	el->rings = kp_xcalloc(ncpus, sizeof(*el->rings));
	for (size_t c = 0; c < ncpus; c++) {
		int leader = -1;

		for (size_t t = 0; t < ntasks; t++) {
			int fd = el->nfds == 0 ? open_first(el, tasks[t], cpus[c], d)
					       : open_one(el, tasks[t], cpus[c]);

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
				err = add_ring(el, fd, cpus[c], epfd, d);
				if (err < 0)
					goto out;
			} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, leader) < 0) {
				err = kp_diag_errno(d, -errno, "cannot share the ring of CPU %d",
						    cpus[c]);
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
}
