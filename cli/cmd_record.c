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

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/messages.h"
#include "cli/output.h"
#include "cli/svg_options.h"
#include "flamegraph/svg.h"
#include "profiler/session.h"
#include "symbolize/symbolize.h"
#include "util/cpulist.h"
#include "util/outfile.h"
#include "util/xalloc.h"

enum {
	OPT_PID = 2000,
	OPT_TID,
	OPT_ANNOTATE,
	OPT_NO_INLINE,
	OPT_FULL_NAMES,
	OPT_DEBUGINFO_DIR,
	OPT_NO_CACHE,
	OPT_CALL_GRAPH,
	OPT_STATS,
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
	{"stats", no_argument, NULL, OPT_STATS},
	{"version", no_argument, NULL, OPT_VERSION},
	{"help", no_argument, NULL, OPT_HELP},
};

static void usage_line(FILE *out)
{
	fprintf(out, "usage: kprof [-a | -C CPUS | -p PID | -t TID] [-F HZ | -c N] [-e EVENT] "
		     "[-f FORMAT] [-o FILE] [-d SECONDS] [--] [COMMAND [ARGS...]]\n"
		     "       kprof collapse [OPTIONS] [FILE...]\n"
		     "       kprof flamegraph [OPTIONS] [FILE...]\n"
		     "       kprof symbolize -e FILE [OPTIONS] [ADDR...]\n"
		     "       kprof report [OPTIONS] FILE\n");
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
	     "  -g, --call-graph MODE   how user stacks are unwound (kernel frames always come\n"
	     "                          from the kernel's frame-pointer walk):\n"
	     "                          auto[,SIZE] (default): CFI (.eh_frame) over a copy of\n"
	     "                            the stack (8192 bytes), frame pointers where no\n"
	     "                            table covers a frame, the kernel's chain past it\n"
	     "                          dwarf[,SIZE]: the same without the kernel's chain\n"
	     "                            past the copy\n"
	     "                          fp: the kernel's frame-pointer walk, validated, with\n"
	     "                            the leaf's caller recovered from its CFI\n"
	     "                          -g alone keeps the default (perf compatibility)\n"
	     "  -m, --mmap-pages N      ring buffer pages per CPU (power of two; default: sized\n"
	     "                          from frequency, stack copy size and CPUs)\n"
	     "Output:\n"
	     "  -f, --format FMT        svg (the default; the -o extension chooses too), folded,\n"
	     "                          top, or another of 'kprof report --help'\n"
	     "  -o, --output FILE       write here instead of stdout (atomically); repeatable:\n"
	     "                          one recording, several files, each in the format its\n"
	     "                          extension names (unless -f)\n"
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
	     "      --stats             also print how user stacks were unwound and its cost\n"
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

/* -g / --call-graph MODE: fp, dwarf[,SIZE] or auto[,SIZE]. Returns 0, -EINVAL
 * for an unknown mode or -ERANGE for a bad size. */
static int parse_callgraph(const char *arg, struct kp_attr_opts *a)
{
	const char *comma = strchr(arg, ',');
	size_t len = comma ? (size_t)(comma - arg) : strlen(arg);
	uint64_t size = 0;

	if (len == 2 && strncmp(arg, "fp", 2) == 0 && !comma)
		a->callgraph = KP_CALLGRAPH_FP;
	else if (len == 4 && strncmp(arg, "auto", 4) == 0)
		a->callgraph = KP_CALLGRAPH_AUTO;
	else if (len == 5 && strncmp(arg, "dwarf", 5) == 0)
		a->callgraph = KP_CALLGRAPH_DWARF;
	else
		return -EINVAL;
	if (comma) {
		if (parse_u64(comma + 1, &size) < 0 || size < 64 || size > KP_STACK_DUMP_MAX)
			return -ERANGE;
		a->stack_dump_size = (uint32_t)((size + 7) & ~7ULL);
		if (a->stack_dump_size > KP_STACK_DUMP_MAX)
			a->stack_dump_size = KP_STACK_DUMP_MAX;
	}
	return 0;
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
	struct kp_args_list outputs; /* -o, repeatable; none: stdout */
	const char *format;	     /* -f NAME, or NULL */
	bool annotate;
	bool quiet;
	bool stats;
	bool event_given;
	bool no_cache;
	struct kp_args_list dirs; /* --debuginfo-dir, repeatable */
	pid_t *pids;
	size_t npids;
	int *cpus;
};

static int parse_args(struct record_cli *c, int argc, char **argv, int *optind_out)
{
	struct option *opts;
	int opt;

	opts = kp_svg_options_with(record_longopts,
				   sizeof(record_longopts) / sizeof(record_longopts[0]));

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
			kp_args_list_add(&c->outputs, optarg);
			break;
		case 'f':
			if (!kp_output_by_name(&kp_output_profile, optarg)) {
				kp_err("-f: unknown format '%s' (%s)", optarg,
				       kp_output_names(&kp_output_profile));
				goto usage;
			}
			c->format = optarg;
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
			/* perf's -g takes no mode; kprof's takes one when the next
			 * word is one, so `-g cmd` and `-g -- cmd` still work */
			if (optind >= argc)
				break;
			r = parse_callgraph(argv[optind], &c->sess.attr);
			if (r == 0)
				optind++;
			/* a mode with a bad size (dwarf,0) is not a command */
			if (r == -ERANGE) {
				kp_err("-g: the stack copy size must be 64 to %d bytes, got '%s'",
				       KP_STACK_DUMP_MAX, argv[optind]);
				goto usage;
			}
			break;
		case OPT_CALL_GRAPH:
			r = parse_callgraph(optarg, &c->sess.attr);
			if (r == -ERANGE) {
				kp_err("--call-graph: the stack copy size must be 64 to %d bytes, "
				       "got "
				       "'%s'",
				       KP_STACK_DUMP_MAX, optarg);
				goto usage;
			}
			if (r < 0) {
				kp_err("--call-graph: unknown mode '%s' (auto[,SIZE], fp, "
				       "dwarf[,SIZE])",
				       optarg);
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
			kp_args_list_add(&c->dirs, optarg);
			break;
		case OPT_NO_CACHE:
			c->no_cache = true;
			break;
		case OPT_STATS:
			c->stats = true;
			break;
		case OPT_VERSION:
			printf("kprof %s\n", KP_VERSION);
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

	/* then it was not too short: the rings could not hold a sample */
	if (st->lost)
		kp_warn("no samples were recorded: all %llu were lost, the rings (%u page%s per "
			"CPU) too small for a sample and its stack copy; give a larger -m",
			(unsigned long long)st->lost, st->ring_pages,
			st->ring_pages == 1 ? "" : "s");
	else if (c->sess.command_is_target)
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

static const char *const end_names[KP_UNWIND_NEND] = {
	[KP_UNWIND_OUTERMOST] = "whole",	   [KP_UNWIND_SNAPSHOT] = "snapshot too small",
	[KP_UNWIND_DEPTH] = "depth limit",	   [KP_UNWIND_BAD_FRAME] = "bad frame",
	[KP_UNWIND_NO_REGS] = "no user registers",
};

/* The stack entries of the profile, weighted by samples, and those left
 * unresolved, by location kind. */
struct frame_counts {
	kp_count frames, unresolved[KP_LOC_NKINDS];
};

static void print_summary(const struct record_cli *c, const struct kp_session_stats *st,
			  const struct frame_counts *fc, const char *where)
{
	kp_count unres = 0;
	double share;
	char trunc[256] = "";
	size_t len = 0;

	for (size_t k = 0; k < KP_LOC_NKINDS; k++)
		unres += fc->unresolved[k];
	share = fc->frames ? 100.0 * (double)unres / (double)fc->frames : 0.0;

	if (c->quiet)
		return;
	/* why stacks were cut, by cause (the fp chain's own cuts included) */
	for (int e = KP_UNWIND_SNAPSHOT; e < KP_UNWIND_NEND; e++)
		if (st->ends[e])
			len += (size_t)snprintf(trunc + len, sizeof(trunc) - len, "%s %s %llu",
						len ? "," : ":", end_names[e],
						(unsigned long long)st->ends[e]);
	if (st->fp_cut)
		snprintf(trunc + len, sizeof(trunc) - len, "%s frame-pointer chain cut %llu",
			 len ? "," : ":", (unsigned long long)st->fp_cut);
	fprintf(stderr,
		"kprof: %llu samples, %llu lost, %zu process%s, %.1f s; %.1f%% of frames "
		"unresolved (kernel %llu, user %llu, JIT %llu, other %llu); %llu stacks "
		"truncated%s; profile in %s\n",
		(unsigned long long)st->samples, (unsigned long long)st->lost, st->nprocs,
		st->nprocs == 1 ? "" : "es", st->seconds, share,
		(unsigned long long)fc->unresolved[KP_LOC_KERNEL],
		(unsigned long long)fc->unresolved[KP_LOC_USER],
		(unsigned long long)fc->unresolved[KP_LOC_JIT],
		(unsigned long long)fc->unresolved[KP_LOC_UNKNOWN],
		(unsigned long long)st->truncated, trunc, where);
	if (st->lost)
		fprintf(stderr,
			"kprof: %llu records were lost: the rings (%u pages per CPU) filled "
			"faster than kprof read them; -m %u would avoid it\n",
			(unsigned long long)st->lost, st->ring_pages,
			st->ring_pages < (1u << 18) ? st->ring_pages * 4 : st->ring_pages);
	if (c->stats)
		fprintf(stderr,
			"kprof: unwinding: %llu stacks from snapshots (median %.1f us, p99 %.1f "
			"us, %.3f s in all), %llu continued with the kernel's chain, %llu leaves "
			"repaired; unwind tables of %llu objects (%llu without), %.1f MB read; "
			"rings %u pages per CPU\n",
			(unsigned long long)st->unwound, (double)st->unwind_ns_p50 / 1000.0,
			(double)st->unwind_ns_p99 / 1000.0, (double)st->unwind_ns_total / 1e9,
			(unsigned long long)st->spliced, (unsigned long long)st->leaf_repaired,
			(unsigned long long)st->tables.objects,
			(unsigned long long)st->tables.objects_no_table,
			(double)st->tables.table_bytes / 1e6, st->ring_pages);
}

int kp_cmd_record(int argc, char **argv)
{
	struct record_cli c;
	struct kp_session *sess = NULL;
	struct kp_symbolizer *sym = NULL;
	struct kp_output_ctx ctx = {0};
	struct kp_profile *prof;
	struct frame_counts fc;
	struct kp_outputs outs = {0};
	char where[1024] = "";
	struct kp_diag d = {""};
	struct kp_session_stats st;
	int first, exit_code = 0, r, status = 1;
	char **cmd_argv;
	char *cache_dir = NULL;
	const char *const *notes;
	size_t nnotes;

	memset(&c, 0, sizeof(c));
	kp_perf_event_lookup("cycles", &c.sess.attr.event);
	c.sess.attr.freq = 99;
	c.sess.attr.build_id = true;
	c.sess.attr.max_stack =
		(uint16_t)(kp_perf_max_stack() < KP_SESSION_MAX_FRAMES ? kp_perf_max_stack()
								       : KP_SESSION_MAX_FRAMES);
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
	c.sess.version = KP_VERSION;
	c.sess.kprof_argv = argv;
	c.sess.kprof_argc = (size_t)argc;
	if (!c.sess.argv && !c.sess.system_wide && !c.npids) {
		kp_err("nothing to sample: give a command, -a, -C, -p or -t");
		usage_line(stderr);
		status = 2;
		goto out;
	}

	/* each output's format: -f, else the -o extension, else an SVG (the
	 * top functions when it would go to a terminal); none: stdout. The
	 * files are created before recording: a bad path fails at once. */
	status = kp_outputs_open(&outs, &kp_output_profile, c.format, c.outputs.v, c.outputs.n, "");
	if (status)
		goto out;
	status = 1;

	c.sym.debuginfo_dirs = c.dirs.v;
	c.sym.n_debuginfo_dirs = c.dirs.n;
	/* folded text, SVG and the top table name functions only: line tables
	 * are read only for the outputs that keep lines */
	c.sym.no_lines = true;
	for (size_t i = 0; i < outs.n; i++)
		if (outs.fmt[i]->lines)
			c.sym.no_lines = false;
	if (!c.no_cache)
		c.sym.cache_dir = cache_dir = kp_args_cache_dir();
	sym = kp_sym_new(&c.sym);
	c.sess.sym = sym;
	if (kp_session_new(&sess, &c.sess, &exit_code, &d) < 0) {
		kp_err("%s", d.msg);
		status = exit_code ? exit_code : 1;
		goto out;
	}
	notes = kp_session_notes(sess, &nnotes);
	kp_warn_notes(notes, nnotes);
	kp_session_run(sess, isatty(STDERR_FILENO) && !c.quiet ? show_progress : NULL, NULL, &d);
	if (isatty(STDERR_FILENO) && !c.quiet)
		fputs("\r\033[K", stderr);

	prof = kp_session_profile(sess);
	kp_sym_name_profile(sym, prof);
	kp_session_stats(sess, &st);
	kp_session_count_unresolved(sess);
	kp_profile_frame_counts(prof, 0, &fc.frames, fc.unresolved);
	if (!st.samples)
		warn_no_samples(&c, &st);
	notes = kp_sym_notes(sym, &nnotes);
	kp_warn_notes(notes, nnotes);

	ctx.profile = prof;
	ctx.fold.root_pid = c.sess.root_pid;
	ctx.fold.root_tid = c.sess.root_tid;
	ctx.annotate = c.annotate;
	ctx.svg = &c.svg;
	/* the lines under the SVG's title come from the profile's metadata
	 * (cli/output.c), as when `kprof report` draws its .kprof */
	c.svg.allow_empty = true; /* a run with no samples still says so */
	if (kp_outputs_write(&outs, &ctx, where, sizeof(where)))
		goto out;
	if (outs.terminal_top) {
		fprintf(stdout, "\n(stdout is a terminal: for the flame graph use -o FILE.svg or "
				"redirect stdout; -f folded for folded stacks)\n");
		print_summary(&c, &st, &fc, "the report above");
	} else {
		print_summary(&c, &st, &fc, where);
	}
	status = kp_session_exit_code(sess);
out:
	kp_outputs_free(&outs);
	kp_args_list_free(&c.outputs);
	kp_session_free(sess);
	kp_sym_free(sym);
	free(c.pids);
	free(c.cpus);
	kp_args_list_free(&c.dirs);
	free(cache_dir);
	return status;
}
