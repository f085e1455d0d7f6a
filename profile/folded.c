/* kp_folded: the named-stack view of a profile. Stacks of interned frame
 * ids, interned as sequences in a kp_seqtab. A frame id is name_id * 8 +
 * kind, so (name, kind) identity is one integer compare. The order of the
 * stacks' folded-text lines (kp_folded_sorted) is here too, as the SVG and
 * the folded writer (formats/folded_write.c) both draw in it. */
#include "profile/folded.h"

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
	bool verbatim; /* names kept as given */
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

void kp_folded_set_verbatim(struct kp_folded *f, bool on)
{
	f->verbatim = on;
}

bool kp_folded_sequence(const struct kp_folded *f)
{
	return f->sequence;
}

static bool needs_sanitizing(unsigned char c)
{
	return c == ';' || c < 0x20 || c == 0x7f;
}

static uint32_t intern_name(struct kp_folded *f, const char *name, size_t len)
{
	size_t i;

	if (f->verbatim)
		return kp_strtab_intern(f->names, name, len);
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
bool kp_folded_align(struct kp_folded *f, kp_count *count, unsigned decimals)
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

/* kp_folded_align of a BEFORE AFTER pair with decimals db and da: both to the
 * table's units. False, changing neither, when that cannot be exact. */
bool kp_folded_align_pair(struct kp_folded *f, kp_count *before, unsigned db, kp_count *after,
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
	} else if (!kp_folded_align(f, &a, d)) {
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

	if (decimals > KP_COUNT_MAX_DECIMALS || !kp_folded_align(f, &c, decimals))
		return false;
	intern_frames(f, frames, n);
	return add_ids(f, f->idbuf, n, c, NULL);
}

bool kp_folded_add_diff(struct kp_folded *f, const struct kp_frame *frames, size_t n,
			kp_count before, kp_count after, unsigned decimals)
{
	if (decimals > KP_COUNT_MAX_DECIMALS ||
	    !kp_folded_align_pair(f, &before, decimals, &after, decimals))
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
	if (decimals > KP_COUNT_MAX_DECIMALS || !kp_folded_align(f, &count, decimals))
		return false;
	return add_ids(f, ids, n, count, NULL);
}

bool kp_folded_add_ids_diff(struct kp_folded *f, const uint32_t *ids, size_t n, kp_count before,
			    kp_count after, unsigned decimals)
{
	if (decimals > KP_COUNT_MAX_DECIMALS ||
	    !kp_folded_align_pair(f, &before, decimals, &after, decimals))
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

const char *kp_folded_annotation(uint32_t fid, unsigned flags)
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

/* The text form's syntax: what the sort below and the readers and
 * writers of folded text agree on. */

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
size_t kp_folded_count_start(const char *s, size_t len, const char **why)
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

/* A leaf named like "JIT code 12" (a blank and a number at its end, no
 * kind suffix) would read back as a second count, a differential line:
 * the writer puts a ';' after it, which keeps the line one stack and one
 * count, and which the reader (as flamegraph.pl's split) drops again. */
bool kp_folded_needs_end_mark(const struct kp_folded *f, uint32_t leaf, unsigned flags)
{
	size_t len;
	const char *name = kp_folded_frame_name(f, leaf, &len), *why;

	return !*kp_folded_annotation(leaf, flags) && kp_folded_count_start(name, len, &why) != 0;
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
				    kp_folded_needs_end_mark(c->f, frame_at(c, s, s->n - 1),
							     c->flags)) {
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
			cur->p = kp_folded_annotation(frame_at(c, s, cur->j), c->flags);
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

/* The count text of every stack ("BEFORE AFTER" for differential stacks,
 * as flamegraph.pl sorts them), which ends each line. */
static void count_texts(const struct kp_folded *f, struct sort_ctx *c)
{
	size_t nstacks = kp_seqtab_count(&f->seq);

	c->stride = f->before ? 2 * KP_COUNT_BUF : KP_COUNT_BUF;
	c->counts = kp_xmalloc((nstacks ? nstacks : 1) * c->stride);
	c->count_len = kp_xmalloc(nstacks ? nstacks : 1);
	for (size_t i = 0; i < nstacks; i++) {
		char *text = c->counts + i * c->stride;
		size_t len = 0;

		if (f->before && f->has_before[i]) {
			len = kp_count_format(f->before[i], f->decimals, text);
			text[len++] = ' ';
		}
		len += kp_count_format(f->counts[i], f->decimals, text + len);
		c->count_len[i] = (uint8_t)len;
	}
}

uint32_t *kp_folded_sorted(const struct kp_folded *f, unsigned flags, bool reverse)
{
	struct sort_ctx c = {.f = f, .flags = flags, .reverse = reverse};
	size_t nstacks = kp_seqtab_count(&f->seq);
	uint32_t *order = kp_xmalloc((nstacks ? nstacks : 1) * sizeof(*order));

	for (size_t i = 0; i < nstacks; i++)
		order[i] = (uint32_t)i;
	count_texts(f, &c);
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
