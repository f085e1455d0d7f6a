#include "util/utf8.h"

#include <stdint.h>
#include <string.h>

#include "util/xalloc.h"

size_t kp_utf8_next(const char *str, size_t len, uint32_t *cp)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t c = s[0], min;
	size_t n, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		c &= 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		c &= 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		c &= 0x07;
		min = 0x10000;
	} else {
		goto bad;
	}
	if (len < n)
		goto bad;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			goto bad;
		c = (c << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates and values past Unicode are invalid */
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		goto bad;
	*cp = c;
	return n;
bad:
	*cp = 0xfffd;
	return 1;
}

size_t kp_utf8_count(const char *s, size_t len)
{
	size_t n = 0, i = 0;
	uint32_t cp;

	while (i < len) {
		if ((unsigned char)s[i] < 0x80)
			i++;
		else
			i += kp_utf8_next(s + i, len - i, &cp);
		n++;
	}
	return n;
}

size_t kp_utf8_prefix(const char *s, size_t len, size_t n)
{
	size_t i = 0;
	uint32_t cp;

	while (i < len && n > 0) {
		i += (unsigned char)s[i] < 0x80 ? 1 : kp_utf8_next(s + i, len - i, &cp);
		n--;
	}
	return i;
}

/* The length of the valid prefix of s[0..len) (no NUL, no invalid byte). */
static size_t valid_prefix(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		uint32_t cp;
		size_t used;

		if (c && c < 0x80) {
			i++;
			continue;
		}
		if (!c)
			break;
		used = kp_utf8_next(s + i, len - i, &cp);
		/* U+FFFD spelt out in the input is valid: 3 bytes used */
		if (cp == 0xfffd && used == 1)
			break;
		i += used;
	}
	return i;
}

const char *kp_utf8_clean(const char *s, size_t len, char **buf, size_t *cap, size_t *outlen)
{
	static const char fffd[3] = {(char)0xef, (char)0xbf, (char)0xbd};
	size_t i = valid_prefix(s, len), n = i;

	if (i == len) {
		*outlen = len;
		return s;
	}
	/* at most 3 bytes for each byte of input, and a NUL */
	kp_xgrow(buf, cap, len * 3 + 1, 1);
	memcpy(*buf, s, i);
	while (i < len) {
		uint32_t cp;
		size_t used = s[i] ? kp_utf8_next(s + i, len - i, &cp) : 1;

		if (!s[i] || (cp == 0xfffd && used == 1)) {
			memcpy(*buf + n, fffd, 3);
			n += 3;
		} else {
			memcpy(*buf + n, s + i, used);
			n += used;
		}
		i += used;
	}
	(*buf)[n] = '\0';
	*outlen = n;
	return *buf;
}
