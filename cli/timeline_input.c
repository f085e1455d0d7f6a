/* Several recordings as one timeline (timeline_input.h). */
#include "cli/timeline_input.h"

#include <stdint.h>
#include <stdlib.h>

#include "cli/messages.h"
#include "profile/timeline.h"
#include "util/xalloc.h"

struct run {
	const char *path;
	struct kp_profile *p;
};

static int by_origin(const void *a, const void *b)
{
	uint64_t x = kp_profile_time_origin(((const struct run *)a)->p),
		 y = kp_profile_time_origin(((const struct run *)b)->p);

	return (x > y) - (x < y);
}

/* Where r's samples end, in Unix ns: its last event. */
static uint64_t run_end(const struct run *r)
{
	return kp_profile_time_origin(r->p) + (uint64_t)kp_timeline_last_ms(r->p) * 1000000u;
}

static int load_all(struct run *runs, char *const *paths, size_t n, const struct kp_load_opts *lo)
{
	for (size_t i = 0; i < n; i++) {
		struct kp_diag d = {{0}};

		runs[i].path = paths[i];
		if (kp_load_profile(paths[i], lo, &runs[i].p, NULL, &d) < 0) {
			kp_err("%s", d.msg);
			return 1;
		}
		if (!kp_profile_timed(runs[i].p)) {
			kp_err("%s keeps no time (folded text, or a recording of a kprof before "
			       "the "
			       "time axis): recordings read as one timeline must each keep it",
			       paths[i]);
			return 1;
		}
	}
	return 0;
}

int kp_timeline_input_load(char *const *paths, size_t n, const struct kp_load_opts *lo,
			   struct kp_profile **out)
{
	struct run *runs = kp_xcalloc(n, sizeof(*runs));
	struct kp_profile *q = NULL;
	int status = load_all(runs, paths, n, lo);

	*out = NULL;
	if (status)
		goto out;
	qsort(runs, n, sizeof(*runs), by_origin);
	for (size_t i = 1; i < n && !status; i++) {
		uint64_t start = kp_profile_time_origin(runs[i].p);

		/* windows abut: a window's samples end before the next starts */
		if (start <= kp_profile_time_origin(runs[i - 1].p) ||
		    (kp_timeline_last_ms(runs[i - 1].p) && start < run_end(&runs[i - 1]))) {
			kp_err("%s and %s overlap in time (%.3f s apart, the first's samples run "
			       "%.3f s): give windows of one run, or runs one after the other",
			       runs[i - 1].path, runs[i].path,
			       (double)(start - kp_profile_time_origin(runs[i - 1].p)) / 1e9,
			       (double)kp_timeline_last_ms(runs[i - 1].p) / 1e3);
			status = 1;
		}
	}
	if (status)
		goto out;
	q = kp_timeline_new_like(runs[0].p);
	for (size_t i = 0; i < n && !status; i++) {
		struct kp_diag d = {{0}};

		if (kp_timeline_join(q, runs[i].p, &d) < 0) {
			kp_err("%s: %s", runs[i].path, d.msg);
			status = 1;
		}
	}
	if (!status) {
		const char *last = kp_profile_meta(runs[n - 1].p, KP_META_DURATION);
		uint64_t samples = 0;

		for (size_t i = 0; i < n; i++) {
			const char *s = kp_profile_meta(runs[i].p, KP_META_SAMPLES);

			samples += s ? strtoull(s, NULL, 10) : 0;
		}
		/* the span, from the first's start to the last's end */
		kp_profile_set_meta(q, KP_META_DURATION, "%.3f",
				    (double)(kp_profile_time_origin(runs[n - 1].p) -
					     kp_profile_time_origin(q)) /
						    1e9 +
					    (last ? strtod(last, NULL) : 0));
		if (kp_profile_meta(q, KP_META_SAMPLES))
			kp_profile_set_meta(q, KP_META_SAMPLES, "%llu",
					    (unsigned long long)samples);
		*out = q;
		q = NULL;
	}
out:
	kp_profile_free(q);
	for (size_t i = 0; i < n; i++)
		kp_profile_free(runs[i].p);
	free(runs);
	return status;
}
