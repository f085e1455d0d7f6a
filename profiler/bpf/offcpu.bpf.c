/* The in-kernel half of kprof --off-cpu and --wall's wait timing
 * (docs/offcpu.md, "Timing in the kernel"): compiled with clang -target
 * bpf at build time (profiler/CMakeLists.txt), embedded in kprof and
 * loaded by profiler/offcpu_bpf.c.
 *
 * At every switch (tp_btf/sched_switch) it times the waits of the target
 * threads and adds each to its thread's running sum for the wait's class
 * (blocked or preempted) and kind: the exact totals, written only with
 * other records. Where a target thread leaves the CPU, the wait is chosen
 * with a chance fixed before its length is known (1 while the CPU's
 * switches come no faster than --switch-freq allows, else that rate over
 * the CPU's recent one: draw()); a chosen wait has its stack record written then
 * (registers, kernel frames, a copy of the user stack) and its own time
 * when it ends, which kprof charges to that stack divided by the chance:
 * an unbiased estimate of each stack's waiting time (docs/offcpu.md,
 * "Which waits have a stack"). A thread's exit, and the end of the
 * recording (the task iterator), write what is left. The cost per switch
 * is two array lookups (task storage where a slot is taken), a clock read
 * and, past --switch-freq, a random number; the ring sees a few thousand
 * records a second at most.
 *
 * Task fields are read by direct loads, which the verifier allows on the
 * tracepoints' BTF-typed pointers: no helper call at a switch but the
 * draw past --switch-freq. Only the kernel fields it reads are declared,
 * with CO-RE relocations, so it builds without the kernel's headers and
 * loads on any kernel with BTF (5.15 on: bpf_task_pt_regs). */
#include <stdbool.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "profiler/offcpu_bpf_abi.h"

char LICENSE[] SEC("license") = "GPL";

struct task_struct {
	int pid, tgid;
	unsigned int __state;
	unsigned int flags;
} __attribute__((preserve_access_index));

struct task_struct___old { /* before 5.14 */
	long state;
} __attribute__((preserve_access_index));

struct seq_file;
struct bpf_iter_meta {
	struct seq_file *seq;
} __attribute__((preserve_access_index));
struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
} __attribute__((preserve_access_index));

#define PF_KTHREAD     0x00200000
#define TASK_NOLOAD    0x0400
#define TARGET_UNKNOWN 0
#define TARGET_YES     1
#define TARGET_NO      2

const volatile struct kp_bpf_config config = {};
struct kp_bpf_live live = {};

struct thread {
	__u64 tid;   /* whose slot this is (0: free; 64 bits for the BPF
		      * compare-and-swap); unused in task storage */
	__u8 target; /* TARGET_* */
	__u8 kind;   /* of the open wait */
	__u8 cls;
	__u8 has_stack; /* the open wait's stack record was written */
	__u32 chance;	/* the open wait was chosen with this chance (0: not) */
	__u64 out_ns;	/* off CPU since (0: on CPU, or not seen leaving) */
	struct kp_bpf_waits w[KP_BPF_NCLASSES];
	struct kp_bpf_chosen pend; /* a chosen wait's time the ring could not
				    * take as it ended: for the next record */
};

/* A thread's state lives in the slot of its tid's low bits when that is
 * free (an array lookup, which the verifier inlines: at a switch storm
 * half the cost of the task storage's helper calls), else in task
 * storage. */
#define NSLOTS (1u << 15)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NSLOTS);
	__type(key, __u32);
	__type(value, struct thread);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread);
} threads SEC(".maps");

/* -p PID (tgids) and -t TID (tids): filled by kprof before attaching. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} target_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} target_tids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22); /* resized by kprof */
} records SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kp_bpf_cpu);
} cpu SEC(".maps");

