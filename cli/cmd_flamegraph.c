/* kprof flamegraph [options] [FILE...]: folded stacks in, SVG out, with
 * flamegraph.pl's options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/opts.h"
#include "cli/commands.h"
#include "cli/messages.h"
#include "cli/svg_options.h"
#include "formats/folded_read.h"
#include "formats/top.h"
#include "flamegraph/svg.h"
#include "util/outfile.h"
#include "util/xalloc.h"

struct flamegraph_cli {
	struct kp_svg_opts so;
	struct kp_folded_read_opts ro; /* --strict */
	const char *opath;	       /* -o */
	bool ignore_bad_lines;	       /* what kprof does anyway */
};

#define AT(f) KP_OPT_AT(struct flamegraph_cli, f)

static void usage(FILE *out);

static const struct kp_opt opts[] = {
	{"output", 'o', KP_OPT_ONCE, AT(opath),
	 .help = "  -o, --output FILE   write the SVG to FILE (default stdout)\n"},
	{"strict", 0, KP_OPT_FLAG, AT(ro.strict),
	 .help = "  --strict            fail at the first malformed line instead\n"},
	{"ignore-bad-lines", 0, KP_OPT_FLAG, AT(ignore_bad_lines),
	 .help = "  --ignore-bad-lines  accepted for compatibility: skipping is the default\n"},
	{"help", 'h', KP_OPT_HELP, .help = "  -h, --help          this help\n"},
};

static const struct kp_opts table = {
	.cmd = "flamegraph", KP_OPTS_ROWS(opts), .svg = true, .usage_status = 1, .help = usage};

static void usage(FILE *out)
{
	fputs("usage: kprof flamegraph [options] [FILE...] > graph.svg\n"
	      "Draws a flame graph from folded stacks (\"main;foo;bar 12\" lines) read from the\n"
	      "FILEs (merged) or stdin.\n"
	      "Lines starting with '#' are comments; other lines that are not \"STACK COUNT\"\n"
	      "are skipped, counted and named in one warning (as flamegraph.pl skips them).\n"
	      "\"STACK BEFORE AFTER\" lines (difffolded.pl, kprof diff -f folded) draw a\n"
	      "differential graph as flamegraph.pl does: AFTER's shape, red where a frame's\n"
	      "count grew, blue where it shrank (--negate swaps them).\n",
	      out);
	kp_opts_help(opts, sizeof(opts) / sizeof(opts[0]), out);
	kp_svg_options_help(out);
}

/* Reads the files of argv[first..argc), or stdin, into f. Returns 0, or
 * -1 after saying why nothing can be drawn. */
static int read_inputs(struct kp_folded *f, int first, int argc, char **argv,
		       const struct kp_folded_read_opts *ro)
{
	struct kp_folded_skipped sk = {0};
	struct kp_diag d = {{0}};

	if (first == argc && isatty(STDIN_FILENO)) {
		kp_err("flamegraph: no input: name folded files or pipe them in "
		       "(kprof flamegraph --help)");
		return -1;
	}
	if (kp_folded_read_files(f, argv + first, (size_t)(argc - first), ro, &sk, &d) < 0) {
		kp_err("%s", d.msg);
		return -1;
	}
	if (sk.lines)
		kp_warn_bad_lines(sk.lines, sk.first.msg);
	if (kp_folded_total_exact(f) == 0) {
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
	struct flamegraph_cli c = {0};
	struct kp_folded *f;
	char unit[64] = "";
	int status;

	kp_svg_opts_init(&c.so);
	status = kp_opts_parse(&table, argc, argv, &c, &c.so);
	if (status >= 0)
		return status;
	f = kp_folded_new();
	/* a flame chart draws stacks in input (time) order */
	kp_folded_set_sequence(f, c.so.flamechart);
	/* the unit kprof collapse --header wrote, unless --countname says */
	c.ro.countname = unit;
	c.ro.countname_size = sizeof(unit);
	status = read_inputs(f, optind, argc, argv, &c.ro);
	if (!c.so.countname && unit[0])
		c.so.countname = unit;
	status = status < 0 ? 1 : draw(f, &c.so, c.opath);
	kp_folded_free(f);
	return status;
}
