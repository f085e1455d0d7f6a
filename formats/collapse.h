/* kp_collapse: `perf script` text in, folded stacks out, following the rules
 * of FlameGraph's stackcollapse-perf.pl so that the output is byte for byte
 * what that script writes with the same options (docs/collapse.md lists the
 * rules and the few deliberate differences).
 *
 * Streaming: feed the text in chunks of any size (lines may be split across
 * chunks); memory grows with the number of distinct stacks, not with the
 * input. Lines that are not perf script are skipped and counted, never fatal.
 *
 *	c = kp_collapse_new(&opts);
 *	for each input: kp_collapse_read_fd(c, fd, name, &d)   (or feed + end_input)
 *	kp_collapse_write(c, out, &d);
 *	kp_collapse_free(c);
 */
#ifndef KP_FORMATS_COLLAPSE_H
#define KP_FORMATS_COLLAPSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/diag.h"

struct kp_collapse_opts {
	bool pid;		  /* --pid: root frame is comm-PID */
	bool tid;		  /* --tid: root frame is comm-PID/TID (wins over pid) */
	bool kernel;		  /* --kernel: kernel frames get _[k] */
	bool jit;		  /* --jit: frames from /tmp/perf-PID.map get _[j] */
	bool addrs;		  /* --addrs: [unknown] frames become [module <pc>] */
	bool srcline;		  /* --srcline: each frame line is followed by a srcline line */
	const char *event_filter; /* keep only this event; NULL or "": the first one seen */
};

struct kp_collapse_stats {
	uint64_t lines;		  /* lines read, all inputs */
	uint64_t samples;	  /* samples folded into a stack */
	uint64_t weighted;	  /* of them, counted by the period their header gave */
	uint64_t filtered;	  /* sample headers skipped because of their event */
	uint64_t bad_lines;	  /* lines that are not perf script: skipped */
	unsigned first_bad_input; /* 0-based input index of the first bad line */
	uint64_t first_bad_line;  /* its 1-based line number within that input (0: none) */
	uint64_t unterminated;	  /* inputs whose last sample had no closing blank line: dropped */
	uint64_t long_lines;	  /* lines over the length limit: skipped (also in bad_lines) */
	/* The event kept (the filter, or the first event seen); NULL when no
	 * header named an event. Owned by the collapser. */
	const char *event;
	bool event_defaulted; /* event was not given by the caller */
	/* First event that was skipped because it is not `event`; NULL if none.
	 * Owned by the collapser. */
	const char *other_event;
};

struct kp_collapse;

/* Returns a new collapser (caller frees with kp_collapse_free); opts is copied. */
struct kp_collapse *kp_collapse_new(const struct kp_collapse_opts *opts);
void kp_collapse_free(struct kp_collapse *c);

/* Feeds the next len bytes of the current input. */
void kp_collapse_feed(struct kp_collapse *c, const char *buf, size_t len);
/* Ends the current input: its last line may lack a newline; a sample still
 * open (no blank line after it) is dropped and counted, as the Perl script
 * drops it. The next feed starts a new input (line numbers restart). */
void kp_collapse_end_input(struct kp_collapse *c);
/* Reads fd to its end as one input (feed + end_input). name is used in the
 * diag only. Returns 0 or a negative errno with d set to "NAME: reason". */
int kp_collapse_read_fd(struct kp_collapse *c, int fd, const char *name, struct kp_diag *d);

/* Writes "stack count\n" lines sorted by stack (byte order, as Perl's sort).
 * Returns 0 or a negative errno (d set). */
int kp_collapse_write(struct kp_collapse *c, FILE *out, struct kp_diag *d);

/* What the counts are, into buf (size bytes, at least 8): "samples" when
 * no sample gave a period; else "ns" for cpu-clock and task-clock (their
 * period is nanoseconds), or the event's name without its modifiers
 * ("cycles" for cycles:u), the unit of its period; "samples" when that
 * name has bytes other than letters, digits and -_./ or does not fit. */
void kp_collapse_countname(const struct kp_collapse *c, char *buf, size_t size);

/* Number of distinct stacks so far. */
size_t kp_collapse_nstacks(const struct kp_collapse *c);
/* Counters; the pointer is owned by the collapser and valid until it is freed. */
const struct kp_collapse_stats *kp_collapse_stats(const struct kp_collapse *c);

/* kprof collapse's inputs (collapse_files.c). */
struct kp_notes;

/* Reads the files paths[0..n) ("-": stdin; none: stdin) into c, in order.
 * Returns 0, or -1 with d: "NAME: why" for one that cannot be opened (as
 * read(2) would say it), else kp_collapse_read_fd's message. */
int kp_collapse_read_paths(struct kp_collapse *c, char *const *paths, size_t n, struct kp_diag *d);

/* What the user should know of what c read from paths[0..n), each
 * sentence added to said as kprof says it after "kprof: " ("warning:
 * ...", "note: skipped ..."). Returns true when nothing usable was found
 * in an input that was not empty (then one sentence begins "error:"). */
bool kp_collapse_tell(const struct kp_collapse *c, char *const *paths, size_t n,
		      struct kp_notes *said);

/* Before kp_collapse_write: "# countname: UNIT" with header; without it,
 * counts that are not samples told in said ("note: the counts are ..."),
 * with the way to keep their unit (flamegraph.pl and plain folded text
 * have no place for it). Returns 0, or -EIO with d set. */
int kp_collapse_write_header(const struct kp_collapse *c, bool header, FILE *out,
			     struct kp_notes *said, struct kp_diag *d);

#endif
