/* kprof diff BASE NEW [-f text|json|svg|folded] [-o OUT] [--fail-above PCT]
 * [--alpha P] [--value NAME] [SVG options]: what changed between two
 * profiles, whether it is more than sampling noise, and a CI gate on it.
 * Exit status: 0, 1 for errors, 2 for usage, 3 when the gate fails. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/svg_options.h"
#include "flamegraph/diff.h"
#include "flamegraph/diff_report.h"
#include "flamegraph/profile_fold.h"
#include "flamegraph/profile_load.h"
#include "flamegraph/svg.h"
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
};

static const struct option own_opts[] = {
	{"format", required_argument, NULL, 'f'},
	{"output", required_argument, NULL, 'o'},
	{"fail-above", required_argument, NULL, OPT_FAIL_ABOVE},
	{"alpha", required_argument, NULL, OPT_ALPHA},
	{"dispersion", required_argument, NULL, OPT_DISPERSION},
	{"value", required_argument, NULL, OPT_VALUE},
	{"top", required_argument, NULL, OPT_TOP},
	{"base-shape", no_argument, NULL, OPT_BASE_SHAPE},
	{"strict", no_argument, NULL, OPT_STRICT},
	{"help", no_argument, NULL, 'h'},
};

enum format { FMT_TEXT, FMT_JSON, FMT_SVG, FMT_FOLDED };

static const struct {
	const char *name, *ext;
} formats[] = {
	[FMT_TEXT] = {"text", ".txt"},
	[FMT_JSON] = {"json", ".json"},
	[FMT_SVG] = {"svg", ".svg"},
	[FMT_FOLDED] = {"folded", ".folded"},
};

struct diff_cli {
	const char *opath, *format, *value;
	bool gate, base_shape, strict;
	double fail_above, alpha, dispersion;
	size_t top;
	bool top_given;
	struct kp_svg_opts svg;
};

static void usage(FILE *out)
{
	fputs("usage: kprof diff [options] BASE NEW\n"
	      "Compares two profiles (.kprof recordings, folded stacks, zstd-compressed folded\n"
	      "stacks): which functions' share of the time grew or shrank, and whether the\n"
	      "change is more than sampling noise.\n"
	      "  -f, --format FMT    text (default), json, svg (a differential flame graph:\n"
	      "                      NEW's shape, red where a share grew, blue where it shrank),\n"
	      "                      folded (\"stack BASE NEW\" lines, as difffolded.pl); default\n"
	      "                      by the -o extension (.txt .json .svg .folded), else text\n"
	      "  -o, --output FILE   write here (default stdout)\n"
	      "      --fail-above PCT  exit 3 when a function's total share grew by more than\n"
	      "                      PCT percentage points and the growth is significant\n"
	      "      --alpha P       significance level after Holm's correction (default 0.01)\n"
	      "      --dispersion F  counts vary F times more than independent samples would\n"
	      "                      (clustered samples; measure F on same-build pairs, "
	      "docs/diff.md)\n"
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

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct diff_cli *c)
{
	struct option *opts = kp_svg_options_with(own_opts, sizeof(own_opts) / sizeof(own_opts[0]));
	int ch, status = -1;

	optind = 1;
	opterr = 0;
	while (status < 0 && (ch = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
		int r;

		switch (ch) {
		case 'f':
			c->format = optarg;
			continue;
		case 'o':
			c->opath = optarg;
			continue;
		case OPT_FAIL_ABOVE:
			c->gate = true;
			if (parse_number("fail-above", optarg, 0, 100, false, &c->fail_above) < 0)
				status = 2;
			continue;
		case OPT_ALPHA:
			if (parse_number("alpha", optarg, 0, 0.5, true, &c->alpha) < 0)
				status = 2;
			continue;
		case OPT_DISPERSION:
			if (parse_number("dispersion", optarg, 1, 1e6, false, &c->dispersion) < 0)
				status = 2;
			continue;
		case OPT_VALUE:
			c->value = optarg;
			continue;
		case OPT_TOP: {
			char *end;
			long n = strtol(optarg, &end, 10);

			if (*end || end == optarg || n < 0 || n > 100000000) {
				kp_err("diff: --top: expected a count (0: all), not '%s'", optarg);
				status = 2;
			}
			c->top = (size_t)n;
			c->top_given = true;
			continue;
		}
		case OPT_BASE_SHAPE:
			c->base_shape = true;
			continue;
		case OPT_STRICT:
			c->strict = true;
			continue;
		case 'h':
			usage(stdout);
			status = 0;
			continue;
		case '?':
			if (optopt > 0 && optopt < 128)
				kp_err("diff: option -%c: unknown or missing its value", optopt);
			else
				kp_err("diff: unknown option or missing value: %s",
				       argv[optind - 1]);
			fputs("Try 'kprof diff --help'.\n", stderr);
			status = 2;
			continue;
		default:
			break;
		}
		r = kp_svg_option(ch, optarg, &c->svg);
		if (r <= 0) {
			if (r == 0)
				usage(stderr);
			status = 2;
		}
	}
	free(opts);
	if (status < 0 && optind != argc - 2) {
		kp_err("diff: give two profiles, BASE and NEW (kprof diff --help)");
		status = 2;
	}
	return status;
}

static int choose_format(const struct diff_cli *c)
{
	size_t len = c->opath ? strlen(c->opath) : 0;

	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		size_t el = strlen(formats[i].ext);

		if (c->format && strcmp(c->format, formats[i].name) == 0)
			return (int)i;
		if (!c->format && len > el && strcmp(c->opath + len - el, formats[i].ext) == 0)
			return (int)i;
	}
	if (c->format) {
		kp_err("diff: unknown format '%s' (text, json, svg, folded)", c->format);
		return -1;
	}
	return FMT_TEXT;
}

/* The value index shares are of: --value, else "samples", else the first. */
static int share_value(const struct kp_profile *p, const char *file, const char *name)
{
	int v = kp_profile_find_value(p, name ? name : "samples");

	if (v < 0 && name) {
		kp_err("diff: %s has no value '%s'", file, name);
		return -1;
	}
	return v < 0 ? 0 : v;
}

