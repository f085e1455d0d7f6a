#include "profiler/ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/xalloc.h"

int kp_ring_mmap(struct kp_ring *r, int fd, size_t data_pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = (data_pages + 1) * page;
	void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (base == MAP_FAILED)
		return -errno;
	kp_ring_init_mem(r, base, (unsigned char *)base + page, (uint64_t)data_pages * page);
	r->mmap_base = base;
	r->mmap_len = len;
	return 0;
}

void kp_ring_init_mem(struct kp_ring *r, struct perf_event_mmap_page *ctl, unsigned char *data,
		      uint64_t data_size)
{
	memset(r, 0, sizeof(*r));
	r->ctl = ctl;
	r->data = data;
	r->data_size = data_size;
	r->tail = __atomic_load_n(&ctl->data_tail, __ATOMIC_RELAXED);
	r->head = r->tail;
}

void kp_ring_fini(struct kp_ring *r)
{
	if (r->mmap_base)
		munmap(r->mmap_base, r->mmap_len);
	free(r->scratch);
	memset(r, 0, sizeof(*r));
}

uint64_t kp_ring_read_init(struct kp_ring *r)
{
	/* Pairs with the kernel's smp_store_release of data_head: every byte
	 * before head is written once we see head. */
	r->head = __atomic_load_n(&r->ctl->data_head, __ATOMIC_ACQUIRE);
	return r->head - r->tail;
}

const struct perf_event_header *kp_ring_read_event(struct kp_ring *r)
{
	uint64_t avail = r->head - r->tail, mask = r->data_size - 1;
	uint64_t off = r->tail & mask;
	struct perf_event_header hdr;
	unsigned char *p;

	if (avail < sizeof(hdr))
		return NULL;
	/* the header itself may straddle the end */
	if (off + sizeof(hdr) <= r->data_size) {
		memcpy(&hdr, r->data + off, sizeof(hdr));
	} else {
		size_t first = (size_t)(r->data_size - off);

		memcpy(&hdr, r->data + off, first);
		memcpy((unsigned char *)&hdr + first, r->data, sizeof(hdr) - first);
	}
	if (hdr.size < sizeof(hdr) || hdr.size % 8 || hdr.size > avail) {
		/* Cannot happen with a sane kernel (it pads every record to 8
		 * bytes, so records stay aligned for the u64s in them); never
		 * loop on it: drop what is left of this snapshot and count it. */
		r->truncated++;
		r->tail = r->head;
		return NULL;
	}
	if (off + hdr.size <= r->data_size) {
		p = r->data + off;
	} else {
		size_t first = (size_t)(r->data_size - off);

		kp_xgrow(&r->scratch, &r->scratch_cap, hdr.size, 1);
		memcpy(r->scratch, r->data + off, first);
		memcpy(r->scratch + first, r->data, hdr.size - first);
		p = r->scratch;
	}
	r->tail += hdr.size;
	return (const struct perf_event_header *)(void *)p;
}

void kp_ring_read_done(struct kp_ring *r)
{
	/* Our reads of the data must complete before the kernel sees the new
	 * tail and reuses the space. */
	__atomic_store_n(&r->ctl->data_tail, r->tail, __ATOMIC_RELEASE);
}
