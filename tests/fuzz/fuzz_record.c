/* perf ring-buffer records, the way a recording reads them: the input is
 * the data the kernel published in a ring (profiler/ring.h, over a
 * synthetic buffer as tests/unit/test_ring.c does, starting anywhere so
 * that records and headers wrap), every record read goes through the
 * time-ordering queue (profiler/recqueue.h) and kp_perf_record_parse with the
 * layout kp_perf_attr_init makes (frame pointers or DWARF mode), and what
 * parses is handed to the process table (profiler/proctab.h) as the
 * session does. Each record is also parsed from a copy of exactly its
 * size, so that ASan catches any read past its end. The kernel writes
 * these records, but a malformed one must never crash kprof.
 *
 * Input: byte 0 (bit 0: DWARF mode, bit 1: read in two rounds, bit 2:
 * counters near 2^64, bit 3: --wall's layout, with an identifier and a
 * raw record), bytes 1-2 where in the ring the data starts
 * (rounded down to 8 bytes), byte 3 the ring size (64 bytes to 64 KiB),
 * then the ring's data. */
#include <errno.h>
#include <stdbool.h>

#include "fuzz.h"
#include "profiler/perf_event.h"
#include "profiler/proctab.h"
#include "profiler/perf_record.h"
#include "profiler/recqueue.h"
#include "profiler/ring.h"
#include "util/strtab.h"

/* frame pointers, DWARF, and --wall's (an identifier and a raw record) */
static struct kp_perf_record_layout layouts[3];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	for (int i = 0; i < 2; i++) {
		struct perf_event_attr attr;
		struct kp_attr_opts o = {.freq = 99,
					 .callgraph = i ? KP_CALLGRAPH_DWARF : KP_CALLGRAPH_FP,
					 .stack_dump_size = 8192,
					 .build_id = true};

		if (kp_perf_event_lookup("cpu-clock", &o.event) != 0)
			abort();
		kp_perf_attr_init(&attr, &layouts[i], &o);
	}
	layouts[2] = layouts[1];
	layouts[2].sample_type |= PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_RAW;
	return 0;
}

struct ctx {
	const struct kp_perf_record_layout *layout;
	struct kp_proctab *procs;
	uint64_t sum; /* what was read, so nothing is optimized away */
};

/* Reads every byte a parsed record points to. */
static void touch(struct ctx *c, const struct perf_event_header *h, const struct kp_perf_record *r)
{
	const unsigned char *lo = (const void *)h, *hi = lo + h->size;

	switch (r->type) {
	case PERF_RECORD_SAMPLE: {
		const struct kp_sample *s = &r->sample;

		if (s->ips) {
			FUZZ_CHECK((const void *)s->ips >= (const void *)lo &&
				   (const void *)(s->ips + s->nr) <= (const void *)hi);
			for (uint64_t i = 0; i < s->nr; i++)
				c->sum += s->ips[i];
		}
		for (uint64_t i = 0; s->regs && i < s->nregs; i++)
			c->sum += s->regs[i];
		FUZZ_CHECK(s->stack_dyn_size <= s->stack_size);
		if (s->raw) {
			FUZZ_CHECK(s->raw >= lo && s->raw + s->raw_size <= hi);
			for (uint32_t i = 0; i < s->raw_size; i++)
				c->sum += s->raw[i];
		}
		if (s->stack) {
			FUZZ_CHECK(s->stack >= lo && s->stack + s->stack_size <= hi);
			for (uint64_t i = 0; i < s->stack_dyn_size; i++)
				c->sum += s->stack[i];
		}
		break;
	}
	case PERF_RECORD_MMAP2:
		c->sum += strlen(r->mmap2.filename);
		FUZZ_CHECK(r->mmap2.build_id_size <= 20);
		for (unsigned i = 0; r->mmap2.build_id && i < r->mmap2.build_id_size; i++)
			c->sum += r->mmap2.build_id[i];
		break;
	case PERF_RECORD_COMM:
		c->sum += strlen(r->comm.comm);
		break;
	default:
		break;
	}
}

/* What session.c's process_record does with a record, minus /proc and
 * the symbolizer. */
