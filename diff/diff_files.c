#include "diff/diff_files.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff_report.h"
#include "profile/run_meta.h"
#include "util/xalloc.h"

int kp_diff_files_read(struct kp_diff_files *f, const struct kp_diff_files_opts *o,
		       struct kp_diag *d)
{
	memset(f, 0, sizeof(*f));
	if (o->fold)
		f->fold = kp_folded_new();
	f->df = kp_diff_new(&o->diff);
	for (int s = 0; s < 2; s++) {
		/* the shape drawn is AFTER: NEW's, or BASE's with --base-shape */
		bool after = (s == KP_DIFF_NEW) != o->base_shape;
		/* BASE's own range, when given one */
		bool base = s == KP_DIFF_BASE && (o->range[2] || o->range[3]);
		struct kp_diff_input_opts so = {.load = o->load,
						.value = o->value,
						.from = o->range[base ? 2 : 0],
						.to = o->range[base ? 3 : 1],
						.fold = f->fold,
						.into = after ? KP_FOLD_AFTER : KP_FOLD_BEFORE,
						.warn = o->warn,
						.warn_arg = o->warn_arg};
		int err = kp_diff_input_load(f->df, s, o->path[s], &so, &f->side[s], d);

		if (err < 0)
			return err;
	}
	return kp_diff_input_same_value(f->side[0].value, o->path[0], f->side[1].value, o->path[1],
					d);
}

static void warn(const struct kp_diff_files_opts *o, char *msg)
{
	if (o->warn)
		o->warn(o->warn_arg, msg);
	free(msg);
}

/* Warns when BASE and NEW were recorded differently enough that their
 * shares may differ for other reasons than the change. */
static void compare_sides(const struct kp_diff_input s[2], const struct kp_diff_files_opts *o)
{
	struct kp_run_meta m0, m1;
	const char *e0, *e1, *c0, *c1;

	kp_run_meta_read(s[0].meta, &m0);
	kp_run_meta_read(s[1].meta, &m1);
	e0 = m0.event;
	e1 = m1.event;
	c0 = m0.command;
	c1 = m1.command;

	if (e0 && e1 && strcmp(e0, e1) != 0)
		warn(o, kp_xasprintf("%s and %s sampled different events (%s, %s): their shares "
				     "measure different things",
				     s[0].path, s[1].path, e0, e1));
	if (c0 && c1) {
		char *n0 = kp_run_meta_program(c0), *n1 = kp_run_meta_program(c1);

		if (strcmp(n0, n1) != 0)
			warn(o, kp_xasprintf("%s and %s are recordings of different commands "
					     "('%s', '%s'): shares may differ for other reasons "
					     "than the change",
					     s[0].path, s[1].path, n0, n1));
		free(n0);
		free(n1);
	}
}

int kp_diff_files_finish(struct kp_diff_files *f, const struct kp_diff_files_opts *o,
			 struct kp_diag *d)
{
	int err = kp_diff_finish(f->df, d);

	if (err < 0)
		return err;
	compare_sides(f->side, o);
	if (o->gate && o->measure == KP_DIFF_TIME) {
		if (!kp_diff_time_tested(f->df))
			return kp_diag_set(d, -EINVAL,
					   "--fail-above %g%% gates CPU time a run: it needs two "
					   "runs or more a side, each with CPU time (a recording "
					   "of cpu-clock or task-clock, not folded text)",
					   o->fail_above);
		if (!kp_diff_ran_to_end(f->df))
			warn(o, kp_xasprintf("--fail-above %g%%: not every recording says its "
					     "command ran to its end (end=exit): CPU time a run "
					     "measures slower only for a command of fixed work "
					     "run to its end",
					     o->fail_above));
	}
	if (o->gate)
		kp_diff_gate_measure(f->df, o->measure, o->fail_above, &f->gate);
	/* the runs cannot see a growth of --fail-above */
	if (o->gate && kp_diff_gate_unresolved(&f->gate)) {
		char msg[1024];

		kp_diff_gate_format_warning(f->df, &f->gate, msg, sizeof(msg));
		warn(o, kp_xstrdup(msg));
	}
	return 0;
}

void kp_diff_files_report(const struct kp_diff_files *f, const struct kp_diff_files_opts *o,
			  size_t top, const char *command, struct kp_diff_report *r)
{
	*r = (struct kp_diff_report){
		.file = {o->path[0], o->path[1]},
		.profile = {f->side[0].meta, f->side[1].meta},
		.value = f->side[1].value,
		.unit = f->side[1].unit,
		.counts = f->side[1].counts,
		.top = top,
		.gate = o->gate ? &f->gate : NULL,
		.command = command,
	};
}

void kp_diff_files_fini(struct kp_diff_files *f)
{
	kp_diff_gate_fini(&f->gate);
	kp_folded_free(f->fold);
	kp_diff_free(f->df);
	kp_diff_input_fini(&f->side[0]);
	kp_diff_input_fini(&f->side[1]);
	memset(f, 0, sizeof(*f));
}