/* A stack record is too big for the BPF stack: the exit and iterator
 * records are built here. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kp_bpf_waits_rec);
} scratch SEC(".maps");

static __always_inline struct kp_bpf_cpu *this_cpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpu, &zero);
}

static __always_inline void count(__u32 which, __u64 n)
{
	struct kp_bpf_cpu *c = this_cpu();

	if (c && which < KP_BPF_NSTATS)
		c->stats[which] += n;
}

static __always_inline bool is_target(struct task_struct *t)
{
	__u32 tgid = t->tgid, tid = t->pid;

	if (tid == 0)
		return false; /* the idle tasks */
	if (config.all_tasks)
		return true;
	if (tgid == live.exec_tgid)
		return false; /* not before its exec (sched_process_exec) */
	return bpf_map_lookup_elem(&target_tgids, &tgid) || bpf_map_lookup_elem(&target_tids, &tid);
}

static __always_inline void thread_init(struct thread *th, __u8 target)
{
	th->target = target;
	th->out_ns = 0;
	th->chance = 0;
	th->pend.chance = 0;
	__builtin_memset(th->w, 0, sizeof(th->w));
}

/* Thread t's state: its slot, or its task storage. With create, a thread
 * seen for the first time gets one (and whether it is a target is decided
 * then); set: it is made a target whatever was decided. NULL for a thread
 * that is not a target (or has no state and none was to be made). */
static __always_inline struct thread *thread_state(struct task_struct *t, bool create, bool set)
{
	__u32 tid = t->pid, k = tid & (NSLOTS - 1);
	struct thread *th = bpf_map_lookup_elem(&slots, &k), *ts;
	__u64 old;
	__u8 target;

	if (!th || !tid)
		return NULL;
	if (th->tid == tid)
		goto found;
	ts = bpf_task_storage_get(&threads, t, 0, 0);
	if (ts) {
		th = ts;
		goto found;
	}
	if (!create)
		return NULL;
	target = set || is_target(t) ? TARGET_YES : TARGET_NO;
	/* a free slot, or one a thread that is no target holds, is taken */
	old = th->tid;
	if ((old == 0 || th->target != TARGET_YES) &&
	    __sync_val_compare_and_swap(&th->tid, old, (__u64)tid) == old) {
		thread_init(th, target);
		return target == TARGET_YES ? th : NULL;
	}
	ts = bpf_task_storage_get(&threads, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ts)
		return NULL;
	thread_init(ts, target);
	return target == TARGET_YES ? ts : NULL;
found:
	if (set && th->target != TARGET_YES)
		thread_init(th, TARGET_YES);
	return th->target == TARGET_YES ? th : NULL;
}

/* A new task's slot, if a thread of the same tid held it, freed (task
 * storage is the task's own). */
static __always_inline void thread_gone(struct task_struct *t)
{
	__u32 tid = t->pid, k = tid & (NSLOTS - 1);
	struct thread *th = bpf_map_lookup_elem(&slots, &k);

	if (th && th->tid == tid && tid)
		__sync_val_compare_and_swap(&th->tid, (__u64)tid, 0);
}

/* The kind of wait of a task leaving the CPU (profile/wait.h): the state
 * bits as sched_switch's prev_state reports them. */
static __always_inline __u8 kind_of(struct task_struct *t, bool preempt)
{
	unsigned long state;

	if (bpf_core_field_exists(t->__state))
		state = t->__state;
	else
		state = BPF_CORE_READ((struct task_struct___old *)t, state);
	if (preempt || state == 0)
		return KP_BPF_KIND_PREEMPTED;
	if (state & 1)
		return KP_BPF_SLEEPING;
	if ((state & 2) && !(state & TASK_NOLOAD))
		return KP_BPF_UNINTERRUPTIBLE;
	return KP_BPF_OTHER; /* stopped, traced, idle, parked */
}

/* The chance that the wait beginning now on this CPU has its stack, fixed
 * before its length is known (KP_BPF_P_ONE: 1), drawn; 0: not chosen.
 * It is the rate --switch-freq allows a CPU (one stack each
 * stack_cost_ns) over this CPU's rate of switches out of targets, at most
 * 1: below that rate every wait has its stack, above it the stacks stay
 * near it. The rate is measured over windows of WINDOW_NS or
 * WINDOW_SWITCHES, whichever ends first, and one chance holds for a whole
 * window: all the waits of a storm have about the same chance, where a
 * chance that swung low after each burst of short waits would leave the
 * long ones after it with a low one (the variance of the estimate grows
 * with 1 / chance). The rate is the mean of the last window's and the one
 * before (a storm's start stacks some 2 x WINDOW_SWITCHES before the
 * chance falls to its rate); no window counts slower than one stack's
 * cost a switch. */
