/* The folded table: reading (flamegraph.pl's line rules), merging, kinds,
 * sanitizing, and the sorted writer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "formats/folded_read.h"
#include "formats/folded_write.h"
#include "profile/folded.h"
#include "flamegraph/svg.h"
#include "kp_test.h"

/* Reads text (len bytes, may hold NULs) into f; strict: fail at a bad line. */
static int read_text(struct kp_folded *f, const char *text, size_t len, bool strict, uint64_t *bad,
		     struct kp_diag *d)
{
	struct kp_folded_read_opts o = {.strict = strict};
	FILE *in = fmemopen((void *)text, len, "r");
	int err;

	if (!in)
		return -errno;
	err = kp_folded_read(f, in, "in.folded", &o, bad, d);
	fclose(in);
	return err;
}

/* Writes f to a new string; the caller frees. */
static char *write_text(const struct kp_folded *f, unsigned flags)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (!out)
		return NULL;
	CHECK_EQ_INT(kp_folded_write(f, out, flags), 0);
	fclose(out);
	return buf;
}

/* Reads text and returns what the writer prints for it. */
static char *round_trip(const char *text, unsigned flags)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_diag d = {{0}};
	char *out;

	CHECK_EQ_INT(read_text(f, text, strlen(text), true, NULL, &d), 0);
	out = write_text(f, flags);
	kp_folded_free(f);
	return out;
}

static void test_round_trip_sorted_merged(void)
{
	char *s = round_trip("main;work;leaf 3\nmain;work 2\nmain;work;leaf 4\nidle 1\n", 0);

	CHECK_EQ_STR(s, "idle 1\nmain;work 2\nmain;work;leaf 7\n");
	free(s);
}

static void test_sort_is_bytewise_on_lines(void)
{
	/* LC_ALL=C sort of the lines: ' ' < '-' < ';' and the count counts */
	char *s = round_trip("a;b;c 1\na;b-x 1\na;b 9\na 10\nA 1\n", 0);

	CHECK_EQ_STR(s, "A 1\na 10\na;b 9\na;b-x 1\na;b;c 1\n");
	free(s);
}

static void test_crlf_blank_lines_and_tabs(void)
{
	char *s = round_trip("\r\n  \na;b 1\r\n\n\t\na;b\t2\r\nc 3", 0);

	CHECK_EQ_STR(s, "a;b 3\nc 3\n");
	free(s);
}

static void test_decimal_counts(void)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_diag d = {{0}};
	const char *text = "a 1.5\na 2.25\nb 2.\nc 0.1\n";
	char *s;

	CHECK_EQ_INT(read_text(f, text, strlen(text), false, NULL, &d), 0);
	CHECK(kp_folded_total(f) == 5.85);
	s = write_text(f, 0);
	CHECK_EQ_STR(s, "a 3.75\nb 2\nc 0.1\n");
	free(s);
	kp_folded_free(f);
}

/* Counts stay exact integers end to end: past 2^53 (where doubles drift)
 * and past 2^64 (what kprof collapse writes for big period sums). */
static void test_exact_counts(void)
{
	char *s = round_trip("a;b 9007199254740993\na;b 1\nc 36893488147419103230\n", 0);

	CHECK_EQ_STR(s, "a;b 9007199254740994\nc 36893488147419103230\n");
	free(s);
	s = round_trip("x 9007199254740992\ny 9007199254740992\n", 0);
	CHECK_EQ_STR(s, "x 9007199254740992\ny 9007199254740992\n");
	free(s);
	/* decimals are exact too: 0.1 + 0.2 is 0.3, not 0.30000000000000004 */
	s = round_trip("a 0.1\na 0.2\nb 1\nc 0.125\n", 0);
	CHECK_EQ_STR(s, "a 0.3\nb 1\nc 0.125\n");
	free(s);
	/* the 2^128 limit, and more decimals than the range leaves room for */
	{
		struct kp_folded *f = kp_folded_new();
		struct kp_diag d = {{0}};
		uint64_t bad = 0;
		const char *text = "a 340282366920938463463374607431768211455\n"
				   "b 0.5\nc 1\n";

		CHECK_EQ_INT(read_text(f, text, strlen(text), false, &bad, &d), 0);
		/* b needs a decimal a cannot take; c would pass 2^128 */
		CHECK_EQ_INT(bad, 2);
		CHECK(strstr(d.msg, "in.folded:2: count too large") != NULL);
		CHECK_EQ_INT(kp_folded_nstacks(f), 1);
		CHECK(kp_folded_total_exact(f) == ~(kp_count)0);
		kp_folded_free(f);
	}
}

