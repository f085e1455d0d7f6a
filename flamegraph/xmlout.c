#include "flamegraph/xmlout.h"

#include <string.h>

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

static const char *xml_entity(unsigned char c)
{
	switch (c) {
	case '&':
		return "&amp;";
	case '<':
		return "&lt;";
	case '>':
		return "&gt;";
	case '"':
		return "&quot;";
	case '\'':
		return "&#39;";
	default:
		return NULL;
	}
}

void kp_xml_escape(FILE *out, const char *s, size_t len)
{
	size_t i = 0, plain = 0;

	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		const char *rep = NULL;
		size_t used = 1;
		uint32_t cp;

		if (c >= 0x80) {
			used = kp_utf8_next(s + i, len - i, &cp);
			/* XML 1.0 forbids U+FFFE and U+FFFF even when well encoded */
			if (cp == 0xfffd || cp == 0xfffe || cp == 0xffff)
				rep = "\xef\xbf\xbd";
		} else if (c < 0x20 || c == 0x7f) {
			rep = "?";
		} else {
			rep = xml_entity(c);
		}
		if (!rep) {
			i += used;
			continue;
		}
		fwrite_unlocked(s + plain, 1, i - plain, out);
		fputs_unlocked(rep, out);
		i += used;
		plain = i;
	}
	fwrite_unlocked(s + plain, 1, i - plain, out);
}

void kp_js_escape(FILE *out, const char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		uint32_t cp;
		size_t used = kp_utf8_next(s + i, len - i, &cp);

		if (cp < 0x20 || cp == 0x7f || cp == '"' || cp == '\'' || cp == '\\' || cp == '<' ||
		    cp == '>' || cp == '&' || cp == 0x2028 || cp == 0x2029 || cp == 0xfffd ||
		    cp == 0xfffe || cp == 0xffff) {
			if (cp == 0xfffe || cp == 0xffff)
				cp = 0xfffd;
			fprintf(out, "\\u%04x", (unsigned)cp);
		} else if (c < 0x80) {
			putc_unlocked((int)c, out);
		} else {
			fwrite_unlocked(s + i, 1, used, out);
		}
		i += used;
	}
}