#define WINDOW_NS	50000000
#define WINDOW_SWITCHES 256

static __always_inline __u32 draw(struct kp_bpf_cpu *b, __u64 now)
{
	__u64 cost = config.stack_cost_ns, gap, p;

	if (!cost)
		return KP_BPF_P_ONE;
	if (!b->gap_ns) {
		b->gap_ns = cost;
		b->win_start = now;
	}
	b->win_n++;
	if (now - b->win_start >= WINDOW_NS || b->win_n >= WINDOW_SWITCHES) {
		gap = (now - b->win_start) / b->win_n;
		if (gap > cost)
			gap = cost;
		b->gap_ns = (b->gap_ns + gap) / 2;
		b->win_start = now;
		b->win_n = 0;
	}
	p = b->gap_ns * KP_BPF_P_ONE / cost;
	if (p < 1)
		p = 1;
	if (p >= KP_BPF_P_ONE)
		return KP_BPF_P_ONE;
	if ((bpf_get_prandom_u32() & (KP_BPF_P_ONE - 1)) >= p)
		return 0;
	return (__u32)p;
}

static __always_inline void head(struct kp_bpf_rec_head *h, __u32 type, __u32 size,
				 struct task_struct *t, __u64 now, __u8 cls)
{
	h->type = type;
	h->misc = 0;
	h->size = size;
	h->time = now;
	h->pid = t->tgid;
	h->tid = t->pid;
	h->cpu = bpf_get_smp_processor_id();
	h->cls = cls;
}

static __always_inline void submit(void *rec)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_query(&records, BPF_RB_AVAIL_DATA) >= config.wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(rec, flags);
}

/* The stack where prev leaves the CPU for a chosen wait, with the exact
 * sums its class held since its previous record. When the ring is full
 * the sums stay, and the wait's time is charged without its stack
 * (counted). */
static __always_inline void write_stack(void *ctx, struct kp_bpf_cpu *c, struct task_struct *prev,
					struct thread *th, __u64 now, __u8 kind, __u8 cls)
{
	struct kp_bpf_stack_rec *r;
	long n;
	__u64 sp;
	__u32 i;

	r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);
	if (!r) {
		c->stats[KP_BPF_ST_LOST]++;
		return;
	}
	th->has_stack = 1;
	r->chance = th->chance;
	/* the previous chosen wait's time, if it could not be written: it
	 * comes before this stack replaces that wait's */
	__builtin_memcpy(&r->carried, &th->pend, sizeof(r->carried));
	th->pend.chance = 0;
	__builtin_memcpy(&r->flushed, &th->w[cls & 1], sizeof(r->flushed));
	__builtin_memset(&th->w[cls & 1], 0, sizeof(th->w[0]));
	r->kind = kind;
	r->nuser = 0;
	r->user_regs = 0;
	r->stack_size = 0;
	/* past the program and its tracepoint dispatcher (bpf_trace_run4):
	 * from __schedule on, as perf's switch samples begin */
	n = bpf_get_stack(ctx, r->ips, sizeof(r->ips), 2 & BPF_F_SKIP_FIELD_MASK);
	r->nkernel = n > 0 ? (__u32)n / 8 : 0;
	/* a user task's registers, its pt_regs from r15 to sp in one read */
	if (!(prev->flags & PF_KTHREAD) &&
	    !bpf_probe_read_kernel(r->regs, sizeof(r->regs), (void *)bpf_task_pt_regs(prev))) {
		sp = r->regs[KP_BPF_REG_SP];
		r->user_regs = 1;
		/* whole chunks, as far as the stack is mapped */
		for (i = 0; config.copy_stack && i < KP_BPF_STACK_MAX / KP_BPF_STACK_CHUNK; i++) {
			if (bpf_probe_read_user(&r->stack[i * KP_BPF_STACK_CHUNK],
						KP_BPF_STACK_CHUNK,
						(void *)(sp + i * KP_BPF_STACK_CHUNK)))
				break;
		}
		r->stack_size = (__u64)i * KP_BPF_STACK_CHUNK;
		/* -g auto goes on with it past the copy's end: needed only when
		 * the stack is deeper than the copy (walking a no-frame-pointer
		 * program's rbp chain costs at every stack) */
		if (config.user_chain &&
		    (!config.copy_stack || i == KP_BPF_STACK_MAX / KP_BPF_STACK_CHUNK)) {
			n = bpf_get_stack(ctx, r->user_ips, sizeof(r->user_ips), BPF_F_USER_STACK);
			r->nuser = n > 0 ? (__u32)n / 8 : 0;
		}
	}
	head(&r->h, KP_BPF_REC_STACK,
	     (__u32)(__builtin_offsetof(struct kp_bpf_stack_rec, stack) + r->stack_size), prev, now,
	     cls);
	c->stats[KP_BPF_ST_STACKS]++;
	submit(r);
}

