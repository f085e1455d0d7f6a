/* Text output for the SVG writer: XML escaping that keeps the document
 * well-formed whatever bytes a function name holds, and UTF-8 helpers. */
#ifndef KP_FLAMEGRAPH_XMLOUT_H
#define KP_FLAMEGRAPH_XMLOUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Writes s[0..len) escaped for XML text or attribute values: & < > " '
 * become entities, control characters '?', invalid UTF-8 (and the
 * non-characters XML forbids) U+FFFD. */
void kp_xml_escape(FILE *out, const char *s, size_t len);

/* Writes s[0..len) as the body of a JavaScript string literal that is also
 * safe inside CDATA: quotes, backslashes, '<', '>', '&', controls and
 * line separators become \\uXXXX escapes. Invalid UTF-8 becomes U+FFFD. */
void kp_js_escape(FILE *out, const char *s, size_t len);

/* Decodes one code point at s[0..len) (len > 0). Returns the number of
 * bytes used; *cp is U+FFFD (and 1 byte used) for an invalid sequence. */
size_t kp_utf8_next(const char *s, size_t len, uint32_t *cp);

/* Number of code points in s[0..len) (each invalid byte counts as one). */
size_t kp_utf8_count(const char *s, size_t len);

/* Byte length of the first n code points of s[0..len). */
size_t kp_utf8_prefix(const char *s, size_t len, size_t n);

#endif
