#include "util/hash.h"

#include <string.h>

/* 8 bytes at a time, mixed with a 64-bit multiply (a simplified wyhash-like
 * scheme); good enough spread for open-addressing tables. */
uint64_t kp_hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ULL);
	uint64_t w;

	while (len >= 8) {
		memcpy(&w, p, 8);
		h = (h ^ kp_hash_u64(w)) * 0x9e3779b97f4a7c15ULL;
		p += 8;
		len -= 8;
	}
	w = 0;
	if (len) /* p may be NULL for an empty key */
		memcpy(&w, p, len);
	h = (h ^ kp_hash_u64(w ^ len)) * 0x9e3779b97f4a7c15ULL;
	return kp_hash_u64(h);
}
