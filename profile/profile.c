/* The profile's tables are kp_seqtabs: a location is interned as its four
 * 32-bit words, a sample as [comm, pid, tid, location ids...], a function
 * as [name, file]; values live in an array parallel to the samples. */
#include "profile/profile.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/seqtab.h"
#include "util/strtab.h"
#include "util/u64map.h"
#include "util/xalloc.h"

#define ROOT_WORDS 3

/* Where a location's frames are in the frame pool. */
struct loc_frames {
	uint32_t first, n;
	bool named, resolved;
};

struct meta {
	char *key, *value;
};

struct kp_profile {
	struct kp_strtab *strings;

	struct kp_profile_value_type types[KP_PROFILE_MAX_VALUES];
	size_t ntypes;

	struct kp_seqtab loc_keys;
	struct kp_loc *locs; /* by location id */
	struct loc_frames *loc_frames;
	size_t locs_cap, loc_frames_cap;
	struct kp_profile_frame *frames; /* the pool */
	size_t nframes, frames_cap;

	struct kp_seqtab fn_keys;
	struct kp_profile_function *fns;
	size_t fns_cap;

	struct kp_profile_mapping *maps;
	size_t nmaps, maps_cap;
	struct kp_u64map map_of; /* kind << 32 | obj -> index + 1 */

	struct kp_seqtab samples;
	kp_count *values; /* ntypes per sample */
	size_t values_cap;
	kp_count totals[KP_PROFILE_MAX_VALUES];
	uint32_t *key; /* scratch: the sample being added */
	size_t key_cap;

	struct meta *meta;
	size_t nmeta, meta_cap;

	bool timed;
	uint64_t origin_ns;
	struct kp_profile_event *events;
	size_t nevents, events_cap, max_events; /* 0: KP_PROFILE_MAX_EVENTS */
	uint64_t dropped;
};

struct kp_profile *kp_profile_new(void)
{
	struct kp_profile *p = kp_xcalloc(1, sizeof(*p));

	p->strings = kp_strtab_new();
	kp_seqtab_init(&p->loc_keys);
	kp_seqtab_init(&p->fn_keys);
	kp_seqtab_init(&p->samples);
	kp_u64map_init(&p->map_of);
	return p;
}

void kp_profile_free(struct kp_profile *p)
{
	if (!p)
		return;
	kp_strtab_free(p->strings);
	kp_seqtab_fini(&p->loc_keys);
	kp_seqtab_fini(&p->fn_keys);
	kp_seqtab_fini(&p->samples);
	kp_u64map_fini(&p->map_of);
	free(p->locs);
	free(p->loc_frames);
	free(p->frames);
	free(p->fns);
	free(p->maps);
	free(p->values);
	free(p->key);
	for (size_t i = 0; i < p->nmeta; i++) {
		free(p->meta[i].key);
		free(p->meta[i].value);
	}
	free(p->meta);
	free(p->events);
	free(p);
}

/* ---- strings ---- */

uint32_t kp_profile_intern(struct kp_profile *p, const char *s, size_t len)
{
	/* the strtab's ids start at 1: 0 is free to mean "" */
	return len ? kp_strtab_intern(p->strings, s, len) : 0;
}

const char *kp_profile_str(const struct kp_profile *p, uint32_t id, size_t *len)
{
	if (!id || id > kp_strtab_count(p->strings)) {
		if (len)
			*len = 0;
		return "";
	}
	if (len)
		*len = kp_strtab_len(p->strings, id);
	return kp_strtab_str(p->strings, id);
}

size_t kp_profile_nstrings(const struct kp_profile *p)
{
	return kp_strtab_count(p->strings);
}

/* ---- value types ---- */

int kp_profile_add_value_type(struct kp_profile *p, const char *type, const char *unit,
			      unsigned decimals)
{
	struct kp_profile_value_type *t;

	if (p->ntypes == KP_PROFILE_MAX_VALUES)
		return -1;
	t = &p->types[p->ntypes];
	t->type = kp_profile_intern(p, type, strlen(type));
	t->unit = kp_profile_intern(p, unit, strlen(unit));
	t->decimals = decimals;
	return (int)p->ntypes++;
}

size_t kp_profile_nvalues(const struct kp_profile *p)
{
	return p->ntypes;
}

