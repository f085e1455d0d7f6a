/* Text output for the SVG writer: XML escaping that keeps the document
 * well-formed whatever bytes a function name holds (UTF-8 decoding:
 * util/utf8.h). */
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

#endif
