/* kp_idmap: open-addressing table from a 64-bit hash to small ids (>= 1),
 * the caller resolving collisions with an equality callback. Internal to
 * symbolize/. */
#ifndef KP_SYMBOLIZE_IDMAP_H
#define KP_SYMBOLIZE_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kp_idmap_slot {
	uint64_t hash;
	uint32_t id; /* 0: empty */
};

struct kp_idmap {
	struct kp_idmap_slot *slots;
	size_t nslots, n;
};

/* A zeroed struct is an empty map. */
void kp_idmap_fini(struct kp_idmap *m);
/* Returns the first id with this hash for which eq(ctx, id) is true, or 0. */
uint32_t kp_idmap_find(const struct kp_idmap *m, uint64_t hash, bool (*eq)(void *ctx, uint32_t id),
		       void *ctx);
/* Adds (hash, id); duplicates are the caller's business. */
void kp_idmap_put(struct kp_idmap *m, uint64_t hash, uint32_t id);

#endif
