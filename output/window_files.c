/* The files of kprof --every's windows (see window_files.h). */
#include "output/window_files.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
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
