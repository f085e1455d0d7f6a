/* Record dispatch and ordering (see profilerP.h): the rings read in
 * rounds, their records queued by time and processed once every ring has
 * been read past them, each handed to the process table, the unwinder's
 * caches, the counts or sample.c. */
#include <errno.h>
#include <linux/types.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile/wait.h"
#include "profiler/offcpu_bpf_abi.h"
#include "profiler/profilerP.h"
#include "profiler/ring.h"
#include "symbolize/symbolize.h"
#include "unwind/regs.h"
#include "unwind/unwind.h"
#include "util/xalloc.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A stack where a thread left the CPU: for the waits that follow. */
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

/* The BPF program's registers (unwind/regs.h's KP_UNWIND_REGS_MASK, in
 * bit order) as the session's layout asks for them. */
static void bpf_regs(const struct kp_session *s, const __u64 *bpf, uint64_t *out)
{
	uint64_t want = s->layout.sample_regs_user, in[KP_BPF_NREGS];
	size_t n = 0;

	for (size_t i = 0; i < KP_BPF_NREGS; i++)
		in[i] = bpf[i];
	for (int reg = 0; reg < 64; reg++) {
		uint64_t v = 0;

		if (!(want & (1ULL << reg)))
			continue;
		kp_regs_get(in, KP_UNWIND_REGS_MASK, reg, &v);
		out[n++] = v;
	}
}

/* The program writes profile/wait.h's kinds by number. */
_Static_assert(KP_BPF_NKINDS == KP_WAIT_NKINDS && KP_WAIT_SLEEPING == 0 &&
		       KP_WAIT_UNINTERRUPTIBLE == 1 && KP_WAIT_PREEMPTED == 2 && KP_WAIT_OTHER == 4,
	       "offcpu.bpf.c's kinds");

static void add_waits(struct kp_session *s, const struct kp_bpf_rec_head *h,
		      const struct kp_bpf_waits *w)
{
	uint64_t ns[KP_BPF_NKINDS];
	uint32_t n[KP_BPF_NKINDS];

	for (int k = 0; k < KP_BPF_NKINDS; k++) {
		ns[k] = w->ns[k];
		n[k] = w->n[k];
	}
	kp_offcpu_add_waits(s->offcpu, (pid_t)h->pid, (pid_t)h->tid, h->cls == KP_BPF_PREEMPTED, ns,
			    n);
}

/* A stack the BPF program sampled where a thread left a CPU, with the
 * waits of its class since the previous one: as a sample with the
 * kernel's frames, the user registers and the stack copy (or, -g fp, the
 * user frames), unwound as any other. */
static void bpf_stack(struct kp_session *s, const struct perf_event_header *hdr)
{
	const struct kp_bpf_stack_rec *r = (const void *)hdr;
	size_t head = offsetof(struct kp_bpf_stack_rec, stack);
	uint64_t ips[2 * KP_BPF_MAX_IPS + 3], regs[64];
	uint32_t locs[KP_SESSION_MAX_FRAMES + 1];
	struct kp_profile_root root;
	struct kp_sample smp = {0};
	size_t n = 0;

	if (hdr->size < head || r->stack_size > (uint64_t)(hdr->size - head) ||
	    r->nkernel > KP_BPF_MAX_IPS || r->nuser > KP_BPF_MAX_IPS ||
	    r->h.cls >= KP_BPF_NCLASSES) {
		s->st.bad_records++;
		return;
	}
	ips[n++] = (uint64_t)PERF_CONTEXT_KERNEL;
	for (uint32_t i = 0; i < r->nkernel; i++)
		ips[n++] = r->ips[i];
	if (r->user_regs) {
		ips[n++] = (uint64_t)PERF_CONTEXT_USER;
		if (!r->nuser)
			ips[n++] = r->regs[8]; /* the user ip (KP_PERF_REG_IP) */
		for (uint32_t i = 0; i < r->nuser; i++)
			ips[n++] = r->user_ips[i];
		bpf_regs(s, r->regs, regs);
		smp.regs_abi = PERF_SAMPLE_REGS_ABI_64;
		smp.regs = regs;
		smp.nregs = (uint64_t)__builtin_popcountll(s->layout.sample_regs_user);
		smp.stack = r->stack;
		smp.stack_size = smp.stack_dyn_size = r->stack_size;
	}
	smp.pid = r->h.pid;
	smp.tid = r->h.tid;
	smp.time = r->h.time;
	smp.cpu = r->h.cpu;
	smp.ips = ips;
	smp.nr = n;
	smp.ip = r->nkernel ? r->ips[0] : 0;
	add_waits(s, &r->h, &r->flushed);
	n = kp_sample_switch_stack(s, &smp, locs, &root);
	kp_offcpu_set_stack(s->offcpu, (pid_t)r->h.tid, r->h.cls == KP_BPF_PREEMPTED, locs, n,
			    &root);
}

