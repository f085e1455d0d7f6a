#include "cli/record_args.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/messages.h"
#include "cli/output.h"
#include "cli/svg_options.h"
#include "push/credentials.h"
#include "util/cpulist.h"
#include "util/xalloc.h"

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
	kp_session_opts_init(&c->sess);
	kp_svg_opts_init(&c->svg);
}

struct parse_state;

/* What an option does with its value. */
enum opt_kind {
	OPT_FLAG,    /* sets a bool */
	OPT_COUNT,   /* a whole number from min to max into an unsigned field */
	OPT_SECONDS, /* a number from min (above it: open_min) to max into a double */
	OPT_STRING,  /* keeps argv's string */
	OPT_LIST,    /* adds argv's string to a kp_args_list */
	OPT_CALL,    /* set() takes the value */
	OPT_ACTION,  /* set() takes no value */
	OPT_VERSION,
	OPT_HELP,
};

/* One option of `kprof [record]`: its long name and letter, what it sets
 * (a field of struct kp_record_args, or set()), a number's bounds and what
 * a bad value is called (said before 'VALUE'). The table's order is
 * getopt's, which names ambiguous abbreviations in it; --help says the
 * options grouped (help()). An alias row takes the option of the row
 * named alias (getopt then counts them one). */
struct record_opt {
	const char *name; /* --NAME, or NULL: a letter alone */
	char letter;	  /* -X, or 0: a long name alone */
	enum opt_kind kind;
	size_t off, size; /* the field, in struct kp_record_args */
	uint64_t min, max;
	bool open_min;
	const char *bad;
	int (*set)(struct parse_state *s, char *arg);
	const char *alias;
};

/* The options that are more than a number, a flag or a string: each returns
 * 0, -EINVAL for a bad value (the loop says its row's message), or -1 after
 * saying why itself. */
struct parse_state {
	struct kp_record_args *c;
	const struct record_opt *row; /* the option's */
	int argc;
	char **argv;
};

static int set_cpus(struct parse_state *s, char *arg)
{
	int n = kp_cpulist_parse(arg, &s->c->cpus);

	if (n < 0)
		return -EINVAL;
	s->c->sess.cpus = s->c->cpus;
	s->c->sess.ncpus = (size_t)n;
	s->c->sess.system_wide = true;
	return 0;
}

/* -p, -t: the row's letter says which */
static int set_ids(struct parse_state *s, char *arg)
{
	if (parse_pids(arg, &s->c->pids, &s->c->npids) < 0)
		return -EINVAL;
	s->c->sess.pids = s->c->pids;
	s->c->sess.npids = s->c->npids;
	s->c->sess.pids_are_tids = s->row->letter == 't';
	return 0;
}

static int set_freq(struct parse_state *s, char *arg)
{
	uint64_t v;

	if (kp_args_parse_u64(arg, 1, 1000000, &v) < 0)
		return -EINVAL;
	s->c->sess.attr.freq = v;
	s->c->sess.attr.period = 0;
	return 0;
}

static int set_event(struct parse_state *s, char *arg)
{
	if (kp_perf_event_lookup(arg, &s->c->sess.attr.event) < 0) {
		kp_err("unknown event '%s' (known: %s)", arg, kp_perf_event_names());
		return -1;
	}
	s->c->event_given = true;
	return 0;
}

/* --off-cpu, --wall: the row's min is the mode */
static int set_mode_opt(struct parse_state *s, char *arg)
{
	enum kp_session_mode m = (enum kp_session_mode)s->row->min;

	(void)arg;
	if (s->c->sess.mode != KP_SESSION_CPU && s->c->sess.mode != m) {
		kp_err("--off-cpu and --wall cannot be combined (--wall holds both)");
		return -1;
	}
	s->c->sess.mode = m;
	return 0;
}

/* --switch-source: what times the waits (profiler/session.h). */
static int set_switch_source(struct parse_state *s, char *arg)
{
	static const char *const names[] = {
		[KP_SWITCH_AUTO] = "auto", [KP_SWITCH_BPF] = "bpf", [KP_SWITCH_PERF] = "perf"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(arg, names[i]) == 0) {
			s->c->sess.switch_source = (enum kp_switch_source)i;
			return 0;
		}
	}
	kp_err("--switch-source: '%s' is not auto, bpf or perf", arg);
	return -1;
}

