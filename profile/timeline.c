/* A profile by time: slices and joins (timeline.h). Both copy a profile
 * into another through the profile's own API, each sample weighted by the
 * events it keeps. */
#include "profile/timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/u64map.h"
#include "util/xalloc.h"

/* Copying p into q: the ids of p's tables in q. */
struct copy {
	struct kp_profile *q;
	const struct kp_profile *p;
	uint32_t *loc;	      /* p's location -> q's */
	struct kp_u64map obj; /* kind << 32 | p's obj -> q's obj */
	uint32_t next_obj[KP_LOC_NKINDS];
};

static uint32_t copy_str(struct copy *c, uint32_t id)
{
	size_t len;
	const char *s = kp_profile_str(c->p, id, &len);

	return kp_profile_intern(c->q, s, len);
}

static bool same_mapping(struct copy *c, const struct kp_profile_mapping *a,
			 const struct kp_profile_mapping *b)
{
	size_t la, lb;
	const char *pa = kp_profile_str(c->p, a->path, &la),
		   *pb = kp_profile_str(c->q, b->path, &lb);

	return la == lb && memcmp(pa, pb, la) == 0 && a->pid == b->pid &&
	       a->build_id_len == b->build_id_len &&
	       memcmp(a->build_id, b->build_id, a->build_id_len) == 0;
}

/* The mappings: an object of p that q knows as another file gets an id of
 * its own, past every id q uses of its kind. */
static void copy_mappings(struct copy *c)
{
	for (size_t i = 0; i < kp_profile_nmappings(c->q); i++) {
		const struct kp_profile_mapping *m = kp_profile_mapping_at(c->q, i);

		if (m->kind < KP_LOC_NKINDS && m->obj >= c->next_obj[m->kind])
			c->next_obj[m->kind] = m->obj + 1;
	}
	for (size_t i = 0; i < kp_profile_nlocations(c->q); i++) {
		const struct kp_loc *l = kp_profile_loc(c->q, (uint32_t)i);

		if (l->kind < KP_LOC_NKINDS && l->obj >= c->next_obj[l->kind])
			c->next_obj[l->kind] = l->obj + 1;
	}
	for (size_t i = 0; i < kp_profile_nmappings(c->p); i++) {
		struct kp_profile_mapping m = *kp_profile_mapping_at(c->p, i);
		const struct kp_profile_mapping *have = kp_profile_mapping_of(c->q, m.kind, m.obj);
		uint32_t obj = m.obj;

		if (have && !same_mapping(c, &m, have))
			obj = m.kind < KP_LOC_NKINDS ? c->next_obj[m.kind]++ : m.obj;
		kp_u64map_put(&c->obj, (uint64_t)m.kind << 32 | m.obj, obj);
		if (have && obj == m.obj)
			continue; /* the same file, known already */
		m.obj = obj;
		m.path = copy_str(c, m.path);
		kp_profile_set_mapping(c->q, &m);
	}
}

static void copy_locations(struct copy *c)
{
	size_t n = kp_profile_nlocations(c->p);
	struct kp_profile_frame *frames = NULL;
	size_t frames_cap = 0;

	c->loc = kp_xmalloc((n ? n : 1) * sizeof(*c->loc));
	for (size_t i = 0; i < n; i++) {
		struct kp_loc l = *kp_profile_loc(c->p, (uint32_t)i);
		size_t nf, before = kp_profile_nlocations(c->q);
		bool resolved;
		const struct kp_profile_frame *f =
			kp_profile_frames(c->p, (uint32_t)i, &nf, &resolved);
		uint64_t obj;

		if (kp_u64map_get(&c->obj, (uint64_t)l.kind << 32 | l.obj, &obj))
			l.obj = (uint32_t)obj;
		c->loc[i] = kp_profile_location(c->q, &l);
		/* a location q has already keeps its names */
		if (!f || c->loc[i] < before)
			continue;
		kp_xgrow(&frames, &frames_cap, nf, sizeof(*frames));
		for (size_t j = 0; j < nf; j++) {
			const struct kp_profile_function *fn =
				kp_profile_function_at(c->p, f[j].function);

			frames[j] = f[j];
			frames[j].function = kp_profile_function(c->q, copy_str(c, fn->name),
								 copy_str(c, fn->file));
		}
		kp_profile_set_frames(c->q, c->loc[i], frames, nf, resolved);
	}
	free(frames);
}

/* v * k / n, exactly (k <= n), without passing 2^128 on the way */
static kp_count share(kp_count v, uint64_t k, uint64_t n)
{
	return v / n * k + v % n * k / n;
}

