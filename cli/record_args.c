#include "cli/record_args.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/messages.h"
#include "cli/output.h"
#include "cli/svg_options.h"
#include "push/credentials.h"
#include "util/cpulist.h"
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
	OPT_OFF_CPU,
	OPT_WALL,
	OPT_SWITCH_FREQ,
	OPT_SWITCH_SOURCE,
	OPT_MIN_WAIT,
	OPT_EVERY,
	OPT_KEEP,
	OPT_PUSH,
	OPT_LABEL,
	OPT_HEADER,
	OPT_SERVICE,
	OPT_TOKEN_FILE,
	OPT_PASSWORD_FILE,
	OPT_HEADER_FILE,
	OPT_SPOOL,
	OPT_PUSH_TIMEOUT,
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
	{"off-cpu", no_argument, NULL, OPT_OFF_CPU},
	{"wall", no_argument, NULL, OPT_WALL},
	{"switch-freq", required_argument, NULL, OPT_SWITCH_FREQ},
	{"switch-source", required_argument, NULL, OPT_SWITCH_SOURCE},
	{"min-wait", required_argument, NULL, OPT_MIN_WAIT},
	{"every", required_argument, NULL, OPT_EVERY},
	{"keep", required_argument, NULL, OPT_KEEP},
	{"push", required_argument, NULL, OPT_PUSH},
	{"label", required_argument, NULL, OPT_LABEL},
	{"header", required_argument, NULL, OPT_HEADER},
	{"service", required_argument, NULL, OPT_SERVICE},
	{"token-file", required_argument, NULL, OPT_TOKEN_FILE},
	{"password-file", required_argument, NULL, OPT_PASSWORD_FILE},
	{"header-file", required_argument, NULL, OPT_HEADER_FILE},
	{"spool", required_argument, NULL, OPT_SPOOL},
	{"push-timeout", required_argument, NULL, OPT_PUSH_TIMEOUT},
	{"version", no_argument, NULL, OPT_VERSION},
	{"help", no_argument, NULL, OPT_HELP},
};

