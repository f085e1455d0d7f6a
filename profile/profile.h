/* profile/ is the profile model (profiler/ is the sampling that fills it).
 *
 * kp_profile: the one profile model every part of kprof shares, after
 * pprof's profile.proto.
 *
 * The recorder fills it (locations as the kernel gave them, stacks with
 * their values, the run's metadata), the symbolizer names its locations,
 * and every writer reads it: .kprof, pprof and speedscope directly;
 * folded text, the SVG and the top table through its named-stack view,
 * the folded table (profile/folded.h), which profile/fold.h fills from
 * it; `kprof report` and `kprof diff` load it (formats/load.h).
 *
 *   value types  what each value of a sample counts: "samples"/"count",
 *                "cpu"/"nanoseconds" (the event's period), ... (at most
 *                KP_PROFILE_MAX_VALUES); each with its decimals (0 unless
 *                the profile came from folded text with decimal counts)
 *   samples      distinct (root, location stack) pairs, their values
 *                summed exactly (util/count.h); a stack is location ids,
 *                root first: the outermost caller first, the sampled
 *                location last
 *   roots        the task of a sample: comm, and pid/tid when recorded
 *                (0 otherwise: stacks of all tasks of a comm then merge)
 *   locations    where code was: kind, mapping, address (struct kp_loc);
 *                once named, its frames, outermost first: the function,
 *                then any inlined callees down to the innermost
 *   functions    name + source file (string ids), interned
 *   mappings     per (kind, object id) of the locations: the file's path
 *                and build-id, or the pid of a JIT map
 *   metadata     the run, as ordered KEY=VALUE strings (KP_META_* keys)
 *
 * Strings live once in the profile (string ids are dense, 0 is ""). Ids
 * of locations, functions and samples are dense from 0 in the order they
 * were added. Everything a getter returns is owned by the profile and
 * lives until it is freed, unless said otherwise. Allocation failures
 * abort (util/xalloc.h). */
#ifndef KP_PROFILE_PROFILE_H
#define KP_PROFILE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/count.h"
#include "util/frame.h"

struct kp_profile;

/* ---- locations, as the recorder stores them ---- */

enum kp_loc_kind {
	KP_LOC_UNKNOWN = 0, /* addr is the raw address; obj unused */
	KP_LOC_KERNEL,	    /* addr is a kernel address; obj unused */
	KP_LOC_USER,	    /* obj is an object id (the symbolizer's), addr a file offset */
	KP_LOC_JIT,	    /* obj is a JIT map id (the symbolizer's), addr a virtual address */
	KP_LOC_TRUNCATED,   /* where a user stack was cut (named [truncated]); addr 0 */
	KP_LOC_NAMED,	    /* no address: only a name (folded text); obj unused */
	KP_LOC_NKINDS
};

struct kp_loc {
	uint64_t addr;
	uint32_t obj;
	uint32_t kind; /* enum kp_loc_kind */
};

/* One frame of a named location. */
struct kp_profile_frame {
	uint32_t function; /* function id */
	uint32_t line;	   /* source line, 0 if unknown */
	uint8_t kind;	   /* enum kp_frame_kind: user, kernel, JIT, inline */
};

struct kp_profile_function {
	uint32_t name; /* string id */
	uint32_t file; /* string id of the source file, 0 if unknown */
};

/* A mapping: what the locations of one (kind, obj) are in. */
struct kp_profile_mapping {
	uint32_t kind;	      /* KP_LOC_USER or KP_LOC_JIT */
	uint32_t obj;	      /* the locations' obj */
	uint32_t path;	      /* string id: the file, "[jit]" for a JIT map */
	pid_t pid;	      /* JIT maps: the process */
	uint8_t build_id[20]; /* GNU build-id, when known */
	uint8_t build_id_len; /* 0: none */
};

/* The task a sample belongs to. */
struct kp_profile_root {
	uint32_t comm; /* string id */
	uint32_t pid, tid;
};

#define KP_PROFILE_MAX_VALUES 4

struct kp_profile_value_type {
	uint32_t type, unit; /* string ids: "samples"/"count", "cpu"/"nanoseconds" */
	unsigned decimals;   /* values are in units of 10^-decimals */
};

/* ---- building ---- */

/* Returns a new, empty profile (no value types yet). */
struct kp_profile *kp_profile_new(void);
void kp_profile_free(struct kp_profile *p);

/* Interns s[0..len) and returns its id (0 for ""). */
uint32_t kp_profile_intern(struct kp_profile *p, const char *s, size_t len);
/* The string with id (NUL-terminated; *len, if given, its length). */
const char *kp_profile_str(const struct kp_profile *p, uint32_t id, size_t *len);
/* How many strings there are: ids run 1..kp_profile_nstrings (and 0, ""). */
size_t kp_profile_nstrings(const struct kp_profile *p);

/* Adds a value type; returns its index, or -1 past KP_PROFILE_MAX_VALUES.
 * Add every value type before the first sample. */
