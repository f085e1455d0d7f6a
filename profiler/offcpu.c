/* Off-CPU waits (see profilerP.h and docs/offcpu.md).
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
 * is sampled.
 *
 * Memory: per live thread, at most three stacks (the sample waiting for
 * its SWITCH out record, and one per class), freed when it exits. */
#include <stdlib.h>
#include <string.h>

#include "profile/wait.h"
#include "profiler/profilerP.h"
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
	uint64_t acc_ns;  /* waits attributed, not yet added to the profile */
	bool acc_fresh;	  /* and whether they count the sample */
};

struct thread {
	struct stack staged; /* sampled, its SWITCH out record not seen yet */
	struct stack by_class[NCLASSES];
	uint64_t out_time;
	pid_t pid, tid;
	bool pending; /* switched out, not yet in */
	bool preempt;
	bool dead; /* exited: its last switch out is no wait */
};

struct kp_offcpu {
	struct kp_u64map index; /* tid -> 1 + slot in threads */
	struct thread *threads;
	size_t nthreads, cap;
	size_t *free_slots;
	size_t nfree, free_cap;
	unsigned state_off, state_size; /* sched_switch's prev_state; size 0: none */
	uint32_t markers[KP_WAIT_NKINDS];
	uint32_t no_stack; /* the location "[no stack sampled]" */
};

static struct kp_offcpu *get(struct kp_session *s)
{
	struct kp_offcpu *o = s->offcpu;

	if (!o) {
		o = s->offcpu = kp_xcalloc(1, sizeof(*o));
		kp_u64map_init(&o->index);
		o->state_off = s->switch_state.offset;
		o->state_size = s->have_switch_state ? s->switch_state.size : 0;
		for (int k = 0; k < KP_WAIT_NKINDS; k++) {
			const char *name = kp_wait_frame_name((enum kp_wait_kind)k);

			o->markers[k] = kp_profile_named_location(s->prof, name, strlen(name),
								  KP_FRAME_USER);
		}
		o->no_stack =
			kp_profile_named_location(s->prof, "[no stack sampled]", 18, KP_FRAME_USER);
	}
	return o;
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
static enum kp_wait_kind kind_of_state(const struct kp_offcpu *o, const struct kp_sample *smp)
{
	uint64_t state = 0;

	if (!o->state_size || o->state_size > 8 || !smp->raw ||
	    (uint64_t)o->state_off + o->state_size > smp->raw_size)
		return KP_WAIT_NKINDS; /* not said: from the switch record */
	memcpy(&state, smp->raw + o->state_off, o->state_size); /* little-endian */
	if (state == 0 || (state & 0x100))
		return KP_WAIT_PREEMPTED;
	if (state & 0x1)
		return KP_WAIT_SLEEPING;
	if (state & 0x2)
		return KP_WAIT_UNINTERRUPTIBLE;
	return KP_WAIT_OTHER;
}

static void stack_copy(struct stack *dst, const struct stack *src)
{
	kp_xgrow(&dst->locs, &dst->cap, src->n ? src->n : 1, sizeof(*dst->locs));
	memcpy(dst->locs, src->locs, src->n * sizeof(*dst->locs));
	dst->n = src->n;
	dst->root = src->root;
	dst->kind = src->kind;
	dst->valid = src->valid;
	dst->fresh = src->fresh;
}

void kp_offcpu_sample(struct kp_session *s, const struct kp_sample *smp)
{
	struct kp_offcpu *o = get(s);
	uint32_t locs[KP_SESSION_MAX_FRAMES + 1];
	struct thread *t;
	struct stack *st;
	size_t n;

	if (smp->tid == 0)
		return; /* the idle task */
	s->st.switch_samples++;
	t = thread_of(o, (pid_t)smp->tid, true);
	st = &t->staged;
	n = kp_sample_stack(s, smp, locs, &st->root);
	kp_xgrow(&st->locs, &st->cap, n ? n : 1, sizeof(*st->locs));
	memcpy(st->locs, locs, n * sizeof(*locs));
	st->n = n;
	st->kind = (uint8_t)kind_of_state(o, smp);
	st->valid = true;
	st->fresh = true;
}

/* The values of one wait of ns nanoseconds (profile/wait.h's types). */
static void wait_values(const struct kp_session *s, uint64_t ns, bool fresh, kp_count *v)
{
	memset(v, 0, KP_PROFILE_MAX_VALUES * sizeof(*v));
	if (s->opts.mode == KP_SESSION_WALL) {
		v[0] = v[3] = ns; /* wall, off-cpu */
		v[1] = fresh;
	} else {
		v[0] = ns;
		v[1] = fresh;
	}
}

/* Adds what st holds to the profile: at a switch storm one stack stands
 * for thousands of waits, added once. */
static void flush_stack(struct kp_session *s, struct kp_offcpu *o, struct stack *st)
{
	uint32_t locs[KP_SESSION_MAX_FRAMES + 2];
	kp_count values[KP_PROFILE_MAX_VALUES];

	if (!st->valid || !st->acc_ns)
		return;
	memcpy(locs, st->locs, st->n * sizeof(*locs));
	locs[st->n] = o->markers[st->kind];
	wait_values(s, st->acc_ns, st->acc_fresh, values);
	kp_profile_add(s->prof, &st->root, locs, st->n + 1, values);
	st->acc_ns = 0;
	st->acc_fresh = false;
}

/* A wait before any stack of its class was sampled on t (at a switch
 * storm, or system-wide where the switch event counts every task's
 * switches): its time stays on the thread, under "[no stack sampled]". */
static void placeholder_stack(struct kp_session *s, struct kp_offcpu *o, const struct thread *t,
			      struct stack *st)
{
	const char *comm = kp_strtab_str(s->strings, kp_proctab_comm_of(s->procs, t->pid, t->tid));