/* What kprof collapse writes, kprof flamegraph reads; Perl's exponent
 * form (a sum past 2^64) cannot be exact and is named as such. */
static void test_exponent_counts_refused(void)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_diag d = {{0}};
	uint64_t bad = 0;
	const char *text = "cc;f 1.00000036893488e+26\ncc;g 3\n";

	CHECK_EQ_INT(read_text(f, text, strlen(text), false, &bad, &d), 0);
	CHECK_EQ_INT(bad, 1);
	CHECK(strstr(d.msg, "in.folded:1: count in exponent notation") != NULL);
	CHECK_EQ_INT(kp_folded_nstacks(f), 1);
	kp_folded_free(f);
}

/* '#' lines are comments (austin writes "# austin: 3.3.0" metadata) and
 * are not bad lines; an empty stack as the very first line is fine. */
static void test_comments_and_empty_first_stack(void)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_diag d = {{0}};
	uint64_t bad = 0;
	const char *text = "# austin: 3.3.0\n  # interval: 100\nP1;T1;main 5\n";
	size_t n;

	CHECK_EQ_INT(read_text(f, text, strlen(text), true, &bad, &d), 0);
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(kp_folded_nstacks(f), 1);
	kp_folded_free(f);
	/* " 138": no frames, all of it the root's (was a NULL hashed: UB) */
	f = kp_folded_new();
	CHECK_EQ_INT(read_text(f, " 138\n", 5, true, &bad, &d), 0);
	CHECK_EQ_INT(kp_folded_nstacks(f), 1);
	kp_folded_stack_ids(f, 0, &n, NULL);
	CHECK_EQ_INT(n, 0);
	CHECK(kp_folded_total_exact(f) == 138);
	/* the (empty) frames of a table of empty stacks are a pointer, not
	 * NULL + 0 (UB that clang's UBSan reports in the SVG writer; found
	 * by tests/fuzz/fuzz_folded) */
	CHECK(kp_folded_stack_ids(f, 0, &n, NULL) != NULL);
	CHECK(kp_folded_stack(f, 0, &n, NULL) != NULL);
	{
		struct kp_svg_opts o;
		struct kp_diag sd;
		FILE *out = fopen("/dev/null", "w");

		kp_svg_opts_init(&o);
		CHECK(out && kp_svg_write(f, &o, out, &sd) == 0);
		if (out)
			fclose(out);
	}
	kp_folded_free(f);
}

static void test_suffix_kinds(void)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_diag d = {{0}};
	const char *text = "java;x_[k];y_[j];z_[i];w_[w] 1\njava;x 2\n";
	const struct kp_frame *fr;
	size_t n;
	double count;
	char *s;

	CHECK_EQ_INT(read_text(f, text, strlen(text), false, NULL, &d), 0);
	CHECK_EQ_INT(kp_folded_nstacks(f), 2);
	fr = kp_folded_stack(f, 0, &n, &count);
	CHECK_EQ_INT(n, 5);
	CHECK_EQ_STR(fr[1].name, "x");
	CHECK_EQ_INT(fr[1].kind, KP_FRAME_KERNEL);
	CHECK_EQ_STR(fr[2].name, "y");
	CHECK_EQ_INT(fr[2].kind, KP_FRAME_JIT);
	CHECK_EQ_STR(fr[3].name, "z");
	CHECK_EQ_INT(fr[3].kind, KP_FRAME_INLINE);
	/* _[w] is not a kind: it stays in the name */
	CHECK_EQ_STR(fr[4].name, "w_[w]");
	CHECK_EQ_INT(fr[4].kind, KP_FRAME_USER);
	/* x_[k] and x are different frames */
	fr = kp_folded_stack(f, 1, &n, &count);
	CHECK_EQ_INT(fr[1].kind, KP_FRAME_USER);
	s = write_text(f, KP_FOLDED_ANNOTATE_ALL);
	CHECK_EQ_STR(s, "java;x 2\njava;x_[k];y_[j];z_[i];w_[w] 1\n");
	free(s);
	s = write_text(f, KP_FOLDED_ANNOTATE_KERNEL);
	CHECK_EQ_STR(s, "java;x 2\njava;x_[k];y;z;w_[w] 1\n");
	free(s);
	s = write_text(f, 0);
	CHECK_EQ_STR(s, "java;x 2\njava;x;y;z;w_[w] 1\n");
	free(s);
	kp_folded_free(f);
}

