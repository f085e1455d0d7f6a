/* kprof [record]: sample a command, processes or the whole machine and
 * write folded stacks or a flame graph. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/svg_options.h"
#include "flamegraph/folded.h"
#include "flamegraph/svg.h"
#include "profiler/session.h"
#include "symbolize/symbolize.h"
#include "util/outfile.h"
#include "util/xalloc.h"

#define KPROF_VERSION "0.1.0"

enum {
	OPT_PID = 2000,
	OPT_TID,
	OPT_ANNOTATE,
	OPT_NO_INLINE,
	OPT_FULL_NAMES,
	OPT_DEBUGINFO_DIR,
	OPT_NO_CACHE,
	OPT_CALL_GRAPH,
	OPT_VERSION,
	OPT_HELP,
};

static const struct option record_longopts[] = {
	{"all-cpus", no_argument, NULL, 'a'},
	{"cpu", required_argument, NULL, 'C'},
	{"freq", required_argument, NULL, 'F'},
	{"count", required_argument, NULL, 'c'},
	{"event", required_argument, NULL, 'e'},
	{"output", required_argument, NULL, 'o'},
	{"format", required_argument, NULL, 'f'},
	{"duration", required_argument, NULL, 'd'},
	{"mmap-pages", required_argument, NULL, 'm'},
	{"quiet", no_argument, NULL, 'q'},
	{"call-graph", required_argument, NULL, OPT_CALL_GRAPH},
	/* --pid/--tid name the root frame as stackcollapse-perf.pl does
	 * (attaching is -p/-t); --per-pid/--per-tid are the same */
	{"pid", no_argument, NULL, OPT_PID},
	{"tid", no_argument, NULL, OPT_TID},
	{"per-pid", no_argument, NULL, OPT_PID},
	{"per-tid", no_argument, NULL, OPT_TID},
	{"annotate", no_argument, NULL, OPT_ANNOTATE},
	{"no-inline", no_argument, NULL, OPT_NO_INLINE},
	{"full-names", no_argument, NULL, OPT_FULL_NAMES},
	{"debuginfo-dir", required_argument, NULL, OPT_DEBUGINFO_DIR},
	{"no-cache", no_argument, NULL, OPT_NO_CACHE},
	{"version", no_argument, NULL, OPT_VERSION},
	{"help", no_argument, NULL, OPT_HELP},
};

static void usage_line(FILE *out)
{
	fprintf(out, "usage: kprof [-a | -C CPUS | -p PID | -t TID] [-F HZ | -c N] [-e EVENT] "
		     "[-f svg|folded] [-o FILE] [-d SECONDS] [--] [COMMAND [ARGS...]]\n"
		     "       kprof collapse [OPTIONS] [FILE...]\n"
		     "       kprof flamegraph [OPTIONS] [FILE...]\n"
		     "       kprof symbolize -e FILE [OPTIONS] [ADDR...]\n");
}

