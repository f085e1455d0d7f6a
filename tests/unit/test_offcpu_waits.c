/* Off-CPU waits from switch records and sampled stacks (profiler/offcpu.h):
 * which stack a wait goes on and what it is charged (its time times the
 * switches its sample stands for; a chosen wait's time over its chance),
 * its kind, its event on the time axis, and
 * what happens when records are lost, out of order, or a thread exits. */
#include <stdint.h>
#include <string.h>

#include "kp_test.h"
#include "profile/wait.h"
#include "profiler/offcpu.h"

static struct kp_profile *prof;
static uint32_t loc_a, loc_b, loc_c;
static uint32_t (*ms_fn)(void *arg, uint64_t time); /* the next setup's ms_of */

static uint32_t comm_of(void *arg, pid_t pid, pid_t tid)
{
	(void)arg;
	(void)pid;
	(void)tid;
	return kp_profile_intern(prof, "prog", 4);
}

static struct kp_offcpu *setup(bool wall, uint64_t min_wait_ns)
{
	struct kp_offcpu_opts o = {.wall = wall,
				   .min_wait_ns = min_wait_ns,
				   .state_off = 8,
				   .state_size = 8,
				   .comm_of = comm_of,
				   .ms_of = ms_fn};
	struct kp_loc a = {.addr = 0x1000, .kind = KP_LOC_KERNEL};
	struct kp_loc b = {.addr = 0x2000, .kind = KP_LOC_KERNEL};
	struct kp_loc c = {.addr = 0x3000, .kind = KP_LOC_KERNEL};

	kp_profile_free(prof);
	prof = kp_profile_new();
	kp_wait_value_types(prof, wall);
	o.prof = prof;
	loc_a = kp_profile_location(prof, &a);
	loc_b = kp_profile_location(prof, &b);
	loc_c = kp_profile_location(prof, &c);
	return kp_offcpu_new(&o);
}

/* A stack sampled on tid: [a, leaf], raw record with prev_state state
 * at offset 8 (or none when state < 0). */
static void stack(struct kp_offcpu *o, pid_t tid, uint32_t leaf, long state)
{
	uint32_t locs[2] = {loc_a, leaf};
	struct kp_profile_root root = {.comm = kp_profile_intern(prof, "prog", 4)};
	unsigned char raw[16] = {0};
	uint64_t st = (uint64_t)state;

	memcpy(raw + 8, &st, 8);
	kp_offcpu_stack(o, tid, locs, 2, &root, state < 0 ? NULL : raw, 16);
}

/* The value v of the sample whose stack ends in (leaf, marker), 0 if none. */
static uint64_t value_of(uint32_t leaf, const char *marker, size_t v)
{
	for (size_t i = 0; i < kp_profile_nsamples(prof); i++) {
		struct kp_profile_root root;
		const kp_count *values;
		size_t n, nf;
		const uint32_t *locs = kp_profile_sample(prof, i, &root, &n, &values);
		const struct kp_profile_frame *fr;

		if (n < 2 || locs[n - 2] != leaf)
			continue;
		fr = kp_profile_frames(prof, locs[n - 1], &nf, NULL);
		if (fr &&
		    strcmp(kp_profile_str(prof, kp_profile_function_at(prof, fr->function)->name,
					  NULL),
			   marker) == 0)
			return (uint64_t)values[v];
	}
	return 0;
}

/* Each wait goes on the stack sampled at its own switch out; one whose
 * sample the kernel dropped while every switch was sampled (period 1) on
 * the last of its class, counted; the kind from prev_state. */
