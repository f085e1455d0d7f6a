/* The Profile message is built as protobuf-c structs pointing into a few
 * pools (one array per message type, one for all location ids, values and
 * lines), packed by protobuf-c into one buffer and gzipped whole by
 * libdeflate. Samples of the same task share one set of labels. */
#include "formats/pprof.h"

#include <errno.h>
#include <libdeflate.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile.pb-c.h"
#include "profile/run_meta.h"
#include "util/utf8.h"
#include "util/seqtab.h"
#include "util/strtab.h"
#include "util/u64map.h"
#include "util/xalloc.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

#define KERNEL_MAPPING	"[kernel.kallsyms]"
#define LABELS_PER_ROOT 3 /* comm, pid, tid */

/* What the locations of one mapping say about it. */
struct map_seen {
	uint64_t lo, hi; /* lowest and highest address */
	bool any, unnamed, file, line;
};

struct pp {
	const struct kp_profile *p;
	struct kp_run_meta meta; /* p's metadata, read once */
	struct kp_strtab *strs;	 /* pprof's string table: id = index, 0 is "" */
	char *clean;
	size_t clean_cap;

	pb_value_type *types, period_type;
	pb_value_type **typep;

	pb_function *fns;
	pb_function **fnp;

	pb_mapping *maps;
	pb_mapping **mapp;
	struct map_seen *seen;
	size_t nmaps;
	struct kp_u64map map_of; /* kind << 32 | obj -> mapping index + 1 */
	size_t *map_order;	 /* mapping index -> the profile's mapping */
	size_t kernel_map;	 /* index + 1, 0: none */
	size_t other_map;	 /* index + 1 of the one without a module, 0: none */

	pb_location *locs;
	pb_location **locp;
	pb_line *lines;
	pb_line **linep;

	pb_sample *samples;
	pb_sample **samplep;
	uint64_t *loc_ids;
	int64_t *values;

	struct kp_seqtab roots; /* [comm, pid, tid] -> root index */
	pb_label *labels;	/* LABELS_PER_ROOT per root */
	pb_label **labelp;
	size_t *nlabels;

	int64_t *comments;
};

static void pp_fini(struct pp *b)
{
	kp_strtab_free(b->strs);
	free(b->clean);
	free(b->types);
	free(b->typep);
	free(b->fns);
	free(b->fnp);
	free(b->maps);
	free(b->map_order);
	free(b->mapp);
	free(b->seen);
	kp_u64map_fini(&b->map_of);
	free(b->locs);
	free(b->locp);
	free(b->lines);
	free(b->linep);
	free(b->samples);
	free(b->samplep);
	free(b->loc_ids);
	free(b->values);
	kp_seqtab_fini(&b->roots);
	free(b->labels);
	free(b->labelp);
	free(b->nlabels);
	free(b->comments);
}

/* The string table index of s[0..len), made valid UTF-8. */
static int64_t str_n(struct pp *b, const char *s, size_t len)
{
	size_t n;
	const char *c;

	if (!len)
		return 0;
	c = kp_utf8_clean(s, len, &b->clean, &b->clean_cap, &n);
	return kp_strtab_intern(b->strs, c, n);
}

static int64_t str(struct pp *b, const char *s)
{
	return str_n(b, s, strlen(s));
}

/* The string table index of one of the profile's strings. */
static int64_t pstr(struct pp *b, uint32_t id)
{
	size_t len;
	const char *s = kp_profile_str(b->p, id, &len);

	return str_n(b, s, len);
}

/* ---- values ---- */

/* pprof's values are int64, and readers sum them in int64: each value type
 * must be integral and its total must fit (then every value does). */
static int check_values(const struct kp_profile *p, struct kp_diag *d)
{
	for (size_t v = 0; v < kp_profile_nvalues(p); v++) {
		const struct kp_profile_value_type *vt = kp_profile_value_type(p, v);
		kp_count total = kp_profile_total(p, v);
		char buf[KP_COUNT_BUF];

		kp_count_format(total, vt->decimals, buf);
		if (vt->decimals)
			return kp_diag_set(
				d, -ERANGE,
				"pprof values are integers, but the profile's '%s' values "
				"have decimals (total %s): write folded or speedscope, or "
				"scale the counts to integers first",
				kp_profile_str(p, vt->type, NULL), buf);
		if (total > (kp_count)INT64_MAX)
			return kp_diag_set(d, -ERANGE,
					   "the profile's '%s' total, %s %s, does not fit pprof's "
					   "64-bit values",
					   kp_profile_str(p, vt->type, NULL), buf,
					   kp_profile_str(p, vt->unit, NULL));
	}
	return 0;
}

