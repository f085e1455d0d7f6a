/* kp_top: the terminal summary. Self counts go to the leaf frame of
 * each stack; total (inclusive) counts go to every function on the stack,
 * once per stack even when it recurses, so a total share never passes
 * 100%. Root frames (the comm) are left out: they are always 100%. */
#include "formats/top.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/wait.h"
#include "util/textsafe.h"
#include "util/xalloc.h"

struct entry {
	uint32_t fid;
	kp_count value;
};

static int by_value_desc(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	if (a->value != b->value)
		return a->value < b->value ? 1 : -1;
	return a->fid < b->fid ? -1 : a->fid > b->fid;
}

static void print_table(const struct kp_folded *f, FILE *out, const char *what,
			const kp_count *values, uint32_t limit, size_t n, const char *column)
{
	struct entry *e = kp_xmalloc((limit ? limit : 1) * sizeof(*e));
	unsigned decimals = kp_folded_decimals(f);
	double total = kp_folded_total(f);
	size_t ne = 0;
	char num[KP_COUNT_BUF];

	for (uint32_t fid = 0; fid < limit; fid++)
		if (values[fid] > 0)
			e[ne++] = (struct entry){fid, values[fid]};
	qsort(e, ne, sizeof(*e), by_value_desc);
	fprintf(out, "Top %zu functions by %s:\n", n < ne ? n : ne, what);
	fprintf(out, "  %7s  %14s  %s\n", "share", column, "function");
	for (size_t i = 0; i < ne && i < n; i++) {
		size_t len;
		const char *name = kp_folded_frame_name(f, e[i].fid, &len);

		kp_count_format(e[i].value, decimals, num);
		fprintf(out, "  %6.2f%%  %14s  ",
			100 * kp_count_double(e[i].value, decimals) / total, num);
		/* a name is the profiled program's: escaped for the terminal */
		kp_textsafe_write(out, name, kp_textsafe_cut(name, len, 200));
		fprintf(out, "%s\n", kp_frame_kind_note(kp_folded_frame_kind(e[i].fid)));
	}
	free(e);
}

/* The first line: the total, what it counts, the stacks and, when some
 * end in a marker frame, the share of them (off-CPU time). */
static void print_total(const struct kp_folded *f, FILE *out, const char *countname,
			const char *unit, kp_count offcpu)
{
	char num[KP_COUNT_BUF];
	unsigned decimals = kp_folded_decimals(f);

	kp_count_format(kp_folded_total_exact(f), decimals, num);
	if (unit)
		fprintf(out, "%s %s of %s in %zu distinct stacks", num, unit, countname,
			kp_folded_nstacks(f));
	else
		fprintf(out, "%s %s in %zu distinct stacks", num, countname, kp_folded_nstacks(f));
	if (offcpu)
		fprintf(out, ", %.2f%% of it off-CPU",
			100 * kp_count_double(offcpu, decimals) / kp_folded_total(f));
	fputs(".\n\n", out);
}

/* Where a stack's self count goes: its leaf, or for a wait (a stack
 * ending in a marker) the innermost frame of the program that waited,
 * the call that blocked, not the marker nor the kernel's way into the
 * scheduler (every wait ends in __schedule); the frame above the marker
 * when no frame is the program's (a kernel thread). KP_FRAME_ROOT's
 * count goes nowhere: returns UINT32_MAX. */
static uint32_t self_frame(const uint32_t *ids, size_t nids, bool wait)
{
	if (!nids || kp_folded_frame_kind(ids[nids - 1]) == KP_FRAME_ROOT)
		return UINT32_MAX;
	if (!wait)
		return ids[nids - 1];
	for (size_t k = nids - 1; k-- > 0;) {
		enum kp_frame_kind kind = kp_folded_frame_kind(ids[k]);

		if (kind == KP_FRAME_ROOT)
			break;
		if (kind != KP_FRAME_KERNEL)
			return ids[k];
	}
	return nids > 1 && kp_folded_frame_kind(ids[nids - 2]) != KP_FRAME_ROOT ? ids[nids - 2]
										: ids[nids - 1];
}

int kp_top_write(const struct kp_folded *f, FILE *out, size_t n, const char *countname,
		 const char *unit)
{
	uint32_t limit = kp_folded_fid_limit(f);
	kp_count *self = kp_xcalloc(limit, sizeof(*self));
	kp_count *incl = kp_xcalloc(limit, sizeof(*incl));
	/* stamp[fid] = stack index + 1 when fid was counted for that stack */
	size_t *stamp = kp_xcalloc(limit, sizeof(*stamp));
	kp_count offcpu = 0;
	char column[96];

	if (!countname)
		countname = "samples";
	if (unit)
		snprintf(column, sizeof(column), "%s (%s)", countname, unit);
	else
		snprintf(column, sizeof(column), "%s", countname);
	for (size_t i = 0; i < kp_folded_nstacks(f); i++) {
		size_t nids, len;
		const uint32_t *ids = kp_folded_stack_ids(f, i, &nids, NULL);
		kp_count count = kp_folded_count(f, i);
		const char *leaf = nids ? kp_folded_frame_name(f, ids[nids - 1], &len) : NULL;
		bool wait = leaf && kp_wait_is_frame(leaf, len);
		uint32_t at = self_frame(ids, nids, wait);

		if (wait)
			offcpu += count;
		if (at != UINT32_MAX)
			self[at] += count;
		for (size_t k = 0; k < nids; k++) {
			if (stamp[ids[k]] == i + 1 || kp_folded_frame_kind(ids[k]) == KP_FRAME_ROOT)
				continue;
			stamp[ids[k]] = i + 1;
			incl[ids[k]] += count;
		}
	}
	print_total(f, out, countname, unit, offcpu);
	if (kp_folded_total_exact(f) > 0) {
		print_table(f, out,
			    offcpu ? "self share (where the time is spent; a wait's time in the "
				     "function that waited, its kind in the total share)"
				   : "self share (where the time is spent)",
			    self, limit, n, column);
		fputc('\n', out);
		print_table(f, out, "total share (time spent in them and what they call)", incl,
			    limit, n, column);
	}
	free(self);
	free(incl);
	free(stamp);
	return ferror(out) ? -EIO : 0;
}
