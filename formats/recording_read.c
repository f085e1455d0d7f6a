/* The .kprof reader: docs/recording-format.md. The tag and the length of
 * each chunk are read, then the chunk's bytes, which protobuf-c unpacks;
 * every id is checked against the table read so far before the profile
 * sees it. */
#include "formats/recording.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/recordingP.h"
#include "formats/zstdio.h"
#include "kprof.pb-c.h"
#include "util/u64map.h"
#include "util/xalloc.h"

static const char magic[5] = {'K', 'P', 'R', 'O', 'F'};

bool kp_recording_magic(const void *buf, size_t len)
{
	return len >= sizeof(magic) && memcmp(buf, magic, sizeof(magic)) == 0;
}

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
	/* the time axis: events read, and the last one's ms */
	size_t nevents;
	uint64_t last_ms;
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

/* The delta coding of a Locations chunk: each column holds the difference
 * to the last value of the same key (0 before the first). */
struct loc_deltas {
	struct kp_u64map addr; /* by object key: the last address */
	struct kp_u64map fn;   /* by object key: the last frame's function */
	struct kp_u64map line; /* by function: the last line */
};

/* The nf frames of location (key), from frame column f on, into
 * r->frames; every function and kind checked. */
static int read_frames(struct reader *r, const Kprof__Locations *m, struct loc_deltas *dl,
		       uint64_t key, size_t f, size_t nf)
{
	kp_xgrow(&r->frames, &r->frames_cap, nf ? nf : 1, sizeof(*r->frames));
	for (size_t j = 0; j < nf; j++, f++) {
		uint64_t fn = 0, line = 0;

		kp_u64map_get(&dl->fn, key, &fn);
		fn += (uint64_t)m->function[f];
		if (fn >= r->nfunctions)
			return damaged(r, "location %zu names function %lld of %zu", r->nlocations,
				       (long long)fn, r->nfunctions);
		kp_u64map_put(&dl->fn, key, fn);
		kp_u64map_get(&dl->line, fn, &line);
		line += (uint64_t)m->line[f];
		if (line > UINT32_MAX)
			return damaged(r, "location %zu has line %lld", r->nlocations,
				       (long long)line);
		kp_u64map_put(&dl->line, fn, line);
		if (m->frame_kind[f] > KP_FRAME_ROOT)
			return damaged(r, "location %zu has a frame of kind %u", r->nlocations,
				       m->frame_kind[f]);
		r->frames[j] = (struct kp_profile_frame){
			.function = (uint32_t)fn,
			.line = (uint32_t)line,
			.kind = (uint8_t)m->frame_kind[f],
		};
	}
	return 0;
}

/* Adds loc, with state and the nf frames of r->frames, to the profile as
 * the next location, and counts what it unfolds to. */
static int add_location(struct reader *r, const struct kp_loc *loc, uint32_t state, size_t nf)
{
	uint32_t id;

	if (r->nlocations >= UINT32_MAX)
		return damaged(r, "more than 2^32 locations");
	id = kp_profile_location(r->p, loc);
	if (id != r->nlocations)
		return damaged(r, "location %zu repeats location %u", r->nlocations, id);
	if (state != LOC_UNNAMED)
		kp_profile_set_frames(r->p, id, r->frames, nf, state == LOC_NAMED);
	r->unfold[r->nlocations] = nf ? (uint32_t)nf : 1;
	if (r->unfold[r->nlocations] > r->unfold_max)
		r->unfold_max = r->unfold[r->nlocations];
	r->nlocations++;
	r->nframes += nf;
	r->sent += 1 + nf;
	return 0;
}

/* Location i of the chunk, whose frames start at frame column *f (moved
 * past them). */
static int read_location(struct reader *r, const Kprof__Locations *m, struct loc_deltas *dl,
			 size_t i, size_t *f)
{
	struct kp_loc loc = {.obj = m->object[i], .kind = m->kind[i]};
	uint64_t key = kp_recording_object_key(loc.kind, loc.obj), v = 0;
	size_t nf = m->frames[i];
	int err;

	if (loc.kind >= KP_LOC_NKINDS)
		return damaged(r, "location %zu has kind %u", r->nlocations, loc.kind);
	if (*f >= BATCH_FRAMES)
		return damaged(r, "location %zu follows %zu frames (at most %d a chunk)",
			       r->nlocations, *f, BATCH_FRAMES);
	kp_u64map_get(&dl->addr, key, &v);
	loc.addr = v + (uint64_t)m->address[i];
	kp_u64map_put(&dl->addr, key, loc.addr);
	if (m->state[i] > LOC_PLACEHOLDER || (m->state[i] == LOC_UNNAMED && nf))
		return damaged(r, "location %zu has state %u with %zu frames", r->nlocations,
			       m->state[i], nf);
	if (nf > m->n_function - *f)
		return damaged(r, "location %zu has %zu frames, %zu are left", r->nlocations, nf,
			       m->n_function - *f);
	err = read_frames(r, m, dl, key, *f, nf);
	if (err)
		return err;
	*f += nf;
	return add_location(r, &loc, m->state[i], nf);
}

