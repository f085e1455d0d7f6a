/* kp_notes: sentences for the user collected while working (fallbacks
 * taken, files skipped, counts of what was damaged), each kept once, in
 * the order they came; the tool prints them (cli/messages.c), libraries
 * never do. The one note list of the profiler's events and the symbolizer. */
#ifndef KP_UTIL_NOTES_H
#define KP_UTIL_NOTES_H

#include <stddef.h>

/* Embedded by its owner: zero-initialized is empty; kp_notes_fini frees. */
struct kp_notes {
	char **v; /* NULL-terminated when non-empty */
	size_t n, cap;
};

/* Adds the sentence (cut at 1023 bytes) unless an identical one is there. */
void kp_notes_add(struct kp_notes *nl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Adds a note the first time (*slot == 0) and replaces that same note on
 * later calls, for counts that change as files are re-read. */
void kp_notes_update(struct kp_notes *nl, size_t *slot, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The notes in order, their number in *n; owned by nl, valid until the
 * next add or kp_notes_fini. */
const char *const *kp_notes_list(const struct kp_notes *nl, size_t *n);
void kp_notes_fini(struct kp_notes *nl);

#endif
