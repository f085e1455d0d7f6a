/* kp_sym_notes_*: sentences for the user collected by the symbolizer,
 * each added once. Internal to symbolize/. */
#ifndef KP_SYMBOLIZE_NOTES_H
#define KP_SYMBOLIZE_NOTES_H

#include <stddef.h>

struct kp_sym_notelist {
	char **v; /* NULL-terminated when non-empty */
	size_t n, cap;
};

/* Adds the sentence unless an identical one is there. */
void kp_sym_note(struct kp_sym_notelist *nl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Adds a note the first time (*slot == 0) and replaces that same note on
 * later calls, for counts that change as files are re-read. */
void kp_sym_note_update(struct kp_sym_notelist *nl, size_t *slot, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void kp_sym_notes_fini(struct kp_sym_notelist *nl);

#endif