static int read_locations(struct reader *r, const Kprof__Locations *m)
{
	size_t n = m->n_kind, f = 0;
	struct loc_deltas dl;
	int err = 0;

	if (m->n_object != n || m->n_address != n || m->n_state != n || m->n_frames != n)
		return damaged(r, "columns of different lengths");
	if (m->n_line != m->n_function || m->n_frame_kind != m->n_function)
		return damaged(r, "frame columns of different lengths");
	if (n > BATCH)
		return too_many(r, n);
	kp_xgrow(&r->unfold, &r->unfold_cap, r->nlocations + n + 1, sizeof(*r->unfold));
	kp_u64map_init(&dl.addr);
	kp_u64map_init(&dl.fn);
	kp_u64map_init(&dl.line);
	for (size_t i = 0; i < n && !err; i++)
		err = read_location(r, m, &dl, i, &f);
	if (!err && f != m->n_function)
		err = damaged(r, "%zu frames belong to no location", m->n_function - f);
	kp_u64map_fini(&dl.addr);
	kp_u64map_fini(&dl.fn);
	kp_u64map_fini(&dl.line);
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

/* An event's sample, from its difference with its thread's last (last:
 * thread -> sample id, for the chunk). Returns 0, or the damage said. */
static int event_sample(struct reader *r, struct kp_u64map *last, uint64_t tid, int64_t diff,
			uint64_t *sample)
{
	if (!kp_u64map_get(last, tid, sample))
		*sample = 0;
	*sample += (uint64_t)diff;
	if (*sample >= r->nsamples)
		return damaged(r, "event %zu names sample %lld of %zu", r->nevents,
			       (long long)*sample, r->nsamples);
	kp_u64map_put(last, tid, *sample);
	return 0;
}

static int read_timeline(struct reader *r, const Kprof__Timeline *m)
{
	size_t n = m->n_tick;
	uint64_t ms = 0, tid = 0, sample = 0;
	struct kp_u64map last; /* thread -> its last sample id in the chunk */
	int err = 0;

	if (m->n_sample != n || m->n_tid != n || (m->n_span && m->n_span != n))
		return damaged(r, "columns of different lengths");
	if (n > BATCH_EVENTS)
		return too_many(r, n);
	if (r->nmeta)
		return damaged(r, "a timeline after the metadata");
	if (!kp_profile_timed(r->p))
		kp_profile_time_start(r->p, m->origin_ns);
	else if (kp_profile_time_origin(r->p) != m->origin_ns)
		return damaged(r, "a timeline of another origin");
	kp_profile_set_events_dropped(r->p, m->dropped);
	/* what the file holds: a few bytes of it an event, so memory stays
	 * linear in its size (the recorder's bound is for its own memory) */
	kp_profile_time_limit(r->p, SIZE_MAX);
	kp_u64map_init(&last);
	for (size_t i = 0; i < n && !err; i++, r->nevents++) {
		/* (1.2) the ms a wait covers, ending at its time */
		uint64_t span = m->n_span ? (uint64_t)m->span[i] + 1 : 1;

		ms += m->tick[i];
		tid += (uint64_t)m->tid[i];
		if (m->tick[i] > UINT32_MAX || ms > UINT32_MAX)
			err = damaged(r, "event %zu at %llu ms, past 2^32", r->nevents,
				      (unsigned long long)ms);
		else if (ms < r->last_ms)
			err = damaged(r, "event %zu at %llu ms, before the one before it (%llu ms)",
				      r->nevents, (unsigned long long)ms,
				      (unsigned long long)r->last_ms);
		else if (span > ms + 1)
			err = damaged(r,
				      "event %zu at %llu ms covers %llu ms, from before the origin",
				      r->nevents, (unsigned long long)ms, (unsigned long long)span);
		else if (tid > UINT32_MAX)
			err = damaged(r, "event %zu: thread %llu", r->nevents,
				      (unsigned long long)tid);
		else
			err = event_sample(r, &last, tid, m->sample[i], &sample);
		if (err)
			break;
		r->last_ms = ms;
		kp_profile_add_span(r->p, (uint32_t)sample, (uint32_t)ms, (uint32_t)span,
				    (uint32_t)tid);
	}
	kp_u64map_fini(&last);
	return err;
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
		{"events", m->events, r->nevents},
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
	case KPROF__CHUNK__CHUNK_TIMELINE:
		r->what = "timeline";
		return read_timeline(r, c->timeline);
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