static void test_add_sanitizes_and_merges(void)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_frame st[] = {
		{"comm", KP_FRAME_ROOT}, {"ns;f\tg\x01", KP_FRAME_USER}, {"k", KP_FRAME_KERNEL}};
	struct kp_frame st2[] = {{"comm", KP_FRAME_ROOT}, {"ns:f?g?", KP_FRAME_USER}};
	size_t n;
	double count;
	const uint32_t *ids;
	char *s;

	kp_folded_add(f, st, 3, 2);
	kp_folded_add(f, st, 3, 3);
	kp_folded_add(f, st2, 2, 1);
	CHECK_EQ_INT(kp_folded_nstacks(f), 2);
	ids = kp_folded_stack_ids(f, 0, &n, &count);
	CHECK_EQ_INT(n, 3);
	CHECK(count == 5);
	CHECK_EQ_STR(kp_folded_frame_name(f, ids[1], NULL), "ns:f?g?");
	CHECK_EQ_INT(kp_folded_frame_kind(ids[2]), KP_FRAME_KERNEL);
	/* the same sanitized name is the same frame */
	CHECK_EQ_INT(kp_folded_stack_ids(f, 1, NULL, NULL)[1], ids[1]);
	CHECK(kp_folded_total(f) == 6);
	s = write_text(f, KP_FOLDED_ANNOTATE_ALL);
	CHECK_EQ_STR(s, "comm;ns:f?g? 1\ncomm;ns:f?g?;k_[k] 5\n");
	free(s);
	kp_folded_free(f);
}

static void test_empty_frames_follow_perl_split(void)
{
	/* a;;b keeps the empty frame, trailing empty frames go, " 5" is an
	 * empty stack (its count belongs to the root) */
	struct kp_folded *f = kp_folded_new();
	struct kp_diag d = {{0}};
	const char *text = "a;;b 1\na;b;; 2\n 5\n";
	size_t n;

	CHECK_EQ_INT(read_text(f, text, strlen(text), false, NULL, &d), 0);
	CHECK_EQ_INT(kp_folded_nstacks(f), 3);
	kp_folded_stack_ids(f, 0, &n, NULL);
	CHECK_EQ_INT(n, 3);
	kp_folded_stack_ids(f, 1, &n, NULL);
	CHECK_EQ_INT(n, 2);
	kp_folded_stack_ids(f, 2, &n, NULL);
	CHECK_EQ_INT(n, 0);
	CHECK(kp_folded_total(f) == 8);
	kp_folded_free(f);
}

/* A leaf whose name ends in a blank and a number is written with a ';'
 * after it, so what the writer prints reads back as the same stack, not
 * as a line with two counts (found by tests/fuzz/fuzz_folded). */
static void test_leaf_like_a_count(void)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_frame fr[] = {{"comm", KP_FRAME_ROOT}, {"JIT code 12", KP_FRAME_USER}};
	struct kp_frame k[] = {{"comm", KP_FRAME_ROOT}, {"irq 9", KP_FRAME_KERNEL}};
	char *s = round_trip("81 3;;; 2\n81 3.5 x 1\n", 0), *again;

	CHECK_EQ_STR(s, "81 3.5 x 1\n81 3; 2\n");
	again = round_trip(s, 0);
	CHECK_EQ_STR(again, s);
	free(again);
	free(s);
	CHECK(kp_folded_add(f, fr, 2, 5));
	CHECK(kp_folded_add(f, k, 2, 1));
	s = write_text(f, KP_FOLDED_ANNOTATE_ALL);
	/* a kind suffix ends the name already */
	CHECK_EQ_STR(s, "comm;JIT code 12; 5\ncomm;irq 9_[k] 1\n");
	free(s);
	s = write_text(f, 0);
	CHECK_EQ_STR(s, "comm;JIT code 12; 5\ncomm;irq 9; 1\n");
	free(s);
	kp_folded_free(f);
}

