/* The ring reader over a synthetic buffer: records that wrap, headers that
 * straddle the end, a corrupt size, and the tail published on read_done. */
#include <stdint.h>
#include <stdlib.h>

#include "kp_test.h"
#include "profiler/ring.h"

#define SIZE 256

static struct perf_event_mmap_page ctl;
static unsigned char data[SIZE];

/* Writes a record of total size `size` whose payload bytes are `fill`, at
 * logical position pos (wrapping), and returns the new position. */
static uint64_t put(uint64_t pos, uint16_t size, unsigned char fill)
{
	unsigned char rec[SIZE];
	struct perf_event_header h = {.type = PERF_RECORD_SAMPLE, .misc = 0, .size = size};

	memcpy(rec, &h, sizeof(h));
	memset(rec + sizeof(h), fill, size - sizeof(h));
	for (uint16_t i = 0; i < size; i++)
		data[(pos + i) % SIZE] = rec[i];
	return pos + size;
}

static int payload_ok(const struct perf_event_header *h, unsigned char fill)
{
	const unsigned char *p = (const unsigned char *)h;

	for (uint16_t i = sizeof(*h); i < h->size; i++)
		if (p[i] != fill)
			return 0;
	return 1;
}

static void test_wrap(void)
{
	struct kp_ring r;
	const struct perf_event_header *h;
	uint64_t pos = 200; /* near the end: the second record wraps */

	memset(&ctl, 0, sizeof(ctl));
	ctl.data_tail = ctl.data_head = pos;
	kp_ring_init_mem(&r, &ctl, data, SIZE);
	pos = put(pos, 40, 0xaa); /* 200..240 */
	pos = put(pos, 48, 0xbb); /* 240..288: wraps */
	pos = put(pos, 16, 0xcc); /* 288..304 */
	ctl.data_head = pos;
	CHECK_EQ_INT(kp_ring_read_init(&r), 104);
	h = kp_ring_read_event(&r);
	CHECK(h && h->size == 40 && payload_ok(h, 0xaa));
	h = kp_ring_read_event(&r);
	CHECK(h && h->size == 48 && payload_ok(h, 0xbb));
	CHECK(h && (const unsigned char *)h == r.scratch); /* copied contiguous */
	h = kp_ring_read_event(&r);
	CHECK(h && h->size == 16 && payload_ok(h, 0xcc));
	CHECK(kp_ring_read_event(&r) == NULL);
	CHECK_EQ_INT(ctl.data_tail, 200); /* not published yet */
	kp_ring_read_done(&r);
	CHECK_EQ_INT(ctl.data_tail, 304);
	kp_ring_fini(&r);
}

static void test_header_straddles(void)
{
	struct kp_ring r;
	const struct perf_event_header *h;
	uint64_t pos = SIZE - 4; /* the 8-byte header itself is split */

	memset(&ctl, 0, sizeof(ctl));
	ctl.data_tail = ctl.data_head = pos;
	kp_ring_init_mem(&r, &ctl, data, SIZE);
	pos = put(pos, 24, 0x11);
	ctl.data_head = pos;
	kp_ring_read_init(&r);
	h = kp_ring_read_event(&r);
	CHECK(h && h->size == 24 && payload_ok(h, 0x11));
	kp_ring_read_done(&r);
	kp_ring_fini(&r);
}

static void test_partial_and_corrupt(void)
{
	struct kp_ring r;
	uint64_t pos = 0;

	memset(&ctl, 0, sizeof(ctl));
	kp_ring_init_mem(&r, &ctl, data, SIZE);
	pos = put(pos, 32, 0x22);
	/* the kernel publishes whole records only: a head inside a record
	 * means the ring is corrupt; the snapshot is dropped and counted,
	 * never read past */
	ctl.data_head = 20;
	kp_ring_read_init(&r);
	CHECK(kp_ring_read_event(&r) == NULL);
	CHECK_EQ_INT(r.truncated, 1);
	CHECK_EQ_INT(r.tail, 20);
	kp_ring_fini(&r);
	memset(&ctl, 0, sizeof(ctl));
	kp_ring_init_mem(&r, &ctl, data, SIZE);
	ctl.data_head = pos;
	kp_ring_read_init(&r);
	CHECK(kp_ring_read_event(&r) != NULL);
	/* a header with size 0 must not loop forever: the snapshot is dropped */
	memset(data + pos, 0, 8);
	ctl.data_head = pos + 64;
	kp_ring_read_init(&r);
	CHECK(kp_ring_read_event(&r) == NULL);
	CHECK_EQ_INT(r.truncated, 1);
	CHECK_EQ_INT(r.tail, pos + 64);
	/* and the reader goes on after it */
	kp_ring_read_done(&r);
	put(pos + 64, 16, 0x33);
	ctl.data_head = pos + 80;
	kp_ring_read_init(&r);
	CHECK(kp_ring_read_event(&r) != NULL);
	kp_ring_fini(&r);
}

/* A size that is not a multiple of 8 is corrupt too: the kernel pads
 * every record, and reading on would hand out misaligned records (UB as
 * soon as a u64 in them is read; found by tests/fuzz/fuzz_record). */
static void test_unpadded_size(void)
{
	struct kp_ring r;
	uint64_t pos = 0;

	memset(&ctl, 0, sizeof(ctl));
	kp_ring_init_mem(&r, &ctl, data, SIZE);
	pos = put(pos, 20, 0x44);
	pos = put(pos, 16, 0x55);
	ctl.data_head = pos;
	kp_ring_read_init(&r);
	CHECK(kp_ring_read_event(&r) == NULL);
	CHECK_EQ_INT(r.truncated, 1);
	CHECK_EQ_INT(r.tail, pos);
	kp_ring_read_done(&r);
	kp_ring_fini(&r);
}

KP_TEST_MAIN(test_wrap, test_header_straddles, test_partial_and_corrupt, test_unpadded_size)