const struct kp_profile_value_type *kp_profile_value_type(const struct kp_profile *p, size_t i)
{
	return i < p->ntypes ? &p->types[i] : NULL;
}

int kp_profile_find_value(const struct kp_profile *p, const char *type)
{
	for (size_t i = 0; i < p->ntypes; i++)
		if (strcmp(kp_profile_str(p, p->types[i].type, NULL), type) == 0)
			return (int)i;
	return -1;
}

const char *kp_profile_value_names(const struct kp_profile *p, char *buf, size_t size)
{
	size_t n = 0;

	if (!size)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < p->ntypes && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "",
				      kp_profile_str(p, p->types[i].type, NULL));
	if (!p->ntypes)
		snprintf(buf, size, "none");
	return buf;
}

/* ---- locations and their frames ---- */

uint32_t kp_profile_location(struct kp_profile *p, const struct kp_loc *loc)
{
	uint32_t w[4] = {(uint32_t)loc->addr, (uint32_t)(loc->addr >> 32), loc->obj, loc->kind};
	bool added;
	size_t id = kp_seqtab_intern(&p->loc_keys, w, 4, &added);

	if (added) {
		kp_xgrow(&p->locs, &p->locs_cap, id + 1, sizeof(*p->locs));
		kp_xgrow(&p->loc_frames, &p->loc_frames_cap, id + 1, sizeof(*p->loc_frames));
		p->locs[id] = *loc;
		memset(&p->loc_frames[id], 0, sizeof(p->loc_frames[id]));
	}
	return (uint32_t)id;
}

uint32_t kp_profile_named_location(struct kp_profile *p, const char *name, size_t len,
				   enum kp_frame_kind kind)
{
	uint32_t fn = kp_profile_function(p, kp_profile_intern(p, name, len), 0);
	struct kp_loc loc = {.addr = (uint64_t)kind << 32 | fn, .kind = KP_LOC_NAMED};
	uint32_t id = kp_profile_location(p, &loc);

	if (!p->loc_frames[id].named) {
		struct kp_profile_frame f = {.function = fn, .kind = (uint8_t)kind};

		kp_profile_set_frames(p, id, &f, 1, true);
	}
	return id;
}

size_t kp_profile_nlocations(const struct kp_profile *p)
{
	return kp_seqtab_count(&p->loc_keys);
}

const struct kp_loc *kp_profile_loc(const struct kp_profile *p, uint32_t loc)
{
	return &p->locs[loc];
}

uint32_t kp_profile_function(struct kp_profile *p, uint32_t name, uint32_t file)
{
	uint32_t w[2] = {name, file};
	bool added;
	size_t id = kp_seqtab_intern(&p->fn_keys, w, 2, &added);

	if (added) {
		kp_xgrow(&p->fns, &p->fns_cap, id + 1, sizeof(*p->fns));
		p->fns[id] = (struct kp_profile_function){name, file};
	}
	return (uint32_t)id;
}

size_t kp_profile_nfunctions(const struct kp_profile *p)
{
	return kp_seqtab_count(&p->fn_keys);
}

const struct kp_profile_function *kp_profile_function_at(const struct kp_profile *p, uint32_t fn)
{
	return &p->fns[fn];
}

void kp_profile_set_frames(struct kp_profile *p, uint32_t loc,
			   const struct kp_profile_frame *frames, size_t n, bool resolved)
{
	struct loc_frames *lf = &p->loc_frames[loc];

	/* renaming with as many frames reuses the slot; else they go at the end */
	if (!lf->named || n > lf->n) {
		kp_xgrow(&p->frames, &p->frames_cap, p->nframes + n, sizeof(*p->frames));
		lf->first = (uint32_t)p->nframes;
		p->nframes += n;
	}
	if (n)
		memcpy(p->frames + lf->first, frames, n * sizeof(*frames));
	lf->n = (uint32_t)n;
	lf->named = true;
	lf->resolved = resolved;
}

const struct kp_profile_frame *kp_profile_frames(const struct kp_profile *p, uint32_t loc,
						 size_t *n, bool *resolved)
{
	const struct loc_frames *lf = &p->loc_frames[loc];

	*n = lf->named ? lf->n : 0;
	if (resolved)
		*resolved = lf->named && lf->resolved;
	return lf->named ? p->frames + lf->first : NULL;
}

