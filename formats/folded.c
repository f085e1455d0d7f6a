/* kp_folded: stacks of interned frame ids, interned as sequences in a
 * kp_seqtab. A frame id is name_id * 8 +
 * kind, so (name, kind) identity is one integer compare. */
#include "formats/folded.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/seqtab.h"
#include "util/strtab.h"
#include "util/xalloc.h"

/* A stack is a sequence of frame ids in f->seq; its count is f->counts[i]. */
#define SEQ(f, i) (&(f)->seq.seqs[i])

struct kp_folded {
	struct kp_strtab *names;
	struct kp_seqtab seq; /* the stacks' frame-id sequences */
	kp_count *counts;     /* by stack index, in units of 10^-decimals */
	size_t counts_cap;
	kp_count total;
	/* differential tables: BEFORE by stack index (NULL until the first
	 * one), whether the stack has one, and their sum */
	kp_count *before;
	uint8_t *has_before;
	kp_count total_before;
	unsigned decimals; /* of every count: the most any input line had */
	bool sequence;
	char *scratch; /* sanitized name being added */
	size_t scratch_cap;
	uint32_t *idbuf; /* ids of the stack being added */
	size_t idbuf_cap;
	/* kp_folded_stack's view, built on first use, dropped on change */
	struct kp_frame *view;
	size_t view_cap;
	bool view_valid;
};

struct kp_folded *kp_folded_new(void)
{
	struct kp_folded *f = kp_xcalloc(1, sizeof(*f));

	f->names = kp_strtab_new();
	kp_seqtab_init(&f->seq);
	return f;
}

void kp_folded_free(struct kp_folded *f)
{
	if (!f)
		return;
	kp_strtab_free(f->names);
	kp_seqtab_fini(&f->seq);
	free(f->counts);
	free(f->before);
	free(f->has_before);
	free(f->scratch);
	free(f->idbuf);
	free(f->view);
	free(f);
}

void kp_folded_set_sequence(struct kp_folded *f, bool on)
{
	f->sequence = on;
}

static bool needs_sanitizing(unsigned char c)
{
	return c == ';' || c < 0x20 || c == 0x7f;
}

static uint32_t intern_name(struct kp_folded *f, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (needs_sanitizing((unsigned char)name[i]))
			break;
	if (i == len)
		return kp_strtab_intern(f->names, name, len);
	/* ';' would split the frame when read back; control characters
	 * would break lines and XML */
	kp_xgrow(&f->scratch, &f->scratch_cap, len + 1, 1);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		f->scratch[i] = c == ';' ? ':' : needs_sanitizing(c) ? '?' : (char)c;
	}
	return kp_strtab_intern(f->names, f->scratch, len);
}

/* The differential arrays, from the first BEFORE count on: as long as
 * counts, zero (no BEFORE) for the stacks already there. */
static void make_differential(struct kp_folded *f)
{
	if (f->before)
		return;
	f->before = kp_xcalloc(f->counts_cap ? f->counts_cap : 1, sizeof(*f->before));
	f->has_before = kp_xcalloc(f->counts_cap ? f->counts_cap : 1, 1);
}

/* Adds count (in the table's units) to the stack ids[0..n), and *before to
 * its BEFORE when before is not NULL. Returns false, changing nothing,
 * when a total would no longer fit. */
static bool add_ids(struct kp_folded *f, const uint32_t *ids, size_t n, kp_count count,
		    const kp_count *before)
{
	size_t i, nstacks = kp_seqtab_count(&f->seq), cap;
	bool added = true;

	/* every stack's count is at most the total: checking it covers both */
	if (before && f->total_before + *before < f->total_before)
		return false;
	if (!kp_count_add(&f->total, count))
		return false;
	if (before) {
		f->total_before += *before;
		make_differential(f);
	}
	f->view_valid = false;
	if (f->sequence) {
		/* only the previous stack merges: a flame chart keeps time order */
		if (nstacks && kp_seqtab_equal(&f->seq, nstacks - 1, ids, n)) {
			i = nstacks - 1;
			added = false;
		} else {
			i = kp_seqtab_append(&f->seq, ids, n);
		}
	} else {
		i = kp_seqtab_intern(&f->seq, ids, n, &added);
	}
	if (added) {
		cap = f->counts_cap;
		kp_xgrow(&f->counts, &f->counts_cap, i + 1, sizeof(*f->counts));
		f->counts[i] = 0;
		if (f->before && f->counts_cap != cap) {
			f->before = kp_xrealloc(f->before, f->counts_cap * sizeof(*f->before));
			f->has_before = kp_xrealloc(f->has_before, f->counts_cap);
		}
		if (f->before) {
			f->before[i] = 0;
			f->has_before[i] = 0;
		}
	}
	f->counts[i] += count;
	if (before) {
		f->before[i] += *before;
		f->has_before[i] = 1;
	}
	return true;
}

