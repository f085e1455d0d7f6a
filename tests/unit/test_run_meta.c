/* The run's metadata record: the keys it writes and their order (what
 * every .kprof has held), reading it back, the program of a command line. */
#include <stdlib.h>

#include "kp_test.h"
#include "profile/run_meta.h"

static void test_write_order_and_read_back(void)
{
	static const int cpus[] = {0, 1, 2, 3, 6};
	char a0[] = "/usr/bin/kprof", a1[] = "-F", a2[] = "99", a3[] = "--", a4[] = "./bench";
	char *argv[] = {a0, a1, a2, a3, a4, NULL};
	struct kp_run_meta m = {
		.event = "cpu-clock",
		.frequency = 99,
		.cpus = cpus,
		.ncpus = 5,
		.start = 1796111000, /* 2026-12-01T07:43:20Z */
		.version = "0.1.0",
		.argv = argv,
		.argc = 5,
		.host = "box",
		.kernel = "6.8.0",
		.roots = KP_RUN_ROOTS_PID,
	};
	static const char *const want[][2] = {
		{"event", "cpu-clock"},
		{"frequency", "99"},
		{"cpus", "0-3,6"},
		{"start", "2026-12-01T07:43:20Z"},
		{"duration", "2.500"},
		{"samples", "12"},
		{"lost", "1"},
		{"kprof.version", "0.1.0"},
		{"command", "kprof -F 99 -- ./bench"},
		{"host", "box"},
		{"kernel", "6.8.0"},
		{"roots", "comm-pid"},
		{"unresolved.other", "0"},
		{"unresolved.kernel", "3"},
		{"unresolved.user", "0"},
		{"unresolved.jit", "0"},
	};
	struct kp_profile *p = kp_profile_new();
	struct kp_run_meta r;

	kp_run_meta_write(&m, p);
	CHECK_EQ_INT(kp_profile_nmeta(p), 9); /* no end, no unresolved yet */
	m.duration = 2.5;
	m.samples = 12;
	m.lost = 1;
	m.have_end = true;
	kp_run_meta_write(&m, p);
	m.unresolved[KP_LOC_KERNEL] = 3;
	m.have_unresolved = true;
	kp_run_meta_write(&m, p);
	CHECK_EQ_INT(kp_profile_nmeta(p), sizeof(want) / sizeof(want[0]));
	/* the end's keys come after roots when written later: read in order */
	{
		static const char *const order[] = {"event",
						    "frequency",
						    "cpus",
						    "start",
						    "kprof.version",
						    "command",
						    "host",
						    "kernel",
						    "roots",
						    "duration",
						    "samples",
						    "lost",
						    "unresolved.other",
						    "unresolved.kernel",
						    "unresolved.user",
						    "unresolved.jit"};

		for (size_t i = 0; i < kp_profile_nmeta(p); i++) {
			const char *k, *v;

			kp_profile_meta_at(p, i, &k, &v);
			CHECK_EQ_STR(k, order[i]);
		}
	}
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK_EQ_STR(kp_profile_meta(p, want[i][0]), want[i][1]);

	kp_run_meta_read(p, &r);
	CHECK_EQ_STR(r.event, "cpu-clock");
	CHECK_EQ_STR(r.command, "kprof -F 99 -- ./bench");
	CHECK(r.argv == NULL);
	CHECK(r.frequency == 99 && r.period == 0);
	CHECK(r.have_end && r.duration == 2.5 && r.samples == 12 && r.lost == 1);
	CHECK(r.start == m.start);
	CHECK(r.roots == KP_RUN_ROOTS_PID);
	kp_profile_free(p);
}

/* What the session does: the end and the rest written at once. */
static void test_write_all_at_once(void)
{
	char a0[] = "kprof", a1[] = "-a";
	char *argv[] = {a0, a1, NULL};
	struct kp_run_meta m = {.event = "cycles",
				.period = 4000,
				.argv = argv,
				.argc = 2,
				.have_end = true,
				.duration = 1.0 / 3};
	struct kp_profile *p = kp_profile_new();
	const char *k, *v;
	struct kp_run_meta r;

	kp_run_meta_write(&m, p);
	CHECK_EQ_STR(kp_profile_meta(p, "period"), "4000");
	CHECK(kp_profile_meta(p, "frequency") == NULL);
	CHECK_EQ_STR(kp_profile_meta(p, "cpus"), "");
	CHECK_EQ_STR(kp_profile_meta(p, "duration"), "0.333");
	CHECK_EQ_STR(kp_profile_meta(p, "roots"), "comm");
	CHECK(kp_profile_meta(p, "host") == NULL && kp_profile_meta(p, "kprof.version") == NULL);
	kp_profile_meta_at(p, 4, &k, &v);
	CHECK_EQ_STR(k, "duration");
	kp_run_meta_read(p, &r);
	CHECK(r.period == 4000 && r.duration == 0.333);
	kp_profile_free(p);

	p = kp_profile_new();
	kp_run_meta_read(p, &r);
	CHECK(!r.have_end && !r.command && !r.event && r.duration == 0);
	kp_profile_free(p);
}

