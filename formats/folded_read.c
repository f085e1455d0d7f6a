/* kp_folded_read: folded text into a folded table, line by line, through
 * the table's public API: a line's count is checked against the table's
 * decimals (kp_folded_align) before its frames are interned. */
#include "formats/folded_read.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/count.h"
#include "util/input.h"
#include "util/xalloc.h"

static bool is_space(unsigned char c)
{
	/* Perl's \s, which flamegraph.pl's line pattern uses */
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* A line's counts: AFTER (the only one of a plain line) and, for a
 * differential line, BEFORE. */
struct line_counts {
	kp_count after, before;
	unsigned after_decimals, before_decimals;
	bool differential;
};

static const char *const too_large =
	"count too large to keep exact (more than 38 digits, or more than 19 decimals)";

/* Splits "stack COUNT" the way flamegraph.pl's /^(.*)\s+?(\d+(?:\.\d*)?)$/
 * does: the count is the last token, the stack everything before the one
 * whitespace character in front of it. flamegraph.pl then tries the same
 * pattern on the stack: when it matches, the line is difffolded.pl's
 * "stack BEFORE AFTER" and the stack is what is left. Returns NULL on
 * success or the reason the line is bad. */
static const char *split_line(const char *s, size_t len, size_t *stack_len, struct line_counts *c)
{
	size_t start, bstart;
	const char *why;

	start = kp_folded_count_start(s, len, &why);
	if (!start)
		return why;
	*stack_len = start - 1;
	if (kp_count_parse(s + start, len - start, &c->after, &c->after_decimals) < 0)
		return too_large;
	bstart = kp_folded_count_start(s, *stack_len, &why);
	c->differential = bstart != 0;
	if (!bstart)
		return NULL;
	if (kp_count_parse(s + bstart, *stack_len - bstart, &c->before, &c->before_decimals) < 0)
		return too_large;
	*stack_len = bstart - 1;
	return NULL;
}

static enum kp_frame_kind strip_suffix(const char *name, size_t *len)
{
	static const struct {
		char c;
		enum kp_frame_kind kind;
	} kinds[] = {{'k', KP_FRAME_KERNEL}, {'j', KP_FRAME_JIT}, {'i', KP_FRAME_INLINE}};
	size_t n = *len;

	if (n < 4 || name[n - 4] != '_' || name[n - 3] != '[' || name[n - 1] != ']')
		return KP_FRAME_USER;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (name[n - 2] == kinds[i].c) {
			*len = n - 4;
			return kinds[i].kind;
		}
	}
	return KP_FRAME_USER;
}

/* Describes the first bad line in d. */
static void note_bad_line(struct kp_diag *d, uint64_t *nbad, const char *name, uint64_t lineno,
			  const char *why)
{
	if (!(*nbad)++)
		kp_diag_set(d, -EINVAL, "%s:%llu: %s (expected \"frame;frame;... COUNT\")", name,
			    (unsigned long long)lineno, why);
}

/* Lines of the input, read in chunks into one buffer: a line is returned
 * in place, and is never buffered past KP_FOLDED_MAX_LINE bytes. Each
 * chunk is looked at once for a NUL byte as it comes in. */
#define READ_CHUNK (64u << 10)

struct line_reader {
	FILE *in;
	char *buf;
	size_t cap, start, end; /* buf[start..end): read in, not yet returned */
	size_t scan;		/* buf[start..scan) holds no newline */
	size_t nul;		/* the first NUL in buf[start..end), or SIZE_MAX */
	bool eof;
	int read_errno; /* after LINE_READ_ERROR */
};

enum {
	LINE_EOF = 0,
	LINE_OK = 1,
	LINE_NUL = -1,	      /* the next line holds a NUL byte */
	LINE_LONG = -2,	      /* the next line is longer than KP_FOLDED_MAX_LINE */
	LINE_READ_ERROR = -3, /* reading the next line failed */
	LINE_NOMEM = -4,      /* no memory to buffer the next line */
};

/* Reads more input behind what is buffered. Returns 0 (r->eof set at the
 * end) or LINE_READ_ERROR or LINE_NOMEM. */
