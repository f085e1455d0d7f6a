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
	m->has_reserved[0] = m->has_reserved[1] = false;
}

/* The side slot of a reserved key (0: UINT64_MAX, 1: UINT64_MAX - 1), or -1. */
static int reserved(uint64_t key)
{
	return key == EMPTY ? 0 : key == TOMB ? 1 : -1;
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
	int r = reserved(key);
	size_t i;

	if (r >= 0) {
		if (m->has_reserved[r])
			*val = m->reserved_val[r];
		return m->has_reserved[r];
	}
	i = find(m, key);
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
	n.has_reserved[0] = m->has_reserved[0];
	n.has_reserved[1] = m->has_reserved[1];
	n.reserved_val[0] = m->reserved_val[0];
	n.reserved_val[1] = m->reserved_val[1];
	*m = n;
}

void kp_u64map_put(struct kp_u64map *m, uint64_t key, uint64_t val)
{
	size_t mask = m->nslots - 1, i = kp_hash_u64(key) & mask, tomb = SIZE_MAX;
	int r = reserved(key);

	if (r >= 0) {
		m->has_reserved[r] = true;
		m->reserved_val[r] = val;
		return;
	}
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
	int r = reserved(key);
	size_t i;

	if (r >= 0) {
		bool had = m->has_reserved[r];

		m->has_reserved[r] = false;
		return had;
	}
	i = find(m, key);
	if (m->keys[i] != key)
		return false;
	m->keys[i] = TOMB;
	m->live--;
	return true;
}

bool kp_u64map_next(const struct kp_u64map *m, size_t *pos, uint64_t *key, uint64_t *val)
{
	/* the slots first, then the two reserved keys */
	for (; *pos < m->nslots; (*pos)++) {
		if (m->keys[*pos] != EMPTY && m->keys[*pos] != TOMB) {
			*key = m->keys[*pos];
			*val = m->vals[(*pos)++];
			return true;
		}
	}
	for (; *pos < m->nslots + 2; (*pos)++) {
		int r = (int)(*pos - m->nslots);

		if (m->has_reserved[r]) {
			*key = r == 0 ? EMPTY : TOMB;
			*val = m->reserved_val[r];
			(*pos)++;
			return true;
		}
	}
	return false;
}
