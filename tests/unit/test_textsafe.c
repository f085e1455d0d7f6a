/* util/textsafe: every class of byte a terminal or a log reader would act
 * on comes out as a visible escape, everything else as it is. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kp_test.h"
#include "util/textsafe.h"

/* s[0..len) through each of the three ways out: the same text each time. */
static char *esc(const char *s, size_t len)
{
	char *mem = NULL, *dup = kp_textsafe_dup(s, len), *copy;
	size_t size = 0, cap = len * KP_TEXTSAFE_MAX_RATIO + 1;
	FILE *f = open_memstream(&mem, &size);

	CHECK(kp_textsafe_write(f, s, len) == 0);
	fclose(f);
	copy = malloc(cap);
	CHECK(!kp_textsafe_copy(copy, cap, s, len));
	CHECK_EQ_STR(mem, dup);
	CHECK_EQ_STR(copy, dup);
	CHECK(kp_textsafe_is_plain(s, len) == (strlen(dup) == len && memcmp(dup, s, len) == 0));
	free(mem);
	free(copy);
	return dup;
}

#define CHECK_ESC(in, want)                             \
	do {                                            \
		char *_got = esc((in), sizeof(in) - 1); \
		CHECK_EQ_STR(_got, (want));             \
		free(_got);                             \
	} while (0)

static void test_plain(void)
{
	CHECK_ESC("main", "main");
	CHECK_ESC("std::vector<int>::push_back(int const&) [clone .isra.0]",
		  "std::vector<int>::push_back(int const&) [clone .isra.0]");
	CHECK_ESC("/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6");
	/* printable UTF-8 stays: accents, CJK, an emoji, U+FFFD spelt out */
	CHECK_ESC("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x94\xa5 \xef\xbf\xbd",
		  "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x94\xa5 \xef\xbf\xbd");
	CHECK_ESC("", "");
	CHECK_ESC("# a comment, #[attr], ## b", "# a comment, #[attr], ## b");
}

static void test_c0_and_del(void)
{
	/* every C0 byte and DEL */
	for (unsigned c = 0; c < 0x20; c++) {
		char in[3] = {'a', (char)c, 'b'}, want[8];
		char *got;

		if (c == '\t' || c == '\n' || c == '\r')
			snprintf(want, sizeof(want), "a\\%cb",
				 c == '\t'   ? 't'
				 : c == '\n' ? 'n'
					     : 'r');
		else
			snprintf(want, sizeof(want), "a\\x%02xb", c);
		got = esc(in, 3);
		CHECK_EQ_STR(got, want);
		free(got);
	}
	CHECK_ESC("a\x7f", "a\\x7f");
	/* the terminal title and clear screen of the issue */
	CHECK_ESC("/tmp/x\x1b]0;pwned\x07\x1b[2J/prog", "/tmp/x\\x1b]0;pwned\\x07\\x1b[2J/prog");
	CHECK_ESC("a\nb\r\n", "a\\nb\\r\\n");
	/* a backslash is doubled: an escape in the output is always ours */
	CHECK_ESC("C:\\x1b", "C:\\\\x1b");
}