/* Brings a count with `decimals` decimals to the table's units, giving the
 * table more decimals first when it has fewer. False when that cannot be
 * done exactly (the values would not fit). */
static bool align_count(struct kp_folded *f, kp_count *count, unsigned decimals)
{
	if (decimals > f->decimals) {
		unsigned more = decimals - f->decimals;
		kp_count total = f->total, total_before = f->total_before;

		/* the totals bound every count: if they fit, all do */
		if (!kp_count_shift(&total, more) || !kp_count_shift(&total_before, more))
			return false;
		for (size_t i = 0; i < kp_seqtab_count(&f->seq); i++) {
			kp_count_shift(&f->counts[i], more);
			if (f->before)
				kp_count_shift(&f->before[i], more);
		}
		f->total = total;
		f->total_before = total_before;
		f->decimals = decimals;
		return true;
	}
	return kp_count_shift(count, f->decimals - decimals);
}

/* align_count of a BEFORE AFTER pair with decimals db and da: both to the
 * table's units. False, changing neither, when that cannot be exact. */
static bool align_pair(struct kp_folded *f, kp_count *before, unsigned db, kp_count *after,
		       unsigned da)
{
	unsigned d = db > da ? db : da;
	kp_count b = *before, a = *after;

	/* first to the pair's common decimals, then to the table's */
	if (!kp_count_shift(&b, d - db) || !kp_count_shift(&a, d - da))
		return false;
	if (d < f->decimals) {
		if (!kp_count_shift(&b, f->decimals - d) || !kp_count_shift(&a, f->decimals - d))
			return false;
	} else if (!align_count(f, &a, d)) {
		return false;
	}
	*before = b;
	*after = a;
	return true;
}

bool kp_folded_add(struct kp_folded *f, const struct kp_frame *frames, size_t n, uint64_t count)
{
	return kp_folded_add_count(f, frames, n, count, 0);
}

static void intern_frames(struct kp_folded *f, const struct kp_frame *frames, size_t n)
{
	kp_xgrow(&f->idbuf, &f->idbuf_cap, n, sizeof(*f->idbuf));
	for (size_t i = 0; i < n; i++)
		f->idbuf[i] = intern_name(f, frames[i].name, strlen(frames[i].name)) * 8u +
			      (frames[i].kind & 7u);
}

bool kp_folded_add_count(struct kp_folded *f, const struct kp_frame *frames, size_t n,
			 kp_count count, unsigned decimals)
{
	kp_count c = count;

	if (decimals > KP_COUNT_MAX_DECIMALS || !align_count(f, &c, decimals))
		return false;
	intern_frames(f, frames, n);
	return add_ids(f, f->idbuf, n, c, NULL);
}

bool kp_folded_add_diff(struct kp_folded *f, const struct kp_frame *frames, size_t n,
			kp_count before, kp_count after, unsigned decimals)
{
	if (decimals > KP_COUNT_MAX_DECIMALS || !align_pair(f, &before, decimals, &after, decimals))
		return false;
	intern_frames(f, frames, n);
	return add_ids(f, f->idbuf, n, after, &before);
}

uint32_t kp_folded_frame_id(struct kp_folded *f, const char *name, size_t len,
			    enum kp_frame_kind kind)
{
	return intern_name(f, name, len) * 8u + ((unsigned)kind & 7u);
}

bool kp_folded_add_ids(struct kp_folded *f, const uint32_t *ids, size_t n, kp_count count,
		       unsigned decimals)
{
	if (decimals > KP_COUNT_MAX_DECIMALS || !align_count(f, &count, decimals))
		return false;
	return add_ids(f, ids, n, count, NULL);
}

bool kp_folded_add_ids_diff(struct kp_folded *f, const uint32_t *ids, size_t n, kp_count before,
			    kp_count after, unsigned decimals)
{
	if (decimals > KP_COUNT_MAX_DECIMALS || !align_pair(f, &before, decimals, &after, decimals))
		return false;
	return add_ids(f, ids, n, after, &before);
}

