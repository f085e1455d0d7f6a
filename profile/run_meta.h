/* kp_run_meta: what a recording says of its run, as one typed record.
 *
 * The profiler fills it (profiler/session.c: the event and rate, the CPUs
 * and start when the events are open; the duration and counts when the
 * recording ends; the unresolved frames once the symbolizer has named the
 * profile) and kp_run_meta_write turns it into the profile's KEY=VALUE
 * metadata (profile.h's KP_META_* keys), in the one order every writer
 * (.kprof, pprof, the SVG's lines) has always seen. Readers of a loaded
 * profile get the values back through kp_run_meta_read, never by parsing
 * a value by hand. */
#ifndef KP_PROFILE_RUN_META_H
#define KP_PROFILE_RUN_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "profile/profile.h"
#include "util/count.h"

/* What the roots of the samples hold (--pid, --tid). */
enum kp_run_roots {
	KP_RUN_ROOTS_COMM = 0,
	KP_RUN_ROOTS_PID, /* comm-pid */
	KP_RUN_ROOTS_TID, /* comm-pid/tid */
};

/* How the recording of a command (kprof ... -- CMD) ended: the command
 * exiting on its own is what says it did all its work, which a
 * comparison of its CPU time a run needs (kprof diff's time gate). */
enum kp_run_end {
	KP_RUN_END_NONE = 0, /* not a command's recording, or not written */
	KP_RUN_END_EXIT,     /* the command exited (any status) */
	KP_RUN_END_SIGNAL,   /* the command was killed by a signal it did not get from kprof */
	KP_RUN_END_DURATION, /* -d ended the recording first, kprof stopped the command */
	KP_RUN_END_STOPPED,  /* kprof was interrupted (SIGINT, SIGTERM) first */
};

/* Pointers are borrowed: from the profiler while it fills the record,
 * from the profile read (its metadata strings) after kp_run_meta_read. */
struct kp_run_meta {
	const char *version; /* kprof's version; NULL: not written */
	/* kprof's command line as it was run (argv[0] is written "kprof");
	 * written as one line of words joined by spaces, at most 4095 bytes */
	char *const *argv;
	size_t argc;
	const char *command;	   /* read back: that line (argv is NULL then) */
	const char *host, *kernel; /* uname nodename and release; NULL: unknown */
	const char *event;	   /* the event sampled ("cpu-clock") */
	uint64_t frequency;	   /* Hz when sampling by frequency, else 0 */
	uint64_t period;	   /* events per sample when frequency is 0 */
	const int *cpus;	   /* the CPUs sampled, sorted (read back: NULL) */
	size_t ncpus;
	time_t start;	   /* when the recording started (UTC seconds) */
	uint32_t start_ns; /* and the nanoseconds past it: written when not 0 (a window's),
			    * and then the duration to the nanosecond too */
	double duration;   /* seconds recorded */
	/* read back: the duration in nanoseconds, exact as the decimal was
	 * written (digits past the ninth cut), 0 when it is not a number */
	uint64_t duration_ns;
	/* read back: a period was written (a number, 0 included) */
	bool have_period;
	/* read back: a slice's range, seconds from the recording's start
	 * ("1.250-3.000", profile/timeline.c), NULL for a whole recording */
	const char *range;
	uint64_t samples;   /* samples recorded */
	uint64_t lost;	    /* samples the kernel dropped */
	uint64_t throttled; /* times the kernel throttled the events (written when not 0) */
	enum kp_run_roots roots;
	enum kp_run_end end;  /* written with have_end when not NONE */
	bool system_wide;     /* the whole machine (-a, -C): "scope" is written, "system" */
	bool have_end;	      /* duration, samples and lost are known */
	bool have_unresolved; /* unresolved[] is known (the profile was named) */
	/* frames never named, by location kind (KP_LOC_UNKNOWN is "other") */
	kp_count unresolved[KP_LOC_NKINDS];
	/* read back: the values as they were written (NULL: absent), for a
	 * writer that prints them as the recording said them */
	struct {
		const char *frequency, *period, *duration, *samples, *lost;
	} text;
};

/* Sets p's metadata from m, in this order: event, frequency or period,
 * cpus, start, then (have_end) duration, samples, lost, throttled (when
 * not 0) and end (when not NONE), then version, command, host, kernel, roots, scope (when
 * system_wide), then (have_unresolved) unresolved.other, .kernel, .user,
 * .jit. A key already set keeps its place (a second call
 * with more known adds the rest at the end). */
void kp_run_meta_write(const struct kp_run_meta *m, struct kp_profile *p);

/* The record of a profile's metadata as kp_run_meta_write wrote it (or as
 * another kprof wrote it into a .kprof): strings borrowed from p, numbers
 * parsed as decimals (a fraction cut; a value that is no such number, is
 * past 2^63-1 or is absent reads as 0), the start as ISO 8601 UTC with
 * its fraction of a second in start_ns (0 and 0 when it is not one).
 * have_end says a duration was there. */
void kp_run_meta_read(const struct kp_profile *p, struct kp_run_meta *m);

/* Sets the duration ("%.3f" seconds) of a profile joined from runs in a
 * row (the first's start to the last's end), and its samples when it
 * says them. */
void kp_run_meta_set_span(struct kp_profile *p, double duration, uint64_t samples);

/* The program a recording measured, from its kprof command line: what
 * follows " -- ", else the line without its output options (-o, -f,
 * --output, --format and their values), so that writing another file or
 * format is the same command. A new heap string (caller frees). */
char *kp_run_meta_program(const char *command);

#endif
