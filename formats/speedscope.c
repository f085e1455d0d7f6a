/* The document is one jansson tree, dumped compact. Frame indices are one
 * shared json integer each, referenced from every stack that holds the
 * frame, and the stacks are one array shared by the profiles of all value
 * types: a 300,000-stack profile costs a pointer per frame of its stacks,
 * not an object. Stacks are interned as frame-index sequences first. */
#include "formats/speedscope.h"

#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile/run_meta.h"
#include "util/utf8.h"
#include "util/seqtab.h"
#include "util/strtab.h"
#include "util/xalloc.h"

#define SCHEMA "https://www.speedscope.app/file-format-schema.json"

/* Frame keys: [tag, a, b]; a function frame's tag is 1 + its kind. */
enum { TAG_ROOT = 16, TAG_UNKNOWN = 17 };

struct loc_at {
	uint32_t first, n;
	bool known;
};

struct ss {
	const struct kp_profile *p;
	bool lines;
	struct kp_seqtab keys;	 /* frame key -> frame index */
	struct kp_strtab *roots; /* root frames' texts */
	json_t *frames;		 /* shared.frames */
	json_t **idx;		 /* frame index -> its json integer */
	size_t idx_cap;
	struct kp_seqtab stacks; /* frame-index stacks -> sample */
	kp_count *weights;	 /* kp_profile_nvalues per sample */
	size_t weights_cap;
	uint32_t *stack_of; /* by profile sample: its stack's index */
	/* a timed profile's samples in time order: one a event (and one for
	 * each sample with no event), nvalues weights each */
	kp_count *seq_weights;
	size_t nseq;
	struct loc_at *loc_at; /* by location: its frame indices in fpool */
	uint32_t *fpool;
	size_t nfpool, fpool_cap;
	char *clean;
	size_t clean_cap;
};

/* jansson returns NULL or -1 only when malloc fails (strings are valid
 * UTF-8 by then): kprof ends then, as util/xalloc.h does. */
static json_t *need(json_t *j)
{
	if (!j)
		kp_oom(0);
	return j;
}

static void put(json_t *obj, const char *key, json_t *v)
{
	if (json_object_set_new(obj, key, v) < 0)
		kp_oom(0);
}

static void push(json_t *arr, json_t *v)
{
	if (json_array_append_new(arr, v) < 0)
		kp_oom(0);
}

/* Appends a reference to v, which stays shared. */
static void push_ref(json_t *arr, json_t *v)
{
	if (json_array_append(arr, v) < 0)
		kp_oom(0);
}

static json_t *text(struct ss *w, const char *s, size_t len)
{
	size_t n;
	const char *c = kp_utf8_clean(s, len, &w->clean, &w->clean_cap, &n);

	return need(json_stringn(c, n));
}

/* The index of the frame of key, added (named name, in file at line, 0
 * for none) when new. */
static uint32_t frame(struct ss *w, const uint32_t key[3], const char *name, size_t len,
		      uint32_t file, uint32_t line)
{
	bool added;
	size_t i = kp_seqtab_intern(&w->keys, key, 3, &added);

	if (added) {
		json_t *f = need(json_object());

		put(f, "name", text(w, name, len));
		if (file) {
			size_t flen;
			const char *fs = kp_profile_str(w->p, file, &flen);

			put(f, "file", text(w, fs, flen));
		}
		if (line)
			put(f, "line", need(json_integer(line)));
		push(w->frames, f);
		kp_xgrow(&w->idx, &w->idx_cap, i + 1, sizeof(*w->idx));
		w->idx[i] = need(json_integer((json_int_t)i));
	}
	return (uint32_t)i;
}

static uint32_t fn_frame(struct ss *w, const struct kp_profile_frame *fr)
{
	const struct kp_profile_function *fn = kp_profile_function_at(w->p, fr->function);
	uint32_t line = w->lines ? fr->line : 0;
	uint32_t key[3] = {1u + fr->kind, fr->function, line};
	size_t len;
	const char *name = kp_profile_str(w->p, fn->name, &len);

	return frame(w, key, name, len, fn->file, line);
}

static uint32_t root_frame(struct ss *w, const struct kp_profile_root *r,
			   const struct kp_fold_opts *fo)
{
	char buf[160];
	const char *name = kp_fold_root_name(w->p, r, fo, buf, sizeof(buf));
	size_t len = strlen(name);
	uint32_t key[3] = {TAG_ROOT, len ? kp_strtab_intern(w->roots, name, len) : 0, 0};

	return frame(w, key, name, len, 0, 0);
}

/* The frame indices of location loc (*out, valid until the next call),
 * found once per location: a stack is then copies of its locations'. */
