/* Text for formats that carry only valid UTF-8: pprof's proto3 strings
 * (Parca, Pyroscope and other readers built on Go's protobuf refuse a
 * profile with one invalid string) and JSON (jansson refuses invalid
 * UTF-8). Symbol names are bytes; a writer passes each one through here. */
#ifndef KP_FLAMEGRAPH_UTF8_H
#define KP_FLAMEGRAPH_UTF8_H

#include <stddef.h>

/* s[0..len) as valid UTF-8 without NUL bytes: s itself when it already is
 * (the common case, no copy), else a copy in *buf (grown as needed; the
 * caller frees it) where every byte of an invalid sequence and every NUL
 * (which C strings and pprof's string table cannot carry) is U+FFFD, as
 * the SVG writer draws them. *outlen gets the result's length; the result
 * is NUL-terminated only when it is the copy, and lives until the next
 * call with the same buffer. */
const char *kp_utf8_clean(const char *s, size_t len, char **buf, size_t *cap, size_t *outlen);

#endif
