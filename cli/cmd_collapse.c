/* kprof collapse: `perf script` text in, folded stacks out (the
 * stackcollapse-perf.pl replacement). Reads every input first, then writes
 * the output once, so a failed read never leaves a partial file. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/input.h"
#include "cli/messages.h"
#include "cli/output.h"
#include "formats/collapse.h"
#include "util/outfile.h"

static const char usage_line[] =
	"usage: kprof collapse [--pid|--tid] [--kernel] [--jit] [--all] [--addrs] [--srcline]\n"
	"                      [--event-filter=EVENT] [--header] [-o FILE] [FILE...]\n";

static void print_help(void)
{
	fputs(usage_line, stdout);
	fputs("Folds `perf script` output into one line per stack, as stackcollapse-perf.pl does.\n"
	      "Reads the FILEs (or stdin when none, or for \"-\") and writes to stdout or -o.\n"
	      "  --pid                 root frame is comm-PID\n"
	      "  --tid                 root frame is comm-PID/TID\n"
	      "  --kernel              mark kernel frames with _[k]\n"
	      "  --jit                 mark JIT frames (/tmp/perf-PID.map) with _[j]\n"
	      "  --all                 both --kernel and --jit\n"
	      "  --addrs               show the address of unknown frames: [module <addr>]\n"
	      "  --srcline             input is `perf script -F+srcline`: add file:line to frames\n"
	      "  --event-filter=EVENT  keep only samples of EVENT (default: the first event seen)\n"
	      "  --header              first line \"# countname: UNIT\": what the counts are, for\n"
	      "                        kprof flamegraph (flamegraph.pl skips it with a warning)\n"
	      "  -o, --output=FILE     write to FILE (replaced only when complete)\n"
	      "  -h, --help            show this help\n",
	      stdout);
}

enum {
	OPT_PID = 256,
	OPT_TID,
	OPT_KERNEL,
	OPT_JIT,
	OPT_ALL,
	OPT_ADDRS,
	OPT_SRCLINE,
	OPT_EVENT,
	OPT_INLINE,
	OPT_CONTEXT,
	OPT_HEADER,
};

static const struct option long_opts[] = {
	{"pid", no_argument, NULL, OPT_PID},
	{"tid", no_argument, NULL, OPT_TID},
	{"kernel", no_argument, NULL, OPT_KERNEL},
	{"jit", no_argument, NULL, OPT_JIT},
	{"all", no_argument, NULL, OPT_ALL},
	{"addrs", no_argument, NULL, OPT_ADDRS},
	{"srcline", no_argument, NULL, OPT_SRCLINE},
	{"event-filter", required_argument, NULL, OPT_EVENT},
	{"inline", no_argument, NULL, OPT_INLINE},
	{"context", no_argument, NULL, OPT_CONTEXT},
	{"header", no_argument, NULL, OPT_HEADER},
	{"output", required_argument, NULL, 'o'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static int read_input(struct kp_collapse *c, const char *path)
{
	struct kp_diag d = {{0}};
	struct kp_input in;
	int err = kp_input_open(&in, path, &d);

	if (err) {
		/* collapse names the file and the error as read(2) would */
		kp_err("%s: %s", in.name, strerror(-err));
		kp_input_close(&in);
		return -1;
	}
	err = kp_collapse_read_fd(c, fileno(in.fp), in.name, &d);
	kp_input_close(&in);
	if (err) {
		kp_err("%s", d.msg);
		return -1;
	}
	return 0;
}

/* What the user should know about the input, on stderr; returns true when
 * nothing usable was found in an input that was not empty. */