/* Copies p's samples into q (tables first), each sample's values times
 * the share of its events' milliseconds that are in [from_ms, to_ms) (all:
 * every sample whole), and those events (the part in the range) shifted
 * by shift_ms. Returns false when a sum
 * would pass 2^128. */
static bool copy_samples(struct copy *c, bool all, uint64_t from_ms, uint64_t to_ms,
			 uint64_t shift_ms)
{
	size_t ns = kp_profile_nsamples(c->p), nev, nv = kp_profile_nvalues(c->p);
	const struct kp_profile_event *ev = kp_profile_events(c->p, &nev);
	uint64_t *total = kp_xcalloc(ns ? ns : 1, sizeof(*total));
	uint64_t *in = kp_xcalloc(ns ? ns : 1, sizeof(*in));
	uint32_t *to = kp_xmalloc((ns ? ns : 1) * sizeof(*to)), *stack = NULL;
	size_t stack_cap = 0;
	bool ok = true;

	/* a sample's share is that of its events' milliseconds: a wait
	 * straddling the range counts the part inside */
	for (size_t i = 0; i < nev; i++) {
		total[ev[i].sample] += ev[i].span ? ev[i].span : 1;
		in[ev[i].sample] += kp_profile_event_overlap(&ev[i], from_ms, to_ms);
	}
	for (size_t i = 0; i < ns && ok; i++) {
		struct kp_profile_root root;
		const kp_count *values;
		kp_count v[KP_PROFILE_MAX_VALUES];
		size_t n;
		const uint32_t *locs = kp_profile_sample(c->p, i, &root, &n, &values);

		if (!all && !in[i])
			continue;
		kp_xgrow(&stack, &stack_cap, n ? n : 1, sizeof(*stack));
		for (size_t j = 0; j < n; j++)
			stack[j] = c->loc[locs[j]];
		for (size_t j = 0; j < nv; j++)
			v[j] = all ? values[j] : share(values[j], in[i], total[i]);
		root.comm = copy_str(c, root.comm);
		ok = kp_profile_add_id(c->q, &root, stack, n, v, &to[i]);
	}
	for (size_t i = 0; i < nev && ok; i++) {
		/* the part of the event in the range (all: the whole event) */
		uint64_t span = all ? ev[i].span : kp_profile_event_overlap(&ev[i], from_ms, to_ms);
		uint64_t ms = ev[i].ms;

		if (!span)
			continue;
		if (!all && ms >= to_ms)
			ms = to_ms - 1;
		ms += shift_ms;
		kp_profile_add_span(c->q, to[ev[i].sample],
				    ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms, (uint32_t)span,
				    ev[i].tid);
	}
	free(total);
	free(in);
	free(to);
	free(stack);
	return ok;
}

static bool copy(struct kp_profile *q, const struct kp_profile *p, bool all, uint64_t from_ms,
		 uint64_t to_ms, uint64_t shift_ms)
{
	struct copy c = {.q = q, .p = p};
	bool ok;

	kp_u64map_init(&c.obj);
	copy_mappings(&c);
	copy_locations(&c);
	ok = copy_samples(&c, all, from_ms, to_ms, shift_ms);
	kp_u64map_fini(&c.obj);
	free(c.loc);
	return ok;
}

size_t kp_timeline_count(const struct kp_profile *p, uint64_t from_ms, uint64_t to_ms)
{
	size_t n, k = 0;
	const struct kp_profile_event *ev = kp_profile_events(p, &n);

	for (size_t i = 0; i < n; i++)
		k += kp_profile_event_overlap(&ev[i], from_ms, to_ms) > 0;
	return k;
}

size_t kp_timeline_untimed(const struct kp_profile *p)
{
	size_t n, ns = kp_profile_nsamples(p), k = 0;
	const struct kp_profile_event *ev = kp_profile_events(p, &n);
	bool *has = kp_xcalloc(ns + 1, sizeof(*has));

	for (size_t i = 0; i < n; i++)
		has[ev[i].sample] = true;
	for (size_t i = 0; i < ns; i++)
		k += !has[i];
	free(has);
	return k;
}

uint32_t kp_timeline_last_ms(const struct kp_profile *p)
{
	size_t n;
	const struct kp_profile_event *ev = kp_profile_events(p, &n);

	return n ? ev[n - 1].ms : 0;
}

struct kp_profile *kp_timeline_new_like(const struct kp_profile *p)
{
	struct kp_profile *q = kp_profile_new();