static void add_value_types(struct pp *b, pb_profile *m, size_t default_value)
{
	size_t nv = kp_profile_nvalues(b->p);

	b->types = kp_xcalloc(nv ? nv : 1, sizeof(*b->types));
	b->typep = kp_xcalloc(nv ? nv : 1, sizeof(*b->typep));
	for (size_t v = 0; v < nv; v++) {
		const struct kp_profile_value_type *vt = kp_profile_value_type(b->p, v);

		perftools__profiles__value_type__init(&b->types[v]);
		b->types[v].type = pstr(b, vt->type);
		b->types[v].unit = pstr(b, vt->unit);
		b->typep[v] = &b->types[v];
	}
	m->n_sample_type = nv;
	m->sample_type = b->typep;
	if (default_value < nv)
		m->default_sample_type = b->types[default_value].type;
}

/* ---- functions, mappings, locations ---- */

static void add_functions(struct pp *b, pb_profile *m)
{
	size_t n = kp_profile_nfunctions(b->p);

	b->fns = kp_xcalloc(n ? n : 1, sizeof(*b->fns));
	b->fnp = kp_xcalloc(n ? n : 1, sizeof(*b->fnp));
	for (size_t i = 0; i < n; i++) {
		const struct kp_profile_function *fn = kp_profile_function_at(b->p, (uint32_t)i);

		perftools__profiles__function__init(&b->fns[i]);
		b->fns[i].id = i + 1;
		b->fns[i].name = pstr(b, fn->name);
		/* system_name stays empty: the model keeps no linkage name, only
		 * kprof's (demangled) one, and a system_name equal to the name
		 * would make pprof take it for undemangled and cut C++ parameters
		 * and template arguments out of it ("[unknown <0>]" too) */
		b->fns[i].filename = pstr(b, fn->file);
		b->fnp[i] = &b->fns[i];
	}
	m->n_function = n;
	m->function = b->fnp;
}

static uint64_t map_key(uint32_t kind, uint32_t obj)
{
	return (uint64_t)kind << 32 | obj;
}

/* Build-ids are written as readers expect them: lowercase hex. */
static int64_t build_id_str(struct pp *b, const struct kp_profile_mapping *pm)
{
	static const char hex[] = "0123456789abcdef";
	char buf[2 * sizeof(pm->build_id) + 1];
	size_t n =
		pm->build_id_len < sizeof(pm->build_id) ? pm->build_id_len : sizeof(pm->build_id);

	for (size_t i = 0; i < n; i++) {
		buf[2 * i] = hex[pm->build_id[i] >> 4];
		buf[2 * i + 1] = hex[pm->build_id[i] & 15];
	}
	return str_n(b, buf, 2 * n);
}

/* The profile's mappings; one for the kernel when it has kernel locations;
 * and one without a file for the locations of no module (names read from
 * folded text, unknown addresses): without it pprof would invent one that
 * it then fails to symbolize ("Main binary filename not available."). Their
 * address ranges and has_* come with the locations. */
/* Does the file path run as the task comm (its name cut to 15 bytes)? */
static bool runs_as(const char *path, const char *comm)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	size_t len = strlen(comm);

	/* python3 runs /usr/bin/python3.11; a comm of 15 is a cut name */
	return len && strncmp(base, comm, len) == 0;
}

/* The profiled program: pprof takes the first mapping for the main binary
 * ("File:" in its header). It is the file of the user mappings that runs
 * as the tasks holding the most samples; n when none does, or when the
 * whole machine was sampled (the kernel's mapping comes first then, as
 * perf's converters write: the first busy program is no main file). */
