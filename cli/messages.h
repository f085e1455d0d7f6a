/* What kprof says to the user on stderr, one line each: an error
 * ("kprof: ...") or a warning ("kprof: warning: ..."). Only cli/ prints to
 * the user; the folders below hand it their sentences in a struct kp_diag
 * or a note list. Each message is formatted, then escaped as a whole
 * (util/textsafe.h): a path, a name or a server's answer in it cannot
 * reach the terminal or the log as control bytes, and a message is always
 * one line; kprof's own words hold no control byte and no backslash. */
#ifndef KP_CLI_MESSAGES_H
#define KP_CLI_MESSAGES_H

#include <stddef.h>
#include <stdint.h>

/* Prints "kprof: <msg>" on stderr. */
void kp_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "kprof: warning: <msg>" on stderr. */
void kp_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "kprof: <msg>" on stderr: a line of the summary, not an error. */
void kp_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Warns each of n notes (a symbolizer's or a session's). */
void kp_warn_notes(const char *const *notes, size_t n);
/* Says each of a library's sentences, as written after "kprof: ". */
struct kp_notes;
void kp_say_notes(const struct kp_notes *said);
/* Warns each of a library's sentences. */
void kp_warn_each(const struct kp_notes *nl);
/* Warns of n lines of folded text skipped, the first named (first). */
void kp_warn_bad_lines(uint64_t n, const char *first);

#endif
