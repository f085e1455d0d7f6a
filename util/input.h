/* The inputs of the commands that read text files named on the command
 * line (collapse, flamegraph): a path, or "-" for stdin; a directory is
 * refused at once rather than failing at its first read. */
#ifndef KP_UTIL_INPUT_H
#define KP_UTIL_INPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "util/diag.h"

struct kp_input {
	FILE *fp;	  /* stdin for "-"; read it or its descriptor */
	const char *name; /* "stdin", or the path: for messages */
	bool is_stdin;
};

/* Opens path ("-": stdin). Returns 0, or a negative errno with d saying
 * why: -EISDIR "cannot read NAME: it is a directory", else "cannot open
 * PATH: <strerror>". Close with kp_input_close in every case. */
int kp_input_open(struct kp_input *in, const char *path, struct kp_diag *d);
/* Closes what kp_input_open opened (never stdin). Safe to call twice. */
void kp_input_close(struct kp_input *in);

#endif
