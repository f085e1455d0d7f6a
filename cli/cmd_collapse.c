/* kprof collapse: `perf script` text in, folded stacks out (the
 * stackcollapse-perf.pl replacement). Reads every input first, then writes
 * the output once, so a failed read never leaves a partial file. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/opts.h"
#include "cli/commands.h"
#include "util/notes.h"
#include "cli/messages.h"
#include "formats/collapse.h"
#include "util/outfile.h"

static const char usage_line[] =
	"usage: kprof collapse [--pid|--tid] [--kernel] [--jit] [--all] [--addrs] [--srcline]\n"
	"                      [--event-filter=EVENT] [--header] [-o FILE] [FILE...]\n";

struct collapse_cli {
	struct kp_collapse_opts opts;
	const char *output; /* -o */
	bool header;	    /* --header */
};

static int set_all(void *cli, const char *arg, const struct kp_opt *row)
{
	struct collapse_cli *c = cli;

	(void)arg, (void)row;
	c->opts.kernel = c->opts.jit = true;
	return -1;
}

static int refuse_addr2line(void *cli, const char *arg, const struct kp_opt *row)
{
	(void)cli, (void)arg, (void)row;
	kp_err("collapse: --inline and --context (addr2line on the profiled binaries) are not "
	       "supported; record with `perf script -F+srcline` and use --srcline, or let `kprof` "
	       "record and symbolize inline frames itself");
	return 2;
}

static void print_help(FILE *out);

static void say_unknown(int c, char **argv)
{
	if (c == ':')
		kp_err("collapse: option %s needs an argument", argv[optind - 1]);
	else
		kp_err("collapse: unknown option %s", argv[optind - 1]);
	fputs(usage_line, stderr);
}

#define AT(f) KP_OPT_AT(struct collapse_cli, f)

static const struct kp_opt opts[] = {
	{"pid", 0, KP_OPT_FLAG, AT(opts.pid),
	 .help = "  --pid                 root frame is comm-PID\n"},
	{"tid", 0, KP_OPT_FLAG, AT(opts.tid),
	 .help = "  --tid                 root frame is comm-PID/TID\n"},
	{"kernel", 0, KP_OPT_FLAG, AT(opts.kernel),
	 .help = "  --kernel              mark kernel frames with _[k]\n"},
	{"jit", 0, KP_OPT_FLAG, AT(opts.jit),
	 .help = "  --jit                 mark JIT frames (/tmp/perf-PID.map) with _[j]\n"},
	{"all", 0, KP_OPT_ACTION, .set = set_all,
	 .help = "  --all                 both --kernel and --jit\n"},
	{"addrs", 0, KP_OPT_FLAG, AT(opts.addrs),
	 .help = "  --addrs               show the address of unknown frames: [module <addr>]\n"},
	{"srcline", 0, KP_OPT_FLAG, AT(opts.srcline),
	 .help = "  --srcline             input is `perf script -F+srcline`: add file:line to "
		 "frames\n"},
	{"event-filter", 0, KP_OPT_TEXT, AT(opts.event_filter),
	 .help = "  --event-filter=EVENT  keep only samples of EVENT (default: the first event "
		 "seen)\n"},
	{"inline", 0, KP_OPT_ACTION, .set = refuse_addr2line},
	{"context", 0, KP_OPT_ACTION, .set = refuse_addr2line},
	{"header", 0, KP_OPT_FLAG, AT(header),
	 .help = "  --header              first line \"# countname: UNIT\": what the counts are, "
		 "for\n"
		 "                        kprof flamegraph (flamegraph.pl skips it with a "
		 "warning)\n"},
	{"output", 'o', KP_OPT_ONCE, AT(output),
	 .help = "  -o, --output=FILE     write to FILE (replaced only when complete)\n"},
	{"help", 'h', KP_OPT_HELP, .help = "  -h, --help            show this help\n"},
};

static void print_help(FILE *out)
{
	fputs(usage_line, out);
	fputs("Folds `perf script` output into one line per stack, as stackcollapse-perf.pl does.\n"
	      "Reads the FILEs (or stdin when none, or for \"-\") and writes to stdout or -o.\n",
	      out);
	kp_opts_help(opts, sizeof(opts) / sizeof(opts[0]), out);
}

static const struct kp_opts table = {.cmd = "collapse",
				     KP_OPTS_ROWS(opts),
				     .colon = true,
				     .usage_status = 2,
				     .help = print_help,
				     .unknown = say_unknown};

int kp_cmd_collapse(int argc, char **argv)
{
	struct collapse_cli cli = {0};
	struct kp_outfile out;
	struct kp_diag d = {{0}};
	struct kp_notes said = {0};
	struct kp_collapse *c;
	bool useless;
	int r;
	int status = kp_opts_parse(&table, argc, argv, &cli, NULL);

	if (status >= 0)
		return status;
	status = 1;
	c = kp_collapse_new(&cli.opts);
	if (kp_collapse_read_paths(c, argv + optind, (size_t)(argc - optind), &d) < 0) {
		kp_err("%s", d.msg);
		goto out_collapse;
	}
	useless = kp_collapse_tell(c, argv + optind, (size_t)(argc - optind), &said);
	kp_say_notes(&said);
	kp_notes_fini(&said);
	if (useless)
		goto out_collapse;

	if (kp_outfile_open(&out, cli.output, &d) < 0) {
		kp_err("%s", d.msg);
		goto out_collapse;
	}
	r = kp_collapse_write_header(c, cli.header, out.fp, &said, &d);
	kp_say_notes(&said);
	if (r < 0 || kp_collapse_write(c, out.fp, &d) < 0 || kp_outfile_commit(&out, &d) < 0)
		kp_err("%s", d.msg);
	else
		status = 0;
	kp_outfile_abort(&out); /* after a commit: frees the name only */
out_collapse:
	kp_notes_fini(&said);
	kp_collapse_free(c);
	return status;
}
