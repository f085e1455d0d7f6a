/* What the files of profiler/ share about a session (private to the
 * folder): its state, and the steps session.c's loop calls. session.c
 * owns the lifecycle and the loop, dispatch.c reads the rings and hands
 * each record, in time order, to what it concerns, sample.c turns one
 * sample into a location stack of the profile. */
#ifndef KP_PROFILER_PROFILERP_H
#define KP_PROFILER_PROFILERP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/utsname.h>
#include <time.h>

#include "profile/run_meta.h"
#include "profiler/evlist.h"
#include "profiler/offcpu.h"
#include "profiler/offcpu_bpf.h"
#include "profiler/perf_record.h"
#include "profiler/proctab.h"
#include "profiler/recqueue.h"
#include "profiler/session_types.h"
#include "profiler/target.h"
#include "procfs/tracefs.h"
#include "util/diag.h"
#include "util/strtab.h"
#include "util/u64map.h"

/* Unwind cost histogram: 100 ns buckets up to 1 ms, then one bucket. */
#define COST_BUCKETS 10001

struct kp_session {
	struct kp_session_opts opts;
	struct kp_evlist ev; /* the events, their rings, the attr as opened */
	struct kp_perf_record_layout layout;
	int epfd, sigfd;
	sigset_t oldmask;
	bool have_target;
	bool ended_target; /* kprof stopped the command at -d's end */
	struct kp_target target;

	struct kp_strtab *strings;
	struct kp_proctab *procs;
	struct kp_profile *prof;       /* what the recording becomes */
	struct kp_run_meta meta;       /* the run, written into prof's metadata */
	int *cpus;		       /* the CPUs sampled (meta.cpus) */
	struct utsname uts;	       /* the machine (meta.host, meta.kernel) */
	struct kp_u64map synth_failed; /* pids /proc could not describe */
	/* kernel addresses of a switch stack's leaf: 1 + whether they are the
	 * tracepoint's dispatch, not the scheduler (sample.c) */
	struct kp_u64map dispatch_frames;

	struct kp_recqueue queue; /* records read, not yet processed */
	uint64_t flush_before;	  /* start time of the previous round */
	uint64_t read_start;	  /* start time of this round */
	pid_t (*exits)[2];	  /* EXIT records (pid, tid) not applied yet */
	size_t nexits, exits_cap, exits_ready;

	struct kp_unwinder *unw;
	struct kp_hsframes *hs; /* HotSpot JVMs' Java frames (hotspot_frames.c) */
	struct kp_node *node;	/* JavaScript frames named live (node.c) */
	size_t notes_told;	/* of ev.notes, those kp_session_notes returned */
	uint32_t *cost;		/* unwind cost histogram, COST_BUCKETS */
	uint64_t ncost;

	struct kp_offcpu *offcpu;  /* --off-cpu, --wall: the threads' waits (offcpu.c) */
	struct kp_offcpu_bpf *bpf; /* the waits timed in the kernel (offcpu_bpf.c) */
	bool sideband_wide;	   /* bpf --off-cpu: side-band events on every task */
	struct kp_u64map tree;	   /* then: the targets' pids and their children's */
	int bpf_err;		   /* why not (bpf_why), when tried */
	struct kp_diag bpf_why;
	struct kp_tracefs_field switch_state; /* sched_switch's prev_state in its raw record */
	bool have_switch_state;
	/* the switch event's stacks at a storm (session.c bound_stacks) */
	uint64_t window_switches; /* switches out read in this window */
	uint64_t stack_budget;	  /* a window's share */
	double window_end;	  /* seconds into the recording */
	bool storm;		  /* the frequency-mode event sampling */
	char event_desc[160]; /* the events, for the run's metadata: "cpu-clock,sched:sched_switch"
			       */

	struct kp_session_stats st;
	struct timespec t_start;
	/* the time axis: t_start in ns, and the Unix time then (ns) */
	uint64_t mono0_ns, unix0_ns;
	bool stop;
	bool ended; /* kp_session_end has run */
	int rounds;
	double last_progress;
	unsigned nstop_signals; /* stop signals read (session.c, handle_signals) */

	/* where the current window began (kprof --every; window.c): seconds
	 * into the recording, the Unix time, the counts then */
	double cut_t0;
	uint64_t cut_unix_ns;
	uint64_t cut_samples0, cut_lost0, cut_throttled0;
	unsigned cut_index;
	double last_keep_reading; /* kp_window_keep_reading */
};

/* Reads every ring once and processes what every ring has passed, in time
 * order (final: everything, and the exits left). dispatch.c */
void kp_dispatch_round(struct kp_session *s, bool final);
/* The two halves of a round: reading every ring into the queue, then
 * processing what every ring has passed. dispatch.c */
void kp_dispatch_read(struct kp_session *s);
void kp_dispatch_flush(struct kp_session *s, bool final);
/* The second half of a round ended now: processes what every ring was
 * read past (kp_dispatch_read), but for the last margin_ns, not a round
 * later (a held command's samples, named while its memory is there: at
 * its exit stop, margin 0, it writes nothing more). dispatch.c */
void kp_dispatch_flush_now(struct kp_session *s, uint64_t margin_ns);
/* The BPF program's records (bpf_records.c): its ring read into the
 * queue; one record, from the queue, processed (a stack or a thread's
 * last waits, to the off-CPU table); the end: the waits the program still
 * holds, open ones ended at end (CLOCK_MONOTONIC), processed at once; and
 * then its counts added to the session's stats (st.off copied first). */
void kp_bpf_records_read(struct kp_session *s);
void kp_bpf_record(struct kp_session *s, const struct perf_event_header *hdr);
void kp_bpf_records_finish(struct kp_session *s, uint64_t end);
void kp_bpf_records_count(struct kp_session *s);

/* The symbolizer object behind mapping m (of the process table), registered
 * the first time it is needed; 0 for anonymous memory and the like.
 * sample.c */
uint32_t kp_sample_map_object(struct kp_session *s, struct kp_mapping *m);

/* Adds sample smp to the profile: its kernel and user stacks (unwound as
 * the call-graph mode says) as locations, under its root. sample.c */
void kp_sample_add(struct kp_session *s, const struct kp_sample *smp);
/* A record's time (the events' clock, ns) in ms from the profile's time
 * origin (0 before it). */
uint32_t kp_sample_ms(const struct kp_session *s, uint64_t time);

/* The location stack of smp, root first, into locs (room for
 * KP_SESSION_MAX_FRAMES + 1) and its root; returns its length. sample.c */
size_t kp_sample_stack(struct kp_session *s, const struct kp_sample *smp, uint32_t *locs,
		       struct kp_profile_root *root);
/* The same for a stack sampled where a thread left a CPU: its kernel
 * frames begin at the scheduler, without the tracepoint's dispatch
 * (__traceiter_sched_switch when more than one probe listens, a BPF
 * program and its bpf_trace_run) above it. sample.c */
size_t kp_sample_switch_stack(struct kp_session *s, const struct kp_sample *smp, uint32_t *locs,
			      struct kp_profile_root *root);

#endif
