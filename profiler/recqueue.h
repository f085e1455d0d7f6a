/* profiler/ is sampling (profile/ is the model it fills).
 *
 * kp_recqueue: records copied out of the per-CPU rings, handed back in time
 * order. Rings of different CPUs are not ordered with respect to each
 * other; the session pushes everything a round reads and flushes only what
 * is older than a moment every ring has been read past (docs/design.md,
 * "Ordering"). Records of equal time keep their arrival order. */
#ifndef KP_PROFILER_RECQUEUE_H
#define KP_PROFILER_RECQUEUE_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

struct kp_recqueue_entry {
	uint64_t time;
	uint64_t seq; /* arrival order */
	size_t off;   /* into buf */
};

struct kp_recqueue {
	unsigned char *buf; /* queued records, back to back */
	size_t len, cap;
	unsigned char *spare; /* the other half of a double buffer */
	size_t spare_cap;
	struct kp_recqueue_entry *ents;
	size_t n, ents_cap;
	struct kp_recqueue_entry *tmp; /* scratch of the merge sort */
	size_t tmp_cap;
	uint64_t seq;
};

void kp_recqueue_init(struct kp_recqueue *q);
void kp_recqueue_fini(struct kp_recqueue *q);
/* Copies the record (hdr->size bytes) in; time is its timestamp. */
void kp_recqueue_push(struct kp_recqueue *q, const struct perf_event_header *hdr, uint64_t time);
/* Makes room for a record of up to size bytes with timestamp time, queued
 * in arrival order; the caller writes the record there, then says how
 * long it is with kp_recqueue_trim, before the next call. Returns where to
 * write. */
void *kp_recqueue_reserve(struct kp_recqueue *q, size_t size, uint64_t time);
/* The record just reserved holds used bytes (at most what was reserved). */
void kp_recqueue_trim(struct kp_recqueue *q, size_t used);
/* Calls fn for every queued record older than limit, oldest first, and
 * keeps the others. The record passed to fn lives until fn returns. */
void kp_recqueue_flush(struct kp_recqueue *q, uint64_t limit,
		       void (*fn)(void *arg, const struct perf_event_header *hdr), void *arg);
static inline size_t kp_recqueue_len(const struct kp_recqueue *q)
{
	return q->n;
}

#endif
