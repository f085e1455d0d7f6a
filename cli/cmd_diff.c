/* kprof diff [options] BASE NEW: what changed between two builds' profiles
 * (each one run, or a directory of runs), whether it is more than noise,
 * and a CI gate on it. Parses, compares both sides (diff/diff_files.h),
 * writes each output (output/output_diff.c), names the regressions.
 * Exit status: 0, 1 for errors, 2 for usage, 3 when the gate fails. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/messages.h"
#include "cli/svg_options.h"
#include "cli/output.h"
#include "diff/diff.h"
#include "diff/diff_files.h"
#include "diff/diff_report.h"
#include "flamegraph/svg.h"
#include "util/xalloc.h"

#define EXIT_GATE 3

enum {
	OPT_FAIL_ABOVE = 2000,
	OPT_ALPHA,
	OPT_VALUE,
	OPT_TOP,
	OPT_BASE_SHAPE,
	OPT_STRICT,
	OPT_DISPERSION,
	OPT_GATE_INTERRUPTS,
	OPT_FROM, /* then --to, --base-from, --base-to */
};

static const struct option own_opts[] = {
	{"format", required_argument, NULL, 'f'},
	{"output", required_argument, NULL, 'o'},
	{"fail-above", required_argument, NULL, OPT_FAIL_ABOVE},
	{"alpha", required_argument, NULL, OPT_ALPHA},
	{"dispersion", required_argument, NULL, OPT_DISPERSION},
	{"gate-interrupts", no_argument, NULL, OPT_GATE_INTERRUPTS},
	{"value", required_argument, NULL, OPT_VALUE},
	{"top", required_argument, NULL, OPT_TOP},
	{"base-shape", no_argument, NULL, OPT_BASE_SHAPE},
	{"strict", no_argument, NULL, OPT_STRICT},
	{"help", no_argument, NULL, 'h'},
	{"from", required_argument, NULL, OPT_FROM},
	{"to", required_argument, NULL, OPT_FROM + 1},
	{"base-from", required_argument, NULL, OPT_FROM + 2},
	{"base-to", required_argument, NULL, OPT_FROM + 3},
};

struct diff_cli {
	struct kp_args_list outputs; /* -o, repeatable; none: stdout */
	const char *format;
	struct kp_diff_files_opts files; /* what to compare, and how */
	size_t top;
	struct kp_svg_opts svg;
};

static void usage(FILE *out)
{
	fputs("usage: kprof diff [options] BASE NEW\n"
	      "Compares two builds' profiles: which functions' share of the time grew or\n"
	      "shrank, and whether the change is more than noise. BASE and NEW are each a\n"
	      "profile (.kprof recording, folded stacks, zstd-compressed folded stacks) or a\n"
	      "directory of runs of one build (its *.kprof, *.folded, *.zst): with several\n"
	      "runs a side, how much each share varies between runs is measured, not assumed.\n"
	      "  -f, --format FMT    text (default), json, svg (a differential flame graph:\n"
	      "                      NEW's shape, red where a share grew, blue where it shrank),\n"
	      "                      folded (\"stack BASE NEW\" lines, as difffolded.pl),\n"
	      "                      markdown (a pull-request comment), junit (JUnit XML),\n"
	      "                      github (GitHub Actions annotations); default by the -o\n"
	      "                      extension (.txt .json .svg .folded .md .xml), else text\n"
	      "  -o, --output FILE   write here (default stdout; '-': stdout); repeatable: each\n"
	      "                      in the format of its extension, -f for the others\n"
	      "      --fail-above PCT  exit 3 when a function's total share grew by more than\n"
	      "                      PCT percentage points and the growth is significant;\n"
	      "                      PCT% (15%): its CPU time a run by more than PCT percent\n"
	      "      --alpha P       significance level after Holm's correction (default 0.01)\n"
	      "      --dispersion F  one run a side: counts vary F times more than independent\n"
	      "                      samples would (clustered samples); several: at least F\n"
	      "      --gate-interrupts  gate interrupt work too (by default\n"
	      "                      the gate passes over it: it lands on whatever runs)\n"
	      "      --value NAME    the value shares are of (default: the profiles' first:\n"
	      "                      samples, or off-cpu, wall in such recordings), or another\n"
	      "                      of their values (cpu, off-cpu, wall); the test always\n"
	      "                      counts samples\n"
	      "      --top N         functions listed per column (default 20; 0: all)\n"
	      "      --base-shape    svg: draw BASE's shape instead of NEW's (same colours)\n"
	      "      --strict        folded input: fail at the first malformed line\n"
	      "      --from T, --to T  each profile of that time only (kprof report --help);\n"
	      "      --base-from T, --base-to T  BASE's instead (BASE and NEW one recording)\n"
	      "  -h, --help          this help\n"
	      "Exit status: 0, 1 for errors, 2 for usage, 3 when --fail-above fails.\n"
	      "Flame graph options (-f svg; --negate swaps the hues):\n",
	      out);
	kp_svg_options_help(out);
}

