#include "profiler/perf_record.h"

#include <errno.h>
#include <string.h>

/* A bounded reader over one record's bytes. */
struct cursor {
	const unsigned char *p, *end;
	bool bad;
};

static uint64_t get_u64(struct cursor *c)
{
	uint64_t v = 0;

	if ((size_t)(c->end - c->p) < 8) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static void get_u32_pair(struct cursor *c, uint32_t *a, uint32_t *b)
{
	uint64_t v = get_u64(c);

	/* little-endian layout of two u32s in one u64 slot */
	*a = (uint32_t)v;
	*b = (uint32_t)(v >> 32);
}

/* Returns a pointer to n u64s and skips them, or NULL if they do not fit. */
static const uint64_t *get_array(struct cursor *c, uint64_t n)
{
	const void *p = c->p;

	if (n > (uint64_t)(c->end - c->p) / 8) {
		c->bad = true;
		c->p = c->end;
		return NULL;
	}
	c->p += n * 8;
	return p;
}

/* The sample_id trailer sits at the end of non-sample records: parse it
 * backwards from the end so the variable-size body does not matter. */
static void parse_sample_id(const struct kp_perf_record_layout *l,
			    const struct perf_event_header *hdr, struct kp_sample_id *id)
{
	uint64_t t = l->sample_type;
	size_t n = 0;
	const unsigned char *end = (const unsigned char *)hdr + hdr->size;
	struct cursor c;
	uint32_t dummy;

	memset(id, 0, sizeof(*id));
	n += !!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ID) +
	     !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
	     !!(t & PERF_SAMPLE_IDENTIFIER);
	if (hdr->size < sizeof(*hdr) + n * 8)
		return;
	c.p = end - n * 8;
	c.end = end;
	c.bad = false;
	if (t & PERF_SAMPLE_TID)
		get_u32_pair(&c, &id->pid, &id->tid);
	if (t & PERF_SAMPLE_TIME)
		id->time = get_u64(&c);
	if (t & PERF_SAMPLE_ID)
		id->id = get_u64(&c);
	if (t & PERF_SAMPLE_STREAM_ID)
		get_u64(&c);
	if (t & PERF_SAMPLE_CPU)
		get_u32_pair(&c, &id->cpu, &dummy);
	if (t & PERF_SAMPLE_IDENTIFIER)
		id->id = get_u64(&c);
}

/* PERF_SAMPLE_RAW: a u32 size, that many bytes, padded so the whole is
 * a multiple of 8 (the kernel's size includes the padding). */
static void get_raw(struct cursor *c, struct kp_sample *s)
{
	uint32_t size;

	if ((size_t)(c->end - c->p) < 4) {
		c->bad = true;
		return;
	}
	memcpy(&size, c->p, 4);
	if (size > (size_t)(c->end - c->p) - 4 || (4 + (size_t)size) % 8) {
		c->bad = true;
		c->p = c->end;
		return;
	}
	s->raw = c->p + 4;
	s->raw_size = size;
	c->p += 4 + (size_t)size;
}

static int parse_sample(const struct kp_perf_record_layout *l, const struct perf_event_header *hdr,
			struct kp_sample *s)
{
	struct cursor c = {(const unsigned char *)(hdr + 1), (const unsigned char *)hdr + hdr->size,
			   false};
	uint64_t t = l->sample_type;
	uint32_t dummy;

