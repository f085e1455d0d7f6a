/* UTF-8: decoding code points (XML and JSON escaping, the SVG's text
 * widths), and cleaning text for formats that carry only valid UTF-8: pprof's proto3 strings
 * (Parca, Pyroscope and other readers built on Go's protobuf refuse a
 * profile with one invalid string) and JSON (jansson refuses invalid
 * UTF-8). Symbol names are bytes; a writer passes each one through here. */
#ifndef KP_UTIL_UTF8_H
#define KP_UTIL_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* s[0..len) as valid UTF-8 without NUL bytes: s itself when it already is
 * (the common case, no copy), else a copy in *buf (grown as needed; the
 * caller frees it) where every byte of an invalid sequence and every NUL
 * (which C strings and pprof's string table cannot carry) is U+FFFD, as
 * the SVG writer draws them. *outlen gets the result's length; the result
 * is NUL-terminated only when it is the copy, and lives until the next
 * call with the same buffer. */
const char *kp_utf8_clean(const char *s, size_t len, char **buf, size_t *cap, size_t *outlen);

/* Decodes one code point at s[0..len) (len > 0). Returns the number of
 * bytes used; *cp is U+FFFD (and 1 byte used) for an invalid sequence. */
size_t kp_utf8_next(const char *s, size_t len, uint32_t *cp);

/* Number of code points in s[0..len) (each invalid byte counts as one). */
size_t kp_utf8_count(const char *s, size_t len);

/* Byte length of the first n code points of s[0..len). */
size_t kp_utf8_prefix(const char *s, size_t len, size_t n);

#endif
