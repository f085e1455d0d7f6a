#include "profile/fold.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

const char *kp_fold_root_name(const struct kp_profile *p, const struct kp_profile_root *r,
			      const struct kp_fold_opts *o, char *buf, size_t size)
{
	const char *comm = kp_profile_str(p, r->comm, NULL);

	if (o->root_tid)
		snprintf(buf, size, "%s-%u/%u", comm, r->pid, r->tid);
	else if (o->root_pid)
		snprintf(buf, size, "%s-%u", comm, r->pid);
	else
		return comm;
	return buf;
}

/* The folded table's frame id of a profile's (function, kind), through
 * cache (nfunctions * KINDS entries, UINT32_MAX when not made yet): each
 * name is interned once, not once a stack. */
#define KINDS 8
static uint32_t frame_id(struct kp_folded *f, const struct kp_profile *p, uint32_t *cache,
			 const struct kp_profile_frame *fr)
{
	uint32_t *slot = &cache[(size_t)fr->function * KINDS + (fr->kind & (KINDS - 1))];

	if (*slot == UINT32_MAX) {
		size_t len;
		const char *name =
			kp_profile_str(p, kp_profile_function_at(p, fr->function)->name, &len);

		*slot = kp_folded_frame_id(f, name, len, (enum kp_frame_kind)fr->kind);
	}
	return *slot;
}

bool kp_fold_micros(const struct kp_profile *p, size_t value)
{
	const struct kp_profile_value_type *vt = kp_profile_value_type(p, value);

	return vt && strcmp(kp_profile_str(p, vt->unit, NULL), "nanoseconds") == 0;
}

/* Adds count (before, when o->into says so) to the stack ids[0..n). */
static bool add_stack(struct kp_folded *f, const uint32_t *ids, size_t n, kp_count count,
		      unsigned decimals, enum kp_fold_into into)
{
	if (into == KP_FOLD_COUNT)
		return kp_folded_add_ids(f, ids, n, count, decimals);
	return kp_folded_add_ids_diff(f, ids, n, into == KP_FOLD_BEFORE ? count : 0,
				      into == KP_FOLD_AFTER ? count : 0, decimals);
}

/* Every sample of p into f, value o->value as it is. */
static bool add_samples(struct kp_folded *f, const struct kp_profile *p,
			const struct kp_fold_opts *o, unsigned decimals)
{
	size_t nfn = kp_profile_nfunctions(p), stack_cap = 0;
	uint32_t *stack = NULL, *cache, unknown = UINT32_MAX;
	char rootbuf[160];
	bool ok = true;

	cache = kp_xmalloc((nfn ? nfn : 1) * KINDS * sizeof(*cache));
	memset(cache, 0xff, (nfn ? nfn : 1) * KINDS * sizeof(*cache));
	for (size_t i = 0; i < kp_profile_nsamples(p) && ok; i++) {
		struct kp_profile_root root;
		const kp_count *values;
		size_t n, nf = 0;
		const uint32_t *locs = kp_profile_sample(p, i, &root, &n, &values);

		kp_xgrow(&stack, &stack_cap, n + 1, sizeof(*stack));
		if (root.comm || root.pid) {
			const char *name = kp_fold_root_name(p, &root, o, rootbuf, sizeof(rootbuf));

			stack[nf++] = kp_folded_frame_id(f, name, strlen(name), KP_FRAME_ROOT);
		}
		for (size_t j = 0; j < n; j++) {
			size_t nfr;
			const struct kp_profile_frame *fr =
				kp_profile_frames(p, locs[j], &nfr, NULL);

			if (!fr) {
				if (unknown == UINT32_MAX)
					unknown = kp_folded_frame_id(f, "[unknown]", 9,
								     KP_FRAME_USER);
				kp_xgrow(&stack, &stack_cap, nf + 1, sizeof(*stack));
				stack[nf++] = unknown;
				continue;
			}
			kp_xgrow(&stack, &stack_cap, nf + nfr, sizeof(*stack));
			for (size_t k = 0; k < nfr; k++)
				stack[nf++] = frame_id(f, p, cache, &fr[k]);
		}
		ok = add_stack(f, stack, nf, values[o->value], decimals, o->into);
	}
	free(cache);
	free(stack);
	return ok;
}

/* The stacks of ns, counts in nanoseconds, into f in microseconds: each
 * stack's sum rounded to the nearest (halves up), in exact integers; a
 * stack under half a microsecond is left out. */
