/* Argument helpers the commands share, so that an option written by
 * several commands parses, and fails, one way: repeatable options, counts
 * and numbers, unknown options, the default cache folder. Messages name the command
 * ("report: --top: ..."), as the commands' own do. */
#ifndef KP_CLI_ARGS_H
#define KP_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The values of a repeatable option (-o, --debuginfo-dir), in order. The
 * strings are argv's, not copied; free v only. */
struct kp_args_list {
	const char **v;
	size_t n, cap;
};

void kp_args_list_add(struct kp_args_list *l, const char *arg);
void kp_args_list_free(struct kp_args_list *l);

/* The shared number parser: arg as a whole decimal number from min to
 * max (no sign), or as a finite number from min (above min when open_min)
 * to max. Returns 0, or -EINVAL saying nothing: the caller words the
 * message (kp_args_number's, or an option's own). */
int kp_args_parse_u64(const char *arg, uint64_t min, uint64_t max, uint64_t *out);
int kp_args_parse_double(const char *arg, double min, double max, bool open_min, double *out);

/* --top N for command cmd ("report"): a count from min (0 or 1; 0 means
 * all) to max. Returns 0, or -1 after printing "CMD: --top: expected a
 * count ..., not 'ARG'". */
int kp_args_top(const char *cmd, const char *arg, size_t min, size_t max, size_t *out);

/* A number for option --OPT of command cmd, from min (above min when
 * open_min) to max. Returns 0, or -1 after printing "CMD: --OPT: expected
 * a number from MIN to MAX, not 'ARG'". */
int kp_args_number(const char *cmd, const char *opt, const char *arg, double min, double max,
		   bool open_min, double *out);

/* As kp_args_number, for a value that may end in a percent sign ("15%"):
 * *percent says whether it did, and such a value is from min to pmax, a
 * plain one from min to max. */
int kp_args_number_or_percent(const char *cmd, const char *opt, const char *arg, double min,
			      double max, double pmax, bool *percent, double *out);

/* What getopt_long (with opterr 0) returned '?' for, said as kprof says
 * it: "CMD: option -X: unknown or missing its value" or "CMD: unknown
 * option or missing value: ARG", then "Try 'kprof CMD --help'." (getopt's
 * own message would name the command after argv[0], its bare name). */
void kp_args_unknown(const char *cmd, char **argv);

/* $XDG_CACHE_HOME/kprof, else ~/.cache/kprof (an absolute XDG_CACHE_HOME
 * only, as the XDG spec says): where kprof keeps its kallsyms copy and
 * build indexes unless --no-cache. NULL without either. Returns a new heap
 * string. */
char *kp_args_cache_dir(void);

/* One option of a command (report, diff, collapse, flamegraph,
 * symbolize), written once: getopt's table, what it sets and its lines of
 * --help all come from its row (as record_args.c's and svg_options.c's
 * tables). The rows' order is --help's. */
enum kp_opt_kind {
	KP_OPT_FLAG,   /* sets a bool */
	KP_OPT_TEXT,   /* keeps argv's string */
	KP_OPT_ONCE,   /* keeps argv's string; a second time is refused (exit status 2) */
	KP_OPT_LIST,   /* adds argv's string to a struct kp_args_list */
	KP_OPT_NUMBER, /* a double from min (above it: open_min) to max, said as kp_args_number */
	KP_OPT_CALL,   /* set() takes the value */
	KP_OPT_ACTION, /* set() takes no value */
	KP_OPT_HELP,   /* the command's help() on stdout, exit status 0 */
};

struct kp_opt {
	const char *name; /* --NAME, or NULL: a letter alone */
	char letter;	  /* -X, or 0: a long name alone */
	enum kp_opt_kind kind;
	size_t off; /* the field it sets, in the command's struct (KP_OPT_AT) */
	double min, max;
	bool open_min;
	/* takes arg (NULL for an action) into cli; returns -1 to go on, else
	 * the exit status (after saying why) */
	int (*set)(void *cli, const char *arg, const struct kp_opt *row);
	const char *help; /* its lines of --help, or NULL (said on another's) */
};

#define KP_OPT_AT(type, field) .off = offsetof(type, field)

/* The --help lines of rows v[0..n). */
void kp_opts_help(const struct kp_opt *v, size_t n, FILE *out);

#endif
