/* kp_layout: steps 1-3 of drawing a flame graph, the frames' geometry in
 * counts, as flamegraph.pl computes it (flamegraph/layout.h). */
#include "flamegraph/layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "profile/wait.h"
#include "util/xalloc.h"

/* A frame still open during kp_layout_flow, by depth. */
struct open_frame {
	uint64_t key; /* fid * 2 + waker bit */
	double start;
	kp_count xstart, xbstart; /* exact sums of AFTER and BEFORE at its start */
	kp_count xostart;	  /* and of the off-CPU stacks' AFTER */
	double delta;
	bool has_delta;
};

int kp_layout_perl_num(char *buf, size_t size, double v)
{
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return snprintf(buf, size, "%.0f", v);
	return snprintf(buf, size, "%.15g", v);
}

/* flamegraph.pl stores a frame's end time inside its hash key as a
 * string and reads it back: decimal counts lose digits past 15. */
static double perl_roundtrip(double v)
{
	char buf[64];

	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return v;
	kp_layout_perl_num(buf, sizeof(buf), v);
	return strtod(buf, NULL);
}

/* The exact sums of the stacks walked so far: AFTER, BEFORE, and the
 * AFTER of the off-CPU ones. */
struct sums {
	kp_count time, before, offcpu;
};

/* Closes the open frame o at depth, at time end (exact sums x). */
static void emit(struct kp_layout *g, const struct open_frame *o, uint32_t depth, double end,
		 const struct sums *x)
{
	struct kp_layout_node *n;

	if (end - o->start < g->minwidth_time)
		return;
	kp_xgrow(&g->nodes, &g->nodes_cap, g->nnodes + 1, sizeof(*g->nodes));
	n = &g->nodes[g->nnodes++];
	n->fid = (uint32_t)(o->key >> 1);
	n->depth = depth;
	n->waker = o->key & 1;
	n->start = o->start;
	n->end = end;
	n->samples = x->time - o->xstart;
	n->before = x->before - o->xbstart;
	n->offcpu = x->offcpu - o->xostart;
	n->delta = o->delta;
	n->has_delta = o->has_delta;
	if (depth > g->depthmax)
		g->depthmax = depth;
}

/* The delta of stack i (0 without a BEFORE): AFTER - BEFORE, BEFORE scaled
 * to AFTER's total for share changes. */
static double stack_delta(const struct kp_layout *g, size_t i, bool *has)
{
	unsigned decimals = kp_folded_decimals(g->f);
	kp_count before = kp_folded_before(g->f, i, has);

	if (!*has)
		return 0;
	return kp_count_double(kp_folded_count(g->f, i), decimals) -
	       kp_count_double(before, decimals) * g->scale;
}

/* A "--" frame inside a stack separates the off-CPU stack from its waker's
 * in chain graphs (flamegraph.pl splits on ";--;"). */
static bool is_separator(const struct kp_folded *f, uint32_t fid)
{
	size_t len;
	const char *name = kp_folded_frame_name(f, fid, &len);

	return len == 2 && name[0] == '-' && name[1] == '-' &&
	       kp_folded_frame_kind(fid) == KP_FRAME_USER;
}

/* Whether stack ids[0..n) is off-CPU time: its leaf is a marker frame.
 * marker caches the answer by frame id (0: not asked yet, 1: no, 2: yes). */
static bool is_offcpu(const struct kp_folded *f, const uint32_t *ids, size_t n, uint8_t *marker)
{
	uint32_t leaf;

	if (!n)
		return false;
	leaf = ids[n - 1];
	if (!marker[leaf]) {
		size_t len;
		const char *name = kp_folded_frame_name(f, leaf, &len);

		marker[leaf] = kp_wait_is_frame(name, len) ? 2 : 1;
	}
	return marker[leaf] == 2;
}

static bool is_empty_frame(const struct kp_folded *f, uint32_t fid)
{
	size_t len;

	kp_folded_frame_name(f, fid, &len);
	return len == 0 && kp_folded_frame_kind(fid) == KP_FRAME_USER;
}

/* The scales of the drawing: the total (summed in drawing order, order
 * or the table's), px per count, minwidth in counts and, for
 * differential tables, BEFORE's scale and the largest stack delta. */
