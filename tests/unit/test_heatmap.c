/* formats/heatmap.c: the page's data (gzip'd, in base64): cells of 20 ms
 * (1 s past 10 minutes) holding each stack's count, a wait's ms in each
 * cell it covers, stacks by folded names, names that cannot end the script
 * element or break the JSON, an untimed profile as one cell. */
#include <libdeflate.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/heatmap.h"
#include "kp_test.h"
#include "profile/profile.h"

/* A profile of two stacks (comm "prog"; A: main;a, B: main;NAME) with
 * events at ms[0..n) of stacks which[0..n). */
static struct kp_profile *timed(const char *bname, const uint32_t *ms, const int *which, size_t n)
{
	struct kp_profile *p = kp_profile_new();
	struct kp_profile_root r = {.comm = kp_profile_intern(p, "prog", 4)};
	uint32_t lm = kp_profile_named_location(p, "main", 4, KP_FRAME_USER),
		 la = kp_profile_named_location(p, "a", 1, KP_FRAME_USER),
		 lb = kp_profile_named_location(p, bname, strlen(bname), KP_FRAME_KERNEL);
	kp_count one = 1;

	kp_profile_add_value_type(p, "samples", "count", 0);
	kp_profile_time_start(p, 1796518800000000000ull);
	for (size_t i = 0; i < n; i++) {
		uint32_t st[2] = {lm, which[i] ? lb : la}, id;

		kp_profile_add_id(p, &r, st, 2, &one, &id);
		kp_profile_add_event(p, id, ms[i], 1);
	}
	return p;
}

static char *page(const struct kp_profile *p, size_t *len)
{
	char *buf = NULL;
	FILE *out = open_memstream(&buf, len);
	struct kp_diag d = {{0}};
	const char *inputs[] = {"run.kprof"};
	struct kp_heatmap_opts o = {.inputs = inputs, .ninputs = 1};

	CHECK_EQ_INT(kp_heatmap_write(p, &o, out, &d), 0);
	fclose(out);
	return buf;
}

/* The page's data: its script element's base64, gunzip'd (libdeflate),
 * as a string. */
static char *data_of(const char *html)
{
	static const char tag[] = "<script id=\"kprof-data\" type=\"application/gzip+base64\">";
	const char *b = strstr(html, tag), *e;
	unsigned char *gz;
	char *json = NULL;
	size_t n = 0, isize, got = 0;
	uint32_t acc = 0;
	int bits = 0;
	struct libdeflate_decompressor *dc;

	CHECK(b != NULL);
	if (!b)
		return strdup("");
	b += sizeof(tag) - 1;
	e = strstr(b, "</script>");
	gz = malloc((size_t)(e - b));
	for (const char *q = b; q < e && *q != '='; q++) {
		const char *abc =
			"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		const char *at = strchr(abc, *q);

		CHECK(at != NULL);
		acc = acc << 6 | (uint32_t)(at - abc);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			gz[n++] = (unsigned char)(acc >> bits);
		}
	}
	CHECK(n > 18);
	isize = (size_t)gz[n - 4] | (size_t)gz[n - 3] << 8 | (size_t)gz[n - 2] << 16 |
		(size_t)gz[n - 1] << 24;
	json = calloc(isize + 1, 1);
	dc = libdeflate_alloc_decompressor();
	CHECK(libdeflate_gzip_decompress(dc, gz, n, json, isize, &got) == LIBDEFLATE_SUCCESS);
	CHECK_EQ_INT(got, isize);
	libdeflate_free_decompressor(dc);
	free(gz);
	return json;
}

static size_t count_of(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *q = s; (q = strstr(q, what)); q++)
		n++;
	return n;
}

