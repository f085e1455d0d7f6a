/* kp_outfile: an output that is either stdout or a file written under a
 * temporary name in the same folder and renamed into place on commit, so an
 * interrupted or failed run never leaves half a file behind. */
#ifndef KP_UTIL_OUTFILE_H
#define KP_UTIL_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "util/diag.h"

struct kp_outfile {
	FILE *fp;    /* write here */
	char *path;  /* final name; NULL for stdout */
	char *tmp;   /* temporary name while open */
	bool direct; /* path is not a regular file (/dev/null, FIFO): no rename */
};

/* path NULL or "-" means stdout. Returns 0 or a negative errno (diag set). */
int kp_outfile_open(struct kp_outfile *out, const char *path, struct kp_diag *d);
/* Flushes, closes and renames into place. Returns 0 or negative errno. */
int kp_outfile_commit(struct kp_outfile *out, struct kp_diag *d);
/* Discards the temporary file if not committed, and frees the struct's
 * memory: call it once at the end in every case (after a commit it only
 * frees; safe on a zeroed struct). The path stays readable between commit
 * and abort, for kp_outfile_name. */
void kp_outfile_abort(struct kp_outfile *out);
/* Name to show the user: the path, or "stdout". */
const char *kp_outfile_name(const struct kp_outfile *out);

#endif
