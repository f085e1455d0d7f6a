/* kp_debuginfod: the downloads kprof lets libdebuginfod make. libdwfl asks
 * the servers of DEBUGINFOD_URLS for a debug file its local search missed,
 * through a libdebuginfod client of each Dwfl; libdebuginfod itself bounds
 * nothing by default (an endless body filled the cache, a silent server
 * held kprof for minutes). kprof binds every such client to one progress
 * function that cuts a download past its limits, the run's budget or a
 * stop (docs/symbolize.md, "Debuginfod"; docs/security.md, "Debuginfod
 * servers"). Internal to symbolize/: the sentences go to a note list. */
#ifndef KP_SYMBOLIZE_DEBUGINFOD_H
#define KP_SYMBOLIZE_DEBUGINFOD_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kp_notes;

/* What one download and the whole run may take. From the environment
 * (kp_debuginfod_limits_env), each unset or non-positive value kprof's
 * default below. */
struct kp_debuginfod_limits {
	uint64_t file_bytes;  /* one file: DEBUGINFOD_MAXSIZE, else 1 GiB */
	double file_seconds;  /* one download: DEBUGINFOD_MAXTIME, else 120 s */
	double stall_seconds; /* without a byte: DEBUGINFOD_TIMEOUT, else 30 s */
	uint64_t run_bytes;   /* all of the run's: KPROF_DEBUGINFOD_RUN_MAXSIZE, else 2 GiB */
	double run_seconds;   /* all of the run's: KPROF_DEBUGINFOD_RUN_MAXTIME, else 300 s */
};

#define KP_DEBUGINFOD_FILE_BYTES    (1ULL << 30)
#define KP_DEBUGINFOD_FILE_SECONDS  120.0
#define KP_DEBUGINFOD_STALL_SECONDS 30.0
#define KP_DEBUGINFOD_RUN_BYTES	    (2ULL << 30)
#define KP_DEBUGINFOD_RUN_SECONDS   300.0

void kp_debuginfod_limits_env(struct kp_debuginfod_limits *l);

struct kp_debuginfod;

/* Returns NULL when no server is configured (DEBUGINFOD_URLS unset or
 * blank): then libdebuginfod is never loaded. Its sentences go to notes,
 * which must outlive it. Free with kp_debuginfod_free (takes NULL). */
struct kp_debuginfod *kp_debuginfod_new(struct kp_notes *notes);
void kp_debuginfod_free(struct kp_debuginfod *d);

/* fn(arg) says whether kprof was asked to stop: a download under way is
 * then cut within about a second (libdebuginfod calls the progress
 * function at least once a second) and none starts any more. */
typedef bool (*kp_debuginfod_stop_fn)(void *arg);
void kp_debuginfod_set_stop(struct kp_debuginfod *d, kp_debuginfod_stop_fn fn, void *arg);
/* No more downloads this run (the user asked kprof to stop). */
void kp_debuginfod_off(struct kp_debuginfod *d);

/* Binds the client libdwfl keeps for dwfl (it makes one per Dwfl): call
 * right after dwfl_begin, before any lookup through it. A query through a
 * bound client is let run only between kp_debuginfod_begin and
 * kp_debuginfod_end with may true; any other is cut at once. */
void kp_debuginfod_bind(struct kp_debuginfod *d, Dwfl *dwfl);

/* Whether a download may start now: a server is configured, the clients
 * can be bound, no stop came, the run's budget is not spent and no server
 * stalled. */
bool kp_debuginfod_may(const struct kp_debuginfod *d);

/* Around one lookup that may reach libdebuginfod (dwfl_standard_find_debuginfo)
 * for a file of build-id id[0..len) (the module's): may says whether it may
 * download (kp_debuginfod_may when the caller asked). end takes what the
 * lookup returned (a descriptor, or -1 or a negative errno from
 * libdebuginfod) and counts the download against the run's budget, names
 * the server that failed (once a server), stops the downloads when a
 * server stalled or the budget is spent (one note), and removes the
 * "not found" mark libdebuginfod leaves in its cache for a download that
 * was cut, so that a later run asks again. */
void kp_debuginfod_begin(struct kp_debuginfod *d, bool may);
void kp_debuginfod_end(struct kp_debuginfod *d, Dwfl *dwfl, const uint8_t *id, size_t len, int fd);

#endif
