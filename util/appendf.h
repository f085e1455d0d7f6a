/* Text built a piece at a time in a fixed buffer: snprintf's return, added
 * up, runs past the buffer once a piece is cut, and the next piece would be
 * written out of bounds. */
#ifndef KP_UTIL_APPENDF_H
#define KP_UTIL_APPENDF_H

#include <stddef.h>

/* Appends fmt's text to buf (size bytes, *len of them used, NUL-ended),
 * never past its end: what does not fit is cut, and *len stays below
 * size. */
void kp_appendf(char *buf, size_t size, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
