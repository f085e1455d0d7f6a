/* The option table of the commands (report, diff, collapse, flamegraph,
 * symbolize): one row an option, read by one loop over getopt_long, with
 * the flame graph's options (svg_options.h) after a command's own. */
#ifndef KP_CLI_OPTS_H
#define KP_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/args.h"

struct kp_svg_opts;

/* One option of a command (report, diff, collapse, flamegraph,
 * symbolize), written once: getopt's table, what it sets and its lines of
 * --help all come from its row (as record_args.c's and svg_options.c's
 * tables). The rows' order is --help's. */
enum kp_opt_kind {
	KP_OPT_FLAG,   /* sets a bool */
	KP_OPT_TEXT,   /* keeps argv's string */
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

/* A command's options. */
struct kp_opts {
	const char *cmd; /* "report": in messages */
	const struct kp_opt *v;
	size_t n;
	bool svg;		 /* the flame graph's options (svg_options.h) follow the rows */
	bool colon;		 /* getopt returns ':' for a missing value */
	bool getopt_says;	 /* getopt's own messages (opterr), else kp_args_unknown's */
	int usage_status;	 /* the exit status of a bad option or value */
	void (*help)(FILE *out); /* the whole --help */
	/* what to say of an unknown option or a missing value (getopt's c),
	 * instead of kp_args_unknown */
	void (*unknown)(int c, char **argv);
};

/* Parses argv's options into cli (and svg, with t->svg) from optind 1.
 * Returns -1 to go on (optind at the first operand), else the exit status
 * (after --help, or saying why not). */
int kp_opts_parse(const struct kp_opts *t, int argc, char **argv, void *cli,
		  struct kp_svg_opts *svg);

/* The --help lines of rows v[0..n). */
void kp_opts_help(const struct kp_opt *v, size_t n, FILE *out);

#endif
