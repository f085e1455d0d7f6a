/* The .kprof writer: docs/recording-format.md. Every chunk is packed by
 * protobuf-c as the one element of a Recording message, which puts the
 * chunk's tag and length in front of it; those pieces one after the other
 * are a Recording of many chunks. */
#include "formats/recording.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/recordingP.h"
#include "formats/zstdio.h"
#include "kprof.pb-c.h"
#include "util/u64map.h"
#include "util/xalloc.h"

/* zstd's level: 19 makes recordings 4-6% smaller than 9 (system-wide
 * ones; 14% for big profiles of folded text) in four to ten times the
 * time, some 3 MB/s: spent when the data is small enough that it takes
 * well under a second (docs/recording-format.md) */
#define ZSTD_LEVEL_SMALL 19
#define ZSTD_LEVEL	 9
#define SMALL_BODY	 (2u << 20)

struct writer {
	ProtobufCBuffer base; /* first: protobuf-c calls base.append */
	FILE *fp;
	const struct kp_profile *p;
	struct kp_diag *d;
};

static void writer_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct writer *w = (struct writer *)b;

	/* a failed write is seen by the zstd stream's error at the end */
	if (len)
		(void)fwrite(data, 1, len, w->fp);
}

static int put(struct writer *w, Kprof__Chunk *c)
{
	Kprof__Recording rec = KPROF__RECORDING__INIT;
	size_t size = kprof__chunk__get_packed_size(c);

	if (size > MAX_CHUNK)
		return kp_diag_set(w->d, -EFBIG,
				   "cannot write the recording: a chunk of %zu bytes (at most %u: "
				   "a string or a stack too long)",
				   size, MAX_CHUNK);
	rec.n_chunk = 1;
	rec.chunk = &c;
	kprof__recording__pack_to_buffer(&rec, &w->base);
	return 0;
}

static int write_strings(struct writer *w)
{
	size_t n = kp_profile_nstrings(w->p);
	ProtobufCBinaryData *s = kp_xcalloc(BATCH, sizeof(*s));
	int err = 0;

	for (size_t id = 1; id <= n && !err;) {
		Kprof__Strings m = KPROF__STRINGS__INIT;
		Kprof__Chunk c = KPROF__CHUNK__INIT;
		size_t k = 0, bytes = 0;

		while (id <= n && k < BATCH && bytes < BATCH_BYTES) {
			size_t len;
			const char *str = kp_profile_str(w->p, (uint32_t)id++, &len);

			s[k++] = (ProtobufCBinaryData){len, (uint8_t *)str};
			bytes += len;
		}
		m.n_string = k;
		m.string = s;
		c.chunk_case = KPROF__CHUNK__CHUNK_STRINGS;
		c.strings = &m;
		err = put(w, &c);
	}
	free(s);
	return err;
}

static int write_value_types(struct writer *w)
{
	Kprof__ValueType vt[KP_PROFILE_MAX_VALUES], *pvt[KP_PROFILE_MAX_VALUES];
	Kprof__ValueTypes m = KPROF__VALUE_TYPES__INIT;
	Kprof__Chunk c = KPROF__CHUNK__INIT;
	size_t n = kp_profile_nvalues(w->p);

	for (size_t i = 0; i < n; i++) {
		const struct kp_profile_value_type *t = kp_profile_value_type(w->p, i);

		vt[i] = (Kprof__ValueType)KPROF__VALUE_TYPE__INIT;
		vt[i].type = t->type;
		vt[i].unit = t->unit;
		vt[i].decimals = t->decimals;
		pvt[i] = &vt[i];
	}
	m.n_value_type = n;
	m.value_type = pvt;
	c.chunk_case = KPROF__CHUNK__CHUNK_VALUE_TYPES;
	c.value_types = &m;
	return put(w, &c);
}

static int write_functions(struct writer *w)
{
	size_t n = kp_profile_nfunctions(w->p);
	uint32_t *name = kp_xcalloc(BATCH, sizeof(*name)), *file = kp_xcalloc(BATCH, sizeof(*file));
	int err = 0;

	for (size_t id = 0; id < n && !err;) {
		Kprof__Functions m = KPROF__FUNCTIONS__INIT;
		Kprof__Chunk c = KPROF__CHUNK__INIT;
		size_t k = 0;

		for (; id < n && k < BATCH; id++, k++) {
			const struct kp_profile_function *f =
				kp_profile_function_at(w->p, (uint32_t)id);

			name[k] = f->name;
			file[k] = f->file;
		}
		m.n_name = m.n_file = k;
		m.name = name;
		m.file = file;
		c.chunk_case = KPROF__CHUNK__CHUNK_FUNCTIONS;
		c.functions = &m;
		err = put(w, &c);
	}
	free(name);
	free(file);
	return err;
}

