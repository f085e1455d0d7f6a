/* Several recordings as one timeline (timeline_load.h). */
#include "formats/timeline_load.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/run_meta.h"
#include "profile/timeline.h"
#include "util/xalloc.h"

struct run {
	const char *path;
	uint64_t origin, end; /* Unix ns: its start, its last event */
};

static int by_origin(const void *a, const void *b)
{
	uint64_t x = ((const struct run *)a)->origin, y = ((const struct run *)b)->origin;

	return (x > y) - (x < y);
}

/* Loads path; the message said when it does not load or keeps no time. */
static struct kp_profile *load_timed(const char *path, const struct kp_load_opts *lo,
				     struct kp_diag *d)
{
	struct kp_profile *p = NULL;

	if (kp_load_profile(path, lo, &p, NULL, d) < 0)
		return NULL;
	if (!kp_profile_timed(p)) {
		kp_diag_set(
			d, -EINVAL,
			"%s keeps no time (folded text, or a recording of a kprof before the time "
			"axis): recordings read as one timeline must each keep it",
			path);
		kp_profile_free(p);
		return NULL;
	}
	return p;
}

/* One file of a directory: read as it is, kept whether or not it is timed. */
static int load_one(const char *path, const struct kp_load_opts *lo, struct kp_profile **out,
		    struct kp_diag *d)
{
	return kp_load_profile(path, lo, out, NULL, d) < 0 ? 1 : 0;
}

/* Where each file's time is, one loaded at a time; then in time order,
 * none overlapping the one before. Returns 0, or 1 after saying why. */
static int find_order(struct run *runs, char *const *paths, size_t n, const struct kp_load_opts *lo,
		      struct kp_diag *d)
{
	for (size_t i = 0; i < n; i++) {
		struct kp_profile *p = load_timed(paths[i], lo, d);

		if (!p)
			return 1;
		runs[i].path = paths[i];
		runs[i].origin = kp_profile_time_origin(p);
		runs[i].end = runs[i].origin + (uint64_t)kp_timeline_last_ms(p) * 1000000u;
		kp_profile_free(p);
	}
	qsort(runs, n, sizeof(*runs), by_origin);
	for (size_t i = 1; i < n; i++) {
		/* windows abut: a window's samples end before the next starts */
		if (runs[i].origin <= runs[i - 1].origin || runs[i].origin < runs[i - 1].end) {
			kp_diag_set(
				d, -EINVAL,
				"%s and %s overlap in time (%.3f s apart, the first's samples run "
				"%.3f s): give windows of one run, or runs one after the other",
				runs[i - 1].path, runs[i].path,
				(double)(runs[i].origin - runs[i - 1].origin) / 1e9,
				(double)(runs[i - 1].end - runs[i - 1].origin) / 1e9);
			return 1;
		}
	}
	return 0;
}

int kp_timeline_load_files(char *const *paths, size_t n, const struct kp_load_opts *lo,
			   struct kp_profile **out, struct kp_diag *d)
{
	struct run *runs = kp_xcalloc(n, sizeof(*runs));
	struct kp_profile *q = NULL;
	uint64_t samples = 0;
	double last_duration = 0;
	int status = find_order(runs, paths, n, lo, d);

	*out = NULL;
	/* then joined one at a time: memory is the joined profile and one more */
	for (size_t i = 0; i < n && !status; i++) {
		struct kp_diag jd = {{0}};
		struct kp_profile *p = load_timed(runs[i].path, lo, d);
		struct kp_run_meta m;

		if (!p) {
			status = 1;
			break;
		}
		if (!q)
			q = kp_timeline_new_like(p);
		kp_run_meta_read(p, &m);
		samples += m.samples;
		last_duration = m.duration;
		if (kp_timeline_join(q, p, &jd) < 0) {
			kp_diag_set(d, -EINVAL, "%s: %s", runs[i].path, jd.msg);
			status = 1;
		}
		kp_profile_free(p);
	}
	if (!status) {
		/* the span, from the first's start to the last's end */
		kp_run_meta_set_span(
			q, (double)(runs[n - 1].origin - runs[0].origin) / 1e9 + last_duration,
			samples);
		*out = q;
		q = NULL;
	}
	kp_profile_free(q);
	free(runs);
	return status;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int kp_timeline_load_dir(const char *dir, const struct kp_load_opts *lo, struct kp_profile **out,
			 struct kp_diag *d)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	/* what a directory holds is read as diff reads its runs: regular
	 * files, never through a symbolic link */
	struct kp_load_opts dlo = *lo;
	char **paths = NULL;
	size_t n = 0, cap = 0;
	int status;

	dlo.regular_only = true;
	*out = NULL;
	if (!dp) {
		kp_diag_set(d, -errno, "cannot read %s: %s", dir, strerror(errno));
		return 1;
	}
	while ((e = readdir(dp))) {
		size_t len = strlen(e->d_name);

		if (len > 6 && strcmp(e->d_name + len - 6, ".kprof") == 0) {
			kp_xgrow(&paths, &cap, n + 1, sizeof(*paths));
			paths[n] = kp_xmalloc(strlen(dir) + len + 2);
			snprintf(paths[n], strlen(dir) + len + 2, "%s/%s", dir, e->d_name);
			n++;
		}
	}
	closedir(dp);
	if (!n) {
		kp_diag_set(d, -ENOENT, "%s holds no .kprof recording", dir);
		status = 1;
	} else {
		qsort(paths, n, sizeof(*paths), by_name);
		status = n == 1 ? load_one(paths[0], &dlo, out, d)
				: kp_timeline_load_files(paths, n, &dlo, out, d);
	}
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return status;
}
