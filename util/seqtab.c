#include "util/seqtab.h"

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/xalloc.h"

void kp_seqtab_init(struct kp_seqtab *t)
{
	memset(t, 0, sizeof(*t));
	t->nslots = 1024;
	t->slots = kp_xcalloc(t->nslots, sizeof(*t->slots));
}

void kp_seqtab_fini(struct kp_seqtab *t)
{
	free(t->words);
	free(t->seqs);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static uint32_t hash_words(const uint32_t *w, size_t n)
{
	return (uint32_t)kp_hash_bytes(w, n * sizeof(*w), 0x6b70726f66ULL);
}

bool kp_seqtab_equal(const struct kp_seqtab *t, size_t i, const uint32_t *w, size_t n)
{
	const struct kp_seqtab_entry *e = &t->seqs[i];

	return e->n == n && (n == 0 || memcmp(t->words + e->off, w, n * sizeof(*w)) == 0);
}

static void rehash(struct kp_seqtab *t)
{
	size_t nslots = t->nslots * 2, mask = nslots - 1;
	struct kp_seqtab_slot *slots = kp_xcalloc(nslots, sizeof(*slots));

	for (size_t i = 0; i < t->nseqs; i++) {
		size_t j = t->seqs[i].hash & mask;

		while (slots[j].id)
			j = (j + 1) & mask;
		slots[j] = (struct kp_seqtab_slot){(uint32_t)(i + 1), t->seqs[i].hash};
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
}

static size_t add(struct kp_seqtab *t, const uint32_t *w, size_t n, uint32_t h)
{
	struct kp_seqtab_entry *e;

	/* + 1: words is never NULL, so words + off is a valid pointer for an
	 * empty sequence too (NULL + 0 is undefined) */
	kp_xgrow(&t->words, &t->words_cap, t->nwords + n + 1, sizeof(*t->words));
	if (n)
		memcpy(t->words + t->nwords, w, n * sizeof(*w));
	kp_xgrow(&t->seqs, &t->seqs_cap, t->nseqs + 1, sizeof(*t->seqs));
	e = &t->seqs[t->nseqs];
	e->off = t->nwords;
	e->n = (uint32_t)n;
	e->hash = h;
	t->nwords += n;
	return t->nseqs++;
}

size_t kp_seqtab_intern(struct kp_seqtab *t, const uint32_t *w, size_t n, bool *added)
{
	uint32_t h = hash_words(w, n);
	size_t mask = t->nslots - 1, j, i;

	for (j = h & mask; t->slots[j].id; j = (j + 1) & mask) {
		if (t->slots[j].hash != h)
			continue;
		i = t->slots[j].id - 1;
		if (kp_seqtab_equal(t, i, w, n)) {
			if (added)
				*added = false;
			return i;
		}
	}
	i = add(t, w, n, h);
	t->slots[j] = (struct kp_seqtab_slot){(uint32_t)(i + 1), h};
	if (t->nseqs * 4 > t->nslots * 3)
		rehash(t);
	if (added)
		*added = true;
	return i;
}

size_t kp_seqtab_append(struct kp_seqtab *t, const uint32_t *w, size_t n)
{
	return add(t, w, n, hash_words(w, n));
}
