/* A recording cut into windows (see window.h). */
#include "profiler/window.h"

#include <malloc.h>
#include <stdlib.h>
#include <time.h>

#include "profiler/hotspot_frames.h"
#include "profiler/profilerP.h"
#include "util/clock.h"
#include "util/xalloc.h"

/* A new empty profile with p's value types. */
static struct kp_profile *same_types(const struct kp_profile *p)
{
	struct kp_profile *q = kp_profile_new();

	for (size_t i = 0; i < kp_profile_nvalues(p); i++) {
		const struct kp_profile_value_type *vt = kp_profile_value_type(p, i);

		kp_profile_add_value_type(q, kp_profile_str(p, vt->type, NULL),
					  kp_profile_str(p, vt->unit, NULL), vt->decimals);
	}
	return q;
}

/* The run's record starts at Unix time ns (nanoseconds): a window's
 * start to the nanosecond, so that pprof's time_nanos is its `from`. */
static void set_start(struct kp_session *s, uint64_t ns)
{
	s->meta.start = (time_t)(ns / 1000000000ULL);
	s->meta.start_ns = (uint32_t)(ns % 1000000000ULL);
}

/* The run's record as the window's: its start, length and counts. */
static void window_meta(struct kp_session *s, double seconds)
{
	set_start(s, s->cut_unix_ns);
	s->meta.duration = seconds;
	s->meta.samples = s->st.samples - s->cut_samples0;
	s->meta.lost = s->st.lost - s->cut_lost0;
	s->meta.throttled = s->st.throttled - s->cut_throttled0;
	s->meta.have_end = true;
}

void kp_window_cut(struct kp_session *s, struct kp_window *w)
{
	uint64_t until;
	double t;

	if (!s->ended) {
		/* what the rings hold now belongs to this window */
		kp_dispatch_read(s);
		kp_dispatch_flush(s, false);
	}
	until = kp_session_unix_ns();
	t = s->ended ? s->st.seconds : kp_session_elapsed(s);
	if (until < s->cut_unix_ns)
		until = s->cut_unix_ns; /* the wall clock was set back */
	*w = (struct kp_window){
		.prof = s->prof,
		.from_ns = s->cut_unix_ns,
		.until_ns = until,
		.samples = s->st.samples - s->cut_samples0,
		.lost = s->st.lost - s->cut_lost0,
		.throttled = s->st.throttled - s->cut_throttled0,
		.index = s->cut_index++,
		.last = s->ended,
	};
	/* (the last window's again: kp_session_end wrote the whole run's
	 * start, to the second) */
	/* the wall clock's span, so that windows abut exactly */
	window_meta(s, (double)(until - s->cut_unix_ns) / 1e9);
	kp_run_meta_write(&s->meta, s->prof);
	s->prof = s->ended ? NULL : same_types(w->prof);
	kp_hsframes_new_profile(s->hs); /* its location ids were the old one's */
	/* each window keeps its own time, from its start */
	if (s->prof)
		kp_profile_time_start(s->prof, until);
	s->cut_t0 = t;
	s->cut_unix_ns = until;
	s->cut_samples0 = s->st.samples;
	s->cut_lost0 = s->st.lost;
	s->cut_throttled0 = s->st.throttled;
	set_start(s, until);
	s->meta.have_end = false;
	s->meta.have_unresolved = false;
}

void kp_window_keep_reading(void *session)
{
	struct kp_session *s = session;
	double t = kp_session_elapsed(s);

	if (s->ended || t - s->last_keep_reading < 0.05)
		return;
	s->last_keep_reading = t;
	kp_dispatch_read(s);
}

void kp_window_named(struct kp_session *s, struct kp_window *w)
{
	uint64_t next = (uint64_t)s->meta.start * 1000000000ULL + s->meta.start_ns;

	/* the record's start is the next window's now; this one's again */
	set_start(s, w->from_ns);
	kp_session_count_unresolved_in(s, w->prof);
	set_start(s, next);
	s->meta.have_unresolved = false;
}

void kp_window_trim(struct kp_session *s, double window_seconds)
{
	/* at least two: the window an object was used in may have ended at
	 * once */
	double idle = KP_WINDOW_IDLE_SECONDS / window_seconds + 0.999;
	uint32_t *objs;
	size_t n = kp_sym_next_window(s->opts.sym, idle < 2 ? 2 : (uint32_t)idle, &objs);

	kp_unwind_drop_objects(s->unw, objs, n);
	kp_proctab_forget_objects(s->procs, objs, n);
	free(objs);
	/* pids /proc could not describe: over hours pids are reused, and the
	 * set would only grow */
	kp_u64map_fini(&s->synth_failed);
	kp_u64map_init(&s->synth_failed);
	/* what was freed goes back to the system, not only to malloc: an
	 * agent's resident memory is what an operator watches */
	malloc_trim(0);
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

void kp_window_name(struct kp_symbolizer *sym, struct kp_session *s, struct kp_profile *prof)
{
	struct naming n = {s, kp_session_stop_signals(s)};

	kp_sym_set_stop(sym, naming_stopped, &n);
	kp_sym_name_profile(sym, prof);
	kp_sym_set_stop(sym, NULL, NULL);
}

/* The next cut: the next multiple of the window after now. */
static double next_cut(double cut, double every, double now)
{
	cut += every;
	while (cut <= now)
		cut += every;
	return cut;
}

void kp_window_run(struct kp_session *s, struct kp_symbolizer *sym, double seconds, kp_window_fn fn,
		   void *arg, struct kp_window_totals *t)
{
	double cut = seconds, t0;
	struct kp_window w;
	const char *const *notes;
	size_t nnotes, said = 0;
	bool more;

	*t = (struct kp_window_totals){0};
	kp_sym_set_between(sym, kp_window_keep_reading, s);
	do {
		more = kp_session_loop(s, cut, NULL, NULL);
		if (!more)
			kp_session_end(s);
		if (!more && kp_session_stop_signals(s))
			kp_sym_no_downloads(sym);
		kp_window_cut(s, &w);
		t0 = kp_clock_now_s();
		kp_window_name(sym, s, w.prof);
		kp_window_named(s, &w);
		notes = kp_sym_jitdump_cut_notes(sym, &nnotes);
		w.jitdump_notes = nnotes > said ? notes + said : NULL;
		w.njitdump_notes = nnotes > said ? nnotes - said : 0;
		said = nnotes;
		fn(arg, &w, kp_clock_now_s() - t0);
		t->windows++;
		t->samples += w.samples;
		kp_profile_free(w.prof);
		w.prof = NULL;
		if (more) {
			kp_window_trim(s, seconds);
			cut = next_cut(cut, seconds, kp_session_elapsed(s));
		}
	} while (more);
}
