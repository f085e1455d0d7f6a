/* kp_secret: a credential file read safely (docs/security.md,
 * "Credentials"): opened without following a link or blocking on a FIFO,
 * then checked on the opened descriptor: a regular file, owned by root
 * or by kprof's effective user, with no permission for group or others
 * (ssh's rule for a private key). */
#ifndef KP_UTIL_SECRET_H
#define KP_UTIL_SECRET_H

#include <stddef.h>

#include "util/diag.h"

/* A credential file's bytes: at most this many. */
#define KP_SECRET_MAX 16384

/* Reads the file at path whole into *out (NUL-terminated, *len its length;
 * the caller frees it with kp_secret_free). what names the file in the one
 * line of d ("token file", "--header-file"). Returns 0 or a negative
 * errno. */
int kp_secret_read(const char *path, const char *what, char **out, size_t *len, struct kp_diag *d);

/* Wipes s (len bytes, or strlen when len is 0) and frees it; NULL is fine. */
void kp_secret_free(char *s, size_t len);

#endif