/* The value the test counts: "samples", else (folded text named otherwise)
 * the first value, said so. */
static size_t count_value(const struct kp_profile *p, const char *file)
{
	int v = kp_profile_find_value(p, "samples");
	const struct kp_profile_value_type *vt;

	if (v >= 0) {
		vt = kp_profile_value_type(p, (size_t)v);
		if (vt->decimals)
			kp_warn("%s: its sample counts have decimals: the test takes them as "
				"counts",
				file);
		return (size_t)v;
	}
	vt = kp_profile_value_type(p, 0);
	kp_warn("%s has no sample counts ('samples'): the test takes its '%s' values for "
		"counts of independent samples",
		file, kp_profile_str(p, vt->type, NULL));
	return 0;
}

/* The command a recording profiled, from its kprof command line: the words
 * after "--", else the line without what only chooses outputs (-o, -f and
 * their long forms). Two recordings of one program written to different
 * files, or at different frequencies, are of the same command. Returns a
 * new string. */
static char *command_of(const char *cmd)
{
	const char *dashes = strstr(cmd, " -- ");
	char *copy, *out, *save = NULL, *w;
	bool skip = false;
	size_t n = 0;

	if (dashes)
		return kp_xstrdup(dashes + 4);
	copy = kp_xstrdup(cmd);
	out = kp_xmalloc(strlen(cmd) + 1);
	for (w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (skip) {
			skip = false;
			continue;
		}
		if (strcmp(w, "-o") == 0 || strcmp(w, "-f") == 0 || strcmp(w, "--output") == 0 ||
		    strcmp(w, "--format") == 0) {
			skip = true;
			continue;
		}
		if (strncmp(w, "-o", 2) == 0 || strncmp(w, "-f", 2) == 0 ||
		    strncmp(w, "--output=", 9) == 0 || strncmp(w, "--format=", 9) == 0)
			continue;
		n += (size_t)sprintf(out + n, "%s%s", n ? " " : "", w);
	}
	out[n] = '\0';
	free(copy);
	return out;
}

/* Warns when BASE and NEW were recorded differently enough that their
 * shares may differ for other reasons than the change. */
