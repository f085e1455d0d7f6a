/* Folded text (`kprof flamegraph`): kp_folded_read over the input, then
 * every writer of the table: kp_folded_write, kp_svg_write and
 * kp_top_write. What the table writes it must read back to the same
 * bytes (the counts exact, kinds as _[k]/_[j]/_[i] suffixes), the stack
 * counts must add up to its exact total, and the SVG must be well-formed
 * XML (expat) with the one <script> element the writer puts there, so
 * that no frame name turns into markup.
 *
 * Input: byte 0 picks the reading and drawing (bit 0 --strict, 1 a flame
 * chart: sequence mode, 2 --inverted, 3 --reverse, 4 --hash, 5 --negate,
 * 6 minwidth in percent, 7 --total above the sum), byte 1 the palette (low
 * 4 bits), the background (bits 4-5) and the width (bits 6-7), then the
 * folded text.
 *
 * Text that is not folded text fails the read at its first such line,
 * strict or not, after the lines before it: a NUL byte among the line's
 * first KP_FOLDED_MAX_LINE + 1 bytes (what the reader buffers of a line),
 * else a line longer than KP_FOLDED_MAX_LINE; the message names that line.
 * The target folded_limits is this one with folded.c compiled in with a
 * cap of 40 bytes (tests/fuzz/CMakeLists.txt), so that small inputs reach
 * the cap; there, text the table writes may have longer lines, and reads
 * back refused at the first of them. */
#include <errno.h>
#include <expat.h>
#include <stdbool.h>

#include "formats/folded_read.h"
#include "formats/folded_write.h"
#include "profile/folded.h"
#include "formats/top.h"
#include "flamegraph/svg.h"
#include "fuzz.h"

static const char *const palettes[16] = {"hot",	   "mem",    "io",     "wakeup", "chain", "java",
					 "js",	   "perl",   "red",    "green",	 "blue",  "aqua",
					 "yellow", "purple", "orange", "hot"};
static const char *const backgrounds[4] = {NULL, "yellow", "grey", "#102030"};
static const int widths[4] = {1200, 21, 300, 4000};

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	return 0;
}

/* f written as folded text, all kinds annotated (caller frees). */
static char *write_all(const struct kp_folded *f, size_t *len)
{
	struct fuzz_out out;

	fuzz_out_open(&out);
	FUZZ_CHECK(kp_folded_write(f, out.f, KP_FOLDED_ANNOTATE_ALL) == 0);
	return fuzz_out_close(&out, len);
}

static struct kp_folded *read_text(const char *text, size_t len, bool strict, bool sequence,
				   uint64_t *bad, int *err, struct kp_diag *d)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_folded_read_opts ro = {.strict = strict};
	FILE *in;

	kp_folded_set_sequence(f, sequence);
	*bad = 0;
	*err = 0;
	if (!len)
		return f; /* fmemopen wants a buffer */
	in = fmemopen((void *)text, len, "r");
	if (!in)
		abort();
	*err = kp_folded_read(f, in, "fuzz", &ro, bad, d);
	fclose(in);
	return f;
}

/* The first line of text[0..len) that is not folded text (1-based, 0:
 * none) and the error the reader gives it (-EINVAL: a NUL byte, -E2BIG:
 * too long). Returns the longest line's length. */
static size_t first_refused(const char *text, size_t len, uint64_t *line, int *err)
{
	const char *p = text, *end = text + len;
	size_t longest = 0;
	uint64_t no = 0;

	*line = 0;
	*err = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		size_t seen =
			n < (size_t)KP_FOLDED_MAX_LINE + 1 ? n : (size_t)KP_FOLDED_MAX_LINE + 1;

		no++;
		longest = n > longest ? n : longest;
		if (!*line && memchr(p, 0, seen)) {
			*line = no;
			*err = -EINVAL;
		} else if (!*line && n > KP_FOLDED_MAX_LINE) {
			*line = no;
			*err = -E2BIG;
		}
		p += n + 1;
	}
	return longest;
}

/* The line number d's message names ("fuzz:LINE: ..."), or 0. */
static uint64_t msg_line(const struct kp_diag *d)
{
	unsigned long long l = 0;

	return sscanf(d->msg, "fuzz:%llu:", &l) == 1 ? l : 0;
}

static void check_counts(const struct kp_folded *f)
{
	size_t n = kp_folded_nstacks(f);
	kp_count sum = 0;
	uint32_t *order = kp_folded_sorted(f, KP_FOLDED_ANNOTATE_ALL, false);
	uint8_t *seen = calloc(n + 1, 1);

	for (size_t i = 0; i < n; i++) {
		sum += kp_folded_count(f, i);
		FUZZ_CHECK(order[i] < n && !seen[order[i]]);
		seen[order[i]] = 1;
	}
	FUZZ_CHECK(sum == kp_folded_total_exact(f));
	free(order);
	free(seen);
}