void kp_record_args_usage(FILE *out)
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
	kp_record_args_usage(stdout);
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
	     "                            the stack (16384 bytes), frame pointers where no\n"
	     "                            table covers a frame, the kernel's chain past it\n"
	     "                          dwarf[,SIZE]: the same without the kernel's chain\n"
	     "                            past the copy\n"
	     "                          fp: the kernel's frame-pointer walk, validated, with\n"
	     "                            the leaf's caller recovered from its CFI\n"
	     "                          -g alone keeps the default (perf compatibility)\n"
	     "  -m, --mmap-pages N      ring buffer pages per CPU (power of two; default: sized\n"
	     "                          from frequency, stack copy size and CPUs)\n"
	     "What to measure (docs/offcpu.md):\n"
	     "      --off-cpu           where threads wait off CPU (blocked, sleeping, disk,\n"
	     "                          preempted): each wait's time on the stack it began at;\n"
	     "                          counts in microseconds\n"
	     "      --wall              on-CPU samples and off-CPU waits together, per thread:\n"
	     "                          each function's share of its thread's wall-clock time\n"
	     "      --switch-freq HZ    a switch storm: above this many switches a second per\n"
	     "                          CPU, stacks this many a second (default 1000; every\n"
	     "                          switch below; 0: every switch always); waits are\n"
	     "                          timed whatever the rate, and above it each stack's\n"
	     "                          time is estimated from the waits that had one\n"
	     "      --switch-source SRC what times the waits: bpf (in the kernel: the least\n"
	     "                          cost at a switch storm; root), perf (perf's switch\n"
	     "                          records), auto (bpf where it loads; the default)\n"
	     "      --min-wait USEC     leave out waits shorter than this (default 0)\n"
	     "Output:\n"
	     "  -f, --format FMT        svg (the default; the -o extension chooses too), folded,\n"
	     "                          top, or another of 'kprof report --help'\n"
	     "  -o, --output FILE       write here instead of stdout (atomically); repeatable:\n"
	     "                          one recording, several files, each in the format its\n"
	     "                          extension names (unless -f); an unknown one is an\n"
	     "                          error, none is svg; .folded.zst: zstd-compressed\n"
	     "      --pid               root frame comm-PID (also --per-pid)\n"
	     "      --tid               root frame comm-PID/TID (also --per-tid)\n"
	     "      --annotate          folded: mark kernel, JIT, inline frames _[k] _[j] _[i]\n"
	     "      --no-inline         no inline frames\n"
	     "      --full-names        keep C++ parameter lists\n"
	     "      --debuginfo-dir DIR also look for separate debuginfo here (repeatable)\n"
	     "      --no-cache          read /proc/kallsyms and each binary's DWARF, not the\n"
	     "                          kallsyms copy and build indexes kept in\n"
	     "                          $XDG_CACHE_HOME/kprof (~/.cache/kprof); keep none\n"
	     "Continuous profiling (docs/continuous.md):\n"
	     "      --every SECONDS     record in consecutive windows of this length until\n"
	     "                          stopped (SIGINT, SIGTERM: the current window is\n"
	     "                          finished and sent) or -d; needs -o or --push\n"
	     "  -o PATTERN              with --every: each window's file, strftime fields of\n"
	     "                          its start (e.g. prof-%Y%m%dT%H%M%S.kprof)\n"
	     "      --keep N            with --every -o: keep the last N window files\n"
	     "      --push KIND=URL     send each window as pprof: pyroscope=URL (its /ingest)\n"
	     "                          or parca=URL (its /api/profiles/writeraw); repeatable\n"
	     "      --service NAME      the service's name (default: the host name, or the\n"
	     "                          command's name)\n"
	     "      --label NAME=VALUE  a label of every window (repeatable)\n"
	     "      --header 'N: V'     an HTTP header of every push (repeatable; no secret:\n"
	     "                          every user reads the command line)\n"
	     "      --header-file FILE  a header of every push a line ('Name: value')\n"
	     "      --token-file FILE   'Authorization: Bearer' and the file's first line\n"
	     "      --password-file FILE  the password of the user a --push URL names\n"
	     "                          (http://USER@HOST); credential files: yours or\n"
	     "                          root's, mode 0600 (docs/push.md, Credentials)\n"
	     "      --spool DIR         keep unsent windows here (they survive a restart)\n"
	     "      --push-timeout S    seconds a push may take (default 10)\n"
	     "  -q, --quiet             no summary line\n"
	     "      --stats             also print how user stacks were unwound and its cost\n"
	     "      --version           print the version\n"
	     "  -h, --help              this text\n"
	     "Flame graph (with -f svg):");
	kp_svg_options_help(stdout);
	puts("\nSubcommands, each with its --help: kprof report (a profile in any format),\n"
	     "kprof diff (two profiles compared, a CI gate), kprof collapse, kprof flamegraph,\n"
	     "kprof symbolize. See kprof(1).");
}

static int parse_pids(const char *arg, pid_t **pids, size_t *n)
{
	char *copy = kp_xstrdup(arg), *save = NULL;
	size_t cap = 0;

	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (kp_args_parse_u64(tok, 1, INT_MAX, &v) < 0) {
			free(copy);
			return -EINVAL;
		}
		kp_xgrow(pids, &cap, *n + 1, sizeof(**pids));
		(*pids)[(*n)++] = (pid_t)v;
	}
	free(copy);
	return *n ? 0 : -EINVAL;
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
		if (kp_args_parse_u64(comma + 1, 64, KP_STACK_DUMP_MAX, &size) < 0)
			return -ERANGE;
		a->stack_dump_size = (uint32_t)((size + 7) & ~7ULL);
		if (a->stack_dump_size > KP_STACK_DUMP_MAX)
			a->stack_dump_size = KP_STACK_DUMP_MAX;
	}
	return 0;
}

void kp_record_args_init(struct kp_record_args *c)
{
	memset(c, 0, sizeof(*c));
	kp_perf_event_lookup("cycles", &c->sess.attr.event);
	c->sess.attr.freq = 99;
	c->sess.switch_freq = 1000;
	c->sess.attr.build_id = true;
	c->sess.attr.max_stack =
		(uint16_t)(kp_perf_max_stack() < KP_SESSION_MAX_FRAMES ? kp_perf_max_stack()
								       : KP_SESSION_MAX_FRAMES);
	kp_svg_opts_init(&c->svg);
}