static void test_attribution(void)
{
	struct kp_offcpu *o = setup(false, 0);

	stack(o, 7, loc_b, 1); /* S */
	kp_offcpu_switch(o, 7, 7, 100, true, false);
	kp_offcpu_switch(o, 7, 7, 300, false, false);
	/* its sample dropped: on b */
	kp_offcpu_switch(o, 7, 7, 400, true, false);
	kp_offcpu_switch(o, 7, 7, 450, false, false);
	stack(o, 7, loc_c, 2); /* D */
	kp_offcpu_switch(o, 7, 7, 500, true, false);
	kp_offcpu_switch(o, 7, 7, 1500, false, false);
	CHECK_EQ_INT(kp_offcpu_stats(o)->dropped, 1);
	CHECK_EQ_INT(kp_offcpu_stats(o)->charged_ns, 1250);
	kp_offcpu_free(o);
	CHECK_EQ_INT(value_of(loc_b, "[off-cpu: sleeping]", 0), 250);
	CHECK_EQ_INT(value_of(loc_b, "[off-cpu: sleeping]", 1), 1); /* one stack sampled */
	CHECK_EQ_INT(value_of(loc_c, "[off-cpu: uninterruptible]", 0), 1000);
}

/* At a storm (the frequency mode) a switch without a sample is charged
 * nothing, not put on the previous stack: the thread's next sample stands
 * for it, its own wait charged its own time times 1 + the switches left
 * out since the thread's previous sample. When every switch is sampled
 * again, one without is a drop, on the last stack. The totals stay
 * exact. */
static void test_storm(void)
{
	struct kp_offcpu *o = setup(false, 0);
	const struct kp_offcpu_stats *st;

	kp_offcpu_sampling(o, 50, true);
	kp_offcpu_sampling(o, 1600, false);
	stack(o, 7, loc_b, 1);
	kp_offcpu_switch(o, 7, 7, 100, true, false);
	kp_offcpu_switch(o, 7, 7, 200, false, false);
	kp_offcpu_switch(o, 7, 7, 300, true, false); /* not sampled */
	kp_offcpu_switch(o, 7, 7, 1300, false, false);
	kp_offcpu_switch(o, 7, 7, 1320, true, true); /* not sampled, preempted */
	kp_offcpu_switch(o, 7, 7, 1330, false, false);
	stack(o, 7, loc_c, 1); /* for itself and the two before */
	kp_offcpu_switch(o, 7, 7, 1400, true, false);
	kp_offcpu_switch(o, 7, 7, 1410, false, false);
	stack(o, 7, loc_a, 1); /* for itself */
	kp_offcpu_switch(o, 7, 7, 1500, true, false);
	kp_offcpu_switch(o, 7, 7, 1502, false, false);
	/* every switch sampled again: this one's sample was dropped */
	kp_offcpu_switch(o, 7, 7, 1700, true, false);
	kp_offcpu_switch(o, 7, 7, 1705, false, false);
	st = kp_offcpu_stats(o);
	CHECK_EQ_INT(st->waits, 6);
	CHECK_EQ_INT(st->ns, 1127);
	CHECK_EQ_INT(st->charged, 4);
	CHECK_EQ_INT(st->charged_ns, 100 + 30 + 2 + 5);
	CHECK_EQ_INT(st->unsampled, 3);
	CHECK_EQ_INT(st->dropped, 1);
	kp_offcpu_free(o);
	CHECK_EQ_INT(value_of(loc_b, "[off-cpu: sleeping]", 0), 100);
	CHECK_EQ_INT(value_of(loc_c, "[off-cpu: sleeping]", 0), 30);
	CHECK_EQ_INT(value_of(loc_a, "[off-cpu: sleeping]", 0), 7);
}

/* Preempted waits keep to preempted stacks; one with none yet goes under
 * [no stack sampled]; without prev_state, kinds come from the flag. */