static void compare_runs(const struct kp_profile *const p[2], const char *const file[2])
{
	const char *e0 = kp_profile_meta(p[0], KP_META_EVENT),
		   *e1 = kp_profile_meta(p[1], KP_META_EVENT);
	const char *c0 = kp_profile_meta(p[0], KP_META_COMMAND);
	const char *c1 = kp_profile_meta(p[1], KP_META_COMMAND);

	if (e0 && e1 && strcmp(e0, e1) != 0)
		kp_warn("%s and %s sampled different events (%s, %s): their shares measure "
			"different things",
			file[0], file[1], e0, e1);
	if (c0 && c1) {
		char *n0 = command_of(c0), *n1 = command_of(c1);

		if (strcmp(n0, n1) != 0)
			kp_warn("%s and %s are recordings of different commands ('%s', '%s'): "
				"shares may differ for other reasons than the change",
				file[0], file[1], n0, n1);
		free(n0);
		free(n1);
	}
}

/* The differential folded table of the two profiles: AFTER from the shape
 * drawn (NEW's, or BASE's with --base-shape), BEFORE from the other. */
static struct kp_folded *diff_table(const struct kp_profile *const p[2], const size_t value[2],
				    bool base_shape, struct kp_diag *d)
{
	struct kp_folded *f = kp_folded_new();
	int after = base_shape ? 0 : 1;
	struct kp_fold_opts ob = {.value = value[!after], .into = KP_FOLD_BEFORE};
	struct kp_fold_opts oa = {.value = value[after], .into = KP_FOLD_AFTER};

	if (!kp_folded_add_profile(f, p[!after], &ob) || !kp_folded_add_profile(f, p[after], &oa)) {
		kp_diag_set(d, -ERANGE, "the profiles' values cannot be put side by side exactly");
		kp_folded_free(f);
		return NULL;
	}
	return f;
}

static int write_svg(const struct diff_cli *c, const struct kp_profile *const p[2],
		     const char *const file[2], const size_t value[2], FILE *out, struct kp_diag *d)
{
	struct kp_svg_opts so = c->svg;
	struct kp_folded *f = diff_table(p, value, c->base_shape, d);
	char subtitle[1024];
	int err;

	if (!f)
		return -ERANGE;
	so.diff_shares = true;
	so.diff_swapped = c->base_shape;
	/* BASE as AFTER: its deltas are BASE - NEW, so growth is negative */
	so.negate = so.negate != c->base_shape;
	if (!so.title)
		so.title = "Differential Flame Graph";
	/* the titles count what the shares are of */
	if (c->value && strcmp(so.countname, "samples") == 0)
		so.countname = c->value;
	if (!so.subtitle) {
		snprintf(subtitle, sizeof(subtitle),
			 "%s's shape; red: share grew from %s to %s, blue: share shrank",
			 c->base_shape ? file[0] : file[1], file[0], file[1]);
		so.subtitle = subtitle;
	}
	err = kp_svg_write(f, &so, out, d);
	kp_folded_free(f);
	return err;
}

static int write_folded(const struct diff_cli *c, const struct kp_profile *const p[2],
			const size_t value[2], FILE *out, struct kp_diag *d)
{
	struct kp_folded *f = diff_table(p, value, c->base_shape, d);
	int err;

	if (!f)
		return -ERANGE;
	err = kp_folded_write(f, out, KP_FOLDED_ANNOTATE_ALL);
	if (err)
		kp_diag_errno(d, err, "cannot write the folded stacks");
	kp_folded_free(f);
	return err;
}

/* Names every regression on stderr: a CI log shows them whatever the
 * output format. */
static void report_regressions(const struct kp_diff *df, const struct diff_cli *c,
			       const uint32_t *reg, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct kp_diff_function *fn = kp_diff_function(df, reg[i]);
		const struct kp_diff_change *ch = &fn->col[KP_DIFF_TOTAL];

		kp_err("regression: %.*s%s: total share %.2f%% -> %.2f%% (%+.2f points, more than "
		       "%g; p %.2g after Holm, alpha %g)",
		       (int)(fn->name_len > 200 ? 200 : fn->name_len), fn->name,
		       kp_frame_kind_note(fn->kind), ch->share[0], ch->share[1], ch->change,
		       c->fail_above, ch->p_adj, kp_diff_alpha(df));
	}
}

