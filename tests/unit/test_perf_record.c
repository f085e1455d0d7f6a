/* Record parsing from hand-built records laid out as the kernel writes them
 * for kprof's sample_type. */
#include <linux/perf_event.h>
#include <errno.h>
#include <stdint.h>

#include "kp_test.h"
#include "profiler/perf_event.h"
#include "profiler/perf_record.h"

static struct kp_perf_record_layout layout;

static void setup(void)
{
	struct perf_event_attr attr;
	struct kp_attr_opts o = {.freq = 99};

	kp_perf_event_lookup("cpu-clock", &o.event);
	kp_perf_attr_init(&attr, &layout, &o);
}

struct buf {
	uint64_t w[64];
	size_t n;
};

static void put(struct buf *b, uint64_t v)
{
	b->w[b->n++] = v;
}

static struct perf_event_header *finish(struct buf *b, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = {.type = type, .misc = misc, .size = (uint16_t)(b->n * 8)};

	memcpy(&b->w[0], &h, sizeof(h));
	return (struct perf_event_header *)b->w;
}

static void test_sample(void)
{
	struct buf b = {.n = 1};
	struct kp_perf_record rec;
	struct perf_event_header *h;

	setup();
	put(&b, 0x401000);	      /* ip */
	put(&b, 42ULL | 43ULL << 32); /* pid, tid */
	put(&b, 123456789);	      /* time */
	put(&b, 1);		      /* cpu, res */
	put(&b, 10101010);	      /* period */
	put(&b, 4);		      /* nr */
	put(&b, (uint64_t)PERF_CONTEXT_USER);
	put(&b, 0x401000);
	put(&b, 0x401234);
	put(&b, 0x7f0000001000);
	put(&b, PERF_SAMPLE_REGS_ABI_NONE); /* no user registers (a kernel thread) */
	put(&b, 0);			    /* no stack */
	h = finish(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	CHECK_EQ_INT(kp_perf_record_parse(&layout, h, &rec), 0);
	CHECK_EQ_INT(rec.sample.regs_abi, 0);
	CHECK(!rec.sample.regs && !rec.sample.stack);
	CHECK_EQ_INT(rec.sample.ip, 0x401000);
	CHECK_EQ_INT(rec.sample.pid, 42);
	CHECK_EQ_INT(rec.sample.tid, 43);
	CHECK_EQ_INT(rec.sample.time, 123456789);
	CHECK_EQ_INT(rec.sample.cpu, 1);
	CHECK_EQ_INT(rec.sample.period, 10101010);
	CHECK_EQ_INT(rec.sample.nr, 4);
	CHECK(rec.sample.ips && rec.sample.ips[3] == 0x7f0000001000);
	CHECK(rec.sample.user_mode);
	CHECK_EQ_INT(kp_perf_record_time(&layout, h), 123456789);

	/* a callchain longer than the record is rejected, not read past */
	b.w[6] = 1000;
	CHECK_EQ_INT(kp_perf_record_parse(&layout, h, &rec), -EINVAL);
}

/* Every mode asks for user registers and a stack copy: both parsed, and
 * a stack that runs past the record rejected. */
static void test_sample_regs_stack(void)
{
	struct buf b = {.n = 1};
	struct kp_perf_record rec;
	struct perf_event_header *h;
	unsigned nregs = (unsigned)__builtin_popcountll(layout.sample_regs_user);

	setup();
	CHECK(layout.sample_type & PERF_SAMPLE_REGS_USER);
	CHECK(layout.sample_type & PERF_SAMPLE_STACK_USER);
	CHECK_EQ_INT(nregs, 17);
	put(&b, 0x401000);
	put(&b, 42ULL | 43ULL << 32);
	put(&b, 5);
	put(&b, 0);
	put(&b, 1);
	put(&b, 0); /* nr */
	put(&b, PERF_SAMPLE_REGS_ABI_64);
	for (unsigned i = 0; i < nregs; i++)
		put(&b, 0x1000 + i);
	put(&b, 16); /* stack size */
	put(&b, 0x1111);
	put(&b, 0x2222);
	put(&b, 8); /* dyn size: one word valid */
	h = finish(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	CHECK_EQ_INT(kp_perf_record_parse(&layout, h, &rec), 0);
	CHECK_EQ_INT(rec.sample.regs_abi, PERF_SAMPLE_REGS_ABI_64);
	CHECK_EQ_INT(rec.sample.nregs, nregs);
	CHECK(rec.sample.regs && rec.sample.regs[nregs - 1] == 0x1000 + nregs - 1);
	CHECK_EQ_INT(rec.sample.stack_size, 16);
	CHECK_EQ_INT(rec.sample.stack_dyn_size, 8);
	CHECK(rec.sample.stack && memcmp(rec.sample.stack, &b.w[b.n - 3], 8) == 0);
	/* a dyn size larger than the copy is clamped */
	b.w[b.n - 1] = 999;
	CHECK_EQ_INT(kp_perf_record_parse(&layout, h, &rec), 0);
	CHECK_EQ_INT(rec.sample.stack_dyn_size, 16);
	/* a stack size past the record's end is rejected */
	b.w[b.n - 4] = 4096;
	CHECK_EQ_INT(kp_perf_record_parse(&layout, h, &rec), -EINVAL);
}

/* A sample's stack copy queued only as far as it is valid: the same
 * record otherwise, parsed the same; other records copied whole. */
static void test_compact(void)
{
	struct buf b = {.n = 1}, out;
	struct kp_perf_record rec, crec;
	struct perf_event_header *h;
	unsigned nregs = (unsigned)__builtin_popcountll(layout.sample_regs_user);
	size_t n;

	setup();
	put(&b, 0x401000);
	put(&b, 42ULL | 43ULL << 32);
	put(&b, 5);
	put(&b, 0);
	put(&b, 1);
	put(&b, 0); /* nr */
	put(&b, PERF_SAMPLE_REGS_ABI_64);
	for (unsigned i = 0; i < nregs; i++)
		put(&b, 0x1000 + i);
	put(&b, 32); /* stack size: four words */
	put(&b, 0x1111);
	put(&b, 0x2222);
	put(&b, 0xdead);
	put(&b, 0xbeef);
	put(&b, 12); /* dyn size: a word and a half valid */
	h = finish(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	n = kp_perf_record_compact(&layout, h, out.w);
	CHECK_EQ_INT(n, h->size - 16);
	{
		struct perf_event_header oh;

		memcpy(&oh, out.w, sizeof(oh));
		CHECK_EQ_INT(oh.size, n);
	}
	CHECK_EQ_INT(kp_perf_record_parse(&layout, h, &rec), 0);
	CHECK_EQ_INT(kp_perf_record_parse(&layout, (const void *)out.w, &crec), 0);
	CHECK(crec.sample.ip == rec.sample.ip && crec.sample.pid == 42 && crec.sample.tid == 43);
	CHECK(crec.sample.regs && memcmp(crec.sample.regs, rec.sample.regs, nregs * 8) == 0);
	CHECK_EQ_INT(crec.sample.stack_size, 16);
	CHECK_EQ_INT(crec.sample.stack_dyn_size, 12);
	CHECK(memcmp(crec.sample.stack, rec.sample.stack, 16) == 0);
	/* all of it valid: nothing to drop */
	b.w[b.n - 1] = 32;
	CHECK_EQ_INT(kp_perf_record_compact(&layout, h, out.w), h->size);
	CHECK(memcmp(out.w, h, h->size) == 0);
	/* a record that does not parse is copied as it is */
	b.w[b.n - 6] = 4096;
	CHECK_EQ_INT(kp_perf_record_compact(&layout, h, out.w), h->size);
	CHECK(memcmp(out.w, h, h->size) == 0);
}

static void put_str(struct buf *b, const char *s)
{
	size_t len = strlen(s) + 1, words = (len + 7) / 8;

	memset(&b->w[b->n], 0, words * 8);
	memcpy(&b->w[b->n], s, len);
	b->n += words;
}

static void put_id(struct buf *b, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
	put(b, pid | (uint64_t)tid << 32);
	put(b, time);
	put(b, cpu);
}

static void test_mmap2(void)
{
	struct buf b = {.n = 1};
	struct kp_perf_record rec;
	struct perf_event_header *h;

	setup();
	put(&b, 7ULL | 7ULL << 32);
	put(&b, 0x400000);	    /* addr */
	put(&b, 0x2000);	    /* len */
	put(&b, 0x1000);	    /* pgoff */
	put(&b, 8ULL | 1ULL << 32); /* maj, min */
	put(&b, 99);		    /* ino */
	put(&b, 0);		    /* ino generation */
	put(&b, 5ULL | 2ULL << 32); /* prot, flags */
	put_str(&b, "/usr/bin/true");
	put_id(&b, 7, 7, 555, 0);
	h = finish(&b, PERF_RECORD_MMAP2, 0);
	CHECK_EQ_INT(kp_perf_record_parse(&layout, h, &rec), 0);
	CHECK_EQ_INT(rec.mmap2.addr, 0x400000);
	CHECK_EQ_INT(rec.mmap2.len, 0x2000);
	CHECK_EQ_INT(rec.mmap2.pgoff, 0x1000);
	CHECK_EQ_INT(rec.mmap2.maj, 8);
	CHECK_EQ_INT(rec.mmap2.min, 1);
	CHECK_EQ_INT(rec.mmap2.ino, 99);
	CHECK(rec.mmap2.build_id == NULL);
	CHECK_EQ_STR(rec.mmap2.filename, "/usr/bin/true");
	CHECK_EQ_INT(rec.id.time, 555);
	CHECK_EQ_INT(kp_perf_record_time(&layout, h), 555);
}

static void test_mmap2_build_id(void)
{
	struct buf b = {.n = 1};
	struct kp_perf_record rec;
	struct perf_event_header *h;
	unsigned char bid[24] = {20, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef};

	setup();
	put(&b, 7ULL | 7ULL << 32);
	put(&b, 0x400000);
	put(&b, 0x2000);
	put(&b, 0);
	memcpy(&b.w[b.n], bid, 24);
	b.n += 3;
	put(&b, 5);
	put_str(&b, "/lib/x.so");
	put_id(&b, 7, 7, 1, 0);
	h = finish(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID);
	CHECK_EQ_INT(kp_perf_record_parse(&layout, h, &rec), 0);
	CHECK_EQ_INT(rec.mmap2.build_id_size, 20);
	CHECK(rec.mmap2.build_id && rec.mmap2.build_id[0] == 0xde);
	CHECK_EQ_STR(rec.mmap2.filename, "/lib/x.so");
}

static void test_comm_fork_lost(void)
{
	struct buf b = {.n = 1};
	struct kp_perf_record rec;
	struct perf_event_header *h;

	setup();
	put(&b, 10ULL | 11ULL << 32);
	put_str(&b, "my prog");
	put_id(&b, 10, 11, 77, 1);
	h = finish(&b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	CHECK_EQ_INT(kp_perf_record_parse(&layout, h, &rec), 0);
	CHECK_EQ_STR(rec.comm.comm, "my prog");
	CHECK(rec.comm.exec);
	CHECK_EQ_INT(rec.comm.tid, 11);
	CHECK_EQ_INT(rec.id.time, 77);
	CHECK_EQ_INT(rec.id.cpu, 1);

	/* a comm without its terminating NUL is refused */
	memset(&b.w[2], 'x', 8);
	memset(&b.w[3], 'x', 8); /* overwrites the trailer too: no NUL before the end */
	memset(&b.w[4], 'x', 8);
	memset(&b.w[5], 'x', 8);
	CHECK_EQ_INT(kp_perf_record_parse(&layout, h, &rec), -EINVAL);

	b.n = 1;
	put(&b, 20ULL | 10ULL << 32); /* pid, ppid */
	put(&b, 21ULL | 11ULL << 32); /* tid, ptid */
	put(&b, 999);
	put_id(&b, 20, 21, 999, 0);
	h = finish(&b, PERF_RECORD_FORK, 0);
	CHECK_EQ_INT(kp_perf_record_parse(&layout, h, &rec), 0);
	CHECK_EQ_INT(rec.task.pid, 20);
	CHECK_EQ_INT(rec.task.ppid, 10);
	CHECK_EQ_INT(rec.task.tid, 21);
	CHECK_EQ_INT(rec.task.ptid, 11);

	b.n = 1;
	put(&b, 5);  /* id */
	put(&b, 17); /* lost */
	put_id(&b, 0, 0, 1000, 0);
	h = finish(&b, PERF_RECORD_LOST, 0);
	CHECK_EQ_INT(kp_perf_record_parse(&layout, h, &rec), 0);
	CHECK_EQ_INT(rec.lost, 17);

	/* a record shorter than its header claims to need */
	b.n = 1;
	h = finish(&b, PERF_RECORD_FORK, 0);
	CHECK_EQ_INT(kp_perf_record_parse(&layout, h, &rec), -EINVAL);
}

/* --wall's layout: an identifier first, and a tracepoint's raw record
 * after the callchain (a u32 size, then the data, padded to 8 bytes). */
static void test_identifier_raw(void)
{
	struct kp_perf_record_layout wall;
	struct buf b = {.n = 1};
	struct kp_perf_record rec;
	struct perf_event_header *h;
	uint32_t raw_size = 12; /* 4 + 12: 16 bytes, two words */

	setup();
	wall = layout;
	wall.sample_type |= PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_RAW;
	put(&b, 777);		      /* identifier */
	put(&b, 0xffffffff81000000);  /* ip */
	put(&b, 42ULL | 43ULL << 32); /* pid, tid */
	put(&b, 5000);		      /* time */
	put(&b, 0);		      /* cpu, res */
	put(&b, 1);		      /* period */
	put(&b, 1);		      /* nr */
	put(&b, 0xffffffff81000000);
	put(&b, raw_size | (uint64_t)0xaabbccdd << 32); /* size, first 4 bytes */
	put(&b, 0x1122334455667788ULL);			/* the other 8 */
	put(&b, PERF_SAMPLE_REGS_ABI_NONE);
	put(&b, 0);
	h = finish(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	CHECK_EQ_INT(kp_perf_record_parse(&wall, h, &rec), 0);
	CHECK_EQ_INT(rec.sample.id, 777);
	CHECK_EQ_INT(rec.sample.tid, 43);
	CHECK_EQ_INT(rec.sample.raw_size, 12);
	CHECK(rec.sample.raw && rec.sample.raw[0] == 0xdd && rec.sample.raw[4] == 0x88);
	CHECK_EQ_INT(kp_perf_record_time(&wall, h), 5000);
	/* a raw size that does not keep the record aligned, or runs past it */
	b.w[9] = 13 | (uint64_t)0xaabbccdd << 32;
	CHECK_EQ_INT(kp_perf_record_parse(&wall, h, &rec), -EINVAL);
	b.w[9] = 1020 | (uint64_t)0xaabbccdd << 32;
	CHECK_EQ_INT(kp_perf_record_parse(&wall, h, &rec), -EINVAL);
}

/* SWITCH records: out (preempted or not) and in; the CPU-wide one names
 * the other task. */
static void test_switch(void)
{
	struct buf b = {.n = 1};
	struct kp_perf_record rec;
	struct perf_event_header *h;

	setup();
	put_id(&b, 42, 43, 900, 1);
	h = finish(&b, PERF_RECORD_SWITCH,
		   PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
	CHECK_EQ_INT(kp_perf_record_parse(&layout, h, &rec), 0);
	CHECK(rec.sw.out && rec.sw.preempt);
	CHECK_EQ_INT(rec.id.tid, 43);
	CHECK_EQ_INT(rec.id.time, 900);
	h = finish(&b, PERF_RECORD_SWITCH, 0);
	CHECK_EQ_INT(kp_perf_record_parse(&layout, h, &rec), 0);
	CHECK(!rec.sw.out && !rec.sw.preempt);

	b.n = 1;
	put(&b, 7ULL | 8ULL << 32); /* next_prev pid, tid */
	put_id(&b, 42, 43, 901, 0);
	h = finish(&b, PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_MISC_SWITCH_OUT);
	CHECK_EQ_INT(kp_perf_record_parse(&layout, h, &rec), 0);
	CHECK(rec.sw.out && !rec.sw.preempt);
	CHECK_EQ_INT(rec.sw.other_tid, 8);
	CHECK_EQ_INT(rec.id.tid, 43);
	/* too short for its body */
	b.n = 1;
	h = finish(&b, PERF_RECORD_SWITCH_CPU_WIDE, 0);
	CHECK_EQ_INT(kp_perf_record_parse(&layout, h, &rec), -EINVAL);
}

KP_TEST_MAIN(test_sample, test_sample_regs_stack, test_compact, test_mmap2, test_mmap2_build_id,
	     test_comm_fork_lost, test_identifier_raw, test_switch)
