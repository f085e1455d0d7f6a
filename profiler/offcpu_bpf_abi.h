/* profiler/ is sampling (profile/ is the model it fills).
 *
 * What profiler/bpf/offcpu.bpf.c (the in-kernel half of kprof --off-cpu's
 * BPF timing, docs/offcpu.md) and profiler/offcpu_bpf.c (its loader and
 * reader) share: the records the BPF program writes into its ring buffer
 * and the per-CPU counters it keeps. Included by both the BPF program and
 * kprof, so plain fixed-size types only. x86-64 only (the registers). */
#ifndef KP_PROFILER_OFFCPU_BPF_ABI_H
#define KP_PROFILER_OFFCPU_BPF_ABI_H

#include <linux/types.h>

/* Record types, above perf's (PERF_RECORD_USER_TYPE_START is 64): the
 * records join the perf records in the session's time-ordered queue. */
#define KP_BPF_REC_STACK  0x4b01 /* a stack sampled where a thread went off CPU */
#define KP_BPF_REC_WAITS  0x4b02 /* a thread's waits, at its exit or the end */
#define KP_BPF_REC_CHOSEN 0x4b03 /* a chosen wait's own time, where it ended */

/* The wait's class (blocked or preempted: the exact sums are kept by
 * class) and kind (the marker frame: profile/wait.h's enum kp_wait_kind). */
#define KP_BPF_BLOCKED	       0
#define KP_BPF_PREEMPTED       1
#define KP_BPF_NCLASSES	       2
#define KP_BPF_SLEEPING	       0 /* KP_WAIT_SLEEPING, ... (bpf_records.c checks) */
#define KP_BPF_UNINTERRUPTIBLE 1
#define KP_BPF_KIND_PREEMPTED  2
#define KP_BPF_OTHER	       4
#define KP_BPF_NKINDS	       5 /* KP_WAIT_NKINDS */

/* The user registers: x86-64's struct pt_regs from r15 to sp, in the
 * kernel's order (ptrace's struct user_regs_struct: an ABI), copied in
 * one read; bpf_records.c orders them as perf's registers. */
#define KP_BPF_NREGS	   20
#define KP_BPF_REG_IP	   16
#define KP_BPF_REG_SP	   19
#define KP_BPF_MAX_IPS	   128	/* kernel frames; user frames of the frame-pointer chain */
#define KP_BPF_STACK_CHUNK 512	/* the user stack is copied in chunks ... */
#define KP_BPF_STACK_MAX   8192 /* ... up to this (KP_STACK_DUMP_SWITCH) */

/* A wait's chance of being chosen, fixed point: KP_BPF_P_ONE is 1. */
#define KP_BPF_P_BITS 20
#define KP_BPF_P_ONE  (1u << KP_BPF_P_BITS)

/* The waits of one class of a thread since its last record of that class,
 * chosen or not: nanoseconds and count by kind (the exact totals). */
struct kp_bpf_waits {
	__u64 ns[KP_BPF_NKINDS];
	__u32 n[KP_BPF_NKINDS];
	__u32 pad;
};

/* A chosen wait's time, for its stack: its chance (0: none), kind and
 * class, and whether its stack record was written (0: the ring was
 * full). kprof charges ns * KP_BPF_P_ONE / chance to that stack. */
struct kp_bpf_chosen {
	__u64 ns;
	__u32 chance;
	__u8 kind, cls, has_stack, pad;
};

/* Both records begin like a perf record (struct perf_event_header). */
struct kp_bpf_rec_head {
	__u32 type;
	__u16 misc;
	__u16 size; /* bytes of the record that hold something */
	__u64 time; /* CLOCK_MONOTONIC, as the perf events' */
	__u32 pid, tid;
	__u32 cpu;
	__u32 cls; /* KP_BPF_BLOCKED or KP_BPF_PREEMPTED */
};

/* KP_BPF_REC_STACK: written at a switch out chosen with chance `chance`
 * (KP_BPF_P_ONE: 1): the stack of that one wait, whose time comes in the
 * thread's next KP_BPF_REC_CHOSEN. `flushed` holds the exact sums of the
 * class's waits since the class's previous record (the totals only). */