int kp_cmd_diff(int argc, char **argv)
{
	struct diff_cli c = {.alpha = 0.01, .dispersion = 1, .top = 20};
	struct kp_load_opts lo = {0};
	struct kp_profile *p[2] = {NULL, NULL};
	struct kp_load_info info[2];
	const char *file[2];
	struct kp_diff_opts dopts = {0};
	struct kp_diff *df = NULL;
	struct kp_outfile of = {0};
	struct kp_diag d = {{0}};
	uint32_t *reg = NULL;
	size_t nreg = 0;
	int status, fmt;

	kp_svg_opts_init(&c.svg);
	c.svg.title = NULL; /* a differential title unless one is given */
	status = parse_args(argc, argv, &c);
	if (status >= 0)
		return status;
	fmt = choose_format(&c);
	if (fmt < 0)
		return 2;
	file[0] = argv[optind];
	file[1] = argv[optind + 1];
	if (strcmp(file[0], "-") == 0 && strcmp(file[1], "-") == 0) {
		kp_err("diff: BASE and NEW cannot both be stdin");
		return 2;
	}
	status = 1;
	lo.strict = c.strict;
	for (int s = 0; s < 2; s++) {
		if (kp_profile_load(file[s], &lo, &p[s], &info[s], &d) < 0) {
			kp_err("%s", d.msg);
			goto out;
		}
	}
	for (int s = 0; s < 2; s++) {
		int v;

		if (info[s].bad_lines)
			kp_warn("ignored %llu line%s with invalid format; the first: %s",
				(unsigned long long)info[s].bad_lines,
				info[s].bad_lines == 1 ? "" : "s", info[s].first_bad);
		if (info[s].differential)
			kp_warn("%s holds two counts a line (BEFORE AFTER, a differential "
				"profile): only AFTER is compared",
				file[s]);
		v = share_value(p[s], file[s], c.value);
		if (v < 0)
			goto out;
		dopts.value[s] = (size_t)v;
		dopts.count[s] = count_value(p[s], file[s]);
		if (!kp_profile_total(p[s], dopts.value[s]) ||
		    !kp_profile_total(p[s], dopts.count[s])) {
			kp_err("%s: every count is 0: no shares to compare", file[s]);
			goto out;
		}
	}
	compare_runs((const struct kp_profile *const *)p, file);
	dopts.alpha = c.alpha;
	dopts.dispersion = c.dispersion;
	/* the function table: for the reports, and for the gate whatever the
	 * output (a picture alone needs only the folded table) */
	if (fmt == FMT_TEXT || fmt == FMT_JSON || c.gate) {
		df = kp_diff_new(p[0], p[1], &dopts, &d);
		if (!df) {
			kp_err("diff: %s", d.msg);
			goto out;
		}
	}
	if (c.gate)
		nreg = kp_diff_regressions(df, c.fail_above, &reg);
	if (kp_outfile_open(&of, c.opath, &d) < 0) {
		kp_err("%s", d.msg);
		goto out;
	}
	{
		const struct kp_profile_value_type *vt =
			kp_profile_value_type(p[1], dopts.value[1]);
		const struct kp_profile_value_type *ct =
			kp_profile_value_type(p[1], dopts.count[1]);
		struct kp_diff_report r = {
			.file = {file[0], file[1]},
			.profile = {p[0], p[1]},
			.value = kp_profile_str(p[1], vt->type, NULL),
			.unit = kp_profile_str(p[1], vt->unit, NULL),
			.counts = kp_profile_str(p[1], ct->type, NULL),
			.top = c.top,
			.gate = c.gate,
			.fail_above = c.fail_above,
		};
		int err;

		switch (fmt) {
		case FMT_JSON:
			err = kp_diff_write_json(df, &r, of.fp, &d);
			break;
		case FMT_SVG:
			err = write_svg(&c, (const struct kp_profile *const *)p, file, dopts.value,
					of.fp, &d);
			break;
		case FMT_FOLDED:
			err = write_folded(&c, (const struct kp_profile *const *)p, dopts.value,
					   of.fp, &d);
			break;
		default:
			err = kp_diff_write_text(df, &r, of.fp);
			if (err)
				kp_diag_errno(&d, err, "cannot write the report");
			break;
		}
		if (err < 0 || kp_outfile_commit(&of, &d) < 0) {
			kp_err("%s", d.msg[0] ? d.msg : "cannot write the output");
			goto out;
		}
	}
	report_regressions(df, &c, reg, nreg);
	status = nreg ? EXIT_GATE : 0;
out:
	kp_outfile_abort(&of);
	free(reg);
	kp_diff_free(df);
	kp_profile_free(p[0]);
	kp_profile_free(p[1]);
	return status;
}