static int refill(struct line_reader *r)
{
	size_t n, limit = (size_t)KP_FOLDED_MAX_LINE + 1; /* a line too long, and no newline */

	if (r->start) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->scan -= r->start;
		if (r->nul != SIZE_MAX)
			r->nul -= r->start;
		r->start = 0;
	}
	if (r->end == r->cap) {
		size_t ncap = r->cap ? 2 * r->cap : 2 * READ_CHUNK;
		char *p;

		ncap = ncap < limit ? ncap : limit;
		p = realloc(r->buf, ncap);
		if (!p)
			return LINE_NOMEM;
		r->buf = p;
		r->cap = ncap;
	}
	errno = 0;
	n = fread(r->buf + r->end, 1, r->cap - r->end, r->in);
	if (n == 0) {
		if (ferror(r->in)) {
			r->read_errno = errno ? errno : EIO;
			return LINE_READ_ERROR;
		}
		r->eof = true;
		return 0;
	}
	if (r->nul == SIZE_MAX) {
		const char *z = memchr(r->buf + r->end, 0, n);

		if (z)
			r->nul = (size_t)(z - r->buf);
	}
	r->end += n;
	return 0;
}

/* The next line, without its newline, in *line (valid until the next
 * call) and *len. Returns LINE_OK, LINE_EOF, or why the next line cannot
 * be had (nothing is read after that). */
static int next_line(struct line_reader *r, const char **line, size_t *len)
{
	for (;;) {
		const char *nl =
			r->scan < r->end ? memchr(r->buf + r->scan, '\n', r->end - r->scan) : NULL;
		size_t stop = nl ? (size_t)(nl - r->buf) : r->end;
		int err;

		if (r->nul < stop)
			return LINE_NUL;
		if (stop - r->start > KP_FOLDED_MAX_LINE)
			return LINE_LONG;
		if (nl || (r->eof && r->start < r->end)) {
			*line = r->buf + r->start;
			*len = stop - r->start;
			r->start = r->scan = nl ? stop + 1 : stop;
			return LINE_OK;
		}
		if (r->eof)
			return LINE_EOF;
		r->scan = r->end;
		err = refill(r);
		if (err)
			return err;
	}
}

/* A line the reader could not return (err: LINE_*), described in d as
 * the line lineno of name. Returns the negative errno. */
static int line_failed(const struct line_reader *r, int err, const char *name, uint64_t lineno,
		       const struct kp_folded_read_opts *opts, struct kp_diag *d)
{
	unsigned long long l = (unsigned long long)lineno;
	const char *why = NULL;

	switch (err) {
	case LINE_NUL:
		return kp_diag_set(
			d, -EINVAL,
			"%s:%llu: a NUL byte: binary data, not folded text (\"frame;frame;... "
			"COUNT\" lines)",
			name, l);
	case LINE_LONG:
		if (KP_FOLDED_MAX_LINE % (1u << 20)) /* a cap for tests */
			return kp_diag_set(d, -E2BIG, "%s:%llu: a line longer than %u bytes", name,
					   l, (unsigned)KP_FOLDED_MAX_LINE);
		return kp_diag_set(
			d, -E2BIG,
			"%s:%llu: a line longer than %u MiB: not folded text (a stack is "
			"far shorter)",
			name, l, (unsigned)(KP_FOLDED_MAX_LINE >> 20));
	case LINE_NOMEM:
		return kp_diag_set(d, -ENOMEM, "%s:%llu: out of memory (a line of %zu bytes)", name,
				   l, r->end - r->start);
	default:
		if (opts && opts->read_error)
			why = opts->read_error(opts->read_error_arg);
		return kp_diag_set(d, -EIO, "%s:%llu: read error: %s", name, l,
				   why ? why : strerror(r->read_errno));
	}
}

/* The line before is kept, for its frames' ids, when it has at most this
 * many frames. */
#define PREV_FRAMES (1u << 16)

/* The frames of a line: where each frame's text ends in the line, and its
 * id; of this line and of the last one added (prev, whose frames are
 * reused: folded files are mostly sorted). */
struct frames {
	uint32_t *ends, *ids, *prev_ends, *prev_ids;
	size_t ends_cap, ids_cap, prev_ends_cap, prev_ids_cap;
	char *prev;
	size_t prev_cap, nprev;
};