static void measure(struct kp_layout *g, const uint32_t *order)
{
	const struct kp_folded *f = g->f;
	size_t nstacks = kp_folded_nstacks(f);
	bool differential = kp_folded_differential(f);
	double time = 0;

	/* summed in drawing order as flamegraph.pl does */
	for (size_t i = 0; i < nstacks; i++) {
		double count;

		kp_folded_stack_ids(f, order ? order[i] : i, NULL, &count);
		time += count;
	}
	g->time = time;
	g->timemax = g->o->total > time ? g->o->total : time;
	g->widthpertime = (g->o->width - 2 * KP_LAYOUT_XPAD) / g->timemax;
	if (g->o->minwidth_percent)
		g->minwidth_time = g->timemax * g->o->minwidth / 100;
	else
		g->minwidth_time = g->o->minwidth / g->widthpertime;
	g->scale = 1;
	g->maxdelta = 1;
	g->time_before = kp_count_double(kp_folded_total_before_exact(f), kp_folded_decimals(f));
	if (differential && g->o->diff_shares)
		g->scale = g->time_before > 0 ? time / g->time_before : 0;
	for (size_t i = 0; differential && i < nstacks; i++) {
		bool has;
		double d = fabs(stack_delta(g, i, &has));

		if (d > g->maxdelta)
			g->maxdelta = d;
	}
}

/* The identities of the frames of a stack (ids[0..n), root first, or
 * leaf first with --reverse) in drawing order, in keys[1..n] (keys[0]:
 * the root "all"): frame id * 2, plus 1 above a chain graph's "--". */
static void stack_keys(const struct kp_layout *g, const uint32_t *ids, size_t n, uint64_t *keys)
{
	bool chain = g->chain, waker = false;

	keys[0] = 0;
	for (size_t k = 0; k < n; k++) {
		uint32_t fid = ids[g->o->reverse ? n - 1 - k : k];
		bool sep = chain && k > 0 && k + 1 < n && is_separator(g->f, fid);

		keys[k + 1] = (uint64_t)fid * 2 + (waker && !sep);
		waker = waker || sep;
	}
}

void kp_layout_flow(struct kp_layout *g)
{
	const struct kp_folded *f = g->f;
	size_t nstacks = kp_folded_nstacks(f), depth = 0, open_cap = 0, keys_cap = 0;
	uint32_t *order = NULL;
	/* the frames open at each depth (0: the root), and the identities of
	 * the stack being added */
	struct open_frame *open = NULL;
	uint64_t *keys = NULL;
	uint8_t *marker = kp_xcalloc(kp_folded_fid_limit(f) + 1, 1);
	double time = 0;
	/* the same sums exact, for the titles */
	struct sums x = {0};
	bool differential = kp_folded_differential(f);

	if (!g->o->flamechart)
		order = kp_folded_sorted(f, KP_FOLDED_ANNOTATE_ALL, g->o->reverse);
	measure(g, order);
	kp_xgrow(&open, &open_cap, 1, sizeof(*open));
	for (size_t i = 0; i < nstacks; i++) {
		size_t n, same = 0, si = order ? order[i] : i;
		double count, delta;
		const uint32_t *ids = kp_folded_stack_ids(f, si, &n, &count);
		bool has_before = false, offcpu = is_offcpu(f, ids, n, marker);

		delta = differential ? stack_delta(g, si, &has_before) : 0;
		/* flamegraph.pl --reverse joins the reversed frames and splits
		 * again, which drops what were leading empty frames */
		while (g->o->reverse && n && is_empty_frame(f, ids[0])) {
			ids++;
			n--;
		}

		kp_xgrow(&open, &open_cap, n + 1, sizeof(*open));
		kp_xgrow(&keys, &keys_cap, n + 1, sizeof(*keys));
		stack_keys(g, ids, n, keys);
		while (same < depth && same < n && open[same + 1].key == keys[same + 1])
			same++;
		/* close the frames above the common part, deepest first */
		for (; depth > same; depth--)
			emit(g, &open[depth], (uint32_t)depth, perl_roundtrip(time), &x);
		/* the root opens with the first stack, the others above the
		 * common part (flamegraph.pl gives a frame a delta when the
		 * stack that opens it has one) */
		for (size_t k = i ? same + 1 : 0; k <= n; k++)
			open[k] = (struct open_frame){.key = keys[k],
						      .start = time,
						      .xstart = x.time,
						      .xbstart = x.before,
						      .xostart = x.offcpu,
						      .has_delta = has_before};
		/* the stack's delta is its leaf's self delta */
		if (has_before) {
			open[n].delta += delta;
			open[n].has_delta = true;
		}
		depth = n;
		time += count;
		x.time += kp_folded_count(f, si);
		x.before += kp_folded_before(f, si, NULL);
		if (offcpu)
			x.offcpu += kp_folded_count(f, si);
	}
	for (; depth > 0; depth--)
		emit(g, &open[depth], (uint32_t)depth, perl_roundtrip(time), &x);
	/* the root "all" spans everything */
	if (nstacks)
		emit(g, &open[0], 0, perl_roundtrip(time), &x);
	g->offcpu = x.offcpu > 0;
	free(order);
	free(open);
	free(keys);
	free(marker);
}

void kp_layout_fini(struct kp_layout *g)
{
	free(g->nodes);
}