/* ---- mappings ---- */

static uint64_t map_key(uint32_t kind, uint32_t obj)
{
	return (uint64_t)kind << 32 | obj;
}

void kp_profile_set_mapping(struct kp_profile *p, const struct kp_profile_mapping *m)
{
	uint64_t at;

	if (kp_u64map_get(&p->map_of, map_key(m->kind, m->obj), &at)) {
		p->maps[at - 1] = *m;
		return;
	}
	kp_xgrow(&p->maps, &p->maps_cap, p->nmaps + 1, sizeof(*p->maps));
	p->maps[p->nmaps++] = *m;
	kp_u64map_put(&p->map_of, map_key(m->kind, m->obj), p->nmaps);
}

size_t kp_profile_nmappings(const struct kp_profile *p)
{
	return p->nmaps;
}

const struct kp_profile_mapping *kp_profile_mapping_at(const struct kp_profile *p, size_t i)
{
	return i < p->nmaps ? &p->maps[i] : NULL;
}

const struct kp_profile_mapping *kp_profile_mapping_of(const struct kp_profile *p, uint32_t kind,
						       uint32_t obj)
{
	uint64_t at;

	return kp_u64map_get(&p->map_of, map_key(kind, obj), &at) ? &p->maps[at - 1] : NULL;
}

/* ---- samples ---- */

bool kp_profile_add(struct kp_profile *p, const struct kp_profile_root *root, const uint32_t *locs,
		    size_t n, const kp_count *values)
{
	return kp_profile_add_id(p, root, locs, n, values, NULL);
}

bool kp_profile_add_id(struct kp_profile *p, const struct kp_profile_root *root,
		       const uint32_t *locs, size_t n, const kp_count *values, uint32_t *id)
{
	size_t i, nv = p->ntypes;
	bool added;

	/* every sum is at most its total: checking the totals covers them */
	for (size_t v = 0; v < nv; v++)
		if (p->totals[v] + values[v] < p->totals[v])
			return false;
	kp_xgrow(&p->key, &p->key_cap, n + ROOT_WORDS, sizeof(*p->key));
	p->key[0] = root->comm;
	p->key[1] = root->pid;
	p->key[2] = root->tid;
	if (n)
		memcpy(p->key + ROOT_WORDS, locs, n * sizeof(*locs));
	i = kp_seqtab_intern(&p->samples, p->key, n + ROOT_WORDS, &added);
	if (added) {
		kp_xgrow(&p->values, &p->values_cap, (i + 1) * (nv ? nv : 1), sizeof(*p->values));
		memset(p->values + i * nv, 0, nv * sizeof(*p->values));
	}
	for (size_t v = 0; v < nv; v++) {
		p->values[i * nv + v] += values[v];
		p->totals[v] += values[v];
	}
	if (id)
		*id = (uint32_t)i;
	return true;
}

/* ---- time ---- */

void kp_profile_time_start(struct kp_profile *p, uint64_t origin_ns)
{
	p->timed = true;
	p->origin_ns = origin_ns;
}

void kp_profile_time_clear(struct kp_profile *p)
{
	p->timed = false;
	p->origin_ns = 0;
	p->nevents = 0;
	p->dropped = 0;
}

void kp_profile_time_limit(struct kp_profile *p, size_t max)
{
	p->max_events = max;
}

bool kp_profile_timed(const struct kp_profile *p)
{
	return p->timed;
}

uint64_t kp_profile_time_origin(const struct kp_profile *p)
{
	return p->timed ? p->origin_ns : 0;
}

uint64_t kp_profile_event_overlap(const struct kp_profile_event *e, uint64_t from_ms,
				  uint64_t to_ms)
{
	uint64_t end = (uint64_t)e->ms + 1, start = end - (e->span ? e->span : 1);

	if (start < from_ms)
		start = from_ms;
	if (end > to_ms)
		end = to_ms;
	return end > start ? end - start : 0;
}

bool kp_profile_add_event(struct kp_profile *p, uint32_t sample, uint32_t ms, uint32_t tid)
{
	return kp_profile_add_span(p, sample, ms, 1, tid);
}

