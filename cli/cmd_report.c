/* kprof report FILE [-f FORMAT] [-o OUT] [options]: a profile read back
 * (a .kprof recording, folded text, zstd-compressed folded text) and
 * written in any output format. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/opts.h"
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

struct report_cli {
	struct kp_svg_opts so;
	struct kp_output_ctx ctx; /* --top, --annotate, --pid, --tid, --lines */
	struct kp_load_opts lo;	  /* --strict */
	struct kp_args_list opaths;
	const char *fname, *value; /* -f, --value */
	const char *from, *to;	   /* --from, --to */
	bool no_time;		   /* --no-time */
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
	{"strict", 0, KP_OPT_FLAG, AT(lo.strict),
	 .help = "      --strict        folded input: fail at the first malformed line\n"},
	{"from", 0, KP_OPT_TEXT, AT(from),
	 .help = "      --from T, --to T  the profile of that time only: T in seconds from the\n"
		 "                      start (of the first recording), or a UTC time\n"
		 "                      (2026-12-06T01:02:03, 01:02:03)\n"},
	{"to", 0, KP_OPT_TEXT, AT(to)},
	{"no-time", 0, KP_OPT_FLAG, AT(no_time),
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
	"report",	   opts,	 sizeof(opts) / sizeof(opts[0]), .svg = true,
	.usage_status = 2, .help = usage};

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct report_cli *rc)
{
	int status = kp_opts_parse(&table, argc, argv, rc, &rc->so);

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
		kp_warn_bad_lines(info.bad_lines, info.first_bad);
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