_Static_assert(sizeof(struct kp_bpf_chosen_rec) <= sizeof(struct kp_bpf_waits_rec),
	       "the iterator builds either record in scratch");

/* A chosen wait of t ended at now after ns: its time, for its stack.
 * When the ring is full it waits in th->pend for the thread's next stack
 * record or its exit (one at a time: a second is lost, counted). */
static __always_inline void write_chosen(struct task_struct *t, struct thread *th, __u64 now,
					 __u64 ns)
{
	struct kp_bpf_chosen_rec *r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);
	struct kp_bpf_chosen c = {
		.ns = ns,
		.chance = th->chance,
		.kind = th->kind,
		.cls = th->cls,
		.has_stack = th->has_stack,
	};

	if (!r) {
		if (th->pend.chance)
			count(KP_BPF_ST_LOST_CHOSEN, 1);
		else
			th->pend = c;
		return;
	}
	head(&r->h, KP_BPF_REC_CHOSEN, sizeof(*r), t, now, th->cls);
	r->c = c;
	submit(r);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct thread *th;
	__u64 now = bpf_ktime_get_ns();

	th = thread_state(prev, true, false);
	if (th) {
		__u8 kind = kind_of(prev, preempt);
		__u8 cls = kind == KP_BPF_KIND_PREEMPTED ? KP_BPF_PREEMPTED : KP_BPF_BLOCKED;
		struct kp_bpf_cpu *c = this_cpu();

		if (!c)
			return 0;
		/* out again without an in between: the kernel's tracepoint
		 * does that now and then under load (6.18: a few in thousands
		 * of switches); the wait is unknown and starts again */
		if (th->out_ns)
			c->stats[KP_BPF_ST_UNPAIRED]++;
		th->out_ns = now;
		th->kind = kind;
		th->cls = cls;
		th->has_stack = 0;
		th->chance = draw(c, now);
		if (th->chance) {
			c->stats[KP_BPF_ST_CHOSEN]++;
			write_stack(ctx, c, prev, th, now, kind, cls);
		} else {
			c->stats[KP_BPF_ST_RATE]++;
		}
	}
	th = thread_state(next, false, false);
	if (th && th->out_ns) {
		__u64 ns = now - th->out_ns;
		struct kp_bpf_waits *w = &th->w[th->cls & 1];
		__u32 k = th->kind;

		th->out_ns = 0;
		if (ns < config.min_wait_ns) {
			count(KP_BPF_ST_SHORT, 1);
		} else if (k < KP_BPF_NKINDS) {
			w->ns[k] += ns;
			w->n[k]++;
			if (th->chance)
				write_chosen(next, th, now, ns);
		}
		th->chance = 0;
	}
	return 0;
}

