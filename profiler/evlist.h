/* profiler/ is sampling (profile/ is the model it fills).
 *
 * kp_evlist: the perf events of a recording and their rings.
 *
 * System-wide: one event per CPU. A command or pids: one event per (task,
 * CPU), the first on each CPU owning the ring and the others redirected
 * into it (PERF_EVENT_IOC_SET_OUTPUT), so there is one ring per CPU
 * whatever the number of threads. The first event opened decides the
 * attr, with the fallbacks a real machine needs: no PMU (cycles becomes
 * cpu-clock), perf_event_paranoid (user space only), kernels before 5.12
 * (no build-ids in MMAP2); each fallback taken leaves a note.
 *
 * More events may be opened beside the first on every (task, CPU)
 * (kprof --off-cpu's switch events beside the CPU clock or the side-band
 * event). They write into rings of their own, a second one per CPU, so a
 * burst of their samples (a stack copy each) that fills a ring loses only
 * their samples, never the first event's records (the SWITCH records that
 * time every wait). Their samples and LOST records are told apart by
 * their PERF_SAMPLE_IDENTIFIER. */
#ifndef KP_PROFILER_EVLIST_H
#define KP_PROFILER_EVLIST_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "profiler/ring.h"
#include "util/u64map.h"
#include "util/diag.h"
#include "util/notes.h"

struct kp_evlist_ring {
	int cpu;
	int fd;	    /* the event whose ring this is */
	bool extra; /* the extra events' ring of the CPU */
	struct kp_ring ring;
};

#define KP_EVLIST_MAX_EXTRA 2

struct kp_evlist {
	struct perf_event_attr attr; /* as opened, after the fallbacks */
	char event_name[64];	     /* the event sampled ("cpu-clock" after a fallback) */
	unsigned ring_pages;	     /* data pages per ring */
	int *fds;		     /* every event */
	size_t nfds, fds_cap;
	struct kp_evlist_ring *rings; /* one per CPU, and one for extra events */
	size_t nrings;
	struct kp_notes notes; /* the fallbacks taken, one sentence each */
	bool quiet_cycles;     /* the fallback of cycles to cpu-clock is not a note */
	/* more events beside the first (kprof --off-cpu's switch events) */
	struct kp_evlist_extra {
		struct perf_event_attr attr; /* as opened */
		char name[64];
		int *fds; /* to turn it off and on */
		size_t nfds, fds_cap;
		bool off; /* turned off (set before kp_evlist_open: opened off) */
	} extra[KP_EVLIST_MAX_EXTRA];
	size_t nextra;
	struct kp_u64map extra_ids; /* sample id -> 1 + index in extra */
};

/* attr as kp_perf_attr_init made it; ring_pages 0: sized by
 * kp_evlist_size_rings. */
void kp_evlist_init(struct kp_evlist *el, const struct perf_event_attr *attr,
		    const char *event_name, unsigned ring_pages);
/* Adds an event beside the first (before kp_evlist_open; at most
 * KP_EVLIST_MAX_EXTRA); its sample_type must be the first's,
 * PERF_SAMPLE_IDENTIFIER included. Returns its index. */
size_t kp_evlist_add_extra(struct kp_evlist *el, const struct perf_event_attr *attr,
			   const char *event_name);
/* Which extra event sample id (PERF_SAMPLE_IDENTIFIER) is of: 1 + its
 * index, or 0 for the first event. */
size_t kp_evlist_extra_of(const struct kp_evlist *el, uint64_t id);

/* Unmaps the rings, closes the events, frees the notes. */
void kp_evlist_fini(struct kp_evlist *el);

/* Rings big enough for half a second of samples per CPU at the sampling
 * rate and record size (stack snapshots included), unless ring_pages was
 * given; the wakeup watermark a quarter of a ring. */
void kp_evlist_size_rings(struct kp_evlist *el, size_t ncpus);

/* Opens tasks[0..ntasks) (-1: every task) on cpus[0..ncpus) and adds each
 * ring to epfd (epoll data: the ring's index). Returns 0 or a negative
 * errno (d explains it: permissions, a missing event, perf_event_mlock_kb). */
int kp_evlist_open(struct kp_evlist *el, const pid_t *tasks, size_t ntasks, const int *cpus,
		   size_t ncpus, int epfd, struct kp_diag *d);
/* Enables or disables every event. */
void kp_evlist_enable(struct kp_evlist *el, bool on);
/* Turns extra event i off or on (its inherited copies too). */
void kp_evlist_enable_extra(struct kp_evlist *el, size_t i, bool on);

#endif