static int set_min_wait(struct parse_state *s, char *arg)
{
	uint64_t v;

	if (kp_args_parse_u64(arg, 0, UINT64_MAX / 1000, &v) < 0)
		return -EINVAL;
	s->c->sess.min_wait_ns = v * 1000;
	return 0;
}

static int set_mmap_pages(struct parse_state *s, char *arg)
{
	uint64_t v;

	if (kp_args_parse_u64(arg, 1, 1 << 20, &v) < 0 || (v & (v - 1)))
		return -EINVAL;
	s->c->sess.ring_pages = (unsigned)v;
	return 0;
}

/* perf's -g takes no mode; kprof's takes one when the next word is one, so
 * `-g cmd` and `-g -- cmd` still work */
static int set_g(struct parse_state *s, char *arg)
{
	int r;

	(void)arg;
	if (optind >= s->argc)
		return 0;
	r = parse_callgraph(s->argv[optind], &s->c->sess.attr);
	if (r == 0)
		optind++;
	/* a mode with a bad size (dwarf,0) is not a command */
	if (r == -ERANGE) {
		kp_err("-g: the stack copy size must be 64 to %d bytes, got '%s'",
		       KP_STACK_DUMP_MAX, s->argv[optind]);
		return -1;
	}
	return 0;
}

static int set_call_graph(struct parse_state *s, char *arg)
{
	int r = parse_callgraph(arg, &s->c->sess.attr);

	if (r == -ERANGE)
		kp_err("--call-graph: the stack copy size must be 64 to %d bytes, got '%s'",
		       KP_STACK_DUMP_MAX, arg);
	else if (r < 0)
		kp_err("--call-graph: unknown mode '%s' (auto[,SIZE], fp, dwarf[,SIZE])", arg);
	return r < 0 ? -1 : 0;
}

static int set_format(struct parse_state *s, char *arg)
{
	if (!kp_output_by_name(&kp_output_profile, arg)) {
		kp_err("-f: unknown format '%s' (%s)", arg, kp_output_names(&kp_output_profile));
		return -1;
	}
	s->c->format = arg;
	return 0;
}

/* --push, --header: a secret in arg is hidden from /proc/PID/cmdline at
 * once (push/credentials.h), its copy kept, wiped at the end; the row's
 * field is the list */
static int set_secret(struct parse_state *s, char *arg)
{
	char *copy = kp_push_credentials_hide(arg, s->row->name[0] == 'h');

	if (copy)
		kp_args_list_add(&s->c->every.secrets, copy);
	kp_args_list_add((struct kp_args_list *)(void *)((char *)s->c + s->row->off),
			 copy ? copy : arg);
	return 0;
}

#define FIELD(f) \
	.off = offsetof(struct kp_record_args, f), .size = sizeof(((struct kp_record_args *)0)->f)