static void test_classes(void)
{
	struct kp_offcpu *o = setup(false, 0);
	uint32_t no_stack = kp_profile_named_location(prof, "[no stack sampled]", 18, 0);
	const struct kp_offcpu_stats *st;

	stack(o, 7, loc_b, -1);
	kp_offcpu_switch(o, 7, 7, 100, true, false);
	kp_offcpu_switch(o, 7, 7, 200, false, false);
	kp_offcpu_switch(o, 7, 7, 300, true, true); /* preempted, no such stack yet */
	kp_offcpu_switch(o, 7, 7, 330, false, false);
	stack(o, 7, loc_c, -1);
	kp_offcpu_switch(o, 7, 7, 400, true, true);
	kp_offcpu_switch(o, 7, 7, 410, false, false);
	kp_offcpu_switch(o, 7, 7, 500, true, false); /* blocked: back to b */
	kp_offcpu_switch(o, 7, 7, 520, false, false);
	st = kp_offcpu_stats(o);
	CHECK_EQ_INT(st->waits, 4);
	CHECK_EQ_INT(st->nostack, 1);
	CHECK_EQ_INT(st->nostack_ns, 30);
	CHECK_EQ_INT(st->stacks, 2);
	CHECK_EQ_INT(st->dropped, 2);
	kp_offcpu_free(o);
	CHECK_EQ_INT(value_of(loc_b, "[off-cpu: blocked]", 0), 120);
	CHECK_EQ_INT(value_of(loc_c, "[off-cpu: preempted]", 0), 10);
	CHECK_EQ_INT(value_of(no_stack, "[off-cpu: preempted]", 0), 30);
}

/* Lost records, time going backwards, an exit, the end of the recording:
 * never a negative or an overlapping wait, each counted. */
static void test_bad_records(void)
{
	struct kp_offcpu *o = setup(true, 0);
	const struct kp_offcpu_stats *st;

	stack(o, 7, loc_b, 1);
	kp_offcpu_switch(o, 7, 7, 100, true, false);
	kp_offcpu_switch(o, 7, 7, 200, true, false); /* the in between was lost */
	kp_offcpu_switch(o, 7, 7, 260, false, false);
	kp_offcpu_switch(o, 7, 7, 300, true, false);
	kp_offcpu_switch(o, 7, 7, 250, false, false); /* ends before it began */
	kp_offcpu_switch(o, 7, 7, 270, false, false); /* in, none open: ignored */
	kp_offcpu_switch(o, 9, 9, 50, false, false);  /* in, never out: ignored */
	kp_offcpu_switch(o, 7, 7, 400, true, false);  /* open at the end */
	kp_offcpu_exit(o, 7);
	kp_offcpu_switch(o, 7, 7, 410, true, false); /* an exited task's last switch */
	stack(o, 8, loc_c, 1);
	kp_offcpu_switch(o, 8, 8, 600, true, false);
	kp_offcpu_finish(o, 1000);
	st = kp_offcpu_stats(o);
	CHECK_EQ_INT(st->unpaired, 1);
	CHECK_EQ_INT(st->clock_skew, 1);
	CHECK_EQ_INT(st->open_at_end, 1);
	CHECK_EQ_INT(st->waits, 3); /* 60, 0, 400 */
	CHECK_EQ_INT(st->ns, 460);
	CHECK_EQ_INT(st->charged_ns, 460);
	kp_offcpu_free(o);
	CHECK_EQ_INT(value_of(loc_b, "[off-cpu: sleeping]", 0), 60); /* wall */
	CHECK_EQ_INT(value_of(loc_b, "[off-cpu: sleeping]", 2), 0);  /* cpu */
	CHECK_EQ_INT(value_of(loc_b, "[off-cpu: sleeping]", 3), 60); /* off-cpu */
	CHECK_EQ_INT(value_of(loc_c, "[off-cpu: sleeping]", 0), 400);
}

/* Waits chosen in the kernel (the BPF program's records): a chosen wait
 * is charged its own time over its chance to the stack taken for it,
 * under its kind's marker, the sample counted once; one whose stack the
 * ring lost, or whose stack is gone, under [no stack sampled], counted;
 * a weight no chance gives is refused; the exact sums count in the totals
 * only. */
