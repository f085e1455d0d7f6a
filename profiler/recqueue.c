#include "profiler/recqueue.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void kp_recqueue_init(struct kp_recqueue *q)
{
	memset(q, 0, sizeof(*q));
}

void kp_recqueue_fini(struct kp_recqueue *q)
{
	free(q->buf);
	free(q->spare);
	free(q->ents);
	memset(q, 0, sizeof(*q));
}

void *kp_recqueue_reserve(struct kp_recqueue *q, size_t size, uint64_t time)
{
	struct kp_recqueue_entry *e;
	void *at;

	kp_xgrow(&q->buf, &q->cap, q->len + size, 1);
	kp_xgrow(&q->ents, &q->ents_cap, q->n + 1, sizeof(*q->ents));
	e = &q->ents[q->n++];
	e->time = time;
	e->seq = q->seq++;
	e->off = q->len;
	at = q->buf + q->len;
	q->len += size;
	return at;
}

void kp_recqueue_trim(struct kp_recqueue *q, size_t used)
{
	q->len = q->ents[q->n - 1].off + used;
}

void kp_recqueue_push(struct kp_recqueue *q, const struct perf_event_header *hdr, uint64_t time)
{
	memcpy(kp_recqueue_reserve(q, hdr->size, time), hdr, hdr->size);
}

static int cmp_entries(const void *a, const void *b)
{
	const struct kp_recqueue_entry *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void kp_recqueue_flush(struct kp_recqueue *q, uint64_t limit,
		       void (*fn)(void *arg, const struct perf_event_header *hdr), void *arg)
{
	size_t i, keep = 0, len = 0;
	unsigned char *t;

	if (!q->n)
		return;
	qsort(q->ents, q->n, sizeof(*q->ents), cmp_entries);
	for (i = 0; i < q->n && q->ents[i].time < limit; i++)
		fn(arg, (const void *)(q->buf + q->ents[i].off));
	/* move the survivors into the spare buffer, then swap the two */
	kp_xgrow(&q->spare, &q->spare_cap, q->len, 1);
	for (size_t j = i; j < q->n; j++) {
		const struct perf_event_header *h = (const void *)(q->buf + q->ents[j].off);

		memcpy(q->spare + len, h, h->size);
		q->ents[keep] = q->ents[j];
		q->ents[keep++].off = len;
		len += h->size;
	}
	t = q->buf;
	q->buf = q->spare;
	q->spare = t;
	{
		size_t c = q->cap;

		q->cap = q->spare_cap;
		q->spare_cap = c;
	}
	q->len = len;
	q->n = keep;
}