static void test_program(void)
{
	static const char *const cases[][2] = {
		{"kprof -F 99 -- ./bench -n 3", "./bench -n 3"},
		{"kprof -o a.svg -F 99 ./bench", "kprof -F 99 ./bench"},
		{"kprof -oa.svg -ffolded --output x --format=pprof -a", "kprof -a"},
		{"kprof  -p 12", "kprof -p 12"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = kp_run_meta_program(cases[i][0]);

		CHECK_EQ_STR(got, cases[i][1]);
		free(got);
	}
}

/* A whole-machine run says so after roots (pprof then names no program as
 * its main file); a run of a command writes no scope. */
static void test_scope(void)
{
	struct kp_run_meta m = {.event = "cpu-clock", .system_wide = true}, r;
	struct kp_profile *p = kp_profile_new(), *q = kp_profile_new();
	const char *key, *value;

	kp_run_meta_write(&m, p);
	kp_profile_meta_at(p, kp_profile_nmeta(p) - 1, &key, &value);
	CHECK_EQ_STR(key, "scope");
	CHECK_EQ_STR(value, "system");
	kp_run_meta_read(p, &r);
	CHECK(r.system_wide);
	m.system_wide = false;
	kp_run_meta_write(&m, q);
	CHECK(kp_profile_meta(q, "scope") == NULL);
	kp_run_meta_read(q, &r);
	CHECK(!r.system_wide);
	kp_profile_free(p);
	kp_profile_free(q);
}

/* How a command's run ended: written with the end of the recording, read
 * back; none when not a command's (or not known), and an unknown word
 * reads as none. */
static void test_end(void)
{
	static const char *const words[] = {NULL, "exit", "signal", "duration", "stopped"};

	for (int e = KP_RUN_END_NONE; e <= KP_RUN_END_STOPPED; e++) {
		struct kp_run_meta m = {
			.event = "cpu-clock", .have_end = true, .end = (enum kp_run_end)e};
		struct kp_profile *p = kp_profile_new();
		struct kp_run_meta r;

		kp_run_meta_write(&m, p);
		if (words[e])
			CHECK_EQ_STR(kp_profile_meta(p, KP_META_END), words[e]);
		else
			CHECK(kp_profile_meta(p, KP_META_END) == NULL);
		kp_run_meta_read(p, &r);
		CHECK_EQ_INT(r.end, e);
		kp_profile_free(p);
	}
	{
		struct kp_profile *p = kp_profile_new();
		struct kp_run_meta r;

		kp_profile_set_meta(p, KP_META_END, "exited");
		kp_run_meta_read(p, &r);
		CHECK_EQ_INT(r.end, KP_RUN_END_NONE);
		kp_profile_free(p);
	}
}

/* The values as written, for the writers that print them so (a value that
 * is no number reads as 0 but keeps its text); absent ones are NULL. */
static void test_text(void)
{
	struct kp_profile *p = kp_profile_new();
	struct kp_run_meta r;

	kp_profile_set_meta(p, KP_META_EVENT, "cpu-clock");
	kp_profile_set_meta(p, KP_META_FREQUENCY, "0999");
	kp_profile_set_meta(p, KP_META_DURATION, "2.50");
	kp_profile_set_meta(p, KP_META_SAMPLES, "12x");
	kp_run_meta_read(p, &r);
	CHECK_EQ_STR(r.text.frequency, "0999");
	CHECK_EQ_INT(r.frequency, 999);
	CHECK(r.text.period == NULL);
	CHECK_EQ_STR(r.text.duration, "2.50");
	CHECK_EQ_STR(r.text.samples, "12x");
	CHECK_EQ_INT(r.samples, 0);
	CHECK(r.text.lost == NULL);
	kp_profile_free(p);
}

/* A joined profile's span: the duration always, the samples only where the
 * profile says them. */
static void test_set_span(void)
{
	struct kp_profile *p = kp_profile_new(), *q = kp_profile_new();

	kp_profile_set_meta(p, KP_META_DURATION, "1.000");
	kp_profile_set_meta(p, KP_META_SAMPLES, "10");
	kp_run_meta_set_span(p, 3.25, 42);
	CHECK_EQ_STR(kp_profile_meta(p, KP_META_DURATION), "3.250");
	CHECK_EQ_STR(kp_profile_meta(p, KP_META_SAMPLES), "42");
	kp_run_meta_set_span(q, 0.5, 7);
	CHECK_EQ_STR(kp_profile_meta(q, KP_META_DURATION), "0.500");
	CHECK(kp_profile_meta(q, KP_META_SAMPLES) == NULL);
	kp_profile_free(p);
	kp_profile_free(q);
}

KP_TEST_MAIN(test_write_order_and_read_back, test_write_all_at_once, test_program, test_scope,
	     test_end, test_text, test_set_span)
