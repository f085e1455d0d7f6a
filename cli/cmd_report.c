/* kprof report FILE [-f FORMAT] [-o OUT] [options]: a profile read back
 * (a .kprof recording, folded text, zstd-compressed folded text) and
 * written in any output format. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/messages.h"
#include "cli/output.h"
#include "cli/svg_options.h"
#include "formats/profile_load.h"
#include "util/outfile.h"
#include "util/xalloc.h"

enum {
	OPT_TOP = 2000,
	OPT_ANNOTATE,
	OPT_STRICT,
	OPT_VALUE,
	OPT_PID,
	OPT_TID,
	OPT_LINES,
};

static const struct option own_opts[] = {
	{"format", required_argument, NULL, 'f'},  {"output", required_argument, NULL, 'o'},
	{"top", required_argument, NULL, OPT_TOP}, {"annotate", no_argument, NULL, OPT_ANNOTATE},
	{"strict", no_argument, NULL, OPT_STRICT}, {"value", required_argument, NULL, OPT_VALUE},
	{"pid", no_argument, NULL, OPT_PID},	   {"tid", no_argument, NULL, OPT_TID},
	{"lines", no_argument, NULL, OPT_LINES},   {"help", no_argument, NULL, 'h'},
};

static void usage(FILE *out)
{
	fputs("usage: kprof report [options] FILE\n"
	      "Writes a profile in another format. FILE ('-': stdin) is a .kprof recording,\n"
	      "folded stacks, or zstd-compressed folded stacks.\n"
	      "  -f, --format FMT    output format (default: by the -o extension, else svg;\n"
	      "                      top on a terminal):\n",
	      out);
	kp_output_help(&kp_output_profile, out);
	fputs("  -o, --output FILE   write here, in the format of its extension (repeatable;\n"
	      "                      default stdout)\n"
	      "      --top N         how many functions -f top lists (default 20)\n"
	      "      --value NAME    the value to draw or count: samples (default), or another\n"
	      "                      value type of the recording (e.g. cpu)\n"
	      "      --pid, --tid    root frames comm-PID, comm-PID/TID (recordings made with\n"
	      "                      --pid or --tid, which have them by default)\n"
	      "      --annotate      folded: mark kernel, JIT, inline frames _[k] _[j] _[i]\n"
	      "      --lines         speedscope: a frame per function and source line (default:\n"
	      "                      per function)\n"
	      "      --strict        folded input: fail at the first malformed line\n"
	      "  -h, --help          this help\n"
	      "Flame graph options (-f svg):\n",
	      out);
	kp_svg_options_help(out);
}

int kp_cmd_report(int argc, char **argv)
{
	struct option *opts = kp_svg_options_with(own_opts, sizeof(own_opts) / sizeof(own_opts[0]));
	struct kp_svg_opts so;
	struct kp_output_ctx ctx = {0};
	struct kp_load_opts lo = {0};
	struct kp_load_info info;
	struct kp_profile *p = NULL;
	struct kp_outputs outs = {0};
	struct kp_diag d = {{0}};
	struct kp_args_list opaths = {0};
	const char *fname = NULL, *value = NULL;
	int c, status = 1;

	kp_svg_opts_init(&so);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
		int r;

		switch (c) {
		case 'f':
			fname = optarg;
			continue;
		case 'o':
			kp_args_list_add(&opaths, optarg);
			continue;
		case OPT_TOP:
			if (kp_args_top("report", optarg, 1, 1000000, &ctx.top) < 0)
				goto out;
			continue;
		case OPT_ANNOTATE:
			ctx.annotate = true;
			continue;
		case OPT_STRICT:
			lo.strict = true;
			continue;
		case OPT_VALUE:
			value = optarg;
			continue;
		case OPT_PID:
			ctx.fold.root_pid = true;
			continue;
		case OPT_TID:
			ctx.fold.root_tid = true;
			continue;
		case OPT_LINES:
			ctx.per_line = true;
			continue;
		case 'h':
			usage(stdout);
			status = 0;
			goto out;
		case '?':
			kp_args_unknown("report", argv);
			status = 2;
			goto out;
		default:
			break;
		}
		r = kp_svg_option(c, optarg, &so);
		if (r <= 0) {
			if (r == 0)
				usage(stderr);
			status = 2;
			goto out;
		}
	}
	if (optind != argc - 1) {
		kp_err("report: give one profile to read (kprof report --help)");
		status = 2;
		goto out;
	}
	/* the outputs are created before the profile is read: a bad path or
	 * format fails at once */
	status = kp_outputs_open(&outs, &kp_output_profile, fname, opaths.v, opaths.n, "report: ");
	if (status)
		goto out;
	status = 1;
	lo.countname = so.countname;
	if (kp_profile_load(argv[optind], &lo, &p, &info, &d) < 0) {
		kp_err("%s", d.msg);
		goto out;
	}
	if (info.bad_lines)
		kp_warn("ignored %llu line%s with invalid format; the first: %s",
			(unsigned long long)info.bad_lines, info.bad_lines == 1 ? "" : "s",
			info.first_bad);
	if (info.differential)
		kp_warn("%s holds two counts a line (BEFORE AFTER, a differential profile): the "
			"profile keeps AFTER (kprof flamegraph draws both)",
			argv[optind]);
	/* roots as the recording was made (--pid, --tid), unless told */
	if (!ctx.fold.root_pid && !ctx.fold.root_tid) {
		const char *roots = kp_profile_meta(p, KP_META_ROOTS);

		ctx.fold.root_tid = roots && strcmp(roots, "comm-pid/tid") == 0;
		ctx.fold.root_pid = roots && strcmp(roots, "comm-pid") == 0;
	}
	if (value) {
		int v = kp_profile_find_value(p, value);

		if (v < 0) {
			kp_err("report: %s has no value '%s'", argv[optind], value);
			goto out;
		}
		ctx.fold.value = (size_t)v;
	}
	ctx.profile = p;
	ctx.svg = &so;
	if (kp_outputs_write(&outs, &ctx, NULL, 0))
		goto out;
	status = 0;
out:
	kp_outputs_free(&outs);
	kp_args_list_free(&opaths);
	kp_profile_free(p);
	free(opts);
	return status;
}
