/* A profile or a timeline read, its range cut (load_range.h). */
#include "formats/load_range.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/timeline_load.h"
#include "profile/run_meta.h"
#include "profile/timeline.h"

static bool is_dir(const char *path)
{
	struct stat st;

	return strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int kp_load_range(char *const *paths, size_t n, const struct kp_load_range_opts *o,
		  struct kp_profile **p, struct kp_load_info *info, struct kp_notes *warnings,
		  struct kp_diag *d)
{
	struct kp_diag sd = {{0}};
	bool range = o->from || o->to;

	*info = (struct kp_load_info){0};
	if (n > 1 || is_dir(paths[0])) {
		if (n > 1 ? kp_timeline_load_files(paths, n, &o->load, p, d)
			  : kp_timeline_load_dir(paths[0], &o->load, p, d))
			return -1;
	} else if (kp_load_profile(paths[0], &o->load, p, info, d) < 0) {
		return -1;
	}
	if (range && kp_profile_timed(*p) && kp_timeline_untimed(*p))
		kp_notes_add(warnings,
			     "%zu stacks keep no time (samples past the recorder's bound, or "
			     "off-CPU waits of a kprof before waits kept it): the range leaves "
			     "them out",
			     kp_timeline_untimed(*p));
	if (range && kp_timeline_slice_spec(p, o->from, o->to, &sd) < 0)
		return kp_diag_set(d, -2, "%s: %s", n > 1 ? "the recordings" : paths[0], sd.msg);
	if (o->no_time)
		kp_profile_time_clear(*p);
	return 0;
}

int kp_load_range_fold(const struct kp_profile *p, const char *value, struct kp_fold_opts *fold,
		       struct kp_diag *d)
{
	if (!fold->root_pid && !fold->root_tid) {
		struct kp_run_meta m;

		kp_run_meta_read(p, &m);
		fold->root_tid = m.roots == KP_RUN_ROOTS_TID;
		fold->root_pid = m.roots == KP_RUN_ROOTS_PID;
	}
	if (value) {
		int v = kp_profile_find_value(p, value);
		char names[256];

		if (v < 0)
			return kp_diag_set(d, -1, "no value '%s' (it has: %s)", value,
					   kp_profile_value_names(p, names, sizeof(names)));
		fold->value = (size_t)v;
	}
	return 0;
}
