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

#include "util/diag.h"

/* At most this many targets (--push) and labels (--label). */
#define KP_PUSH_MAX_TARGETS 8
#define KP_PUSH_MAX_LABELS  20

/* A secret: from a file (util/secret.h's checks), or its bytes (the
 * environment's); neither: none. origin names it in messages ("--token-file",
 * "KPROF_PUSH_TOKEN", ...), never its bytes. */
struct kp_push_secret {
	const char *file;
	const char *value;
	const char *origin;
};

struct kp_push_opts {
	/* "pyroscope=URL" or "parca=URL" (http or https), at least one */
	const char *const *targets;
	size_t ntargets;
	/* the service name (Pyroscope's application name, the service_name
	 * label of both): letters, digits and _ . - / (Pyroscope's rule;
	 * kp_push_service_clean makes a host or command name fit) */
	const char *service;
	/* "NAME=VALUE" each (docs/push.md: the rules both servers accept) */
	const char *const *labels;
	size_t nlabels;
	/* "Name: value" each, sent with every request */
	const char *const *headers;
	size_t nheaders;
	/* The secrets given other than on the command line (docs/push.md,
	 * "Credentials"), each read once here: a bearer token ("Authorization:
	 * Bearer <its first line>"), the password of the user the --push URLs
	 * name (http://USER@HOST), and "Name: value" lines, one header each */
	struct kp_push_secret token, password, header_lines;
	const char *spool_dir; /* NULL: no spool */
	uint64_t spool_max;    /* bytes the spool may hold; 0: 1 GiB */
	uint64_t max_memory;   /* bytes of windows held in memory; 0: 64 MiB */
	double timeout;	       /* seconds a request may take; 0: 10 */
	/* Where the one-line messages go (no "kprof: " prefix, no newline,
	 * foreign bytes already escaped: util/textsafe.h); required, push/
	 * prints nothing itself. Called from the sender thread too, with
	 * push/'s lock held: it must not call push/. */
	void (*log)(void *arg, const char *line);
	void *log_arg;
	/* The first retry's delay and the largest; 0: 1000 and 300000 (tests
	 * shorten them) */
	unsigned backoff_min_ms, backoff_max_ms;
};

struct kp_push_stats {
	uint64_t queued;   /* windows given to kp_push_window */
	uint64_t reloaded; /* windows a previous run left in the spool, loaded at start */
	uint64_t delivered[KP_PUSH_MAX_TARGETS]; /* windows each target accepted (2xx) */
	uint64_t retries;			 /* requests that failed and were to be retried */
	uint64_t dropped; /* (window, target) pairs refused for good (4xx but 429, 3xx) */
	uint64_t lost;	  /* windows dropped unsent: memory or spool bound, or not spooled */
	uint64_t pending; /* windows some target had not received at the end */
	uint64_t spooled; /* of those, the ones kept in the spool for the next run */
};

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