/* The options below return 1 when they took opt, 0 when it is not theirs,
 * -1 on a bad value (said on stderr). */

/* What is sampled, and for how long. */
static int target_option(struct kp_record_args *c, int opt)
{
	switch (opt) {
	case 'a':
		c->sess.system_wide = true;
		return 1;
	case 'C': {
		int n = kp_cpulist_parse(optarg, &c->cpus);

		if (n < 0) {
			kp_err("-C: invalid CPU list '%s'", optarg);
			return -1;
		}
		c->sess.cpus = c->cpus;
		c->sess.ncpus = (size_t)n;
		c->sess.system_wide = true;
		return 1;
	}
	case 'p':
	case 't':
		if (parse_pids(optarg, &c->pids, &c->npids) < 0) {
			kp_err("-%c: invalid id list '%s'", opt, optarg);
			return -1;
		}
		c->sess.pids_are_tids = opt == 't';
		return 1;
	case 'd': {
		double dv;

		if (kp_args_parse_double(optarg, 0, 1e7, true, &dv) < 0) {
			kp_err("-d: invalid duration '%s'", optarg);
			return -1;
		}
		c->sess.duration = dv;
		return 1;
	}
	default:
		return 0;
	}
}

/* --switch-source: what times the waits (profiler/session.h). */
static int switch_source_option(struct kp_record_args *c, const char *arg)
{
	static const char *const names[] = {
		[KP_SWITCH_AUTO] = "auto", [KP_SWITCH_BPF] = "bpf", [KP_SWITCH_PERF] = "perf"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(arg, names[i]) == 0) {
			c->sess.switch_source = (enum kp_switch_source)i;
			return 1;
		}
	}
	kp_err("--switch-source: '%s' is not auto, bpf or perf", arg);
	return -1;
}

/* How: the event, its rate, the stacks, the rings. */
static int sampling_option(struct kp_record_args *c, int opt, int argc, char **argv)
{
	uint64_t v;
	int r;

	switch (opt) {
	case 'F':
		if (kp_args_parse_u64(optarg, 1, 1000000, &v) < 0) {
			kp_err("-F: invalid frequency '%s'", optarg);
			return -1;
		}
		c->sess.attr.freq = v;
		c->sess.attr.period = 0;
		return 1;
	case 'c':
		if (kp_args_parse_u64(optarg, 1, UINT64_MAX, &v) < 0) {
			kp_err("-c: invalid period '%s'", optarg);
			return -1;
		}
		c->sess.attr.period = v;
		return 1;
	case 'e':
		if (kp_perf_event_lookup(optarg, &c->sess.attr.event) < 0) {
			kp_err("unknown event '%s' (known: %s)", optarg, kp_perf_event_names());
			return -1;
		}
		c->event_given = true;
		return 1;
	case OPT_OFF_CPU:
	case OPT_WALL: {
		enum kp_session_mode m = opt == OPT_WALL ? KP_SESSION_WALL : KP_SESSION_OFFCPU;

		if (c->sess.mode != KP_SESSION_CPU && c->sess.mode != m) {
			kp_err("--off-cpu and --wall cannot be combined (--wall holds both)");
			return -1;
		}
		c->sess.mode = m;
		return 1;
	}
	case OPT_SWITCH_FREQ:
		if (kp_args_parse_u64(optarg, 0, 1000000, &v) < 0) {
			kp_err("--switch-freq: invalid frequency '%s'", optarg);
			return -1;
		}
		c->sess.switch_freq = v;
		return 1;
	case OPT_SWITCH_SOURCE:
		return switch_source_option(c, optarg);
	case OPT_MIN_WAIT:
		if (kp_args_parse_u64(optarg, 0, UINT64_MAX / 1000, &v) < 0) {
			kp_err("--min-wait: invalid microseconds '%s'", optarg);
			return -1;
		}
		c->sess.min_wait_ns = v * 1000;
		return 1;
	case 'm':
		if (kp_args_parse_u64(optarg, 1, 1 << 20, &v) < 0 || (v & (v - 1))) {
			kp_err("-m: pages must be a power of two, got '%s'", optarg);
			return -1;
		}
		c->sess.ring_pages = (unsigned)v;
		return 1;
	case 'g':
		/* perf's -g takes no mode; kprof's takes one when the next
		 * word is one, so `-g cmd` and `-g -- cmd` still work */
		if (optind >= argc)
			return 1;
		r = parse_callgraph(argv[optind], &c->sess.attr);
		if (r == 0)
			optind++;
		/* a mode with a bad size (dwarf,0) is not a command */
		if (r == -ERANGE) {
			kp_err("-g: the stack copy size must be 64 to %d bytes, got '%s'",
			       KP_STACK_DUMP_MAX, argv[optind]);
			return -1;
		}
		return 1;
	case OPT_CALL_GRAPH:
		r = parse_callgraph(optarg, &c->sess.attr);
		if (r == -ERANGE) {
			kp_err("--call-graph: the stack copy size must be 64 to %d bytes, "
			       "got "
			       "'%s'",
			       KP_STACK_DUMP_MAX, optarg);
			return -1;
		}
		if (r < 0) {
			kp_err("--call-graph: unknown mode '%s' (auto[,SIZE], fp, "
			       "dwarf[,SIZE])",
			       optarg);
			return -1;
		}
		return 1;
	default:
		return 0;
	}
}