bool kp_profile_add_span(struct kp_profile *p, uint32_t sample, uint32_t ms, uint32_t span,
			 uint32_t tid)
{
	if (!p->timed || p->nevents >= (p->max_events ? p->max_events : KP_PROFILE_MAX_EVENTS)) {
		p->dropped++;
		return false;
	}
	if (p->nevents && ms < p->events[p->nevents - 1].ms)
		ms = p->events[p->nevents - 1].ms;
	if (!span)
		span = 1;
	if (span > ms + 1ull)
		span = ms + 1;
	kp_xgrow(&p->events, &p->events_cap, p->nevents + 1, sizeof(*p->events));
	p->events[p->nevents++] = (struct kp_profile_event){ms, sample, tid, span};
	return true;
}

const struct kp_profile_event *kp_profile_events(const struct kp_profile *p, size_t *n)
{
	*n = p->nevents;
	return p->events;
}

uint64_t kp_profile_events_dropped(const struct kp_profile *p)
{
	return p->dropped;
}

void kp_profile_set_events_dropped(struct kp_profile *p, uint64_t n)
{
	p->dropped = n;
}

size_t kp_profile_nsamples(const struct kp_profile *p)
{
	return kp_seqtab_count(&p->samples);
}

const uint32_t *kp_profile_sample(const struct kp_profile *p, size_t i,
				  struct kp_profile_root *root, size_t *n, const kp_count **values)
{
	size_t len;
	const uint32_t *w = kp_seqtab_words(&p->samples, i, &len);

	if (root)
		*root = (struct kp_profile_root){w[0], w[1], w[2]};
	if (n)
		*n = len - ROOT_WORDS;
	if (values)
		*values = p->values + i * p->ntypes;
	return w + ROOT_WORDS;
}

kp_count kp_profile_total(const struct kp_profile *p, size_t v)
{
	return v < p->ntypes ? p->totals[v] : 0;
}

void kp_profile_frame_counts(const struct kp_profile *p, size_t v, kp_count *frames,
			     kp_count *unresolved)
{
	*frames = 0;
	memset(unresolved, 0, KP_LOC_NKINDS * sizeof(*unresolved));
	if (v >= p->ntypes)
		return;
	for (size_t i = 0; i < kp_profile_nsamples(p); i++) {
		size_t n;
		const kp_count *values;
		const uint32_t *locs = kp_profile_sample(p, i, NULL, &n, &values);

		for (size_t j = 0; j < n; j++) {
			const struct loc_frames *lf = &p->loc_frames[locs[j]];
			uint32_t kind = p->locs[locs[j]].kind;

			*frames += values[v];
			if ((!lf->named || !lf->resolved) && kind < KP_LOC_NKINDS)
				unresolved[kind] += values[v];
		}
	}
}

/* ---- metadata ---- */

void kp_profile_set_meta(struct kp_profile *p, const char *key, const char *fmt, ...)
{
	va_list ap;
	char *value;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	value = kp_xmalloc(len > 0 ? (size_t)len + 1 : 1);
	va_start(ap, fmt);
	vsnprintf(value, len > 0 ? (size_t)len + 1 : 1, fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < p->nmeta; i++) {
		if (strcmp(p->meta[i].key, key) == 0) {
			free(p->meta[i].value);
			p->meta[i].value = value;
			return;
		}
	}
	kp_xgrow(&p->meta, &p->meta_cap, p->nmeta + 1, sizeof(*p->meta));
	p->meta[p->nmeta++] = (struct meta){kp_xstrdup(key), value};
}

size_t kp_profile_nmeta(const struct kp_profile *p)
{
	return p->nmeta;
}

void kp_profile_meta_at(const struct kp_profile *p, size_t i, const char **key, const char **value)
{
	*key = p->meta[i].key;
	*value = p->meta[i].value;
}

const char *kp_profile_meta(const struct kp_profile *p, const char *key)
{
	for (size_t i = 0; i < p->nmeta; i++)
		if (strcmp(p->meta[i].key, key) == 0)
			return p->meta[i].value;
	return NULL;
}

/* ---- merging locations of the same frames ---- */

/* The id in q of string id of p. */
static uint32_t copy_str(struct kp_profile *q, const struct kp_profile *p, uint32_t id)
{
	size_t len;
	const char *str = kp_profile_str(p, id, &len);

	return kp_profile_intern(q, str, len);
}