	for (size_t v = 0; v < kp_profile_nvalues(p); v++) {
		const struct kp_profile_value_type *vt = kp_profile_value_type(p, v);

		kp_profile_add_value_type(q, kp_profile_str(p, vt->type, NULL),
					  kp_profile_str(p, vt->unit, NULL), vt->decimals);
	}
	if (kp_profile_timed(p))
		kp_profile_time_start(q, kp_profile_time_origin(p));
	kp_profile_time_limit(q, SIZE_MAX);
	for (size_t i = 0; i < kp_profile_nmeta(p); i++) {
		const char *k, *v;

		kp_profile_meta_at(p, i, &k, &v);
		kp_profile_set_meta(q, k, "%s", v);
	}
	return q;
}

struct kp_profile *kp_timeline_slice(const struct kp_profile *p, uint64_t from_ms, uint64_t to_ms)
{
	struct kp_profile *q = kp_timeline_new_like(p);

	uint64_t at_ns = kp_profile_time_origin(p) + from_ms * 1000000u;
	time_t at = (time_t)(at_ns / 1000000000u);
	struct tm tm;
	size_t nev;
	const struct kp_profile_event *ev = kp_profile_events(p, &nev);

	/* q's sums are at most p's: they fit */
	copy(q, p, false, from_ms, to_ms, 0);
	/* the run's record is the range's: its start, length and samples
	 * (pprof's time and duration, the SVG's line), when p has them */
	if (nev && to_ms > (uint64_t)ev[nev - 1].ms + 1)
		to_ms = (uint64_t)ev[nev - 1].ms + 1;
	if (kp_profile_meta(q, KP_META_START) && gmtime_r(&at, &tm))
		kp_profile_set_meta(q, KP_META_START, "%04d-%02d-%02dT%02d:%02d:%02d.%09uZ",
				    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
				    tm.tm_min, tm.tm_sec, (unsigned)(at_ns % 1000000000u));
	if (kp_profile_meta(q, KP_META_DURATION) && to_ms >= from_ms)
		kp_profile_set_meta(q, KP_META_DURATION, "%.3f", (double)(to_ms - from_ms) / 1e3);
	if (kp_profile_meta(q, KP_META_SAMPLES))
		kp_profile_set_meta(q, KP_META_SAMPLES, "%zu",
				    kp_timeline_count(p, from_ms, to_ms));
	kp_profile_set_meta(q, KP_META_RANGE, "%llu.%03llu-%llu.%03llu",
			    (unsigned long long)from_ms / 1000, (unsigned long long)from_ms % 1000,
			    (unsigned long long)to_ms / 1000, (unsigned long long)to_ms % 1000);
	return q;
}

static bool same_types(const struct kp_profile *q, const struct kp_profile *p)
{
	if (kp_profile_nvalues(q) != kp_profile_nvalues(p))
		return false;
	for (size_t v = 0; v < kp_profile_nvalues(p); v++) {
		const struct kp_profile_value_type *a = kp_profile_value_type(q, v),
						   *b = kp_profile_value_type(p, v);

		if (a->decimals != b->decimals ||
		    strcmp(kp_profile_str(q, a->type, NULL), kp_profile_str(p, b->type, NULL)) ||
		    strcmp(kp_profile_str(q, a->unit, NULL), kp_profile_str(p, b->unit, NULL)))
			return false;
	}
	return true;
}

int kp_timeline_join(struct kp_profile *q, const struct kp_profile *p, struct kp_diag *d)
{
	uint64_t shift;
	char a[256], b[256];

	if (!same_types(q, p))
		return kp_diag_set(d, -EINVAL, "values of other kinds (%s, not %s)",
				   kp_profile_value_names(p, b, sizeof(b)),
				   kp_profile_value_names(q, a, sizeof(a)));
	if (!kp_profile_timed(p) || !kp_profile_timed(q))
		return kp_diag_set(d, -EINVAL, "it keeps no time");
	if (kp_profile_time_origin(p) < kp_profile_time_origin(q))
		return kp_diag_set(d, -EINVAL, "it starts before the first");
	shift = (kp_profile_time_origin(p) - kp_profile_time_origin(q) + 500000u) / 1000000u;
	if (!copy(q, p, true, 0, UINT64_MAX, shift))
		return kp_diag_set(d, -ERANGE, "the sum of a value passes 2^128");
	kp_profile_set_events_dropped(q,
				      kp_profile_events_dropped(q) + kp_profile_events_dropped(p));
	return 0;
}

/* "HH:MM" or "HH:MM:SS" with fractions: *day_ns into the day; the rest
 * is *rest. */