/* What is written, and how frames are named. */
static int output_option(struct kp_record_args *c, int opt)
{
	switch (opt) {
	case 'o':
		kp_args_list_add(&c->outputs, optarg);
		return 1;
	case 'f':
		if (!kp_output_by_name(&kp_output_profile, optarg)) {
			kp_err("-f: unknown format '%s' (%s)", optarg,
			       kp_output_names(&kp_output_profile));
			return -1;
		}
		c->format = optarg;
		return 1;
	case 'q':
		c->quiet = true;
		return 1;
	case OPT_PID:
		c->sess.root_pid = true;
		return 1;
	case OPT_TID:
		c->sess.root_tid = true;
		return 1;
	case OPT_ANNOTATE:
		c->annotate = true;
		return 1;
	case OPT_NO_INLINE:
		c->sym.no_inline = true;
		return 1;
	case OPT_FULL_NAMES:
		c->sym.full_names = true;
		return 1;
	case OPT_DEBUGINFO_DIR:
		kp_args_list_add(&c->dirs, optarg);
		return 1;
	case OPT_NO_CACHE:
		c->no_cache = true;
		return 1;
	case OPT_STATS:
		c->stats = true;
		return 1;
	default:
		return 0;
	}
}

/* --every, and where its windows go. */
/* A secret on the command line is readable by every user through
 * /proc/PID/cmdline: arg is copied (owned by e->secrets) and argv's len
 * bytes at secret become "***", the rest moved up and NUL-padded, so that
 * the kernel shows the option, never the secret. Returns what to keep: the
 * copy, or arg when secret is NULL. */
static const char *keep_secret(struct kp_every_args *e, char *arg, char *secret, size_t len)
{
	size_t total, at, shown;
	char *copy;

	if (!secret)
		return arg;
	total = strlen(arg);
	at = (size_t)(secret - arg);
	copy = kp_xstrdup(arg);
	kp_args_list_add(&e->secrets, copy);
	/* at least one '*' of the secret's own length when it is shorter */
	shown = len < 3 ? len : 3;
	memset(arg + at, '*', shown);
	memmove(arg + at + shown, arg + at + len, total - at - len + 1);
	memset(arg + total - (len - shown), '\0', len - shown);
	return copy;
}

