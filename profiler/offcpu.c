/* Off-CPU waits (see offcpu.h and docs/offcpu.md). */
#include <stdlib.h>
#include <string.h>

#include "profile/wait.h"
#include "profiler/offcpu.h"
#include "util/u64map.h"
#include "util/xalloc.h"

enum { CLASS_BLOCKED = 0, CLASS_PREEMPTED, NCLASSES };

struct stack {
	uint32_t *locs; /* root first */
	size_t n, cap;
	struct kp_profile_root root;
	uint8_t kind; /* enum kp_wait_kind; KP_WAIT_NKINDS: from the switch record */
	bool valid;
	bool placeholder; /* no stack sampled yet: "[no stack sampled]" */
	bool fresh;	  /* not yet counted as a sample */
};

struct thread {
	struct stack staged;		 /* sampled, its SWITCH out record not seen yet */
	struct stack by_class[NCLASSES]; /* the last sampled at a switch of each class */
	struct stack chosen;		 /* BPF: a chosen wait's stack, its time not yet seen */
	uint64_t out_time;
	double open_weight; /* what the open wait's time is multiplied by (0: not charged) */
	uint64_t skipped;   /* switches out left unsampled by the frequency mode since
			     * the thread's last sample, which its next one stands for */
	pid_t pid, tid;
	bool pending; /* switched out, not yet in */
	bool preempt;
	bool dead; /* exited: its last switch out is no wait */
};

struct kp_offcpu {
	struct kp_offcpu_opts opts;
	struct kp_offcpu_stats st;
	struct kp_u64map index; /* tid -> 1 + slot in threads */
	struct thread *threads;
	size_t nthreads, cap;
	size_t *free_slots;
	size_t nfree, free_cap;
	/* the sampling's changes of mode not yet reached by the records */
	struct {
		uint64_t time;
		bool storm;
	} * modes;
	size_t nmodes, modes_cap;
	bool storm; /* the mode at the records' time */
	uint32_t markers[KP_WAIT_NKINDS];
	uint32_t no_stack; /* the location "[no stack sampled]" */
};

struct kp_offcpu *kp_offcpu_new(const struct kp_offcpu_opts *opts)
{
	struct kp_offcpu *o = kp_xcalloc(1, sizeof(*o));

	o->opts = *opts;
	kp_u64map_init(&o->index);
	for (int k = 0; k < KP_WAIT_NKINDS; k++) {
		const char *name = kp_wait_frame_name((enum kp_wait_kind)k);

		o->markers[k] =
			kp_profile_named_location(opts->prof, name, strlen(name), KP_FRAME_USER);
	}
	o->no_stack =
		kp_profile_named_location(opts->prof, "[no stack sampled]", 18, KP_FRAME_USER);
	return o;
}

const struct kp_offcpu_stats *kp_offcpu_stats(const struct kp_offcpu *o)
{
	return &o->st;
}

static struct thread *thread_of(struct kp_offcpu *o, pid_t tid, bool create)
{
	uint64_t slot;

	if (kp_u64map_get(&o->index, (uint64_t)tid, &slot))
		return &o->threads[slot - 1];
	if (!create)
		return NULL;
	if (o->nfree) {
		slot = o->free_slots[--o->nfree];
	} else {
		kp_xgrow(&o->threads, &o->cap, o->nthreads + 1, sizeof(*o->threads));
		slot = o->nthreads++;
	}
	memset(&o->threads[slot], 0, sizeof(o->threads[slot]));
	o->threads[slot].tid = tid;
	kp_u64map_put(&o->index, (uint64_t)tid, slot + 1);
	return &o->threads[slot];
}

/* The thread's state from sched_switch's raw record: the kernel's
 * task-state bits (S 1, D 2, T 4, t 8, ..., I 0x80), 0 for runnable, and
 * 0x100 ("+": preempted) beside them. */