/* A grow-only column of 32-bit values. */
struct col32 {
	uint32_t *v;
	size_t n, cap;
};

static void col32_push(struct col32 *c, uint32_t v)
{
	kp_xgrow(&c->v, &c->cap, c->n + 1, sizeof(*c->v));
	c->v[c->n++] = v;
}

/* A grow-only column of signed 64-bit values (the differences). */
struct col64 {
	int64_t *v;
	size_t n, cap;
};

static void col64_push(struct col64 *c, int64_t v)
{
	kp_xgrow(&c->v, &c->cap, c->n + 1, sizeof(*c->v));
	c->v[c->n++] = v;
}

/* The value last kept under key (0 when none), and v kept instead. */
static uint64_t last_swap(struct kp_u64map *m, uint64_t key, uint64_t v)
{
	uint64_t old = 0;

	kp_u64map_get(m, key, &old);
	kp_u64map_put(m, key, v);
	return old;
}

static int write_locations(struct writer *w, size_t *nframes)
{
	size_t n = kp_profile_nlocations(w->p);
	uint32_t *kind = kp_xcalloc(BATCH, sizeof(*kind)), *obj = kp_xcalloc(BATCH, sizeof(*obj));
	uint32_t *state = kp_xcalloc(BATCH, sizeof(*state)),
		 *count = kp_xcalloc(BATCH, sizeof(*count));
	int64_t *addr = kp_xcalloc(BATCH, sizeof(*addr));
	struct col64 fn = {0}, line = {0};
	struct col32 fkind = {0};
	int err = 0;

	*nframes = 0;
	for (size_t id = 0; id < n && !err;) {
		Kprof__Locations m = KPROF__LOCATIONS__INIT;
		Kprof__Chunk c = KPROF__CHUNK__INIT;
		/* per chunk: the last address and function of each object, the
		 * last line of each function */
		struct kp_u64map last_addr, last_fn, last_line;
		size_t k = 0;

		kp_u64map_init(&last_addr);
		kp_u64map_init(&last_fn);
		kp_u64map_init(&last_line);
		fn.n = line.n = fkind.n = 0;
		for (; id < n && k < BATCH && fn.n < BATCH_FRAMES; id++, k++) {
			const struct kp_loc *l = kp_profile_loc(w->p, (uint32_t)id);
			uint64_t key = kp_recording_object_key(l->kind, l->obj);
			size_t nf;
			bool resolved;
			const struct kp_profile_frame *fr =
				kp_profile_frames(w->p, (uint32_t)id, &nf, &resolved);

			kind[k] = l->kind;
			obj[k] = l->obj;
			addr[k] = (int64_t)(l->addr - last_swap(&last_addr, key, l->addr));
			state[k] = !fr ? LOC_UNNAMED : resolved ? LOC_NAMED : LOC_PLACEHOLDER;
			count[k] = (uint32_t)nf;
			for (size_t j = 0; j < nf; j++) {
				uint32_t f = fr[j].function;

				col64_push(&fn, (int64_t)f - (int64_t)last_swap(&last_fn, key, f));
				col64_push(&line,
					   (int64_t)fr[j].line -
						   (int64_t)last_swap(&last_line, f, fr[j].line));
				col32_push(&fkind, fr[j].kind);
			}
			*nframes += nf;
		}
		kp_u64map_fini(&last_addr);
		kp_u64map_fini(&last_fn);
		kp_u64map_fini(&last_line);
		m.n_kind = m.n_object = m.n_address = m.n_state = m.n_frames = k;
		m.kind = kind;
		m.object = obj;
		m.address = addr;
		m.state = state;
		m.frames = count;
		m.n_function = m.n_line = m.n_frame_kind = fn.n;
		m.function = fn.v;
		m.line = line.v;
		m.frame_kind = fkind.v;
		c.chunk_case = KPROF__CHUNK__CHUNK_LOCATIONS;
		c.locations = &m;
		err = put(w, &c);
	}
	free(kind);
	free(obj);
	free(state);
	free(count);
	free(addr);
	free(fn.v);
	free(line.v);
	free(fkind.v);
	return err;
}

