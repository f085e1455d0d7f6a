/* Record dispatch and ordering (see profilerP.h): the rings read in
 * rounds, their records queued by time and processed once every ring has
 * been read past them, each handed to the process table, the unwinder's
 * caches, the counts or sample.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profiler/offcpu_bpf_abi.h"
#include "profiler/hotspot_frames.h"
#include "profiler/node.h"
#include "profiler/profilerP.h"
#include "profiler/ring.h"
#include "symbolize/symbolize.h"
#include "unwind/unwind.h"
#include "util/xalloc.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A stack where a thread left the CPU: for the wait that begins there. */
static void switch_sample(struct kp_session *s, const struct kp_sample *smp)
{
	uint32_t locs[KP_SESSION_MAX_FRAMES + 1];
	struct kp_profile_root root;
	size_t n;

	if (!s->offcpu || smp->tid == 0)
		return;
	n = kp_sample_switch_stack(s, smp, locs, &root);
	kp_offcpu_stack(s->offcpu, (pid_t)smp->tid, locs, n, &root, smp->raw, smp->raw_size);
}

/* The side-band of every task (BPF --off-cpu of a command or -p): only
 * the targets' processes and their children's are described, as the
 * per-thread events they replace would have (profilerP.h, tree). */
static bool of_targets(struct kp_session *s, const struct kp_perf_record *rec)
{
	uint64_t v;
	uint32_t pid;

	switch (rec->type) {
	case PERF_RECORD_MMAP2:
		pid = rec->mmap2.pid;
		break;
	case PERF_RECORD_COMM:
		pid = rec->comm.pid;
		break;
	case PERF_RECORD_EXIT:
		pid = rec->task.pid;
		break;
	case PERF_RECORD_FORK:
		if (!kp_u64map_get(&s->tree, rec->task.ppid, &v))
			return false;
		kp_u64map_put(&s->tree, rec->task.pid, 1);
		return true;
	default:
		return true;
	}
	return kp_u64map_get(&s->tree, pid, &v);
}

static void process_record(struct kp_session *s, const struct perf_event_header *hdr)
{
	struct kp_perf_record rec;
	int err;

	if (hdr->type == KP_BPF_REC_STACK || hdr->type == KP_BPF_REC_WAITS ||
	    hdr->type == KP_BPF_REC_CHOSEN) {
		kp_bpf_record(s, hdr);
		return;
	}
	err = kp_perf_record_parse(&s->layout, hdr, &rec);

	if (err == -ENOTSUP)
		return;
	if (err < 0) {
		s->st.bad_records++;
		return;
	}
	if (s->sideband_wide && !of_targets(s, &rec))
		return;
	switch (rec.type) {
	case PERF_RECORD_SAMPLE:
		if (kp_evlist_extra_of(&s->ev, rec.sample.id))
			switch_sample(s, &rec.sample);
		else
			kp_sample_add(s, &rec.sample);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (s->offcpu)
			kp_offcpu_switch(s->offcpu, (pid_t)rec.id.pid, (pid_t)rec.id.tid,
					 rec.id.time, rec.sw.out, rec.sw.preempt);
		break;
	case PERF_RECORD_MMAP2:
		/* libunwind keeps rules by address: forget them when code that
		 * had rules may have changed (JITs map anonymous code all the
		 * time, which has none) */
		if (rec.mmap2.filename[0] == '/' ||
		    kp_proctab_overlaps_file(s->procs, (pid_t)rec.mmap2.pid, rec.mmap2.addr,
					     rec.mmap2.addr + rec.mmap2.len))
			kp_unwind_flush(s->unw, (pid_t)rec.mmap2.pid);
		kp_proctab_mmap(s->procs, (pid_t)rec.mmap2.pid, rec.mmap2.addr, rec.mmap2.len,
				rec.mmap2.pgoff, rec.mmap2.maj, rec.mmap2.min, rec.mmap2.ino,
				rec.mmap2.filename, rec.mmap2.build_id, rec.mmap2.build_id_size);
		break;
	case PERF_RECORD_COMM:
		if (rec.comm.exec) {
			kp_unwind_forget(s->unw, (pid_t)rec.comm.pid);
			kp_hsframes_forget(s->hs, (pid_t)rec.comm.pid);
			kp_node_forget(s->node, (pid_t)rec.comm.pid);
		}
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
		if (s->offcpu)
			kp_offcpu_exit(s->offcpu, (pid_t)rec.task.tid);
		kp_xgrow(&s->exits, &s->exits_cap, s->nexits + 1, sizeof(*s->exits));
		s->exits[s->nexits][0] = (pid_t)rec.task.pid;
		s->exits[s->nexits][1] = (pid_t)rec.task.tid;
		s->nexits++;
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		/* a switch event's stacks lost cost only where waits go */
		if (kp_evlist_extra_of(&s->ev, rec.id.id))
			s->st.lost_stacks += rec.lost;
		else
			s->st.lost += rec.lost;
		break;
	case PERF_RECORD_THROTTLE:
		s->st.throttled++;
		break;
	default:
		break;
	}
}