static void test_c1_bidi_and_separators(void)
{
	/* C1 as UTF-8 (U+0080..U+009F), CSI U+009B among them */
	for (unsigned cp = 0x80; cp <= 0x9f; cp++) {
		char in[2] = {(char)(0xc0 | (cp >> 6)), (char)(0x80 | (cp & 0x3f))}, want[8];
		char *got = esc(in, 2);

		snprintf(want, sizeof(want), "\\u%04x", cp);
		CHECK_EQ_STR(got, want);
		free(got);
	}
	/* a raw C1 byte is invalid UTF-8: its byte */
	CHECK_ESC("a\x9b"
		  "31mb",
		  "a\\x9b31mb");
	/* bidi controls, line and paragraph separators, zero-width ones */
	static const uint32_t cps[] = {0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x2028,
				       0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e,
				       0x2060, 0x2066, 0x2067, 0x2068, 0x2069, 0xfeff};
	for (size_t i = 0; i < sizeof(cps) / sizeof(cps[0]); i++) {
		uint32_t cp = cps[i];
		char in[3] = {(char)(0xe0 | (cp >> 12)), (char)(0x80 | ((cp >> 6) & 0x3f)),
			      (char)(0x80 | (cp & 0x3f))},
		     want[8];
		char *got = esc(in, 3);

		snprintf(want, sizeof(want), "\\u%04x", (unsigned)cp);
		CHECK_EQ_STR(got, want);
		free(got);
	}
	CHECK_ESC("evil\xe2\x80\xaegpj.exe", "evil\\u202egpj.exe");
	/* neighbours that are text stay */
	CHECK_ESC("\xc2\xa0\xe2\x80\x94\xe2\x80\xa2", "\xc2\xa0\xe2\x80\x94\xe2\x80\xa2");
}

static void test_invalid_utf8(void)
{
	CHECK_ESC("\xff", "\\xff");
	CHECK_ESC("a\xc3", "a\\xc3");			       /* cut short at the end */
	CHECK_ESC("\xc3(", "\\xc3(");			       /* a bad continuation */
	CHECK_ESC("\xc0\xaf", "\\xc0\\xaf");		       /* overlong '/' */
	CHECK_ESC("\xe0\x80\xaf", "\\xe0\\x80\\xaf");	       /* overlong, 3 bytes */
	CHECK_ESC("\xed\xa0\x80", "\\xed\\xa0\\x80");	       /* a surrogate */
	CHECK_ESC("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
	CHECK_ESC("\xe2\x80", "\\xe2\\x80");		       /* U+202E cut short */
}

static void test_github_legacy_command(void)
{
	CHECK_ESC("##[error]x", "#\\x23[error]x");
	CHECK_ESC("a ###[add-mask]s", "a ##\\x23[add-mask]s");
	CHECK_ESC("##", "##");
}

/* A long name: escaped whole by write and dup; copy cuts between escapes. */
static void test_long(void)
{
	size_t n = 1 << 20;
	char *in = malloc(n), *got, small[16];

	for (size_t i = 0; i < n; i++)
		in[i] = i % 3 == 0 ? '\x1b' : i % 3 == 1 ? 'x' : (char)0x9b;
	got = esc(in, n);
	CHECK_EQ_INT(strlen(got), n / 3 * 9 + 4);
	CHECK(!strchr(got, '\x1b'));
	free(got);
	/* 15 bytes of room: "\x1bx\x9b\x1bx" (14), never half an escape */
	CHECK(kp_textsafe_copy(small, sizeof(small), in, n));
	CHECK_EQ_STR(small, "\\x1bx\\x9b\\x1bx");
	CHECK(kp_textsafe_copy(small, 1, in, n));
	CHECK_EQ_STR(small, "");
	free(in);
}

static void test_cut(void)
{
	/* "ab" then U+202E (3 bytes) then "c": never inside the sequence */
	const char *s = "ab\xe2\x80\xae"
			"c";

	CHECK_EQ_INT(kp_textsafe_cut(s, 6, 10), 6);
	CHECK_EQ_INT(kp_textsafe_cut(s, 6, 5), 5);
	CHECK_EQ_INT(kp_textsafe_cut(s, 6, 4), 2);
	CHECK_EQ_INT(kp_textsafe_cut(s, 6, 3), 2);
	CHECK_EQ_INT(kp_textsafe_cut(s, 6, 2), 2);
	CHECK_EQ_INT(kp_textsafe_cut("\x80\x80\x80\x80\x80", 5, 4), 4);
}

KP_TEST_MAIN(test_plain, test_c0_and_del, test_c1_bidi_and_separators, test_invalid_utf8,
	     test_github_legacy_command, test_long, test_cut)
