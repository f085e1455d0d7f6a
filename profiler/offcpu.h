/* profiler/ is sampling (profile/ is the model it fills).
 *
 * kp_offcpu: off-CPU waits, from switch records and sampled stacks to
 * the profile (kprof --off-cpu and --wall; docs/offcpu.md).
 *
 * Every switch of a target thread gives a SWITCH record: out (with the
 * kernel's "preempted" flag) and later in. A wait is the time from one to
 * the other, exact whatever the sampling: the totals count every wait.
 * The stacks come from the switch event, which samples every switch at
 * low rates and, in a storm, the kernel's frequency mode. A sampled wait
 * is charged to its own stack, its time multiplied by the switches the
 * sample stands for: its own and those of its thread the frequency mode
 * left out since the thread's previous sample, which are charged nothing
 * themselves; so each stack's expected share is its share of the waiting
 * (docs/offcpu.md, "Which waits have a stack").
 * A switch whose sample the kernel dropped while every switch was sampled
 * goes on the last stack of its class, counted.
 *
 * The BPF path (offcpu_bpf.h) chooses the waits in the kernel, each with
 * a chance fixed before its length is known: kprof charges a chosen
 * wait's time over its chance to its stack, and counts the exact totals.
 *
 * It knows nothing of perf: the session hands it what the records say,
 * in time order. Memory: per live thread, at most four stacks (the
 * sample waiting for its switch out record, one per class, the BPF
 * path's chosen one), freed when it is forgotten. */
#ifndef KP_PROFILER_OFFCPU_H
#define KP_PROFILER_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile/profile.h"

/* The most 1 / a chance may make one wait count. */
#define KP_OFFCPU_MAX_PERIOD (1u << 24)

struct kp_offcpu_opts {
	struct kp_profile *prof; /* borrowed: where the waits go */
	bool wall;		 /* --wall's values, else --off-cpu's (profile/wait.h) */
	uint64_t min_wait_ns;	 /* shorter waits are left out (counted) */
	/* where sched_switch's prev_state is in a stack's raw record; size 0:
	 * none (the context-switches event), kinds from the switch record */
	unsigned state_off, state_size;
	bool root_pid, root_tid; /* what the roots of "[no stack sampled]" hold */
	/* the comm of a thread as a string of prof, for those roots */
	uint32_t (*comm_of)(void *arg, pid_t pid, pid_t tid);
	/* a record's time (ns, the events' clock) as ms of the profile's time
	 * axis: each wait charged is an event ending there (NULL: none) */
	uint32_t (*ms_of)(void *arg, uint64_t time);
	void *arg;
};

struct kp_offcpu_stats {
	uint64_t stacks;      /* stacks sampled at switches */
	uint64_t waits;	      /* waits timed (every one, sampled or not) */
	uint64_t ns;	      /* their time, exact */
	uint64_t charged;     /* waits charged to a stack: sampled, chosen */
	uint64_t charged_ns;  /* what they put in the profile: the estimate */
	uint64_t nostack;     /* of those, under "[no stack sampled]" */
	uint64_t nostack_ns;  /* what they put there */
	uint64_t short_waits; /* under min_wait_ns (left out) */
	uint64_t unpaired;    /* a switch out with one open: the records between lost */
	uint64_t open_at_end; /* still open when the recording ended (ended there) */
	uint64_t clock_skew;  /* a wait that ended before it began (counted 0) */
	uint64_t unsampled;   /* switches out with no stack sampled at them */
	uint64_t dropped;     /* of those, while every switch was sampled: on
			       * the last stack of their class */
};

/* Returns a new table of threads (o copied). */
struct kp_offcpu *kp_offcpu_new(const struct kp_offcpu_opts *o);
/* Frees it (the profile has every wait charged as it ended). */
void kp_offcpu_free(struct kp_offcpu *o);

/* A stack sampled where thread tid left a CPU: locs[0..n) root first (of
 * the profile, copied), its root and the sample's raw record (may be
 * NULL). It is the stack of the wait that begins at the thread's next
 * switch out record. */
void kp_offcpu_stack(struct kp_offcpu *o, pid_t tid, const uint32_t *locs, size_t n,
		     const struct kp_profile_root *root, const unsigned char *raw,
		     uint32_t raw_size);
/* Thread (pid, tid) switched out (out) or in at time (ns). */
void kp_offcpu_switch(struct kp_offcpu *o, pid_t pid, pid_t tid, uint64_t time, bool out,
		      bool preempt);
/* Waits timed in the kernel (offcpu_bpf.h), which times every wait and
 * writes the exact sums by thread, class and kind: ns[k] nanoseconds in
 * n[k] waits of kind k (enum kp_wait_kind), counted in the totals only. */
void kp_offcpu_count_waits(struct kp_offcpu *o, const uint64_t *ns, const uint32_t *n);
/* The stack where thread tid left a CPU for a wait the kernel chose:
 * locs[0..n) root first (copied) and its root, for that wait's time. */
void kp_offcpu_set_stack(struct kp_offcpu *o, pid_t tid, const uint32_t *locs, size_t n,
			 const struct kp_profile_root *root);
/* A chosen wait of thread (pid, tid), of class `preempted` and kind (enum
 * kp_wait_kind), ended after ns at end (the events' clock): charged ns * weight (1 / its chance, 1
 * to KP_OFFCPU_MAX_PERIOD; others are refused) to the stack set for it,
 * or, without one (!has_stack: the ring could not take it), under "[no
 * stack sampled]", counted. */
void kp_offcpu_chosen_wait(struct kp_offcpu *o, pid_t pid, pid_t tid, bool preempted, unsigned kind,
			   uint64_t ns, double weight, bool has_stack, uint64_t end);
/* From time on (ns; records come in time order, later), the switch event
 * samples in the kernel's frequency mode (storm) or every switch: a switch
 * out without its sample is then one the mode left out (charged nothing:
 * the thread's next sample counts it), or one the kernel dropped (on the
 * last stack of its class, counted). Every switch until told otherwise. */
void kp_offcpu_sampling(struct kp_offcpu *o, uint64_t time, bool storm);
/* Thread tid exited (its EXIT record): a switch out after it is no wait. */
void kp_offcpu_exit(struct kp_offcpu *o, pid_t tid);
/* Forgets thread tid (a round after its exit), adding what it holds. */
void kp_offcpu_forget(struct kp_offcpu *o, pid_t tid);
/* The recording ended at end_ns: the waits still open end there. */
void kp_offcpu_finish(struct kp_offcpu *o, uint64_t end_ns);

const struct kp_offcpu_stats *kp_offcpu_stats(const struct kp_offcpu *o);

#endif
