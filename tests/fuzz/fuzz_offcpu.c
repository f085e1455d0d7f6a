/* Off-CPU waits (profiler/offcpu.h) from any sequence of what the records
 * can say: stacks, switches out and in of a few threads at times that may
 * go backwards (records lost, reordered, clocks that disagree), exits and
 * the end of the recording. Whatever the sequence: what reaches the
 * profile is exactly the waits the statistics count, no thread has more
 * waiting time than the span of the times it was given (waits never
 * overlap), and nothing leaks.
 *
 * Input: byte 0 (bit 0: --wall's values, bit 1: a minimum wait of 100),
 * then 4 bytes an operation: the kind (stack, out, preempted out, in,
 * exit, forget, finish), the thread (1 to 4), a time step (-32 to 223
 * after the previous time), and the stack's leaf or its prev_state. */
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
				      .arg = prof};
	struct kp_offcpu *o;
	uint64_t t = 1000, lo = UINT64_MAX, hi = 0, ns;
	kp_count total = 0;
	uint32_t leaves[4];
	size_t off;

	kp_wait_value_types(prof, (how & 1) != 0);
	off = (size_t)kp_profile_find_value(prof, KP_VALUE_OFFCPU);
	for (uint32_t i = 0; i < 4; i++) {
		struct kp_loc l = {.addr = 0x1000 * (i + 1), .kind = KP_LOC_KERNEL};

		leaves[i] = kp_profile_location(prof, &l);
	}
	o = kp_offcpu_new(&opts);
	while (in.n >= 4) {
		uint8_t op = fuzz_byte(&in) % 7, arg;
		pid_t tid = (pid_t)(fuzz_byte(&in) % NTHREADS) + 1;
		int step = (int)fuzz_byte(&in) - 32;

		arg = fuzz_byte(&in);
		t = step < 0 && t < (uint64_t)-step ? 0 : t + (uint64_t)(int64_t)step;
		if (op != 0 && op != 4 && op != 5) {
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
	kp_offcpu_free(o, true);
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
	FUZZ_CHECK(total == ns);
	FUZZ_CHECK(hi < lo || ns <= NTHREADS * (hi - lo));
	kp_profile_free(prof);
	return 0;
}
