/* The subcommands of the kprof command line (their table is in kprof.c).
 * Each takes its own argv (argv[0]: its name) and returns the process exit
 * status; only code in cli/ prints to the user (cli/messages.h) or exits. */
#ifndef KP_CLI_COMMANDS_H
#define KP_CLI_COMMANDS_H

int kp_cmd_record(int argc, char **argv);     /* kprof [opts] [--] cmd ... */
int kp_cmd_collapse(int argc, char **argv);   /* kprof collapse: perf script -> folded */
int kp_cmd_flamegraph(int argc, char **argv); /* kprof flamegraph: folded -> SVG */
int kp_cmd_symbolize(int argc, char **argv);  /* kprof symbolize: addresses -> frames */
int kp_cmd_report(int argc, char **argv);     /* kprof report: a profile -> any format */
int kp_cmd_diff(int argc, char **argv);	      /* kprof diff: two profiles compared, a CI gate */

#endif
