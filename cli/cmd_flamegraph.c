/* kprof flamegraph [options] [FILE...]: folded stacks in, SVG out, with
 * flamegraph.pl's options. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/input.h"
#include "cli/messages.h"
#include "cli/output.h"
#include "cli/svg_options.h"
#include "formats/folded_read.h"
#include "formats/top.h"
#include "flamegraph/svg.h"
#include "util/outfile.h"
#include "util/xalloc.h"

enum {
	OPT_IGNORE_BAD_LINES = 2000,
	OPT_STRICT,
};

static const struct option own_opts[] = {
	{"output", required_argument, NULL, 'o'},
	{"ignore-bad-lines", no_argument, NULL, OPT_IGNORE_BAD_LINES},
	{"strict", no_argument, NULL, OPT_STRICT},
	{"help", no_argument, NULL, 'h'},
};

static void usage(FILE *out)
{
	fputs("usage: kprof flamegraph [options] [FILE...] > graph.svg\n"
	      "Draws a flame graph from folded stacks (\"main;foo;bar 12\" lines) read from the\n"
	      "FILEs (merged) or stdin.\n"
	      "Lines starting with '#' are comments; other lines that are not \"STACK COUNT\"\n"
	      "are skipped, counted and named in one warning (as flamegraph.pl skips them).\n"
	      "\"STACK BEFORE AFTER\" lines (difffolded.pl, kprof diff -f folded) draw a\n"
	      "differential graph as flamegraph.pl does: AFTER's shape, red where a frame's\n"
	      "count grew, blue where it shrank (--negate swaps them).\n"
	      "  -o, --output FILE   write the SVG to FILE (default stdout)\n"
	      "  --strict            fail at the first malformed line instead\n"
	      "  --ignore-bad-lines  accepted for compatibility: skipping is the default\n"
	      "  -h, --help          this help\n",
	      out);
	kp_svg_options_help(out);
}

/* What was read: the stacks, and the lines skipped. */
struct inputs {
	struct kp_folded *f;
	uint64_t bad;		  /* lines skipped */
	struct kp_diag first_bad; /* the first of them, named */
};

static int read_input(struct inputs *all, const char *path, const struct kp_folded_read_opts *ro)
{
	struct kp_diag d = {{0}};
	struct kp_input in;
	uint64_t before = all->bad;
	int err = kp_input_open(&in, path, &d);

	if (err) {
		kp_err("%s%s", d.msg, err == -EISDIR ? " (give folded files)" : "");
		kp_input_close(&in);
		return -1;
	}
	err = kp_folded_read(all->f, in.fp, in.name, ro, &all->bad, &d);
	kp_input_close(&in);
	if (err) {
		kp_err("%s", d.msg);
		return -1;
	}
	if (all->bad > before && !all->first_bad.msg[0])
		all->first_bad = d;
	return 0;
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct kp_svg_opts *so, struct kp_folded_read_opts *ro,
		      const char **opath)
{
	struct option *opts = kp_svg_options_with(own_opts, sizeof(own_opts) / sizeof(own_opts[0]));
	int c, status = -1;

	optind = 1;
	opterr = 0;
	while (status < 0 && (c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		int r;

		switch (c) {
		case 'o':
			if (kp_output_once(opath, optarg, "flamegraph"))
				status = 2;
			continue;
		case 'h':
			usage(stdout);
			status = 0;
			continue;
		case OPT_IGNORE_BAD_LINES:
			continue; /* what kprof does anyway */
		case OPT_STRICT:
			ro->strict = true;
			continue;
		case '?':
			kp_args_unknown("flamegraph", argv);
			status = 1;
			continue;
		default:
			break;
		}
		r = kp_svg_options_apply(c, optarg, so);
		if (r == 0)
			usage(stderr);
		if (r <= 0)
			status = 1;
	}
	free(opts);
	return status;
}

/* Reads the files of argv[first..argc), or stdin, into in->f. Returns 0,
 * or -1 after saying why nothing can be drawn. */
static int read_inputs(struct inputs *in, int first, int argc, char **argv,
		       const struct kp_folded_read_opts *ro)
{
	if (first == argc) {
		if (isatty(STDIN_FILENO)) {
			kp_err("flamegraph: no input: name folded files or pipe them in "
			       "(kprof flamegraph --help)");
			return -1;
		}
		if (read_input(in, "-", ro) < 0)
			return -1;
	}
	for (int i = first; i < argc; i++)
		if (read_input(in, argv[i], ro) < 0)
			return -1;
	if (!kp_folded_nstacks(in->f)) {
		if (in->bad)
			kp_err("no valid stack in the input: %llu line%s with invalid format; the "
			       "first: %s",
			       (unsigned long long)in->bad, in->bad == 1 ? "" : "s",
			       in->first_bad.msg);
		else
			kp_err("no stacks in the input (expected folded lines like "
			       "\"main;foo;bar 12\")");
		return -1;
	}
	if (in->bad)
		kp_warn("ignored %llu line%s with invalid format; the first: %s",
			(unsigned long long)in->bad, in->bad == 1 ? "" : "s", in->first_bad.msg);
	if (kp_folded_total_exact(in->f) == 0) {
		kp_err("every count in the input is zero: nothing to draw");
		return -1;
	}
	return 0;
}

/* Draws f into opath (NULL: stdout; the top table instead on a
 * terminal). Returns the exit status. */
static int draw(const struct kp_folded *f, struct kp_svg_opts *so, const char *opath)
{
	struct kp_diag d = {{0}};
	struct kp_outfile of;
	double total = kp_folded_total(f);

	if (so->total > 0 && so->total < total) {
		/* flamegraph.pl ignores it too, and only warns when it matters */
		if (so->total / total > 0.02)
			kp_warn("--total %g is less than the sum of the counts (%g), so ignored",
				so->total, total);
		so->total = 0;
	}
	if (!opath && isatty(STDOUT_FILENO)) {
		/* XML is no use on a terminal */
		kp_top_write(f, stdout, 20, so->countname, NULL);
		printf("\nkprof: stdout is a terminal, so the flame graph was not written: use -o "
		       "FILE.svg "
		       "or redirect stdout to a file.\n");
		return 0;
	}
	if (kp_outfile_open(&of, opath, &d) < 0) {
		kp_err("%s", d.msg);
		return 1;
	}
	if (kp_svg_write(f, so, of.fp, &d) < 0 || kp_outfile_commit(&of, &d) < 0) {
		kp_outfile_abort(&of);
		kp_err("%s", d.msg);
		return 1;
	}
	kp_outfile_abort(&of); /* after a commit: frees what is left */
	return 0;
}

int kp_cmd_flamegraph(int argc, char **argv)
{
	struct kp_svg_opts so;
	struct kp_folded_read_opts ro = {0};
	struct inputs in = {0};
	const char *opath = NULL;
	char unit[64] = "";
	int status;

	kp_svg_opts_init(&so);
	status = parse_args(argc, argv, &so, &ro, &opath);
	if (status >= 0)
		return status;
	in.f = kp_folded_new();
	/* a flame chart draws stacks in input (time) order */
	kp_folded_set_sequence(in.f, so.flamechart);
	/* the unit kprof collapse --header wrote, unless --countname says */
	ro.countname = unit;
	ro.countname_size = sizeof(unit);
	status = read_inputs(&in, optind, argc, argv, &ro);
	if (!so.countname && unit[0])
		so.countname = unit;
	status = status < 0 ? 1 : draw(in.f, &so, opath);
	kp_folded_free(in.f);
	return status;
}
