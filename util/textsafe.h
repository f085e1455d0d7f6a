/* Text from outside (paths, comms, symbol names, server answers, labels,
 * a recording's command) made safe to print on a terminal or into a log
 * line: no byte of it can move the cursor, set a title, clear the screen,
 * start a new line, reorder what follows it (bidi controls), or be taken
 * for a command by what reads the log (docs/security.md, "What kprof
 * prints").
 *
 * The escape form is that of bash's ANSI-C quoting ($'...'), so a printed
 * name pasted between $' and ' gives its bytes back:
 *   \\            a backslash (so an escape in the output is always ours)
 *   \t \n \r      tab, line feed, carriage return
 *   \xHH          any other C0 control (ESC is \x1b, BEL \x07), DEL (\x7f),
 *                 and each byte of invalid UTF-8 (a lone C1 byte 0x9b too)
 *   \uHHHH        a C1 control written in UTF-8 (U+0080..U+009F), a bidi
 *                 control (U+200E, U+200F, U+202A..U+202E, U+2066..U+2069),
 *                 the line and paragraph separators (U+2028, U+2029), the
 *                 BOM / zero-width no-break space (U+FEFF) and the other
 *                 zero-width formatting characters (U+200B..U+200D, U+2060)
 *   #\x23[       "##[", which GitHub's runner takes for a workflow command
 *                 wherever it is in a line (its legacy form)
 * Everything else (printable ASCII, valid UTF-8 of other code points) is
 * written as it is. A line of escaped text can still begin with "::" (the
 * runner's command form at a line's start): the writers put their own
 * words first on every line that carries foreign text. */
#ifndef KP_UTIL_TEXTSAFE_H
#define KP_UTIL_TEXTSAFE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The most one input byte becomes: "\xHH" (4 bytes); a 3-byte code point
 * becomes "\uHHHH" (6 bytes, 2 per input byte). */
#define KP_TEXTSAFE_MAX_RATIO 4

/* Writes s[0..len) escaped to out. Returns 0 or EOF (the stream's error). */
int kp_textsafe_write(FILE *out, const char *s, size_t len);

/* kp_textsafe_write of a NUL-terminated string. */
int kp_textsafe_puts(FILE *out, const char *s);

/* s[0..len) escaped into dst[0..size): at most size - 1 bytes and a NUL
 * (size > 0), never an escape cut in half: what does not fit is left out
 * and true returned when so. */
bool kp_textsafe_copy(char *dst, size_t size, const char *s, size_t len);

/* s[0..len) escaped in a new string (the caller frees it). */
char *kp_textsafe_dup(const char *s, size_t len);

/* The length of s[0..len) cut to at most max bytes, not in the middle of
 * a UTF-8 sequence (for names shortened in a table). */
size_t kp_textsafe_cut(const char *s, size_t len, size_t max);

/* True when s[0..len) needs no escape (kp_textsafe_write writes it as is). */
bool kp_textsafe_is_plain(const char *s, size_t len);

#endif