/* Lines in bytewise order, as `LC_ALL=C sort` puts them, each once. */
static void check_sorted(const char *text, size_t len)
{
	const char *prev = NULL, *p = text, *end = text + len;
	size_t prev_len = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n;

		FUZZ_CHECK(nl);
		n = (size_t)(nl - p);
		if (prev) {
			int r = memcmp(prev, p, prev_len < n ? prev_len : n);

			FUZZ_CHECK(r < 0 || (r == 0 && prev_len < n));
		}
		prev = p;
		prev_len = n;
		p = nl + 1;
	}
}

static void on_start(void *arg, const XML_Char *name, const XML_Char **attrs)
{
	size_t *scripts = arg;

	(void)attrs;
	if (strcmp(name, "script") == 0)
		(*scripts)++;
}

static void check_xml(const char *svg, size_t len)
{
	XML_Parser p = XML_ParserCreate(NULL);
	size_t scripts = 0;

	if (!p)
		abort();
	XML_SetUserData(p, &scripts);
	XML_SetStartElementHandler(p, on_start);
	if (XML_Parse(p, svg, (int)len, 1) != XML_STATUS_OK) {
		fprintf(stderr, "SVG not well-formed: %s at line %lu\n",
			XML_ErrorString(XML_GetErrorCode(p)), XML_GetCurrentLineNumber(p));
		abort();
	}
	FUZZ_CHECK(scripts == 1);
	XML_ParserFree(p);
}

static void draw(const struct kp_folded *f, uint8_t a, uint8_t b)
{
	struct kp_svg_opts o;
	struct kp_diag d;
	struct fuzz_out out;
	char *svg;
	size_t len;
	int err;

	kp_svg_opts_init(&o);
	o.flamechart = a & 2;
	o.inverted = a & 4;
	o.reverse = a & 8;
	o.hash = a & 16;
	o.negate = a & 32;
	if (a & 64) {
		o.minwidth_percent = true;
		o.minwidth = 1;
	}
	if (a & 128)
		o.total = kp_folded_total(f) * 3;
	o.colors = palettes[b & 15];
	o.bgcolors = backgrounds[(b >> 4) & 3];
	o.width = widths[b >> 6];
	o.subtitle = a & 1 ? "sub <&> title" : NULL;
	fuzz_out_open(&out);
	err = kp_svg_write(f, &o, out.f, &d);
	svg = fuzz_out_close(&out, &len);
	if (kp_folded_total(f) > 0) {
		FUZZ_CHECK(err == 0);
		check_xml(svg, len);
	} else {
		FUZZ_CHECK(err == -ENODATA);
	}
	free(svg);
	FUZZ_CHECK(kp_top_write(f, devnull, 20, "samples", NULL) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t a = fuzz_byte(&in), b = fuzz_byte(&in);
	struct kp_folded *f, *g;
	struct kp_diag d = {{0}};
	uint64_t bad, bad2, refused_line;
	char *once, *twice;
	size_t len1, len2;
	int err, err2, refused_err;
	kp_count total;

	first_refused((const char *)in.p, in.n, &refused_line, &refused_err);
	f = read_text((const char *)in.p, in.n, a & 1, a & 2, &bad, &err, &d);
	if (err == -EINVAL && (a & 1) && bad == 1) {
		/* strict: a bad line, before any line refused */
		FUZZ_CHECK(!refused_line || msg_line(&d) < refused_line);
	} else if (refused_line) {
		FUZZ_CHECK(err == refused_err && msg_line(&d) == refused_line);
	} else {
		FUZZ_CHECK(err == 0);
	}
	check_counts(f);
	draw(f, a, b);

	/* the round trip: written, read back, written again: the same bytes
	 * (where lines may be longer than the cap, the first of them is
	 * refused: folded_limits) */
	once = write_all(f, &len1);
	check_sorted(once, len1);
	g = read_text(once, len1, true, false, &bad2, &err2, &d);
	if (first_refused(once, len1, &refused_line, &refused_err) > KP_FOLDED_MAX_LINE) {
		FUZZ_CHECK(err2 == -E2BIG && refused_err == -E2BIG && msg_line(&d) == refused_line);
		free(once);
		kp_folded_free(g);
		kp_folded_free(f);
		return 0;
	}
	FUZZ_CHECK(err2 == 0 && bad2 == 0);
	twice = write_all(g, &len2);
	FUZZ_CHECK(len1 == len2 && memcmp(once, twice, len1) == 0);
	/* the same total, maybe in fewer decimals (trailing zeros go) */
	total = kp_folded_total_exact(g);
	FUZZ_CHECK(kp_folded_decimals(g) <= kp_folded_decimals(f));
	FUZZ_CHECK(kp_count_shift(&total, kp_folded_decimals(f) - kp_folded_decimals(g)));
	FUZZ_CHECK(total == kp_folded_total_exact(f));
	free(once);
	free(twice);
	kp_folded_free(g);
	kp_folded_free(f);
	return 0;
}