static void test_cells(void)
{
	const uint32_t ms[] = {0, 5, 25, 1030};
	const int which[] = {0, 0, 1, 0};
	struct kp_profile *p = timed("b", ms, which, 4);
	size_t len;
	char *html = page(p, &len), *json = data_of(html);

	/* cell 0: stack 0 twice (0 << 1 | 1, then 2); cell 1 (+1): stack 1
	 * once (1 << 1); cell 51 (+50): stack 0 once */
	CHECK(strstr(json, "\"cells\":[0,1,1,2,1,1,2,50,1,0]") != NULL);
	CHECK(strstr(json, "\"names\":[\"prog\",\"main\",\"a\",\"b\"]") != NULL);
	CHECK(strstr(json, "\"stacks\":[[0,1,2],[0,1,3]]") != NULL);
	CHECK(strstr(json, "\"kinds\":[4,0,0,1]") != NULL);
	CHECK(strstr(json, "\"cell_ms\":20,\"col_ms\":1000,\"last_ms\":1030") != NULL);
	CHECK(strstr(json, "\"origin_ms\":1796518800000") != NULL);
	CHECK(strstr(json, "\"inputs\":[\"run.kprof\"]") != NULL);
	/* no request: no URL the page would fetch */
	CHECK(strstr(html, "http://www.w3.org/2000/svg") != NULL); /* the SVG namespace, a name */
	CHECK(count_of(html, "src=") == 0 && count_of(html, "href=") == 0);
	CHECK(strstr(html, "default-src 'none'") != NULL);
	free(json);
	free(html);
	kp_profile_free(p);
}

static void test_long(void)
{
	const uint32_t ms[] = {0, 1500, 700000};
	const int which[] = {0, 1, 1};
	struct kp_profile *p = timed("b", ms, which, 3);
	size_t len;
	char *html = page(p, &len), *json = data_of(html);

	/* seconds under minutes: cells 0, 1, 700 */
	CHECK(strstr(json, "\"cell_ms\":1000,\"col_ms\":60000") != NULL);
	CHECK(strstr(json, "\"cells\":[0,1,0,1,1,2,699,1,2]") != NULL);
	free(json);
	free(html);
	kp_profile_free(p);
}

static void test_hostile_names(void)
{
	const uint32_t ms[] = {0, 1};
	const int which[] = {0, 1};
	struct kp_profile *p =
		timed("</script><script>alert(1)</script>\"\\\x01\xff;x", ms, which, 2);
	size_t len;
	char *html = page(p, &len), *json = data_of(html);

	/* the data's and the script's ends, and none in a name (the data is
	 * base64, and its JSON escapes '/' too); the name as folded text has
	 * it (a control byte '?', ';' ':'), invalid UTF-8 U+FFFD */
	CHECK_EQ_INT(count_of(html, "</script>"), 2);
	CHECK_EQ_INT(count_of(json, "</script>"), 0);
	CHECK(strstr(json, "<\\/script><script>alert(1)<\\/script>\\\"\\\\\?\xef\xbf\xbd:x") !=
	      NULL);
	free(json);
	free(html);
	kp_profile_free(p);
}

static void test_untimed(void)
{
	struct kp_profile *p = kp_profile_new();
	struct kp_profile_root r = {.comm = kp_profile_intern(p, "c", 1)};
	uint32_t l = kp_profile_named_location(p, "f", 1, KP_FRAME_USER);
	kp_count v = 42;
	size_t len;
	char *html, *json;

	kp_profile_add_value_type(p, "samples", "count", 0);
	kp_profile_add(p, &r, &l, 1, &v);
	html = page(p, &len);
	json = data_of(html);
	CHECK(strstr(json, "\"timed\":false") != NULL);
	CHECK(strstr(json, "\"cells\":[0,1,1,42]") != NULL);
	free(json);
	free(html);
	kp_profile_free(p);
}

static void test_waits(void)
{
	const uint32_t ms[] = {0, 30};
	const int which[] = {0, 1};
	struct kp_profile *p = timed("b", ms, which, 2);
	size_t len;
	char *html, *json;

	/* a wait of stack 0 over 10-59 ms: 10 ms in cell 0, 20 in 1 and 2 */
	CHECK(kp_profile_add_span(p, 0, 59, 50, 1));
	html = page(p, &len);
	json = data_of(html);
	CHECK(strstr(json, "\"cells\":[0,1,1,11,1,2,1,20,2,1,1,1,20]") != NULL);
	free(json);
	free(html);
	kp_profile_free(p);
}

KP_TEST_MAIN(test_cells, test_long, test_hostile_names, test_untimed, test_waits)
