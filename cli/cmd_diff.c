/* kprof diff [options] BASE NEW: what changed between two builds' profiles
 * (each one run, or a directory of runs), whether it is more than noise,
 * and a CI gate on it. Parses, reads both sides into a diff
 * (diff/diff_input.h), writes each output, names the regressions.
 * Exit status: 0, 1 for errors, 2 for usage, 3 when the gate fails. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/messages.h"
#include "cli/svg_options.h"
#include "diff/diff.h"
#include "diff/diff_report.h"
#include "diff/diff_input.h"
#include "flamegraph/svg.h"
#include "formats/folded_write.h"
#include "profile/run_meta.h"
#include "util/outfile.h"
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
};

enum format { FMT_TEXT, FMT_JSON, FMT_SVG, FMT_FOLDED, FMT_MARKDOWN, FMT_JUNIT, FMT_GITHUB };

static const struct {
	const char *name, *ext;
} formats[] = {
	/* clang-format off */
	[FMT_TEXT] = {"text", ".txt"},
	[FMT_JSON] = {"json", ".json"},
	[FMT_SVG] = {"svg", ".svg"},
	[FMT_FOLDED] = {"folded", ".folded"},
	[FMT_MARKDOWN] = {"markdown", ".md"},
	[FMT_JUNIT] = {"junit", ".xml"},
	[FMT_GITHUB] = {"github", NULL},
	/* clang-format on */
};

#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

struct diff_cli {
	struct kp_args_list outputs; /* -o, repeatable; none: stdout */
	const char *format, *value;
	bool gate, base_shape, strict, gate_interrupts;
	double fail_above, alpha, dispersion;
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
	      "                      PCT percentage points and the growth is significant\n"
	      "      --alpha P       significance level after Holm's correction (default 0.01)\n"
	      "      --dispersion F  one run a side: counts vary F times more than independent\n"
	      "                      samples would (clustered samples); several: at least F\n"
	      "      --gate-interrupts  one run a side: gate interrupt work too (by default\n"
	      "                      the gate passes over it: it lands on whatever runs)\n"
	      "      --value NAME    the value shares are of: samples (default), or another value\n"
	      "                      of the recordings (e.g. cpu); the test always counts samples\n"
	      "      --top N         functions listed per column (default 20; 0: all)\n"
	      "      --base-shape    svg: draw BASE's shape instead of NEW's (same colours)\n"
	      "      --strict        folded input: fail at the first malformed line\n"
	      "  -h, --help          this help\n"
	      "Exit status: 0, 1 for errors, 2 for usage, 3 when --fail-above fails.\n"
	      "Flame graph options (-f svg; --negate swaps the hues):\n",
	      out);
	kp_svg_options_help(out);
}