static void test_nul_and_long_line(void)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_diag d = {{0}};
	size_t big = 10 * 1024 * 1024, n;
	char *line = malloc(big + 8);
	const uint32_t *ids;

	/* a 10 MB frame is just a long name */
	memset(line, 'x', big);
	memcpy(line + big, " 7\n", 4);
	CHECK_EQ_INT(read_text(f, line, big + 3, false, NULL, &d), 0);
	CHECK_EQ_INT(kp_folded_nstacks(f), 1);
	ids = kp_folded_stack_ids(f, 0, &n, NULL);
	CHECK_EQ_INT(n, 1);
	CHECK_EQ_INT(strlen(kp_folded_frame_name(f, ids[0], NULL)), big);
	/* and without a count it is one bad line, not a crash */
	line[big] = '\n';
	CHECK_EQ_INT(read_text(f, line, big + 1, true, NULL, &d), -EINVAL);
	CHECK(strstr(d.msg, "in.folded:1: no count") != NULL);
	free(line);
	kp_folded_free(f);
}

/* A NUL byte is binary data, never folded text: the read fails at its
 * line, strict or not, after the lines before it. */
static void test_nul_refused(void)
{
	static const char text[] = "a;b 1\nc 2\nd\0e 3\nf 4\n";
	struct kp_folded *f = kp_folded_new();
	struct kp_diag d = {{0}};
	uint64_t bad = 0;
	char *zeros = calloc(1, 1 << 20);

	CHECK_EQ_INT(read_text(f, "a\0b;c 1\n", 8, false, NULL, &d), -EINVAL);
	CHECK(strstr(d.msg, "in.folded:1: a NUL byte: binary data") != NULL);
	CHECK_EQ_INT(kp_folded_nstacks(f), 0);
	CHECK_EQ_INT(read_text(f, text, sizeof(text) - 1, false, &bad, &d), -EINVAL);
	CHECK(strstr(d.msg, "in.folded:3: a NUL byte") != NULL);
	CHECK_EQ_INT(kp_folded_nstacks(f), 2);
	CHECK_EQ_INT(bad, 0);
	kp_folded_free(f);
	/* strict: a bad line before it fails first */
	f = kp_folded_new();
	CHECK_EQ_INT(read_text(f, "x\ny\0 1\n", 7, true, NULL, &d), -EINVAL);
	CHECK(strstr(d.msg, "in.folded:1: no count") != NULL);
	/* not strict: the bad line is counted, the NUL fails the read */
	bad = 0;
	CHECK_EQ_INT(read_text(f, "x\ny\0 1\n", 7, false, &bad, &d), -EINVAL);
	CHECK(strstr(d.msg, "in.folded:2: a NUL byte") != NULL);
	CHECK_EQ_INT(bad, 1);
	/* a megabyte of zeros, no newline: refused at once, line 1 */
	CHECK_EQ_INT(read_text(f, zeros, 1 << 20, false, NULL, &d), -EINVAL);
	CHECK(strstr(d.msg, "in.folded:1: a NUL byte") != NULL);
	/* a NUL far into a long line, and past the first chunks */
	memset(zeros, 'a', (1 << 20) - 1);
	memcpy(zeros, "ok 1\n", 5);
	CHECK_EQ_INT(read_text(f, zeros, 1 << 20, false, NULL, &d), -EINVAL);
	CHECK(strstr(d.msg, "in.folded:2: a NUL byte") != NULL);
	free(zeros);
	kp_folded_free(f);
}

/* A line of KP_FOLDED_MAX_LINE bytes is read; one byte more is refused,
 * naming its line, with or without a newline after it, whatever the
 * line before it. */
static void test_line_cap(void)
{
	size_t max = KP_FOLDED_MAX_LINE, n;
	char *text = malloc(max + 64);
	struct kp_folded *f;
	struct kp_diag d = {{0}};
	const uint32_t *ids;
	size_t head = 7; /* the first line, "main 1\n" */

	memcpy(text, "main 1\n", head);
	memset(text + head, 'y', max - 2);
	memcpy(text + head + max - 2, " 5\nz 1\n", 7);
	f = kp_folded_new();
	CHECK_EQ_INT(read_text(f, text, head + max + 5, true, NULL, &d), 0);
	CHECK_EQ_INT(kp_folded_nstacks(f), 3);
	ids = kp_folded_stack_ids(f, 1, &n, NULL);
	CHECK_EQ_INT(n, 1);
	CHECK_EQ_INT(strlen(kp_folded_frame_name(f, ids[0], NULL)), max - 2);
	kp_folded_free(f);
	/* with a CR before the newline it is one byte too long */
	memcpy(text + head + max - 2, " 5\r\nz 1\n", 8);
	f = kp_folded_new();
	CHECK_EQ_INT(read_text(f, text, head + max + 6, false, NULL, &d), -E2BIG);
	CHECK(strstr(d.msg, "in.folded:2: a line longer than 16 MiB") != NULL);
	CHECK_EQ_INT(kp_folded_nstacks(f), 1);
	kp_folded_free(f);
	/* one byte more, and no newline at the end */
	memset(text + head, 'y', max + 1);
	f = kp_folded_new();
	CHECK_EQ_INT(read_text(f, text, head + max + 1, false, NULL, &d), -E2BIG);
	CHECK(strstr(d.msg, "in.folded:2: a line longer") != NULL);
	kp_folded_free(f);
	free(text);
}

