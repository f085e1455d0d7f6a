#include "util/u64map.h"

#include <stdlib.h>

#include "util/hash.h"
#include "util/xalloc.h"

#define EMPTY UINT64_MAX
#define TOMB  (UINT64_MAX - 1)

void kp_u64map_init(struct kp_u64map *m)
{
	m->nslots = 64;
	m->keys = kp_xmalloc(m->nslots * sizeof(*m->keys));
	m->vals = kp_xmalloc(m->nslots * sizeof(*m->vals));
	for (size_t i = 0; i < m->nslots; i++)
		m->keys[i] = EMPTY;
	m->used = m->live = 0;
}

void kp_u64map_fini(struct kp_u64map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = m->vals = NULL;
	m->nslots = m->used = m->live = 0;
}

static size_t find(const struct kp_u64map *m, uint64_t key)
{
	size_t mask = m->nslots - 1, i = kp_hash_u64(key) & mask;

	while (m->keys[i] != EMPTY && m->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

bool kp_u64map_get(const struct kp_u64map *m, uint64_t key, uint64_t *val)
{
	size_t i = find(m, key);

	if (m->keys[i] != key)
		return false;
	*val = m->vals[i];
	return true;
}

static void resize(struct kp_u64map *m, size_t nslots)
{
	struct kp_u64map n = {
		.keys = kp_xmalloc(nslots * sizeof(uint64_t)),
		.vals = kp_xmalloc(nslots * sizeof(uint64_t)),
		.nslots = nslots,
	};

	for (size_t i = 0; i < nslots; i++)
		n.keys[i] = EMPTY;
	for (size_t i = 0; i < m->nslots; i++) {
		if (m->keys[i] == EMPTY || m->keys[i] == TOMB)
			continue;
		size_t j = find(&n, m->keys[i]);

		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
		n.used++;
		n.live++;
	}
	free(m->keys);
	free(m->vals);
	*m = n;
}

void kp_u64map_put(struct kp_u64map *m, uint64_t key, uint64_t val)
{
	size_t mask = m->nslots - 1, i = kp_hash_u64(key) & mask, tomb = SIZE_MAX;

	while (m->keys[i] != EMPTY && m->keys[i] != key) {
		if (m->keys[i] == TOMB && tomb == SIZE_MAX)
			tomb = i;
		i = (i + 1) & mask;
	}
	if (m->keys[i] == key) {
		m->vals[i] = val;
		return;
	}
	if (tomb != SIZE_MAX) {
		i = tomb;
	} else {
		m->used++;
	}
	m->keys[i] = key;
	m->vals[i] = val;
	m->live++;
	if (m->used * 4 > m->nslots * 3)
		resize(m, m->live * 4 > m->nslots ? m->nslots * 2 : m->nslots);
}

bool kp_u64map_del(struct kp_u64map *m, uint64_t key)
{
	size_t i = find(m, key);

	if (m->keys[i] != key)
		return false;
	m->keys[i] = TOMB;
	m->live--;
	return true;
}