static void help(void)
{
	usage_line(stdout);
	puts("\nSample with perf_event_open and write an interactive flame graph (or folded "
	     "stacks).\n"
	     "With a COMMAND and no target option, the command (and its threads and children) is\n"
	     "sampled; with -a/-C/-p/-t, COMMAND only sets how long to record.\n\n"
	     "Targets:\n"
	     "  -a, --all-cpus          sample every CPU (the whole machine)\n"
	     "  -C, --cpu LIST          sample only these CPUs (e.g. 0-3,6); implies system-wide\n"
	     "  -p PID[,PID]            attach to running processes (all their threads)\n"
	     "  -t TID[,TID]            attach to running threads\n"
	     "  -d, --duration SECONDS  stop after this long (also ends the command)\n"
	     "Sampling:\n"
	     "  -F, --freq HZ           samples per second per CPU (default 99)\n"
	     "  -c, --count N           one sample every N events instead of a frequency\n"
	     "  -e, --event EVENT       cycles (default; falls back to cpu-clock without a PMU),\n"
	     "                          instructions, cpu-clock, task-clock, page-faults, ...\n"
	     "  -g                      callchains (always on; accepted for perf compatibility)\n"
	     "      --call-graph fp     walk frame pointers (the default)\n"
	     "  -m, --mmap-pages N      ring buffer pages per CPU (power of two, default 128)\n"
	     "Output:\n"
	     "  -f, --format FMT        svg (default) or folded\n"
	     "  -o, --output FILE       write here instead of stdout (atomically)\n"
	     "      --pid               root frame comm-PID (also --per-pid)\n"
	     "      --tid               root frame comm-PID/TID (also --per-tid)\n"
	     "      --annotate          folded: mark kernel, JIT, inline frames _[k] _[j] _[i]\n"
	     "      --no-inline         no inline frames\n"
	     "      --full-names        keep C++ parameter lists\n"
	     "      --debuginfo-dir DIR also look for separate debuginfo here (repeatable)\n"
	     "      --no-cache          read /proc/kallsyms and each binary's DWARF, not the\n"
	     "                          kallsyms copy and build indexes kept in\n"
	     "                          $XDG_CACHE_HOME/kprof (~/.cache/kprof); keep none\n"
	     "  -q, --quiet             no summary line\n"
	     "      --version           print the version\n"
	     "      --help              this text\n"
	     "Flame graph (with -f svg):");
	kp_svg_options_help(stdout);
	puts("\nSubcommands: 'kprof collapse --help', 'kprof flamegraph --help',\n"
	     "'kprof symbolize --help'. See kprof(1).");
}

static int parse_pids(const char *arg, pid_t **pids, size_t *n)
{
	char *copy = kp_xstrdup(arg), *save = NULL;
	size_t cap = 0;

	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long v;

		errno = 0;
		v = strtol(tok, &end, 10);
		if (errno || *end || v <= 0 || v > INT_MAX) {
			free(copy);
			return -EINVAL;
		}
		kp_xgrow(pids, &cap, *n + 1, sizeof(**pids));
		(*pids)[(*n)++] = (pid_t)v;
	}
	free(copy);
	return *n ? 0 : -EINVAL;
}

static int parse_u64(const char *arg, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(arg, &end, 10);
	return errno || *end || end == arg || arg[0] == '-' ? -EINVAL : 0;
}

/* The progress line on a terminal: rewritten in place. */
static void show_progress(void *arg, const struct kp_session_stats *st)
{
	(void)arg;
	if (st->seconds < 1.0)
		return;
	fprintf(stderr, "\rkprof: recording %.1f s, %llu samples, %llu lost \033[K", st->seconds,
		(unsigned long long)st->samples, (unsigned long long)st->lost);
}

struct record_cli {
	struct kp_session_opts sess;
	struct kp_sym_options sym;
	struct kp_svg_opts svg;
	const char *output;
	bool folded;
	bool annotate;
	bool quiet;
	bool event_given;
	bool no_cache;
	const char **dirs;
	size_t ndirs, dirs_cap;
	pid_t *pids;
	size_t npids;
	int *cpus;
};

