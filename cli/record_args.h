/* The command line of `kprof [record]`: its options, --help, and what they
 * ask for (the session's and the symbolizer's options, the outputs). */
#ifndef KP_CLI_RECORD_ARGS_H
#define KP_CLI_RECORD_ARGS_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "cli/args.h"
#include "flamegraph/svg.h"
#include "profiler/session.h"
#include "symbolize/symbolize.h"

/* Continuous mode (--every) and its pushes (docs/continuous.md). */
struct kp_every_args {
	double seconds;		     /* --every: a window's length; 0: one recording */
	unsigned keep;		     /* --keep N: window files of the run kept; 0: all */
	struct kp_args_list push;    /* --push KIND=URL, repeatable */
	struct kp_args_list labels;  /* --label NAME=VALUE, repeatable */
	struct kp_args_list headers; /* --header 'Name: value', repeatable */
	const char *service;	     /* --service NAME, or NULL: the default */
	const char *token_file;	     /* --token-file FILE */
	const char *password_file;   /* --password-file FILE */
	const char *header_file;     /* --header-file FILE */
	/* copies of the secrets given on the command line anyway (user:password
	 * of a --push URL, a credential --header), owned: argv's bytes are
	 * wiped at once (docs/push.md, "Credentials") */
	struct kp_args_list secrets;
	const char *spool;   /* --spool DIR */
	double push_timeout; /* --push-timeout SECONDS */
};

struct kp_record_args {
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
	struct kp_every_args every;
};

/* The defaults: cycles at 99 Hz, build-ids, the kernel's stack depth,
 * flamegraph.pl's SVG options. */
void kp_record_args_init(struct kp_record_args *c);

/* Parses argv: the options, then the command to run, if any (after them
 * or "--"); fills c->sess (the command, the ids, the run's metadata) and
 * c->sym's debuginfo folders. Returns 0 to go on, 1 when done (--help,
 * --version printed), -1 on a usage error (said on stderr, with the usage
 * line). The strings are argv's: argv outlives c. */
int kp_record_args_parse(struct kp_record_args *c, int argc, char **argv);

/* The usage line(s) of kprof, for usage errors. */
void kp_record_args_usage(FILE *out);

/* What the recording's writers need of c, for profile p (the window's,
 * with --every: windows set, compressed fast). */
struct kp_output_ctx;
struct kp_profile;
void kp_record_args_output_ctx(struct kp_record_args *c, const struct kp_profile *p, bool windows,
			       struct kp_output_ctx *ctx);

/* Frees what parsing allocated. */
void kp_record_args_free(struct kp_record_args *c);

#endif