bool kp_folded_differential(const struct kp_folded *f)
{
	return f->before != NULL;
}

kp_count kp_folded_before(const struct kp_folded *f, size_t i, bool *has)
{
	bool h = f->before && f->has_before[i];

	if (has)
		*has = h;
	return h ? f->before[i] : 0;
}

kp_count kp_folded_total_before_exact(const struct kp_folded *f)
{
	return f->total_before;
}

size_t kp_folded_nstacks(const struct kp_folded *f)
{
	return kp_seqtab_count(&f->seq);
}

double kp_folded_total(const struct kp_folded *f)
{
	return kp_count_double(f->total, f->decimals);
}

kp_count kp_folded_total_exact(const struct kp_folded *f)
{
	return f->total;
}

unsigned kp_folded_decimals(const struct kp_folded *f)
{
	return f->decimals;
}

kp_count kp_folded_count(const struct kp_folded *f, size_t i)
{
	return f->counts[i];
}

const uint32_t *kp_folded_stack_ids(const struct kp_folded *f, size_t i, size_t *n, double *count)
{
	if (n)
		*n = SEQ(f, i)->n;
	if (count)
		*count = kp_count_double(f->counts[i], f->decimals);
	return f->seq.words + SEQ(f, i)->off;
}

const char *kp_folded_frame_name(const struct kp_folded *f, uint32_t fid, size_t *len)
{
	if (len)
		*len = kp_strtab_len(f->names, fid >> 3);
	return kp_strtab_str(f->names, fid >> 3);
}

uint32_t kp_folded_fid_limit(const struct kp_folded *f)
{
	return (kp_strtab_count(f->names) + 1) * 8u;
}

const struct kp_frame *kp_folded_stack(const struct kp_folded *f, size_t i, size_t *n,
				       double *count)
{
	/* logically const: the view is a cache of what the ids say */
	struct kp_folded *mf = (struct kp_folded *)f;
	const struct kp_seqtab_entry *s = SEQ(f, i);

	if (!f->view_valid) {
		/* + 1: never NULL, even when every stack is empty */
		kp_xgrow(&mf->view, &mf->view_cap, f->seq.nwords + 1, sizeof(*f->view));
		for (size_t k = 0; k < f->seq.nwords; k++) {
			mf->view[k].name = kp_strtab_str(f->names, f->seq.words[k] >> 3);
			mf->view[k].kind = (uint8_t)(f->seq.words[k] & 7);
		}
		mf->view_valid = true;
	}
	if (n)
		*n = s->n;
	if (count)
		*count = kp_count_double(f->counts[i], f->decimals);
	return f->view + s->off;
}

const char *kp_folded_kind_suffix(enum kp_frame_kind kind)
{
	switch (kind) {
	case KP_FRAME_KERNEL:
		return "_[k]";
	case KP_FRAME_JIT:
		return "_[j]";
	case KP_FRAME_INLINE:
		return "_[i]";
	default:
		return "";
	}
}

static const char *annotation(uint32_t fid, unsigned flags)
{
	switch (kp_folded_frame_kind(fid)) {
	case KP_FRAME_KERNEL:
		return flags & KP_FOLDED_ANNOTATE_KERNEL ? "_[k]" : "";
	case KP_FRAME_JIT:
		return flags & KP_FOLDED_ANNOTATE_JIT ? "_[j]" : "";
	case KP_FRAME_INLINE:
		return flags & KP_FOLDED_ANNOTATE_INLINE ? "_[i]" : "";
	default:
		return "";
	}
}

static size_t count_start(const char *s, size_t len, const char **why);

/* A leaf named like "JIT code 12" (a blank and a number at its end, no
 * kind suffix) would read back as a second count, a differential line:
 * the writer puts a ';' after it, which keeps the line one stack and one
 * count, and which the reader (as flamegraph.pl's split) drops again. */
static bool needs_end_mark(const struct kp_folded *f, uint32_t leaf, unsigned flags)
{
	size_t len;
	const char *name = kp_folded_frame_name(f, leaf, &len), *why;

	return !*annotation(leaf, flags) && count_start(name, len, &why) != 0;
}

/* Sorting: the rendered line of a stack is the byte stream
 * name[suffix] (';' name[suffix])* [';'] ' ' count, the ';' where the
 * writer puts one after a leaf named like a count (not in reverse order).
 * Comparing streams lazily avoids building every line (hundreds of MB for
 * big profiles). */
