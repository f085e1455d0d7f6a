/* kp_u64map: a map from uint64 keys to uint64 values (open addressing,
 * linear probing, tombstones on delete). Keys are any value but the two
 * reserved ones below. */
#ifndef KP_UTIL_U64MAP_H
#define KP_UTIL_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kp_u64map {
	uint64_t *keys;
	uint64_t *vals;
	size_t nslots, used, live;
};

void kp_u64map_init(struct kp_u64map *m);
void kp_u64map_fini(struct kp_u64map *m);
/* Returns true and sets *val when key is present. */
bool kp_u64map_get(const struct kp_u64map *m, uint64_t key, uint64_t *val);
void kp_u64map_put(struct kp_u64map *m, uint64_t key, uint64_t val);
bool kp_u64map_del(struct kp_u64map *m, uint64_t key);
static inline size_t kp_u64map_count(const struct kp_u64map *m)
{
	return m->live;
}

#endif
