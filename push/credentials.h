/* The secrets of the pushes (docs/push.md, "Credentials"): each from the
 * first place that has it, the option's file, the environment
 * (KPROF_PUSH_TOKEN, KPROF_PUSH_PASSWORD, KPROF_PUSH_HEADERS), systemd's
 * credentials (kprof.push-token, ... in $CREDENTIALS_DIRECTORY). */
#ifndef KP_PUSH_CREDENTIALS_H
#define KP_PUSH_CREDENTIALS_H

#include <stdbool.h>
#include <stddef.h>

#include "push/push.h"

struct kp_push_credentials {
	struct kp_push_secret token, password, header_lines; /* for kp_push_opts */
	char *env_value[3]; /* owned copies of the environment's, wiped at the end */
	char *cred_path[3]; /* owned */
};

/* Fills c; the files given by --token-file, --password-file and
 * --header-file (NULL: not given) win. The environment's variables are
 * taken out of kprof's environment whichever place wins, their bytes
 * wiped: the command kprof runs does not inherit them, and
 * /proc/PID/environ (root's and kprof's user's to read) no longer holds
 * them. Nothing is read here: kp_push_new reads the files, and checks
 * them. */
void kp_push_credentials_take(struct kp_push_credentials *c, const char *token_file,
			      const char *password_file, const char *header_file);
/* Wipes the environment's copies and frees. */
void kp_push_credentials_free(struct kp_push_credentials *c);

/* Where a secret starts in a --push value: the user:password of its URL
 * (up to the last '@' of the authority; a user alone is none), *len its
 * length; NULL: none. The command line hides it (readable by every user
 * through /proc/PID/cmdline). */
char *kp_push_credentials_in_url(char *arg, size_t *len);
/* The value of a --header 'Name: value' whose name says it is a
 * credential (kp_push_header_secret), *len its length; NULL: none. */
char *kp_push_credentials_in_header(char *arg, size_t *len);

/* A secret on the command line is readable by every user through
 * /proc/PID/cmdline: the secret of arg (a --push URL's, or a --header's
 * when header) becomes "***" in arg itself, the rest moved up and
 * NUL-padded, so that the kernel shows the option, never the secret.
 * Returns a copy of arg as given, for the caller to use and wipe with
 * kp_push_credentials_wipe; NULL when arg holds no secret. */
char *kp_push_credentials_hide(char *arg, bool header);
void kp_push_credentials_wipe(char *copy);

#endif