static int parse_args(struct record_cli *c, int argc, char **argv, int *optind_out)
{
	struct option *opts;
	size_t nrec = sizeof(record_longopts) / sizeof(record_longopts[0]), nsvg = 0;
	int opt;

	while (kp_svg_longopts[nsvg].name)
		nsvg++;
	opts = kp_xcalloc(nrec + nsvg + 1, sizeof(*opts));
	memcpy(opts, record_longopts, sizeof(record_longopts));
	memcpy(opts + nrec, kp_svg_longopts, nsvg * sizeof(*opts));

	optind = 1;
	/* '+': stop at the first non-option, the command */
	while ((opt = getopt_long(argc, argv, "+aC:p:t:F:c:e:o:f:d:m:qg", opts, NULL)) != -1) {
		uint64_t v;
		int r;

		switch (opt) {
		case 'a':
			c->sess.system_wide = true;
			break;
		case 'C': {
			int n = kp_cpulist_parse(optarg, &c->cpus);

			if (n < 0) {
				kp_err("-C: invalid CPU list '%s'", optarg);
				goto usage;
			}
			c->sess.cpus = c->cpus;
			c->sess.ncpus = (size_t)n;
			c->sess.system_wide = true;
			break;
		}
		case 'p':
		case 't':
			if (parse_pids(optarg, &c->pids, &c->npids) < 0) {
				kp_err("-%c: invalid id list '%s'", opt, optarg);
				goto usage;
			}
			c->sess.pids_are_tids = opt == 't';
			break;
		case 'F':
			if (parse_u64(optarg, &v) < 0 || v == 0 || v > 1000000) {
				kp_err("-F: invalid frequency '%s'", optarg);
				goto usage;
			}
			c->sess.attr.freq = v;
			c->sess.attr.period = 0;
			break;
		case 'c':
			if (parse_u64(optarg, &v) < 0 || v == 0) {
				kp_err("-c: invalid period '%s'", optarg);
				goto usage;
			}
			c->sess.attr.period = v;
			break;
		case 'e':
			if (kp_perf_event_lookup(optarg, &c->sess.attr.event) < 0) {
				kp_err("unknown event '%s' (known: %s)", optarg,
				       kp_perf_event_names());
				goto usage;
			}
			c->event_given = true;
			break;
		case 'o':
			c->output = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "folded") == 0) {
				c->folded = true;
			} else if (strcmp(optarg, "svg") == 0) {
				c->folded = false;
			} else {
				kp_err("-f: unknown format '%s' (svg or folded)", optarg);
				goto usage;
			}
			break;
		case 'd': {
			char *end;
			double dv = strtod(optarg, &end);

			if (*end || end == optarg || !(dv > 0) || dv > 1e7) {
				kp_err("-d: invalid duration '%s'", optarg);
				goto usage;
			}
			c->sess.duration = dv;
			break;
		}
		case 'm':
			if (parse_u64(optarg, &v) < 0 || v == 0 || (v & (v - 1)) || v > (1 << 20)) {
				kp_err("-m: pages must be a power of two, got '%s'", optarg);
				goto usage;
			}
			c->sess.ring_pages = (unsigned)v;
			break;
		case 'q':
			c->quiet = true;
			break;
		case 'g':
			break;
		case OPT_CALL_GRAPH:
			if (strcmp(optarg, "fp") == 0) {
				c->sess.attr.callgraph = KP_CALLGRAPH_FP;
			} else if (strcmp(optarg, "dwarf") == 0) {
				kp_err("--call-graph dwarf is not built yet; use fp");
				goto fail;
			} else {
				kp_err("--call-graph: unknown mode '%s' (fp)", optarg);
				goto usage;
			}
			break;
		case OPT_PID:
			c->sess.root_pid = true;
			break;
		case OPT_TID:
			c->sess.root_tid = true;
			break;
		case OPT_ANNOTATE:
			c->annotate = true;
			break;
		case OPT_NO_INLINE:
			c->sym.no_inline = true;
			break;
		case OPT_FULL_NAMES:
			c->sym.full_names = true;
			break;
		case OPT_DEBUGINFO_DIR:
			kp_xgrow(&c->dirs, &c->dirs_cap, c->ndirs + 1, sizeof(*c->dirs));
			c->dirs[c->ndirs++] = optarg;
			break;
		case OPT_NO_CACHE:
			c->no_cache = true;
			break;
		case OPT_VERSION:
			printf("kprof %s\n", KPROF_VERSION);
			free(opts);
			return 1;
		case OPT_HELP:
			help();
			free(opts);
			return 1;
		default:
			r = kp_svg_option(opt, optarg, &c->svg);
			if (r == 1)
				break;
			if (r < 0)
				goto fail;
			goto usage;
		}
	}
	free(opts);
	*optind_out = optind;
	return 0;
usage:
	usage_line(stderr);
