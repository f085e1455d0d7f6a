/* kp_diag: the human sentence that travels from a library function up to the
 * command line, which alone prints it. Functions return 0 or a negative errno
 * and, on failure, fill the diag (when one is passed). */
#ifndef KP_UTIL_DIAG_H
#define KP_UTIL_DIAG_H

#include <stddef.h>

/* Room for a sentence naming two paths of PATH_MAX (4096) bytes: a
 * message is never cut where the command line printed it whole before
 * building it moved below cli/. */
struct kp_diag {
	char msg[10240];
};

/* Sets d->msg from the format (d may be NULL: then nothing happens).
 * Returns err unchanged so callers can write `return kp_diag_set(d, -EINVAL, ...)`. */
int kp_diag_set(struct kp_diag *d, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Appends ": <strerror(-err)>" to the message built from fmt. */
int kp_diag_errno(struct kp_diag *d, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