/* clang-format off */
static const struct record_opt record_opts[] = {
	{.name = "all-cpus", .letter = 'a', .kind = OPT_FLAG, FIELD(sess.system_wide)},
	{.name = "cpu", .letter = 'C', .kind = OPT_CALL, .set = set_cpus, .bad = "-C: invalid CPU list"},
	{.name = "freq", .letter = 'F', .kind = OPT_CALL, .set = set_freq, .bad = "-F: invalid frequency"},
	{.name = "count", .letter = 'c', .kind = OPT_COUNT, FIELD(sess.attr.period), .min = 1, .max = UINT64_MAX, .bad = "-c: invalid period"},
	{.name = "event", .letter = 'e', .kind = OPT_CALL, .set = set_event},
	{.name = "output", .letter = 'o', .kind = OPT_LIST, FIELD(outputs)},
	{.name = "format", .letter = 'f', .kind = OPT_CALL, .set = set_format},
	{.name = "duration", .letter = 'd', .kind = OPT_SECONDS, FIELD(sess.duration), .min = 0, .max = 10000000, .open_min = true, .bad = "-d: invalid duration"},
	{.name = "mmap-pages", .letter = 'm', .kind = OPT_CALL, .set = set_mmap_pages, .bad = "-m: pages must be a power of two, got"},
	{.name = "quiet", .letter = 'q', .kind = OPT_FLAG, FIELD(quiet)},
	{.name = "call-graph", .kind = OPT_CALL, .set = set_call_graph},
	/* --pid/--tid name the root frame as stackcollapse-perf.pl does
	 * (attaching is -p/-t); --per-pid/--per-tid are the same */
	{.name = "pid", .kind = OPT_FLAG, FIELD(sess.root_pid)},
	{.name = "tid", .kind = OPT_FLAG, FIELD(sess.root_tid)},
	{.name = "per-pid", .kind = OPT_FLAG, .alias = "pid"},
	{.name = "per-tid", .kind = OPT_FLAG, .alias = "tid"},
	{.name = "annotate", .kind = OPT_FLAG, FIELD(annotate)},
	{.name = "no-inline", .kind = OPT_FLAG, FIELD(sym.no_inline)},
	{.name = "full-names", .kind = OPT_FLAG, FIELD(sym.full_names)},
	{.name = "debuginfo-dir", .kind = OPT_LIST, FIELD(dirs)},
	{.name = "no-cache", .kind = OPT_FLAG, FIELD(no_cache)},
	{.name = "stats", .kind = OPT_FLAG, FIELD(stats)},
	{.name = "off-cpu", .kind = OPT_ACTION, .min = KP_SESSION_OFFCPU, .set = set_mode_opt},
	{.name = "wall", .kind = OPT_ACTION, .min = KP_SESSION_WALL, .set = set_mode_opt},
	{.name = "switch-freq", .kind = OPT_COUNT, FIELD(sess.switch_freq), .min = 0, .max = 1000000, .bad = "--switch-freq: invalid frequency"},
	{.name = "switch-source", .kind = OPT_CALL, .set = set_switch_source},
	{.name = "min-wait", .kind = OPT_CALL, .set = set_min_wait, .bad = "--min-wait: invalid microseconds"},
	{.name = "every", .kind = OPT_SECONDS, FIELD(every.seconds), .min = 1, .max = 86400, .open_min = false, .bad = "--every: a window is 1 to 86400 seconds, got"},
	{.name = "keep", .kind = OPT_COUNT, FIELD(every.keep), .min = 1, .max = 1000000, .bad = "--keep: invalid count"},
	{.name = "push", .kind = OPT_CALL, FIELD(every.push), .set = set_secret},
	{.name = "label", .kind = OPT_LIST, FIELD(every.labels)},
	{.name = "header", .kind = OPT_CALL, FIELD(every.headers), .set = set_secret},
	{.name = "service", .kind = OPT_STRING, FIELD(every.service)},
	{.name = "token-file", .kind = OPT_STRING, FIELD(every.token_file)},
	{.name = "password-file", .kind = OPT_STRING, FIELD(every.password_file)},
	{.name = "header-file", .kind = OPT_STRING, FIELD(every.header_file)},
	{.name = "spool", .kind = OPT_STRING, FIELD(every.spool)},
	{.name = "push-timeout", .kind = OPT_SECONDS, FIELD(every.push_timeout), .min = 0, .max = 3600, .open_min = true, .bad = "--push-timeout: invalid seconds"},
	{.name = "version", .kind = OPT_VERSION},
	{.name = "help", .letter = 'h', .kind = OPT_HELP},
	{.letter = 'p', .kind = OPT_CALL, .set = set_ids, .bad = "-p: invalid id list"},
	{.letter = 't', .kind = OPT_CALL, .set = set_ids, .bad = "-t: invalid id list"},
	{.letter = 'g', .kind = OPT_ACTION, .set = set_g},
};
/* clang-format on */

#define N_OPTS (sizeof(record_opts) / sizeof(record_opts[0]))

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

/* What the options ask of the session besides themselves (profiler/
 * session_opts.c), of --every, the command (argv[first...]) and the run's
 * metadata. -1 after saying why (with the usage line when there is nothing
 * to sample or targets conflict). */
static int set_session(struct kp_record_args *c, int argc, char **argv, int first)
{
	struct kp_diag d = {""};
	int r = kp_session_opts_check(&c->sess, c->event_given, &d);

	if (r == 0 && check_every(c) < 0)
		return -1;
	if (r == 0)
		r = kp_session_opts_command(&c->sess, first < argc ? argv + first : NULL, &d);
	if (r < 0) {
		kp_err("%s", d.msg);
		if (r == -EINVAL)
			kp_record_args_usage(stderr);
		return -1;
	}
	c->sym.quiet_own = c->sess.system_wide; /* kprof samples itself */
	c->sess.event_is_default = !c->event_given || c->quiet;
	c->sess.version = KP_VERSION;
	c->sess.kprof_argv = argv;
	c->sess.kprof_argc = (size_t)argc;
	c->sym.debuginfo_dirs = c->dirs.v;
	c->sym.n_debuginfo_dirs = c->dirs.n;
	return 0;
}

