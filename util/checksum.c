#include "util/checksum.h"

#include <stdlib.h>
#include <xxhash.h>

#include "util/xalloc.h"

struct kp_checksum_stream {
	XXH3_state_t *state;
};

uint64_t kp_checksum(const void *p, size_t n)
{
	return XXH3_64bits(p, n);
}

struct kp_checksum_stream *kp_checksum_stream_new(void)
{
	struct kp_checksum_stream *s = kp_xmalloc(sizeof(*s));

	s->state = XXH3_createState();
	if (!s->state) /* malloc failed: as kp_xmalloc does */
		kp_oom(0);
	XXH3_64bits_reset(s->state);
	return s;
}

void kp_checksum_stream_free(struct kp_checksum_stream *s)
{
	if (!s)
		return;
	XXH3_freeState(s->state);
	free(s);
}

void kp_checksum_stream_update(struct kp_checksum_stream *s, const void *p, size_t n)
{
	XXH3_64bits_update(s->state, p, n);
}

uint64_t kp_checksum_stream_digest(const struct kp_checksum_stream *s)
{
	return XXH3_64bits_digest(s->state);
}