static void swap_ids(uint32_t **a, size_t *acap, uint32_t **b, size_t *bcap)
{
	uint32_t *p = *a;
	size_t cap = *acap;

	*a = *b;
	*acap = *bcap;
	*b = p;
	*bcap = cap;
}

static void frames_fini(struct frames *fr)
{
	free(fr->ends);
	free(fr->ids);
	free(fr->prev_ends);
	free(fr->prev_ids);
	free(fr->prev);
}

/* Interns the frames of line[0..stack_len) into fr->ids; returns how
 * many, and in *end where the last frame's text ends. Split on ';'
 * keeping empty fields except trailing ones (Perl's split): a stack that
 * is only ';'s has no frame. */
static size_t split_frames(struct kp_folded *f, struct frames *fr, const char *line,
			   size_t stack_len, size_t *end_out)
{
	size_t n = 0, begin, stop, end = stack_len;

	while (end && line[end - 1] == ';')
		end--;
	for (begin = 0; end;) {
		const char *semi = memchr(line + begin, ';', end - begin);
		size_t flen, pbegin = n && n <= fr->nprev ? fr->prev_ends[n - 1] + 1 : 0;
		uint32_t fid;

		stop = semi ? (size_t)(semi - line) : end;
		flen = stop - begin;
		/* a frame equal to the one of the line before at the same depth
		 * has its id */
		if (n < fr->nprev && fr->prev_ends[n] - pbegin == flen &&
		    memcmp(fr->prev + pbegin, line + begin, flen) == 0) {
			fid = fr->prev_ids[n];
		} else {
			enum kp_frame_kind kind = strip_suffix(line + begin, &flen);

			fid = kp_folded_frame_id(f, line + begin, flen, kind);
		}
		/* the caps checked here: a call a frame costs 3% of reading */
		if (n + 1 > fr->ids_cap)
			kp_xgrow(&fr->ids, &fr->ids_cap, n + 1, sizeof(*fr->ids));
		fr->ids[n] = fid;
		if (n < PREV_FRAMES) {
			if (n + 1 > fr->ends_cap)
				kp_xgrow(&fr->ends, &fr->ends_cap, n + 1, sizeof(*fr->ends));
			fr->ends[n] = (uint32_t)stop;
		}
		n++;
		if (!semi)
			break;
		begin = stop + 1;
	}
	*end_out = end;
	return n;
}

/* Keeps the line just added (its n frames, text line[0..end)) for the
 * next one; not one of endless frames: nothing else is 8 bytes a frame
 * for it. */
static void keep_line(struct frames *fr, const char *line, size_t end, size_t n)
{
	fr->nprev = 0;
	if (n > PREV_FRAMES)
		return;
	kp_xgrow(&fr->prev, &fr->prev_cap, end + 1, 1);
	memcpy(fr->prev, line, end);
	swap_ids(&fr->ids, &fr->ids_cap, &fr->prev_ids, &fr->prev_ids_cap);
	swap_ids(&fr->ends, &fr->ends_cap, &fr->prev_ends, &fr->prev_ends_cap);
	fr->nprev = n;
}

/* Whether line[0..len) (its CR dropped) is blank or a '#' comment, such as
 * "# austin: 3.3.0" metadata: skipped. */
static bool skipped_line(const char *line, size_t len)
{
	size_t i;

	for (i = 0; i < len && is_space((unsigned char)line[i]); i++)
		;
	return i == len || line[i] == '#';
}

/* "# countname: UNIT" (kprof collapse --header): UNIT into
 * opts->countname, the first time only. */
static void take_countname(const struct kp_folded_read_opts *opts, const char *line, size_t len)
{
	static const char key[] = "# countname: ";
	size_t k = sizeof(key) - 1, n;

	if (opts->countname_size < 2 || opts->countname[0] || len <= k || memcmp(line, key, k) != 0)
		return;
	for (n = k; n < len; n++)
		if (!isalnum((unsigned char)line[n]) && !(line[n] && strchr("-_./", line[n])))
			return;
	if (len - k >= opts->countname_size)
		return;
	memcpy(opts->countname, line + k, len - k);
	opts->countname[len - k] = '\0';
}