static enum kp_wait_kind kind_of_state(const struct kp_offcpu *o, const unsigned char *raw,
				       uint32_t raw_size)
{
	uint64_t state = 0;
	unsigned off = o->opts.state_off, size = o->opts.state_size;

	if (!size || size > 8 || !raw || (uint64_t)off + size > raw_size)
		return KP_WAIT_NKINDS;	 /* not said: from the switch record */
	memcpy(&state, raw + off, size); /* little-endian */
	if (state == 0 || (state & 0x100))
		return KP_WAIT_PREEMPTED;
	if (state & 0x1)
		return KP_WAIT_SLEEPING;
	if (state & 0x2)
		return KP_WAIT_UNINTERRUPTIBLE;
	return KP_WAIT_OTHER;
}

/* st holds locs[0..n) (copied) under root, a sampled stack not counted yet. */
static void stack_fill(struct stack *st, const uint32_t *locs, size_t n,
		       const struct kp_profile_root *root)
{
	kp_xgrow(&st->locs, &st->cap, n ? n : 1, sizeof(*st->locs));
	memcpy(st->locs, locs, n * sizeof(*locs));
	st->n = n;
	st->root = *root;
	st->valid = true;
	st->fresh = true;
}

static void stack_copy(struct stack *dst, const struct stack *src)
{
	stack_fill(dst, src->locs, src->n, &src->root);
	dst->kind = src->kind;
	dst->valid = src->valid;
	dst->fresh = src->fresh;
	dst->placeholder = false;
}

void kp_offcpu_stack(struct kp_offcpu *o, pid_t tid, const uint32_t *locs, size_t n,
		     const struct kp_profile_root *root, const unsigned char *raw,
		     uint32_t raw_size)
{
	struct thread *t;
	struct stack *st;

	if (tid == 0)
		return; /* the idle task */
	o->st.stacks++;
	t = thread_of(o, tid, true);
	st = &t->staged;
	stack_fill(st, locs, n, root);
	st->kind = (uint8_t)kind_of_state(o, raw, raw_size);
}

/* The values of one wait of ns nanoseconds (profile/wait.h's types). */
static void wait_values(const struct kp_offcpu *o, uint64_t ns, bool fresh, kp_count *v)
{
	memset(v, 0, KP_PROFILE_MAX_VALUES * sizeof(*v));
	if (o->opts.wall) {
		v[0] = v[3] = ns; /* wall, off-cpu */
		v[1] = fresh;
	} else {
		v[0] = ns;
		v[1] = fresh;
	}
}

/* Charges a wait of ns nanoseconds that ended at end, multiplied by
 * weight (what the sampling made it stand for), to st under the marker of
 * kind; on the time axis, the wait itself (its ms, not its weight). */
static void charge(struct kp_offcpu *o, const struct thread *t, struct stack *st, unsigned kind,
		   uint64_t ns, double weight, uint64_t end)
{
	uint32_t id;
	kp_count values[KP_PROFILE_MAX_VALUES];
	double est = (double)ns * weight;
	uint64_t v = est >= 1.8e19 ? UINT64_MAX : (uint64_t)(est + 0.5);

	if (st->placeholder) {
		o->st.nostack++;
		o->st.nostack_ns += v;
	}
	o->st.charged++;
	o->st.charged_ns += v;
	if (!v)
		return;
	/* the marker after the stack, in the stack's own room */
	kp_xgrow(&st->locs, &st->cap, st->n + 1, sizeof(*st->locs));
	st->locs[st->n] = o->markers[kind < KP_WAIT_NKINDS ? kind : KP_WAIT_OTHER];
	wait_values(o, v, st->fresh, values);
	if (!kp_profile_add_id(o->opts.prof, &st->root, st->locs, st->n + 1, values, &id))
		return;
	st->fresh = false;
	if (o->opts.ms_of) {
		uint64_t span = (ns + 500000u) / 1000000u;

		/* its last ms: the one holding its last nanosecond */
		kp_profile_add_span(o->opts.prof, id, o->opts.ms_of(o->opts.arg, end ? end - 1 : 0),
				    span ? (span > UINT32_MAX ? UINT32_MAX : (uint32_t)span) : 1,
				    (uint32_t)t->tid);
	}
}

