/* kp_checksum: the integrity check of the files kprof keeps in its cache,
 * XXH3 (64 bits, seed 0) from libxxhash: about 20 GB/s, so verifying a
 * file each time it is used costs microseconds. It catches damage (a
 * flipped bit, a torn write, a truncation), not an attacker: nobody else
 * can write kprof's private cache directory. `xxhsum -H3` computes the
 * same value. */
#ifndef KP_UTIL_CHECKSUM_H
#define KP_UTIL_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* The checksum of p[0..n). */
uint64_t kp_checksum(const void *p, size_t n);

/* The same over bytes fed in pieces (a streamed file). */
struct kp_checksum_stream;

/* A new stream (never NULL); free with kp_checksum_stream_free. */
struct kp_checksum_stream *kp_checksum_stream_new(void);
void kp_checksum_stream_free(struct kp_checksum_stream *s);
void kp_checksum_stream_update(struct kp_checksum_stream *s, const void *p, size_t n);
/* The checksum of everything fed so far (the stream can go on). */
uint64_t kp_checksum_stream_digest(const struct kp_checksum_stream *s);

#endif
