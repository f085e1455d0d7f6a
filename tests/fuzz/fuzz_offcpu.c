/* Off-CPU waits (profiler/offcpu.h) from any sequence of what the records
 * can say: stacks, switches out and in of a few threads at times that may
 * go backwards (records lost, reordered, clocks that disagree), exits and
 * the end of the recording; and the BPF path's records: a chosen wait's
 * stack, its time and chance, the exact sums. Whatever the sequence: what
 * reaches the profile is exactly what the statistics say was charged, no
 * thread has more waiting time than the span of the times it was given
 * (waits never overlap), a wait is charged at most for itself and the
 * switches before it, a chosen one exactly its time over its chance, and
 * nothing leaks.
 *
 * Input: byte 0 (bit 0: --wall's values, bit 1: a minimum wait of 100),
 * then 4 bytes an operation: the kind (stack, out, preempted out, in,
 * exit, forget, finish, a chosen stack, a chosen wait, exact sums, the
 * sampling's mode), the thread (1 to 4), a time step (-32 to 223 after
 * the previous time), and the stack's leaf and its prev_state, the
 * chosen wait's kind, weight and whether it has its stack, or the
 * mode. */
#include <stdbool.h>

#include "fuzz.h"
#include "profile/wait.h"
#include "profiler/offcpu.h"

#define NTHREADS 4

static uint32_t comm_of(void *arg, pid_t pid, pid_t tid)
{
	(void)pid;
	(void)tid;
	return kp_profile_intern(arg, "t", 1);
}

/* record times as ms of the profile: a microsecond each, so that the
 * fuzzer's small steps make waits of many ms */
static uint32_t ms_of(void *arg, uint64_t time)
{
	(void)arg;
	return time / 1000 > UINT32_MAX ? UINT32_MAX : (uint32_t)(time / 1000);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t how = fuzz_byte(&in);
	struct kp_profile *prof = kp_profile_new();
	struct kp_offcpu_opts opts = {.prof = prof,
				      .wall = how & 1,
				      .min_wait_ns = how & 2 ? 100 : 0,
				      .state_off = 4,
				      .state_size = 8,
				      .root_tid = true,
				      .comm_of = comm_of,
				      .ms_of = ms_of,
				      .arg = prof};
	struct kp_offcpu *o;
	uint64_t t = 1000, lo = UINT64_MAX, hi = 0, ns, charged, chosen_ns = 0, summed = 0;
	kp_count total = 0;
	uint32_t leaves[4];
	size_t off;

	kp_wait_value_types(prof, (how & 1) != 0);
	kp_profile_time_start(prof, 1);
	off = (size_t)kp_profile_find_value(prof, KP_VALUE_OFFCPU);
	for (uint32_t i = 0; i < 4; i++) {
		struct kp_loc l = {.addr = 0x1000 * (i + 1), .kind = KP_LOC_KERNEL};

		leaves[i] = kp_profile_location(prof, &l);
	}
	o = kp_offcpu_new(&opts);
	while (in.n >= 4) {
		uint8_t op = fuzz_byte(&in) % 11, arg;
		pid_t tid = (pid_t)(fuzz_byte(&in) % NTHREADS) + 1;
		int step = (int)fuzz_byte(&in) - 32;

		arg = fuzz_byte(&in);
		t = step < 0 && t < (uint64_t)-step ? 0 : t + (uint64_t)(int64_t)step;
		if ((op >= 1 && op <= 3) || op == 6) { /* the switch records' times */
			lo = t < lo ? t : lo;
			hi = t > hi ? t : hi;
		}
		switch (op) {
		case 0: {
			uint32_t locs[2] = {leaves[0], leaves[arg % 4]};
			struct kp_profile_root root = {.comm = comm_of(prof, 1, tid),
						       .tid = (uint32_t)tid};
			unsigned char raw[12] = {0};

			raw[4] = (unsigned char)(arg >> 2);
			kp_offcpu_stack(o, tid, locs, 2, &root, arg & 1 ? raw : NULL, sizeof(raw));
			break;
		}
		case 7: {
			uint32_t locs[2] = {leaves[0], leaves[arg % 4]};
			struct kp_profile_root root = {.comm = comm_of(prof, 1, tid),
						       .tid = (uint32_t)tid};

			kp_offcpu_set_stack(o, tid, locs, 2, &root);
			break;
		}
		case 8: {
			/* a weight of 2^-1 to 2^30 (refused out of 1 to 2^24) */
			double w = (double)(1u << (arg >> 3)) / 2;
			uint64_t wait = (uint64_t)(step + 32);

			kp_offcpu_chosen_wait(o, 1, tid, arg & 1, (arg >> 1) % KP_WAIT_NKINDS, wait,
					      w, arg & 4, t);
			if (w >= 1 && w <= KP_OFFCPU_MAX_PERIOD)
				chosen_ns += wait * (uint64_t)w;
			break;
		}
		case 9: {
			uint64_t sums[KP_WAIT_NKINDS] = {0};
			uint32_t n[KP_WAIT_NKINDS] = {0};

			sums[arg % KP_WAIT_NKINDS] = (uint64_t)(step + 32);
			n[arg % KP_WAIT_NKINDS] = 1;
			kp_offcpu_count_waits(o, sums, n);
			summed += (uint64_t)(step + 32);
			break;
		}
		case 10:
			kp_offcpu_sampling(o, t, arg & 1);
			break;
		case 1:
		case 2:
			kp_offcpu_switch(o, 1, tid, t, true, op == 2);
			break;
		case 3:
			kp_offcpu_switch(o, 1, tid, t, false, false);
			break;
		case 4:
			kp_offcpu_exit(o, tid);
			break;
		case 5:
			kp_offcpu_forget(o, tid);
			break;
		default:
			kp_offcpu_finish(o, t);
			break;
		}
	}
	ns = kp_offcpu_stats(o)->ns;
	charged = kp_offcpu_stats(o)->charged_ns;
	kp_offcpu_free(o);
	{
		/* each wait's event: in order, on a sample of the profile, its
		 * length from the origin on */
		size_t nev;
		const struct kp_profile_event *ev = kp_profile_events(prof, &nev);

		for (size_t i = 0; i < nev; i++)
			FUZZ_CHECK(ev[i].sample < kp_profile_nsamples(prof) && ev[i].span >= 1 &&
				   ev[i].span <= (uint64_t)ev[i].ms + 1 &&
				   (!i || ev[i].ms >= ev[i - 1].ms));
	}
	for (size_t i = 0; i < kp_profile_nsamples(prof); i++) {
		struct kp_profile_root root;
		const kp_count *values;
		size_t n;

		kp_profile_sample(prof, i, &root, &n, &values);
		FUZZ_CHECK(n >= 2); /* a stack, or [no stack sampled], and the marker */
		if (how & 1)
			FUZZ_CHECK(values[0] == values[off] && values[2] == 0);
		total += values[off];
	}
	FUZZ_CHECK(total == charged);
	/* the switch records' waits: exact, never overlapping, each charged
	 * for itself and at most the switches out before it (fewer than the
	 * operations); the chosen waits exactly their time times their weight;
	 * the kernel's sums counted as they are */
	FUZZ_CHECK(ns - summed <= (hi < lo ? 0 : NTHREADS * (hi - lo)));
	FUZZ_CHECK(charged - chosen_ns <= (ns - summed) * (size / 4 + 1));
	kp_profile_free(prof);
	return 0;
}
