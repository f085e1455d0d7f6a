#include "flamegraph/utf8.h"

#include <stdint.h>
#include <string.h>

#include "flamegraph/xmlout.h"
#include "util/xalloc.h"

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