static size_t loc_frames(struct ss *w, uint32_t loc, const uint32_t **out)
{
	static const uint32_t unknown[3] = {TAG_UNKNOWN, 0, 0};
	size_t nf;
	const struct kp_profile_frame *fr;

	if (!w->loc_at[loc].known) {
		fr = kp_profile_frames(w->p, loc, &nf, NULL);
		kp_xgrow(&w->fpool, &w->fpool_cap, w->nfpool + (fr ? nf : 1), sizeof(*w->fpool));
		w->loc_at[loc].first = (uint32_t)w->nfpool;
		if (!fr)
			w->fpool[w->nfpool++] = frame(w, unknown, "[unknown]", 9, 0, 0);
		for (size_t k = 0; fr && k < nf; k++)
			w->fpool[w->nfpool++] = fn_frame(w, &fr[k]);
		w->loc_at[loc].n = (uint32_t)(w->nfpool - w->loc_at[loc].first);
		w->loc_at[loc].known = true;
	}
	*out = w->fpool + w->loc_at[loc].first;
	return w->loc_at[loc].n;
}

/* The frame-index stacks of the samples, root first, each once: samples
 * whose frames are the same (locations at other addresses of the same
 * functions, or lines with lines off) are one stack to speedscope, so they
 * are one sample here, their values summed (w->weights, nvalues per
 * stack). */
static json_t *stacks(struct ss *w, const struct kp_fold_opts *fo)
{
	size_t nv = kp_profile_nvalues(w->p), cap = 0;
	uint32_t *st = NULL;
	json_t *all = need(json_array());

	w->stack_of = kp_xmalloc((kp_profile_nsamples(w->p) + 1) * sizeof(*w->stack_of));
	for (size_t i = 0; i < kp_profile_nsamples(w->p); i++) {
		struct kp_profile_root root;
		const kp_count *values;
		size_t n, depth = 0, at;
		bool added;
		const uint32_t *locs = kp_profile_sample(w->p, i, &root, &n, &values);

		kp_xgrow(&st, &cap, n + 1, sizeof(*st));
		if (root.comm || root.pid)
			st[depth++] = root_frame(w, &root, fo);
		for (size_t j = 0; j < n; j++) {
			const uint32_t *fi;
			size_t nf = loc_frames(w, locs[j], &fi);

			kp_xgrow(&st, &cap, depth + nf, sizeof(*st));
			memcpy(st + depth, fi, nf * sizeof(*st));
			depth += nf;
		}
		at = kp_seqtab_intern(&w->stacks, st, depth, &added);
		w->stack_of[i] = (uint32_t)at;
		if (added) {
			json_t *arr = need(json_array());

			for (size_t k = 0; k < depth; k++)
				push_ref(arr, w->idx[st[k]]);
			push(all, arr);
			kp_xgrow(&w->weights, &w->weights_cap, (at + 1) * nv + 1,
				 sizeof(*w->weights));
			memset(w->weights + at * nv, 0, nv * sizeof(*w->weights));
		}
		/* sums of a total that fits: no overflow */
		for (size_t v = 0; v < nv; v++)
			w->weights[at * nv + v] += values[v];
	}
	free(st);
	return all;
}

/* An exact count as JSON: an integer when it is one that fits int64, else
 * the nearest double (jansson prints 17 significant digits: the same
 * double comes back). */
static json_t *number(kp_count v, unsigned decimals)
{
	if (!decimals && v <= (kp_count)INT64_MAX)
		return need(json_integer((json_int_t)v));
	return need(json_real(kp_count_double(v, decimals)));
}

/* speedscope's units; counts of anything else are "none". */
static const char *unit_of(const char *unit)
{
	static const char *const known[] = {"nanoseconds", "microseconds", "milliseconds",
					    "seconds", "bytes"};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(unit, known[i]) == 0)
			return known[i];
	return "none";
}

/* The weight of units [a, a + k) of v shared among n units: v / n each,
 * the remainder one to each of the first units, so the parts sum to v. */
static kp_count share(kp_count v, uint64_t a, uint64_t k, uint64_t n)
{
	kp_count rest = v % n, extra = rest > a ? rest - a : 0;

	return v / n * k + (extra < k ? extra : k);
}

/* A timed profile's samples in time order (docs/formats.md): an entry per
 * event, its stack's, weighing its sample's values shared among the
 * sample's events by the ms each covers (1 a sample taken, a wait its
 * length; exactly: the remainder one unit at a time), then the samples with no
 * event whole. A new array of references to all's stacks; w->seq_weights
 * and w->nseq are its weights. */
