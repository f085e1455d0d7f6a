/* What named a profile's frames, and what would name the rest
 * (unknown_report.c; docs/symbolize.md, "Unknown frames"): sentences for
 * the user, handed to the caller, who prints them. */
#ifndef KP_SYMBOLIZE_UNKNOWN_REPORT_H
#define KP_SYMBOLIZE_UNKNOWN_REPORT_H

#include "profile/profile.h"

/* A line for the user: no prefix, no newline, foreign bytes (a path) not
 * escaped yet. */
typedef void (*kp_sym_say_fn)(void *arg, const char *line);

/* For each module (file, process's JIT code, no mapping, the kernel)
 * with the most frames of p (named) not named by a symbol, down to half a
 * percent of all: what share each way named and what would name the
 * rest. One line each, at most five; then a line on debug symbols when
 * they would name them, and one when a python ran and no Python function
 * was named. Nothing when p has no samples value. */
void kp_sym_unknown_report(const struct kp_profile *p, kp_sym_say_fn fn, void *arg);

#endif
