#include "symbolize/idmap.h"

#include <stdlib.h>

#include "util/xalloc.h"

void kp_idmap_fini(struct kp_idmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->nslots = m->n = 0;
}

uint32_t kp_idmap_find(const struct kp_idmap *m, uint64_t hash, bool (*eq)(void *ctx, uint32_t id),
		       void *ctx)
{
	size_t mask, i;

	if (!m->nslots)
		return 0;
	mask = m->nslots - 1;
	for (i = hash & mask; m->slots[i].id; i = (i + 1) & mask) {
		if (m->slots[i].hash == hash && eq(ctx, m->slots[i].id))
			return m->slots[i].id;
	}
	return 0;
}

static void insert(struct kp_idmap_slot *slots, size_t nslots, uint64_t hash, uint32_t id)
{
	size_t mask = nslots - 1, i = hash & mask;

	while (slots[i].id)
		i = (i + 1) & mask;
	slots[i].hash = hash;
	slots[i].id = id;
}

void kp_idmap_put(struct kp_idmap *m, uint64_t hash, uint32_t id)
{
	if ((m->n + 1) * 4 > m->nslots * 3) {
		size_t nslots = m->nslots ? m->nslots * 2 : 64;
		struct kp_idmap_slot *slots = kp_xcalloc(nslots, sizeof(*slots));

		for (size_t i = 0; i < m->nslots; i++) {
			if (m->slots[i].id)
				insert(slots, nslots, m->slots[i].hash, m->slots[i].id);
		}
		free(m->slots);
		m->slots = slots;
		m->nslots = nslots;
	}
	insert(m->slots, m->nslots, hash, id);
	m->n++;
}