static size_t main_mapping(const struct pp *b)
{
	size_t n = kp_profile_nmappings(b->p), ns = kp_profile_nsamples(b->p), best = n;
	struct kp_u64map by_comm; /* comm string id -> samples */
	kp_count best_w = 0;

	if (b->meta.system_wide)
		return n;
	kp_u64map_init(&by_comm);
	for (size_t i = 0; i < ns; i++) {
		struct kp_profile_root root;
		const kp_count *v;
		size_t depth;
		uint64_t w = 0;

		kp_profile_sample(b->p, i, &root, &depth, &v);
		kp_u64map_get(&by_comm, root.comm, &w);
		kp_u64map_put(&by_comm, root.comm, w + (uint64_t)v[0]);
	}
	for (size_t i = 0; i < n; i++) {
		const struct kp_profile_mapping *pm = kp_profile_mapping_at(b->p, i);
		const char *path = kp_profile_str(b->p, pm->path, NULL);
		kp_count w = 0;
		uint64_t comm, samples;
		size_t pos = 0;

		if (pm->kind != KP_LOC_USER)
			continue;
		while (kp_u64map_next(&by_comm, &pos, &comm, &samples))
			if (runs_as(path, kp_profile_str(b->p, (uint32_t)comm, NULL)))
				w += (kp_count)samples;
		if (w > best_w) {
			best_w = w;
			best = i;
		}
	}
	kp_u64map_fini(&by_comm);
	return best;
}

static void add_mappings(struct pp *b)
{
	size_t n = kp_profile_nmappings(b->p), nloc = kp_profile_nlocations(b->p);
	size_t first = main_mapping(b);
	/* the whole machine: the kernel's mapping first, always there */
	bool sys = b->meta.system_wide;
	bool kernel = sys, other = false;
	size_t off = sys; /* where the profile's mappings start */

	/* the main binary first, the others in the profile's order after it */
	b->map_order = kp_xcalloc(n ? n : 1, sizeof(*b->map_order));
	for (size_t i = 0, k = first < n; i < n; i++)
		b->map_order[i == first ? 0 : k++] = i;
	for (size_t k = 0; k < n; k++) {
		const struct kp_profile_mapping *pm = kp_profile_mapping_at(b->p, b->map_order[k]);

		kp_u64map_put(&b->map_of, map_key(pm->kind, pm->obj), off + k + 1);
	}
	for (size_t l = 0; l < nloc; l++) {
		const struct kp_loc *loc = kp_profile_loc(b->p, (uint32_t)l);
		uint64_t at;

		if (loc->kind == KP_LOC_KERNEL)
			kernel = true;
		else if (!kp_u64map_get(&b->map_of, map_key(loc->kind, loc->obj), &at))
			other = true;
	}
	b->nmaps = n + kernel + other;
	b->maps = kp_xcalloc(b->nmaps ? b->nmaps : 1, sizeof(*b->maps));
	b->mapp = kp_xcalloc(b->nmaps ? b->nmaps : 1, sizeof(*b->mapp));
	b->seen = kp_xcalloc(b->nmaps ? b->nmaps : 1, sizeof(*b->seen));
	for (size_t i = 0; i < b->nmaps; i++) {
		perftools__profiles__mapping__init(&b->maps[i]);
		b->maps[i].id = i + 1;
		b->mapp[i] = &b->maps[i];
	}
	for (size_t i = 0; i < n; i++) {
		const struct kp_profile_mapping *pm = kp_profile_mapping_at(b->p, b->map_order[i]);

		b->maps[off + i].filename = pstr(b, pm->path);
		b->maps[off + i].build_id = build_id_str(b, pm);
	}
	if (kernel) {
		b->kernel_map = sys ? 1 : n + 1;
		b->maps[b->kernel_map - 1].filename = str(b, KERNEL_MAPPING);
	}
	if (other)
		b->other_map = n + kernel + 1;
}

/* Index + 1 of the mapping of a location. */
static size_t mapping_of(const struct pp *b, const struct kp_loc *loc)
{
	uint64_t at;

	if (loc->kind == KP_LOC_KERNEL)
		return b->kernel_map;
	if (kp_u64map_get(&b->map_of, map_key(loc->kind, loc->obj), &at))
		return (size_t)at;
	return b->other_map;
}

/* A file pprof (or Parca, through the build-id) can read symbols from:
 * a placeholder of kprof's is better left to it. */
static bool symbolizable(const struct pp *b, size_t map)
{
	int64_t file = map ? b->maps[map - 1].filename : 0;

	return file && map != b->kernel_map && map != b->other_map &&
	       kp_strtab_str(b->strs, (uint32_t)file)[0] != '[';
}