struct sort_ctx {
	const struct kp_folded *f;
	unsigned flags;
	bool reverse;
	char *counts; /* the count text of stack i at i * stride */
	size_t stride;
	uint8_t *count_len;
};

struct cursor {
	const struct sort_ctx *c;
	uint32_t stack;
	size_t j;  /* next frame to produce */
	int phase; /* 0: separator, 1: name, 2: suffix, 3: space, 4: count, 5: end */
	const char *p;
	size_t len;
};

static uint32_t frame_at(const struct sort_ctx *c, const struct kp_seqtab_entry *s, size_t j)
{
	return c->f->seq.words[s->off + (c->reverse ? s->n - 1 - j : j)];
}

/* Loads the next non-empty chunk into cur->p/len; len 0 means the end. */
static void cursor_next(struct cursor *cur)
{
	const struct sort_ctx *c = cur->c;
	const struct kp_seqtab_entry *s = SEQ(c->f, cur->stack);

	for (;;) {
		switch (cur->phase) {
		case 0:
			if (cur->j >= s->n) {
				cur->phase = 3;
				if (!c->reverse && s->n &&
				    needs_end_mark(c->f, frame_at(c, s, s->n - 1), c->flags)) {
					cur->p = ";";
					cur->len = 1;
					return;
				}
				continue;
			}
			cur->phase = 1;
			if (cur->j > 0) {
				cur->p = ";";
				cur->len = 1;
				return;
			}
			continue;
		case 1:
			cur->p = kp_folded_frame_name(c->f, frame_at(c, s, cur->j), &cur->len);
			cur->phase = 2;
			if (cur->len)
				return;
			continue;
		case 2:
			cur->p = annotation(frame_at(c, s, cur->j), c->flags);
			cur->len = strlen(cur->p);
			cur->j++;
			cur->phase = 0;
			if (cur->len)
				return;
			continue;
		case 3:
			cur->p = " ";
			cur->len = 1;
			cur->phase = 4;
			return;
		case 4:
			cur->p = c->counts + cur->stack * c->stride;
			cur->len = c->count_len[cur->stack];
			cur->phase = 5;
			if (cur->len)
				return;
			continue;
		default:
			cur->len = 0;
			return;
		}
	}
}

static int cmp_stacks(const void *pa, const void *pb, void *arg)
{
	const struct sort_ctx *c = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct kp_seqtab_entry *sa = SEQ(c->f, a), *sb = SEQ(c->f, b);
	size_t k = 0, m = sa->n < sb->n ? sa->n : sb->n;
	struct cursor ca, cb;

	/* equal frames render equal bytes: skip them */
	while (k < m && frame_at(c, sa, k) == frame_at(c, sb, k))
		k++;
	ca = (struct cursor){.c = c, .stack = a, .j = k};
	cb = (struct cursor){.c = c, .stack = b, .j = k};
	cursor_next(&ca);
	cursor_next(&cb);
	while (ca.len && cb.len) {
		size_t n = ca.len < cb.len ? ca.len : cb.len;
		int r = memcmp(ca.p, cb.p, n);

		if (r)
			return r;
		ca.p += n;
		ca.len -= n;
		cb.p += n;
		cb.len -= n;
		if (!ca.len)
			cursor_next(&ca);
		if (!cb.len)
			cursor_next(&cb);
	}
	if (ca.len != cb.len)
		return ca.len ? 1 : -1;
	return a < b ? -1 : a > b;
}

uint32_t *kp_folded_sorted(const struct kp_folded *f, unsigned flags, bool reverse)
{
	struct sort_ctx c = {.f = f, .flags = flags, .reverse = reverse};
	size_t nstacks = kp_seqtab_count(&f->seq);
	uint32_t *order = kp_xmalloc((nstacks ? nstacks : 1) * sizeof(*order));

	/* "BEFORE AFTER" for differential stacks, as flamegraph.pl sorts them */
	c.stride = f->before ? 2 * KP_COUNT_BUF : KP_COUNT_BUF;
	c.counts = kp_xmalloc((nstacks ? nstacks : 1) * c.stride);
	c.count_len = kp_xmalloc(nstacks ? nstacks : 1);
	for (size_t i = 0; i < nstacks; i++) {
		char *text = c.counts + i * c.stride;
		size_t len = 0;

		order[i] = (uint32_t)i;
		if (f->before && f->has_before[i]) {
			len = kp_count_format(f->before[i], f->decimals, text);
			text[len++] = ' ';
		}
		len += kp_count_format(f->counts[i], f->decimals, text + len);
		c.count_len[i] = (uint8_t)len;
	}
	/* input from collapse tools is usually sorted already */
	for (size_t i = 1; i < nstacks; i++) {
		if (cmp_stacks(&order[i - 1], &order[i], &c) > 0) {
			qsort_r(order, nstacks, sizeof(*order), cmp_stacks, &c);
			break;
		}
	}
	free(c.counts);
	free(c.count_len);
	return order;
}