static int write_mappings(struct writer *w)
{
	size_t n = kp_profile_nmappings(w->p);
	Kprof__Mapping *map = kp_xcalloc(BATCH, sizeof(*map)),
		       **pmap = kp_xcalloc(BATCH, sizeof(*pmap));
	int err = 0;

	for (size_t i = 0; i < n && !err;) {
		Kprof__Mappings m = KPROF__MAPPINGS__INIT;
		Kprof__Chunk c = KPROF__CHUNK__INIT;
		size_t k = 0;

		for (; i < n && k < BATCH; i++, k++) {
			const struct kp_profile_mapping *pm = kp_profile_mapping_at(w->p, i);

			map[k] = (Kprof__Mapping)KPROF__MAPPING__INIT;
			map[k].kind = pm->kind;
			map[k].object = pm->obj;
			map[k].path = pm->path;
			map[k].pid = (uint32_t)pm->pid;
			map[k].build_id =
				(ProtobufCBinaryData){pm->build_id_len, (uint8_t *)pm->build_id};
			pmap[k] = &map[k];
		}
		m.n_mapping = k;
		m.mapping = pmap;
		c.chunk_case = KPROF__CHUNK__CHUNK_MAPPINGS;
		c.mappings = &m;
		err = put(w, &c);
	}
	free(map);
	free(pmap);
	return err;
}

/* The stacks of a chunk's samples as a tree of their prefixes: node ids
 * from 1 (0 is the root, the empty prefix), children found by (node,
 * location); each node remembers the last sample whose stack passed it. */
struct prefixes {
	struct kp_u64map child; /* node << 32 | location -> node */
	struct col32 last;	/* node -> the last sample (in the chunk) through it */
};

static uint32_t prefix_child(const struct prefixes *t, uint32_t node, uint32_t loc)
{
	uint64_t v;

	return kp_u64map_get(&t->child, (uint64_t)node << 32 | loc, &v) ? (uint32_t)v : 0;
}

/* Returns how many leading locations of stack[0..n) an earlier sample of
 * the chunk has too, with in *back how many samples back the last such
 * sample is (0 when none), and adds stack as the chunk's sample k. */
static size_t prefix_add(struct prefixes *t, const uint32_t *stack, size_t n, uint32_t k,
			 uint32_t *back)
{
	uint32_t node = 0, next;
	size_t shared = 0;

	while (shared < n && (next = prefix_child(t, node, stack[shared])))
		node = next, shared++;
	*back = shared ? k - t->last.v[node] : 0;
	node = 0;
	for (size_t j = 0; j < n; j++) {
		next = j < shared ? prefix_child(t, node, stack[j]) : 0;
		if (!next) {
			next = (uint32_t)t->last.n;
			kp_u64map_put(&t->child, (uint64_t)node << 32 | stack[j], next);
			col32_push(&t->last, k);
		}
		node = next;
		t->last.v[node] = k;
	}
	return shared;
}

/* The frames stack[0..n) unfolds to when it is drawn: those of each
 * location, one for a location not named. */
static uint64_t unfold_frames(const struct kp_profile *p, const uint32_t *stack, size_t n)
{
	uint64_t e = 0;

	for (size_t j = 0; j < n; j++) {
		size_t nf;

		kp_profile_frames(p, stack[j], &nf, NULL);
		e += nf ? nf : 1;
	}
	return e;
}

/* The plan that keeps the samples within what they may unfold to
 * (UNFOLD_PER_ITEM): need[i], the least UNFOLD_PER_ITEM times the own
 * locations of samples 0..i (all chunks) that keeps sample i and every
 * later one within it, the later ones sent whole if need be:
 *   D(j) = unfold(0..j) - UNFOLD_PER_ITEM * (sent + j + 1) - UNFOLD_FREE
 *   need[i] = max(D(i), need[i + 1] - UNFOLD_PER_ITEM * len(i + 1))
 * (sent: the locations and frames sent before the samples). Returns NULL
 * with d set when no plan does: even every stack sent whole unfolds to
 * too many frames (its locations have more than UNFOLD_PER_ITEM frames
 * each, on average). */