int kp_profile_add_value_type(struct kp_profile *p, const char *type, const char *unit,
			      unsigned decimals);
size_t kp_profile_nvalues(const struct kp_profile *p);
const struct kp_profile_value_type *kp_profile_value_type(const struct kp_profile *p, size_t i);
/* The index of the value type named type, or -1. */
int kp_profile_find_value(const struct kp_profile *p, const char *type);
/* The value types' names in order, "samples, cpu" ("none" without any),
 * in buf (size bytes, cut if need be), for messages. Returns buf. */
const char *kp_profile_value_names(const struct kp_profile *p, char *buf, size_t size);

/* The dense id of a location, added if new. */
uint32_t kp_profile_location(struct kp_profile *p, const struct kp_loc *loc);
/* A KP_LOC_NAMED location holding the single frame (name, kind): what a
 * frame of folded text becomes. Equal names and kinds give the same id. */
uint32_t kp_profile_named_location(struct kp_profile *p, const char *name, size_t len,
				   enum kp_frame_kind kind);

/* Adds values[0..nvalues) to the sample (root, locs[0..n)), locations root
 * first. Returns false, changing nothing, when a sum would pass 2^128. */
bool kp_profile_add(struct kp_profile *p, const struct kp_profile_root *root, const uint32_t *locs,
		    size_t n, const kp_count *values);

/* The id of function (name, file), added if new. */
uint32_t kp_profile_function(struct kp_profile *p, uint32_t name, uint32_t file);
/* Names location loc: frames[0..n), outermost first, copied. resolved is
 * false when the frames are a placeholder ("[unknown]"). Naming a location
 * again replaces its frames. */
void kp_profile_set_frames(struct kp_profile *p, uint32_t loc,
			   const struct kp_profile_frame *frames, size_t n, bool resolved);

/* Describes the mapping of (m->kind, m->obj); a second call replaces it. */
void kp_profile_set_mapping(struct kp_profile *p, const struct kp_profile_mapping *m);

/* Sets metadata key to the formatted value (replacing an earlier one;
 * keys keep the order they were first set in). */
