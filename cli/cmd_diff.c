/* kprof diff [options] BASE NEW: what changed between two builds' profiles
 * (each one run, or a directory of runs), whether it is more than noise,
 * and a CI gate on it. Parses, compares both sides (diff/diff_files.h),
 * writes each output (output/output_diff.c), names the regressions.
 * Exit status: 0, 1 for errors, 2 for usage, 3 when the gate fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/opts.h"
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

struct diff_cli {
	struct kp_args_list outputs; /* -o, repeatable; none: stdout */
	const char *format;
	struct kp_diff_files_opts files; /* what to compare, and how */
	size_t top;
	struct kp_svg_opts svg;
};

static int set_fail_above(void *cli, const char *arg, const struct kp_opt *row)
{
	struct kp_diff_files_opts *f = &((struct diff_cli *)cli)->files;
	bool time; /* "15%": CPU time a run, in percent; "2": the share, in points */
	int r = kp_args_number_or_percent("diff", "fail-above", arg, 0, 100, 1e6, &time,
					  &f->fail_above);

	(void)row;
	f->gate = f->diff.attribute = true;
	f->measure = time ? KP_DIFF_TIME : KP_DIFF_SHARE;
	return r < 0 ? 2 : -1;
}

static int set_top(void *cli, const char *arg, const struct kp_opt *row)
{
	(void)row;
	return kp_args_top("diff", arg, 0, 100000000, &((struct diff_cli *)cli)->top) < 0 ? 2 : -1;
}

#define AT(f) KP_OPT_AT(struct diff_cli, f)

static const struct kp_opt opts[] = {
	{"format", 'f', KP_OPT_TEXT, AT(format),
	 .help = "  -f, --format FMT    text (default), json, svg (a differential flame graph:\n"
		 "                      NEW's shape, red where a share grew, blue where it "
		 "shrank),\n"
		 "                      folded (\"stack BASE NEW\" lines, as difffolded.pl),\n"
		 "                      markdown (a pull-request comment), junit (JUnit XML),\n"
		 "                      github (GitHub Actions annotations); default by the -o\n"
		 "                      extension (.txt .json .svg .folded .md .xml), else text\n"},
	{"output", 'o', KP_OPT_LIST, AT(outputs),
	 .help = "  -o, --output FILE   write here (default stdout; '-': stdout); repeatable: "
		 "each\n"
		 "                      in the format of its extension, -f for the others\n"},
	{"fail-above", 0, KP_OPT_CALL, .set = set_fail_above,
	 .help = "      --fail-above PCT  exit 3 when a function's total share grew by more than\n"
		 "                      PCT percentage points and the growth is significant;\n"
		 "                      PCT% (15%): its CPU time a run by more than PCT percent\n"},
	{"alpha", 0, KP_OPT_NUMBER, AT(files.diff.alpha), 0, 0.5, true,
	 .help = "      --alpha P       the chance of a false alarm a comparison: the gate's\n"
		 "                      level over every function it tests (default 0.01)\n"},
	{"dispersion", 0, KP_OPT_NUMBER, AT(files.diff.dispersion), 0, 1e6, true,
	 .help = "      --dispersion F  one run a side: counts vary F times more than independent\n"
		 "                      samples would (clustered samples); several: at least F\n"},
	{"gate-interrupts", 0, KP_OPT_FLAG, AT(files.diff.gate_interrupts),
	 .help = "      --gate-interrupts  gate interrupt work too (by default\n"
		 "                      the gate passes over it: it lands on whatever runs)\n"},
	{"value", 0, KP_OPT_TEXT, AT(files.value),
	 .help = "      --value NAME    the value shares are of (default: the profiles' first:\n"
		 "                      samples, or off-cpu, wall in such recordings), or another\n"
		 "                      of their values (cpu, off-cpu, wall); the test always\n"
		 "                      counts samples\n"},
	{"top", 0, KP_OPT_CALL, .set = set_top,
	 .help = "      --top N         functions listed per column (default 20; 0: all)\n"},
	{"base-shape", 0, KP_OPT_FLAG, AT(files.base_shape),
	 .help = "      --base-shape    svg: draw BASE's shape instead of NEW's (same colours)\n"},
	{"strict", 0, KP_OPT_FLAG, AT(files.load.strict),
	 .help = "      --strict        folded input: fail at the first malformed line\n"},
	{"from", 0, KP_OPT_TEXT, AT(files.range[0]),
	 .help = "      --from T, --to T  each profile of that time only (kprof report --help);\n"},
	{"to", 0, KP_OPT_TEXT, AT(files.range[1])},
	{"base-from", 0, KP_OPT_TEXT, AT(files.range[2]),
	 .help = "      --base-from T, --base-to T  BASE's instead (BASE and NEW one recording)\n"},
	{"base-to", 0, KP_OPT_TEXT, AT(files.range[3])},
	{"help", 'h', KP_OPT_HELP, .help = "  -h, --help          this help\n"},
};

