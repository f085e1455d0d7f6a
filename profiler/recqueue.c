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
	free(q->tmp);
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

/* The end of the run of entries in time order that starts at i. */
static size_t run_end(const struct kp_recqueue_entry *a, size_t i, size_t n)
{
	while (i + 1 < n && a[i].time <= a[i + 1].time)
		i++;
	return i + 1;
}

/* Merges x[0..nx) and y[0..ny) into out, x first on equal times. */
static void merge(const struct kp_recqueue_entry *x, size_t nx, const struct kp_recqueue_entry *y,
		  size_t ny, struct kp_recqueue_entry *out)
{
	size_t i = 0, j = 0;

	while (i < nx && j < ny)
		*out++ = y[j].time < x[i].time ? y[j++] : x[i++];
	memcpy(out, x + i, (nx - i) * sizeof(*x));
	memcpy(out + (nx - i), y + j, (ny - j) * sizeof(*y));
}

/* Sorts the entries by time, keeping arrival order on equal times (the
 * survivors of the last flush, in order and older, come first; then
 * each ring's records in arrival order). They are a few runs in order
 * already, one per ring read, so merging runs pairwise costs n log(runs)
 * where a general sort costs n log n: at a switch storm a round holds
 * hundreds of thousands of records. */
static void sort_entries(struct kp_recqueue *q)
{
	struct kp_recqueue_entry *a, *b, *t;
	size_t n = q->n, runs;

	kp_xgrow(&q->tmp, &q->tmp_cap, n, sizeof(*q->tmp));
	a = q->ents;
	b = q->tmp;
	do {
		size_t i = 0;

		runs = 0;
		while (i < n) {
			size_t m = run_end(a, i, n), e = m < n ? run_end(a, m, n) : n;

			merge(a + i, m - i, a + m, e - m, b + i);
			i = e;
			runs++;
		}
		t = a;
		a = b;
		b = t;
	} while (runs > 1);
	if (a != q->ents) {
		/* the sorted entries are in the scratch array: swap the arrays */
		size_t c = q->ents_cap;

		q->tmp = q->ents;
		q->ents = a;
		q->ents_cap = q->tmp_cap;
		q->tmp_cap = c;
	}
}

void kp_recqueue_flush(struct kp_recqueue *q, uint64_t limit,
		       void (*fn)(void *arg, const struct perf_event_header *hdr), void *arg)
{
	size_t i, keep = 0, len = 0;
	unsigned char *t;

	if (!q->n)
		return;
	sort_entries(q);
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
