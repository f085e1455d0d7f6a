/* The .kprof recording: docs/recording-format.md.
 *
 * Writing: every chunk is packed by protobuf-c as the one element of a
 * Recording message, which puts the chunk's tag and length in front of
 * it; those pieces one after the other are a Recording of many chunks.
 * Reading: the tag and the length are read, then the chunk's bytes, which
 * protobuf-c unpacks; every id is checked against the table read so far
 * before the profile sees it. */
#include "formats/recording.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/zstdio.h"
#include "kprof.pb-c.h"
#include "util/u64map.h"
#include "util/xalloc.h"

static const char magic[5] = {'K', 'P', 'R', 'O', 'F'};

/* zstd's level: 19 makes recordings 4-6% smaller than 9 (system-wide
 * ones; 14% for big profiles of folded text) in four to ten times the
 * time, some 3 MB/s: spent when the data is small enough that it takes
 * well under a second (docs/recording-format.md) */
#define ZSTD_LEVEL_SMALL 19
#define ZSTD_LEVEL	 9
#define SMALL_BODY	 (2u << 20)
/* items per chunk: big enough that the columns compress, small enough
 * that a chunk is a bounded amount of memory. A chunk takes entries while
 * it holds fewer than BATCH of them and fewer than BATCH_BYTES string
 * bytes, BATCH_FRAMES frames (locations) or BATCH_LOCS own stack
 * locations (samples); the reader holds the writer to it. */
#define BATCH	     4096
#define BATCH_BYTES  (1u << 20)
#define BATCH_FRAMES (4 * BATCH)
#define BATCH_LOCS   (16 * BATCH)
/* What the samples may unfold to, so that reading a recording (and drawing
 * it: every frame of every stack) takes memory linear in its size: after
 * each sample, the frames of all stacks so far (those of each location, one
 * for a location not named) are at most UNFOLD_PER_ITEM for each location,
 * frame, sample and own stack location sent so far, plus UNFOLD_FREE.
 * Shared prefixes cost nothing to send, so the writer sends more of a
 * stack's locations itself where sharing would break this. UNFOLD_FREE is
 * 16M frames (64 MB of location ids): deep recursion written by the kprof
 * of before this limit (1000 samples of 2000 frames unfold to 2M) reads. */
#define UNFOLD_PER_ITEM 32
#define UNFOLD_FREE	(1u << 24)
/* the longest chunk read (a damaged length must not allocate gigabytes);
 * the writer checks every chunk against it */
#define MAX_CHUNK (16u << 20)
/* the tag of Recording.chunk: field 1, length-delimited */
#define CHUNK_TAG 0x0a

enum loc_state { LOC_UNNAMED = 0, LOC_NAMED = 1, LOC_PLACEHOLDER = 2 };

bool kp_recording_magic(const void *buf, size_t len)
{
	return len >= sizeof(magic) && memcmp(buf, magic, sizeof(magic)) == 0;
}

/* ---- writing ---- */

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

