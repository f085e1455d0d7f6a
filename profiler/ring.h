/* profiler/ is sampling (profile/ is the model it fills).
 *
 * kp_ring: reading one perf mmap ring buffer.
 *
 * The contract (after libperf's tools/lib/perf/mmap.c):
 *   kp_ring_read_init(r)   load data_head once (acquire): what the kernel
 *                          has finished writing up to now;
 *   kp_ring_read_event(r)  the next whole record, or NULL when the snapshot
 *                          is used up; a record that wraps past the end of
 *                          the buffer is copied into a scratch buffer, so
 *                          the caller always sees it contiguous; the pointer
 *                          is valid until the next read_event or read_done;
 *   kp_ring_read_done(r)   store data_tail (release): the kernel may now
 *                          overwrite what we have read.
 */
#ifndef KP_PROFILER_RING_H
#define KP_PROFILER_RING_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

struct kp_ring {
	struct perf_event_mmap_page *ctl; /* control page */
	unsigned char *data;		  /* data area, data_size bytes */
	uint64_t data_size;		  /* power of two */
	uint64_t head;			  /* snapshot of data_head */
	uint64_t tail;			  /* our read position */
	unsigned char *scratch;		  /* copy of a wrapped record; owned */
	size_t scratch_cap;
	uint64_t truncated; /* records with an impossible size (ring resynced) */
	void *mmap_base;    /* NULL when not mmap'ed by kp_ring_mmap */
	size_t mmap_len;
};

/* Maps the ring of a perf event fd: 1 control page + data_pages (power of
 * two) pages. Returns 0 or a negative errno. */
int kp_ring_mmap(struct kp_ring *r, int fd, size_t data_pages);
/* Uses memory the caller owns (unit tests): ctl and data stay the caller's. */
void kp_ring_init_mem(struct kp_ring *r, struct perf_event_mmap_page *ctl, unsigned char *data,
		      uint64_t data_size);
void kp_ring_fini(struct kp_ring *r);

/* Returns the number of unread bytes in the new snapshot. */
uint64_t kp_ring_read_init(struct kp_ring *r);
const struct perf_event_header *kp_ring_read_event(struct kp_ring *r);
void kp_ring_read_done(struct kp_ring *r);

#endif