static int64_t *unfold_plan(struct writer *w, uint64_t sent)
{
	size_t n = kp_profile_nsamples(w->p);
	int64_t *need = kp_xmalloc((n ? n : 1) * sizeof(*need));
	uint64_t e = 0, whole = 0;

	for (size_t i = 0; i < n; i++) {
		size_t len;
		const uint32_t *stack = kp_profile_sample(w->p, i, NULL, &len, NULL);
		uint64_t room = UNFOLD_PER_ITEM * (sent + i + 1) + UNFOLD_FREE;

		e += unfold_frames(w->p, stack, len);
		whole += len;
		if (e > UNFOLD_PER_ITEM * whole + room) {
			free(need);
			kp_diag_set(w->d, -EFBIG,
				    "cannot write the recording: its first %zu stacks unfold to "
				    "%llu frames, more than a recording may hold (%d for each "
				    "location, frame, sample and stack location it sends, plus %u)",
				    i + 1, (unsigned long long)e, UNFOLD_PER_ITEM, UNFOLD_FREE);
			return NULL;
		}
		/* at most UNFOLD_PER_ITEM * whole: it fits */
		need[i] = (int64_t)e - (int64_t)room;
	}
	for (size_t i = n; i-- > 1;) {
		size_t len;

		kp_profile_sample(w->p, i, NULL, &len, NULL);
		if (need[i] - UNFOLD_PER_ITEM * (int64_t)len > need[i - 1])
			need[i - 1] = need[i] - UNFOLD_PER_ITEM * (int64_t)len;
	}
	return need;
}

static int write_samples(struct writer *w, uint64_t sent)
{
	size_t n = kp_profile_nsamples(w->p), nv = kp_profile_nvalues(w->p);
	int64_t *need = unfold_plan(w, sent), own = 0;
	uint32_t *comm = kp_xcalloc(BATCH, sizeof(*comm)), *pid = kp_xcalloc(BATCH, sizeof(*pid));
	uint32_t *tid = kp_xcalloc(BATCH, sizeof(*tid)), *back = kp_xcalloc(BATCH, sizeof(*back));
	uint32_t *shared = kp_xcalloc(BATCH, sizeof(*shared)),
		 *depth = kp_xcalloc(BATCH, sizeof(*depth));
	uint64_t *lo = kp_xcalloc(BATCH * KP_PROFILE_MAX_VALUES, sizeof(*lo));
	uint64_t *hi = kp_xcalloc(BATCH * KP_PROFILE_MAX_VALUES, sizeof(*hi));
	struct col64 locs = {0};
	struct prefixes t = {0};
	int err = need ? 0 : -EFBIG;

	for (size_t i = 0; i < n && !err;) {
		Kprof__Samples m = KPROF__SAMPLES__INIT;
		Kprof__Chunk c = KPROF__CHUNK__INIT;
		size_t k = 0;
		bool high = false;

		/* stacks of one chunk share callers: each names the earlier one it
		 * shares most with and sends only the rest */
		kp_u64map_init(&t.child);
		t.last.n = 0;
		col32_push(&t.last, 0); /* the root */
		locs.n = 0;
		for (; i < n && k < BATCH && locs.n < BATCH_LOCS; i++, k++) {
			struct kp_profile_root root;
			const kp_count *values;
			size_t len, same;
			const uint32_t *stack = kp_profile_sample(w->p, i, &root, &len, &values);
			uint32_t prev;

			same = prefix_add(&t, stack, len, (uint32_t)k, &back[k]);
			/* sharing less than it could where the plan needs more own
			 * locations (need[i - 1] <= own makes it at most len) */
			if (need[i] > UNFOLD_PER_ITEM * (own + (int64_t)(len - same))) {
				same = len - (size_t)((need[i] - UNFOLD_PER_ITEM * own +
						       UNFOLD_PER_ITEM - 1) /
						      UNFOLD_PER_ITEM);
				if (!same)
					back[k] = 0;
			}
			own += (int64_t)(len - same);
			comm[k] = root.comm;
			pid[k] = root.pid;
			tid[k] = root.tid;
			shared[k] = (uint32_t)same;
			depth[k] = (uint32_t)(len - same);
			prev = same ? stack[same - 1] : 0;
			for (size_t j = same; j < len; j++) {
				col64_push(&locs, (int64_t)stack[j] - (int64_t)prev);
				prev = stack[j];
			}
			for (size_t v = 0; v < nv; v++) {
				lo[k * nv + v] = (uint64_t)values[v];
				hi[k * nv + v] = (uint64_t)(values[v] >> 64);
				high |= hi[k * nv + v] != 0;
			}
		}
		kp_u64map_fini(&t.child);
		m.n_comm = m.n_pid = m.n_tid = m.n_back = m.n_shared = m.n_depth = k;
		m.comm = comm;
		m.pid = pid;
		m.tid = tid;
		m.back = back;
		m.shared = shared;
		m.depth = depth;
		m.n_location = locs.n;
		m.location = locs.v;
		m.n_value = k * nv;
		m.value = lo;
		m.n_value_high = high ? k * nv : 0;
		m.value_high = hi;
		c.chunk_case = KPROF__CHUNK__CHUNK_SAMPLES;
		c.samples = &m;
		err = put(w, &c);
	}
	free(comm);
	free(pid);
	free(tid);
	free(back);
	free(shared);
	free(depth);
	free(lo);
	free(hi);
	free(locs.v);
	free(t.last.v);
	free(need);
	return err;
}

