#include "diff/diff_input.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/run_meta.h"
#include "profile/timeline.h"
#include "util/xalloc.h"

/* The file names a directory of runs holds profiles under. */
static bool profile_name(const char *name)
{
	static const char *const exts[] = {".kprof", ".folded", ".zst"};
	size_t len = strlen(name);

	if (name[0] == '.')
		return false;
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		size_t el = strlen(exts[i]);

		if (len > el && strcmp(name + len - el, exts[i]) == 0)
			return true;
	}
	return false;
}

static int by_version(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* The paths of the profiles in directory dir, in version order ("run2"
 * before "run10"): new strings in a new array (*n of them). Entries that
 * are not regular files (links, FIFOs, directories) are left out and
 * counted in *skipped, the first named in first_skipped. */
static int list_runs(const char *dir, char ***out, size_t *n, size_t *skipped, char *first_skipped,
		     size_t size, struct kp_diag *d)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	char **paths = NULL;
	size_t cap = 0, k = 0;

	*skipped = 0;
	if (!dp)
		return kp_diag_errno(d, -errno, "cannot read the directory %s", dir);
	while ((e = readdir(dp))) {
		struct stat st;

		if (!profile_name(e->d_name))
			continue;
		if (fstatat(dirfd(dp), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode)) {
			if (!(*skipped)++)
				snprintf(first_skipped, size, "%s", e->d_name);
			continue;
		}
		kp_xgrow(&paths, &cap, k + 1, sizeof(*paths));
		paths[k++] = kp_xasprintf("%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
					  e->d_name);
	}
	closedir(dp);
	if (!k) {
		free(paths);
		return kp_diag_set(
			d, -ENOENT,
			"%s: no profiles in the directory (regular files *.kprof, *.folded, "
			"*.zst)",
			dir);
	}
	qsort(paths, k, sizeof(*paths), by_version);
	*out = paths;
	*n = k;
	return 0;
}

