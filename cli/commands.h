/* The subcommands of the kprof command line. Each returns the process exit
 * status; only code in cli/ prints to the user or exits. */
#ifndef KP_CLI_COMMANDS_H
#define KP_CLI_COMMANDS_H

int kp_cmd_record(int argc, char **argv);     /* kprof [opts] [--] cmd ... */
int kp_cmd_collapse(int argc, char **argv);   /* kprof collapse: perf script -> folded */
int kp_cmd_flamegraph(int argc, char **argv); /* kprof flamegraph: folded -> SVG */
int kp_cmd_symbolize(int argc, char **argv);  /* kprof symbolize: addresses -> frames */
int kp_cmd_report(int argc, char **argv);     /* kprof report: a profile -> any format */
int kp_cmd_diff(int argc, char **argv);	      /* kprof diff: two profiles compared, a CI gate */

/* $XDG_CACHE_HOME/kprof, else ~/.cache/kprof (an absolute XDG_CACHE_HOME
 * only, as the XDG spec says); NULL without either. Returns a new heap
 * string. */
char *kp_default_cache_dir(void);

/* Prints "kprof: <msg>" on stderr. */
void kp_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void kp_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
