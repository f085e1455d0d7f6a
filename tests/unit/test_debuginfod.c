/* The bounds on debuginfod downloads (symbolize/debuginfod.h) without a
 * server: the limits read from the environment (kprof's defaults for what
 * is unset or not a positive number), no state without DEBUGINFOD_URLS,
 * the stop and off switches, and what a failed lookup says: the servers
 * named once, percent-encoded, and a time-out ending the run's downloads.
 * The downloads themselves, cut by size, silence, budget and a signal,
 * are tests/e2e/symbols_debuginfod_limits.sh's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kp_test.h"
#include "symbolize/debuginfod.h"
#include "util/notes.h"

static const char *const vars[] = {"DEBUGINFOD_MAXSIZE", "DEBUGINFOD_MAXTIME", "DEBUGINFOD_TIMEOUT",
				   "KPROF_DEBUGINFOD_RUN_MAXSIZE", "KPROF_DEBUGINFOD_RUN_MAXTIME"};

static void unset_all(void)
{
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

static void test_limits(void)
{
	struct kp_debuginfod_limits l;
	static const char *const bad[] = {"0", "-5", "abc", ""};

	unset_all();
	kp_debuginfod_limits_env(&l);
	CHECK(l.file_bytes == KP_DEBUGINFOD_FILE_BYTES);
	CHECK(l.file_seconds == KP_DEBUGINFOD_FILE_SECONDS);
	CHECK(l.stall_seconds == KP_DEBUGINFOD_STALL_SECONDS);
	CHECK(l.run_bytes == KP_DEBUGINFOD_RUN_BYTES);
	CHECK(l.run_seconds == KP_DEBUGINFOD_RUN_SECONDS);
	/* as libdebuginfod reads them (atol) */
	setenv("DEBUGINFOD_MAXSIZE", "5000", 1);
	setenv("DEBUGINFOD_MAXTIME", "7", 1);
	setenv("DEBUGINFOD_TIMEOUT", "3x", 1);
	setenv("KPROF_DEBUGINFOD_RUN_MAXSIZE", "123456", 1);
	setenv("KPROF_DEBUGINFOD_RUN_MAXTIME", "9", 1);
	kp_debuginfod_limits_env(&l);
	CHECK_EQ_INT(l.file_bytes, 5000);
	CHECK(l.file_seconds == 7.0);
	CHECK(l.stall_seconds == 3.0);
	CHECK_EQ_INT(l.run_bytes, 123456);
	CHECK(l.run_seconds == 9.0);
	/* no "unbounded": what is not positive keeps the default */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		for (size_t k = 0; k < sizeof(vars) / sizeof(vars[0]); k++)
			setenv(vars[k], bad[i], 1);
		kp_debuginfod_limits_env(&l);
		CHECK(l.file_bytes == KP_DEBUGINFOD_FILE_BYTES);
		CHECK(l.stall_seconds == KP_DEBUGINFOD_STALL_SECONDS);
		CHECK(l.run_seconds == KP_DEBUGINFOD_RUN_SECONDS);
	}
	unset_all();
}

static void test_configured(void)
{
	struct kp_notes notes = {0};
	struct kp_debuginfod *d;

	unsetenv("DEBUGINFOD_URLS");
	CHECK(kp_debuginfod_new(&notes) == NULL);
	setenv("DEBUGINFOD_URLS", " \t ", 1);
	CHECK(kp_debuginfod_new(&notes) == NULL);
	CHECK(!kp_debuginfod_may(NULL));
	/* NULL (no server) is a valid state for every call */
	kp_debuginfod_begin(NULL, true);
	kp_debuginfod_end(NULL, NULL, NULL, 0, -ETIME);
	kp_debuginfod_off(NULL);
	kp_debuginfod_free(NULL);
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
	d = kp_debuginfod_new(&notes);
	CHECK(d != NULL);
	CHECK(kp_debuginfod_may(d));
	kp_debuginfod_off(d);
	CHECK(!kp_debuginfod_may(d));
	kp_debuginfod_free(d);
	CHECK_EQ_INT(notes.n, 0);
	kp_notes_fini(&notes);
}

static bool stop_yes(void *arg)
{
	(*(int *)arg)++;
	return true;
}

static void test_stop(void)
{
	struct kp_notes notes = {0};
	struct kp_debuginfod *d;
	int asked = 0;

	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
	d = kp_debuginfod_new(&notes);
	kp_debuginfod_set_stop(d, stop_yes, &asked);
	CHECK(!kp_debuginfod_may(d));
	CHECK(asked > 0);
	kp_debuginfod_set_stop(d, NULL, NULL);
	CHECK(kp_debuginfod_may(d));
	kp_debuginfod_free(d);
	kp_notes_fini(&notes);
}

/* A lookup that failed on the servers (an errno from libdebuginfod) names
 * them once, escaped; "not found" says nothing; a time-out ends the
 * downloads. */
static void test_failures(void)
{
	struct kp_notes notes = {0};
	const char *const *v;
	struct kp_debuginfod *d;
	size_t n;

	setenv("DEBUGINFOD_URLS", "http://a.example/\033]0;x\a  https://b.example", 1);
	d = kp_debuginfod_new(&notes);
	kp_debuginfod_begin(d, true);
	kp_debuginfod_end(d, NULL, NULL, 0, -ENOENT);
	kp_debuginfod_begin(d, true);
	kp_debuginfod_end(d, NULL, NULL, 0, -1);
	CHECK_EQ_INT(notes.n, 0);
	kp_debuginfod_begin(d, true);
	kp_debuginfod_end(d, NULL, NULL, 0, -ECONNREFUSED);
	kp_debuginfod_begin(d, true);
	kp_debuginfod_end(d, NULL, NULL, 0, -ECONNRESET);
	v = kp_notes_list(&notes, &n);
	CHECK_EQ_INT(n, 1);
	if (n >= 1)
		CHECK_EQ_STR(v[0],
			     "debuginfod server http://a.example/%1B]0;x%07, https://b.example "
			     "failed: Connection refused");
	CHECK(kp_debuginfod_may(d));
	kp_debuginfod_begin(d, true);
	kp_debuginfod_end(d, NULL, NULL, 0, -ETIME);
	CHECK(!kp_debuginfod_may(d));
	v = kp_notes_list(&notes, &n);
	CHECK_EQ_INT(n, 2);
	if (n >= 2)
		CHECK_EQ_STR(v[1], "no more debuginfod downloads this run: a server timed out");
	kp_debuginfod_free(d);
	kp_notes_fini(&notes);
	unsetenv("DEBUGINFOD_URLS");
}

KP_TEST_MAIN(test_limits, test_configured, test_stop, test_failures)