/* The counts of a line, in the table's units, and its stack's length;
 * NULL or why the line is bad. */
static const char *line_counts(struct kp_folded *f, const char *line, size_t len, size_t *stack_len,
			       struct line_counts *lc)
{
	const char *why = split_line(line, len, stack_len, lc);

	if (!why && !(lc->differential ? kp_folded_align_pair(f, &lc->before, lc->before_decimals,
							      &lc->after, lc->after_decimals)
				       : kp_folded_align(f, &lc->after, lc->after_decimals)))
		why = "count too large to keep exact with the decimals of the other lines";
	return why;
}

/* Adds the stack fr->ids[0..n) with the line's counts (already in the
 * table's units); false when a sum would pass 2^128. */
static bool add_line(struct kp_folded *f, const struct frames *fr, size_t n,
		     const struct line_counts *lc)
{
	unsigned decimals = kp_folded_decimals(f);

	if (lc->differential)
		return kp_folded_add_ids_diff(f, fr->ids, n, lc->before, lc->after, decimals);
	return kp_folded_add_ids(f, fr->ids, n, lc->after, decimals);
}

int kp_folded_read(struct kp_folded *f, FILE *in, const char *name,
		   const struct kp_folded_read_opts *opts, uint64_t *bad_lines, struct kp_diag *d)
{
	struct line_reader r = {.in = in, .nul = SIZE_MAX};
	struct frames fr = {0};
	const char *line;
	size_t len;
	uint64_t lineno = 0, nbad = bad_lines ? *bad_lines : 0;
	bool strict = opts && opts->strict;
	int got, err = 0;

	while ((got = next_line(&r, &line, &len)) == LINE_OK) {
		size_t stack_len = 0, n, end;
		struct line_counts lc = {0};
		const char *why;

		lineno++;
		if (len && line[len - 1] == '\r')
			len--;
		if (skipped_line(line, len)) {
			if (opts && opts->countname)
				take_countname(opts, line, len);
			continue;
		}
		why = line_counts(f, line, len, &stack_len, &lc);
		if (!why) {
			n = split_frames(f, &fr, line, stack_len, &end);
			if (add_line(f, &fr, n, &lc)) {
				keep_line(&fr, line, end, n);
				continue;
			}
			why = "count too large: the sum of the counts would pass 2^128";
		}
		note_bad_line(d, &nbad, name, lineno, why);
		if (strict) {
			err = -EINVAL;
			break;
		}
	}
	if (!err && got < 0)
		err = line_failed(&r, got, name, lineno + 1, opts, d);
	if (bad_lines)
		*bad_lines = nbad;
	frames_fini(&fr);
	free(r.buf);
	return err;
}

static int read_file(struct kp_folded *f, const char *path, const struct kp_folded_read_opts *ro,
		     struct kp_folded_skipped *sk, struct kp_diag *d)
{
	struct kp_input in;
	uint64_t before = sk->lines;
	int err = kp_input_open(&in, path, d);

	if (err == -EISDIR)
		kp_diag_set(d, err, "cannot read %s: it is a directory (give folded files)",
			    in.name);
	if (!err)
		err = kp_folded_read(f, in.fp, in.name, ro, &sk->lines, d);
	kp_input_close(&in);
	if (!err && sk->lines > before && !sk->first.msg[0])
		sk->first = *d;
	return err ? -1 : 0;
}

int kp_folded_read_files(struct kp_folded *f, char *const *paths, size_t n,
			 const struct kp_folded_read_opts *ro, struct kp_folded_skipped *sk,
			 struct kp_diag *d)
{
	if (n == 0 && read_file(f, "-", ro, sk, d) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (read_file(f, paths[i], ro, sk, d) < 0)
			return -1;
	if (!kp_folded_nstacks(f) && sk->lines)
		return kp_diag_set(d, -1,
				   "no valid stack in the input: %llu line%s with invalid format; "
				   "the first: %s",
				   (unsigned long long)sk->lines, sk->lines == 1 ? "" : "s",
				   sk->first.msg);
	if (!kp_folded_nstacks(f))
		return kp_diag_set(
			d, -1,
			"no stacks in the input (expected folded lines like \"main;foo;bar 12\")");
	return 0;
}