static json_t *in_time_order(struct ss *w, json_t *all)
{
	size_t ns = kp_profile_nsamples(w->p), nev, nv = kp_profile_nvalues(w->p), k = 0;
	const struct kp_profile_event *ev = kp_profile_events(w->p, &nev);
	uint64_t *n = kp_xcalloc(ns + 1, sizeof(*n)), *seen = kp_xcalloc(ns + 1, sizeof(*seen));
	json_t *seq = need(json_array());

	for (size_t i = 0; i < nev; i++)
		n[ev[i].sample] += ev[i].span ? ev[i].span : 1;
	w->nseq = nev;
	for (size_t i = 0; i < ns; i++)
		w->nseq += !n[i];
	w->seq_weights = kp_xmalloc((w->nseq * nv + 1) * sizeof(*w->seq_weights));
	for (size_t i = 0; i < nev; i++, k++) {
		uint32_t s = ev[i].sample;
		uint64_t span = ev[i].span ? ev[i].span : 1;
		const kp_count *values;

		kp_profile_sample(w->p, s, NULL, NULL, &values);
		push_ref(seq, json_array_get(all, w->stack_of[s]));
		for (size_t v = 0; v < nv; v++)
			w->seq_weights[k * nv + v] = share(values[v], seen[s], span, n[s]);
		seen[s] += span;
	}
	for (size_t i = 0; i < ns; i++) {
		const kp_count *values;

		if (n[i])
			continue;
		kp_profile_sample(w->p, i, NULL, NULL, &values);
		push_ref(seq, json_array_get(all, w->stack_of[i]));
		memcpy(w->seq_weights + k++ * nv, values, nv * sizeof(*values));
	}
	free(n);
	free(seen);
	return seq;
}

static json_t *sampled_profile(struct ss *w, size_t v, json_t *samples)
{
	const struct kp_profile_value_type *vt = kp_profile_value_type(w->p, v);
	json_t *prof = need(json_object()), *weights = need(json_array());
	size_t len;
	const char *type = kp_profile_str(w->p, vt->type, &len);

	put(prof, "type", need(json_string("sampled")));
	put(prof, "name", text(w, type, len));
	put(prof, "unit", need(json_string(unit_of(kp_profile_str(w->p, vt->unit, NULL)))));
	put(prof, "startValue", need(json_integer(0)));
	put(prof, "endValue", number(kp_profile_total(w->p, v), vt->decimals));
	put(prof, "samples", json_incref(samples));
	for (size_t i = 0; i < w->nseq; i++)
		push(weights,
		     number(w->seq_weights[i * kp_profile_nvalues(w->p) + v], vt->decimals));
	put(prof, "weights", weights);
	return prof;
}

int kp_speedscope_write(const struct kp_profile *p, const struct kp_speedscope_opts *o, FILE *out,
			struct kp_diag *d)
{
	static const struct kp_speedscope_opts defaults = {0};
	struct ss w = {.p = p};
	json_t *doc, *shared, *samples, *profiles;
	struct kp_run_meta meta;
	size_t nv = kp_profile_nvalues(p), nev;
	int err = 0;

	kp_run_meta_read(p, &meta);
	if (!o)
		o = &defaults;
	w.lines = o->lines;
	kp_seqtab_init(&w.keys);
	kp_seqtab_init(&w.stacks);
	w.loc_at = kp_xcalloc(kp_profile_nlocations(p) + 1, sizeof(*w.loc_at));
	w.roots = kp_strtab_new();
	w.frames = need(json_array());

	doc = need(json_object());
	put(doc, "$schema", need(json_string(SCHEMA)));
	put(doc, "exporter",
	    text(&w, o->exporter ? o->exporter : "kprof",
		 strlen(o->exporter ? o->exporter : "kprof")));
	if (meta.command && *meta.command)
		put(doc, "name", text(&w, meta.command, strlen(meta.command)));
	put(doc, "activeProfileIndex",
	    need(json_integer(o->fold.value < nv ? (json_int_t)o->fold.value : 0)));
	samples = stacks(&w, &o->fold);
	w.nseq = kp_seqtab_count(&w.stacks);
	w.seq_weights = w.weights;
	kp_profile_events(p, &nev);
	if (nev) {
		json_t *all = samples;

		samples = in_time_order(&w, all);
		json_decref(all);
	}
	shared = need(json_object());
	put(shared, "frames", w.frames);
	put(doc, "shared", shared);
	profiles = need(json_array());
	for (size_t v = 0; v < nv; v++)
		push(profiles, sampled_profile(&w, v, samples));
	put(doc, "profiles", profiles);
	json_decref(samples);

	if (json_dumpf(doc, out, JSON_COMPACT) < 0 || fputc('\n', out) == EOF)
		err = kp_diag_errno(d, errno ? -errno : -EIO,
				    "cannot write the speedscope profile");
	json_decref(doc);
	for (size_t i = 0; i < kp_seqtab_count(&w.keys); i++)
		json_decref(w.idx[i]);
	free(w.idx);
	free(w.clean);
	kp_strtab_free(w.roots);
	kp_seqtab_fini(&w.keys);
	kp_seqtab_fini(&w.stacks);
	if (w.seq_weights != w.weights)
		free(w.seq_weights);
	free(w.weights);
	free(w.stack_of);
	free(w.loc_at);
	free(w.fpool);
	return err;
}