static void warn(const struct kp_diff_input_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void warn(const struct kp_diff_input_opts *o, const char *fmt, ...)
{
	char msg[1400];
	va_list ap;

	if (!o->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o->warn(o->warn_arg, msg);
}

/* The values of a run diff reads: the shares' (--value, else the first:
 * "samples" in a CPU profile, "off-cpu" or "wall" in the others), the
 * test's counts ("samples", else the first, said so) and CPU nanoseconds
 * ("cpu"). */
static int run_values(const struct kp_profile *p, const char *file,
		      const struct kp_diff_input_opts *o, struct kp_diff_values *v,
		      struct kp_diag *d)
{
	int i = o->value ? kp_profile_find_value(p, o->value) : 0;
	const struct kp_profile_value_type *vt;
	char names[256];

	if (i < 0)
		return kp_diag_set(d, -EINVAL, "%s has no value '%s' (it has: %s)", file, o->value,
				   kp_profile_value_names(p, names, sizeof(names)));
	v->value = (size_t)i;
	i = kp_profile_find_value(p, "samples");
	if (i >= 0) {
		v->count = (size_t)i;
		if (kp_profile_value_type(p, v->count)->decimals)
			warn(o,
			     "%s: its sample counts have decimals: the test takes them as counts",
			     file);
	} else {
		v->count = 0;
		vt = kp_profile_value_type(p, 0);
		warn(o,
		     "%s has no sample counts ('samples'): the test takes its '%s' values for "
		     "counts "
		     "of independent samples",
		     file, kp_profile_str(p, vt->type, NULL));
	}
	i = kp_profile_find_value(p, "cpu");
	v->cpu = -1;
	if (i >= 0 && strcmp(kp_profile_str(p, kp_profile_value_type(p, (size_t)i)->unit, NULL),
			     "nanoseconds") == 0)
		v->cpu = i;
	if (!kp_profile_total(p, v->value) || !kp_profile_total(p, v->count))
		return kp_diag_set(d, -ENODATA, "%s: every count is 0: no shares to compare", file);
	return 0;
}

/* A run of a directory must be of the first run's event and command:
 * runs of other programs or events are no measure of one build's spread. */
static int same_run(const struct kp_profile *first, const char *first_file,
		    const struct kp_profile *p, const char *file, struct kp_diag *d)
{
	struct kp_run_meta m0, m1;
	const char *e0, *e1, *c0, *c1;
	int err = 0;

	kp_run_meta_read(first, &m0);
	kp_run_meta_read(p, &m1);
	e0 = m0.event;
	e1 = m1.event;
	c0 = m0.command;
	c1 = m1.command;

	if (e0 && e1 && strcmp(e0, e1) != 0)
		return kp_diag_set(
			d, -EINVAL,
			"%s and %s sampled different events (%s, %s): the runs of a side "
			"must be of one event and command",
			first_file, file, e0, e1);
	if (c0 && c1) {
		char *n0 = kp_run_meta_program(c0), *n1 = kp_run_meta_program(c1);

		if (strcmp(n0, n1) != 0)
			err = kp_diag_set(
				d, -EINVAL,
				"%s and %s are recordings of different commands ('%.300s', "
				"'%.300s'): the runs of a side must be of one event and command",
				first_file, file, n0, n1);
		free(n0);
		free(n1);
	}
	return err;
}

int kp_diff_input_same_value(const char *value0, const char *file0, const char *value1,
			     const char *file1, struct kp_diag *d)
{
	if (strcmp(value0, value1) == 0)
		return 0;
	return kp_diag_set(d, -EINVAL,
			   "the shares of %s would be of '%s' and those of %s of '%s' (each "
			   "profile's first value): give --value NAME, a value both have",
			   file0, value0, file1, value1);
}

/* A profile holding p's metadata alone. */
static struct kp_profile *meta_of(const struct kp_profile *p)
{
	struct kp_profile *m = kp_profile_new();

	for (size_t i = 0; i < kp_profile_nmeta(p); i++) {
		const char *key, *value;

		kp_profile_meta_at(p, i, &key, &value);
		kp_profile_set_meta(m, key, "%s", value);
	}
	return m;
}

/* str as a string of m, which lives as long as m. */
static const char *keep(struct kp_profile *m, const char *str)
{
	return kp_profile_str(m, kp_profile_intern(m, str, strlen(str)), NULL);
}

/* Reads one run and adds it. */
static int add_run(struct kp_diff *df, enum kp_diff_side side, const char *file,
		   const char *first_file, const struct kp_diff_input_opts *o,
		   struct kp_diff_input *s, struct kp_diag *d)
{
	struct kp_profile *p = NULL;
	struct kp_load_info info;
	struct kp_diff_values v;
	int err = kp_load_profile(file, &o->load, &p, &info, d);

	if (err < 0)
		return err;
	if (o->from || o->to) {
		struct kp_diag sd = {{0}};

		err = kp_timeline_slice_spec(&p, o->from, o->to, &sd);
		if (err < 0) {
			kp_profile_free(p);
			return kp_diag_set(d, err, "%s: %s", file, sd.msg);
		}
	}
	if (info.bad_lines)
		warn(o, "ignored %llu line%s with invalid format; the first: %s",
		     (unsigned long long)info.bad_lines, info.bad_lines == 1 ? "" : "s",
		     info.first_bad);
	if (info.differential)
		warn(o,
		     "%s holds two counts a line (BEFORE AFTER, a differential profile): only "
		     "AFTER "
		     "is compared",
		     file);
	err = run_values(p, file, o, &v, d);
	if (!err && s->meta)
		err = same_run(s->meta, first_file, p, file, d);
	if (!err && s->meta)
		err = kp_diff_input_same_value(
			s->value, first_file,
			kp_profile_str(p, kp_profile_value_type(p, v.value)->type, NULL), file, d);
	if (!err) {
		struct kp_diag ad = {{0}};

		err = kp_diff_add_run(df, side, p, &v, &ad);
		if (err)
			kp_diag_set(d, err, "%s: %s", file, ad.msg);
	}
	if (!err && o->fold) {
		struct kp_fold_opts fo = {.value = v.value, .into = o->into};

		if (!kp_fold_add_profile(o->fold, p, &fo))
			err = kp_diag_set(d, -ERANGE,
					  "%s: the values cannot be put side by side exactly",
					  file);
	}
	if (!err && !s->meta) {
		const struct kp_profile_value_type *vt = kp_profile_value_type(p, v.value);

		s->meta = meta_of(p);
		s->value = keep(s->meta, kp_profile_str(p, vt->type, NULL));
		s->unit = keep(s->meta, kp_profile_str(p, vt->unit, NULL));
		s->counts = keep(s->meta,
				 kp_profile_str(p, kp_profile_value_type(p, v.count)->type, NULL));
	}
	if (!err)
		s->runs++;
	kp_profile_free(p);
	return err;
}

int kp_diff_input_load(struct kp_diff *df, enum kp_diff_side side, const char *path,
		       const struct kp_diff_input_opts *o, struct kp_diff_input *s,
		       struct kp_diag *d)
{
	struct stat st;
	char **files = NULL;
	size_t n = 0;
	int err = 0;

	memset(s, 0, sizeof(*s));
	s->path = path;
	if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		struct kp_diff_input_opts ro = *o;

		size_t skipped = 0;
		char first[256];

		s->directory = true;
		err = list_runs(path, &files, &n, &skipped, first, sizeof(first), d);
		if (skipped)
			warn(o,
			     "%s: %zu entr%s not a regular file (a symbolic link, FIFO, directory) "
			     "not read; the first: %s",
			     path, skipped, skipped == 1 ? "y" : "ies", first);
		/* what a directory holds was not named by the user: a link or
		 * a FIFO planted there is not read */
		ro.load.regular_only = true;
		for (size_t i = 0; !err && i < n; i++)
			err = add_run(df, side, files[i], files[0], &ro, s, d);
		for (size_t i = 0; i < n; i++)
			free(files[i]);
		free(files);
		return err;
	}
	return add_run(df, side, path, path, o, s, d);
}

void kp_diff_input_fini(struct kp_diff_input *s)
{
	kp_profile_free(s->meta);
	memset(s, 0, sizeof(*s));
}