static uint64_t object_key(uint32_t kind, uint32_t obj)
{
	return (uint64_t)kind << 32 | obj;
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
			uint64_t key = object_key(l->kind, l->obj);
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

static int write_body(struct writer *w)
{
	Kprof__End end = KPROF__END__INIT;
	Kprof__Chunk c = KPROF__CHUNK__INIT;
	size_t nframes = 0;
	int err;

	if ((err = write_strings(w)) || (err = write_value_types(w)) ||
	    (err = write_functions(w)) || (err = write_locations(w, &nframes)) ||
	    (err = write_mappings(w)) ||
	    (err = write_samples(w, kp_profile_nlocations(w->p) + nframes)) ||
	    (err = write_metadata(w)))
		return err;
	end.strings = kp_profile_nstrings(w->p);
	end.value_types = kp_profile_nvalues(w->p);
	end.functions = kp_profile_nfunctions(w->p);
	end.locations = kp_profile_nlocations(w->p);
	end.frames = nframes;
	end.mappings = kp_profile_nmappings(w->p);
	end.samples = kp_profile_nsamples(w->p);
	end.metadata = kp_profile_nmeta(w->p);
	c.chunk_case = KPROF__CHUNK__CHUNK_END;
	c.end = &end;
	return put(w, &c);
}

/* Roughly how many bytes the decompressed body will have: a byte or two a
 * stack location, a dozen a location, the strings. */
static size_t body_estimate(const struct kp_profile *p)
{
	size_t n = 0;

	for (size_t i = 0; i < kp_profile_nsamples(p) && n < SMALL_BODY; i++) {
		size_t len;

		kp_profile_sample(p, i, NULL, &len, NULL);
		n += 2 * len + 4;
	}
	n += 12 * kp_profile_nlocations(p) + 4 * kp_profile_nfunctions(p);
	for (uint32_t id = 1; id <= kp_profile_nstrings(p) && n < SMALL_BODY; id++) {
		size_t len;

		kp_profile_str(p, id, &len);
		n += len + 1;
	}
	return n;
}

int kp_recording_write(const struct kp_profile *p, FILE *out, struct kp_diag *d)
{
	const unsigned char header[KP_RECORDING_HEADER_SIZE] = {
		'K', 'P', 'R', 'O', 'F', KP_RECORDING_MAJOR, KP_RECORDING_MINOR, 0};
	struct writer w = {.base = {.append = writer_append}, .p = p, .d = d};
	struct kp_zstd_writer *z;
	struct kp_diag zd = {{0}};
	size_t estimate;
	int err;

	if (fwrite(header, 1, sizeof(header), out) != sizeof(header))
		return kp_diag_errno(d, -(errno ? errno : EIO), "cannot write the recording");
	estimate = body_estimate(p);
	if (estimate < SMALL_BODY) {
		z = kp_zstd_writer_new(out, ZSTD_LEVEL_SMALL);
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

/* ---- reading ---- */

struct reader {
	FILE *in; /* the decompressed stream */
	struct kp_zstd_reader *z;
	const char *name;
	struct kp_diag *d;
	struct kp_profile *p;

	uint8_t *buf; /* the chunk being read */
	size_t buf_cap;
	uint64_t chunk;	 /* its index, for messages */
	uint64_t offset; /* where it starts in the decompressed stream */
	uint64_t read;	 /* bytes of the decompressed stream read */
	const char *what;

	/* what was read so far: the ids later chunks may use */
	size_t nstrings, nfunctions, nlocations, nframes, nmappings, nsamples, nmeta;
	bool value_types, samples, ended;
	/* what the samples may unfold to (UNFOLD_PER_ITEM): what they unfold
	 * to, and the locations, frames, samples and own stack locations sent */
	uint64_t unfolded, sent;
	uint32_t *unfold; /* by location: the frames it unfolds to */
	size_t unfold_cap;
	uint32_t unfold_max; /* the most of a location (1: a stack's are its length) */

	uint32_t *stack; /* the sample being read */
	size_t stack_cap;
	struct kp_profile_frame *frames; /* the location being read */
	size_t frames_cap;
	char *text; /* a metadata entry: key, NUL, value, NUL */
	size_t text_cap;
};

static int damaged(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int damaged(struct reader *r, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return kp_diag_set(r->d, -EINVAL,
			   "%s: damaged .kprof recording: chunk %llu (%s%sat decompressed byte "
			   "%llu): %s",
			   r->name, (unsigned long long)r->chunk, r->what ? r->what : "",
			   r->what ? ", " : "", (unsigned long long)r->offset, why);
}

/* Why the decompressed stream ended or failed early: zstd's reason, else
 * the end of the data in the middle of something. */
static int stream_failed(struct reader *r, const char *where)
{
	const char *zerr = kp_zstd_reader_error(r->z);

	if (zerr && strncmp(zerr, "truncated", 9) == 0) {
		/* zstd's "truncated (why)" says why inside the parentheses
		 * this message puts around it */
		const char *why = zerr + 9;
		size_t len;

		while (*why == ' ')
			why++;
		len = strlen(why);
		if (len >= 2 && why[0] == '(' && why[len - 1] == ')')
			why++, len -= 2;
		if (!len)
			return kp_diag_set(r->d, -EINVAL, "%s: truncated .kprof recording",
					   r->name);
		return kp_diag_set(r->d, -EINVAL, "%s: truncated .kprof recording (%.*s)", r->name,
				   (int)len, why);
	}
	if (zerr)
		return kp_diag_set(r->d, -EINVAL, "%s: damaged .kprof recording: %s", r->name,
				   zerr);
	if (!*where)
		return kp_diag_set(r->d, -EINVAL, "%s: truncated .kprof recording", r->name);
	return kp_diag_set(r->d, -EINVAL, "%s: truncated .kprof recording (it ends %s)", r->name,
			   where);
}

/* Reads the next chunk's bytes into r->buf (*len of them). Returns 1 at the
 * clean end of the stream, 0 with a chunk, or a negative errno. */
static int next_chunk(struct reader *r, size_t *len)
{
	uint64_t v = 0;
	int c = fgetc(r->in);
	char where[64];

	r->what = NULL;
	r->offset = r->read;
	if (c == EOF) {
		if (ferror(r->in) || kp_zstd_reader_error(r->z))
			return stream_failed(r, "");
		return 1;
	}
	snprintf(where, sizeof(where), "inside chunk %llu", (unsigned long long)r->chunk);
	if (c != CHUNK_TAG)
		return damaged(r, "no chunk starts here (byte 0x%02x)", (unsigned)c);
	/* the length, a varint: 16 MiB need four bytes, more than five is damage */
	for (unsigned i = 0;; i++) {
		c = fgetc(r->in);
		if (c == EOF)
			return stream_failed(r, where);
		v |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			r->read += 2 + i; /* the tag and the length */
			break;
		}
		if (i == 4)
			return damaged(r, "a chunk length longer than five bytes");
	}
	if (v > MAX_CHUNK)
		return damaged(r, "a chunk of %llu bytes (at most %u)", (unsigned long long)v,
			       MAX_CHUNK);
	kp_xgrow(&r->buf, &r->buf_cap, v ? v : 1, 1);
	if (fread(r->buf, 1, v, r->in) != v)
		return stream_failed(r, where);
	r->read += v;
	*len = v;
	return 0;
}

/* A string id read from the file: one of the strings read so far. */
static bool string_ok(const struct reader *r, uint64_t id)
{
	return id <= r->nstrings;
}

/* A chunk of more entries than the writer puts in one. */
static int too_many(struct reader *r, size_t n)
{
	return damaged(r, "%zu entries (at most %d a chunk)", n, BATCH);
}

static int read_strings(struct reader *r, const Kprof__Strings *m)
{
	size_t bytes = 0;

	if (m->n_string > BATCH)
		return too_many(r, m->n_string);
	for (size_t i = 0; i < m->n_string; i++) {
		const ProtobufCBinaryData *s = &m->string[i];
		uint32_t id;

		if (!s->len)
			return damaged(r, "string %zu is empty", r->nstrings + 1);
		if (bytes >= BATCH_BYTES)
			return damaged(
				r, "string %zu follows %zu bytes of strings (at most %u a chunk)",
				r->nstrings + 1, bytes, BATCH_BYTES);
		bytes += s->len;
		if (r->nstrings >= UINT32_MAX - 1)
			return damaged(r, "more than 2^32 strings");
		id = kp_profile_intern(r->p, (const char *)s->data, s->len);
		if (id != r->nstrings + 1)
			return damaged(r, "string %zu repeats string %u", r->nstrings + 1, id);
		r->nstrings++;
	}
	return 0;
}

static int read_value_types(struct reader *r, const Kprof__ValueTypes *m)
{
	if (r->value_types || r->samples)
		return damaged(r, "value types %s", r->samples ? "after samples" : "twice");
	if (m->n_value_type > KP_PROFILE_MAX_VALUES)
		return damaged(r, "%zu value types (at most %d)", m->n_value_type,
			       KP_PROFILE_MAX_VALUES);
	for (size_t i = 0; i < m->n_value_type; i++) {
		const Kprof__ValueType *t = m->value_type[i];

		if (!string_ok(r, t->type) || !string_ok(r, t->unit))
			return damaged(r, "value type %zu names string %u of %zu", i,
				       string_ok(r, t->type) ? t->unit : t->type, r->nstrings);
		if (t->decimals > KP_COUNT_MAX_DECIMALS)
			return damaged(r, "value type %zu has %u decimals (at most %d)", i,
				       t->decimals, KP_COUNT_MAX_DECIMALS);
		kp_profile_add_value_type(r->p, kp_profile_str(r->p, t->type, NULL),
					  kp_profile_str(r->p, t->unit, NULL), t->decimals);
	}
	r->value_types = true;
	return 0;
}

static int read_functions(struct reader *r, const Kprof__Functions *m)
{
	if (m->n_file != m->n_name)
		return damaged(r, "%zu names for %zu files", m->n_name, m->n_file);
	if (m->n_name > BATCH)
		return too_many(r, m->n_name);
	for (size_t i = 0; i < m->n_name; i++) {
		uint32_t id;

		if (!string_ok(r, m->name[i]) || !string_ok(r, m->file[i]))
			return damaged(r, "function %zu names string %u of %zu", r->nfunctions,
				       string_ok(r, m->name[i]) ? m->file[i] : m->name[i],
				       r->nstrings);
		id = kp_profile_function(r->p, m->name[i], m->file[i]);
		if (id != r->nfunctions)
			return damaged(r, "function %zu repeats function %u", r->nfunctions, id);
		r->nfunctions++;
	}
	return 0;
}

static int read_locations(struct reader *r, const Kprof__Locations *m)
{
	size_t n = m->n_kind, f = 0;
	struct kp_u64map last_addr, last_fn, last_line;
	int err = 0;

	if (m->n_object != n || m->n_address != n || m->n_state != n || m->n_frames != n)
		return damaged(r, "columns of different lengths");
	if (m->n_line != m->n_function || m->n_frame_kind != m->n_function)
		return damaged(r, "frame columns of different lengths");
	if (n > BATCH)
		return too_many(r, n);
	kp_xgrow(&r->unfold, &r->unfold_cap, r->nlocations + n + 1, sizeof(*r->unfold));
	kp_u64map_init(&last_addr);
	kp_u64map_init(&last_fn);
	kp_u64map_init(&last_line);
	for (size_t i = 0; i < n && !err; i++) {
		struct kp_loc loc = {.obj = m->object[i], .kind = m->kind[i]};
		uint64_t key = object_key(loc.kind, loc.obj), v = 0;
		size_t nf = m->frames[i];
		uint32_t id;

		if (loc.kind >= KP_LOC_NKINDS) {
			err = damaged(r, "location %zu has kind %u", r->nlocations, loc.kind);
			break;
		}
		if (f >= BATCH_FRAMES) {
			err = damaged(r, "location %zu follows %zu frames (at most %d a chunk)",
				      r->nlocations, f, BATCH_FRAMES);
			break;
		}
		kp_u64map_get(&last_addr, key, &v);
		loc.addr = v + (uint64_t)m->address[i];
		kp_u64map_put(&last_addr, key, loc.addr);
		if (m->state[i] > LOC_PLACEHOLDER || (m->state[i] == LOC_UNNAMED && nf)) {
			err = damaged(r, "location %zu has state %u with %zu frames", r->nlocations,
				      m->state[i], nf);
			break;
		}
		if (nf > m->n_function - f) {
			err = damaged(r, "location %zu has %zu frames, %zu are left", r->nlocations,
				      nf, m->n_function - f);
			break;
		}
		kp_xgrow(&r->frames, &r->frames_cap, nf ? nf : 1, sizeof(*r->frames));
		for (size_t j = 0; j < nf && !err; j++, f++) {
			uint64_t fn = 0, line = 0;

			kp_u64map_get(&last_fn, key, &fn);
			fn += (uint64_t)m->function[f];
			if (fn >= r->nfunctions) {
				err = damaged(r, "location %zu names function %lld of %zu",
					      r->nlocations, (long long)fn, r->nfunctions);
				break;
			}
			kp_u64map_put(&last_fn, key, fn);
			kp_u64map_get(&last_line, fn, &line);
			line += (uint64_t)m->line[f];
			if (line > UINT32_MAX) {
				err = damaged(r, "location %zu has line %lld", r->nlocations,
					      (long long)line);
				break;
			}
			kp_u64map_put(&last_line, fn, line);
			if (m->frame_kind[f] > KP_FRAME_ROOT) {
				err = damaged(r, "location %zu has a frame of kind %u",
					      r->nlocations, m->frame_kind[f]);
				break;
			}
			r->frames[j] = (struct kp_profile_frame){
				.function = (uint32_t)fn,
				.line = (uint32_t)line,
				.kind = (uint8_t)m->frame_kind[f],
			};
		}
		if (err)
			break;
		if (r->nlocations >= UINT32_MAX) {
			err = damaged(r, "more than 2^32 locations");
			break;
		}
		id = kp_profile_location(r->p, &loc);
		if (id != r->nlocations) {
			err = damaged(r, "location %zu repeats location %u", r->nlocations, id);
			break;
		}
		if (m->state[i] != LOC_UNNAMED)
			kp_profile_set_frames(r->p, id, r->frames, nf, m->state[i] == LOC_NAMED);
		r->unfold[r->nlocations] = nf ? (uint32_t)nf : 1;
		if (r->unfold[r->nlocations] > r->unfold_max)
			r->unfold_max = r->unfold[r->nlocations];
		r->nlocations++;
		r->nframes += nf;
		r->sent += 1 + nf;
	}
	if (!err && f != m->n_function)
		err = damaged(r, "%zu frames belong to no location", m->n_function - f);
	kp_u64map_fini(&last_addr);
	kp_u64map_fini(&last_fn);
	kp_u64map_fini(&last_line);
	return err;
}

static int read_mappings(struct reader *r, const Kprof__Mappings *m)
{
	if (m->n_mapping > BATCH)
		return too_many(r, m->n_mapping);
	for (size_t i = 0; i < m->n_mapping; i++) {
		const Kprof__Mapping *pm = m->mapping[i];
		struct kp_profile_mapping map = {.kind = pm->kind,
						 .obj = pm->object,
						 .path = pm->path,
						 .pid = (pid_t)pm->pid};

		if (pm->kind >= KP_LOC_NKINDS)
			return damaged(r, "mapping %zu has kind %u", r->nmappings, pm->kind);
		if (!string_ok(r, pm->path))
			return damaged(r, "mapping %zu names string %u of %zu", r->nmappings,
				       pm->path, r->nstrings);
		if (pm->build_id.len > sizeof(map.build_id))
			return damaged(r, "mapping %zu has a build-id of %zu bytes", r->nmappings,
				       pm->build_id.len);
		if (pm->build_id.len)
			memcpy(map.build_id, pm->build_id.data, pm->build_id.len);
		map.build_id_len = (uint8_t)pm->build_id.len;
		kp_profile_set_mapping(r->p, &map);
		if (kp_profile_nmappings(r->p) != r->nmappings + 1)
			return damaged(r, "mapping %zu repeats an earlier one", r->nmappings);
		r->nmappings++;
	}
	return 0;
}

static int read_samples(struct reader *r, const Kprof__Samples *m)
{
	size_t n = m->n_comm, nv = kp_profile_nvalues(r->p), off = 0;

	r->samples = true;
	if (m->n_pid != n || m->n_tid != n || m->n_back != n || m->n_shared != n || m->n_depth != n)
		return damaged(r, "columns of different lengths");
	if (m->n_value != n * nv)
		return damaged(r, "%zu values for %zu samples of %zu value types", m->n_value, n,
			       nv);
	if (m->n_value_high && m->n_value_high != m->n_value)
		return damaged(r, "%zu high words for %zu values", m->n_value_high, m->n_value);
	if (n > BATCH)
		return too_many(r, n);
	for (size_t i = 0; i < n; i++) {
		struct kp_profile_root root = {m->comm[i], m->pid[i], m->tid[i]};
		kp_count values[KP_PROFILE_MAX_VALUES];
		size_t depth = m->depth[i], len = m->shared[i], blen = 0;
		uint64_t prev = 0, unfold = 0;

		if (!string_ok(r, root.comm))
			return damaged(r, "sample %zu names string %u of %zu", r->nsamples,
				       root.comm, r->nstrings);
		if (m->back[i] > i || (!m->back[i] && len))
			return damaged(r, "sample %zu: %u back, %zu shared locations", r->nsamples,
				       m->back[i], len);
		if (len) {
			const uint32_t *b = kp_profile_sample(r->p, r->nsamples - m->back[i], NULL,
							      &blen, NULL);

			if (len > blen)
				return damaged(r, "sample %zu shares %zu locations of %zu",
					       r->nsamples, len, blen);
			kp_xgrow(&r->stack, &r->stack_cap, len, sizeof(*r->stack));
			memcpy(r->stack, b, len * sizeof(*b));
			prev = b[len - 1];
		}
		if (depth > m->n_location - off)
			return damaged(r, "sample %zu has %zu locations, %zu are left", r->nsamples,
				       depth, m->n_location - off);
		if (off >= BATCH_LOCS)
			return damaged(
				r, "sample %zu follows %zu stack locations (at most %d a chunk)",
				r->nsamples, off, BATCH_LOCS);
		kp_xgrow(&r->stack, &r->stack_cap, len + depth + 1, sizeof(*r->stack));
		for (size_t j = 0; j < depth; j++, off++) {
			prev += (uint64_t)m->location[off];
			if (prev >= r->nlocations)
				return damaged(r, "sample %zu names location %lld of %zu",
					       r->nsamples, (long long)prev, r->nlocations);
			r->stack[len++] = (uint32_t)prev;
		}
		/* before the profile takes it: memory stays linear in the data */
		if (r->unfold_max <= 1)
			unfold = len;
		else
			for (size_t j = 0; j < len; j++)
				unfold += r->unfold[r->stack[j]];
		r->unfolded += unfold;
		r->sent += 1 + depth;
		if (r->unfolded > UNFOLD_PER_ITEM * r->sent + UNFOLD_FREE)
			return damaged(
				r,
				"sample %zu: the stacks so far unfold to %llu frames, past "
				"the %llu allowed (%d for each of the %llu locations, frames, "
				"samples and stack locations sent, plus %u)",
				r->nsamples, (unsigned long long)r->unfolded,
				(unsigned long long)(UNFOLD_PER_ITEM * r->sent + UNFOLD_FREE),
				UNFOLD_PER_ITEM, (unsigned long long)r->sent, UNFOLD_FREE);
		for (size_t v = 0; v < nv; v++) {
			values[v] = m->value[i * nv + v];
			if (m->n_value_high)
				values[v] |= (kp_count)m->value_high[i * nv + v] << 64;
		}
		if (!kp_profile_add(r->p, &root, r->stack, len, values))
			return damaged(r, "sample %zu: the sum of a value passes 2^128",
				       r->nsamples);
		if (kp_profile_nsamples(r->p) != r->nsamples + 1)
			return damaged(r, "sample %zu repeats an earlier one", r->nsamples);
		r->nsamples++;
	}
	if (off != m->n_location)
		return damaged(r, "%zu locations belong to no sample", m->n_location - off);
	return 0;
}

static int read_metadata(struct reader *r, const Kprof__Metadata *m)
{
	size_t bytes = 0;

	if (m->n_value != m->n_key)
		return damaged(r, "%zu keys for %zu values", m->n_key, m->n_value);
	if (m->n_key > BATCH)
		return too_many(r, m->n_key);
	for (size_t i = 0; i < m->n_key; i++) {
		const ProtobufCBinaryData *k = &m->key[i], *v = &m->value[i];

		if (bytes >= BATCH_BYTES)
			return damaged(
				r,
				"metadata entry %zu follows %zu bytes of entries (at most %u "
				"a chunk)",
				r->nmeta, bytes, BATCH_BYTES);
		bytes += k->len + v->len;

		if (!k->len || memchr(k->data, 0, k->len) || (v->len && memchr(v->data, 0, v->len)))
			return damaged(r, "metadata entry %zu: an empty key or a NUL byte",
				       r->nmeta);
		kp_xgrow(&r->text, &r->text_cap, k->len + v->len + 2, 1);
		memcpy(r->text, k->data, k->len);
		r->text[k->len] = 0;
		if (v->len)
			memcpy(r->text + k->len + 1, v->data, v->len);
		r->text[k->len + 1 + v->len] = 0;
		kp_profile_set_meta(r->p, r->text, "%s", r->text + k->len + 1);
		if (kp_profile_nmeta(r->p) != r->nmeta + 1)
			return damaged(r, "metadata key '%s' repeats", r->text);
		r->nmeta++;
	}
	return 0;
}

static int read_end(struct reader *r, const Kprof__End *m)
{
	const struct {
		const char *what;
		uint64_t said, read;
	} counts[] = {
		{"strings", m->strings, r->nstrings},
		{"value types", m->value_types, kp_profile_nvalues(r->p)},
		{"functions", m->functions, r->nfunctions},
		{"locations", m->locations, r->nlocations},
		{"frames", m->frames, r->nframes},
		{"mappings", m->mappings, r->nmappings},
		{"samples", m->samples, r->nsamples},
		{"metadata entries", m->metadata, r->nmeta},
	};

	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if (counts[i].said != counts[i].read)
			return damaged(r, "%llu %s said, %llu read",
				       (unsigned long long)counts[i].said, counts[i].what,
				       (unsigned long long)counts[i].read);
	r->ended = true;
	return 0;
}

static int read_chunk(struct reader *r, const Kprof__Chunk *c)
{
	switch (c->chunk_case) {
	case KPROF__CHUNK__CHUNK_STRINGS:
		r->what = "strings";
		return read_strings(r, c->strings);
	case KPROF__CHUNK__CHUNK_VALUE_TYPES:
		r->what = "value types";
		return read_value_types(r, c->value_types);
	case KPROF__CHUNK__CHUNK_FUNCTIONS:
		r->what = "functions";
		return read_functions(r, c->functions);
	case KPROF__CHUNK__CHUNK_LOCATIONS:
		r->what = "locations";
		return read_locations(r, c->locations);
	case KPROF__CHUNK__CHUNK_MAPPINGS:
		r->what = "mappings";
		return read_mappings(r, c->mappings);
	case KPROF__CHUNK__CHUNK_SAMPLES:
		r->what = "samples";
		return read_samples(r, c->samples);
	case KPROF__CHUNK__CHUNK_METADATA:
		r->what = "metadata";
		return read_metadata(r, c->metadata);
	case KPROF__CHUNK__CHUNK_END:
		r->what = "end";
		return read_end(r, c->end);
	default:
		/* a kind of chunk from a newer minor version: skipped */
		return 0;
	}
}

static int read_body(struct reader *r)
{
	for (;; r->chunk++) {
		Kprof__Chunk *c;
		size_t len = 0;
		int err = next_chunk(r, &len);

		if (err > 0)
			return r->ended ? 0 : stream_failed(r, "before its end chunk");
		if (err < 0)
			return err;
		if (r->ended)
			return damaged(r, "data after the end chunk");
		c = kprof__chunk__unpack(NULL, len, r->buf);
		if (!c)
			return damaged(r, "%zu bytes that do not decode", len);
		err = read_chunk(r, c);
		kprof__chunk__free_unpacked(c, NULL);
		if (err)
			return err;
	}
}

int kp_recording_read(FILE *in, const char *name, struct kp_profile **out, struct kp_diag *d)
{
	unsigned char header[KP_RECORDING_HEADER_SIZE];
	size_t n = fread(header, 1, sizeof(header), in);
	struct reader r = {.name = name, .d = d};
	int err;

	*out = NULL;
	if (n < sizeof(header) && ferror(in))
		return kp_diag_errno(d, -(errno ? errno : EIO), "cannot read %s", name);
	if (!kp_recording_magic(header, n))
		return kp_diag_set(d, -EINVAL, "%s: not a .kprof recording", name);
	if (n < sizeof(header))
		return kp_diag_set(d, -EINVAL, "%s: truncated .kprof recording (in its header)",
				   name);
	if (header[5] != KP_RECORDING_MAJOR)
		return kp_diag_set(d, -EPROTONOSUPPORT,
				   "%s: kprof recording format %u.x; this kprof reads %u.x", name,
				   header[5], KP_RECORDING_MAJOR);
	r.z = kp_zstd_reader_new(in);
	r.in = kp_zstd_reader_file(r.z);
	r.p = kp_profile_new();
	err = read_body(&r);
	if (err) {
		kp_profile_free(r.p);
		r.p = NULL;
	}
	*out = r.p;
	kp_zstd_reader_free(r.z);
	free(r.buf);
	free(r.stack);
	free(r.frames);
	free(r.text);
	free(r.unfold);
	return err;
}
