/* The outputs of a command, as the command line opens and writes them:
 * through output/ (the formats and their writers), each failure said on
 * stderr. */
#ifndef KP_CLI_OUTPUT_H
#define KP_CLI_OUTPUT_H

#include "output/output.h"

/* kp_outputs_create, then why it failed said (with the table's formats
 * after an unknown extension). Returns 0, or the exit status (2: usage,
 * 1: a path). Free with kp_outputs_free in every case. */
int kp_outputs_open(struct kp_outputs *o, const struct kp_output_table *t, const char *fname,
		    const char *const *paths, size_t npaths, const char *cmd);
/* Says msg, why outputs of t could not be created; after an extension no
 * format has (unknown_ext), the table's formats. */
void kp_outputs_say(const struct kp_output_table *t, bool unknown_ext, const char *msg);
/* kp_outputs_commit, then why it failed said. Returns 0 or 1. */
int kp_outputs_write(struct kp_outputs *o, const struct kp_output_ctx *ctx, char *where,
		     size_t wsize);

#endif