static bool parse_clock(const char *s, uint64_t *day_ns, const char **rest)
{
	int h, m, sec = 0, n = 0;
	uint64_t frac = 0, scale = 1000000000u;

	/* HH:MM, or HH:MM:SS */
	if (sscanf(s, "%2d:%2d%n", &h, &m, &n) != 2 || !n)
		return false;
	s += n;
	if (*s == ':') {
		n = 0;
		if (sscanf(s + 1, "%2d%n", &sec, &n) != 1 || !n)
			return false;
		s += 1 + n;
	}
	if (h > 23 || m > 59 || sec > 60 || h < 0 || m < 0 || sec < 0)
		return false;
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++)
			if (scale > 1) {
				scale /= 10;
				frac += (uint64_t)(*s - '0') * scale;
			}
	}
	if (*s == 'Z')
		s++;
	*day_ns = ((uint64_t)h * 3600 + (uint64_t)m * 60 + (uint64_t)sec) * 1000000000u + frac;
	*rest = s;
	return true;
}

/* A UTC wall-clock time in Unix ns: a date and a clock, or a clock alone
 * on the origin's day (or the next). */
static bool parse_wall(const char *s, uint64_t origin_ns, uint64_t *ns)
{
	int y, mo, dd, n = 0;
	uint64_t clock;
	const char *rest;
	int64_t day;

	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &dd, &n) == 3 && n == 10 &&
	    (s[10] == 'T' || s[10] == ' ')) {
		struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = dd};
		time_t t;

		if (y < 1970 || mo < 1 || mo > 12 || dd < 1 || dd > 31)
			return false;
		t = timegm(&tm);
		if (t < 0 || !parse_clock(s + 11, &clock, &rest) || *rest)
			return false;
		*ns = (uint64_t)t * 1000000000u + clock;
		return true;
	}
	if (!parse_clock(s, &clock, &rest) || *rest)
		return false;
	day = (int64_t)(origin_ns / 1000000000u / 86400u) * 86400;
	*ns = (uint64_t)day * 1000000000u + clock;
	if (*ns + 12ull * 3600 * 1000000000u < origin_ns)
		*ns += 86400ull * 1000000000u;
	return true;
}

int kp_timeline_parse(const char *s, uint64_t origin_ns, uint64_t *ms, struct kp_diag *d)
{
	char *end;
	double sec;
	uint64_t ns;

	errno = 0;
	sec = strtod(s, &end);
	if (end != s && !*end && !errno && sec >= 0 && sec < 4e9 && !strchr(s, 'x') &&
	    !strchr(s, 'X')) {
		*ms = (uint64_t)(sec * 1000 + 0.5);
		return 0;
	}
	if (!parse_wall(s, origin_ns, &ns))
		return kp_diag_set(d, -EINVAL,
				   "'%s' is no time: give seconds from the start (12.5) or a UTC "
				   "time (2026-12-06T01:02:03, 01:02:03)",
				   s);
	*ms = ns <= origin_ns ? 0 : (ns - origin_ns) / 1000000u;
	return 0;
}

int kp_timeline_slice_spec(struct kp_profile **p, const char *from, const char *to,
			   struct kp_diag *d)
{
	uint64_t f = 0, t = UINT64_MAX, origin = kp_profile_time_origin(*p);
	size_t nev;
	const struct kp_profile_event *ev = kp_profile_events(*p, &nev);
	int err;

	if (!kp_profile_timed(*p))
		return kp_diag_set(d, -EINVAL,
				   "keeps no time (folded text, or a recording of a kprof before "
				   "the time axis): --from and --to need one that does");
	if ((from && (err = kp_timeline_parse(from, origin, &f, d))) ||
	    (to && (err = kp_timeline_parse(to, origin, &t, d))))
		return err;
	if (f >= t)
		return kp_diag_set(d, -EINVAL, "--from %s is not before --to %s (%.3f s, %.3f s)",
				   from, to, (double)f / 1e3, (double)t / 1e3);
	/* "to the end" is to the last event */
	if (nev && t > (uint64_t)ev[nev - 1].ms + 1 && f <= ev[nev - 1].ms)
		t = (uint64_t)ev[nev - 1].ms + 1;
	if (!kp_timeline_count(*p, f, t)) {
		char to_s[64] = "on";

		if (!nev)
			return kp_diag_set(d, -EINVAL, "no sample of it keeps its time");
		if (t != UINT64_MAX)
			snprintf(to_s, sizeof(to_s), "to %.3f s", (double)t / 1e3);
		return kp_diag_set(d, -EINVAL,
				   "no samples from %.3f s %s (they run from %.3f s to %.3f s)",
				   (double)f / 1e3, to_s, (double)ev[0].ms / 1e3,
				   (double)ev[nev - 1].ms / 1e3);
	}
	{
		struct kp_profile *q = kp_timeline_slice(*p, f, t);

		kp_profile_free(*p);
		*p = q;
	}
	return 0;
}
