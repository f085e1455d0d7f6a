/* The files of kprof --every's windows (see window_files.h). */
#include "output/window_files.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "util/keeplist.h"
#include "util/outfile.h"
#include "util/xalloc.h"

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

/* The length of the extension that chooses path's format (".pb.gz"), 0
 * when none does: a name's suffix goes before it. */
static size_t ext_len(const char *path)
{
	const struct kp_output_format *f = kp_output_by_path(&kp_output_profile, path);
	const char *slash = strrchr(path, '/');
	size_t len = strlen(path), base = len - (size_t)(slash ? slash + 1 - path : 0), best = 0;

	for (const char *const *x = f ? f->exts : NULL; x && *x; x++) {
		size_t n = strlen(*x);

		if (n > best && n < base && strcmp(path + len - n, *x) == 0)
			best = n;
	}
	return best;
}

/* path, or when something not to be replaced holds it (a directory,
 * another user's file or link: kp_outfile_in_the_way), the first free of
 * NAME.1.EXT ... NAME.99.EXT (the format's extension kept, so that it is
 * still chosen by it); what was in the way goes to what ("": nothing).
 * A new string, NULL when no name is free. */
static char *free_name(const char *path, char *what, size_t size)
{
	size_t cut = strlen(path) - ext_len(path);
	char other[128];

	if (kp_outfile_in_the_way(path, what, size) == 0)
		return kp_xstrdup(path);
	for (unsigned n = 1; n < 100; n++) {
		char *alt = kp_xasprintf("%.*s.%u%s", (int)cut, path, n, path + cut);

		if (kp_outfile_in_the_way(alt, other, sizeof(other)) == 0)
			return alt;
		free(alt);
	}
	return NULL;
}

char *kp_window_files_path(const char *pattern, time_t t, unsigned index, struct kp_diag *d,
			   struct kp_diag *moved)
{
	char *path = expand(pattern, t), *name, what[128];

	moved->msg[0] = '\0';
	if (!path) {
		kp_diag_set(d, -ENAMETOOLONG,
			    "-o '%s': the pattern expands to nothing (or past 4095 bytes)",
			    pattern);
		return NULL;
	}
	name = free_name(path, what, sizeof(what));
	if (!name)
		kp_diag_set(d, -EEXIST,
			    "window %u: %s and the 99 names beside it are taken (%s): not written",
			    index, path, what);
	else if (*what)
		kp_diag_set(moved, 0,
			    "window %u: %s is in the way (%s, not replaced): written to %s", index,
			    path, what, name);
	free(path);
	return name;
}

struct kp_window_files {
	const char *format;
	const char *const *patterns;
	size_t n;
	unsigned keep;
	struct kp_keeplist **kept; /* --keep: one per pattern */
	kp_window_files_say_fn *say;
	void *arg;
};

/* Each pattern's name for Unix time t; false (said) when one cannot be
 * had. A name moved aside is said, unless quiet. paths[] are the caller's
 * to free. */
static bool paths_at(const struct kp_window_files *w, time_t t, unsigned index, bool quiet,
		     char **paths)
{
	for (size_t i = 0; i < w->n; i++) {
		struct kp_diag d = {""}, moved = {""};

		paths[i] = kp_window_files_path(w->patterns[i], t, index, &d, &moved);
		if (!paths[i]) {
			w->say(w->arg, KP_WINDOW_FILES_ERROR, d.msg);
			for (size_t k = 0; k < i; k++)
				free(paths[k]);
			return false;
		}
		if (moved.msg[0] && !quiet)
			w->say(w->arg, KP_WINDOW_FILES_WARNING, moved.msg);
	}
	return true;
}

/* The files of paths opened (kp_outputs_create); a failure said. */
static int open_all(const struct kp_window_files *w, struct kp_outputs *outs, char **paths)
{
	struct kp_diag d = {""};
	int status = kp_outputs_create(outs, &kp_output_profile, w->format,
				       (const char *const *)paths, w->n, "", &d);

	if (status)
		w->say(w->arg,
		       outs->unknown_ext ? KP_WINDOW_FILES_UNKNOWN_EXT : KP_WINDOW_FILES_ERROR,
		       d.msg);
	return status;
}

bool kp_window_files_lines(const char *format, const char *const *patterns, size_t n)
{
	bool lines = false;

	for (size_t i = 0; i < n; i++) {
		const struct kp_output_format *f =
			format ? kp_output_by_name(&kp_output_profile, format)
			       : kp_output_by_path(&kp_output_profile, patterns[i]);

		if (f && f->lines)
			lines = true;
	}
	return lines;
}

int kp_window_files_check(const char *format, const char *const *patterns, size_t n,
			  kp_window_files_say_fn *say, void *arg)
{
	struct kp_window_files w = {
		.format = format, .patterns = patterns, .n = n, .say = say, .arg = arg};
	char **paths = kp_xcalloc(n ? n : 1, sizeof(*paths));
	struct kp_outputs outs = {0};
	int status = 2;

	if (paths_at(&w, time(NULL), 0, true, paths)) {
		status = open_all(&w, &outs, paths);
		for (size_t i = 0; i < n; i++)
			free(paths[i]);
	}
	kp_outputs_free(&outs);
	free(paths);
	return status;
}

struct kp_window_files *kp_window_files_new(const char *format, const char *const *patterns,
					    size_t n, unsigned keep, kp_window_files_say_fn *say,
					    void *arg)
{
	struct kp_window_files *w = kp_xcalloc(1, sizeof(*w));

	*w = (struct kp_window_files){.format = format,
				      .patterns = patterns,
				      .n = n,
				      .keep = keep,
				      .say = say,
				      .arg = arg};
	w->kept = kp_xcalloc(n ? n : 1, sizeof(*w->kept));
	for (size_t i = 0; i < n; i++)
		w->kept[i] = kp_keeplist_new(keep);
	return w;
}

/* --keep: the files just written join their patterns' lists; the oldest
 * names beyond keep go (util/keeplist.h). */
static void keep_files(struct kp_window_files *w, const struct kp_outputs *outs)
{
	for (size_t i = 0; i < outs->n && w->keep; i++) {
		const struct kp_outfile *f = &outs->file[i];
		const char *slash;
		struct kp_diag d = {""};

		if (f->dirfd < 0 || !f->path)
			continue; /* stdout, a descriptor of ours: nothing to remove */
		slash = strrchr(f->path, '/');
		if (kp_keeplist_add(w->kept[i], f->dirfd, slash ? slash + 1 : f->path, f->path,
				    &d) < 0)
			w->say(w->arg, KP_WINDOW_FILES_WARNING, d.msg);
	}
}

int kp_window_files_write(struct kp_window_files *w, const struct kp_output_ctx *ctx, time_t t,
			  unsigned index)
{
	char **paths = kp_xcalloc(w->n ? w->n : 1, sizeof(*paths));
	struct kp_outputs outs = {0};
	struct kp_diag d = {""};
	int rc = -1;

	if (!paths_at(w, t, index, false, paths)) {
		free(paths);
		return -1;
	}
	if (open_all(w, &outs, paths) == 0) {
		if (kp_outputs_commit(&outs, ctx, NULL, 0, &d)) {
			w->say(w->arg, KP_WINDOW_FILES_ERROR, d.msg);
		} else {
			keep_files(w, &outs);
			rc = 0;
		}
	}
	kp_outputs_free(&outs);
	for (size_t i = 0; i < w->n; i++)
		free(paths[i]);
	free(paths);
	return rc;
}

void kp_window_files_free(struct kp_window_files *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++)
		kp_keeplist_free(w->kept[i]);
	free(w->kept);
	free(w);
}
