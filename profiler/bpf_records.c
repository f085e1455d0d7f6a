/* The BPF program's records (offcpu_bpf.h, offcpu_bpf_abi.h) to the
 * session (see profilerP.h): read from its ring into the time-ordered
 * queue, then, in order, to the off-CPU table: a chosen wait's stack as a
 * sample, its time when it ended, and the exact sums of every wait. */
#include <linux/types.h>
#include <stddef.h>
#include <string.h>

#include "profile/wait.h"
#include "profiler/offcpu_bpf_abi.h"
#include "profiler/profilerP.h"
#include "unwind/regs.h"

/* Where each of perf's registers (unwind/regs.h) is in the program's copy
 * of struct pt_regs (offcpu_bpf_abi.h), -1 where it is not. */
static const int8_t pt_regs_index[] = {
	[KP_PERF_REG_AX] = 10, [KP_PERF_REG_BX] = 5,  [KP_PERF_REG_CX] = 11, [KP_PERF_REG_DX] = 12,
	[KP_PERF_REG_SI] = 13, [KP_PERF_REG_DI] = 14, [KP_PERF_REG_BP] = 4,  [KP_PERF_REG_SP] = 19,
	[KP_PERF_REG_IP] = 16, [9 ... 15] = -1,	      [KP_PERF_REG_R8] = 9,  [KP_PERF_REG_R9] = 8,
	[KP_PERF_REG_R10] = 7, [KP_PERF_REG_R11] = 6, [KP_PERF_REG_R12] = 3, [KP_PERF_REG_R13] = 2,
	[KP_PERF_REG_R14] = 1, [KP_PERF_REG_R15] = 0,
};

/* The program's registers as the session's layout asks for them: one per
 * bit of its mask, in bit order, as perf hands them over. */
static void bpf_regs(const struct kp_session *s, const __u64 *pt_regs, uint64_t *out)
{
	uint64_t want = s->layout.sample_regs_user;
	size_t n = 0;

	for (int reg = 0; reg < 64; reg++) {
		int at = reg < (int)sizeof(pt_regs_index) ? pt_regs_index[reg] : -1;

		if (want & (1ULL << reg))
			out[n++] = at >= 0 ? pt_regs[at] : 0;
	}
}

/* The program writes profile/wait.h's kinds by number. */
_Static_assert(KP_BPF_NKINDS == KP_WAIT_NKINDS && KP_BPF_SLEEPING == KP_WAIT_SLEEPING &&
		       KP_BPF_UNINTERRUPTIBLE == KP_WAIT_UNINTERRUPTIBLE &&
		       KP_BPF_KIND_PREEMPTED == KP_WAIT_PREEMPTED && KP_BPF_OTHER == KP_WAIT_OTHER,
	       "offcpu.bpf.c's kinds");

static void add_waits(struct kp_session *s, const struct kp_bpf_waits *w)
{
	uint64_t ns[KP_BPF_NKINDS];
	uint32_t n[KP_BPF_NKINDS];

	for (int k = 0; k < KP_BPF_NKINDS; k++) {
		ns[k] = w->ns[k];
		n[k] = w->n[k];
	}
	kp_offcpu_count_waits(s->offcpu, ns, n);
}

/* A chosen wait's own time, for its stack: its time over its chance
 * (none: chance 0). A bad one is counted. */
static void chosen(struct kp_session *s, const struct kp_bpf_rec_head *h,
		   const struct kp_bpf_chosen *c)
{
	if (!c->chance)
		return;
	if (c->chance > KP_BPF_P_ONE || c->kind >= KP_BPF_NKINDS || c->cls >= KP_BPF_NCLASSES) {
		s->st.bad_records++;
		return;
	}
	kp_offcpu_chosen_wait(s->offcpu, (pid_t)h->pid, (pid_t)h->tid, c->cls == KP_BPF_PREEMPTED,
			      c->kind, c->ns, (double)KP_BPF_P_ONE / c->chance, c->has_stack != 0,
			      h->time);
}