static int every_option(struct kp_record_args *c, int opt)
{
	struct kp_every_args *e = &c->every;
	char *secret;
	double dv;
	uint64_t v;
	size_t len = 0;

	switch (opt) {
	case OPT_EVERY:
		if (kp_args_parse_double(optarg, 1, 86400, false, &dv) < 0) {
			kp_err("--every: a window is 1 to 86400 seconds, got '%s'", optarg);
			return -1;
		}
		e->seconds = dv;
		return 1;
	case OPT_KEEP:
		if (kp_args_parse_u64(optarg, 1, 1000000, &v) < 0) {
			kp_err("--keep: invalid count '%s'", optarg);
			return -1;
		}
		e->keep = (unsigned)v;
		return 1;
	case OPT_PUSH_TIMEOUT:
		if (kp_args_parse_double(optarg, 0, 3600, true, &dv) < 0) {
			kp_err("--push-timeout: invalid seconds '%s'", optarg);
			return -1;
		}
		e->push_timeout = dv;
		return 1;
	case OPT_PUSH:
		secret = kp_push_credentials_in_url(optarg, &len);
		kp_args_list_add(&e->push, keep_secret(e, optarg, secret, len));
		return 1;
	case OPT_LABEL:
		kp_args_list_add(&e->labels, optarg);
		return 1;
	case OPT_HEADER:
		secret = kp_push_credentials_in_header(optarg, &len);
		kp_args_list_add(&e->headers, keep_secret(e, optarg, secret, len));
		return 1;
	case OPT_SERVICE:
		e->service = optarg;
		return 1;
	case OPT_TOKEN_FILE:
		e->token_file = optarg;
		return 1;
	case OPT_PASSWORD_FILE:
		e->password_file = optarg;
		return 1;
	case OPT_HEADER_FILE:
		e->header_file = optarg;
		return 1;
	case OPT_SPOOL:
		e->spool = optarg;
		return 1;
	default:
		return 0;
	}
}

/* What --every needs, and what only it takes. */
static int check_every(struct kp_record_args *c)
{
	const struct kp_every_args *e = &c->every;
	bool pushing = e->push.n || e->labels.n || e->headers.n || e->service || e->token_file ||
		       e->password_file || e->header_file || e->spool || e->push_timeout > 0;

	if (!e->seconds) {
		if (pushing || e->keep) {
			kp_err("--push, --label, --service, --header, --header-file, --token-file, "
			       "--password-file, --spool and --keep "
			       "go with --every SECONDS (continuous profiling)");
			return -1;
		}
		return 0;
	}
	if (c->sess.mode != KP_SESSION_CPU) {
		kp_err("--every records CPU profiles; --off-cpu and --wall are not continuous yet");
		return -1;
	}
	if (!c->outputs.n && !e->push.n) {
		kp_err("--every: where should the windows go? -o PATTERN (e.g. "
		       "prof-%%Y%%m%%dT%%H%%M%%S.kprof) and/or --push KIND=URL");
		return -1;
	}
	if (e->keep && !c->outputs.n) {
		kp_err("--keep N bounds the window files of -o PATTERN");
		return -1;
	}
	c->sym.continuous = true;
	return 0;
}

/* --off-cpu and --wall: what they need of the sampling options. Wall-clock
 * shares weigh on-CPU samples by their time, so the event is a clock. */
static int set_mode(struct kp_record_args *c)
{
	uint32_t type = c->sess.attr.event.type;
	uint64_t config = c->sess.attr.event.config;
	bool clock = type == PERF_TYPE_SOFTWARE &&
		     (config == PERF_COUNT_SW_CPU_CLOCK || config == PERF_COUNT_SW_TASK_CLOCK);

	if (c->sess.mode == KP_SESSION_OFFCPU && c->event_given) {
		kp_err("--off-cpu samples where threads leave the CPU: -e does not apply");
		return -1;
	}
	if (c->sess.mode != KP_SESSION_WALL)
		return 0;
	if (c->event_given && !clock) {
		kp_err("--wall weighs on-CPU samples by their time: -e cpu-clock or task-clock, "
		       "not %s",
		       c->sess.attr.event.name);
		return -1;
	}
	if (!c->event_given)
		kp_perf_event_lookup("cpu-clock", &c->sess.attr.event);
	/* wall-clock time is a thread's: one tower per thread */
	if (!c->sess.root_pid)
		c->sess.root_tid = true;
	return 0;
}

/* What the options ask of the session besides themselves: the command
 * (argv[first...]), the ids, and the run's metadata. -1 after saying why
 * when there is nothing to sample or targets conflict. */