fail:
	free(opts);
	return -1;
}

/* Why a recording can be empty depends on what was sampled. */
static void warn_no_samples(const struct record_cli *c, const struct kp_session_stats *st)
{
	const char *period = st->freq ? "1/F seconds" : "-c events";

	if (c->sess.command_is_target)
		kp_warn("no samples were recorded: the command ran for less than one sampling "
			"period (%s), or slept all the time",
			period);
	else if (c->npids)
		kp_warn("no samples were recorded: the %s sampled used no CPU in the %.1f s "
			"recorded (idle or sleeping)",
			c->sess.pids_are_tids ? (c->npids == 1 ? "thread" : "threads")
					      : (c->npids == 1 ? "process" : "processes"),
			st->seconds);
	else
		kp_warn("no samples were recorded in %.1f s (shorter than one sampling period, "
			"%s?)",
			st->seconds, period);
}

static void print_summary(const struct record_cli *c, const struct kp_session_stats *st,
			  const char *where)
{
	uint64_t unres =
		st->unresolved[0] + st->unresolved[1] + st->unresolved[2] + st->unresolved[3];
	double share = st->frames ? 100.0 * (double)unres / (double)st->frames : 0.0;

	if (c->quiet)
		return;
	fprintf(stderr,
		"kprof: %llu samples, %llu lost, %zu process%s, %.1f s; %.1f%% of frames "
		"unresolved (kernel %llu, user %llu, JIT %llu, other %llu); profile in %s\n",
		(unsigned long long)st->samples, (unsigned long long)st->lost, st->nprocs,
		st->nprocs == 1 ? "" : "es", st->seconds, share,
		(unsigned long long)st->unresolved[KP_LOC_KERNEL],
		(unsigned long long)st->unresolved[KP_LOC_USER],
		(unsigned long long)st->unresolved[KP_LOC_JIT],
		(unsigned long long)st->unresolved[KP_LOC_UNKNOWN], where);
}

/* The lines under the title of a recorded flame graph. */
static char **info_lines(const struct kp_session_stats *st, int argc, char **argv, size_t *n)
{
	char **lines = kp_xcalloc(2, sizeof(*lines));
	size_t len = 0;
	char cmd[512] = "";

	for (int i = 0; i < argc && len < sizeof(cmd) - 1; i++)
		len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, "%s%s", i ? " " : "",
					i == 0 ? "kprof" : argv[i]);
	lines[0] = kp_xasprintf("%s", cmd);
	if (st->freq)
		lines[1] =
			kp_xasprintf("%s at %llu Hz, %.1f s, %llu samples, %llu lost", st->event,
				     (unsigned long long)st->freq, st->seconds,
				     (unsigned long long)st->samples, (unsigned long long)st->lost);
	else
		lines[1] =
			kp_xasprintf("%s every %llu events, %.1f s, %llu samples, %llu lost",
				     st->event, (unsigned long long)st->period, st->seconds,
				     (unsigned long long)st->samples, (unsigned long long)st->lost);
	*n = 2;
	return lines;
}

