/* Fast non-cryptographic hashing for the in-memory tables. */
#ifndef KP_UTIL_HASH_H
#define KP_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t kp_hash_bytes(const void *data, size_t len, uint64_t seed);

static inline uint64_t kp_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif
