/* kp_u64map: a map from uint64 keys to uint64 values (open addressing,
 * linear probing, tombstones on delete). Any key may be used: the two
 * values the slots reserve (empty, deleted) are kept beside the table. */
#ifndef KP_UTIL_U64MAP_H
#define KP_UTIL_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kp_u64map {
	uint64_t *keys;
	uint64_t *vals;
	size_t nslots, used, live;
	/* the keys UINT64_MAX and UINT64_MAX - 1, which mark slots */
	bool has_reserved[2];
	uint64_t reserved_val[2];
};

void kp_u64map_init(struct kp_u64map *m);
void kp_u64map_fini(struct kp_u64map *m);
/* Returns true and sets *val when key is present. */
bool kp_u64map_get(const struct kp_u64map *m, uint64_t key, uint64_t *val);
void kp_u64map_put(struct kp_u64map *m, uint64_t key, uint64_t val);
bool kp_u64map_del(struct kp_u64map *m, uint64_t key);
/* Iteration: start with *pos = 0; each call gives the next entry and
 * returns true, or false after the last. No put or del meanwhile. */
bool kp_u64map_next(const struct kp_u64map *m, size_t *pos, uint64_t *key, uint64_t *val);
static inline size_t kp_u64map_count(const struct kp_u64map *m)
{
	return m->live + m->has_reserved[0] + m->has_reserved[1];
}

#endif
