/* kprof --every: a recording cut into consecutive windows (profiler/
 * window.h), each named, written to its own files (-o PATTERN, --keep)
 * and pushed (record_push.c), until a signal or -d ends the recording;
 * the last window is finished and sent like the others. The loop is the
 * profiler's (kp_window_run); this file writes and says. */
#include "cli/record_every.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/messages.h"
#include "cli/output.h"
#include "cli/record_summary.h"
#include "output/window_files.h"
#include "procfs/status.h"
#include "profiler/window.h"
#include "util/keeplist.h"
#include "util/xalloc.h"

struct every {
	struct kp_record_args *c;
	struct kp_session *sess;
	struct kp_symbolizer *sym;
	struct kp_record_push *push; /* NULL without --push */
	struct kp_keeplist **kept;   /* --keep: one per -o pattern */
	unsigned windows, write_failures;
	uint64_t samples;
	size_t notes_said; /* the jitdump notes printed so far */
};

/* Pattern i's file for window index, starting at Unix time t (a name
 * moved aside is said, unless quiet). NULL (said) when it cannot be. */
static char *window_path(const struct kp_record_args *c, size_t i, time_t t, unsigned index,
			 bool quiet)
{
	struct kp_diag d = {""}, moved = {""};
	char *name = kp_window_files_path(c->outputs.v[i], t, index, &d, &moved);

	if (!name)
		kp_err("%s", d.msg);
	else if (moved.msg[0] && !quiet)
		kp_warn("%s", moved.msg);
	return name;
}

/* Each -o pattern's name for Unix time t; false (said) when one cannot
 * be had. paths[] are the caller's to free. */
static bool window_paths(const struct kp_record_args *c, time_t t, unsigned index, bool quiet,
			 char **paths)
{
	for (size_t i = 0; i < c->outputs.n; i++) {
		paths[i] = window_path(c, i, t, index, quiet);
		if (!paths[i]) {
			for (size_t k = 0; k < i; k++)
				free(paths[k]);
			return false;
		}
	}
	return true;
}

/* --keep: the files just written join their patterns' lists; the oldest
 * names beyond N go (util/keeplist.h). */
static void keep(struct every *e, const struct kp_outputs *outs)
{
	for (size_t i = 0; i < outs->n && e->c->every.keep; i++) {
		const struct kp_outfile *f = &outs->file[i];
		const char *slash;
		struct kp_diag d = {""};

		if (f->dirfd < 0 || !f->path)
			continue; /* stdout, a descriptor of ours: nothing to remove */
		slash = strrchr(f->path, '/');
		if (kp_keeplist_add(e->kept[i], f->dirfd, slash ? slash + 1 : f->path, f->path,
				    &d) < 0)
			kp_warn("%s", d.msg);
	}
}

/* Writes window w to the files its start names. A failure is said and
 * counted: the recording goes on. */
static void write_window(struct every *e, const struct kp_window *w)
{
	const struct kp_record_args *c = e->c;
	char **paths = kp_xcalloc(c->outputs.n, sizeof(*paths));
	struct kp_outputs outs = {0};
	struct kp_output_ctx ctx;

	if (!window_paths(c, (time_t)(w->from_ns / 1000000000ULL), w->index, false, paths)) {
		e->write_failures++;
		free(paths);
		return;
	}
	kp_record_args_output_ctx(e->c, w->prof, true, &ctx);
	if (kp_outputs_open(&outs, &kp_output_profile, c->format, (const char *const *)paths,
			    c->outputs.n, "") ||
	    kp_outputs_write(&outs, &ctx, NULL, 0)) {
		e->write_failures++;
	} else {
		keep(e, &outs);
	}
	kp_outputs_free(&outs);
	for (size_t i = 0; i < c->outputs.n; i++)
		free(paths[i]);
	free(paths);
}

/* The first window's files, created and discarded before recording: a
 * pattern or directory that cannot work fails at once. Returns 0 or the
 * exit status after saying why. */
static int check_outputs(const struct kp_record_args *c)
{
	char **paths = kp_xcalloc(c->outputs.n ? c->outputs.n : 1, sizeof(*paths));
	struct kp_outputs outs = {0};
	int status = 2;

	if (window_paths(c, time(NULL), 0, true, paths)) {
		status = kp_outputs_open(&outs, &kp_output_profile, c->format,
					 (const char *const *)paths, c->outputs.n, "");
		for (size_t i = 0; i < c->outputs.n; i++)
			free(paths[i]);
	}
	kp_outputs_free(&outs);
	free(paths);
	return status;
}

int kp_record_every_check(struct kp_record_args *c)
{
	/* source lines are read only for window files that keep them; a
	 * push names functions (what Pyroscope and Parca draw) */
	c->sym.no_lines = true;
	for (size_t i = 0; i < c->outputs.n; i++) {
		const struct kp_output_format *f =
			c->format ? kp_output_by_name(&kp_output_profile, c->format)
				  : kp_output_by_path(&kp_output_profile, c->outputs.v[i]);

		if (f && f->lines)
			c->sym.no_lines = false;
	}
	return c->outputs.n ? check_outputs(c) : 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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
	double t1 = now_s();
	const char *const *notes;
	size_t nnotes;

	/* a jitdump cut short while recording or naming this window: said
	 * with the window, not after hours */
	notes = kp_sym_jitdump_cut_notes(e->sym, &nnotes);
	if (nnotes > e->notes_said)
		kp_warn_notes(notes + e->notes_said, nnotes - e->notes_said);
	e->notes_said = nnotes;
	if (e->c->outputs.n)
		write_window(e, w);
	if (e->push)
		kp_record_push_window(e->push, w);
	if (e->c->stats)
		window_stats(e, w, named, now_s() - t1);
	e->windows++;
	e->samples += w->samples;
}

/* The run's end: the jitdumps read only in part (a warning), then, unless
 * quiet, its windows, samples and what was lost (an agent's losses are not
 * for --stats only) and why records were lost. */
static void say_end(const struct every *e)
{
	struct kp_session_stats st;
	char throttled[64] = "";

	kp_session_stats(e->sess, &st);
	kp_record_summary_jitdumps(&st);
	if (e->c->quiet)
		return;
	if (st.throttled)
		snprintf(throttled, sizeof(throttled), ", throttled %llu times",
			 (unsigned long long)st.throttled);
	fprintf(stderr, "kprof: %u window%s of %g s, %llu samples, %llu lost%s%s\n", e->windows,
		e->windows == 1 ? "" : "s", e->c->every.seconds, (unsigned long long)e->samples,
		(unsigned long long)st.lost, throttled,
		e->write_failures ? "; some window files could not be written (said above)" : "");
	kp_record_summary_losses(&st);
}

int kp_record_every(struct kp_record_args *c, struct kp_session *sess, struct kp_symbolizer *sym,
		    struct kp_record_push *push)
{
	struct every e = {.c = c, .sess = sess, .sym = sym, .push = push};

	e.kept = kp_xcalloc(c->outputs.n ? c->outputs.n : 1, sizeof(*e.kept));
	for (size_t i = 0; i < c->outputs.n; i++)
		e.kept[i] = kp_keeplist_new(c->every.keep);
	kp_window_run(sess, sym, c->every.seconds, finish_window, &e);
	say_end(&e);
	for (size_t i = 0; i < c->outputs.n; i++)
		kp_keeplist_free(e.kept[i]);
	free(e.kept);
	return e.write_failures ? 1 : 0;
}
