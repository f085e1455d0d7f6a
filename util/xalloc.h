/* Allocation that cannot fail: a profiler that runs out of memory has
 * nothing sensible left to do, so these print one line, "kprof: out of
 * memory (N bytes)", and end the process with exit status 1 instead of
 * threading -ENOMEM through every caller. */
#ifndef KP_UTIL_XALLOC_H
#define KP_UTIL_XALLOC_H

#include <stddef.h>

void *kp_xmalloc(size_t n);
void *kp_xcalloc(size_t nmemb, size_t size);
void *kp_xrealloc(void *p, size_t n);
/* Grows *p (an array of elem-sized items with *cap slots) to hold at least need items. */
void kp_xgrow(void *pp, size_t *cap, size_t need, size_t elem);
char *kp_xstrdup(const char *s);
char *kp_xstrndup(const char *s, size_t n);
/* printf into a new heap string; caller frees. */
char *kp_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* first, then each of v[0..n) after a space ("kprof diff A B": a command
 * line as given). Returns a new heap string. */
char *kp_xjoin(const char *first, char *const *v, size_t n);

/* What the functions above do when an allocation of n bytes fails (0: a
 * size not known, such as a library's own allocation): prints
 * "kprof: out of memory (N bytes)" on stderr, runs the hook, and ends the
 * process with _exit(1). No atexit handler runs and no stdio buffer is
 * flushed, so nothing allocates and no half-written output is flushed
 * behind a complete-looking one; an output of util/outfile.h under its
 * unnamed file vanishes with the process, and the hook removes a named
 * temporary. */
_Noreturn void kp_oom(size_t n);
/* Sets the function kp_oom runs before the exit (one; NULL: none). It runs
 * with no memory to spare: only async-signal-safe calls (unlink, write). */
void kp_set_oom_hook(void (*hook)(void));

#endif