static void add_locations(struct pp *b, pb_profile *m)
{
	size_t n = kp_profile_nlocations(b->p), nlines = 0, at = 0;

	for (size_t l = 0; l < n; l++) {
		size_t nf;

		kp_profile_frames(b->p, (uint32_t)l, &nf, NULL);
		nlines += nf;
	}
	b->locs = kp_xcalloc(n ? n : 1, sizeof(*b->locs));
	b->locp = kp_xcalloc(n ? n : 1, sizeof(*b->locp));
	b->lines = kp_xcalloc(nlines ? nlines : 1, sizeof(*b->lines));
	b->linep = kp_xcalloc(nlines ? nlines : 1, sizeof(*b->linep));
	for (size_t l = 0; l < n; l++) {
		const struct kp_loc *loc = kp_profile_loc(b->p, (uint32_t)l);
		pb_location *pl = &b->locs[l];
		size_t nf, map = mapping_of(b, loc);
		bool resolved;
		const struct kp_profile_frame *fr =
			kp_profile_frames(b->p, (uint32_t)l, &nf, &resolved);
		struct map_seen *ms = map ? &b->seen[map - 1] : NULL;

		perftools__profiles__location__init(pl);
		pl->id = l + 1;
		pl->mapping_id = map;
		/* a named location's addr is no address (it encodes the name) */
		if (loc->kind != KP_LOC_NAMED && loc->kind != KP_LOC_TRUNCATED)
			pl->address = loc->addr;
		if (fr && !resolved && symbolizable(b, map))
			nf = 0;
		pl->n_line = fr ? nf : 0;
		pl->line = b->linep + at;
		/* kprof's frames are outermost first, pprof's lines innermost */
		for (size_t k = 0; k < pl->n_line; k++) {
			const struct kp_profile_frame *f = &fr[nf - 1 - k];
			pb_line *ln = &b->lines[at];

			perftools__profiles__line__init(ln);
			ln->function_id = (uint64_t)f->function + 1;
			ln->line = f->line;
			b->linep[at++] = ln;
			if (ms) {
				ms->line |= f->line != 0;
				ms->file |= kp_profile_function_at(b->p, f->function)->file != 0;
			}
		}
		if (ms) {
			if (!ms->any || pl->address < ms->lo)
				ms->lo = pl->address;
			if (!ms->any || pl->address > ms->hi)
				ms->hi = pl->address;
			ms->any = true;
			ms->unnamed |= pl->n_line == 0;
		}
		b->locp[l] = pl;
	}
	m->n_location = n;
	m->location = b->locp;
}

/* Address ranges and what the mappings' locations know. An address is a
 * file offset (user code) or a virtual address (kernel, JIT); a mapping
 * covers what was sampled and maps an address to itself as a file offset
 * (memory_start = file_offset), so that pprof's address - memory_start +
 * file_offset is the offset kprof recorded, and a reader symbolizing from
 * the file finds the right segment. */
static void finish_mappings(struct pp *b, pb_profile *m)
{
	for (size_t i = 0; i < b->nmaps; i++) {
		pb_mapping *pm = &b->maps[i];
		const struct map_seen *ms = &b->seen[i];

		if (ms->any && i + 1 != b->other_map) {
			pm->memory_start = ms->lo;
			pm->memory_limit = ms->hi + 1;
			pm->file_offset = i + 1 == b->kernel_map ? 0 : ms->lo;
		}
		/* a reader symbolizes a mapping unless all its locations are named;
		 * the one of no module has no file to symbolize from */
		pm->has_functions = ms->any && (!ms->unnamed || i + 1 == b->other_map);
		pm->has_filenames = pm->has_functions && ms->file;
		pm->has_line_numbers = pm->has_functions && ms->line;
		/* kprof's lines and inline chains come from the same DWARF */
		pm->has_inline_frames = pm->has_line_numbers;
	}
	m->n_mapping = b->nmaps;
	m->mapping = b->mapp;
}

/* ---- samples ---- */

/* The tasks of the samples (*root_of: each sample's), each with its labels:
 * "comm" as a string, "pid" and "tid" as numbers when recorded. */