/* A number option of ours: 1, or -2 after saying why not. */
static int number(const char *opt, double min, double max, bool open_min, double *out)
{
	return kp_args_number("diff", opt, optarg, min, max, open_min, out) < 0 ? -2 : 1;
}

/* One option of ours (not an SVG one). Returns 1 when handled, 0 when
 * not ours, or the exit status (>= 2 never: -2 for a usage error, -3 for
 * --help). */
static int own_option(int ch, struct diff_cli *c, char **argv)
{
	switch (ch) {
	case 'f':
		c->format = optarg;
		return 1;
	case 'o':
		kp_args_list_add(&c->outputs, optarg);
		return 1;
	case OPT_FAIL_ABOVE: {
		bool time; /* "15%": CPU time a run, in percent; "2": the share, in points */
		int r = kp_args_number_or_percent("diff", "fail-above", optarg, 0, 100, 1e6, &time,
						  &c->files.fail_above);

		c->files.gate = c->files.diff.attribute = true;
		c->files.measure = time ? KP_DIFF_TIME : KP_DIFF_SHARE;
		return r < 0 ? -2 : 1;
	}
	case OPT_ALPHA:
		return number("alpha", 0, 0.5, true, &c->files.diff.alpha);
	case OPT_DISPERSION:
		return number("dispersion", 0, 1e6, true, &c->files.diff.dispersion);
	case OPT_GATE_INTERRUPTS:
		c->files.diff.gate_interrupts = true;
		return 1;
	case OPT_VALUE:
		c->files.value = optarg;
		return 1;
	case OPT_TOP:
		return kp_args_top("diff", optarg, 0, 100000000, &c->top) < 0 ? -2 : 1;
	case OPT_BASE_SHAPE:
		c->files.base_shape = true;
		return 1;
	case OPT_STRICT:
		c->files.load.strict = true;
		return 1;
	case OPT_FROM:
	case OPT_FROM + 1:
	case OPT_FROM + 2:
	case OPT_FROM + 3:
		c->files.range[ch - OPT_FROM] = optarg;
		return 1;
	case 'h':
		usage(stdout);
		return -3;
	case '?':
		kp_args_unknown("diff", argv);
		return -2;
	default:
		return 0;
	}
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct diff_cli *c)
{
	struct option *opts = kp_svg_options_with(own_opts, sizeof(own_opts) / sizeof(own_opts[0]));
	int ch, status = -1;

	optind = 1;
	opterr = 0;
	while (status < 0 && (ch = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
		int r = own_option(ch, c, argv);

		if (r == -2)
			status = 2;
		else if (r == -3)
			status = 0;
		else if (r == 0 && (r = kp_svg_options_apply(ch, optarg, &c->svg)) <= 0) {
			if (r == 0)
				usage(stderr);
			status = 2;
		}
	}
	free(opts);
	if (status < 0 && optind != argc - 2) {
		kp_err("diff: give two profiles or directories of runs, BASE and NEW (kprof diff "
		       "--help)");
		status = 2;
	}
	return status;
}

static void warn_cb(void *arg, const char *msg)
{
	(void)arg;
	kp_warn("%s", msg);
}

/* Names every regression on stderr: a CI log shows them whatever the
 * outputs. */
static void report_gate(const struct kp_diff *df, const struct kp_diff_gate *g)
{
	char line[1024];

	for (size_t k = 0; k < g->n; k++) {
		const struct kp_diff_function *fn = kp_diff_function(df, g->fn[k]);

		kp_diff_report_format_regression(df, g, k, line, sizeof(line));
		kp_err("regression: %.*s%s: %s", (int)(fn->name_len > 200 ? 200 : fn->name_len),
		       fn->name, kp_frame_kind_note(fn->kind), line);
	}
}

/* Reads both sides, compares them and decides the gate. Returns 0, or 1
 * after saying why. */
static int compare(struct kp_diff_files *files, const struct kp_diff_files_opts *o)
{
	struct kp_diag d = {{0}};

	if (kp_diff_files_read(files, o, &d) < 0) {
		kp_err("%s", d.msg);
		return 1;
	}
	if (kp_diff_files_finish(files, o, &d) < 0) {
		kp_err("diff: %s", d.msg);
		return 1;
	}
	/* the runs cannot see a growth of --fail-above */
	if (o->gate && kp_diff_gate_unresolved(&files->gate)) {
		kp_diff_gate_format_warning(files->df, &files->gate, d.msg, sizeof(d.msg));
		kp_warn("%s", d.msg);
	}
	return 0;
}

int kp_cmd_diff(int argc, char **argv)
{
	struct diff_cli c = {.files = {.diff.alpha = 0.01, .warn = warn_cb}, .top = 20};
	struct kp_diff_files_opts *fo = &c.files;
	struct kp_diff_files files = {0};
	struct kp_outputs outs = {0};
	struct kp_diff_report r;
	char *cmdline = NULL;
	int status;

	kp_svg_opts_init(&c.svg);
	c.svg.title = NULL; /* a differential title unless one is given */
	status = parse_args(argc, argv, &c);
	if (status >= 0)
		goto out;
	fo->path[0] = argv[optind];
	fo->path[1] = argv[optind + 1];
	if (strcmp(fo->path[0], "-") == 0 && strcmp(fo->path[1], "-") == 0) {
		kp_err("diff: BASE and NEW cannot both be stdin");
		status = 2;
		goto out;
	}
	/* created before the profiles are read: a bad path fails at once */
	status = kp_outputs_open(&outs, &kp_output_diff, c.format, c.outputs.v, c.outputs.n,
				 "diff: ");
	if (status)
		goto out;
	for (size_t i = 0; i < outs.n; i++)
		fo->fold |= outs.fmt[i]->diff_folded;
	status = compare(&files, fo);
	if (status)
		goto out;
	cmdline = kp_args_command_line(argc, argv);
	r = (struct kp_diff_report){
		.file = {fo->path[0], fo->path[1]},
		.profile = {files.side[0].meta, files.side[1].meta},
		.value = files.side[1].value,
		.unit = files.side[1].unit,
		.counts = files.side[1].counts,
		.top = c.top,
		.gate = fo->gate ? &files.gate : NULL,
		.command = cmdline,
	};
	status = kp_outputs_write(
		&outs,
		&(struct kp_output_ctx){
			.svg = &c.svg,
			.diff = &(struct kp_output_diff){.files = &files,
							 .report = &r,
							 .value = fo->value,
							 .base_shape = fo->base_shape}},
		NULL, 0);
	if (status)
		goto out;
	if (fo->gate)
		report_gate(files.df, &files.gate);
	status = fo->gate && files.gate.n ? EXIT_GATE : 0;
out:
	kp_outputs_free(&outs);
	kp_args_list_free(&c.outputs);
	free(cmdline);
	kp_diff_files_fini(&files);
	return status;
}
