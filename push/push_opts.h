/* kp_push's options and counts (push/push.h), types alone: push/'s own
 * files (the queue, the spool) take them without depending on push.c,
 * which drives them. */
#ifndef KP_PUSH_PUSH_OPTS_H
#define KP_PUSH_PUSH_OPTS_H

#include <stddef.h>
#include <stdint.h>

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

#endif
