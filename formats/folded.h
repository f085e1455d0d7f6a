/* kp_folded: the folded table, stack of named frames -> count.
 *
 * This is the meeting point of everything: the recorder fills it from
 * symbolized location stacks, `kprof flamegraph` fills it from folded text,
 * and every writer (folded text, SVG, later .kprof, pprof, speedscope) reads
 * it. Frame names are interned in the table; a frame is (name, kind), and
 * the kind is what the _[k] / _[j] / _[i] suffixes encode in folded text. */
#ifndef KP_FORMATS_FOLDED_H
#define KP_FORMATS_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/count.h"
#include "util/diag.h"
#include "util/frame.h"

struct kp_folded;

struct kp_folded *kp_folded_new(void);
void kp_folded_free(struct kp_folded *f);

/* Adds count to the stack frames[0..n) (root first). Names are copied (made
 * safe for folded text: ';' becomes ':', control characters become '?').
 * Adding the same stack twice sums the counts, exactly. Returns false,
 * adding nothing, only when the total would pass 2^128. */
bool kp_folded_add(struct kp_folded *f, const struct kp_frame *frames, size_t n, uint64_t count);
/* kp_folded_add of an exact count in units of 10^-decimals (decimals at
 * most KP_COUNT_MAX_DECIMALS). False, adding nothing, when it cannot be
 * kept exact. */
bool kp_folded_add_count(struct kp_folded *f, const struct kp_frame *frames, size_t n,
			 kp_count count, unsigned decimals);

/* Differential tables: difffolded.pl's "stack BEFORE AFTER" lines, and
 * what `kprof diff` draws. A stack's count (kp_folded_count, the total,
 * every writer's width) is AFTER; BEFORE is kept beside it, exact, in the
 * same units. kp_folded_add_diff adds both; stacks added with one count
 * have no BEFORE (flamegraph.pl colours their frames by the palette).
 * False, adding nothing, when a sum or the decimals cannot be kept exact. */
bool kp_folded_add_diff(struct kp_folded *f, const struct kp_frame *frames, size_t n,
			kp_count before, kp_count after, unsigned decimals);
/* For writers that add many stacks of the same frames (a profile's): the
 * id of frame (name, kind), interned as kp_folded_add interns names (made
 * safe for folded text), valid for the table's life; and the adds of a
 * stack of such ids, otherwise as kp_folded_add_count and
 * kp_folded_add_diff. */
uint32_t kp_folded_frame_id(struct kp_folded *f, const char *name, size_t len,
			    enum kp_frame_kind kind);
bool kp_folded_add_ids(struct kp_folded *f, const uint32_t *ids, size_t n, kp_count count,
		       unsigned decimals);
bool kp_folded_add_ids_diff(struct kp_folded *f, const uint32_t *ids, size_t n, kp_count before,
			    kp_count after, unsigned decimals);
/* True once any stack has a BEFORE count. */
bool kp_folded_differential(const struct kp_folded *f);
/* BEFORE of stack i, in units of 10^-kp_folded_decimals(f); 0 for a stack
 * without one. *has (may be NULL) says whether it has one. */
kp_count kp_folded_before(const struct kp_folded *f, size_t i, bool *has);
/* The exact sum of the BEFORE counts. */
kp_count kp_folded_total_before_exact(const struct kp_folded *f);

/* The longest line kp_folded_read takes, in bytes, its newline not
 * counted: 16 MiB. A real stack is far shorter (kprof records at most 1024
 * addresses a stack, perf at most some 8000; 16 MiB is 8000 frames of 2 KB
 * names), and the cap bounds what reading one line costs: the line, and 8
 * bytes a frame for a line of empty frames (";;;..."), some 150 MB at
 * most. Overridable at build time, to test that path with small inputs
 * (tests/fuzz). */
#ifndef KP_FOLDED_MAX_LINE
#define KP_FOLDED_MAX_LINE (16u << 20)
#endif

/* Options for reading folded text. */
struct kp_folded_read_opts {
	bool strict; /* fail at the first bad line instead of skipping it */
	/* When reading the stream fails: why, for the message (may be NULL:
	 * errno's text), e.g. kp_zstd_reader_error of the reader behind it. */
	const char *(*read_error)(const void *arg);
	const void *read_error_arg;
};

