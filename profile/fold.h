/* Between the profile model and the folded table: a profile's named stacks
 * folded into stacks of names (what folded text, the SVG and the top table
 * draw), and folded text turned into a profile (what `kprof report` does
 * with a folded file before writing .kprof, pprof or speedscope). */
#ifndef KP_PROFILE_FOLD_H
#define KP_PROFILE_FOLD_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/folded.h"
#include "profile/profile.h"

/* Where kp_fold_add_profile puts the values. */
enum kp_fold_into {
	KP_FOLD_COUNT = 0, /* the stacks' counts */
	KP_FOLD_BEFORE,	   /* a differential table's BEFORE (AFTER 0): kprof diff's BASE */
	KP_FOLD_AFTER,	   /* its AFTER, with BEFORE 0: NEW */
};

struct kp_fold_opts {
	bool root_pid;		/* root frame "comm-PID" (stackcollapse-perf.pl --pid) */
	bool root_tid;		/* root frame "comm-PID/TID" (--tid) */
	size_t value;		/* which value of the samples is the count (0: the first) */
	enum kp_fold_into into; /* the count, or one side of a differential table */
};

/* Adds every sample of p to f: the root frame (the comm, unless the root
 * is empty: no comm and no pid), then the frames of each location, root
 * first; a location never named gives "[unknown]". Names are made safe
 * for folded text by the folded table; off-CPU marker frames
 * (profile/wait.h) are names like any other. A value in nanoseconds
 * (kp_fold_micros) is counted in microseconds, as folded text and the SVG
 * count time: each folded stack's nanoseconds summed exactly, then
 * rounded to the nearest microsecond (halves up); a stack that rounds to
 * 0 is left out. Returns false when the value's decimals or a sum cannot
 * be kept exact in f (then f holds part of p). */
bool kp_fold_add_profile(struct kp_folded *f, const struct kp_profile *p,
			 const struct kp_fold_opts *o);

/* Whether value counts nanoseconds ("cpu", "off-cpu", "wall"), which
 * kp_fold_add_profile folds into microseconds: writers then name the
 * count "us" (flamegraph.pl's --countname us). */
bool kp_fold_micros(const struct kp_profile *p, size_t value);

/* The root frame's text of r: comm, comm-PID or comm-PID/TID as o says;
 * in buf (size bytes, cut if need be) or the profile's own string. Writers
 * that draw roots as frames (folded, SVG, speedscope) name them so. */
const char *kp_fold_root_name(const struct kp_profile *p, const struct kp_profile_root *r,
			      const struct kp_fold_opts *o, char *buf, size_t size);

/* A new profile holding f's stacks: the first frame of each stack is its
 * root (comm), unless it is empty or has a kind (_[k], _[j], _[i]: then
 * the root is empty and every frame a location); every frame is a KP_LOC_NAMED
 * location; one value type, (countname or "samples")/"count", with f's
 * decimals. Folding it back gives f's stacks. The caller frees it. */
struct kp_profile *kp_fold_to_profile(const struct kp_folded *f, const char *countname);

#endif
