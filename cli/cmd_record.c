/* kprof [record]: sample a command, processes or the whole machine and
 * write folded stacks or a flame graph. Parses (record_args.c), samples
 * and names frames (profiler/, symbolize/), writes each output (output.c)
 * and says how the run went (record_summary.c). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/messages.h"
#include "cli/output.h"
#include "cli/record_args.h"
#include "cli/record_every.h"
#include "cli/record_summary.h"
#include "profiler/session.h"
#include "profiler/window.h"
#include "symbolize/symbolize.h"

/* The symbolizer the outputs need, and the session sampling with it
 * (started: the command runs). Returns 0, or the exit status after
 * saying why. */
static int start(struct kp_record_args *c, const struct kp_outputs *outs,
		 struct kp_symbolizer **sym, struct kp_session **sess, char **cache_dir)
{
	struct kp_diag d = {""};
	const char *const *notes;
	size_t nnotes;
	int exit_code = 0;

	/* folded text, SVG and the top table name functions only: line tables
	 * are read only for the outputs that keep lines */
	if (!c->every.seconds) {
		c->sym.no_lines = true;
		for (size_t i = 0; i < outs->n; i++)
			if (outs->fmt[i]->lines)
				c->sym.no_lines = false;
	}
	if (!c->no_cache)
		c->sym.cache_dir = *cache_dir = kp_args_cache_dir();
	*sym = kp_sym_new(&c->sym);
	/* continuous: the kernel's symbols read now, before recording, not
	 * while the first window's samples wait in the rings */
	if (c->every.seconds)
		kp_sym_load_kernel(*sym);
	c->sess.sym = *sym;
	if (kp_session_new(sess, &c->sess, &exit_code, &d) < 0) {
		kp_err("%s", d.msg);
		return exit_code ? exit_code : 1;
	}
	notes = kp_session_notes(*sess, &nnotes);
	kp_warn_notes(notes, nnotes);
	return 0;
}

/* Samples until the command ends, the duration passes or a signal comes,
 * then names the profile's frames. Returns the profile (the session's). */
static struct kp_profile *record(const struct kp_record_args *c, struct kp_session *sess,
				 struct kp_symbolizer *sym, struct kp_session_stats *st)
{
	bool progress = isatty(STDERR_FILENO) && !c->quiet;
	struct kp_diag d = {""};
	struct kp_profile *prof;
	const char *const *notes;
	size_t nnotes;

	kp_session_run(sess, progress ? kp_record_summary_progress : NULL, NULL, &d);
	if (progress)
		fputs("\r\033[K", stderr);

	prof = kp_session_profile(sess);
	kp_window_name(sym, sess, prof);
	kp_session_stats(sess, st);
	kp_session_count_unresolved(sess);
	if (!st->samples && !st->off.waits)
		kp_session_report_empty(&c->sess, st, kp_record_say, NULL);
	notes = kp_session_notes(sess, &nnotes); /* the recording's */
	kp_warn_notes(notes, nnotes);
	notes = kp_sym_notes(sym, &nnotes);
	kp_warn_notes(notes, nnotes);
	return prof;
}

/* kprof --every: windows until the recording ends, each written and
 * pushed (record_every.c). Returns the exit status. */
static int record_every(struct kp_record_args *c)
{
	struct kp_session *sess = NULL;
	struct kp_symbolizer *sym = NULL;
	struct kp_push_windows *push = NULL;
	struct kp_outputs none = {0};
	char *cache_dir = NULL;
	const char *command = c->sess.command_is_target ? c->sess.argv[0] : NULL;
	int status;

	status = kp_record_every_check(c); /* and which need source lines */
	if (!status)
		status = kp_record_every_push(&push, c, command);
	if (!status)
		status = start(c, &none, &sym, &sess, &cache_dir);

	if (!status) {
		status = kp_record_every(c, sess, sym, push);
		if (!status)
			status = kp_session_exit_code(sess);
	}
	kp_push_windows_free(push);
	kp_session_free(sess);
	kp_sym_free(sym);
	free(cache_dir);
	return status;
}

/* Writes prof to every output, then the summary. Returns 0 or 1. */
static int write_outputs(struct kp_record_args *c, struct kp_outputs *outs,
			 const struct kp_session_stats *st, const struct kp_profile *prof)
{
	struct kp_output_ctx ctx = {0};
	char where[1024] = "";

	kp_record_args_output_ctx(c, prof, false, &ctx);
	if (kp_outputs_write(outs, &ctx, where, sizeof(where)))
		return 1;
	if (outs->terminal_top) {
		fprintf(stdout, "\n(stdout is a terminal: for the flame graph use -o FILE.svg or "
				"redirect stdout; -f folded for folded stacks)\n");
		kp_record_summary_print(c, st, prof, "the report above");
	} else {
		kp_record_summary_print(c, st, prof, where);
	}
	return 0;
}

int kp_cmd_record(int argc, char **argv)
{
	struct kp_record_args c;
	struct kp_session *sess = NULL;
	struct kp_symbolizer *sym = NULL;
	struct kp_outputs outs = {0};
	struct kp_session_stats st;
	struct kp_profile *prof;
	char *cache_dir = NULL;
	int r, status;

	kp_record_args_init(&c);
	r = kp_record_args_parse(&c, argc, argv);
	if (r != 0) {
		status = r > 0 ? 0 : 2;
		goto out;
	}
	if (c.every.seconds) {
		status = record_every(&c);
		goto out;
	}
	/* each output's format: -f, else the -o extension, else an SVG (the
	 * top functions when it would go to a terminal); none: stdout. The
	 * files are created before recording: a bad path fails at once. */
	status = kp_outputs_open(&outs, &kp_output_profile, c.format, c.outputs.v, c.outputs.n, "");
	if (status)
		goto out;
	status = start(&c, &outs, &sym, &sess, &cache_dir);
	if (status)
		goto out;
	prof = record(&c, sess, sym, &st);
	status = write_outputs(&c, &outs, &st, prof);
	if (status == 0)
		status = kp_session_exit_code(sess);
out:
	kp_outputs_free(&outs);
	kp_session_free(sess);
	kp_sym_free(sym);
	kp_record_args_free(&c);
	free(cache_dir);
	return status;
}