static void consume(struct ctx *c, const struct kp_perf_record *r)
{
	switch (r->type) {
	case PERF_RECORD_SAMPLE:
		for (uint64_t i = 0; i < r->sample.nr && i < 128; i++) {
			const struct kp_mapping *m = kp_proctab_find_map(
				c->procs, (pid_t)r->sample.pid, r->sample.ips[i]);

			if (m)
				c->sum += m->start;
		}
		c->sum += kp_proctab_comm_of(c->procs, (pid_t)r->sample.pid, (pid_t)r->sample.tid);
		break;
	case PERF_RECORD_MMAP2:
		kp_proctab_mmap(c->procs, (pid_t)r->mmap2.pid, r->mmap2.addr, r->mmap2.len,
				r->mmap2.pgoff, r->mmap2.maj, r->mmap2.min, r->mmap2.ino,
				r->mmap2.filename, r->mmap2.build_id, r->mmap2.build_id_size);
		break;
	case PERF_RECORD_COMM:
		kp_proctab_comm(c->procs, (pid_t)r->comm.pid, (pid_t)r->comm.tid, r->comm.comm,
				r->comm.exec);
		break;
	case PERF_RECORD_FORK:
		kp_proctab_fork(c->procs, (pid_t)r->task.pid, (pid_t)r->task.ppid,
				(pid_t)r->task.tid, (pid_t)r->task.ptid);
		break;
	case PERF_RECORD_EXIT:
		kp_proctab_exit(c->procs, (pid_t)r->task.pid, (pid_t)r->task.tid);
		break;
	default:
		break;
	}
}

static void process(void *arg, const struct perf_event_header *h)
{
	struct ctx *c = arg;
	struct kp_perf_record r, r2;
	struct perf_event_header *copy = malloc(h->size);
	int err = kp_perf_record_parse(c->layout, h, &r), err2;

	FUZZ_CHECK(err == 0 || err == -EINVAL || err == -ENOTSUP);
	/* the same from a copy of exactly its size */
	memcpy(copy, h, h->size);
	err2 = kp_perf_record_parse(c->layout, copy, &r2);
	FUZZ_CHECK(err2 == err);
	if (err == 0) {
		touch(c, copy, &r2);
		consume(c, &r);
	}
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t how = fuzz_byte(&in);
	uint64_t start = fuzz_byte(&in) | (uint64_t)fuzz_byte(&in) << 8;
	uint64_t ring_size = (uint64_t)64 << (fuzz_byte(&in) % 11);
	struct perf_event_mmap_page *ctl = calloc(1, sizeof(*ctl));
	unsigned char *ring = calloc(1, ring_size);
	struct kp_strtab *strings = kp_strtab_new();
	struct ctx c = {.layout = &layouts[how & 8 ? 2 : how & 1],
			.procs = kp_proctab_new(strings)};
	struct kp_recqueue q;
	struct kp_ring r;
	size_t len = (in.n < ring_size ? in.n : ring_size) & ~(size_t)7;
	int rounds = how & 2 ? 2 : 1;

	/* the kernel moves head and tail by whole (8-byte padded) records; its
	 * counters only grow: a start near 2^64 wraps them */
	start &= ~(uint64_t)7;
	if (how & 4)
		start -= 1ull << 16;
	ctl->data_tail = ctl->data_head = start;
	kp_ring_init_mem(&r, ctl, ring, ring_size);
	for (size_t i = 0; i < len; i++)
		ring[(start + i) & (ring_size - 1)] = in.p[i];
	kp_recqueue_init(&q);
	for (int round = 0; round < rounds; round++) {
		const struct perf_event_header *h;

		/* two rounds: the kernel publishes the first half, then the rest */
		ctl->data_head = start + (round + 1 == rounds ? len : len / 2 & ~(size_t)7);
		kp_ring_read_init(&r);
		while ((h = kp_ring_read_event(&r))) {
			FUZZ_CHECK(h->size >= sizeof(*h));
			kp_recqueue_push(&q, h, kp_perf_record_time(c.layout, h));
		}
		kp_ring_read_done(&r);
		/* all read but a piece too short for a header */
		FUZZ_CHECK(ctl->data_head - ctl->data_tail < sizeof(*h));
		kp_recqueue_flush(&q, round + 1 == rounds ? UINT64_MAX : UINT64_MAX / 2, process,
				  &c);
	}
	/* what the final flush keeps is only what claims the end of time */
	for (size_t i = 0; i < kp_recqueue_len(&q); i++)
		FUZZ_CHECK(q.ents[i].time == UINT64_MAX);
	kp_recqueue_fini(&q);
	kp_ring_fini(&r);
	kp_proctab_free(c.procs);
	kp_strtab_free(strings);
	free(ring);
	free(ctl);
	return 0;
}
