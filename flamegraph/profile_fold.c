#include "flamegraph/profile_fold.h"

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

bool kp_folded_add_profile(struct kp_folded *f, const struct kp_profile *p,
			   const struct kp_fold_opts *o)
{
	static const struct kp_fold_opts defaults = {0};
	const struct kp_profile_value_type *vt;
	struct kp_frame *stack = NULL;
	size_t stack_cap = 0;
	char rootbuf[160];
	bool ok = true;

	if (!o)
		o = &defaults;
	vt = kp_profile_value_type(p, o->value);
	if (!vt)
		return kp_profile_nsamples(p) == 0;
	for (size_t i = 0; i < kp_profile_nsamples(p) && ok; i++) {
		struct kp_profile_root root;
		const kp_count *values;
		size_t n, nf = 0;
		const uint32_t *locs = kp_profile_sample(p, i, &root, &n, &values);

		kp_xgrow(&stack, &stack_cap, n + 1, sizeof(*stack));
		if (root.comm || root.pid)
			stack[nf++] = (struct kp_frame){
				kp_fold_root_name(p, &root, o, rootbuf, sizeof(rootbuf)),
				KP_FRAME_ROOT};
		for (size_t j = 0; j < n; j++) {
			size_t nfr;
			const struct kp_profile_frame *fr =
				kp_profile_frames(p, locs[j], &nfr, NULL);

			if (!fr) {
				kp_xgrow(&stack, &stack_cap, nf + 1, sizeof(*stack));
				stack[nf++] = (struct kp_frame){"[unknown]", KP_FRAME_USER};
				continue;
			}
			kp_xgrow(&stack, &stack_cap, nf + nfr, sizeof(*stack));
			for (size_t k = 0; k < nfr; k++) {
				const struct kp_profile_function *fn =
					kp_profile_function_at(p, fr[k].function);

				stack[nf++] = (struct kp_frame){kp_profile_str(p, fn->name, NULL),
								fr[k].kind};
			}
		}
		ok = kp_folded_add_count(f, stack, nf, values[o->value], vt->decimals);
	}
	free(stack);
	return ok;
}

struct kp_profile *kp_profile_from_folded(const struct kp_folded *f, const char *countname)
{
	struct kp_profile *p = kp_profile_new();
	uint32_t *locs = NULL;
	size_t locs_cap = 0;

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
				root.comm = kp_profile_intern(p, name, len);
				first = 1;
			}
		}
		kp_xgrow(&locs, &locs_cap, n ? n : 1, sizeof(*locs));
		for (size_t k = first; k < n; k++) {
			size_t len;
			const char *name = kp_folded_frame_name(f, ids[k], &len);

			locs[nl++] = kp_profile_named_location(p, name, len,
							       kp_folded_frame_kind(ids[k]));
		}
		/* the folded table's total fits, so the profile's does too */
		kp_profile_add(p, &root, locs, nl, &count);
	}
	free(locs);
	return p;
}
