/* A recording's windows pushed (windows.c): each window's profile as
 * gzip'd pprof to every target through kp_push (push/push.h), the service
 * name and the secrets taken as a command line gives them (docs/push.md). */
#ifndef KP_PUSH_WINDOWS_H
#define KP_PUSH_WINDOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "push/push.h"
#include "util/diag.h"

struct kp_push_windows;

struct kp_push_windows_opts {
	/* targets, labels, headers, spool_dir, timeout (0: 10 s) and log as
	 * kp_push_new takes them; service and the secrets are filled here */
	struct kp_push_opts push;
	/* the service's name given (--service), or NULL: command's base name
	 * (command NULL: none), else the host's (kp_push_service_name) */
	const char *service, *command;
	/* the secrets' files (NULL: not given; the environment's and systemd's
	 * credentials then, push/credentials.h) */
	const char *token_file, *password_file, *header_file;
};

/* Starts the pushes o asks for. Returns 0, or a negative errno with the
 * reason in d (a bad URL, label, header, secret, spool directory). */
int kp_push_windows_new(struct kp_push_windows **out, const struct kp_push_windows_opts *o,
			struct kp_diag *d);
/* Hands window number index, prof over [from_ns, until_ns) (encoded now;
 * sent in the background). Returns 0, or -EINVAL with the reason in d for
 * the first window pprof cannot hold (a value past int64): the later ones
 * are counted, unsaid, and make kp_push_windows_end return 1. */
int kp_push_windows_add(struct kp_push_windows *p, const struct kp_profile *prof, unsigned index,
			uint64_t from_ns, uint64_t until_ns, struct kp_diag *d);
/* At the end: waits one timeout for what is still queued; line[0..size)
 * says what was delivered, kept or lost ("" when quiet and every window
 * was delivered). Returns 0, or 1 when windows were lost or dropped. */
int kp_push_windows_end(struct kp_push_windows *p, bool quiet, char *line, size_t size);
void kp_push_windows_free(struct kp_push_windows *p);

#endif