static bool report(const struct kp_collapse *c, char **files, int nfiles)
{
	const struct kp_collapse_stats *st = kp_collapse_stats(c);
	bool useless = st->samples == 0 && st->bad_lines > 0;

	if (st->other_event && st->event_defaulted)
		kp_warn("the input has samples of several events (%s, %s, ...): kept only %s, "
			"as stackcollapse-perf.pl does; choose with --event-filter=EVENT",
			st->event, st->other_event, st->event);
	else if (st->samples == 0 && st->filtered > 0 && !st->event_defaulted)
		kp_warn("no samples of event %s (the input has %s)", st->event, st->other_event);
	if (st->bad_lines) {
		const char *name = "stdin";

		if (nfiles > 0 && st->first_bad_input < (unsigned)nfiles &&
		    strcmp(files[st->first_bad_input], "-") != 0)
			name = files[st->first_bad_input];
		kp_say("%s %llu line%s that %s not perf script output (first: %s:%llu)%s",
		       useless ? "error:" : "note: skipped", (unsigned long long)st->bad_lines,
		       st->bad_lines == 1 ? "" : "s", st->bad_lines == 1 ? "is" : "are", name,
		       (unsigned long long)st->first_bad_line, useless ? "; no samples found" : "");
	}
	if (st->unterminated)
		kp_warn("%llu input%s ended inside a sample (no blank line after it): that sample "
			"was left out, as stackcollapse-perf.pl does",
			(unsigned long long)st->unterminated, st->unterminated == 1 ? "" : "s");
	return useless;
}

/* The folded lines, after "# countname: UNIT" with --header; without it,
 * counts that are not samples are named on stderr, with the way to keep
 * their unit (flamegraph.pl and plain folded text have no place for it). */
static int write_folded(struct kp_collapse *c, bool header, FILE *out, struct kp_diag *d)
{
	char unit[64];

	kp_collapse_countname(c, unit, sizeof(unit));
	if (header && fprintf(out, "# countname: %s\n", unit) < 0)
		return kp_diag_errno(d, -EIO, "writing the header");
	if (!header && strcmp(unit, "samples") != 0)
		kp_say("note: the counts are %s (the samples' periods of %s): kprof flamegraph "
		       "--countname %s says so, or collapse --header writes it in the output",
		       strcmp(unit, "ns") == 0 ? "nanoseconds" : unit, kp_collapse_stats(c)->event,
		       unit);
	return kp_collapse_write(c, out, d);
}

int kp_cmd_collapse(int argc, char **argv)
{
	struct kp_collapse_opts opts = {0};
	struct kp_outfile out;
	struct kp_diag d = {{0}};
	struct kp_collapse *c;
	const char *output = NULL;
	int ch, status = 0;
	bool header = false;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:h", long_opts, NULL)) != -1) {
		switch (ch) {
		case OPT_PID:
			opts.pid = true;
			break;
		case OPT_TID:
			opts.tid = true;
			break;
		case OPT_KERNEL:
			opts.kernel = true;
			break;
		case OPT_JIT:
			opts.jit = true;
			break;
		case OPT_ALL:
			opts.kernel = opts.jit = true;
			break;
		case OPT_ADDRS:
			opts.addrs = true;
			break;
		case OPT_SRCLINE:
			opts.srcline = true;
			break;
		case OPT_EVENT:
			opts.event_filter = optarg;
			break;
		case OPT_HEADER:
			header = true;
			break;
		case OPT_INLINE:
		case OPT_CONTEXT:
			kp_err("collapse: --inline and --context (addr2line on the profiled "
			       "binaries) "
			       "are not supported; record with `perf script -F+srcline` and use "
			       "--srcline, or let `kprof` record and symbolize inline frames "
			       "itself");
			return 2;
		case 'o':
			if (kp_output_once(&output, optarg, "collapse"))
				return 2;
			break;
		case 'h':
			print_help();
			return 0;
		case ':':
			kp_err("collapse: option %s needs an argument", argv[optind - 1]);
			fputs(usage_line, stderr);
			return 2;
		default:
			kp_err("collapse: unknown option %s", argv[optind - 1]);
			fputs(usage_line, stderr);
			return 2;
		}
	}

	c = kp_collapse_new(&opts);
	if (optind >= argc) {
		if (read_input(c, "-") < 0)
			status = 1;
	} else {
		for (int i = optind; i < argc && !status; i++)
			if (read_input(c, argv[i]) < 0)
				status = 1;
	}
	if (status)
		goto out_collapse;
	if (report(c, argv + optind, argc - optind)) {
		status = 1;
		goto out_collapse;
	}

	if (kp_outfile_open(&out, output, &d) < 0) {
		kp_err("%s", d.msg);
		status = 1;
		goto out_collapse;
	}
	if (write_folded(c, header, out.fp, &d) < 0 || kp_outfile_commit(&out, &d) < 0) {
		kp_err("%s", d.msg);
		status = 1;
	}
	kp_outfile_abort(&out); /* after a commit: frees the name only */
out_collapse:
	kp_collapse_free(c);
	return status;
}