/* Forgets the first n exited tasks. A JIT process's map is only opened
 * and kept here (cheap); it is read after the window, when folding. */
static void apply_exits(struct kp_session *s, size_t n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n; i++) {
		if (s->offcpu)
			kp_offcpu_forget(s->offcpu, s->exits[i][1]);
		/* the symbolizer first: it checks the process's perf map while
		 * its path still leads to it (its jitdump is read on by the
		 * polls, within their budget) */
		if (s->exits[i][0] == s->exits[i][1])
			kp_sym_process_exit(s->opts.sym, s->exits[i][0]);
		if (kp_proctab_exit(s->procs, s->exits[i][0], s->exits[i][1])) {
			kp_unwind_forget(s->unw, s->exits[i][0]);
			kp_hsframes_forget(s->hs, s->exits[i][0]);
			kp_node_forget(s->node, s->exits[i][0]);
		}
	}
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
	/* jitdumps first: their loads (and unwinding info) come before the
	 * samples in the code they describe */
	kp_sym_jit_poll(s->opts.sym);
	apply_exits(s, s->exits_ready);
	s->exits_ready = s->nexits;
	kp_recqueue_flush(&s->queue, limit, process_queued, s);
}

void kp_dispatch_read(struct kp_session *s)
{
	s->read_start = now_ns();
	for (size_t i = 0; i < s->ev.nrings; i++) {
		struct kp_ring *r = &s->ev.rings[i].ring;
		const struct perf_event_header *hdr;

		if (!kp_ring_read_init(r))
			continue;
		/* a sample's stack copy is queued only as far as it is valid:
		 * the kernel reserves 8 KiB, a stack uses a fraction of it */
		while ((hdr = kp_ring_read_event(r))) {
			void *at;

			if ((hdr->type == PERF_RECORD_SWITCH ||
			     hdr->type == PERF_RECORD_SWITCH_CPU_WIDE) &&
			    (hdr->misc & PERF_RECORD_MISC_SWITCH_OUT))
				s->window_switches++;
			at = kp_recqueue_reserve(&s->queue, hdr->size,
						 kp_perf_record_time(&s->layout, hdr));
			kp_recqueue_trim(&s->queue, kp_perf_record_compact(&s->layout, hdr, at));
		}
		kp_ring_read_done(r);
	}
	if (s->bpf)
		kp_bpf_records_read(s);
}

void kp_dispatch_flush(struct kp_session *s, bool final)
{
	flush_queue(s, final ? UINT64_MAX : s->flush_before);
	s->flush_before = s->read_start;
	if (final)
		apply_exits(s, s->nexits);
}

void kp_dispatch_flush_now(struct kp_session *s, uint64_t margin_ns)
{
	uint64_t limit;

	/* every ring read past read_start: a record older than it is there,
	 * but one written on another CPU while its ring was being read (its
	 * time taken before): the margin leaves those time */
	limit = s->read_start > margin_ns ? s->read_start - margin_ns : 0;
	if (limit < s->flush_before)
		limit = s->flush_before;
	flush_queue(s, limit);
	s->flush_before = limit;
}

void kp_dispatch_round(struct kp_session *s, bool final)
{
	kp_dispatch_read(s);
	kp_dispatch_flush(s, final);
}
