/* kp_outfile: an output that is either stdout or a file that appears under
 * its name only once it is complete.
 *
 * The data goes into an unnamed file (O_TMPFILE) in the target's folder,
 * linked in (linkat through /proc/self/fd) and renamed over the final name
 * on commit: whatever ends the process before that (an error, SIGINT,
 * SIGKILL), no file is left behind, not even an empty one. Where the file
 * system has no O_TMPFILE, a named temporary FILE.tmp.XXXXXX is used
 * instead and removed on failure and on SIGINT, SIGTERM and SIGHUP (the
 * only case where SIGKILL can leave one).
 *
 * kprof runs as root in folders other users can write (/tmp): nothing
 * found at the name is followed or opened for writing unless only root or
 * we could have put it there. A link or a regular file is replaced (never
 * written through); a FIFO or a device is written in place only when
 * trusted (outfile.c: trusted_in), else refused; /dev/stdout, /dev/fd/N
 * and /proc/self/fd/N are our own descriptors. docs/security.md. */
#ifndef KP_UTIL_OUTFILE_H
#define KP_UTIL_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "util/diag.h"

struct kp_outfile {
	FILE *fp;    /* write here */
	char *path;  /* final name; NULL for stdout */
	char *tmp;   /* named temporary (fallback only), NULL otherwise */
	bool direct; /* path is not a regular file (/dev/null, FIFO): written in place */
	int slot;    /* the fallback's signal-cleanup slot + 1, 0: none */
	int dirfd;   /* the path's folder (O_PATH): every step after the first is relative to it */
};

enum {
	/* a named temporary even where O_TMPFILE works (tests of the fallback) */
	KP_OUTFILE_NAMED_TMP = 1 << 0,
};

/* path NULL or "-" means stdout. Returns 0 or a negative errno (diag set). */
int kp_outfile_open(struct kp_outfile *out, const char *path, struct kp_diag *d);
/* kp_outfile_open with KP_OUTFILE_* flags. */
int kp_outfile_open_flags(struct kp_outfile *out, const char *path, unsigned flags,
			  struct kp_diag *d);
/* Flushes, closes and puts the file in place under its name. Returns 0 or
 * a negative errno (diag set); on failure nothing is left under any name. */
int kp_outfile_commit(struct kp_outfile *out, struct kp_diag *d);
/* Discards the file if not committed, and frees the struct's memory: call
 * it once at the end in every case (after a commit it only frees; safe on a
 * zeroed struct). The path stays readable between commit and abort, for
 * kp_outfile_name. */
void kp_outfile_abort(struct kp_outfile *out);
/* Whether something not to be replaced holds path now, for a writer that
 * may then choose another name (kprof --every's windows): a directory, a
 * socket, and, unless only root or we could have put it there (the rule
 * of trusted_in in outfile.c), a symbolic link, a FIFO, a device, or
 * another user's file. Returns -EEXIST with what it is in what ("a
 * directory of uid 65534"), else 0 (the name is free, ours to replace,
 * or its folder cannot be opened: kp_outfile_open says why). */
int kp_outfile_in_the_way(const char *path, char *what, size_t size);
/* Name to show the user: the path, or "stdout". Owned by out. */
const char *kp_outfile_name(const struct kp_outfile *out);

/* Holds each closed standard descriptor (0, 1, 2) open on /dev/null, so
 * that no file opened later takes its number; the process ends (status 1)
 * without a /dev/null. Call first thing in main. */
void kp_outfile_hold_standard_fds(void);

#endif