/* The command becomes a target at its exec, not before (kprof holds it
 * on a pipe until the events exist). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p)
{
	if (!live.exec_tgid || p->tgid != live.exec_tgid)
		return 0;
	live.exec_tgid = 0;
	thread_state(p, true, true);
	return 0;
}

/* A target's children and threads are targets (a command, -p). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	thread_gone(child);
	if (config.follow && thread_state(parent, true, false))
		thread_state(child, true, true);
	return 0;
}

static __always_inline __u64 sum_n(const struct kp_bpf_waits *w)
{
	return (__u64)w->n[0] + w->n[1] + w->n[2] + w->n[3] + w->n[4];
}

/* A thread's last waits, before its storage goes with it. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	struct thread *th = thread_state(p, false, false);
	__u64 now = bpf_ktime_get_ns();
	__u32 c;

	if (!th)
		return 0;
	if (th->pend.chance) {
		struct kp_bpf_chosen_rec *r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);

		if (r) {
			head(&r->h, KP_BPF_REC_CHOSEN, sizeof(*r), p, now, th->pend.cls);
			r->c = th->pend;
			submit(r);
		} else {
			count(KP_BPF_ST_LOST_CHOSEN, 1);
		}
		th->pend.chance = 0;
	}
	for (c = 0; c < KP_BPF_NCLASSES; c++) {
		struct kp_bpf_waits_rec *r;

		if (!sum_n(&th->w[c]))
			continue;
		r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);
		if (!r) {
			const __u64 *ns = th->w[c].ns;

			count(KP_BPF_ST_LOST_WAITS, sum_n(&th->w[c]));
			count(KP_BPF_ST_LOST_NS, ns[0] + ns[1] + ns[2] + ns[3] + ns[4]);
			continue;
		}
		head(&r->h, KP_BPF_REC_WAITS, sizeof(*r), p, now, (__u8)c);
		__builtin_memcpy(&r->w, &th->w[c], sizeof(r->w));
		__builtin_memset(&th->w[c], 0, sizeof(th->w[c]));
		submit(r);
	}
	/* its last switch out is no wait; the slot is taken by the next
	 * thread that needs it, or freed at the fork of its tid's next task */
	th->target = TARGET_NO;
	return 0;
}

/* The end of the recording: every target thread's waits not yet written,
 * an open wait ended at end_ns, read by kprof from the iterator's fd. */
SEC("iter/task")
int flush_all(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct kp_bpf_waits_rec *r;
	struct thread *th;
	__u32 zero = 0, c;

	if (!t)
		return 0;
	th = thread_state(t, false, false);
	r = bpf_map_lookup_elem(&scratch, &zero);
	if (!th || !r)
		return 0;
	if (th->pend.chance) {
		struct kp_bpf_chosen_rec *cr = (void *)r;

		/* the scratch record is big enough for either */
		head(&cr->h, KP_BPF_REC_CHOSEN, sizeof(*cr), t, live.end_ns, th->pend.cls);
		cr->c = th->pend;
		bpf_seq_write(ctx->meta->seq, cr, sizeof(*cr));
		th->pend.chance = 0;
	}
	if (th->out_ns && live.end_ns > th->out_ns) {
		__u32 k = th->kind;
		__u64 ns = live.end_ns - th->out_ns;

		if (k < KP_BPF_NKINDS) {
			th->w[th->cls & 1].ns[k] += ns;
			th->w[th->cls & 1].n[k]++;
		}
		th->out_ns = 0;
		count(KP_BPF_ST_OPEN, 1);
		if (th->chance && k < KP_BPF_NKINDS && ns >= config.min_wait_ns) {
			struct kp_bpf_chosen_rec *cr = (void *)r;

			/* the scratch record is big enough for either */
			head(&cr->h, KP_BPF_REC_CHOSEN, sizeof(*cr), t, live.end_ns, th->cls);
			cr->c.ns = ns;
			cr->c.chance = th->chance;
			cr->c.kind = (__u8)k;
			cr->c.cls = th->cls;
			cr->c.has_stack = th->has_stack;
			cr->c.pad = 0;
			bpf_seq_write(ctx->meta->seq, cr, sizeof(*cr));
		}
		th->chance = 0;
	}
	for (c = 0; c < KP_BPF_NCLASSES; c++) {
		if (!sum_n(&th->w[c]))
			continue;
		head(&r->h, KP_BPF_REC_WAITS, sizeof(*r), t, live.end_ns, (__u8)c);
		__builtin_memcpy(&r->w, &th->w[c], sizeof(r->w));
		__builtin_memset(&th->w[c], 0, sizeof(th->w[c]));
		bpf_seq_write(ctx->meta->seq, r, sizeof(*r));
	}
	return 0;
}
