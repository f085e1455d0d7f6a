/* The record queue: records pushed from several rings out of time order
 * come back oldest first, ties in arrival order, only those older than the
 * limit, and the rest survive (bytes intact) for the next flush. */
#include <stdint.h>

#include "kp_test.h"
#include "profiler/recqueue.h"

struct rec {
	struct perf_event_header h;
	uint64_t id;
	unsigned char pad[24]; /* records of different sizes */
};

static uint64_t seen[64];
static size_t nseen;

static void collect(void *arg, const struct perf_event_header *hdr)
{
	const struct rec *r = (const void *)hdr;

	(void)arg;
	/* the bytes must be the ones pushed */
	CHECK(hdr->size == sizeof(r->h) + sizeof(r->id) + (r->id % 3) * 8);
	if (nseen < 64)
		seen[nseen++] = r->id;
}

static void push(struct kp_recqueue *q, uint64_t id, uint64_t time)
{
	struct rec r = {.h = {.type = PERF_RECORD_SAMPLE,
			      .size = (uint16_t)(sizeof(r.h) + sizeof(r.id) + (id % 3) * 8)},
			.id = id};

	kp_recqueue_push(q, &r.h, time);
}

static void test_order_and_limit(void)
{
	struct kp_recqueue q;

	kp_recqueue_init(&q);
	/* ring of CPU 0, then ring of CPU 1: each in order, not with each other */
	push(&q, 1, 100);
	push(&q, 2, 300);
	push(&q, 3, 500);
	push(&q, 4, 200); /* e.g. the MMAP2 a later sample on CPU 0 needs */
	push(&q, 5, 300); /* same time as 2: arrives after it */
	push(&q, 6, 900);
	nseen = 0;
	kp_recqueue_flush(&q, 400, collect, NULL);
	CHECK_EQ_INT(nseen, 4);
	CHECK(seen[0] == 1 && seen[1] == 4 && seen[2] == 2 && seen[3] == 5);
	CHECK_EQ_INT(kp_recqueue_len(&q), 2);
	/* the survivors keep their bytes across the buffer swap */
	push(&q, 7, 450);
	nseen = 0;
	kp_recqueue_flush(&q, UINT64_MAX, collect, NULL);
	CHECK_EQ_INT(nseen, 3);
	CHECK(seen[0] == 7 && seen[1] == 3 && seen[2] == 6);
	CHECK_EQ_INT(kp_recqueue_len(&q), 0);
	/* nothing queued: nothing called */
	nseen = 0;
	kp_recqueue_flush(&q, UINT64_MAX, collect, NULL);
	CHECK_EQ_INT(nseen, 0);
	kp_recqueue_fini(&q);
}

static uint64_t last_time, processed;
static int in_order = 1;

static void check_order(void *arg, const struct perf_event_header *hdr)
{
	const struct rec *r = (const void *)hdr;

	(void)arg;
	if (r->id < last_time) /* id holds the record's time here */
		in_order = 0;
	last_time = r->id;
	processed++;
}

static void test_many_rounds(void)
{
	struct kp_recqueue q;

	kp_recqueue_init(&q);
	for (uint64_t round = 1; round <= 50; round++) {
		/* two rings read one after the other: the second is up to a round
		 * behind the first, as when a CPU's ring holds older records */
		for (uint64_t k = 0; k < 20; k++) {
			push(&q, round * 100 + k * 5, round * 100 + k * 5);
			push(&q, round * 100 - 90 + k, round * 100 - 90 + k);
		}
		/* flush what is older than the previous round's start */
		kp_recqueue_flush(&q, (round - 1) * 100, check_order, NULL);
	}
	kp_recqueue_flush(&q, UINT64_MAX, check_order, NULL);
	CHECK_EQ_INT(processed, 50 * 40);
	CHECK(in_order);
	kp_recqueue_fini(&q);
}

KP_TEST_MAIN(test_order_and_limit, test_many_rounds)
