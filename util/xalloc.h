/* Allocation that cannot fail: a profiler that runs out of memory while
 * recording has nothing sensible left to do, so these print one line and
 * abort instead of threading -ENOMEM through every caller. */
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

#endif