static bool add_micros(struct kp_folded *f, const struct kp_folded *ns, enum kp_fold_into into)
{
	uint32_t limit = kp_folded_fid_limit(ns);
	/* ns's frame ids to f's, UINT32_MAX until interned */
	uint32_t *map = kp_xmalloc((limit ? limit : 1) * sizeof(*map)), *ids = NULL;
	size_t ids_cap = 0;
	unsigned decimals = kp_folded_decimals(ns);
	bool ok = true;

	memset(map, 0xff, (limit ? limit : 1) * sizeof(*map));
	for (size_t i = 0; i < kp_folded_nstacks(ns) && ok; i++) {
		size_t n;
		const uint32_t *src = kp_folded_stack_ids(ns, i, &n, NULL);
		kp_count c = kp_folded_count(ns, i), us = c / 1000 + (c % 1000 >= 500);

		if (!us)
			continue;
		kp_xgrow(&ids, &ids_cap, n ? n : 1, sizeof(*ids));
		for (size_t k = 0; k < n; k++) {
			if (map[src[k]] == UINT32_MAX) {
				size_t len;
				const char *name = kp_folded_frame_name(ns, src[k], &len);

				map[src[k]] = kp_folded_frame_id(f, name, len,
								 kp_folded_frame_kind(src[k]));
			}
			ids[k] = map[src[k]];
		}
		ok = add_stack(f, ids, n, us, decimals, into);
	}
	free(map);
	free(ids);
	return ok;
}

bool kp_fold_add_profile(struct kp_folded *f, const struct kp_profile *p,
			 const struct kp_fold_opts *o)
{
	static const struct kp_fold_opts defaults = {0};
	const struct kp_profile_value_type *vt;
	struct kp_fold_opts sum;
	struct kp_folded *ns;
	bool ok;

	if (!o)
		o = &defaults;
	vt = kp_profile_value_type(p, o->value);
	if (!vt)
		return kp_profile_nsamples(p) == 0;
	if (!kp_fold_micros(p, o->value))
		return add_samples(f, p, o, vt->decimals);
	/* summed first in nanoseconds, stack by stack, then rounded: a stack
	 * of many short waits keeps them all */
	ns = kp_folded_new();
	kp_folded_set_sequence(ns, kp_folded_sequence(f));
	sum = *o;
	sum.into = KP_FOLD_COUNT;
	ok = add_samples(ns, p, &sum, vt->decimals) && add_micros(f, ns, o->into);
	kp_folded_free(ns);
	return ok;
}

struct kp_profile *kp_fold_to_profile(const struct kp_folded *f, const char *countname)
{
	struct kp_profile *p = kp_profile_new();
	uint32_t *locs = NULL, limit = kp_folded_fid_limit(f);
	size_t locs_cap = 0;
	/* by frame id: its location, its string as a root (UINT32_MAX: not
	 * made yet); a frame's name is interned once, not once a stack */
	uint32_t *loc_of = kp_xmalloc(limit * sizeof(*loc_of));
	uint32_t *comm_of = kp_xmalloc(limit * sizeof(*comm_of));

	memset(loc_of, 0xff, limit * sizeof(*loc_of));
	memset(comm_of, 0xff, limit * sizeof(*comm_of));
	kp_profile_add_value_type(p, countname && *countname ? countname : "samples", "count",
				  kp_folded_decimals(f));
	kp_profile_set_meta(p, KP_META_SOURCE, "folded");
	for (size_t i = 0; i < kp_folded_nstacks(f); i++) {
		struct kp_profile_root root = {0};
		size_t n, nl = 0, first = 0;
		const uint32_t *ids = kp_folded_stack_ids(f, i, &n, NULL);
		kp_count count = kp_folded_count(f, i);

		/* a plain first frame is the comm, as kprof and perf write it (an
		 * empty one stays a frame: an empty root is not written back) */
		if (n && (kp_folded_frame_kind(ids[0]) == KP_FRAME_USER ||
			  kp_folded_frame_kind(ids[0]) == KP_FRAME_ROOT)) {
			size_t len;
			const char *name = kp_folded_frame_name(f, ids[0], &len);

			if (len) {
				if (comm_of[ids[0]] == UINT32_MAX)
					comm_of[ids[0]] = kp_profile_intern(p, name, len);
				root.comm = comm_of[ids[0]];
				first = 1;
			}
		}
		kp_xgrow(&locs, &locs_cap, n ? n : 1, sizeof(*locs));
		for (size_t k = first; k < n; k++) {
			size_t len;
			const char *name;

			if (loc_of[ids[k]] == UINT32_MAX) {
				name = kp_folded_frame_name(f, ids[k], &len);
				loc_of[ids[k]] = kp_profile_named_location(
					p, name, len, kp_folded_frame_kind(ids[k]));
			}
			locs[nl++] = loc_of[ids[k]];
		}
		/* the folded table's total fits, so the profile's does too */
		kp_profile_add(p, &root, locs, nl, &count);
	}
	free(locs);
	free(loc_of);
	free(comm_of);
	return p;
}
