/* kprof --every: a recording cut into consecutive windows (profiler/
 * window.h), each named, written to its own files (-o PATTERN, --keep:
 * output/window_files.h) and pushed (push/windows.h), until a signal or -d
 * ends the recording; the last window is finished and sent like the
 * others. The loop is the profiler's (kp_window_run); this file says. */
#include "cli/record_every.h"

#include <stdio.h>
#include <time.h>

#include "cli/messages.h"
#include "cli/output.h"
#include "cli/record_summary.h"
#include "output/window_files.h"
#include "procfs/status.h"
#include "profiler/window.h"
#include "util/clock.h"

struct every {
	struct kp_record_args *c;
	struct kp_session *sess;
	struct kp_symbolizer *sym;
	struct kp_push_windows *push;  /* NULL without --push */
	struct kp_window_files *files; /* the -o patterns' */
	unsigned write_failures;
	struct kp_window_totals totals;
};

/* push/'s messages: one line each, foreign bytes escaped by push/ already
 * (util/textsafe.h), so written as they are; called from its sender
 * thread too. */
static void push_log(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "kprof: %s\n", line);
}

int kp_record_every_push(struct kp_push_windows **out, const struct kp_record_args *c,
			 const char *command)
{
	const struct kp_every_args *e = &c->every;
	struct kp_diag d = {""};
	struct kp_push_windows_opts o = {
		.push = {.targets = (const char *const *)e->push.v,
			 .ntargets = e->push.n,
			 .labels = (const char *const *)e->labels.v,
			 .nlabels = e->labels.n,
			 .headers = (const char *const *)e->headers.v,
			 .nheaders = e->headers.n,
			 .spool_dir = e->spool,
			 .timeout = e->push_timeout,
			 .log = push_log},
		.service = e->service,
		.command = command,
		.token_file = e->token_file,
		.password_file = e->password_file,
		.header_file = e->header_file,
	};

	*out = NULL;
	if (e->push.n && kp_push_windows_new(out, &o, &d) < 0) {
		kp_err("%s", d.msg);
		return 2;
	}
	return 0;
}

/* What the window files say (output/window_files.h), to the user. */
static void say_files(void *arg, enum kp_window_files_note note, const char *msg)
{
	(void)arg;
	if (note == KP_WINDOW_FILES_WARNING)
		kp_warn("%s", msg);
	else
		kp_outputs_say(&kp_output_profile, note == KP_WINDOW_FILES_UNKNOWN_EXT, msg);
}

int kp_record_every_check(struct kp_record_args *c)
{
	/* source lines are read only for window files that keep them; a
	 * push names functions (what Pyroscope and Parca draw) */
	c->sym.no_lines = !kp_window_files_lines(c->format, c->outputs.v, c->outputs.n);
	return c->outputs.n ? kp_window_files_check(c->format, c->outputs.v, c->outputs.n,
						    say_files, NULL)
			    : 0;
}

/* --stats: one line per window, what it held, what naming and writing it
 * took (the rings wait meanwhile), what kprof holds. */
static void window_stats(struct every *e, const struct kp_window *w, double named, double out)
{
	struct kp_session_stats st;
	struct kp_status self;

	kp_session_stats(e->sess, &st);
	kp_status_read_self(&self); /* rss_kib 0 when /proc does not say */
	fprintf(stderr,
		"kprof: window %u: %llu samples, %llu lost, %.3f s, named in %.0f ms, written "
		"and handed over in %.0f ms; %u objects held, unwind tables %.1f MiB, RSS %.1f "
		"MiB\n",
		w->index, (unsigned long long)w->samples, (unsigned long long)w->lost,
		(double)(w->until_ns - w->from_ns) / 1e9, named * 1e3, out * 1e3,
		st.sym.objects_held, (double)st.tables.table_bytes / 1048576.0,
		(double)self.rss_kib / 1024.0);
}

/* One window, recorded and named (profiler/window.h): written, pushed. */
static void finish_window(void *arg, struct kp_window *w, double named)
{
	struct every *e = arg;
	struct kp_diag d = {""};
	double t1 = kp_clock_now_s();

	kp_warn_notes(w->jitdump_notes, w->njitdump_notes);
	if (e->c->outputs.n) {
		struct kp_output_ctx ctx;

		kp_record_args_output_ctx(e->c, w->prof, true, &ctx);
		if (kp_window_files_write(e->files, &ctx, (time_t)(w->from_ns / 1000000000ULL),
					  w->index))
			e->write_failures++;
	}
	if (e->push && kp_push_windows_add(e->push, w->prof, w->index, w->from_ns, w->until_ns, &d))
		kp_warn("%s", d.msg);
	if (e->c->stats)
		window_stats(e, w, named, kp_clock_now_s() - t1);
}

/* The run's end: the jitdumps read only in part (a warning), then, unless
 * quiet, its windows, samples and what was lost (an agent's losses are not
 * for --stats only) and why records were lost. */
static void say_end(const struct every *e)
{
	struct kp_session_stats st;
	char throttled[64] = "";

	kp_session_stats(e->sess, &st);
	kp_session_report_jitdumps(&st, kp_record_say, NULL);
	if (e->c->quiet)
		return;
	if (st.throttled)
		snprintf(throttled, sizeof(throttled), ", throttled %llu times",
			 (unsigned long long)st.throttled);
	fprintf(stderr, "kprof: %u window%s of %g s, %llu samples, %llu lost%s%s\n",
		e->totals.windows, e->totals.windows == 1 ? "" : "s", e->c->every.seconds,
		(unsigned long long)e->totals.samples, (unsigned long long)st.lost, throttled,
		e->write_failures ? "; some window files could not be written (said above)" : "");
	kp_session_report_losses(&st, kp_record_say, NULL);
}

int kp_record_every(struct kp_record_args *c, struct kp_session *sess, struct kp_symbolizer *sym,
		    struct kp_push_windows *push)
{
	struct every e = {.c = c, .sess = sess, .sym = sym, .push = push};
	char line[512];
	int pushed = 0;

	e.files = kp_window_files_new(c->format, c->outputs.v, c->outputs.n, c->every.keep,
				      say_files, NULL);
	kp_window_run(sess, sym, c->every.seconds, finish_window, &e, &e.totals);
	say_end(&e);
	kp_window_files_free(e.files);
	if (push) {
		pushed = kp_push_windows_end(push, c->quiet, line, sizeof(line));
		if (line[0])
			kp_say("%s", line);
	}
	return e.write_failures ? 1 : pushed;
}
