#include "profiler/stacktab.h"

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/xalloc.h"

struct stack {
	uint64_t count;
	uint64_t hash;
	size_t off; /* into words: comm, pid, tid, locs... */
	uint32_t n; /* number of locations */
};

struct kp_stacktab {
	struct kp_loc *locs;
	size_t nlocs, locs_cap;
	uint32_t *loc_slots; /* loc id + 1, 0 = empty */
	size_t loc_nslots;

	uint32_t *words;
	size_t nwords, words_cap;
	struct stack *stacks;
	size_t nstacks, stacks_cap;
	uint32_t *stack_slots; /* stack index + 1 */
	size_t stack_nslots;
	uint64_t total;
};

struct kp_stacktab *kp_stacktab_new(void)
{
	struct kp_stacktab *t = kp_xcalloc(1, sizeof(*t));

	t->loc_nslots = 1024;
	t->loc_slots = kp_xcalloc(t->loc_nslots, sizeof(uint32_t));
	t->stack_nslots = 1024;
	t->stack_slots = kp_xcalloc(t->stack_nslots, sizeof(uint32_t));
	return t;
}

void kp_stacktab_free(struct kp_stacktab *t)
{
	if (!t)
		return;
	free(t->locs);
	free(t->loc_slots);
	free(t->words);
	free(t->stacks);
	free(t->stack_slots);
	free(t);
}

static uint64_t loc_hash(const struct kp_loc *l)
{
	return kp_hash_u64(l->addr ^ kp_hash_u64(((uint64_t)l->obj << 8) | l->kind));
}

static void loc_rehash(struct kp_stacktab *t)
{
	size_t nslots = t->loc_nslots * 2, mask = nslots - 1;
	uint32_t *slots = kp_xcalloc(nslots, sizeof(uint32_t));

	for (size_t id = 0; id < t->nlocs; id++) {
		size_t i = loc_hash(&t->locs[id]) & mask;

		while (slots[i])
			i = (i + 1) & mask;
		slots[i] = (uint32_t)id + 1;
	}
	free(t->loc_slots);
	t->loc_slots = slots;
	t->loc_nslots = nslots;
}

uint32_t kp_stacktab_loc(struct kp_stacktab *t, const struct kp_loc *loc)
{
	size_t mask = t->loc_nslots - 1, i = loc_hash(loc) & mask;
	uint32_t id;

	while (t->loc_slots[i]) {
		const struct kp_loc *l = &t->locs[t->loc_slots[i] - 1];

		if (l->addr == loc->addr && l->obj == loc->obj && l->kind == loc->kind)
			return t->loc_slots[i] - 1;
		i = (i + 1) & mask;
	}
	id = (uint32_t)t->nlocs;
	kp_xgrow(&t->locs, &t->locs_cap, t->nlocs + 1, sizeof(*t->locs));
	t->locs[t->nlocs++] = *loc;
	t->loc_slots[i] = id + 1;
	if (t->nlocs * 2 > t->loc_nslots)
		loc_rehash(t);
	return id;
}

static uint64_t stack_hash(const uint32_t *words, size_t n)
{
	return kp_hash_bytes(words, n * sizeof(uint32_t), 0x6b70726f66);
}

static void stack_rehash(struct kp_stacktab *t)
{
	size_t nslots = t->stack_nslots * 2, mask = nslots - 1;
	uint32_t *slots = kp_xcalloc(nslots, sizeof(uint32_t));

	for (size_t s = 0; s < t->nstacks; s++) {
		size_t i = t->stacks[s].hash & mask;

		while (slots[i])
			i = (i + 1) & mask;
		slots[i] = (uint32_t)s + 1;
	}
	free(t->stack_slots);
	t->stack_slots = slots;
	t->stack_nslots = nslots;
}

void kp_stacktab_add(struct kp_stacktab *t, const struct kp_stack_root *root, const uint32_t *locs,
		     size_t n, uint64_t count)
{
	size_t nw = n + 3, mask, i;
	uint32_t *key;
	uint64_t h;
	struct stack *s;

	/* build the key at the end of the word arena; keep it only if new */
	kp_xgrow(&t->words, &t->words_cap, t->nwords + nw, sizeof(uint32_t));
	key = t->words + t->nwords;
	key[0] = root->comm;
	key[1] = root->pid;
	key[2] = root->tid;
	memcpy(key + 3, locs, n * sizeof(uint32_t));
	h = stack_hash(key, nw);
	t->total += count;

	mask = t->stack_nslots - 1;
	for (i = h & mask; t->stack_slots[i]; i = (i + 1) & mask) {
		s = &t->stacks[t->stack_slots[i] - 1];
		if (s->hash == h && s->n == n &&
		    memcmp(t->words + s->off, key, nw * sizeof(uint32_t)) == 0) {
			s->count += count;
			return;
		}
	}
	kp_xgrow(&t->stacks, &t->stacks_cap, t->nstacks + 1, sizeof(*t->stacks));
	s = &t->stacks[t->nstacks++];
	s->count = count;
	s->hash = h;
	s->off = t->nwords;
	s->n = (uint32_t)n;
	t->nwords += nw;
	t->stack_slots[i] = (uint32_t)t->nstacks;
	if (t->nstacks * 2 > t->stack_nslots)
		stack_rehash(t);
}

size_t kp_stacktab_nlocs(const struct kp_stacktab *t)
{
	return t->nlocs;
}

const struct kp_loc *kp_stacktab_loc_at(const struct kp_stacktab *t, uint32_t id)
{
	return &t->locs[id];
}

size_t kp_stacktab_nstacks(const struct kp_stacktab *t)
{
	return t->nstacks;
}

const uint32_t *kp_stacktab_stack(const struct kp_stacktab *t, size_t i, struct kp_stack_root *root,
				  size_t *n, uint64_t *count)
{
	const struct stack *s = &t->stacks[i];
	const uint32_t *w = t->words + s->off;

	root->comm = w[0];
	root->pid = w[1];
	root->tid = w[2];
	*n = s->n;
	*count = s->count;
	return w + 3;
}

uint64_t kp_stacktab_total(const struct kp_stacktab *t)
{
	return t->total;
}