static int set_session(struct kp_record_args *c, int argc, char **argv, int first)
{
	char **cmd_argv = argv + first;

	if (c->npids && c->sess.system_wide) {
		kp_err("-p/-t and -a/-C cannot be combined");
		kp_record_args_usage(stderr);
		return -1;
	}
	if (set_mode(c) < 0 || check_every(c) < 0)
		return -1;
	c->sess.pids = c->pids;
	c->sess.npids = c->npids;
	c->sess.argv = first < argc ? cmd_argv : NULL;
	c->sess.command_is_target = c->sess.argv && !c->sess.system_wide && !c->npids;
	c->sym.quiet_own = c->sess.system_wide; /* kprof samples itself */
	c->sess.event_is_default = !c->event_given || c->quiet;
	c->sess.version = KP_VERSION;
	c->sess.kprof_argv = argv;
	c->sess.kprof_argc = (size_t)argc;
	if (!c->sess.argv && !c->sess.system_wide && !c->npids) {
		kp_err("nothing to sample: give a command, -a, -C, -p or -t");
		kp_record_args_usage(stderr);
		return -1;
	}
	c->sym.debuginfo_dirs = c->dirs.v;
	c->sym.n_debuginfo_dirs = c->dirs.n;
	return 0;
}

int kp_record_args_parse(struct kp_record_args *c, int argc, char **argv)
{
	struct option *opts = kp_svg_options_with(
		record_longopts, sizeof(record_longopts) / sizeof(record_longopts[0]));
	int opt, r = 0;

	optind = 1;
	/* '+': stop at the first non-option, the command */
	while ((opt = getopt_long(argc, argv, "+aC:p:t:F:c:e:o:f:d:m:qgh", opts, NULL)) != -1) {
		if (opt == OPT_VERSION) {
			printf("kprof %s\n", KP_VERSION);
			free(opts);
			return 1;
		}
		if (opt == OPT_HELP || opt == 'h') {
			help();
			free(opts);
			return 1;
		}
		r = target_option(c, opt);
		if (r == 0)
			r = sampling_option(c, opt, argc, argv);
		if (r == 0)
			r = output_option(c, opt);
		if (r == 0)
			r = every_option(c, opt);
		if (r == 0) {
			r = kp_svg_options_apply(opt, optarg, &c->svg);
			if (r < 0)
				break; /* a bad SVG value: said, without the usage line */
		}
		if (r <= 0) {
			/* a bad value of ours (said), or an unknown option */
			kp_record_args_usage(stderr);
			r = -1;
			break;
		}
	}
	free(opts);
	if (c->every.secrets.n)
		kp_warn("a credential was given on the command line (the user:password of a "
			"--push URL, or a --header such as Authorization): every user could read "
			"it "
			"until kprof hid it at start. Give it with --token-file, --password-file, "
			"--header-file, KPROF_PUSH_TOKEN, KPROF_PUSH_PASSWORD, KPROF_PUSH_HEADERS "
			"or "
			"systemd's credentials (docs/push.md, \"Credentials\")");
	return r < 0 ? -1 : set_session(c, argc, argv, optind);
}

void kp_record_args_output_ctx(struct kp_record_args *c, const struct kp_profile *p, bool windows,
			       struct kp_output_ctx *ctx)
{
	*ctx = (struct kp_output_ctx){0};
	ctx->profile = p;
	ctx->fold.root_pid = c->sess.root_pid;
	ctx->fold.root_tid = c->sess.root_tid;
	ctx->annotate = c->annotate;
	/* the lines under the SVG's title come from the profile's metadata
	 * (output/output.c), as when `kprof report` draws its .kprof */
	c->svg.allow_empty = true; /* a run with no samples still says so */
	ctx->svg = &c->svg;
	ctx->windows = windows;
}

void kp_record_args_free(struct kp_record_args *c)
{
	kp_args_list_free(&c->outputs);
	kp_args_list_free(&c->dirs);
	kp_args_list_free(&c->every.push);
	kp_args_list_free(&c->every.labels);
	kp_args_list_free(&c->every.headers);
	for (size_t i = 0; i < c->every.secrets.n; i++) {
		char *copy = (char *)c->every.secrets.v[i];

		explicit_bzero(copy, strlen(copy));
		free(copy);
	}
	kp_args_list_free(&c->every.secrets);
	free(c->pids);
	free(c->cpus);
}
