/* profiler/session_opts.c and session_report.c: the options' defaults,
 * what they ask of each other, and what a recording's counts say. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kp_test.h"
#include "profiler/session.h"
#include "profiler/session_report.h"

static void test_defaults(void)
{
	struct kp_session_opts o;

	kp_session_opts_init(&o);
	CHECK_EQ_STR(o.attr.event.name, "cycles");
	CHECK(o.attr.freq == 99 && o.switch_freq == 1000 && o.attr.build_id);
	CHECK(o.attr.max_stack > 0 && o.attr.max_stack <= KP_SESSION_MAX_FRAMES);
	CHECK(o.mode == KP_SESSION_CPU && !o.argv && !o.system_wide);
}

static void test_check(void)
{
	struct kp_session_opts o;
	struct kp_diag d = {""};
	pid_t pid = 1;
	char name[] = "true", *argv[] = {name, NULL};

	kp_session_opts_init(&o);
	o.pids = &pid;
	o.npids = 1;
	o.system_wide = true;
	CHECK_EQ_INT(kp_session_opts_check(&o, false, &d), -EINVAL);
	CHECK_EQ_STR(d.msg, "-p/-t and -a/-C cannot be combined");
	/* --off-cpu takes no -e; --wall a clock, cpu-clock when none given */
	kp_session_opts_init(&o);
	o.mode = KP_SESSION_OFFCPU;
	CHECK_EQ_INT(kp_session_opts_check(&o, true, &d), -ENOTSUP);
	CHECK(strstr(d.msg, "-e does not apply") != NULL);
	CHECK_EQ_INT(kp_session_opts_check(&o, false, &d), 0);
	kp_session_opts_init(&o);
	o.mode = KP_SESSION_WALL;
	CHECK_EQ_INT(kp_session_opts_check(&o, true, &d), -ENOTSUP);
	CHECK(strstr(d.msg, "not cycles") != NULL);
	CHECK_EQ_INT(kp_session_opts_check(&o, false, &d), 0);
	CHECK_EQ_STR(o.attr.event.name, "cpu-clock");
	CHECK(o.root_tid);
	o.root_tid = false;
	o.root_pid = true;
	CHECK_EQ_INT(kp_session_opts_check(&o, false, &d), 0);
	CHECK(!o.root_tid);
	/* the command: a target unless ids or the whole machine are */
	kp_session_opts_init(&o);
	CHECK_EQ_INT(kp_session_opts_command(&o, NULL, &d), -EINVAL);
	CHECK(strstr(d.msg, "nothing to sample") != NULL);
	CHECK_EQ_INT(kp_session_opts_command(&o, argv, &d), 0);
	CHECK(o.argv == argv && o.command_is_target);
	o.system_wide = true;
	CHECK_EQ_INT(kp_session_opts_command(&o, NULL, &d), 0);
	CHECK(!o.command_is_target);
}

struct lines {
	char text[4096];
	unsigned n, warnings;
};

static void collect(void *arg, bool warning, const char *line)
{
	struct lines *l = arg;
	size_t len = strlen(l->text);

	snprintf(l->text + len, sizeof(l->text) - len, "%s\n", line);
	l->n++;
	l->warnings += warning;
}

static void test_report(void)
{
	struct kp_session_opts o;
	struct kp_session_stats st;
	struct lines l = {0};
	pid_t pids[2] = {1, 2};

	kp_session_opts_init(&o);
	memset(&st, 0, sizeof(st));
	/* nothing lost, nothing throttled: no line */
	kp_session_report_losses(&st, collect, &l);
	kp_session_report_jitdumps(&st, collect, &l);
	CHECK_EQ_INT(l.n, 0);
	st.lost = 10;
	st.ring_pages = 8;
	st.throttled = 3;
	kp_session_report_losses(&st, collect, &l);
	CHECK_EQ_INT(l.n, 2);
	CHECK_EQ_INT(l.warnings, 0);
	CHECK(strstr(l.text, "10 records were lost: the rings (8 pages per CPU)") != NULL);
	CHECK(strstr(l.text, "-m 32 would avoid it\n") != NULL);
	CHECK(strstr(l.text, "throttled 3 times") != NULL);
	/* why nothing was recorded follows what was sampled */
	memset(&l, 0, sizeof(l));
	memset(&st, 0, sizeof(st));
	st.freq = 99;
	st.seconds = 2.0;
	o.pids = pids;
	o.npids = 2;
	o.pids_are_tids = true;
	kp_session_report_empty(&o, &st, collect, &l);
	CHECK_EQ_INT(l.warnings, 1);
	CHECK(strstr(l.text, "the threads sampled used no CPU in the 2.0 s") != NULL);
	memset(&l, 0, sizeof(l));
	o.npids = 0;
	o.command_is_target = true;
	kp_session_report_empty(&o, &st, collect, &l);
	CHECK(strstr(l.text, "less than one sampling period (1/F seconds)") != NULL);
	memset(&l, 0, sizeof(l));
	st.sym.jitdump_cut = 2;
	kp_session_report_jitdumps(&st, collect, &l);
	CHECK(l.warnings == 1 && strstr(l.text, "2 jitdumps were read only in part") != NULL);
}

KP_TEST_MAIN(test_defaults, test_check, test_report)