static void test_chosen(void)
{
	struct kp_offcpu *o = setup(true, 0);
	uint32_t no_stack = kp_profile_named_location(prof, "[no stack sampled]", 18, 0);
	uint32_t locs_b[2] = {loc_a, loc_b}, locs_c[2] = {loc_a, loc_c};
	struct kp_profile_root root = {.comm = kp_profile_intern(prof, "prog", 4)};
	uint64_t ns[KP_WAIT_NKINDS] = {0};
	uint32_t n[KP_WAIT_NKINDS] = {0};
	const struct kp_offcpu_stats *st;

	ns[KP_WAIT_SLEEPING] = 1000;
	n[KP_WAIT_SLEEPING] = 20;
	ns[KP_WAIT_PREEMPTED] = 54;
	n[KP_WAIT_PREEMPTED] = 3;
	kp_offcpu_count_waits(o, ns, n);
	kp_offcpu_set_stack(o, 7, locs_b, 2, &root);
	kp_offcpu_chosen_wait(o, 7, 7, false, KP_WAIT_SLEEPING, 100, 4.0, true, 0);
	/* its stack is used up: a second wait has none */
	kp_offcpu_chosen_wait(o, 7, 7, false, KP_WAIT_UNINTERRUPTIBLE, 5, 2.0, true, 0);
	kp_offcpu_set_stack(o, 7, locs_c, 2, &root);
	kp_offcpu_chosen_wait(o, 7, 7, true, KP_WAIT_PREEMPTED, 9, 1.0, true, 0);
	/* the ring lost its stack */
	kp_offcpu_chosen_wait(o, 7, 7, true, KP_WAIT_PREEMPTED, 3, 8.0, false, 0);
	kp_offcpu_chosen_wait(o, 7, 7, false, KP_WAIT_SLEEPING, 3, 0.5, false, 0);
	kp_offcpu_chosen_wait(o, 7, 7, false, KP_WAIT_SLEEPING, 3, 1e12, false, 0);
	st = kp_offcpu_stats(o);
	CHECK_EQ_INT(st->waits, 23);
	CHECK_EQ_INT(st->ns, 1054);
	CHECK_EQ_INT(st->charged, 4);
	CHECK_EQ_INT(st->charged_ns, 400 + 10 + 9 + 24);
	CHECK_EQ_INT(st->nostack, 2);
	CHECK_EQ_INT(st->nostack_ns, 34);
	CHECK_EQ_INT(st->stacks, 2);
	kp_offcpu_free(o);
	CHECK_EQ_INT(value_of(loc_b, "[off-cpu: sleeping]", 0), 400);
	CHECK_EQ_INT(value_of(loc_b, "[off-cpu: sleeping]", 3), 400); /* off-cpu */
	CHECK_EQ_INT(value_of(loc_b, "[off-cpu: sleeping]", 1), 1);   /* the stack counted once */
	CHECK_EQ_INT(value_of(no_stack, "[off-cpu: uninterruptible]", 0), 10);
	CHECK_EQ_INT(value_of(loc_c, "[off-cpu: preempted]", 0), 9);
	CHECK_EQ_INT(value_of(no_stack, "[off-cpu: preempted]", 0), 24);
}

/* The estimate's expected share per stack is the true one: a thread that
 * alternates one wait of 5000 with fifty of 100 (50.5% of its waiting in
 * the short ones), each chosen with chance 1/16 by a fixed sequence of
 * pseudo-random draws (so the test cannot flake), has about that share
 * in the profile; the old rule (a stack stands for the waits after it)
 * gave the long wait's stack almost every short wait too. */