static int parse_number(const char *opt, const char *arg, double min, double max, bool open_min,
			double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (!*arg || *end || errno || !isfinite(v) || v < min || v > max ||
	    (open_min && v == min)) {
		kp_err("diff: --%s: expected a number %s %g to %g, not '%s'", opt,
		       open_min ? "above" : "from", min, max, arg);
		return -1;
	}
	*out = v;
	return 0;
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
	case OPT_FAIL_ABOVE:
		c->gate = true;
		return parse_number("fail-above", optarg, 0, 100, false, &c->fail_above) < 0 ? -2
											     : 1;
	case OPT_ALPHA:
		return parse_number("alpha", optarg, 0, 0.5, true, &c->alpha) < 0 ? -2 : 1;
	case OPT_DISPERSION:
		return parse_number("dispersion", optarg, 0, 1e6, true, &c->dispersion) < 0 ? -2
											    : 1;
	case OPT_GATE_INTERRUPTS:
		c->gate_interrupts = true;
		return 1;
	case OPT_VALUE:
		c->value = optarg;
		return 1;
	case OPT_TOP:
		return kp_args_top("diff", optarg, 0, 100000000, &c->top) < 0 ? -2 : 1;
	case OPT_BASE_SHAPE:
		c->base_shape = true;
		return 1;
	case OPT_STRICT:
		c->strict = true;
		return 1;
	case 'h':
		usage(stdout);
		return -3;
	case '?':
		if (optopt > 0 && optopt < 128)
			kp_err("diff: option -%c: unknown or missing its value", optopt);
		else
			kp_err("diff: unknown option or missing value: %s", argv[optind - 1]);
		fputs("Try 'kprof diff --help'.\n", stderr);
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
		else if (r == 0 && (r = kp_svg_option(ch, optarg, &c->svg)) <= 0) {
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

/* The format of output path (NULL or "-": stdout): with one output -f,
 * else its extension; with several each its extension, -f where it has
 * none of ours (stdout); else text. -1 for an unknown -f. */
static int choose_format(const struct diff_cli *c, const char *path)
{
	size_t len = path ? strlen(path) : 0;
	int by_name = -1, by_ext = -1;

	for (size_t i = 0; i < NFORMATS; i++) {
		size_t el = formats[i].ext ? strlen(formats[i].ext) : 0;

		if (c->format && strcmp(c->format, formats[i].name) == 0)
			by_name = (int)i;
		if (el && len > el && strcmp(path + len - el, formats[i].ext) == 0)
			by_ext = (int)i;
	}
	if (c->format && by_name < 0) {
		kp_err("diff: unknown format '%s' (text, json, svg, folded, markdown, junit, "
		       "github)",
		       c->format);
		return -1;
	}
	if (by_name >= 0 && (c->outputs.n <= 1 || by_ext < 0))
		return by_name;
	return by_ext >= 0 ? by_ext : FMT_TEXT;
}

static void warn_cb(void *arg, const char *msg)
{
	(void)arg;
	kp_warn("%s", msg);
}

/* Warns when BASE and NEW were recorded differently enough that their
 * shares may differ for other reasons than the change. */
static void compare_sides(const struct kp_diff_input s[2])
{
	const char *e0 = kp_profile_meta(s[0].meta, KP_META_EVENT),
		   *e1 = kp_profile_meta(s[1].meta, KP_META_EVENT);
	const char *c0 = kp_profile_meta(s[0].meta, KP_META_COMMAND);
	const char *c1 = kp_profile_meta(s[1].meta, KP_META_COMMAND);

	if (e0 && e1 && strcmp(e0, e1) != 0)
		kp_warn("%s and %s sampled different events (%s, %s): their shares measure "
			"different things",
			s[0].path, s[1].path, e0, e1);
	if (c0 && c1) {
		char *n0 = kp_run_meta_program(c0), *n1 = kp_run_meta_program(c1);

		if (strcmp(n0, n1) != 0)
			kp_warn("%s and %s are recordings of different commands ('%s', '%s'): "
				"shares may differ for other reasons than the change",
				s[0].path, s[1].path, n0, n1);
		free(n0);
		free(n1);
	}
}

/* The differential flame graph's tooltip note: the function's CPU time a
 * run in BASE and NEW. */
struct seconds_note {
	const struct kp_diff *df;
	char buf[160];
};

static const char *seconds_note(void *arg, const char *name, size_t len, enum kp_frame_kind kind)
{
	struct seconds_note *sn = arg;
	const struct kp_diff_function *fn = kp_diff_find(sn->df, name, len, kind);
	char sec[96];

	if (!fn)
		return NULL;
	char *paren;

	kp_diff_format_seconds(&fn->col[KP_DIFF_TOTAL], sec, sizeof(sec));
	if (!sec[0])
		return NULL;
	/* no parenthesis inside the title's own: viewers (and flamegraph.pl's
	 * script) take the name as what comes before the last "(" */
	paren = strrchr(sec, '(');
	if (paren && paren > sec) {
		/* "a -> b s (+30%)" -> "a -> b s, +30%" */
		paren[-1] = ',';
		paren[0] = ' ';
		sec[strlen(sec) - 1] = '\0';
	}
	snprintf(sn->buf, sizeof(sn->buf), "the function: CPU a run %s", sec);
	return sn->buf;
}

static int write_svg(const struct diff_cli *c, const struct kp_diff *df, const struct kp_folded *f,
		     const struct kp_diff_input s[2], FILE *out, struct kp_diag *d)
{
	struct kp_svg_opts so = c->svg;
	struct seconds_note sn = {.df = df};
	char subtitle[1024];

	so.diff_shares = true;
	so.diff_swapped = c->base_shape;
	/* BASE as AFTER: its deltas are BASE - NEW, so growth is negative */
	so.negate = so.negate != c->base_shape;
	so.frame_note = seconds_note;
	so.frame_note_arg = &sn;
	if (!so.title)
		so.title = "Differential Flame Graph";
	/* the titles count what the shares are of */
	if (c->value && strcmp(so.countname, "samples") == 0)
		so.countname = c->value;
	if (!so.subtitle) {
		snprintf(subtitle, sizeof(subtitle),
			 "%s's shape; red: share grew from %s to %s, blue: share shrank",
			 c->base_shape ? s[0].path : s[1].path, s[0].path, s[1].path);
		so.subtitle = subtitle;
	}
	return kp_svg_write(f, &so, out, d);
}

static int write_output(const struct diff_cli *c, int fmt, const struct kp_diff *df,
			const struct kp_folded *f, const struct kp_diff_input s[2],
			const struct kp_diff_report *r, FILE *out, struct kp_diag *d)
{
	int err;

	switch (fmt) {
	case FMT_JSON:
		return kp_diff_write_json(df, r, out, d);
	case FMT_SVG:
		return write_svg(c, df, f, s, out, d);
	case FMT_FOLDED:
		err = kp_folded_write(f, out, KP_FOLDED_ANNOTATE_ALL);
		break;
	case FMT_MARKDOWN:
		err = kp_diff_write_markdown(df, r, out);
		break;
	case FMT_JUNIT:
		err = kp_diff_write_junit(df, r, out);
		break;
	case FMT_GITHUB:
		err = kp_diff_write_github(df, r, out);
		break;
	default:
		err = kp_diff_write_text(df, r, out);
		break;
	}
	return err ? kp_diag_errno(d, err, "cannot write the output") : 0;
}

/* Names every regression on stderr: a CI log shows them whatever the
 * outputs. */
static void report_gate(const struct kp_diff *df, const struct kp_diff_gate *g)
{
	char line[1024];

	for (size_t k = 0; k < g->n; k++) {
		const struct kp_diff_function *fn = kp_diff_function(df, g->fn[k]);

		kp_diff_format_regression(df, g, k, line, sizeof(line));
		kp_err("regression: %.*s%s: %s", (int)(fn->name_len > 200 ? 200 : fn->name_len),
		       fn->name, kp_frame_kind_note(fn->kind), line);
	}
}

/* Warns when one run a side cannot see a growth of --fail-above. */
static void warn_resolution(const struct kp_diff *df, const struct kp_diff_gate *g)
{
	/* with several runs a side the report's note says it: the runs are
	 * what the user can give, a warning on every CI run would be noise */
	if (kp_diff_measured(df) || g->points >= g->resolution)
		return;
	kp_warn("one run a side resolves growths of total share from %.2f points (in a function "
		"holding half of the samples): --fail-above %g can pass a smaller real "
		"regression; record longer, or several runs a side (docs/diff.md)",
		g->resolution, g->points);
}

/* "kprof diff ARG...": the command line for the reports. */
static char *command_line(int argc, char **argv)
{
	size_t len = 6;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = kp_xmalloc(len);
	strcpy(s, "kprof");
	for (int i = 0; i < argc; i++) {
		strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

int kp_cmd_diff(int argc, char **argv)
{
	struct diff_cli c = {.alpha = 0.01, .top = 20};
	struct kp_diff_input side[2] = {{0}};
	struct kp_diff *df = NULL;
	struct kp_diff_gate gate = {0};
	struct kp_folded *fold = NULL;
	struct kp_outfile *outs = NULL;
	int *fmts = NULL, status;
	size_t nout = 0;
	struct kp_diag d = {{0}};
	char *cmdline = NULL;
	const char *file[2];

	kp_svg_opts_init(&c.svg);
	c.svg.title = NULL; /* a differential title unless one is given */
	status = parse_args(argc, argv, &c);
	if (status >= 0)
		goto out;
	status = 2;
	file[0] = argv[optind];
	file[1] = argv[optind + 1];
	if (strcmp(file[0], "-") == 0 && strcmp(file[1], "-") == 0) {
		kp_err("diff: BASE and NEW cannot both be stdin");
		goto out;
	}
	nout = c.outputs.n ? c.outputs.n : 1;
	fmts = kp_xcalloc(nout, sizeof(*fmts));
	outs = kp_xcalloc(nout, sizeof(*outs));
	for (size_t i = 0; i < nout; i++) {
		fmts[i] = choose_format(&c, c.outputs.n ? c.outputs.v[i] : NULL);
		if (fmts[i] < 0)
			goto out;
		if ((fmts[i] == FMT_SVG || fmts[i] == FMT_FOLDED) && !fold)
			fold = kp_folded_new();
	}
	status = 1;
	/* created before the profiles are read: a bad path fails at once */
	for (size_t i = 0; i < nout; i++)
		if (kp_outfile_open(&outs[i], c.outputs.n ? c.outputs.v[i] : NULL, &d) < 0) {
			kp_err("%s", d.msg);
			goto out;
		}
	df = kp_diff_new(&(struct kp_diff_opts){.alpha = c.alpha,
						.dispersion = c.dispersion,
						.gate_interrupts = c.gate_interrupts});
	for (int s = 0; s < 2; s++) {
		/* the shape drawn is AFTER: NEW's, or BASE's with --base-shape */
		bool after = (s == KP_DIFF_NEW) != c.base_shape;
		struct kp_diff_input_opts so = {.load = {.strict = c.strict},
						.value = c.value,
						.fold = fold,
						.into = after ? KP_FOLD_AFTER : KP_FOLD_BEFORE,
						.warn = warn_cb};

		if (kp_diff_input_load(df, s, file[s], &so, &side[s], &d) < 0) {
			kp_err("%s", d.msg);
			goto out;
		}
	}
	if (kp_diff_finish(df, &d) < 0) {
		kp_err("diff: %s", d.msg);
		goto out;
	}
	compare_sides(side);
	if (c.gate) {
		kp_diff_gate(df, c.fail_above, &gate);
		warn_resolution(df, &gate);
	}
	cmdline = command_line(argc, argv);
	for (size_t i = 0; i < nout; i++) {
		struct kp_diff_report r = {
			.file = {file[0], file[1]},
			.profile = {side[0].meta, side[1].meta},
			.value = side[1].value,
			.unit = side[1].unit,
			.counts = side[1].counts,
			.top = c.top,
			.gate = c.gate ? &gate : NULL,
			.command = cmdline,
		};

		if (write_output(&c, fmts[i], df, fold, side, &r, outs[i].fp, &d) < 0 ||
		    kp_outfile_commit(&outs[i], &d) < 0) {
			kp_err("%s", d.msg[0] ? d.msg : "cannot write the output");
			goto out;
		}
	}
	if (c.gate)
		report_gate(df, &gate);
	status = c.gate && gate.n ? EXIT_GATE : 0;
out:
	for (size_t i = 0; outs && i < nout; i++)
		kp_outfile_abort(&outs[i]);
	free(outs);
	free(fmts);
	kp_args_list_free(&c.outputs);
	free(cmdline);
	kp_diff_gate_fini(&gate);
	kp_folded_free(fold);
	kp_diff_free(df);
	kp_diff_input_fini(&side[0]);
	kp_diff_input_fini(&side[1]);
	return status;
}