/* Reads folded text ("a;b;c 12" per line; CRLF, blank lines and '#'
 * comment lines skipped; counts integer or decimal, kept exact;
 * _[k]/_[j]/_[i] suffixes become frame kinds; a line with two counts,
 * "a;b;c 10 12", is a differential stack, BEFORE AFTER, as flamegraph.pl
 * reads difffolded.pl's output). name is used in messages
 * ("FILE:LINE: ..."). A line is bad when it does not end in whitespace and
 * a count (digits, optionally a '.' and more digits), as flamegraph.pl
 * reads it, or its count cannot be kept exact (more than 38 digits or 19
 * decimals). Bad lines are skipped and counted in *bad_lines (may be NULL;
 * counting goes on from its value, so one counter serves several files),
 * and the diag describes the first one even though the call succeeds.
 * With opts->strict the first bad line fails the call instead.
 *
 * Input that is not text fails the call, whatever opts->strict says, with
 * "FILE:LINE: why" in the diag, and nothing after it is read: a NUL byte
 * (-EINVAL; binary data, which folded text never holds: kprof's writers
 * turn control characters in names into '?'), a line longer than
 * KP_FOLDED_MAX_LINE (-E2BIG; found before more of it is buffered, so an
 * endless line costs that much memory, not all of it), and an error
 * reading in (-EIO, or -ENOMEM when the line cannot be buffered): never
 * taken for the end of the input. Returns 0 or a negative errno (diag
 * set). */
int kp_folded_read(struct kp_folded *f, FILE *in, const char *name,
		   const struct kp_folded_read_opts *opts, uint64_t *bad_lines, struct kp_diag *d);

/* Flags for kp_folded_write. */
enum {
	KP_FOLDED_ANNOTATE_KERNEL = 1 << 0, /* append _[k] to kernel frames */
	KP_FOLDED_ANNOTATE_JIT = 1 << 1,    /* append _[j] to JIT frames */
	KP_FOLDED_ANNOTATE_INLINE = 1 << 2, /* append _[i] to inline frames */
	KP_FOLDED_ANNOTATE_ALL = 7,
};

/* Writes one "a;b;c COUNT" line per stack ("a;b;c BEFORE AFTER" for the
 * stacks of a differential table that have a BEFORE), lines sorted
 * bytewise (as `LC_ALL=C sort`), so the same profile always prints the
 * same bytes. A leaf whose name ends in a blank and a number (and no kind
 * suffix) gets a ';' after it ("a;JIT code 12; 5"), so that the line reads
 * back as one stack and its counts, not as a differential line.
 * Returns 0 or a negative errno. */
int kp_folded_write(const struct kp_folded *f, FILE *out, unsigned flags);

/* Read access for writers. Stacks are numbered 0..nstacks-1 in the order
 * they were first added. */
size_t kp_folded_nstacks(const struct kp_folded *f);
/* Frames of stack i (root first), valid until the table changes or is freed.
 * The first call builds a kp_frame view of the whole table (16 bytes a
 * frame); writers that walk every stack should prefer kp_folded_stack_ids. */
const struct kp_frame *kp_folded_stack(const struct kp_folded *f, size_t i, size_t *n,
				       double *count);
/* Sum of all counts, as the nearest double (positions, shares). */
double kp_folded_total(const struct kp_folded *f);
/* The exact sum, in units of 10^-kp_folded_decimals(f). */
kp_count kp_folded_total_exact(const struct kp_folded *f);
/* Decimals of every count of the table: 0 unless folded text had some. */
unsigned kp_folded_decimals(const struct kp_folded *f);
/* The exact count of stack i, in units of 10^-kp_folded_decimals(f). */
kp_count kp_folded_count(const struct kp_folded *f, size_t i);

/* The compact form: a frame id (fid) names one (name, kind) pair; equal
 * frames have equal ids. ids[0..n) of stack i, root first, owned by the
 * table, valid until it changes. */
const uint32_t *kp_folded_stack_ids(const struct kp_folded *f, size_t i, size_t *n, double *count);
/* Name of a frame id (without any kind suffix); owned by the table, lives
 * as long as it. *len (may be NULL) gets its length. */
const char *kp_folded_frame_name(const struct kp_folded *f, uint32_t fid, size_t *len);
static inline enum kp_frame_kind kp_folded_frame_kind(uint32_t fid)
{
	return (enum kp_frame_kind)(fid & 7);
}
/* Every frame id of the table is below this (for arrays indexed by fid). */
uint32_t kp_folded_fid_limit(const struct kp_folded *f);

/* Sequence mode (flame charts, where input order is time): kp_folded_add
 * merges a stack only with the one added just before it, so a stack that
 * comes back later is a new entry and the input order survives. Off by
 * default. kp_folded_write still prints merged, sorted lines. */
void kp_folded_set_sequence(struct kp_folded *f, bool on);

/* The suffix text of a kind ("_[k]", "_[j]", "_[i]") or "" for the others. */
const char *kp_folded_kind_suffix(enum kp_frame_kind kind);

/* Stack indexes in the bytewise order of their rendered lines ("a;b;c N",
 * "a;b;c B N" for differential stacks,
 * kinds in flags annotated; reverse: frames leaf first, as flamegraph.pl
 * --reverse sorts them). Returns a new array of kp_folded_nstacks entries;
 * the caller frees it. */
uint32_t *kp_folded_sorted(const struct kp_folded *f, unsigned flags, bool reverse);

#endif