static void test_unbiased(void)
{
	struct kp_offcpu *o = setup(false, 0);
	uint32_t locs_b[2] = {loc_a, loc_b}, locs_c[2] = {loc_a, loc_c};
	struct kp_profile_root root = {.comm = kp_profile_intern(prof, "prog", 4)};
	uint64_t x = 88172645463325252ULL, longw, shortw;
	double share;

	for (int cycle = 0; cycle < 4000; cycle++)
		for (int i = 0; i < 51; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			if (x % 16)
				continue;
			kp_offcpu_set_stack(o, 7, i ? locs_c : locs_b, 2, &root);
			kp_offcpu_chosen_wait(o, 7, 7, false, KP_WAIT_SLEEPING, i ? 100 : 5000,
					      16.0, true, 0);
		}
	kp_offcpu_free(o);
	longw = value_of(loc_b, "[off-cpu: sleeping]", 0);
	shortw = value_of(loc_c, "[off-cpu: sleeping]", 0);
	share = (double)shortw / (double)(longw + shortw);
	CHECK(share > 0.48 && share < 0.53);
}

/* --min-wait leaves short waits out, counted. */
static void test_min_wait(void)
{
	struct kp_offcpu *o = setup(false, 100);

	stack(o, 7, loc_b, 1);
	kp_offcpu_switch(o, 7, 7, 100, true, false);
	kp_offcpu_switch(o, 7, 7, 150, false, false);
	kp_offcpu_switch(o, 7, 7, 200, true, false);
	kp_offcpu_switch(o, 7, 7, 400, false, false);
	CHECK_EQ_INT(kp_offcpu_stats(o)->short_waits, 1);
	kp_offcpu_free(o);
	CHECK_EQ_INT(value_of(loc_b, "[off-cpu: sleeping]", 0), 200);
	kp_profile_free(prof);
	prof = NULL;
}

static uint32_t ms_of(void *arg, uint64_t time)
{
	(void)arg;
	return (uint32_t)(time / 1000000u);
}

/* On the time axis each wait charged is an event of the ms it lasted,
 * ending where it ended, on its thread (not its weight: a chosen wait
 * of 5 ms charged 4 times is 5 ms long). */
static void test_time(void)
{
	struct kp_offcpu *o;
	const struct kp_profile_event *ev;
	uint32_t locs[2];
	struct kp_profile_root root = {0};
	size_t n;

	ms_fn = ms_of;
	o = setup(false, 0);
	ms_fn = NULL;
	kp_profile_time_start(prof, 1);
	stack(o, 7, loc_b, 1);
	kp_offcpu_switch(o, 7, 7, 1000000000u, true, false);
	kp_offcpu_switch(o, 7, 7, 3000000000u, false, false);
	locs[0] = loc_a, locs[1] = loc_c;
	root.comm = kp_profile_intern(prof, "prog", 4);
	kp_offcpu_set_stack(o, 9, locs, 2, &root);
	kp_offcpu_chosen_wait(o, 9, 9, false, KP_WAIT_SLEEPING, 5000000u, 4.0, true, 4000000000u);
	/* shorter than a ms: 1 ms */
	stack(o, 7, loc_b, 1);
	kp_offcpu_switch(o, 7, 7, 4100000000u, true, false);
	kp_offcpu_switch(o, 7, 7, 4100200000u, false, false);
	kp_offcpu_free(o);
	ev = kp_profile_events(prof, &n);
	CHECK_EQ_INT(n, 3);
	if (n != 3)
		return;
	CHECK_EQ_INT(ev[0].ms, 2999);
	CHECK_EQ_INT(ev[0].span, 2000);
	CHECK_EQ_INT(ev[0].tid, 7);
	CHECK_EQ_INT(ev[1].ms, 3999);
	CHECK_EQ_INT(ev[1].span, 5);
	CHECK_EQ_INT(ev[1].tid, 9);
	CHECK_EQ_INT(ev[2].ms, 4100);
	CHECK_EQ_INT(ev[2].span, 1);
	CHECK_EQ_INT(value_of(loc_c, "[off-cpu: sleeping]", 0), 20000000);
}

KP_TEST_MAIN(test_attribution, test_storm, test_classes, test_bad_records, test_chosen,
	     test_unbiased, test_time, test_min_wait)
