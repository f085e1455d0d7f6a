/* kp_folded_write: a folded table as folded text, in kp_folded_sorted's
 * line order. */
#include "formats/folded_write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/bytes.h"
#include "util/count.h"
#include "util/xalloc.h"

static int write_sorted(const struct kp_folded *f, FILE *out, unsigned flags)
{
	uint32_t *order = kp_folded_sorted(f, flags, false);
	char count[KP_COUNT_BUF];
	size_t nstacks = kp_folded_nstacks(f);
	unsigned decimals = kp_folded_decimals(f);

	for (size_t i = 0; i < nstacks; i++) {
		size_t n;
		const uint32_t *ids = kp_folded_stack_ids(f, order[i], &n, NULL);
		bool has_before;
		kp_count before = kp_folded_before(f, order[i], &has_before);

		for (size_t j = 0; j < n; j++) {
			size_t len;
			const char *name = kp_folded_frame_name(f, ids[j], &len);

			if (j)
				putc_unlocked(';', out);
			fwrite_unlocked(name, 1, len, out);
			fputs_unlocked(kp_folded_annotation(ids[j], flags), out);
		}
		if (n && kp_folded_needs_end_mark(f, ids[n - 1], flags))
			putc_unlocked(';', out);
		putc_unlocked(' ', out);
		if (has_before) {
			kp_count_format(before, decimals, count);
			fputs_unlocked(count, out);
			putc_unlocked(' ', out);
		}
		kp_count_format(kp_folded_count(f, order[i]), decimals, count);
		fputs_unlocked(count, out);
		putc_unlocked('\n', out);
	}
	free(order);
	return ferror(out) ? -EIO : 0;
}

/* A stack's text in the buffer. */
struct stack_text {
	size_t off, len;
	uint32_t stack;
};

static int cmp_text(const void *a, const void *b, void *arg)
{
	const char *txt = arg;
	const struct stack_text *x = a, *y = b;
	int r = memcmp(txt + x->off, txt + y->off, x->len < y->len ? x->len : y->len);

	if (r)
		return r;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* Appends the text of stack i to t: its frames, with the suffixes flags
 * ask for, joined by ';'. */
static void put_stack_text(const struct kp_folded *f, size_t i, unsigned flags, struct kp_bytes *t)
{
	size_t n;
	const uint32_t *ids = kp_folded_stack_ids(f, i, &n, NULL);

	for (size_t j = 0; j < n; j++) {
		size_t len;
		const char *name = kp_folded_frame_name(f, ids[j], &len);
		const char *suffix = kp_folded_annotation(ids[j], flags);

		if (j)
			kp_bytes_put(t, ";", 1);
		kp_bytes_put(t, name, len);
		kp_bytes_put(t, suffix, strlen(suffix));
	}
}

/* "TEXT [BEFORE ]COUNT\n". */
static void put_line(const char *text, size_t len, bool has_before, kp_count before, kp_count count,
		     unsigned decimals, FILE *out)
{
	char num[KP_COUNT_BUF];

	fwrite_unlocked(text, 1, len, out);
	putc_unlocked(' ', out);
	if (has_before) {
		kp_count_format(before, decimals, num);
		fputs_unlocked(num, out);
		putc_unlocked(' ', out);
	}
	kp_count_format(count, decimals, num);
	fputs_unlocked(num, out);
	putc_unlocked('\n', out);
}

/* KP_FOLDED_BY_STACK: the lines in the order of the stacks' text, stacks
 * of the same text one line (different frames can print the same: a ';'
 * in a verbatim name), as stackcollapse-perf.pl sorts its hash keys. The
 * texts are built once and compared whole: for `kprof collapse`, whose
 * stacks all differ, that is faster than kp_folded_sorted's lazy
 * comparison. */
static int write_by_stack(const struct kp_folded *f, FILE *out, unsigned flags)
{
	size_t nstacks = kp_folded_nstacks(f), nv = 0;
	unsigned decimals = kp_folded_decimals(f);
	struct stack_text *v = kp_xmalloc((nstacks ? nstacks : 1) * sizeof(*v));
	struct kp_bytes txt = {0};

	for (size_t i = 0; i < nstacks; i++) {
		v[i].off = txt.len;
		put_stack_text(f, i, flags, &txt);
		v[i].len = txt.len - v[i].off;
		v[i].stack = (uint32_t)i;
	}
	qsort_r(v, nstacks, sizeof(*v), cmp_text, txt.p);
	while (nv < nstacks) {
		size_t k = nv;
		bool has_before = false, hb;
		kp_count count = 0, before = 0;

		/* the counts of one text are parts of the table's total: they fit */
		for (; k < nstacks && (k == nv || cmp_text(&v[nv], &v[k], txt.p) == 0); k++) {
			kp_count_add(&before, kp_folded_before(f, v[k].stack, &hb));
			kp_count_add(&count, kp_folded_count(f, v[k].stack));
			has_before |= hb;
		}
		put_line(txt.p + v[nv].off, v[nv].len, has_before, before, count, decimals, out);
		nv = k;
	}
	free(v);
	free(txt.p);
	return ferror(out) ? -EIO : 0;
}

/* A sequence (kp_folded_set_sequence) may hold a stack more than once: a
 * new table, not a sequence, of its stacks each once, with the same
 * counts and names. The caller frees it. */
static struct kp_folded *merge_sequence(const struct kp_folded *f)
{
	struct kp_folded *merged = kp_folded_new();
	uint32_t limit = kp_folded_fid_limit(f), *fid_of, *ids = NULL;
	size_t ids_cap = 0;
	unsigned decimals = kp_folded_decimals(f);

	/* f's frame ids in merged, UINT32_MAX until interned: once a name */
	fid_of = kp_xmalloc(limit * sizeof(*fid_of));
	memset(fid_of, 0xff, limit * sizeof(*fid_of));
	for (size_t i = 0; i < kp_folded_nstacks(f); i++) {
		size_t n;
		const uint32_t *fids = kp_folded_stack_ids(f, i, &n, NULL);
		bool has_before;
		kp_count before = kp_folded_before(f, i, &has_before);

		kp_xgrow(&ids, &ids_cap, n ? n : 1, sizeof(*ids));
		for (size_t j = 0; j < n; j++) {
			if (fid_of[fids[j]] == UINT32_MAX) {
				size_t len;
				const char *name = kp_folded_frame_name(f, fids[j], &len);

				fid_of[fids[j]] = kp_folded_frame_id(merged, name, len,
								     kp_folded_frame_kind(fids[j]));
			}
			ids[j] = fid_of[fids[j]];
		}
		/* f's sums fit, so merged's do too */
		if (has_before)
			kp_folded_add_ids_diff(merged, ids, n, before, kp_folded_count(f, i),
					       decimals);
		else
			kp_folded_add_ids(merged, ids, n, kp_folded_count(f, i), decimals);
	}
	free(fid_of);
	free(ids);
	return merged;
}

int kp_folded_write(const struct kp_folded *f, FILE *out, unsigned flags)
{
	struct kp_folded *merged;
	int err;

	if (flags & KP_FOLDED_BY_STACK)
		return write_by_stack(f, out, flags);
	if (!kp_folded_sequence(f))
		return write_sorted(f, out, flags);
	merged = merge_sequence(f);
	err = write_sorted(merged, out, flags);
	kp_folded_free(merged);
	return err;
}