static uint32_t *add_roots(struct pp *b)
{
	size_t n = kp_profile_nsamples(b->p), nroots;
	uint32_t *root_of = kp_xcalloc(n ? n : 1, sizeof(*root_of));

	for (size_t i = 0; i < n; i++) {
		struct kp_profile_root r;
		uint32_t key[3];

		kp_profile_sample(b->p, i, &r, NULL, NULL);
		key[0] = r.comm;
		key[1] = r.pid;
		key[2] = r.tid;
		root_of[i] = (uint32_t)kp_seqtab_intern(&b->roots, key, 3, NULL);
	}
	nroots = kp_seqtab_count(&b->roots);
	b->labels = kp_xcalloc(nroots * LABELS_PER_ROOT + 1, sizeof(*b->labels));
	b->labelp = kp_xcalloc(nroots * LABELS_PER_ROOT + 1, sizeof(*b->labelp));
	b->nlabels = kp_xcalloc(nroots + 1, sizeof(*b->nlabels));
	for (size_t i = 0; i < nroots; i++) {
		size_t len, k = 0;
		const uint32_t *key = kp_seqtab_words(&b->roots, i, &len);
		pb_label *lb = b->labels + i * LABELS_PER_ROOT;

		for (size_t j = 0; j < LABELS_PER_ROOT; j++) {
			perftools__profiles__label__init(&lb[j]);
			b->labelp[i * LABELS_PER_ROOT + j] = &lb[j];
		}
		if (key[0]) {
			lb[k].key = str(b, "comm");
			lb[k++].str = pstr(b, key[0]);
		}
		if (key[1]) {
			lb[k].key = str(b, "pid");
			lb[k++].num = key[1];
		}
		if (key[2]) {
			lb[k].key = str(b, "tid");
			lb[k++].num = key[2];
		}
		b->nlabels[i] = k;
	}
	return root_of;
}

static void add_samples(struct pp *b, pb_profile *m)
{
	size_t n = kp_profile_nsamples(b->p), nv = kp_profile_nvalues(b->p), nids = 0, at = 0;
	uint32_t *root_of = add_roots(b);

	for (size_t i = 0; i < n; i++) {
		size_t len;

		kp_profile_sample(b->p, i, NULL, &len, NULL);
		nids += len;
	}
	b->samples = kp_xcalloc(n ? n : 1, sizeof(*b->samples));
	b->samplep = kp_xcalloc(n ? n : 1, sizeof(*b->samplep));
	b->loc_ids = kp_xcalloc(nids ? nids : 1, sizeof(*b->loc_ids));
	b->values = kp_xcalloc(n * nv + 1, sizeof(*b->values));
	for (size_t i = 0; i < n; i++) {
		const kp_count *values;
		size_t len;
		const uint32_t *locs = kp_profile_sample(b->p, i, NULL, &len, &values);
		pb_sample *s = &b->samples[i];

		perftools__profiles__sample__init(s);
		/* leaf first */
		for (size_t j = 0; j < len; j++)
			b->loc_ids[at + j] = (uint64_t)locs[len - 1 - j] + 1;
		s->n_location_id = len;
		s->location_id = b->loc_ids + at;
		at += len;
		for (size_t v = 0; v < nv; v++)
			b->values[i * nv + v] = (int64_t)values[v]; /* check_values: it fits */
		s->n_value = nv;
		s->value = b->values + i * nv;
		s->n_label = b->nlabels[root_of[i]];
		s->label = b->labelp + (size_t)root_of[i] * LABELS_PER_ROOT;
		b->samplep[i] = s;
	}
	free(root_of);
	m->n_sample = n;
	m->sample = b->samplep;
}

/* ---- metadata ---- */