	kp_xgrow(&st->locs, &st->cap, 1, sizeof(*st->locs));
	st->locs[0] = o->no_stack;
	st->n = 1;
	st->root.comm = kp_profile_intern(s->prof, comm, strlen(comm));
	st->root.pid = s->opts.root_pid || s->opts.root_tid ? (uint32_t)t->pid : 0;
	st->root.tid = s->opts.root_tid ? (uint32_t)t->tid : 0;
	st->kind = t->preempt ? KP_WAIT_PREEMPTED : KP_WAIT_BLOCKED;
	st->valid = st->placeholder = true;
	st->fresh = false;
}

/* A wait of thread t ended at end (the thread came back, or the recording
 * ended): its time goes to the stack of its class. */
static void end_wait(struct kp_session *s, struct kp_offcpu *o, struct thread *t, uint64_t end)
{
	struct stack *st = &t->by_class[t->preempt ? CLASS_PREEMPTED : CLASS_BLOCKED];
	uint64_t ns = 0;

	t->pending = false;
	if (end < t->out_time)
		s->st.clock_skew++; /* records out of order by more than a round */
	else
		ns = end - t->out_time;
	if (ns < s->opts.min_wait_ns) {
		s->st.waits_short++;
		return;
	}
	if (!st->valid)
		placeholder_stack(s, o, t, st);
	if (st->placeholder) {
		s->st.waits_nostack++;
		s->st.nostack_ns += ns;
	}
	st->acc_ns += ns;
	st->acc_fresh |= st->fresh;
	st->fresh = false;
	s->st.waits++;
	s->st.offcpu_ns += ns;
}

void kp_offcpu_switch(struct kp_session *s, const struct kp_sample_id *id,
		      const struct kp_switch *sw)
{
	struct kp_offcpu *o = get(s);
	struct thread *t;

	if (id->tid == 0)
		return; /* the idle task */
	t = thread_of(o, (pid_t)id->tid, sw->out);
	if (!t || t->dead)
		return; /* in, never seen out: off CPU since before the recording */
	if (!sw->out) {
		if (t->pending)
			end_wait(s, o, t, id->time);
		return;
	}
	if (t->pending)
		s->st.waits_unpaired++; /* its in record was lost: the wait is unknown */
	t->pending = true;
	t->preempt = sw->preempt;
	t->out_time = id->time;
	t->pid = (pid_t)id->pid;
	/* the sample taken at this switch (just before its record) becomes
	 * the stack of its class */
	if (t->staged.valid) {
		struct stack *st = &t->by_class[sw->preempt ? CLASS_PREEMPTED : CLASS_BLOCKED];

		if (t->staged.kind == KP_WAIT_NKINDS ||
		    (t->staged.kind == KP_WAIT_PREEMPTED) != sw->preempt)
			t->staged.kind = sw->preempt ? KP_WAIT_PREEMPTED : KP_WAIT_BLOCKED;
		flush_stack(s, o, st);
		stack_copy(st, &t->staged);
		st->placeholder = false;
		st->acc_ns = 0;
		st->acc_fresh = false;
		t->staged.valid = false;
	}
}

/* Frees t's stacks, adding what they hold to the profile when keep. */
static void thread_free(struct kp_session *s, struct kp_offcpu *o, struct thread *t, bool keep)
{
	for (int c = 0; c < NCLASSES && keep; c++)
		flush_stack(s, o, &t->by_class[c]);
	free(t->staged.locs);
	for (int c = 0; c < NCLASSES; c++)
		free(t->by_class[c].locs);
}

void kp_offcpu_exit(struct kp_session *s, pid_t tid)
{
	struct kp_offcpu *o = s->offcpu;
	struct thread *t = o ? thread_of(o, tid, false) : NULL;

	/* system-wide, the exiting task's last switch out follows its EXIT */
	if (t) {
		t->dead = true;
		t->pending = false;
	}
}

void kp_offcpu_forget(struct kp_session *s, pid_t tid)
{
	struct kp_offcpu *o = s->offcpu;
	uint64_t slot;

	if (!o || !kp_u64map_get(&o->index, (uint64_t)tid, &slot))
		return;
	thread_free(s, o, &o->threads[slot - 1], true);
	memset(&o->threads[slot - 1], 0, sizeof(o->threads[slot - 1]));
	kp_u64map_del(&o->index, (uint64_t)tid);
	kp_xgrow(&o->free_slots, &o->free_cap, o->nfree + 1, sizeof(*o->free_slots));
	o->free_slots[o->nfree++] = slot - 1;
}

void kp_offcpu_finish(struct kp_session *s, uint64_t end_ns)
{
	struct kp_offcpu *o = s->offcpu;

	if (!o)
		return;
	for (size_t i = 0; i < o->nthreads; i++) {
		if (o->threads[i].pending && end_ns) {
			s->st.waits_open++;
			end_wait(s, o, &o->threads[i], end_ns);
		}
		thread_free(s, o, &o->threads[i], end_ns != 0);
	}
	kp_u64map_fini(&o->index);
	free(o->threads);
	free(o->free_slots);
	free(o);
	s->offcpu = NULL;
}