/* Lines of every length across the reader's chunks (64 KiB) read as
 * lines do one by one: none lost, split or joined at a chunk's end. */
static void test_lines_across_chunks(void)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_diag d = {{0}};
	size_t cap = 4 << 20, len = 0, lines = 0, n;
	char *text = malloc(cap);

	while (len < cap - 4096) {
		size_t k = 1 + lines * 7 % 3000;

		len += (size_t)sprintf(text + len, "r;f%zu;", lines);
		memset(text + len, 'a' + lines % 26, k);
		len += k;
		len += (size_t)sprintf(text + len, " %zu%s", lines + 1, lines % 5 ? "\n" : "\r\n");
		lines++;
	}
	CHECK_EQ_INT(read_text(f, text, len - 1, true, NULL, &d), 0); /* no newline at the end */
	CHECK_EQ_INT(kp_folded_nstacks(f), lines);
	CHECK_EQ_INT(kp_folded_total_exact(f), (kp_count)lines * (lines + 1) / 2);
	for (size_t i = 0; i < lines; i += 97) {
		const uint32_t *ids = kp_folded_stack_ids(f, i, &n, NULL);
		size_t flen;
		char name[32];

		CHECK_EQ_INT(n, 3);
		snprintf(name, sizeof(name), "f%zu", i);
		CHECK_EQ_STR(kp_folded_frame_name(f, ids[1], NULL), name);
		kp_folded_frame_name(f, ids[2], &flen);
		CHECK_EQ_INT(flen, 1 + i * 7 % 3000);
	}
	free(text);
	kp_folded_free(f);
}

/* A line of many frames, most of them empty (kept, as Perl's split keeps
 * them), and the lines after it: its frames are not taken as the line
 * before's for the next one. */
static void test_many_frames(void)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_diag d = {{0}};
	size_t nsemi = 300000, len = 0, n;
	char *text = malloc(nsemi + 64);
	const uint32_t *ids;

	memset(text, ';', nsemi);
	len = nsemi;
	len += (size_t)sprintf(text + len, "a 1\n;b 2\n;b;c 3\n");
	CHECK_EQ_INT(read_text(f, text, len, true, NULL, &d), 0);
	CHECK_EQ_INT(kp_folded_nstacks(f), 3);
	ids = kp_folded_stack_ids(f, 0, &n, NULL);
	CHECK_EQ_INT(n, nsemi + 1);
	CHECK_EQ_STR(kp_folded_frame_name(f, ids[0], NULL), "");
	CHECK_EQ_STR(kp_folded_frame_name(f, ids[nsemi], NULL), "a");
	ids = kp_folded_stack_ids(f, 2, &n, NULL);
	CHECK_EQ_INT(n, 3);
	CHECK_EQ_STR(kp_folded_frame_name(f, ids[1], NULL), "b");
	CHECK_EQ_STR(kp_folded_frame_name(f, ids[2], NULL), "c");
	free(text);
	kp_folded_free(f);
}

/* A stream that gives the first bytes of a text, then fails. */
struct failing {
	const char *text;
	size_t len, pos;
};

static ssize_t failing_read(void *cookie, char *buf, size_t size)
{
	struct failing *s = cookie;
	size_t k = s->len - s->pos < size ? s->len - s->pos : size;

	if (!k) {
		errno = EIO;
		return -1;
	}
	memcpy(buf, s->text + s->pos, k);
	s->pos += k;
	return (ssize_t)k;
}

static const char *failing_why(const void *arg)
{
	return arg;
}