static int write_sorted(const struct kp_folded *f, FILE *out, unsigned flags)
{
	uint32_t *order = kp_folded_sorted(f, flags, false);
	char count[KP_COUNT_BUF];
	size_t nstacks = kp_seqtab_count(&f->seq);

	for (size_t i = 0; i < nstacks; i++) {
		const struct kp_seqtab_entry *s = SEQ(f, order[i]);

		for (size_t j = 0; j < s->n; j++) {
			uint32_t fid = f->seq.words[s->off + j];
			size_t len;
			const char *name = kp_folded_frame_name(f, fid, &len);

			if (j)
				putc_unlocked(';', out);
			fwrite_unlocked(name, 1, len, out);
			fputs_unlocked(annotation(fid, flags), out);
		}
		if (s->n && needs_end_mark(f, f->seq.words[s->off + s->n - 1], flags))
			putc_unlocked(';', out);
		putc_unlocked(' ', out);
		if (f->before && f->has_before[order[i]]) {
			kp_count_format(f->before[order[i]], f->decimals, count);
			fputs_unlocked(count, out);
			putc_unlocked(' ', out);
		}
		kp_count_format(f->counts[order[i]], f->decimals, count);
		fputs_unlocked(count, out);
		putc_unlocked('\n', out);
	}
	free(order);
	return ferror(out) ? -EIO : 0;
}

int kp_folded_write(const struct kp_folded *f, FILE *out, unsigned flags)
{
	struct kp_folded *merged;
	int err;

	if (!f->sequence)
		return write_sorted(f, out, flags);
	/* a sequence may hold a stack more than once: print each once */
	merged = kp_folded_new();
	merged->decimals = f->decimals;
	for (size_t i = 0; i < kp_seqtab_count(&f->seq); i++)
		add_ids(merged, f->seq.words + SEQ(f, i)->off, SEQ(f, i)->n, f->counts[i],
			f->before && f->has_before[i] ? &f->before[i] : NULL);
	/* ids are only meaningful with f's names */
	kp_strtab_free(merged->names);
	merged->names = f->names;
	err = write_sorted(merged, out, flags);
	merged->names = NULL;
	kp_folded_free(merged);
	return err;
}

/* Reading. */

