/* Text made safe for a terminal or a log line (see textsafe.h). */
#include "util/textsafe.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"
#include "util/xalloc.h"

/* Code points past ASCII that a terminal or a viewer would act on, or
 * that would hide or reorder text, rather than show. */
static bool invisible(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) ||	 /* C1 controls (0x9b is CSI) */
	       (cp >= 0x200b && cp <= 0x200f) || /* zero-width, LRM, RLM */
	       (cp >= 0x2028 &&
		cp <= 0x202e) || /* line/paragraph separators, embeddings, overrides */
	       (cp >= 0x2060 && cp <= 0x2069) || /* word joiner .. bidi isolates */
	       cp == 0xfeff;			 /* BOM, zero-width no-break space */
}

/* The piece at s[0..len) (len > 0): its length in *used, and its escape in
 * esc (NUL-terminated) or "" when it is written as it is. */
static void piece(const char *s, size_t len, size_t *used, char esc[8])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char c = (unsigned char)s[0];
	uint32_t cp;

	esc[0] = '\0';
	*used = 1;
	if (c >= 0x20 && c < 0x7f) {
		if (c == '\\')
			memcpy(esc, "\\\\", 3);
		/* GitHub's runner takes "##[" anywhere in a line for a command */
		else if (c == '#' && len >= 3 && s[1] == '#' && s[2] == '[')
			memcpy(esc, "#\\x23", 6), *used = 2;
		return;
	}
	if (c == '\t' || c == '\n' || c == '\r') {
		esc[0] = '\\';
		esc[1] = c == '\t' ? 't' : c == '\n' ? 'n' : 'r';
		esc[2] = '\0';
		return;
	}
	if (c < 0x80) { /* other C0 controls, DEL */
		snprintf(esc, 8, "\\x%c%c", hex[c >> 4], hex[c & 15]);
		return;
	}
	*used = kp_utf8_next(s, len, &cp);
	if (cp == 0xfffd && *used == 1) { /* invalid UTF-8: the byte */
		snprintf(esc, 8, "\\x%c%c", hex[c >> 4], hex[c & 15]);
		return;
	}
	if (invisible(cp))
		snprintf(esc, 8, "\\u%04x", (unsigned)cp);
}

/* The first piece of s[from..len) that is escaped: its offset, returned
 * (len when none), its length in *used and its escape in esc. Bytes that
 * are plain ASCII and neither '\\' nor '#' are skipped without a look. */
static size_t next_escape(const char *s, size_t len, size_t from, size_t *used, char esc[8])
{
	size_t i = from;

	while (i < len) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\' && c != '#') {
			i++;
			continue;
		}
		piece(s + i, len - i, used, esc);
		if (esc[0])
			return i;
		i += *used;
	}
	return len;
}

bool kp_textsafe_is_plain(const char *s, size_t len)
{
	size_t used;
	char esc[8];

	return next_escape(s, len, 0, &used, esc) == len;
}

int kp_textsafe_write(FILE *out, const char *s, size_t len)
{
	size_t plain = 0, at, used;
	char esc[8];

	while ((at = next_escape(s, len, plain, &used, esc)) < len) {
		fwrite(s + plain, 1, at - plain, out);
		fputs(esc, out);
		plain = at + used;
	}
	fwrite(s + plain, 1, len - plain, out);
	return ferror(out) ? EOF : 0;
}

int kp_textsafe_puts(FILE *out, const char *s)
{
	return kp_textsafe_write(out, s, strlen(s));
}

bool kp_textsafe_copy(char *dst, size_t size, const char *s, size_t len)
{
	size_t i = 0, n = 0, used;
	char esc[8];

	while (i < len) {
		size_t add;

		piece(s + i, len - i, &used, esc);
		add = esc[0] ? strlen(esc) : used;
		if (n + add > size - 1) {
			dst[n] = '\0';
			return true;
		}
		memcpy(dst + n, esc[0] ? esc : s + i, add);
		n += add;
		i += used;
	}
	dst[n] = '\0';
	return false;
}

char *kp_textsafe_dup(const char *s, size_t len)
{
	size_t size = len * KP_TEXTSAFE_MAX_RATIO + 1;
	char *dst = kp_xmalloc(size);

	kp_textsafe_copy(dst, size, s, len);
	return dst;
}

size_t kp_textsafe_cut(const char *s, size_t len, size_t max)
{
	size_t n = max, back = 0;

	if (len <= max)
		return len;
	/* at most 3 continuation bytes belong to the sequence cut */
	while (n > 0 && back < 3 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--, back++;
	return ((unsigned char)s[n] & 0xc0) != 0x80 ? n : max;
}
