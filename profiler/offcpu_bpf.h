/* profiler/ is sampling (profile/ is the model it fills).
 *
 * kp_offcpu_bpf: kprof --off-cpu and --wall's waits timed in the kernel
 * (docs/offcpu.md, "Timing in the kernel"). Loads the BPF program of
 * profiler/bpf/offcpu.bpf.c (built into kprof), tells it the targets and
 * hands over its records: stacks sampled where a target thread left a CPU,
 * each with the waits of its class since the previous one, and the waits
 * left at a thread's exit or at the end (profiler/offcpu_bpf_abi.h). The
 * session queues them with the perf records, by time, and the off-CPU
 * table (offcpu.h) attributes them.
 *
 * It needs root (CAP_BPF and CAP_PERFMON), a kernel with BTF (5.15 on)
 * and a kprof built with libbpf; where any is missing kp_offcpu_bpf_open
 * says which, and the session times the waits from perf's SWITCH records
 * instead. */
#ifndef KP_PROFILER_OFFCPU_BPF_H
#define KP_PROFILER_OFFCPU_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/diag.h"

struct kp_offcpu_bpf_opts {
	bool all_tasks;		   /* -a: every task */
	bool follow;		   /* children and new threads of targets are targets */
	bool user_chain;	   /* -g auto, fp: the user stack's frame-pointer chain */
	bool copy_stack;	   /* -g auto, dwarf: a copy of the user stack */
	const pid_t *tgids, *tids; /* -p, -t */
	size_t ntgids, ntids;
	uint64_t min_wait_ns;
	uint64_t switch_freq; /* stacks a second a CPU at most (0: every switch) */
	size_t ncpus;	      /* sizes the ring */
};

struct kp_offcpu_bpf;

/* Loads and attaches the program. Returns 0, or a negative errno with
 * one sentence in d (-ENOSYS: kprof was built without it). */
int kp_offcpu_bpf_open(struct kp_offcpu_bpf **out, const struct kp_offcpu_bpf_opts *o,
		       struct kp_diag *d);
void kp_offcpu_bpf_free(struct kp_offcpu_bpf *b);
/* An fd that polls readable when the ring holds a quarter of its size. */
int kp_offcpu_bpf_fd(const struct kp_offcpu_bpf *b);
/* The command (held before its exec) becomes a target at its exec. */
void kp_offcpu_bpf_exec(struct kp_offcpu_bpf *b, pid_t tgid);

/* A record (profiler/offcpu_bpf_abi.h) of size bytes; valid during the
 * call only. */
typedef void (*kp_offcpu_bpf_fn)(void *arg, const void *rec, size_t size);
/* Hands fn the records the ring holds. */
void kp_offcpu_bpf_read(struct kp_offcpu_bpf *b, kp_offcpu_bpf_fn fn, void *arg);
/* The recording ended at end_ns (CLOCK_MONOTONIC): the waits not yet
 * written, open ones ended there, one record a thread and class. Returns 0
 * or a negative errno. */
int kp_offcpu_bpf_finish(struct kp_offcpu_bpf *b, uint64_t end_ns, kp_offcpu_bpf_fn fn, void *arg);

struct kp_offcpu_bpf_stats {
	uint64_t short_waits; /* under min_wait_ns */
	uint64_t stacks;      /* written */
	uint64_t rate;	      /* switches out not chosen (past --switch-freq) */
	uint64_t chosen;      /* switches out chosen */
	uint64_t lost;	      /* stacks of chosen waits a full ring left out */
	uint64_t lost_chosen; /* chosen waits whose time a full ring lost */
	uint64_t lost_waits;  /* exit records a full ring lost */
	uint64_t lost_ns;     /* their time */
	uint64_t open;	      /* waits open at the end */
	uint64_t unpaired;    /* switches out with a wait open (its end unseen) */
};
void kp_offcpu_bpf_stats(const struct kp_offcpu_bpf *b, struct kp_offcpu_bpf_stats *st);

#endif
