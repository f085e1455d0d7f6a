/* kprof report FILE [-f FORMAT] [-o OUT] [options]: a profile read back
 * (a .kprof recording, folded text, zstd-compressed folded text) and
 * written in any output format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/opts.h"
#include "cli/commands.h"
#include "cli/messages.h"
#include "cli/output.h"
#include "cli/svg_options.h"
#include "formats/load_range.h"
#include "util/outfile.h"
#include "util/xalloc.h"

struct report_cli {
	struct kp_svg_opts so;
	struct kp_output_ctx ctx;     /* --top, --annotate, --pid, --tid, --lines */
	struct kp_load_range_opts lo; /* --strict, --from, --to, --no-time */
	struct kp_args_list opaths;
	const char *fname, *value; /* -f, --value */
};

static int set_top(void *cli, const char *arg, const struct kp_opt *row)
{
	(void)row;
	return kp_args_top("report", arg, 1, 1000000, &((struct report_cli *)cli)->ctx.top) < 0
		       ? 1
		       : -1;
}

#define AT(f) KP_OPT_AT(struct report_cli, f)

static const struct kp_opt opts[] = {
	{"format", 'f', KP_OPT_TEXT, AT(fname),
	 .help = "  -f, --format FMT    output format (default: by the -o extension, else svg;\n"
		 "                      top on a terminal):\n"},
	{"output", 'o', KP_OPT_LIST, AT(opaths),
	 .help = "  -o, --output FILE   write here, in the format of its extension (repeatable;\n"
		 "                      default stdout)\n"},
	{"top", 0, KP_OPT_CALL, .set = set_top,
	 .help = "      --top N         how many functions -f top lists (default 20)\n"},
	{"value", 0, KP_OPT_TEXT, AT(value),
	 .help = "      --value NAME    the value to draw or count (default: the profile's first:\n"
		 "                      samples, or off-cpu, wall in such recordings), or another\n"
		 "                      of its values (cpu, off-cpu, wall); time is counted in\n"
		 "                      microseconds (us)\n"},
	{"pid", 0, KP_OPT_FLAG, AT(ctx.fold.root_pid),
	 .help = "      --pid, --tid    root frames comm-PID, comm-PID/TID (recordings made with\n"
		 "                      --pid or --tid, which have them by default)\n"},
	{"tid", 0, KP_OPT_FLAG, AT(ctx.fold.root_tid)},
	{"annotate", 0, KP_OPT_FLAG, AT(ctx.annotate),
	 .help = "      --annotate      folded: mark kernel, JIT, inline frames _[k] _[j] _[i]\n"},
	{"lines", 0, KP_OPT_FLAG, AT(ctx.per_line),
	 .help = "      --lines         speedscope: a frame per function and source line "
		 "(default:\n"
		 "                      per function)\n"},
	{"strict", 0, KP_OPT_FLAG, AT(lo.load.strict),
	 .help = "      --strict        folded input: fail at the first malformed line\n"},
	{"from", 0, KP_OPT_TEXT, AT(lo.from),
	 .help = "      --from T, --to T  the profile of that time only: T in seconds from the\n"
		 "                      start (of the first recording), or a UTC time\n"
		 "                      (2026-12-06T01:02:03, 01:02:03)\n"},
	{"to", 0, KP_OPT_TEXT, AT(lo.to)},
	{"no-time", 0, KP_OPT_FLAG, AT(lo.no_time),
	 .help = "      --no-time       write no time axis (a .kprof as kprof wrote before it)\n"},
	{"help", 'h', KP_OPT_HELP, .help = "  -h, --help          this help\n"},
};

static void usage(FILE *out)
{
	fputs("usage: kprof report [options] FILE...\n"
	      "Writes a profile in another format. FILE ('-': stdin) is a .kprof recording,\n"
	      "folded stacks, or zstd-compressed folded stacks. Several recordings (the\n"
	      "windows of one --every run, or a directory of them) are read as one timeline,\n"
	      "in time order.\n",
	      out);
	kp_opts_help(opts, 1, out);
	kp_output_help(&kp_output_profile, out);
	kp_opts_help(opts + 1, sizeof(opts) / sizeof(opts[0]) - 1, out);
	fputs("Flame graph options (-f svg):\n", out);
	kp_svg_options_help(out);
}

static const struct kp_opts table = {
	.cmd = "report",
	KP_OPTS_ROWS(opts),
	.svg = true,
	.usage_status = 2,
	.help = usage,
	.operands_min = 1,
	.operands_wrong = "report: give a profile to read (kprof report --help)"};

/* Reads the profiles at paths[0..n) into rc->ctx, with the roots and the
 * value to draw. Returns 0, or 1 after saying why. */
static int load(char *const *paths, size_t n, struct report_cli *rc, struct kp_profile **p)
{
	struct kp_output_ctx *ctx = &rc->ctx;
	struct kp_notes warnings = {0};
	struct kp_diag d = {{0}};
	struct kp_load_info info;
	int r;

	rc->lo.load.countname = rc->so.countname;
	r = kp_load_range(paths, n, &rc->lo, p, &info, &warnings, &d);
	kp_warn_each(&warnings);
	kp_notes_fini(&warnings);
	if (r < 0) {
		kp_err("%s%s", r == -2 ? "report: " : "", d.msg);
		return 1;
	}
	if (info.bad_lines)
		kp_warn_bad_lines(info.bad_lines, info.first_bad);
	if (info.differential)
		kp_warn("%s holds two counts a line (BEFORE AFTER, a differential profile): the "
			"profile keeps AFTER (kprof flamegraph draws both)",
			paths[0]);
	if (kp_load_range_fold(*p, rc->value, &ctx->fold, &d) < 0) {
		kp_err("report: %s has %s", paths[0], d.msg);
		return 1;
	}
	ctx->profile = *p;
	ctx->svg = &rc->so;
	ctx->inputs = paths;
	ctx->ninputs = n;
	return 0;
}

int kp_cmd_report(int argc, char **argv)
{
	struct report_cli rc = {0};
	struct kp_profile *p = NULL;
	struct kp_outputs outs = {0};
	int status;

	kp_svg_opts_init(&rc.so);
	status = kp_opts_parse(&table, argc, argv, &rc, &rc.so);
	if (status >= 0)
		goto out;
	/* the outputs are created before the profile is read: a bad path or
	 * format fails at once */
	status = kp_outputs_open(&outs, &kp_output_profile, rc.fname, rc.opaths.v, rc.opaths.n,
				 "report: ");
	if (status)
		goto out;
	status = load(argv + optind, (size_t)(argc - optind), &rc, &p);
	if (status == 0)
		status = kp_outputs_write(&outs, &rc.ctx, NULL, 0);
out:
	kp_outputs_free(&outs);
	kp_args_list_free(&rc.opaths);
	kp_profile_free(p);
	return status;
}
