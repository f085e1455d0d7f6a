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
	/* the operands after the options: from operands_min to operands_max
	 * (0: any number), else operands_wrong said (exit status 2) */
	int operands_min, operands_max;
	const char *operands_wrong;
	/* what to say of an unknown option or a missing value (getopt's c),
	 * instead of kp_args_unknown */
	void (*unknown)(int c, char **argv);
};

#define KP_OPTS_ROWS(rows) .v = rows, .n = sizeof(rows) / sizeof(rows[0])

/* Parses argv's options into cli (and svg, with t->svg) from optind 1.
 * Returns -1 to go on (optind at the first operand), else the exit status
 * (after --help, or saying why not). */
int kp_opts_parse(const struct kp_opts *t, int argc, char **argv, void *cli,
		  struct kp_svg_opts *svg);

#endif
