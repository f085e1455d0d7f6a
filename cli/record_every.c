/* kprof --every: a recording cut into consecutive windows (profiler/
 * window.h), each named, written to its own files (-o PATTERN, --keep)
 * and pushed (record_push.c), until a signal or -d ends the recording;
 * the last window is finished and sent like the others. */
#include "cli/record_every.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/messages.h"
#include "cli/output.h"
#include "profiler/window.h"
#include "util/xalloc.h"

/* The window files written by this run, per -o pattern, oldest first:
 * what --keep removes. */
struct kept {
	char **paths;
	size_t n, cap;
};

struct every {
	struct kp_record_args *c;
	struct kp_session *sess;
	struct kp_symbolizer *sym;
	struct kp_record_push *push; /* NULL without --push */
	struct kept *kept;	     /* one per -o pattern */
	unsigned windows, write_failures;
	uint64_t samples;
};

/* Pattern p with the strftime fields of Unix time t (local time), into a
 * new string; NULL when it expands to nothing or past PATH_MAX. */
static char *expand(const char *p, time_t t)
{
	struct tm tm;
	char buf[4096];
	size_t n;

	localtime_r(&t, &tm);
	/* the pattern is the user's own, as date(1)'s format is */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	n = strftime(buf, sizeof(buf), p, &tm);
#pragma GCC diagnostic pop
	return n ? kp_xstrdup(buf) : NULL;
}

/* Each -o pattern expanded for Unix time t; false (said) when one does
 * not expand. paths[] are the caller's to free. */
static bool window_paths(const struct kp_record_args *c, time_t t, char **paths)
{
	for (size_t i = 0; i < c->outputs.n; i++) {
		paths[i] = expand(c->outputs.v[i], t);
		if (!paths[i]) {
			kp_err("-o '%s': the pattern expands to nothing (or past 4095 bytes)",
			       c->outputs.v[i]);
			for (size_t k = 0; k < i; k++)
				free(paths[k]);
			return false;
		}
	}
	return true;
}

/* --keep: path joins its pattern's files; the oldest beyond N go. */
static void keep(struct every *e, size_t i, const char *path)
{
	struct kept *k = &e->kept[i];

	if (k->n && strcmp(k->paths[k->n - 1], path) == 0)
		return; /* the same name again (two windows in one second): replaced */
	kp_xgrow(&k->paths, &k->cap, k->n + 1, sizeof(*k->paths));
	k->paths[k->n++] = kp_xstrdup(path);
	if (!e->c->every.keep || k->n <= e->c->every.keep)
		return;
	if (unlink(k->paths[0]) < 0 && errno != ENOENT)
		kp_warn("--keep: cannot remove %s: %s", k->paths[0], strerror(errno));
	free(k->paths[0]);
	memmove(k->paths, k->paths + 1, --k->n * sizeof(*k->paths));
}

/* Writes window w to the files its start names. A failure is said and
 * counted: the recording goes on. */
static void write_window(struct every *e, const struct kp_window *w)
{
	const struct kp_record_args *c = e->c;
	char **paths = kp_xcalloc(c->outputs.n, sizeof(*paths));
	struct kp_outputs outs = {0};
	struct kp_output_ctx ctx;

	if (!window_paths(c, (time_t)(w->from_ns / 1000000000ULL), paths)) {
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
		for (size_t i = 0; i < c->outputs.n; i++)
			keep(e, i, paths[i]);
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

	if (window_paths(c, time(NULL), paths)) {
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

/* kprof's resident memory in KiB (0 when /proc does not say). */
static unsigned long rss_kib(void)
{
	char line[256];
	unsigned long kib = 0;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %lu kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
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

	kp_session_stats(e->sess, &st);
	fprintf(stderr,
		"kprof: window %u: %llu samples, %llu lost, %.3f s, named in %.0f ms, written "
		"and handed over in %.0f ms; %u objects held, unwind tables %.1f MiB, RSS %.1f "
		"MiB\n",
		w->index, (unsigned long long)w->samples, (unsigned long long)w->lost,
		(double)(w->until_ns - w->from_ns) / 1e9, named * 1e3, out * 1e3,
		st.sym.objects_held, (double)st.tables.table_bytes / 1048576.0,
		(double)rss_kib() / 1024.0);
}

/* The stop signals come when naming began. */
struct naming {
	struct kp_session *sess;
	unsigned signals;
};

static bool naming_stopped(void *arg)
{
	struct naming *n = arg;

	return kp_session_stop_signals(n->sess) > n->signals;
}

void kp_record_name(struct kp_symbolizer *sym, struct kp_session *sess, struct kp_profile *prof)
{
	struct naming n = {sess, kp_session_stop_signals(sess)};

	kp_sym_set_stop(sym, naming_stopped, &n);
	kp_sym_name_profile(sym, prof);
	kp_sym_set_stop(sym, NULL, NULL);
}

/* One window, recorded: named, written, pushed, freed. */
static void finish_window(struct every *e, struct kp_window *w)
{
	double t0 = now_s(), t1;

	kp_record_name(e->sym, e->sess, w->prof);
	kp_window_named(e->sess, w);
	t1 = now_s();
	if (e->c->outputs.n)
		write_window(e, w);
	if (e->push)
		kp_record_push_window(e->push, w);
	if (e->c->stats)
		window_stats(e, w, t1 - t0, now_s() - t1);
	e->windows++;
	e->samples += w->samples;
	kp_profile_free(w->prof);
	w->prof = NULL;
}

/* The next cut: the next multiple of the window after now, so that a
 * window that took long to name makes the next one longer, never a gap. */
static double next_cut(double cut, double every, double now)
{
	cut += every;
	while (cut <= now)
		cut += every;
	return cut;
}

int kp_record_every(struct kp_record_args *c, struct kp_session *sess, struct kp_symbolizer *sym,
		    struct kp_record_push *push)
{
	struct every e = {.c = c, .sess = sess, .sym = sym, .push = push};
	double cut = c->every.seconds;
	struct kp_window w;
	bool more;

	e.kept = kp_xcalloc(c->outputs.n ? c->outputs.n : 1, sizeof(*e.kept));
	kp_sym_set_between(sym, kp_window_keep_reading, sess);
	do {
		more = kp_session_loop(sess, cut, NULL, NULL);
		if (!more)
			kp_session_end(sess);
		/* stopped by a signal: the last window is named without
		 * downloading, so that the agent ends on time */
		if (!more && kp_session_stop_signals(sess))
			kp_sym_no_downloads(sym);
		kp_window_cut(sess, &w);
		finish_window(&e, &w);
		if (more) {
			kp_window_trim(sess, c->every.seconds);
			cut = next_cut(cut, c->every.seconds, kp_session_elapsed(sess));
		}
	} while (more);
	if (!c->quiet)
		fprintf(stderr, "kprof: %u window%s of %g s, %llu samples%s\n", e.windows,
			e.windows == 1 ? "" : "s", c->every.seconds, (unsigned long long)e.samples,
			e.write_failures ? "; some window files could not be written (said above)"
					 : "");
	for (size_t i = 0; i < c->outputs.n; i++) {
		for (size_t k = 0; k < e.kept[i].n; k++)
			free(e.kept[i].paths[k]);
		free(e.kept[i].paths);
	}
	free(e.kept);
	return e.write_failures ? 1 : 0;
}
