/* kp_folded: the folded table, the profile's named-stack view: stack of
 * named frames -> count.
 *
 * Everything that draws or writes stacks of names meets here: a profile is
 * folded into it (profile/fold.h: `kprof`, `kprof report`, `kprof diff`),
 * folded text is read into it (formats/folded_read.h: `kprof flamegraph`),
 * and the folded-text writer, the SVG, the top table and speedscope read
 * it. Frame names are interned in the table; a frame is (name, kind), and
 * the kind is what the _[k] / _[j] / _[i] suffixes encode in folded text.
 * The order of the stacks' lines in folded text (kp_folded_sorted) is the
 * table's too, since the SVG draws in it. */
#ifndef KP_PROFILE_FOLDED_H
#define KP_PROFILE_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* Flags for kp_folded_sorted and the folded writer (formats/folded_write.h):
 * the kinds whose suffix the lines carry, and the order. */
enum {
	KP_FOLDED_ANNOTATE_KERNEL = 1 << 0, /* append _[k] to kernel frames */
	KP_FOLDED_ANNOTATE_JIT = 1 << 1,    /* append _[j] to JIT frames */
	KP_FOLDED_ANNOTATE_INLINE = 1 << 2, /* append _[i] to inline frames */
	KP_FOLDED_ANNOTATE_ALL = 7,
	/* The folded writer only (not kp_folded_sorted): lines ordered by
	 * their stacks' text alone, as stackcollapse-perf.pl sorts its hash
	 * keys (no count, no ';' after a leaf named like a count), and stacks
	 * whose text is the same written as one line, their counts summed:
	 * `kprof collapse`, byte for byte the script. */
	KP_FOLDED_BY_STACK = 1 << 3,
};

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
 * default. The folded writer still prints merged, sorted lines. */
void kp_folded_set_sequence(struct kp_folded *f, bool on);
bool kp_folded_sequence(const struct kp_folded *f);

/* Verbatim mode: names are interned as given, not made safe for folded
 * text (';' and control characters stay). For the perf-script collapser,
 * whose output must be stackcollapse-perf.pl's bytes; off by default. */
void kp_folded_set_verbatim(struct kp_folded *f, bool on);

/* The suffix text of a kind ("_[k]", "_[j]", "_[i]") or "" for the others. */
const char *kp_folded_kind_suffix(enum kp_frame_kind kind);

/* Stack indexes in the bytewise order of their rendered lines ("a;b;c N",
 * "a;b;c B N" for differential stacks,
 * kinds in flags annotated; reverse: frames leaf first, as flamegraph.pl
 * --reverse sorts them). Returns a new array of kp_folded_nstacks entries;
 * the caller frees it. */
uint32_t *kp_folded_sorted(const struct kp_folded *f, unsigned flags, bool reverse);

/* Brings count, with decimals decimals, to the table's units (those of
 * kp_folded_count), giving the table more decimals first when it has
 * fewer. False, changing nothing, when that cannot be done exactly. For
 * readers that check a line's count before interning its frames; the
 * count can then be added with kp_folded_decimals(f) as its decimals. */
bool kp_folded_align(struct kp_folded *f, kp_count *count, unsigned decimals);
/* kp_folded_align of a BEFORE AFTER pair with decimals db and da. */
bool kp_folded_align_pair(struct kp_folded *f, kp_count *before, unsigned db, kp_count *after,
			  unsigned da);

/* Folded text's syntax, which the line order follows and the folded reader
 * and writer share. */
/* The suffix of kind fid's frame when flags annotate that kind, else "". */
const char *kp_folded_annotation(uint32_t fid, unsigned flags);
/* Where the trailing count of s[0..len) starts: /\d+(\.\d*)?$/ after one
 * whitespace character, as flamegraph.pl reads it. Returns 0 (no count;
 * a count never starts at 0) or the index, and says in *why what is wrong
 * otherwise. */
size_t kp_folded_count_start(const char *s, size_t len, const char **why);
/* Whether leaf, the last frame of a line, gets a ';' after it: its name
 * ends like a count ("JIT code 12") and flags give it no suffix, so that
 * the line reads back as one stack and one count. */
bool kp_folded_needs_end_mark(const struct kp_folded *f, uint32_t leaf, unsigned flags);

#endif