struct kp_bpf_stack_rec {
	struct kp_bpf_rec_head h;
	struct kp_bpf_waits flushed;
	struct kp_bpf_chosen carried; /* the thread's previous chosen wait's
				       * time, when the ring could not take it
				       * as it ended (for the previous stack) */
	__u32 kind;		      /* this switch's */
	__u32 chance;		      /* the wait's chance of being chosen, 1 to KP_BPF_P_ONE */
	__u32 nkernel;		      /* kernel frames in ips, leaf first */
	__u32 nuser;		      /* user frames in user_ips (-g auto, fp), leaf first */
	__u32 user_regs;	      /* 1: regs hold the user registers, stack the copy */
	__u64 stack_size;	      /* bytes of stack that are valid */
	__u64 regs[KP_BPF_NREGS];
	__u64 ips[KP_BPF_MAX_IPS];
	__u64 user_ips[KP_BPF_MAX_IPS]; /* the frame-pointer chain, from the ip */
	__u8 stack[KP_BPF_STACK_MAX];	/* h.size ends within it */
};

/* KP_BPF_REC_WAITS: the exact sums of a class not yet written, at the
 * thread's exit (through the ring) or at the end of the recording
 * (through the task iterator). */
struct kp_bpf_waits_rec {
	struct kp_bpf_rec_head h;
	struct kp_bpf_waits w;
};

/* KP_BPF_REC_CHOSEN: a chosen wait ended (its thread came back, or the
 * recording ended: the task iterator), or one whose record the ring could
 * not take then, at the thread's exit. */
struct kp_bpf_chosen_rec {
	struct kp_bpf_rec_head h;
	struct kp_bpf_chosen c;
};

/* The program's settings (its .rodata), set by kprof before loading. */
struct kp_bpf_config {
	__u8 all_tasks;	 /* -a: every task but the idle ones */
	__u8 follow;	 /* children and new threads of targets are targets */
	__u8 user_chain; /* -g auto, fp: the user stack's frame-pointer chain */
	__u8 copy_stack; /* -g auto, dwarf: a copy of the user stack */
	__u8 pad[4];
	__u64 min_wait_ns;
	__u64 stack_cost_ns; /* 1e9 / stacks a second a CPU; 0: every switch */
	__u64 wakeup_bytes;  /* wake kprof when the ring holds this much */
};

/* What kprof changes while the program runs (its .bss). */
struct kp_bpf_live {
	__u32 exec_tgid; /* the command: a target from its exec on */
	__u32 pad;
	__u64 end_ns; /* the task iterator ends open waits here */
};

/* Per-CPU counters (the cpu map's stats), summed by kprof. */
enum {
	KP_BPF_ST_SHORT = 0,   /* waits under --min-wait (left out) */
	KP_BPF_ST_STACKS,      /* stacks written */
	KP_BPF_ST_RATE,	       /* switches out whose stack the rate left out */
	KP_BPF_ST_LOST,	       /* stacks the full ring left out (waits kept) */
	KP_BPF_ST_LOST_WAITS,  /* exit records the full ring lost: their waits */
	KP_BPF_ST_LOST_NS,     /* and their time */
	KP_BPF_ST_OPEN,	       /* waits still open at the end */
	KP_BPF_ST_UNPAIRED,    /* a switch out with a wait open: its end unseen */
	KP_BPF_ST_CHOSEN,      /* switches out chosen (their stack written or not) */
	KP_BPF_ST_LOST_CHOSEN, /* chosen waits whose time the full ring lost
				* (as they ended and at every later chance) */
	KP_BPF_NSTATS
};

/* Per CPU, in one lookup a switch (the cpu map): the current window of
 * the switch rate (its start and switches out of targets so far), the
 * recent gap between those switches, and the counters. */
struct kp_bpf_cpu {
	__u64 win_start, win_n, gap_ns;
	__u64 stats[KP_BPF_NSTATS];
};

#endif
