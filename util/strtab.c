#include "util/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/xalloc.h"

/* Strings live in fixed chunks so pointers stay valid as the table grows. */
#define CHUNK_SIZE (256 * 1024)

struct entry {
	const char *str;
	uint32_t len;
	uint32_t hash32;
};

struct kp_strtab {
	struct entry *entries; /* index = id; entries[0] unused */
	size_t nentries, cap;
	uint32_t *slots; /* open addressing: id or 0 */
	size_t nslots;
	char **chunks;
	size_t nchunks, chunks_cap;
	size_t chunk_used, chunk_size;
};

struct kp_strtab *kp_strtab_new(void)
{
	struct kp_strtab *st = kp_xcalloc(1, sizeof(*st));

	st->nslots = 1024;
	st->slots = kp_xcalloc(st->nslots, sizeof(*st->slots));
	kp_xgrow(&st->entries, &st->cap, 1, sizeof(*st->entries));
	st->nentries = 1;
	return st;
}

void kp_strtab_free(struct kp_strtab *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->nchunks; i++)
		free(st->chunks[i]);
	free(st->chunks);
	free(st->slots);
	free(st->entries);
	free(st);
}

static char *arena_copy(struct kp_strtab *st, const char *s, size_t len)
{
	char *p;

	if (!st->nchunks || st->chunk_used + len + 1 > st->chunk_size) {
		size_t size = len + 1 > CHUNK_SIZE ? len + 1 : CHUNK_SIZE;

		kp_xgrow(&st->chunks, &st->chunks_cap, st->nchunks + 1, sizeof(*st->chunks));
		st->chunks[st->nchunks++] = kp_xmalloc(size);
		st->chunk_used = 0;
		st->chunk_size = size;
	}
	p = st->chunks[st->nchunks - 1] + st->chunk_used;
	memcpy(p, s, len);
	p[len] = '\0';
	st->chunk_used += len + 1;
	return p;
}

static void rehash(struct kp_strtab *st)
{
	size_t nslots = st->nslots * 2, mask = nslots - 1;
	uint32_t *slots = kp_xcalloc(nslots, sizeof(*slots));

	for (uint32_t id = 1; id < st->nentries; id++) {
		size_t i = st->entries[id].hash32 & mask;

		while (slots[i])
			i = (i + 1) & mask;
		slots[i] = id;
	}
	free(st->slots);
	st->slots = slots;
	st->nslots = nslots;
}

static uint32_t lookup(const struct kp_strtab *st, const char *s, size_t len, uint32_t h,
		       size_t *slot)
{
	size_t mask = st->nslots - 1, i = h & mask;

	for (;;) {
		uint32_t id = st->slots[i];
		const struct entry *e;

		if (!id) {
			*slot = i;
			return 0;
		}
		e = &st->entries[id];
		if (e->hash32 == h && e->len == len && memcmp(e->str, s, len) == 0)
			return id;
		i = (i + 1) & mask;
	}
}

uint32_t kp_strtab_find(const struct kp_strtab *st, const char *s, size_t len)
{
	size_t slot;

	return lookup(st, s, len, (uint32_t)kp_hash_bytes(s, len, 0), &slot);
}

uint32_t kp_strtab_intern(struct kp_strtab *st, const char *s, size_t len)
{
	uint32_t h = (uint32_t)kp_hash_bytes(s, len, 0);
	size_t slot;
	uint32_t id = lookup(st, s, len, h, &slot);
	struct entry *e;

	if (id)
		return id;
	id = (uint32_t)st->nentries;
	kp_xgrow(&st->entries, &st->cap, st->nentries + 1, sizeof(*st->entries));
	e = &st->entries[st->nentries++];
	e->str = arena_copy(st, s, len);
	e->len = (uint32_t)len;
	e->hash32 = h;
	st->slots[slot] = id;
	if (st->nentries * 4 > st->nslots * 3)
		rehash(st);
	return id;
}

const char *kp_strtab_str(const struct kp_strtab *st, uint32_t id)
{
	return id && id < st->nentries ? st->entries[id].str : "";
}

size_t kp_strtab_len(const struct kp_strtab *st, uint32_t id)
{
	return id && id < st->nentries ? st->entries[id].len : 0;
}

uint32_t kp_strtab_count(const struct kp_strtab *st)
{
	return (uint32_t)(st->nentries - 1);
}