int kp_cmd_record(int argc, char **argv)
{
	struct record_cli c;
	struct kp_session *sess = NULL;
	struct kp_symbolizer *sym = NULL;
	struct kp_folded *folded = NULL;
	struct kp_outfile out;
	struct kp_diag d = {""};
	struct kp_session_stats st;
	int first, exit_code = 0, r, status = 1;
	char **cmd_argv;
	bool to_terminal_report;
	char **lines = NULL;
	size_t nlines = 0;
	char *cache_dir = NULL;

	memset(&c, 0, sizeof(c));
	memset(&out, 0, sizeof(out));
	kp_perf_event_lookup("cycles", &c.sess.attr.event);
	c.sess.attr.freq = 99;
	c.sess.attr.build_id = true;
	c.sess.attr.max_stack = 127;
	kp_svg_opts_init(&c.svg);

	r = parse_args(&c, argc, argv, &first);
	if (r != 0) {
		status = r > 0 ? 0 : 2;
		goto out;
	}
	cmd_argv = argv + first;
	if (c.npids && c.sess.system_wide) {
		kp_err("-p/-t and -a/-C cannot be combined");
		usage_line(stderr);
		status = 2;
		goto out;
	}
	c.sess.pids = c.pids;
	c.sess.npids = c.npids;
	c.sess.argv = first < argc ? cmd_argv : NULL;
	c.sess.command_is_target = c.sess.argv && !c.sess.system_wide && !c.npids;
	c.sess.event_is_default = !c.event_given;
	if (!c.sess.argv && !c.sess.system_wide && !c.npids) {
		kp_err("nothing to sample: give a command, -a, -C, -p or -t");
		usage_line(stderr);
		status = 2;
		goto out;
	}

	/* the output is created before recording: a bad path fails at once */
	to_terminal_report = !c.folded && !c.output && isatty(STDOUT_FILENO);
	if (!to_terminal_report && kp_outfile_open(&out, c.output, &d) < 0) {
		kp_err("%s", d.msg);
		goto out;
	}

	c.sym.debuginfo_dirs = c.dirs;
	c.sym.n_debuginfo_dirs = c.ndirs;
	/* folded text, SVG and the report name functions only: no line tables */
	c.sym.no_lines = true;
	if (!c.no_cache)
		c.sym.cache_dir = cache_dir = kp_default_cache_dir();
	sym = kp_sym_new(&c.sym);
	c.sess.sym = sym;
	if (kp_session_new(&sess, &c.sess, &exit_code, &d) < 0) {
		kp_err("%s", d.msg);
		status = exit_code ? exit_code : 1;
		goto out;
	}
	{
		size_t n;
		const char *const *notes = kp_session_notes(sess, &n);

		for (size_t i = 0; i < n; i++)
			kp_warn("%s", notes[i]);
	}
	kp_session_run(sess, isatty(STDERR_FILENO) && !c.quiet ? show_progress : NULL, NULL, &d);
	if (isatty(STDERR_FILENO) && !c.quiet)
		fputs("\r\033[K", stderr);

	folded = kp_folded_new();
	kp_session_fold(sess, folded);
	kp_session_stats(sess, &st);
	if (!st.samples)
		warn_no_samples(&c, &st);
	{
		size_t n;
		const char *const *notes = kp_sym_notes(sym, &n);

		for (size_t i = 0; i < n; i++)
			kp_warn("%s", notes[i]);
	}

	if (to_terminal_report) {
		kp_report_top(folded, stdout, 20, "samples");
		fprintf(stdout, "\n(stdout is a terminal: for the flame graph use -o FILE.svg or "
				"redirect stdout; -f folded for folded stacks)\n");
		print_summary(&c, &st, "the report above");
	} else {
		if (c.folded) {
			r = kp_folded_write(folded, out.fp,
					    c.annotate ? KP_FOLDED_ANNOTATE_ALL : 0);
		} else {
			lines = info_lines(&st, argc, argv, &nlines);
			c.svg.info_lines = (const char *const *)lines;
			c.svg.n_info_lines = nlines;
			c.svg.allow_empty = true; /* a run with no samples still says so */
			r = kp_svg_write(folded, &c.svg, out.fp, &d);
		}
		if (r < 0 || kp_outfile_commit(&out, &d) < 0) {
			kp_err("%s", d.msg[0] ? d.msg : "cannot write the output");
			kp_outfile_abort(&out);
			goto out;
		}
		print_summary(&c, &st, kp_outfile_name(&out));
	}
	status = kp_session_exit_code(sess);
out:
	kp_outfile_abort(&out);
	for (size_t i = 0; i < nlines; i++)
		free(lines[i]);
	free(lines);
	kp_folded_free(folded);
	kp_session_free(sess);
	kp_sym_free(sym);
	free(c.pids);
	free(c.cpus);
	free(c.dirs);
	free(cache_dir);
	return status;
}