static void add_metadata(struct pp *b, pb_profile *m)
{
	size_t n = kp_profile_nmeta(b->p), nv = kp_profile_nvalues(b->p);
	const struct kp_run_meta *r = &b->meta;
	const char *event = r->event;
	/* a period that fits pprof's int64 */
	bool period = r->have_period && r->period <= (uint64_t)INT64_MAX;

	b->comments = kp_xcalloc(n ? n : 1, sizeof(*b->comments));
	for (size_t i = 0; i < n; i++) {
		const char *key, *value;
		char *line;

		kp_profile_meta_at(b->p, i, &key, &value);
		line = kp_xasprintf("%s=%s", key, value);
		b->comments[i] = str(b, line);
		free(line);
	}
	m->n_comment = n;
	m->comment = b->comments;
	if (r->start || r->start_ns)
		m->time_nanos = (int64_t)r->start * 1000000000 + r->start_ns;
	m->duration_nanos = (int64_t)r->duration_ns;

	/* the period is in the unit of the event's value type (cpu/nanoseconds
	 * for cpu-clock): the first that does not count samples */
	perftools__profiles__value_type__init(&b->period_type);
	for (size_t i = 0; i < nv; i++) {
		const struct kp_profile_value_type *vt = kp_profile_value_type(b->p, i);
		const char *unit = kp_profile_str(b->p, vt->unit, NULL);

		if (strcmp(unit, "count") == 0)
			continue;
		b->period_type = b->types[i];
		m->period_type = &b->period_type;
		if (period) {
			m->period = (int64_t)r->period;
		} else if (strcmp(unit, "nanoseconds") == 0 && r->frequency > 0) {
			int64_t v = (int64_t)r->frequency;

			m->period = (1000000000 + v / 2) / v;
		}
		return;
	}
	/* no value type for the event: its period counts events */
	if (event && *event && period) {
		b->period_type.type = str(b, event);
		b->period_type.unit = str(b, "count");
		m->period_type = &b->period_type;
		m->period = (int64_t)r->period;
	}
}

/* ---- the whole ---- */

int kp_pprof_encode(const struct kp_profile *p, const struct kp_pprof_opts *o, uint8_t **buf,
		    size_t *len, struct kp_diag *d)
{
	static char empty[1]; /* protobuf-c's strings are char *, never written */
	pb_profile m = PERFTOOLS__PROFILES__PROFILE__INIT;
	struct pp b = {.p = p};
	char **table;
	size_t nstr;
	int err;

	kp_run_meta_read(p, &b.meta);
	*buf = NULL;
	*len = 0;
	err = check_values(p, d);
	if (err)
		return err;
	b.strs = kp_strtab_new();
	kp_u64map_init(&b.map_of);
	kp_seqtab_init(&b.roots);
	add_value_types(&b, &m, o ? o->default_value : 0);
	add_functions(&b, &m);
	add_mappings(&b);
	add_locations(&b, &m);
	finish_mappings(&b, &m);
	add_samples(&b, &m);
	add_metadata(&b, &m);

	/* string_table[0] is "", then the interned strings by id */
	nstr = kp_strtab_count(b.strs) + 1;
	table = kp_xcalloc(nstr, sizeof(*table));
	table[0] = empty;
	for (size_t i = 1; i < nstr; i++)
		table[i] = (char *)kp_strtab_str(b.strs, (uint32_t)i);
	m.n_string_table = nstr;
	m.string_table = table;

	*len = perftools__profiles__profile__get_packed_size(&m);
	*buf = kp_xmalloc(*len ? *len : 1);
	perftools__profiles__profile__pack(&m, *buf);
	free(table);
	pp_fini(&b);
	return 0;
}

int kp_pprof_write(const struct kp_profile *p, const struct kp_pprof_opts *o, FILE *out,
		   struct kp_diag *d)
{
	struct libdeflate_compressor *c;
	uint8_t *raw, *gz;
	size_t len, gzlen;
	int level = o && o->level ? o->level : KP_PPROF_LEVEL;
	int err = kp_pprof_encode(p, o, &raw, &len, d);

	if (err)
		return err;
	c = libdeflate_alloc_compressor(level);
	if (!c) {
		err = kp_diag_set(d, -EINVAL, "pprof: cannot set up gzip level %d", level);
		goto out_raw;
	}
	gzlen = libdeflate_gzip_compress_bound(c, len);
	gz = kp_xmalloc(gzlen);
	gzlen = libdeflate_gzip_compress(c, raw, len, gz, gzlen);
	if (!gzlen) {
		err = kp_diag_set(d, -EIO, "pprof: gzip compression failed");
		goto out_gz;
	}
	if (fwrite(gz, 1, gzlen, out) != gzlen) {
		err = kp_diag_errno(d, errno ? -errno : -EIO, "cannot write the pprof profile");
		goto out_gz;
	}
out_gz:
	free(gz);
	libdeflate_free_compressor(c);
out_raw:
	free(raw);
	return err;
}
