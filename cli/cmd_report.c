/* kprof report FILE [-f FORMAT] [-o OUT] [options]: a profile read back
 * (a .kprof recording, folded text, zstd-compressed folded text) and
 * written in any output format. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/messages.h"
#include "cli/output.h"
#include "cli/svg_options.h"
#include "formats/load.h"
#include "formats/timeline_load.h"
#include "profile/run_meta.h"
#include "profile/timeline.h"
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
	OPT_FROM,
	OPT_TO,
	OPT_NO_TIME,
};

static const struct option own_opts[] = {
	{"format", required_argument, NULL, 'f'},    {"output", required_argument, NULL, 'o'},
	{"top", required_argument, NULL, OPT_TOP},   {"annotate", no_argument, NULL, OPT_ANNOTATE},
	{"strict", no_argument, NULL, OPT_STRICT},   {"value", required_argument, NULL, OPT_VALUE},
	{"pid", no_argument, NULL, OPT_PID},	     {"tid", no_argument, NULL, OPT_TID},
	{"lines", no_argument, NULL, OPT_LINES},     {"help", no_argument, NULL, 'h'},
	{"from", required_argument, NULL, OPT_FROM}, {"to", required_argument, NULL, OPT_TO},
	{"no-time", no_argument, NULL, OPT_NO_TIME},
};

static void usage(FILE *out)
{
	fputs("usage: kprof report [options] FILE...\n"
	      "Writes a profile in another format. FILE ('-': stdin) is a .kprof recording,\n"
	      "folded stacks, or zstd-compressed folded stacks. Several recordings (the\n"
	      "windows of one --every run, or a directory of them) are read as one timeline,\n"
	      "in time order.\n"
	      "  -f, --format FMT    output format (default: by the -o extension, else svg;\n"
	      "                      top on a terminal):\n",
	      out);
	kp_output_help(&kp_output_profile, out);
	fputs("  -o, --output FILE   write here, in the format of its extension (repeatable;\n"
	      "                      default stdout)\n"
	      "      --top N         how many functions -f top lists (default 20)\n"
	      "      --value NAME    the value to draw or count (default: the profile's first:\n"
	      "                      samples, or off-cpu, wall in such recordings), or another\n"
	      "                      of its values (cpu, off-cpu, wall); time is counted in\n"
	      "                      microseconds (us)\n"
	      "      --pid, --tid    root frames comm-PID, comm-PID/TID (recordings made with\n"
	      "                      --pid or --tid, which have them by default)\n"
	      "      --annotate      folded: mark kernel, JIT, inline frames _[k] _[j] _[i]\n"
	      "      --lines         speedscope: a frame per function and source line (default:\n"
	      "                      per function)\n"
	      "      --strict        folded input: fail at the first malformed line\n"
	      "      --from T, --to T  the profile of that time only: T in seconds from the\n"
	      "                      start (of the first recording), or a UTC time\n"
	      "                      (2026-12-06T01:02:03, 01:02:03)\n"
	      "      --no-time       write no time axis (a .kprof as kprof wrote before it)\n"
	      "  -h, --help          this help\n"
	      "Flame graph options (-f svg):\n",
	      out);
	kp_svg_options_help(out);
}

struct report_cli {
	struct kp_svg_opts so;
	struct kp_output_ctx ctx; /* --top, --annotate, --pid, --tid, --lines */
	struct kp_load_opts lo;	  /* --strict */
	struct kp_args_list opaths;
	const char *fname, *value; /* -f, --value */
	const char *from, *to;	   /* --from, --to */
	bool no_time;		   /* --no-time */
};

/* One option of ours, else an SVG one. Returns -1 when taken, else the
 * exit status (after --help, or saying why not). */