/* An error reading is an error, naming the line being read, never the
 * end of the input; the reader behind the stream may say why. */
static void test_read_error(void)
{
	struct failing s = {"a;b 1\nc 2\nd", 11, 0};
	cookie_io_functions_t io = {.read = failing_read};
	struct kp_folded_read_opts o = {0};
	struct kp_folded *f = kp_folded_new();
	struct kp_diag d = {{0}};
	FILE *in = fopencookie(&s, "r", io);

	CHECK_EQ_INT(kp_folded_read(f, in, "in.folded", &o, NULL, &d), -EIO);
	CHECK_EQ_STR(d.msg, "in.folded:3: read error: Input/output error");
	CHECK_EQ_INT(kp_folded_nstacks(f), 2);
	fclose(in);
	s.pos = 0;
	o.read_error = failing_why;
	o.read_error_arg = "truncated (the compressed data ends inside a frame)";
	in = fopencookie(&s, "r", io);
	CHECK_EQ_INT(kp_folded_read(f, in, "in.zst", &o, NULL, &d), -EIO);
	CHECK_EQ_STR(d.msg,
		     "in.zst:3: read error: truncated (the compressed data ends inside a frame)");
	fclose(in);
	kp_folded_free(f);
}

static void test_bad_lines(void)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_diag d = {{0}};
	uint64_t bad = 0;
	const char *text =
		"a;b 1\n\nno count here\na -5\na 1000000000000000000000000000000000000000\n"
		"a 1.2.3\na 1 \n.5\nc 2\n";

	CHECK_EQ_INT(read_text(f, text, strlen(text), true, &bad, &d), -EINVAL);
	CHECK_EQ_STR(d.msg, "in.folded:3: no count at the end of the line (expected "
			    "\"frame;frame;... COUNT\")");
	CHECK_EQ_INT(bad, 1);

	kp_folded_free(f);
	f = kp_folded_new();
	bad = 0;
	memset(&d, 0, sizeof(d));
	CHECK_EQ_INT(read_text(f, text, strlen(text), false, &bad, &d), 0);
	CHECK_EQ_INT(bad, 6);
	/* the first skipped line is described */
	CHECK(strncmp(d.msg, "in.folded:3:", 12) == 0);
	CHECK_EQ_INT(kp_folded_nstacks(f), 2);
	CHECK(kp_folded_total(f) == 3);
	kp_folded_free(f);

	f = kp_folded_new();
	CHECK_EQ_INT(read_text(f, "x -5\n", 5, true, NULL, &d), -EINVAL);
	CHECK(strstr(d.msg, "in.folded:1: negative count") != NULL);
	CHECK_EQ_INT(
		read_text(f, "x 1000000000000000000000000000000000000000\n", 43, true, NULL, &d),
		-EINVAL);
	CHECK(strstr(d.msg, "count too large") != NULL);
	CHECK_EQ_INT(read_text(f, "x 0.123456789012345678901\n", 26, true, NULL, &d), -EINVAL);
	CHECK(strstr(d.msg, "count too large") != NULL);
	/* a differential line's BEFORE must be exact too */
	text = "x 1000000000000000000000000000000000000000 1\n";
	CHECK_EQ_INT(read_text(f, text, strlen(text), true, NULL, &d), -EINVAL);
	CHECK(strstr(d.msg, "count too large") != NULL);
	/* a name may still end in digits when no space comes before them */
	CHECK_EQ_INT(read_text(f, "x;y12 3\nx;[unknown <0>] 1\n", 26, false, NULL, &d), 0);
	kp_folded_free(f);
}

/* difffolded.pl's "stack BEFORE AFTER": AFTER is the count, BEFORE kept
 * beside it, exact, merged, with the decimals of either. */
