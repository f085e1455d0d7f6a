/* Both tables are kp_seqtabs: a location is interned as its four 32-bit
 * words, a stack as [comm, pid, tid, location ids...]. */
#include "profiler/stacktab.h"

#include <stdlib.h>
#include <string.h>

#include "util/seqtab.h"
#include "util/xalloc.h"

#define ROOT_WORDS 3

struct kp_stacktab {
	struct kp_seqtab loc_keys;
	struct kp_loc *locs; /* by location id */
	size_t locs_cap;
	struct kp_seqtab stacks;
	uint64_t *counts; /* by stack index */
	size_t counts_cap;
	uint32_t *key; /* scratch: the stack being added */
	size_t key_cap;
	uint64_t total;
};

struct kp_stacktab *kp_stacktab_new(void)
{
	struct kp_stacktab *t = kp_xcalloc(1, sizeof(*t));

	kp_seqtab_init(&t->loc_keys);
	kp_seqtab_init(&t->stacks);
	return t;
}

void kp_stacktab_free(struct kp_stacktab *t)
{
	if (!t)
		return;
	kp_seqtab_fini(&t->loc_keys);
	kp_seqtab_fini(&t->stacks);
	free(t->locs);
	free(t->counts);
	free(t->key);
	free(t);
}

uint32_t kp_stacktab_loc(struct kp_stacktab *t, const struct kp_loc *loc)
{
	uint32_t w[4] = {(uint32_t)loc->addr, (uint32_t)(loc->addr >> 32), loc->obj, loc->kind};
	bool added;
	size_t id = kp_seqtab_intern(&t->loc_keys, w, 4, &added);

	if (added) {
		kp_xgrow(&t->locs, &t->locs_cap, id + 1, sizeof(*t->locs));
		t->locs[id] = *loc;
	}
	return (uint32_t)id;
}

void kp_stacktab_add(struct kp_stacktab *t, const struct kp_stack_root *root, const uint32_t *locs,
		     size_t n, uint64_t count)
{
	bool added;
	size_t i;

	kp_xgrow(&t->key, &t->key_cap, n + ROOT_WORDS, sizeof(*t->key));
	t->key[0] = root->comm;
	t->key[1] = root->pid;
	t->key[2] = root->tid;
	if (n)
		memcpy(t->key + ROOT_WORDS, locs, n * sizeof(*locs));
	i = kp_seqtab_intern(&t->stacks, t->key, n + ROOT_WORDS, &added);
	if (added) {
		kp_xgrow(&t->counts, &t->counts_cap, i + 1, sizeof(*t->counts));
		t->counts[i] = 0;
	}
	t->counts[i] += count;
	t->total += count;
}

size_t kp_stacktab_nlocs(const struct kp_stacktab *t)
{
	return kp_seqtab_count(&t->loc_keys);
}

const struct kp_loc *kp_stacktab_loc_at(const struct kp_stacktab *t, uint32_t id)
{
	return &t->locs[id];
}

size_t kp_stacktab_nstacks(const struct kp_stacktab *t)
{
	return kp_seqtab_count(&t->stacks);
}

const uint32_t *kp_stacktab_stack(const struct kp_stacktab *t, size_t i, struct kp_stack_root *root,
				  size_t *n, uint64_t *count)
{
	size_t nw;
	const uint32_t *w = kp_seqtab_words(&t->stacks, i, &nw);

	root->comm = w[0];
	root->pid = w[1];
	root->tid = w[2];
	*n = nw - ROOT_WORDS;
	*count = t->counts[i];
	return w + ROOT_WORDS;
}

uint64_t kp_stacktab_total(const struct kp_stacktab *t)
{
	return t->total;
}