/* A stack the BPF program took where a thread left a CPU for a chosen
 * wait, with the exact sums of its class since its previous record: as a
 * sample with the kernel's frames, the user registers and the stack copy
 * (or, -g fp, the user frames), unwound as any other. */
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
			ips[n++] = r->regs[KP_BPF_REG_IP];
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
	add_waits(s, &r->flushed);
	/* the thread's previous chosen wait, for the stack this one replaces */
	chosen(s, &r->h, &r->carried);
	n = kp_sample_switch_stack(s, &smp, locs, &root);
	kp_offcpu_set_stack(s->offcpu, (pid_t)r->h.tid, locs, n, &root);
}

static void bpf_chosen(struct kp_session *s, const struct perf_event_header *hdr)
{
	const struct kp_bpf_chosen_rec *r = (const void *)hdr;

	if (hdr->size < sizeof(*r) || !r->c.chance) {
		s->st.bad_records++;
		return;
	}
	chosen(s, &r->h, &r->c);
}

/* A thread's waits not yet written, at its exit or the end. */
static void bpf_waits(struct kp_session *s, const struct perf_event_header *hdr)
{
	const struct kp_bpf_waits_rec *r = (const void *)hdr;

	if (hdr->size < sizeof(*r) || r->h.cls >= KP_BPF_NCLASSES) {
		s->st.bad_records++;
		return;
	}
	add_waits(s, &r->w);
}

void kp_bpf_record(struct kp_session *s, const struct perf_event_header *hdr)
{
	if (!s->offcpu)
		return;
	if (hdr->type == KP_BPF_REC_STACK)
		bpf_stack(s, hdr);
	else if (hdr->type == KP_BPF_REC_CHOSEN)
		bpf_chosen(s, hdr);
	else
		bpf_waits(s, hdr);
}

/* Is the ring's record data of size bytes whole as its head says? A bad
 * one is counted. */
static bool record_whole(struct kp_session *s, const void *data, size_t size)
{
	const struct kp_bpf_rec_head *h = data;

	if (size >= sizeof(*h) && h->size >= sizeof(*h) && h->size <= size)
		return true;
	s->st.bad_records++;
	return false;
}

/* A record of the ring into the queue, by its time. */
static void queue_bpf(void *arg, const void *data, size_t size)
{
	struct kp_session *s = arg;
	const struct kp_bpf_rec_head *h = data;
	void *at;

	if (!record_whole(s, data, size))
		return;
	at = kp_recqueue_reserve(&s->queue, h->size, h->time);
	memcpy(at, data, h->size);
	kp_recqueue_trim(&s->queue, h->size);
}

/* The end's records, after the last round: processed at once. */
static void process_bpf(void *arg, const void *data, size_t size)
{
	struct kp_session *s = arg;

	if (record_whole(s, data, size))
		kp_bpf_record(s, data);
}

void kp_bpf_records_finish(struct kp_session *s, uint64_t end)
{
	kp_offcpu_bpf_finish(s->bpf, end, process_bpf, s);
}

void kp_bpf_records_count(struct kp_session *s)
{
	struct kp_offcpu_bpf_stats bst;

	kp_offcpu_bpf_stats(s->bpf, &bst);
	s->st.lost_stacks += bst.lost;
	s->st.rate_skipped = bst.rate;
	s->st.lost_waits = bst.lost_waits;
	s->st.lost_waits_ns = bst.lost_ns;
	s->st.lost_chosen = bst.lost_chosen;
	s->st.off.short_waits += bst.short_waits;
	s->st.off.open_at_end += bst.open;
	s->st.off.unpaired += bst.unpaired;
}

void kp_bpf_records_read(struct kp_session *s)
{
	kp_offcpu_bpf_read(s->bpf, queue_bpf, s);
}