static void test_differential_lines(void)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_diag d = {{0}};
	const char *text = "main;a 10 12\nmain;b 3\nmain;a 1 0\nmain;c 0.5 2\nx12 7\n5 6\n";
	char *out;
	bool has;

	CHECK(!kp_folded_differential(f));
	CHECK_EQ_INT(read_text(f, text, strlen(text), true, NULL, &d), 0);
	CHECK(kp_folded_differential(f));
	CHECK_EQ_INT(kp_folded_nstacks(f), 5);
	/* the table has one decimal now: counts in tenths */
	CHECK_EQ_INT(kp_folded_decimals(f), 1);
	CHECK_EQ_INT(kp_folded_count(f, 0), 120);
	CHECK_EQ_INT(kp_folded_before(f, 0, &has), 110);
	CHECK(has);
	CHECK_EQ_INT(kp_folded_before(f, 1, &has), 0);
	CHECK(!has);
	CHECK_EQ_INT(kp_folded_before(f, 2, &has), 5);
	CHECK(has);
	/* "x12 7": the name ends in digits but no space: one count; "5 6":
	 * nothing before the first count, so it is the stack "5" */
	CHECK_EQ_INT(kp_folded_before(f, 3, &has), 0);
	CHECK(!has);
	CHECK_EQ_INT(kp_folded_before(f, 4, &has), 0);
	CHECK(!has);
	CHECK_EQ_INT(kp_folded_total_exact(f), 120 + 30 + 20 + 70 + 60);
	CHECK_EQ_INT(kp_folded_total_before_exact(f), 110 + 5);
	out = write_text(f, 0);
	CHECK_EQ_STR(out, "5 6\nmain;a 11 12\nmain;b 3\nmain;c 0.5 2\nx12 7\n");
	free(out);
	kp_folded_free(f);

	/* added through the API, with merging and in a sequence */
	f = kp_folded_new();
	struct kp_frame st[] = {{"p", KP_FRAME_USER}, {"q", KP_FRAME_KERNEL}};
	CHECK(kp_folded_add(f, st, 2, 4));
	CHECK(kp_folded_add_diff(f, st, 2, 7, 1, 0));
	CHECK(kp_folded_add_diff(f, st, 1, 2, 0, 0));
	CHECK_EQ_INT(kp_folded_count(f, 0), 5);
	CHECK_EQ_INT(kp_folded_before(f, 0, &has), 7);
	CHECK(has);
	CHECK(!kp_folded_add_diff(f, st, 1, ~(kp_count)0, 0, 0));
	CHECK_EQ_INT(kp_folded_total_before_exact(f), 9);
	out = write_text(f, KP_FOLDED_ANNOTATE_ALL);
	CHECK_EQ_STR(out, "p 2 0\np;q_[k] 7 5\n");
	free(out);
	kp_folded_free(f);
}

static void test_sequence_mode(void)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_diag d = {{0}};
	const char *text = "a 1\na 1\nb 1\na 1\n";
	double count;
	char *s;

	kp_folded_set_sequence(f, true);
	CHECK_EQ_INT(read_text(f, text, strlen(text), false, NULL, &d), 0);
	/* adjacent repeats merge, a later repeat is a new entry (time order) */
	CHECK_EQ_INT(kp_folded_nstacks(f), 3);
	kp_folded_stack_ids(f, 0, NULL, &count);
	CHECK(count == 2);
	s = write_text(f, 0);
	CHECK_EQ_STR(s, "a 3\nb 1\n");
	free(s);
	kp_folded_free(f);
}

static void test_sorted_reverse(void)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_diag d = {{0}};
	const char *text = "r;m;a 1\nr;a;z 1\nq;b 1\n";
	uint32_t *order;

	CHECK_EQ_INT(read_text(f, text, strlen(text), false, NULL, &d), 0);
	order = kp_folded_sorted(f, 0, false);
	CHECK_EQ_INT(order[0], 2);
	CHECK_EQ_INT(order[1], 1);
	CHECK_EQ_INT(order[2], 0);
	free(order);
	/* leaf first: a;m;r < b;q < z;a;r */
	order = kp_folded_sorted(f, 0, true);
	CHECK_EQ_INT(order[0], 0);
	CHECK_EQ_INT(order[1], 2);
	CHECK_EQ_INT(order[2], 1);
	free(order);
	kp_folded_free(f);
}

KP_TEST_MAIN(test_round_trip_sorted_merged, test_sort_is_bytewise_on_lines,
	     test_crlf_blank_lines_and_tabs, test_decimal_counts, test_exact_counts,
	     test_exponent_counts_refused, test_comments_and_empty_first_stack, test_suffix_kinds,
	     test_add_sanitizes_and_merges, test_empty_frames_follow_perl_split,
	     test_nul_and_long_line, test_nul_refused, test_line_cap, test_lines_across_chunks,
	     test_many_frames, test_read_error, test_bad_lines, test_differential_lines,
	     test_sequence_mode, test_sorted_reverse, test_leaf_like_a_count)