/* A wait charged with no stack of its own to go on (a stack its ring
 * lost, a switch whose sample the kernel dropped before any stack of its
 * class was sampled on t): its time stays on the thread, under "[no stack
 * sampled]". */
static void placeholder_stack(struct kp_offcpu *o, const struct thread *t, struct stack *st)
{
	kp_xgrow(&st->locs, &st->cap, 1, sizeof(*st->locs));
	st->locs[0] = o->no_stack;
	st->n = 1;
	st->root.comm = o->opts.comm_of ? o->opts.comm_of(o->opts.arg, t->pid, t->tid) : 0;
	st->root.pid = o->opts.root_pid || o->opts.root_tid ? (uint32_t)t->pid : 0;
	st->root.tid = o->opts.root_tid ? (uint32_t)t->tid : 0;
	st->kind = t->preempt ? KP_WAIT_PREEMPTED : KP_WAIT_BLOCKED;
	st->valid = st->placeholder = true;
	st->fresh = false;
}

/* A wait of thread t ended at end (the thread came back, or the recording
 * ended): it is counted, and a sampled one charged to the stack of its
 * class, its time multiplied by what the sample stands for. */
static void end_wait(struct kp_offcpu *o, struct thread *t, uint64_t end)
{
	struct stack *st = &t->by_class[t->preempt ? CLASS_PREEMPTED : CLASS_BLOCKED];
	uint64_t ns = 0;

	t->pending = false;
	if (end < t->out_time)
		o->st.clock_skew++; /* records out of order by more than a round */
	else
		ns = end - t->out_time;
	if (ns < o->opts.min_wait_ns) {
		o->st.short_waits++;
		return;
	}
	o->st.waits++;
	o->st.ns += ns;
	if (!t->open_weight)
		return;
	if (!st->valid)
		placeholder_stack(o, t, st);
	charge(o, t, st, st->kind, ns, t->open_weight, end);
}

void kp_offcpu_sampling(struct kp_offcpu *o, uint64_t time, bool storm)
{
	kp_xgrow(&o->modes, &o->modes_cap, o->nmodes + 1, sizeof(*o->modes));
	o->modes[o->nmodes].time = time;
	o->modes[o->nmodes].storm = storm;
	o->nmodes++;
}

/* The sampling's mode at time: the changes up to it applied. */
static bool storm_at(struct kp_offcpu *o, uint64_t time)
{
	size_t i = 0;

	while (i < o->nmodes && o->modes[i].time <= time)
		o->storm = o->modes[i++].storm;
	if (i) {
		memmove(o->modes, o->modes + i, (o->nmodes - i) * sizeof(*o->modes));
		o->nmodes -= i;
	}
	return o->storm;
}

void kp_offcpu_switch(struct kp_offcpu *o, pid_t pid, pid_t tid, uint64_t time, bool out,
		      bool preempt)
{
	struct thread *t;
	struct stack *st;
	bool storm;

	if (tid == 0)
		return; /* the idle task */
	t = thread_of(o, tid, out);
	if (!t || t->dead)
		return; /* in, never seen out: off CPU since before the recording */
	storm = storm_at(o, time);
	if (!out) {
		if (t->pending)
			end_wait(o, t, time);
		return;
	}
	if (t->pending)
		o->st.unpaired++; /* its in record was lost: the wait is unknown */
	t->pending = true;
	t->preempt = preempt;
	t->out_time = time;
	t->pid = pid;
	st = &t->by_class[preempt ? CLASS_PREEMPTED : CLASS_BLOCKED];
	if (t->staged.valid) {
		/* the sample taken at this switch (just before its record): the
		 * wait's own stack, its time counted for itself and for the
		 * switches the frequency mode left out since the thread's last
		 * sample (what the sample's period should say, and in practice
		 * does not: docs/offcpu.md) */
		if (t->staged.kind == KP_WAIT_NKINDS ||
		    (t->staged.kind == KP_WAIT_PREEMPTED) != preempt)
			t->staged.kind = preempt ? KP_WAIT_PREEMPTED : KP_WAIT_BLOCKED;
		stack_copy(st, &t->staged);
		t->staged.valid = false;
		t->open_weight = 1 + (double)t->skipped;
		t->skipped = 0;
		return;
	}
	o->st.unsampled++;
	if (storm) {
		/* the frequency mode left it out: the thread's next sample
		 * counts it */
		t->skipped++;
		t->open_weight = 0;
		return;
	}
	/* every switch was being sampled: the kernel dropped this one (a ring
	 * full while kprof was kept off the CPU); it goes on the last stack of
	 * its class, or under "[no stack sampled]", counted */
	o->st.dropped++;
	t->open_weight = 1;
	if (!st->valid)
		placeholder_stack(o, t, st);
}