static bool is_space(unsigned char c)
{
	/* Perl's \s, which flamegraph.pl's line pattern uses */
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* Where the trailing count of s[0..len) starts: /\d+(\.\d*)?$/ after one
 * whitespace character. Returns 0 (no count; a count never starts at 0)
 * or the index, and says in *why what is wrong otherwise. */
static size_t count_start(const char *s, size_t len, const char **why)
{
	size_t j = len, start;

	*why = "no count at the end of the line";
	while (j > 0 && is_digit((unsigned char)s[j - 1]))
		j--;
	if (j > 0 && s[j - 1] == '.') {
		start = j - 1;
		while (start > 0 && is_digit((unsigned char)s[start - 1]))
			start--;
		if (start == j - 1)
			return 0;
	} else {
		if (j == len)
			return 0;
		start = j;
	}
	if (start == 0 || !is_space((unsigned char)s[start - 1])) {
		if (start > 0 && s[start - 1] == '-')
			*why = "negative count";
		/* 1.00000036893488e+26, as Perl prints a sum past 2^64 */
		if (start > 1 && (s[start - 1] == '+' || s[start - 1] == '-') &&
		    (s[start - 2] == 'e' || s[start - 2] == 'E'))
			*why = "count in exponent notation, which cannot be exact";
		return 0;
	}
	return start;
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

	start = count_start(s, len, &why);
	if (!start)
		return why;
	*stack_len = start - 1;
	if (kp_count_parse(s + start, len - start, &c->after, &c->after_decimals) < 0)
		return too_large;
	bstart = count_start(s, *stack_len, &why);
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

static void swap_ids(uint32_t **a, size_t *acap, uint32_t **b, size_t *bcap)
{
	uint32_t *p = *a;
	size_t cap = *acap;

	*a = *b;
	*acap = *bcap;
	*b = p;
	*bcap = cap;
}

int kp_folded_read(struct kp_folded *f, FILE *in, const char *name,
		   const struct kp_folded_read_opts *opts, uint64_t *bad_lines, struct kp_diag *d)
{
	struct line_reader r = {.in = in, .nul = SIZE_MAX};
	const char *line;
	char *prev = NULL;
	size_t len, prev_cap = 0, nprev = 0;
	/* where each frame's text ends in the line, and its id: of this line
	 * and of the last one added (prev, whose frames are reused) */
	uint32_t *ends = NULL, *ids = NULL, *prev_ends = NULL, *prev_ids = NULL;
	size_t ends_cap = 0, ids_cap = 0, prev_ends_cap = 0, prev_ids_cap = 0;
	uint64_t lineno = 0, nbad = bad_lines ? *bad_lines : 0;
	bool strict = opts && opts->strict;
	int got, err = 0;

	while ((got = next_line(&r, &line, &len)) == LINE_OK) {
		size_t stack_len = 0, n = 0, i, begin, stop, end;
		struct line_counts lc = {0};
		const char *why;

		lineno++;
		if (len && line[len - 1] == '\r')
			len--;
		for (i = 0; i < len && is_space((unsigned char)line[i]); i++)
			;
		if (i == len)
			continue; /* blank */
		if (line[i] == '#')
			continue; /* a comment: metadata such as "# austin: 3.3.0" */
		why = split_line(line, len, &stack_len, &lc);
		if (!why && !(lc.differential ? align_pair(f, &lc.before, lc.before_decimals,
							   &lc.after, lc.after_decimals)
					      : align_count(f, &lc.after, lc.after_decimals)))
			why = "count too large to keep exact with the decimals of the other lines";
		if (why) {
			note_bad_line(d, &nbad, name, lineno, why);
			if (!strict)
				continue;
			err = -EINVAL;
			break;
		}
		/* split on ';' keeping empty fields except trailing ones (Perl's
		 * split): a stack that is only ';'s has no frame */
		end = stack_len;
		while (end && line[end - 1] == ';')
			end--;
		for (begin = 0; end;) {
			const char *semi = memchr(line + begin, ';', end - begin);
			size_t flen, pbegin = n && n <= nprev ? prev_ends[n - 1] + 1 : 0;
			uint32_t fid;

			stop = semi ? (size_t)(semi - line) : end;
			flen = stop - begin;
			/* folded files are mostly sorted: a frame equal to the one
			 * of the line before at the same depth has its id */
			if (n < nprev && prev_ends[n] - pbegin == flen &&
			    memcmp(prev + pbegin, line + begin, flen) == 0) {
				fid = prev_ids[n];
			} else {
				enum kp_frame_kind kind = strip_suffix(line + begin, &flen);

				fid = intern_name(f, line + begin, flen) * 8u + kind;
			}
			kp_xgrow(&ids, &ids_cap, n + 1, sizeof(*ids));
			ids[n] = fid;
			if (n < PREV_FRAMES) {
				kp_xgrow(&ends, &ends_cap, n + 1, sizeof(*ends));
				ends[n] = (uint32_t)stop;
			}
			n++;
			if (!semi)
				break;
			begin = stop + 1;
		}
		if (!add_ids(f, ids, n, lc.after, lc.differential ? &lc.before : NULL)) {
			note_bad_line(d, &nbad, name, lineno,
				      "count too large: the sum of the counts would pass 2^128");
			if (!strict)
				continue;
			err = -EINVAL;
			break;
		}
		/* keep this line for the next one (not one of endless frames:
		 * nothing else is 8 bytes a frame for it) */
		nprev = 0;
		if (n > PREV_FRAMES)
			continue;
		kp_xgrow(&prev, &prev_cap, end + 1, 1);
		memcpy(prev, line, end);
		swap_ids(&ids, &ids_cap, &prev_ids, &prev_ids_cap);
		swap_ids(&ends, &ends_cap, &prev_ends, &prev_ends_cap);
		nprev = n;
	}
	if (!err && got < 0)
		err = line_failed(&r, got, name, lineno + 1, opts, d);
	if (bad_lines)
		*bad_lines = nbad;
	free(ends);
	free(ids);
	free(prev_ends);
	free(prev_ids);
	free(prev);
	free(r.buf);
	return err;
}
