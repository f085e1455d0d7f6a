/* A session's options and counts (profiler/session.h), types alone: the
 * session's state (profilerP.h) holds them, and the modules the session
 * calls (node.c, hotspot_frames.c) read that state, without depending on
 * session.c. */
#ifndef KP_PROFILER_SESSION_TYPES_H
#define KP_PROFILER_SESSION_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profiler/offcpu.h"
#include "profiler/perf_event.h"
#include "profiler/runtime_stats.h"
#include "symbolize/symbolize.h"
#include "unwind/unwind.h"

/* Most frames kept per sample (kernel and user together). */
#define KP_SESSION_MAX_FRAMES 1024

/* What a recording measures (docs/offcpu.md). */
enum kp_session_mode {
	KP_SESSION_CPU = 0, /* where CPU time goes: samples of the event */
	KP_SESSION_OFFCPU,  /* where threads wait: time off CPU, by the stack they left at */
	KP_SESSION_WALL,    /* both, per thread: each function's share of wall-clock time */
};

/* What times the waits of --off-cpu and --wall (docs/offcpu.md). */
enum kp_switch_source {
	KP_SWITCH_AUTO = 0, /* the kernel (BPF) where it loads, else perf's records */
	KP_SWITCH_BPF,	    /* the kernel, or fail saying why */
	KP_SWITCH_PERF,	    /* perf's SWITCH records and switch event */
};

struct kp_session_opts {
	struct kp_attr_opts attr;
	enum kp_session_mode mode;
	uint64_t switch_freq; /* off-CPU stacks sampled a second per event (0: every switch) */
	uint64_t min_wait_ns; /* waits shorter are left out (counted) */
	enum kp_switch_source switch_source;
	/* -e not given, or -q: cycles falls back to cpu-clock without a note
	 * (every run on a machine without a PMU would say it; the event
	 * sampled is in the recording's metadata and the SVG's subtitle) */
	bool event_is_default;
	bool system_wide; /* -a, or -C without targets */
	const int *cpus;  /* -C list; NULL = all online CPUs */
	size_t ncpus;
	const pid_t *pids; /* -p / -t */
	size_t npids;
	bool pids_are_tids;	   /* -t */
	char *const *argv;	   /* the command, NULL-terminated; may be NULL */
	bool command_is_target;	   /* no -a/-C/-p/-t: sample the command itself */
	double duration;	   /* -d seconds, 0 = none */
	bool root_pid, root_tid;   /* --pid / --tid */
	unsigned ring_pages;	   /* data pages per CPU ring, power of two; 0: sized from
				    * the frequency, record size and CPUs */
	struct kp_symbolizer *sym; /* borrowed */
	/* for the run's metadata (profile/run_meta.h), borrowed: kprof's
	 * version and its own command line */
	const char *version;
	char *const *kprof_argv;
	size_t kprof_argc;
};

struct kp_session_stats {
	uint64_t samples;
	uint64_t lost;	      /* samples the kernel dropped (LOST records) */
	uint64_t lost_stacks; /* of the switch events' stacks only (their own rings) */
	uint64_t throttled;   /* THROTTLE records */
	uint64_t bad_records; /* malformed records skipped */
	double seconds;	      /* recording time */
	size_t nprocs;	      /* processes seen */
	const char *event;    /* the event actually sampled */
	uint64_t freq, period;
	unsigned ring_pages; /* data pages per CPU ring */
	/* user stacks */
	uint64_t unwound;	       /* unwound from a stack snapshot (dwarf, auto) */
	uint64_t ends[KP_UNWIND_NEND]; /* how those ended, by enum kp_unwind_end */
	uint64_t spliced;	       /* auto: continued past the snapshot with the
					* kernel's frame-pointer chain */
	uint64_t truncated;	       /* stacks shown with a [truncated] frame */
	/* why, each truncated stack once (they sum to truncated): where the
	 * snapshot's unwinding stopped, unless the kernel's chain went on
	 * from there (ends counts those too) ... */
	uint64_t cut_by[KP_UNWIND_NEND];
	uint64_t fp_cut;		       /* ... or where the frame-pointer chain was cut */
	uint64_t leaf_repaired;		       /* fp: the leaf's caller recovered from CFI */
	uint64_t unwind_ns_p50, unwind_ns_p99; /* cost of one unwind (dwarf, auto) */
	uint64_t unwind_ns_total;	       /* of all of them */
	struct kp_unwind_stats tables;	       /* unwind tables read */
	struct kp_hsframes_stats java;	       /* HotSpot JVMs read (docs/java.md) */
	struct kp_sym_stats sym;	       /* the symbolizer's (jitdumps read) */
	struct kp_node_stats node;	       /* node's JavaScript frames named live */
	/* the command held at its exit (profiler/target.h) */
	bool exit_held;	       /* it was, and its last samples named then */
	int exit_hold_err;     /* -errno: it could not be (ptrace refused) */
	bool exit_let_go;      /* it was, until its signals came too fast */
	uint64_t exit_hold_ns; /* how long it waited there */
	/* off-CPU waits (--off-cpu, --wall; profiler/offcpu.h) */
	const char *switch_event; /* "sched:sched_switch", "context-switches", or
				   * "bpf:sched_switch" (timed in the kernel) */
	uint64_t rate_skipped;	  /* bpf: switches out not chosen (past --switch-freq) */
	uint64_t lost_chosen;	  /* bpf: chosen waits whose time the full ring lost */
	uint64_t lost_waits;	  /* bpf: waits lost with a full ring at a thread's exit */
	uint64_t lost_waits_ns;	  /* and their time */
	uint64_t storm_windows;	  /* windows of 0.1 s sampled in frequency mode */
	struct kp_offcpu_stats off;
};

#endif