void kp_offcpu_count_waits(struct kp_offcpu *o, const uint64_t *ns, const uint32_t *n)
{
	for (int k = 0; k < KP_WAIT_NKINDS; k++) {
		o->st.waits += n[k];
		o->st.ns += ns[k];
	}
}

void kp_offcpu_set_stack(struct kp_offcpu *o, pid_t tid, const uint32_t *locs, size_t n,
			 const struct kp_profile_root *root)
{
	struct thread *t;

	if (tid == 0)
		return;
	o->st.stacks++;
	t = thread_of(o, tid, true);
	/* one that is still valid had its time lost (counted in the kernel) */
	stack_fill(&t->chosen, locs, n, root);
	t->chosen.placeholder = false;
}

void kp_offcpu_chosen_wait(struct kp_offcpu *o, pid_t pid, pid_t tid, bool preempted, unsigned kind,
			   uint64_t ns, double weight, bool has_stack, uint64_t end)
{
	struct thread *t;
	struct stack *st;

	if (tid == 0 || !(weight >= 1) || weight > KP_OFFCPU_MAX_PERIOD)
		return; /* the idle task, or a weight no chance gives */
	t = thread_of(o, tid, true);
	t->pid = pid;
	t->preempt = preempted;
	st = &t->chosen;
	if (!has_stack || !st->valid) {
		/* its stack record the ring could not take */
		st = &t->by_class[preempted ? CLASS_PREEMPTED : CLASS_BLOCKED];
		if (!st->placeholder)
			placeholder_stack(o, t, st);
	}
	charge(o, t, st, kind, ns, weight, end);
	if (st == &t->chosen)
		st->valid = false;
}

/* Frees t's stacks (what they were charged is in the profile already). */
static void thread_free(struct thread *t)
{
	free(t->staged.locs);
	free(t->chosen.locs);
	for (int c = 0; c < NCLASSES; c++)
		free(t->by_class[c].locs);
}

void kp_offcpu_exit(struct kp_offcpu *o, pid_t tid)
{
	struct thread *t = thread_of(o, tid, false);

	/* system-wide, the exiting task's last switch out follows its EXIT */
	if (t) {
		t->dead = true;
		t->pending = false;
	}
}

void kp_offcpu_forget(struct kp_offcpu *o, pid_t tid)
{
	uint64_t slot;

	if (!kp_u64map_get(&o->index, (uint64_t)tid, &slot))
		return;
	thread_free(&o->threads[slot - 1]);
	memset(&o->threads[slot - 1], 0, sizeof(o->threads[slot - 1]));
	kp_u64map_del(&o->index, (uint64_t)tid);
	kp_xgrow(&o->free_slots, &o->free_cap, o->nfree + 1, sizeof(*o->free_slots));
	o->free_slots[o->nfree++] = slot - 1;
}

void kp_offcpu_finish(struct kp_offcpu *o, uint64_t end_ns)
{
	for (size_t i = 0; i < o->nthreads; i++) {
		if (o->threads[i].pending) {
			o->st.open_at_end++;
			end_wait(o, &o->threads[i], end_ns);
		}
	}
}

void kp_offcpu_free(struct kp_offcpu *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->nthreads; i++)
		thread_free(&o->threads[i]);
	kp_u64map_fini(&o->index);
	free(o->threads);
	free(o->free_slots);
	free(o->modes);
	free(o);
}