static int option(int c, struct report_cli *rc, char **argv)
{
	int r;

	switch (c) {
	case 'f':
		rc->fname = optarg;
		return -1;
	case 'o':
		kp_args_list_add(&rc->opaths, optarg);
		return -1;
	case OPT_TOP:
		return kp_args_top("report", optarg, 1, 1000000, &rc->ctx.top) < 0 ? 1 : -1;
	case OPT_ANNOTATE:
		rc->ctx.annotate = true;
		return -1;
	case OPT_STRICT:
		rc->lo.strict = true;
		return -1;
	case OPT_VALUE:
		rc->value = optarg;
		return -1;
	case OPT_PID:
		rc->ctx.fold.root_pid = true;
		return -1;
	case OPT_TID:
		rc->ctx.fold.root_tid = true;
		return -1;
	case OPT_LINES:
		rc->ctx.per_line = true;
		return -1;
	case OPT_FROM:
		rc->from = optarg;
		return -1;
	case OPT_TO:
		rc->to = optarg;
		return -1;
	case OPT_NO_TIME:
		rc->no_time = true;
		return -1;
	case 'h':
		usage(stdout);
		return 0;
	case '?':
		kp_args_unknown("report", argv);
		return 2;
	default:
		break;
	}
	r = kp_svg_options_apply(c, optarg, &rc->so);
	if (r == 0)
		usage(stderr);
	return r <= 0 ? 2 : -1;
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct report_cli *rc)
{
	struct option *opts = kp_svg_options_with(own_opts, sizeof(own_opts) / sizeof(own_opts[0]));
	int c, status = -1;

	optind = 1;
	opterr = 0;
	while (status < 0 && (c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1)
		status = option(c, rc, argv);
	free(opts);
	if (status < 0 && optind == argc) {
		kp_err("report: give a profile to read (kprof report --help)");
		status = 2;
	}
	return status;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Reads the profiles at paths[0..n) (several: one timeline) into *p, the
 * range of --from and --to. Returns 0, or 1 after saying why. */
static int load_sliced(char *const *paths, size_t n, struct report_cli *rc, struct kp_profile **p,
		       struct kp_load_info *info)
{
	struct kp_diag d = {{0}};

	*info = (struct kp_load_info){0};
	if (n > 1 || is_dir(paths[0])) {
		if (n > 1 ? kp_timeline_load_files(paths, n, &rc->lo, p, &d)
			  : kp_timeline_load_dir(paths[0], &rc->lo, p, &d)) {
			kp_err("%s", d.msg);
			return 1;
		}
	} else if (kp_load_profile(paths[0], &rc->lo, p, info, &d) < 0) {
		kp_err("%s", d.msg);
		return 1;
	}
	if ((rc->from || rc->to) && kp_profile_timed(*p) && kp_timeline_untimed(*p))
		kp_warn("%zu stacks keep no time (samples past the recorder's bound, or off-CPU "
			"waits of a kprof before waits kept it): the range leaves them out",
			kp_timeline_untimed(*p));
	if ((rc->from || rc->to) && kp_timeline_slice_spec(p, rc->from, rc->to, &d) < 0) {
		kp_err("report: %s: %s", n > 1 ? "the recordings" : paths[0], d.msg);
		return 1;
	}
	if (rc->no_time)
		kp_profile_time_clear(*p);
	return 0;
}

/* Reads the profiles at paths[0..n) into rc->ctx, with the roots and the
 * value to draw. Returns 0, or 1 after saying why. */
static int load(char *const *paths, size_t n, struct report_cli *rc, struct kp_profile **p)
{
	struct kp_output_ctx *ctx = &rc->ctx;
	struct kp_load_info info;
	const char *path = paths[0];

	rc->lo.countname = rc->so.countname;
	if (load_sliced(paths, n, rc, p, &info))
		return 1;
	if (info.bad_lines)
		kp_warn("ignored %llu line%s with invalid format; the first: %s",
			(unsigned long long)info.bad_lines, info.bad_lines == 1 ? "" : "s",
			info.first_bad);
	if (info.differential)
		kp_warn("%s holds two counts a line (BEFORE AFTER, a differential profile): the "
			"profile keeps AFTER (kprof flamegraph draws both)",
			path);
	/* roots as the recording was made (--pid, --tid), unless told */
	if (!ctx->fold.root_pid && !ctx->fold.root_tid) {
		struct kp_run_meta m;

		kp_run_meta_read(*p, &m);
		ctx->fold.root_tid = m.roots == KP_RUN_ROOTS_TID;
		ctx->fold.root_pid = m.roots == KP_RUN_ROOTS_PID;
	}
	if (rc->value) {
		int v = kp_profile_find_value(*p, rc->value);

		if (v < 0) {
			char names[256];

			kp_err("report: %s has no value '%s' (it has: %s)", path, rc->value,
			       kp_profile_value_names(*p, names, sizeof(names)));
			return 1;
		}
		ctx->fold.value = (size_t)v;
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
	status = parse_args(argc, argv, &rc);
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
