#include "flamegraph/xmlout.h"

#include "util/utf8.h"

#include <string.h>

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