static void usage(FILE *out)
{
	fputs("usage: kprof diff [options] BASE NEW\n"
	      "Compares two builds' profiles: which functions' share of the time grew or\n"
	      "shrank, and whether the change is more than noise. BASE and NEW are each a\n"
	      "profile (.kprof recording, folded stacks, zstd-compressed folded stacks) or a\n"
	      "directory of runs of one build (its *.kprof, *.folded, *.zst): with several\n"
	      "runs a side, how much each share varies between runs is measured, not assumed.\n",
	      out);
	kp_opts_help(opts, sizeof(opts) / sizeof(opts[0]), out);
	fputs("Exit status: 0, 1 for errors, 2 for usage, 3 when --fail-above fails.\n"
	      "Flame graph options (-f svg; --negate swaps the hues):\n",
	      out);
	kp_svg_options_help(out);
}

static const struct kp_opts table = {
	.cmd = "diff",
	KP_OPTS_ROWS(opts),
	.svg = true,
	.usage_status = 2,
	.help = usage,
	.operands_min = 2,
	.operands_max = 2,
	.operands_wrong =
		"diff: give two profiles or directories of runs, BASE and NEW (kprof diff --help)"};

static void warn_cb(void *arg, const char *msg)
{
	(void)arg;
	kp_warn("%s", msg);
}

static void err_cb(void *arg, const char *msg)
{
	(void)arg;
	kp_err("%s", msg);
}

int kp_cmd_diff(int argc, char **argv)
{
	struct diff_cli c = {.files = {.diff.alpha = 0.01, .warn = warn_cb}, .top = 20};
	struct kp_diff_files_opts *fo = &c.files;
	struct kp_diff_files files = {0};
	struct kp_outputs outs = {0};
	struct kp_diff_report r;
	struct kp_diag d = {{0}};
	char *cmdline = NULL;
	int status;

	kp_svg_opts_init(&c.svg);
	c.svg.title = NULL; /* a differential title unless one is given */
	status = kp_opts_parse(&table, argc, argv, &c, &c.svg);
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
	fo->fold = kp_outputs_diff_folded(&outs);
	status = 1;
	if (kp_diff_files_read(&files, fo, &d) < 0) {
		kp_err("%s", d.msg);
		goto out;
	}
	if (kp_diff_files_finish(&files, fo, &d) < 0) {
		kp_err("diff: %s", d.msg);
		goto out;
	}
	cmdline = kp_xjoin("kprof", argv, (size_t)argc);
	kp_diff_files_report(&files, fo, c.top, cmdline, &r);
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
		kp_diff_report_regressions(files.df, &files.gate, err_cb, NULL);
	status = fo->gate && files.gate.n ? EXIT_GATE : 0;
out:
	kp_outputs_free(&outs);
	kp_args_list_free(&c.outputs);
	free(cmdline);
	kp_diff_files_fini(&files);
	return status;
}
