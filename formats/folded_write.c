/* kp_folded_write: a folded table as folded text, in kp_folded_sorted's
 * line order. */
#include "formats/folded_write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* A growing buffer for a line's text. */
struct text {
	char *p;
	size_t len, cap;
};

static void text_put(struct text *t, const char *s, size_t n)
{
	kp_xgrow(&t->p, &t->cap, t->len + n + 1, 1);
	memcpy(t->p + t->len, s, n);
	t->len += n;
}

/* The stack text of stack i: its frames, with the suffixes flags ask
 * for, joined by ';'. */
static void stack_text(const struct kp_folded *f, size_t i, unsigned flags, struct text *t)
{
	size_t n;
	const uint32_t *ids = kp_folded_stack_ids(f, i, &n, NULL);

	t->len = 0;
	for (size_t j = 0; j < n; j++) {
		size_t len;
		const char *name = kp_folded_frame_name(f, ids[j], &len);
		const char *suffix = kp_folded_annotation(ids[j], flags);

		if (j)
			text_put(t, ";", 1);
		text_put(t, name, len);
		text_put(t, suffix, strlen(suffix));
	}
}

/* "TEXT [BEFORE ]COUNT\n". */
static void put_line(const struct text *t, bool has_before, kp_count before, kp_count count,
		     unsigned decimals, FILE *out)
{
	char num[KP_COUNT_BUF];

	fwrite_unlocked(t->p, 1, t->len, out);
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

/* KP_FOLDED_BY_STACK: in the order of the stacks' text, stacks of the same
 * text one line (different frames can print the same: a ';' in a verbatim
 * name), as stackcollapse-perf.pl's hash keys. */
static int write_by_stack(const struct kp_folded *f, FILE *out, unsigned flags)
{
	uint32_t *order = kp_folded_sorted(f, flags, false);
	size_t nstacks = kp_folded_nstacks(f);
	unsigned decimals = kp_folded_decimals(f);
	struct text line = {0}, next = {0};
	kp_count count = 0, before = 0;
	bool has_before = false;

	for (size_t i = 0; i < nstacks; i++) {
		bool hb;
		kp_count b = kp_folded_before(f, order[i], &hb);
		struct text t;

		stack_text(f, order[i], flags, &next);
		if (i && next.len == line.len && memcmp(next.p, line.p, line.len) == 0) {
			/* parts of the table's total, which fits */
			kp_count_add(&count, kp_folded_count(f, order[i]));
			kp_count_add(&before, b);
			has_before |= hb;
			continue;
		}
		if (i)
			put_line(&line, has_before, before, count, decimals, out);
		t = line;
		line = next;
		next = t;
		count = kp_folded_count(f, order[i]);
		before = b;
		has_before = hb;
	}
	if (nstacks)
		put_line(&line, has_before, before, count, decimals, out);
	free(line.p);
	free(next.p);
	free(order);
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
