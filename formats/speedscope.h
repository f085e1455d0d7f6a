/* speedscope output: a profile as speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json), written with
 * jansson.
 *
 * How the model maps onto it (docs/formats.md says the same, for users):
 *   the file      "$schema", "exporter": "kprof VERSION", "name": the
 *                 recorded command line when there is one,
 *                 "activeProfileIndex": the value kprof draws
 *   frames        shared.frames: one per (function, kind) with its name
 *                 and source file, or with o->lines one per (function,
 *                 source line, kind) with the line too; the root (comm,
 *                 comm-PID, comm-PID/TID as o->fold says) is a frame as in
 *                 folded text, a location never named is "[unknown]"
 *   profiles      one "sampled" profile per value type, named after it
 *                 ("samples", "cpu"), unit nanoseconds/microseconds/
 *                 milliseconds/seconds/bytes when the value's unit is one,
 *                 else "none"; startValue 0, endValue the total
 *   samples       one stack of frame indices per distinct stack, root
 *                 first, in the profile's order (all profiles share them),
 *                 with its value as the weight: an integer when it fits
 *                 an int64, else (decimals, or past 2^63) the nearest
 *                 double, as speedscope reads every number anyway;
 *                 a profile with a time axis: a sample per event instead,
 *                 in time order, each weighing its share of its sample's
 *                 values, then the samples with no event whole
 * Strings are valid UTF-8 (invalid bytes and NULs become U+FFFD); JSON
 * escapes quotes and control characters. */
#ifndef KP_FORMATS_SPEEDSCOPE_H
#define KP_FORMATS_SPEEDSCOPE_H

#include <stdbool.h>
#include <stdio.h>

#include "profile/fold.h"
#include "profile/profile.h"
#include "util/diag.h"

struct kp_speedscope_opts {
	struct kp_fold_opts fold; /* root frames; fold.value: the profile shown first */
	bool lines;		  /* a frame per source line, not per function */
	const char *exporter;	  /* "kprof 0.1.0"; NULL: "kprof" */
};

/* Writes p to out as one speedscope JSON document (o may be NULL).
 * Returns 0 or a negative errno (d set). */
int kp_speedscope_write(const struct kp_profile *p, const struct kp_speedscope_opts *o, FILE *out,
			struct kp_diag *d);

#endif