/* A thread's waits not yet written, at its exit or the end. */
static void bpf_waits(struct kp_session *s, const struct perf_event_header *hdr)
{
	const struct kp_bpf_waits_rec *r = (const void *)hdr;

	if (hdr->size < sizeof(*r) || r->h.cls >= KP_BPF_NCLASSES) {
		s->st.bad_records++;
		return;
	}
	add_waits(s, &r->h, &r->w);
}

static void process_record(struct kp_session *s, const struct perf_event_header *hdr)
{
	struct kp_perf_record rec;
	int err;

	if (hdr->type == KP_BPF_REC_STACK || hdr->type == KP_BPF_REC_WAITS) {
		if (s->offcpu)
			(hdr->type == KP_BPF_REC_STACK ? bpf_stack : bpf_waits)(s, hdr);
		return;
	}
	err = kp_perf_record_parse(&s->layout, hdr, &rec);

	if (err == -ENOTSUP)
		return;
	if (err < 0) {
		s->st.bad_records++;
		return;
	}
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
		if (rec.comm.exec)
			kp_unwind_forget(s->unw, (pid_t)rec.comm.pid);
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
		/* the symbolizer first: it reads the process's jitdump to its
		 * end, asking the table which of its code is JIT code */
		if (s->exits[i][0] == s->exits[i][1])
			kp_sym_process_exit(s->opts.sym, s->exits[i][0]);
		if (kp_proctab_exit(s->procs, s->exits[i][0], s->exits[i][1]))
			kp_unwind_forget(s->unw, s->exits[i][0]);
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

/* A record of the BPF program's ring into the queue, by its time. */
static void queue_bpf(void *arg, const void *data, size_t size)
{
	struct kp_session *s = arg;
	const struct kp_bpf_rec_head *h = data;
	void *at;

	if (size < sizeof(*h) || h->size < sizeof(*h) || h->size > size) {
		s->st.bad_records++;
		return;
	}
	at = kp_recqueue_reserve(&s->queue, h->size, h->time);
	memcpy(at, data, h->size);
	kp_recqueue_trim(&s->queue, h->size);
}

/* The end's records, after the last round: processed at once. */
static void process_bpf(void *arg, const void *data, size_t size)
{
	struct kp_session *s = arg;
	const struct kp_bpf_rec_head *h = data;

	if (size < sizeof(*h) || h->size < sizeof(*h) || h->size > size) {
		s->st.bad_records++;
		return;
	}
	process_record(s, data);
}

void kp_dispatch_bpf_finish(struct kp_session *s, uint64_t end)
{
	struct kp_offcpu_bpf_stats bst;

	kp_offcpu_bpf_finish(s->bpf, end, process_bpf, s);
	kp_offcpu_bpf_stats(s->bpf, &bst);
	s->st.lost_stacks += bst.lost;
	s->st.rate_skipped = bst.rate;
	s->st.lost_waits = bst.lost_waits;
	s->st.lost_waits_ns = bst.lost_ns;
	s->bpf_short = bst.short_waits;
	s->bpf_open = bst.open;
	s->bpf_unpaired = bst.unpaired;
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
		kp_offcpu_bpf_read(s->bpf, queue_bpf, s);
}

void kp_dispatch_flush(struct kp_session *s, bool final)
{
	flush_queue(s, final ? UINT64_MAX : s->flush_before);
	s->flush_before = s->read_start;
	if (final)
		apply_exits(s, s->nexits);
}

void kp_dispatch_round(struct kp_session *s, bool final)
{
	kp_dispatch_read(s);
	kp_dispatch_flush(s, final);
}