	memset(s, 0, sizeof(*s));
	if (t & PERF_SAMPLE_IDENTIFIER)
		s->id = get_u64(&c);
	if (t & PERF_SAMPLE_IP)
		s->ip = get_u64(&c);
	if (t & PERF_SAMPLE_TID)
		get_u32_pair(&c, &s->pid, &s->tid);
	if (t & PERF_SAMPLE_TIME)
		s->time = get_u64(&c);
	if (t & PERF_SAMPLE_ADDR)
		get_u64(&c);
	if (t & PERF_SAMPLE_ID)
		get_u64(&c);
	if (t & PERF_SAMPLE_STREAM_ID)
		get_u64(&c);
	if (t & PERF_SAMPLE_CPU)
		get_u32_pair(&c, &s->cpu, &dummy);
	if (t & PERF_SAMPLE_PERIOD)
		s->period = get_u64(&c);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		s->nr = get_u64(&c);
		s->ips = get_array(&c, s->nr);
	}
	if (t & PERF_SAMPLE_RAW)
		get_raw(&c, s);
	if (t & PERF_SAMPLE_REGS_USER) {
		s->regs_abi = get_u64(&c);
		if (s->regs_abi) {
			s->nregs = (uint64_t)__builtin_popcountll(l->sample_regs_user);
			s->regs = get_array(&c, s->nregs);
		}
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		s->stack_size = get_u64(&c);
		if (s->stack_size) {
			if (s->stack_size > (uint64_t)(c.end - c.p)) {
				c.bad = true;
			} else {
				s->stack = c.p;
				c.p += s->stack_size;
				s->stack_dyn_size = get_u64(&c);
				if (s->stack_dyn_size > s->stack_size)
					s->stack_dyn_size = s->stack_size;
			}
		}
	}
	s->user_mode = (hdr->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;
	if (c.bad)
		return -EINVAL;
	if (t & PERF_SAMPLE_CALLCHAIN && !s->ips && s->nr)
		return -EINVAL;
	return 0;
}

/* A string field that runs to the sample_id trailer: must hold a NUL. */
static const char *get_string(const unsigned char *p, const unsigned char *end)
{
	if (p >= end || !memchr(p, '\0', (size_t)(end - p)))
		return NULL;
	return (const char *)p;
}

static int parse_mmap2(const struct perf_event_header *hdr, struct kp_mmap2 *m)
{
	const unsigned char *end = (const unsigned char *)hdr + hdr->size;
	struct cursor c = {(const unsigned char *)(hdr + 1), end, false};
	uint64_t w;

	memset(m, 0, sizeof(*m));
	get_u32_pair(&c, &m->pid, &m->tid);
	m->addr = get_u64(&c);
	m->len = get_u64(&c);
	m->pgoff = get_u64(&c);
	if (hdr->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		const unsigned char *bid = c.p;

		if ((size_t)(end - c.p) < 24)
			return -EINVAL;
		m->build_id_size = bid[0];
		if (m->build_id_size > 20)
			return -EINVAL;
		m->build_id = bid + 4;
		c.p += 24;
	} else {
		get_u32_pair(&c, &m->maj, &m->min);
		m->ino = get_u64(&c);
		get_u64(&c); /* ino_generation */
	}
	w = get_u64(&c);
	m->prot = (uint32_t)w;
	m->flags = (uint32_t)(w >> 32);
	if (c.bad)
		return -EINVAL;
	m->filename = get_string(c.p, end);
	return m->filename ? 0 : -EINVAL;
}

