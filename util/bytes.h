/* kp_bytes: a growable run of bytes, for text built a piece at a time in
 * the hot loops of the folded writer and `kprof collapse` (inline: a call
 * a piece costs them measurably). Not NUL-terminated; p is owned by the
 * struct's user, who frees it; {0} is an empty buffer. */
#ifndef KP_UTIL_BYTES_H
#define KP_UTIL_BYTES_H

#include <stddef.h>
#include <string.h>

#include "util/xalloc.h"

struct kp_bytes {
	char *p;
	size_t len, cap;
};

/* Appends s[0..n). */
static inline void kp_bytes_put(struct kp_bytes *b, const char *s, size_t n)
{
	if (b->len + n > b->cap)
		kp_xgrow(&b->p, &b->cap, b->len + n, 1);
	if (n)
		memcpy(b->p + b->len, s, n);
	b->len += n;
}

/* Appends one byte. */
static inline void kp_bytes_putc(struct kp_bytes *b, char ch)
{
	if (b->len + 1 > b->cap)
		kp_xgrow(&b->p, &b->cap, b->len + 1, 1);
	b->p[b->len++] = ch;
}

#endif