/* The id in q of function fn of p. */
static uint32_t copy_function(struct kp_profile *q, const struct kp_profile *p, uint32_t fn)
{
	const struct kp_profile_function *f = &p->fns[fn];

	return kp_profile_function(q, copy_str(q, p, f->name), copy_str(q, p, f->file));
}

struct kp_profile *kp_profile_merge_locations(const struct kp_profile *p)
{
	struct kp_profile *q = kp_profile_new();
	size_t nlocs = kp_profile_nlocations(p);
	uint32_t *to = kp_xmalloc((nlocs ? nlocs : 1) * sizeof(*to));
	struct kp_seqtab keys;
	uint32_t *key = NULL, *stack = NULL;
	size_t key_cap = 0, stack_cap = 0;
	struct kp_profile_frame *frames = NULL;
	size_t frames_cap = 0, qid_cap = 0;
	uint32_t *qid = NULL; /* key id -> location id in q */
	uint32_t *sid = kp_xmalloc((kp_profile_nsamples(p) + 1) * sizeof(*sid));

	for (size_t v = 0; v < p->ntypes; v++)
		kp_profile_add_value_type(q, kp_profile_str(p, p->types[v].type, NULL),
					  kp_profile_str(p, p->types[v].unit, NULL),
					  p->types[v].decimals);
	kp_seqtab_init(&keys);
	for (size_t i = 0; i < nlocs; i++) {
		const struct kp_loc *loc = &p->locs[i];
		const struct loc_frames *lf = &p->loc_frames[i];
		size_t n = 0, k;
		bool added;

		kp_xgrow(&key, &key_cap, 5 + 3 * (size_t)lf->n, sizeof(*key));
		kp_xgrow(&frames, &frames_cap, lf->n ? lf->n : 1, sizeof(*frames));
		key[n++] = loc->kind;
		key[n++] = loc->obj;
		if (!lf->named) {
			/* nothing says what it is: its address stays its identity */
			key[n++] = UINT32_MAX;
			key[n++] = (uint32_t)loc->addr;
			key[n++] = (uint32_t)(loc->addr >> 32);
		} else {
			key[n++] = lf->resolved;
			for (uint32_t j = 0; j < lf->n; j++) {
				const struct kp_profile_frame *f = &p->frames[lf->first + j];

				frames[j] = *f;
				frames[j].function = copy_function(q, p, f->function);
				key[n++] = frames[j].function;
				key[n++] = f->line;
				key[n++] = f->kind;
			}
		}
		k = kp_seqtab_intern(&keys, key, n, &added);
		if (added) {
			kp_xgrow(&qid, &qid_cap, k + 1, sizeof(*qid));
			qid[k] = kp_profile_location(q, loc);
			if (lf->named)
				kp_profile_set_frames(q, qid[k], frames, lf->n, lf->resolved);
		}
		to[i] = qid[k];
	}
	for (size_t m = 0; m < p->nmaps; m++) {
		struct kp_profile_mapping map = p->maps[m];

		map.path = copy_str(q, p, map.path);
		kp_profile_set_mapping(q, &map);
	}
	for (size_t i = 0; i < kp_profile_nsamples(p); i++) {
		struct kp_profile_root root;
		const kp_count *values;
		size_t n;
		const uint32_t *locs = kp_profile_sample(p, i, &root, &n, &values);

		kp_xgrow(&stack, &stack_cap, n ? n : 1, sizeof(*stack));
		for (size_t j = 0; j < n; j++)
			stack[j] = to[locs[j]];
		root.comm = copy_str(q, p, root.comm);
		/* q's totals are p's: they fit */
		kp_profile_add_id(q, &root, stack, n, values, &sid[i]);
	}
	if (p->timed)
		kp_profile_time_start(q, p->origin_ns);
	for (size_t i = 0; i < p->nevents; i++)
		kp_profile_add_span(q, sid[p->events[i].sample], p->events[i].ms, p->events[i].span,
				    p->events[i].tid);
	q->dropped = p->dropped;
	for (size_t i = 0; i < p->nmeta; i++)
		kp_profile_set_meta(q, p->meta[i].key, "%s", p->meta[i].value);
	kp_seqtab_fini(&keys);
	free(key);
	free(stack);
	free(frames);
	free(qid);
	free(sid);
	free(to);
	return q;
}
