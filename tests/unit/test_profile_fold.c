/* Folded text -> profile -> folded text gives the same lines (roots,
 * kinds, empty frames, exact and decimal counts); a recorded-style profile
 * folds with comm, comm-PID and comm-PID/TID roots, frames of several per
 * location and [unknown] for locations never named, its CPU nanoseconds in
 * microseconds. */
#include <stdlib.h>

#include "formats/folded_read.h"
#include "formats/folded_write.h"
#include "profile/folded.h"
#include "profile/fold.h"
#include "kp_test.h"
#include "profile/profile.h"

static char *fold_text(const struct kp_profile *p, const struct kp_fold_opts *o)
{
	struct kp_folded *f = kp_folded_new();
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	CHECK(kp_fold_add_profile(f, p, o));
	CHECK_EQ_INT(kp_folded_write(f, out, KP_FOLDED_ANNOTATE_ALL), 0);
	fclose(out);
	kp_folded_free(f);
	return buf;
}

static void round_trip(const char *text)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_folded_read_opts ro = {.strict = true};
	struct kp_diag d;
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	struct kp_profile *p;
	char *got;

	CHECK_EQ_INT(kp_folded_read(f, in, "in", &ro, NULL, &d), 0);
	fclose(in);
	p = kp_fold_to_profile(f, NULL);
	got = fold_text(p, NULL);
	CHECK_EQ_STR(got, text);
	free(got);
	kp_profile_free(p);
	kp_folded_free(f);
}

static void test_folded_round_trip(void)
{
	/* the input is sorted as the writer sorts, so the text comes back */
	round_trip("bash;main;work 3\nbash;main;work;leaf 9007199254740993\n");
	round_trip(" 7\n;a;b 1\na;;b_[i] 2\nx_[k];y_[j] 1\n");
	round_trip("a 0.25\nb 1\n");
	round_trip("java;Interpreter_[j];[unknown] 5\nswapper;secondary_startup_64_[k] 12\n");
}

static void test_recorded_profile(void)
{
	struct kp_profile *p = kp_profile_new();
	struct kp_loc lk = {.addr = 0xffffffff81000000ull, .kind = KP_LOC_KERNEL};
	struct kp_loc lu = {.addr = 0x1130, .obj = 1, .kind = KP_LOC_USER};
	struct kp_loc lx = {.addr = 0x99, .obj = 1, .kind = KP_LOC_USER};
	uint32_t k = kp_profile_location(p, &lk), u = kp_profile_location(p, &lu),
		 x = kp_profile_location(p, &lx);
	uint32_t stack[3] = {u, x, k};
	struct kp_profile_frame fr[2] = {
		{kp_profile_function(p, kp_profile_intern(p, "main", 4), 0), 3, KP_FRAME_USER},
		{kp_profile_function(p, kp_profile_intern(p, "inl;x", 5), 0), 4, KP_FRAME_INLINE},
	};
	struct kp_profile_frame kf = {
		kp_profile_function(p, kp_profile_intern(p, "do_syscall_64", 13), 0), 0,
		KP_FRAME_KERNEL};
	struct kp_profile_root r = {kp_profile_intern(p, "prog", 4), 41, 42};
	kp_count v[2] = {2, 2000000};
	struct kp_fold_opts o = {0};
	char *s;

	kp_profile_add_value_type(p, "samples", "count", 0);
	kp_profile_add_value_type(p, "cpu", "nanoseconds", 0);
	kp_profile_set_frames(p, u, fr, 2, true);
	kp_profile_set_frames(p, k, &kf, 1, true);
	CHECK(kp_profile_add(p, &r, stack, 3, v));
	s = fold_text(p, &o);
	/* x was never named; the ';' of a name becomes ':' in folded text */
	CHECK_EQ_STR(s, "prog;main;inl:x_[i];[unknown];do_syscall_64_[k] 2\n");
	free(s);
	o.root_pid = true;
	o.value = 1;
	s = fold_text(p, &o);
	/* nanoseconds are folded into microseconds */
	CHECK_EQ_STR(s, "prog-41;main;inl:x_[i];[unknown];do_syscall_64_[k] 2000\n");
	free(s);
	o.root_tid = true;
	s = fold_text(p, &o);
	CHECK_EQ_STR(s, "prog-41/42;main;inl:x_[i];[unknown];do_syscall_64_[k] 2000\n");
	free(s);
	kp_profile_free(p);
}

KP_TEST_MAIN(test_folded_round_trip, test_recorded_profile)