/* getopt's value of row i: its letter, or 2000 + its index (an alias's:
 * its option's). */
static int val_of(size_t i)
{
	const struct record_opt *o = &record_opts[i];

	for (size_t j = 0; o->alias && j < N_OPTS; j++)
		if (record_opts[j].name && strcmp(record_opts[j].name, o->alias) == 0)
			return val_of(j);
	return o->letter ? o->letter : 2000 + (int)i;
}

static bool takes_value(const struct record_opt *o)
{
	return o->kind != OPT_FLAG && o->kind != OPT_ACTION && o->kind != OPT_VERSION &&
	       o->kind != OPT_HELP;
}

/* getopt_long's table (the SVG options after ours; the caller frees it),
 * and its letters in shorts ('+': stop at the first non-option, the
 * command). */
static struct option *getopt_table(char *shorts, size_t size)
{
	struct option own[N_OPTS];
	size_t n = 0, len = 0;

	shorts[len++] = '+';
	for (size_t i = 0; i < N_OPTS; i++) {
		const struct record_opt *o = &record_opts[i];

		if (o->name)
			own[n++] = (struct option){o->name,
						   takes_value(o) ? required_argument : no_argument,
						   NULL, val_of(i)};
		if (o->letter && len + 3 <= size) {
			shorts[len++] = o->letter;
			if (takes_value(o))
				shorts[len++] = ':';
		}
	}
	shorts[len] = '\0';
	return kp_svg_options_with(own, n);
}

/* Sets what row o says from arg. Returns 0, or -1 after saying why. */
static int apply(struct parse_state *s, const struct record_opt *o, char *arg)
{
	char *field = (char *)s->c + o->off;
	uint64_t v = 0;
	double d = 0;
	int r = 0;

	switch (o->kind) {
	case OPT_FLAG:
		*(bool *)field = true;
		break;
	case OPT_COUNT:
		r = kp_args_parse_u64(arg, o->min, o->max, &v);
		if (r == 0 && o->size == sizeof(unsigned))
			*(unsigned *)field = (unsigned)v;
		else if (r == 0)
			*(uint64_t *)field = v;
		break;
	case OPT_SECONDS:
		r = kp_args_parse_double(arg, (double)o->min, (double)o->max, o->open_min, &d);
		if (r == 0)
			*(double *)field = d;
		break;
	case OPT_STRING:
		*(const char **)field = arg;
		break;
	case OPT_LIST:
		kp_args_list_add((struct kp_args_list *)(void *)field, arg);
		break;
	default:
		s->row = o;
		r = o->set(s, arg);
	}
	if (r == -EINVAL)
		kp_err("%s '%s'", o->bad, arg);
	return r < 0 ? -1 : 0;
}

int kp_record_args_parse(struct kp_record_args *c, int argc, char **argv)
{
	struct parse_state s = {c, NULL, argc, argv};
	char shorts[2 * N_OPTS + 2];
	struct option *opts = getopt_table(shorts, sizeof(shorts));
	int opt, r = 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
		size_t i = 0;

		while (i < N_OPTS && val_of(i) != opt)
			i++;
		if (i < N_OPTS && record_opts[i].kind == OPT_VERSION) {
			printf("kprof %s\n", KP_VERSION);
			free(opts);
			return 1;
		}
		if (i < N_OPTS && record_opts[i].kind == OPT_HELP) {
			help();
			free(opts);
			return 1;
		}
		if (i < N_OPTS) {
			r = apply(&s, &record_opts[i], optarg);
		} else {
			r = kp_svg_options_apply(opt, optarg, &c->svg);
			if (r < 0)
				break;	/* a bad SVG value: said, without the usage line */
			r = r ? 0 : -1; /* 0: an unknown option (getopt said it) */
		}
		if (r < 0) {
			kp_record_args_usage(stderr);
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
	for (size_t i = 0; i < c->every.secrets.n; i++)
		kp_push_credentials_wipe((char *)c->every.secrets.v[i]);
	kp_args_list_free(&c->every.secrets);
	free(c->pids);
	free(c->cpus);
}