static int write_metadata(struct writer *w)
{
	size_t n = kp_profile_nmeta(w->p);
	ProtobufCBinaryData *key = kp_xcalloc(BATCH, sizeof(*key)),
			    *val = kp_xcalloc(BATCH, sizeof(*val));
	int err = 0;

	for (size_t i = 0; i < n && !err;) {
		Kprof__Metadata m = KPROF__METADATA__INIT;
		Kprof__Chunk c = KPROF__CHUNK__INIT;
		size_t k = 0, bytes = 0;

		for (; i < n && k < BATCH && bytes < BATCH_BYTES; i++, k++) {
			const char *ks, *vs;

			kp_profile_meta_at(w->p, i, &ks, &vs);
			key[k] = (ProtobufCBinaryData){strlen(ks), (uint8_t *)ks};
			val[k] = (ProtobufCBinaryData){strlen(vs), (uint8_t *)vs};
			bytes += key[k].len + val[k].len;
		}
		m.n_key = m.n_value = k;
		m.key = key;
		m.value = val;
		c.chunk_case = KPROF__CHUNK__CHUNK_METADATA;
		c.metadata = &m;
		err = put(w, &c);
	}
	free(key);
	free(val);
	return err;
}

/* The time axis, when the profile keeps one: BATCH_EVENTS events a chunk. */
static int write_timeline(struct writer *w)
{
	size_t n, i = 0;
	const struct kp_profile_event *ev = kp_profile_events(w->p, &n);
	uint64_t *tick;
	int64_t *sample, *tid;
	uint32_t *span;
	struct kp_u64map last; /* thread -> its last sample id in the chunk */
	int err = 0;

	if (!kp_profile_timed(w->p))
		return 0;
	tick = kp_xmalloc(BATCH_EVENTS * sizeof(*tick));
	sample = kp_xmalloc(BATCH_EVENTS * sizeof(*sample));
	tid = kp_xmalloc(BATCH_EVENTS * sizeof(*tid));
	span = kp_xmalloc(BATCH_EVENTS * sizeof(*span));
	kp_u64map_init(&last);
	do {
		Kprof__Timeline m = KPROF__TIMELINE__INIT;
		Kprof__Chunk c = KPROF__CHUNK__INIT;
		uint32_t ms = 0, last_tid = 0;
		size_t k = 0;
		bool spans = false;

		kp_u64map_fini(&last);
		kp_u64map_init(&last);
		for (; i < n && k < BATCH_EVENTS; i++, k++) {
			tick[k] = ev[i].ms - ms;
			ms = ev[i].ms;
			/* a thread's samples repeat: each after its own last */
			sample[k] = (int64_t)ev[i].sample -
				    (int64_t)last_swap(&last, ev[i].tid, ev[i].sample);
			tid[k] = (int64_t)ev[i].tid - last_tid;
			last_tid = ev[i].tid;
			span[k] = ev[i].span > 1 ? ev[i].span - 1 : 0;
			spans |= span[k] != 0;
		}
		m.origin_ns = kp_profile_time_origin(w->p);
		m.dropped = kp_profile_events_dropped(w->p);
		m.n_tick = m.n_sample = m.n_tid = k;
		m.tick = tick;
		m.sample = sample;
		m.tid = tid;
		/* (1.2) only a chunk with a wait has the column */
		m.n_span = spans ? k : 0;
		m.span = span;
		c.chunk_case = KPROF__CHUNK__CHUNK_TIMELINE;
		c.timeline = &m;
		err = put(w, &c);
	} while (i < n && !err);
	kp_u64map_fini(&last);
	free(tick);
	free(sample);
	free(tid);
	free(span);
	return err;
}