int kp_perf_record_parse(const struct kp_perf_record_layout *layout,
			 const struct perf_event_header *hdr, struct kp_perf_record *rec)
{
	const unsigned char *body = (const unsigned char *)(hdr + 1);
	const unsigned char *end = (const unsigned char *)hdr + hdr->size;
	struct cursor c = {body, end, false};

	memset(rec, 0, sizeof(*rec));
	rec->type = hdr->type;
	if (hdr->size < sizeof(*hdr))
		return -EINVAL;
	if (hdr->type == PERF_RECORD_SAMPLE) {
		int err = parse_sample(layout, hdr, &rec->sample);

		rec->id.pid = rec->sample.pid;
		rec->id.tid = rec->sample.tid;
		rec->id.time = rec->sample.time;
		rec->id.cpu = rec->sample.cpu;
		return err;
	}
	parse_sample_id(layout, hdr, &rec->id);
	switch (hdr->type) {
	case PERF_RECORD_MMAP2:
		return parse_mmap2(hdr, &rec->mmap2);
	case PERF_RECORD_COMM:
		get_u32_pair(&c, &rec->comm.pid, &rec->comm.tid);
		rec->comm.comm = get_string(c.p, end);
		rec->comm.exec = hdr->misc & PERF_RECORD_MISC_COMM_EXEC;
		return c.bad || !rec->comm.comm ? -EINVAL : 0;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		get_u32_pair(&c, &rec->task.pid, &rec->task.ppid);
		get_u32_pair(&c, &rec->task.tid, &rec->task.ptid);
		rec->task.time = get_u64(&c);
		return c.bad ? -EINVAL : 0;
	case PERF_RECORD_LOST:
		get_u64(&c); /* id */
		rec->lost = get_u64(&c);
		return c.bad ? -EINVAL : 0;
	case PERF_RECORD_LOST_SAMPLES:
		rec->lost = get_u64(&c);
		return c.bad ? -EINVAL : 0;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		return 0;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		rec->sw.out = hdr->misc & PERF_RECORD_MISC_SWITCH_OUT;
		rec->sw.preempt = rec->sw.out && (hdr->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
		if (hdr->type == PERF_RECORD_SWITCH_CPU_WIDE)
			get_u32_pair(&c, &rec->sw.other_pid, &rec->sw.other_tid);
		return c.bad ? -EINVAL : 0;
	default:
		return -ENOTSUP;
	}
}

uint64_t kp_perf_record_time(const struct kp_perf_record_layout *layout,
			     const struct perf_event_header *hdr)
{
	struct kp_sample_id id;

	if (hdr->type == PERF_RECORD_SAMPLE) {
		uint64_t t = layout->sample_type, off = sizeof(*hdr);
		uint64_t v = 0;

		if (!(t & PERF_SAMPLE_TIME))
			return 0;
		off += 8 * (!!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP) +
			    !!(t & PERF_SAMPLE_TID));
		if (off + 8 > hdr->size)
			return 0;
		memcpy(&v, (const unsigned char *)hdr + off, 8);
		return v;
	}
	parse_sample_id(layout, hdr, &id);
	return id.time;
}

/* Where the stack copy of a sample is, when some of it can go: the offset
 * of its size field and the bytes kept of it. */
static bool stack_to_cut(const struct kp_perf_record_layout *l, const struct perf_event_header *hdr,
			 size_t *size_off, size_t *keep, size_t *stack_size)
{
	struct kp_sample smp;

	if (hdr->type != PERF_RECORD_SAMPLE || !(l->sample_type & PERF_SAMPLE_STACK_USER) ||
	    parse_sample(l, hdr, &smp) < 0 || !smp.stack)
		return false;
	*keep = (size_t)((smp.stack_dyn_size + 7) & ~7ull);
	*stack_size = (size_t)smp.stack_size;
	*size_off = (size_t)(smp.stack - (const unsigned char *)hdr) - 8;
	return *keep < *stack_size;
}

size_t kp_perf_record_compact(const struct kp_perf_record_layout *layout,
			      const struct perf_event_header *hdr, void *dst)
{
	const unsigned char *src = (const unsigned char *)hdr;
	unsigned char *out = dst;
	size_t off, keep, size, tail;
	uint64_t v;
	struct perf_event_header h = *hdr;

	if (!stack_to_cut(layout, hdr, &off, &keep, &size)) {
		memcpy(dst, hdr, hdr->size);
		return hdr->size;
	}
	/* header and fields, the new size, the valid bytes, then what follows
	 * the copy (its dyn_size, and any later field) as it was */
	tail = hdr->size - (off + 8 + size);
	memcpy(out, src, off);
	v = keep;
	memcpy(out + off, &v, 8);
	memcpy(out + off + 8, src + off + 8, keep);
	memcpy(out + off + 8 + keep, src + off + 8 + size, tail);
	h.size = (uint16_t)(hdr->size - (size - keep));
	memcpy(out, &h, sizeof(h));
	return h.size;
}
