/* profiler/ is sampling (profile/ is the model it fills).
 *
 * kp_offcpu: off-CPU waits, from switch records and sampled stacks to
 * the profile (kprof --off-cpu and --wall; docs/offcpu.md).
 *
 * Every switch of a target thread gives a SWITCH record: out (with the
 * kernel's "preempted" flag) and later in. A wait is the time from one to
 * the other, exact whatever the sampling. The stacks come from the switch
 * event, which samples a fraction of the switches (the kernel's frequency
 * mode: every switch at low rates, a few thousand a second in a storm).
 * A wait is attributed to the stack last sampled on its thread at a switch
 * of the same class (blocked or preempted), so each sampled stack stands
 * for the waits that follow it until the next sample: per thread, the
 * off-CPU time is whole and exact, and only which stack a wait is put on
 * is sampled. A wait before any stack of its class was sampled on its
 * thread goes under "[no stack sampled]".
 *
 * It knows nothing of perf: the session hands it what the records say,
 * in time order. Memory: per live thread, at most three stacks (the
 * sample waiting for its switch out record, and one per class), freed
 * when it is forgotten. */
#ifndef KP_PROFILER_OFFCPU_H
#define KP_PROFILER_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile/profile.h"

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
	void *arg;
};

struct kp_offcpu_stats {
	uint64_t stacks;      /* stacks sampled at switches */
	uint64_t waits;	      /* waits timed and attributed */
	uint64_t ns;	      /* their time */
	uint64_t nostack;     /* of those, under "[no stack sampled]" */
	uint64_t nostack_ns;  /* their time */
	uint64_t short_waits; /* under min_wait_ns (left out) */
	uint64_t unpaired;    /* a switch out with one open: the records between lost */
	uint64_t open_at_end; /* still open when the recording ended (ended there) */
	uint64_t clock_skew;  /* a wait that ended before it began (counted 0) */
	uint64_t unsampled;   /* switches out with no stack sampled at them */
};

/* Returns a new table of threads (o copied). */
struct kp_offcpu *kp_offcpu_new(const struct kp_offcpu_opts *o);
/* Frees it; what its stacks hold is added to the profile first when keep. */
void kp_offcpu_free(struct kp_offcpu *o, bool keep);

/* A stack sampled where thread tid left a CPU: locs[0..n) root first (of
 * the profile, copied), its root, and the sample's raw record (may be
 * NULL). It takes effect at the thread's next switch out record. */
void kp_offcpu_stack(struct kp_offcpu *o, pid_t tid, const uint32_t *locs, size_t n,
		     const struct kp_profile_root *root, const unsigned char *raw,
		     uint32_t raw_size);
/* Thread (pid, tid) switched out (out) or in at time (ns). */
void kp_offcpu_switch(struct kp_offcpu *o, pid_t pid, pid_t tid, uint64_t time, bool out,
		      bool preempt);
/* Waits timed in the kernel (offcpu_bpf.h), which times every wait and
 * writes them summed by thread, class and kind, not one by one:
 *
 * ns[k] nanoseconds in n[k] waits of kind k (enum kp_wait_kind) of thread
 * (pid, tid) since its last stack of class `preempted` go on that stack
 * (or under "[no stack sampled]"), each kind under its marker. */
void kp_offcpu_add_waits(struct kp_offcpu *o, pid_t pid, pid_t tid, bool preempted,
			 const uint64_t *ns, const uint32_t *n);
/* A stack sampled where thread tid left a CPU, of class `preempted`:
 * locs[0..n) root first (copied) and its root. It stands for the class's
 * waits from now on. */
void kp_offcpu_set_stack(struct kp_offcpu *o, pid_t tid, bool preempted, const uint32_t *locs,
			 size_t n, const struct kp_profile_root *root);
/* Thread tid exited (its EXIT record): a switch out after it is no wait. */
void kp_offcpu_exit(struct kp_offcpu *o, pid_t tid);
/* Forgets thread tid (a round after its exit), adding what it holds. */
void kp_offcpu_forget(struct kp_offcpu *o, pid_t tid);
/* The recording ended at end_ns: the waits still open end there. */
void kp_offcpu_finish(struct kp_offcpu *o, uint64_t end_ns);

const struct kp_offcpu_stats *kp_offcpu_stats(const struct kp_offcpu *o);

#endif
