/* kp_push: continuous profiling's client of Grafana Pyroscope and Parca.
 * Each window (gzip'd pprof bytes and its [from, until) in Unix
 * nanoseconds) is copied into a bounded queue and sent by a thread of its
 * own to every target, oldest first, once each; what cannot be sent now is
 * retried with backoff, and with a spool directory it is also kept on disk
 * until every target has it, so a restart loses nothing. push/ knows only
 * util/: it never sees the profile model. docs/push.md says what is sent,
 * the retry rules, the spool's format and its safety. */
#ifndef KP_PUSH_PUSH_H
#define KP_PUSH_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "push/push_opts.h"
#include "util/diag.h"

struct kp_push;

/* Validates the options (URLs, service, labels, headers, the secrets,
 * the spool directory: a one-line message in d naming what is
 * wrong), loads the windows a previous run left in the spool (queued
 * first, oldest first) and starts the sender thread. Returns 0 or a
 * negative errno; *out is freed with kp_push_free. */
int kp_push_new(struct kp_push **out, const struct kp_push_opts *o, struct kp_diag *d);

/* Queues a copy of gz[0..len), the window [from_ns, until_ns) (not after
 * kp_push_finish); with a
 * spool, writes it there first. Returns at once: never waits on the
 * network (only on the spool's write, when there is one). */
void kp_push_window(struct kp_push *p, const uint8_t *gz, size_t len, uint64_t from_ns,
		    uint64_t until_ns);

/* At exit: tries to deliver what is queued for up to wait_seconds (a
 * target waiting out a backoff is tried once more at once), then stops the
 * thread (a request under way is cut). What is left stays in the spool.
 * Fills st (may be NULL). Returns 0 when every window reached every
 * target, 1 when some were dropped, lost or left pending. */
int kp_push_finish(struct kp_push *p, double wait_seconds, struct kp_push_stats *st);

/* Stops the thread when kp_push_finish was not called, frees everything. */
void kp_push_free(struct kp_push *p);

/* Whether the value of header ("Name: value") is a credential by its name
 * (Authorization, Cookie, X-Scope-OrgID, a name that says key, token,
 * secret, pass, auth or session). */
bool kp_push_header_secret(const char *header);

/* name made to fit the service name's rule: every other byte becomes '_'
 * ("" becomes "unknown"). Returns a new string the caller frees. */
char *kp_push_service_clean(const char *name);
/* The service's name: given (--service, checked by kp_push_new) as it
 * is, else command's base name for a command (NULL: none), else the
 * host's name; made to fit the rule. A new string the caller frees. */
char *kp_push_service_name(const char *given, const char *command);

#endif