static int write_body(struct writer *w)
{
	Kprof__End end = KPROF__END__INIT;
	Kprof__Chunk c = KPROF__CHUNK__INIT;
	size_t nframes = 0, nevents;
	int err;

	if ((err = write_strings(w)) || (err = write_value_types(w)) ||
	    (err = write_functions(w)) || (err = write_locations(w, &nframes)) ||
	    (err = write_mappings(w)) ||
	    (err = write_samples(w, kp_profile_nlocations(w->p) + nframes)) ||
	    (err = write_timeline(w)) || (err = write_metadata(w)))
		return err;
	end.strings = kp_profile_nstrings(w->p);
	end.value_types = kp_profile_nvalues(w->p);
	end.functions = kp_profile_nfunctions(w->p);
	end.locations = kp_profile_nlocations(w->p);
	end.frames = nframes;
	end.mappings = kp_profile_nmappings(w->p);
	end.samples = kp_profile_nsamples(w->p);
	end.metadata = kp_profile_nmeta(w->p);
	kp_profile_events(w->p, &nevents);
	end.events = nevents;
	c.chunk_case = KPROF__CHUNK__CHUNK_END;
	c.end = &end;
	return put(w, &c);
}

/* Roughly how many bytes the decompressed body will have: a byte or two a
 * stack location, a dozen a location, the strings. */
static size_t body_estimate(const struct kp_profile *p)
{
	size_t n = 0, nev;

	for (size_t i = 0; i < kp_profile_nsamples(p) && n < SMALL_BODY; i++) {
		size_t len;

		kp_profile_sample(p, i, NULL, &len, NULL);
		n += 2 * len + 4;
	}
	n += 12 * kp_profile_nlocations(p) + 4 * kp_profile_nfunctions(p);
	kp_profile_events(p, &nev);
	n += 4 * nev;
	for (uint32_t id = 1; id <= kp_profile_nstrings(p) && n < SMALL_BODY; id++) {
		size_t len;

		kp_profile_str(p, id, &len);
		n += len + 1;
	}
	return n;
}

static int write_recording(const struct kp_profile *p, FILE *out, bool fast, struct kp_diag *d)
{
	/* a profile without time is a 1.0 recording, byte for byte */
	const unsigned char header[KP_RECORDING_HEADER_SIZE] = {
		'K',
		'P',
		'R',
		'O',
		'F',
		KP_RECORDING_MAJOR,
		kp_profile_timed(p) ? KP_RECORDING_MINOR : 0,
		0};
	struct writer w = {.base = {.append = writer_append}, .p = p, .d = d};
	struct kp_zstd_writer *z;
	struct kp_diag zd = {{0}};
	size_t estimate;
	int err;

	if (fwrite(header, 1, sizeof(header), out) != sizeof(header))
		return kp_diag_errno(d, -(errno ? errno : EIO), "cannot write the recording");
	estimate = body_estimate(p);
	if (estimate < SMALL_BODY) {
		z = kp_zstd_writer_new(out, fast ? ZSTD_LEVEL : ZSTD_LEVEL_SMALL);
		kp_zstd_writer_expect(z, estimate);
	} else {
		z = kp_zstd_writer_new(out, ZSTD_LEVEL);
	}
	w.fp = kp_zstd_writer_file(z);
	err = write_body(&w);
	if (err) {
		kp_zstd_writer_free(z);
		return err;
	}
	err = kp_zstd_writer_finish(z, &zd);
	if (err)
		kp_diag_set(d, err, "cannot write the recording: %s", zd.msg);
	return err;
}

int kp_recording_write(const struct kp_profile *p, FILE *out, struct kp_diag *d)
{
	return write_recording(p, out, false, d);
}

int kp_recording_write_fast(const struct kp_profile *p, FILE *out, struct kp_diag *d)
{
	return write_recording(p, out, true, d);
}