void kp_profile_set_meta(struct kp_profile *p, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A new profile equal to p but for its locations: those of one kind and
 * mapping whose frames are the same (function, file, line and kind of
 * each) become one, at the address of the first of them, and samples
 * whose stacks become the same are summed (the time axis stays, its
 * events on the merged samples). Locations never named keep their own. Every writer of names, files
 * and lines gives the same output for it; what goes is which instruction addresses were sampled (a
 * .kprof is kept this way: a few times smaller). The caller frees it. */
struct kp_profile *kp_profile_merge_locations(const struct kp_profile *p);

/* ---- time: when each sample was taken ----
 *
 * A profile may keep a time axis: an event per sample taken (the sample
 * id its values went to, its thread, and when, in milliseconds from the
 * axis's origin), in time order. The recorder adds one per sample as it
 * adds the sample; a .kprof keeps them (docs/recording-format.md);
 * profile/timeline.h slices and joins profiles by them. A profile from
 * folded text, or a recording of a kprof before the axis, has none. */

struct kp_profile_event {
	uint32_t ms;	 /* from the origin: its last millisecond */
	uint32_t sample; /* the sample id */
	uint32_t tid;	 /* the thread (0: not known) */
	uint32_t span;	 /* the ms it covers, ending at ms: 1 for a sample taken;
			  * a wait's length (off-CPU, wall) */
};

/* How many of e's milliseconds fall in [from_ms, to_ms). */
uint64_t kp_profile_event_overlap(const struct kp_profile_event *e, uint64_t from_ms,
				  uint64_t to_ms);

/* The most events a profile keeps: 8M, 128 MB, 11 hours of 2 CPUs at 99
 * Hz. Past it samples are still summed, their times are not kept (counted
 * by kp_profile_events_dropped). */
#define KP_PROFILE_MAX_EVENTS (8u << 20)

/* Starts p's time axis at Unix time origin_ns (nanoseconds); without it
 * p keeps no events. It keeps at most KP_PROFILE_MAX_EVENTS unless told
 * otherwise by kp_profile_time_limit. */
void kp_profile_time_start(struct kp_profile *p, uint64_t origin_ns);
bool kp_profile_timed(const struct kp_profile *p);
/* The most events p keeps (profiles joined from files: as many as the
 * files hold, which bounds them). */
void kp_profile_time_limit(struct kp_profile *p, size_t max);
/* The origin's Unix time in nanoseconds (0 when not timed). */
uint64_t kp_profile_time_origin(const struct kp_profile *p);
/* Adds an event of sample (an id of p) at ms; one earlier than the last
 * event is taken as at the last's time, so that events stay in order.
 * Returns false (counting it dropped) past KP_PROFILE_MAX_EVENTS or when
 * p is not timed. */
bool kp_profile_add_event(struct kp_profile *p, uint32_t sample, uint32_t ms, uint32_t tid);
/* kp_profile_add_event of an event that covers span ms (at least 1; no
 * more than ms + 1, so that it starts at or after the origin) ending at ms:
 * a wait. */
bool kp_profile_add_span(struct kp_profile *p, uint32_t sample, uint32_t ms, uint32_t span,
			 uint32_t tid);
/* The events in time order (*n of them); valid until the next add. */
const struct kp_profile_event *kp_profile_events(const struct kp_profile *p, size_t *n);
/* Drops p's time axis: its events, and p is no longer timed. */
void kp_profile_time_clear(struct kp_profile *p);
/* Samples whose time was not kept (the bound), and setting it (readers). */
uint64_t kp_profile_events_dropped(const struct kp_profile *p);
void kp_profile_set_events_dropped(struct kp_profile *p, uint64_t n);
/* kp_profile_add that also gives the sample's id (*id, may be NULL). */
bool kp_profile_add_id(struct kp_profile *p, const struct kp_profile_root *root,
		       const uint32_t *locs, size_t n, const kp_count *values, uint32_t *id);

/* ---- reading ---- */

size_t kp_profile_nlocations(const struct kp_profile *p);
const struct kp_loc *kp_profile_loc(const struct kp_profile *p, uint32_t loc);
/* The frames of loc (outermost first), NULL with *n 0 when not named yet;
 * *resolved (may be NULL) false for a placeholder. */
const struct kp_profile_frame *kp_profile_frames(const struct kp_profile *p, uint32_t loc,
						 size_t *n, bool *resolved);

size_t kp_profile_nfunctions(const struct kp_profile *p);
const struct kp_profile_function *kp_profile_function_at(const struct kp_profile *p, uint32_t fn);

size_t kp_profile_nmappings(const struct kp_profile *p);
const struct kp_profile_mapping *kp_profile_mapping_at(const struct kp_profile *p, size_t i);
/* The mapping of (kind, obj), or NULL. */
const struct kp_profile_mapping *kp_profile_mapping_of(const struct kp_profile *p, uint32_t kind,
						       uint32_t obj);

size_t kp_profile_nsamples(const struct kp_profile *p);
/* Sample i: its root, its location ids (root first; *n of them) and its
 * values (kp_profile_nvalues of them). Pointers valid until the next add. */
const uint32_t *kp_profile_sample(const struct kp_profile *p, size_t i,
				  struct kp_profile_root *root, size_t *n, const kp_count **values);
/* Sum of value v over all samples. */
kp_count kp_profile_total(const struct kp_profile *p, size_t v);

/* The locations in all samples (a stack's entries, its inline frames not
 * counted apart), each sample weighted by its value v, into *frames; of
 * those, the ones not resolved (never named, or an [unknown] placeholder)
 * by location kind into unresolved[KP_LOC_NKINDS]. */
void kp_profile_frame_counts(const struct kp_profile *p, size_t v, kp_count *frames,
			     kp_count *unresolved);

size_t kp_profile_nmeta(const struct kp_profile *p);
/* Metadata entry i (key and value strings). */
void kp_profile_meta_at(const struct kp_profile *p, size_t i, const char **key, const char **value);
/* The value of key, or NULL. */
const char *kp_profile_meta(const struct kp_profile *p, const char *key);

/* Well-known metadata keys (values are strings; numbers in decimal). */
#define KP_META_VERSION	   "kprof.version" /* "0.1.0" */
#define KP_META_COMMAND	   "command"	   /* the kprof command line */
#define KP_META_HOST	   "host"	   /* uname nodename */
#define KP_META_KERNEL	   "kernel"	   /* uname release */
#define KP_META_CPUS	   "cpus"	   /* CPUs sampled: "0-7" */
#define KP_META_EVENT	   "event"	   /* "cpu-clock" */
#define KP_META_FREQUENCY  "frequency"	   /* Hz, when sampling by frequency */
#define KP_META_PERIOD	   "period"	   /* events per sample otherwise */
#define KP_META_START	   "start"	   /* ISO 8601 UTC, e.g. 2026-12-01T07:42:53Z */
#define KP_META_DURATION   "duration"	   /* seconds, "30.02" */
#define KP_META_SAMPLES	   "samples"	   /* samples recorded */
#define KP_META_LOST	   "lost"	   /* samples the kernel dropped */
#define KP_META_THROTTLED  "throttled"	   /* times the kernel throttled sampling, when any */
#define KP_META_END	   "end"	   /* how a command's run ended: exit, signal, ... */
#define KP_META_UNRESOLVED "unresolved.%s" /* kernel, user, jit, other: frames */
#define KP_META_SOURCE	   "source"	   /* what the profile was read from: "folded" */
#define KP_META_ROOTS	   "roots"	   /* comm, comm-pid or comm-pid/tid: what the roots hold */
#define KP_META_SCOPE	   "scope"	   /* "system": the whole machine (-a, -C); else absent */
#define KP_META_RANGE	   "range"	   /* a slice's: seconds from the start, "1.250-3.000" */

#endif
