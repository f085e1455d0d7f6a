#include "symbolize/dwarf_index.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/demangle.h"
#include "symbolize/dwarf_raw.h"
#include "symbolize/idmap.h"
#include "util/hash.h"
#include "util/xalloc.h"

struct piece {
	Dwarf_Addr lo, hi; /* [lo, hi), CU addresses */
	int scope;
};

/* Sorted disjoint pieces, each naming the innermost scope there. */
struct pieces {
	struct piece *v;
	size_t n;
};

/* A function at the top of the CU (or of a namespace or class): its own
 * subtree is indexed the first time an address falls in it. */
struct root {
	int scope;
	bool indexed;
	struct pieces inner;
};

struct cu_index {
	uint64_t cu_off;	   /* of the unit header in .debug_info */
	struct kp_dwraw_unit unit; /* valid when unit_ok */
	bool unit_ok;
	struct kp_dwscope *scopes;
	size_t nscopes, scopes_cap;
	struct root *roots; /* by scope: roots[i].scope */
	size_t nroots, roots_cap;
	struct pieces top; /* scope = index in roots */
	bool cxx;	   /* classes may hold member function definitions */
};

struct span;

/* The DWARF the scopes come from: libdw's handle, and the raw reader
 * (NULL when the sections it needs are missing). */
struct kp_dwidx_src {
	Dwarf *dw;
	struct kp_dwraw *raw;
};

struct kp_dwidx {
	struct kp_dwidx_src src; /* the one x serves, set by the first lookup */
	struct cu_index *cus;	 /* id = index + 1 */
	size_t ncus, cap;
	struct kp_idmap by_off;
	struct kp_dwscope **chain;
	size_t chain_cap;
	/* scratch reused from one walk to the next */
	struct span *spans;
	size_t spans_cap;
	Dwarf_Addr *pts; /* 4n: the 2n ends and a sort's scratch */
	size_t pts_cap;
	void *tmp; /* n spans: a sort's scratch, then the heap */
	size_t tmp_cap;
};

struct kp_dwidx *kp_dwidx_new(void)
{
	return kp_xcalloc(1, sizeof(struct kp_dwidx));
}

void kp_dwidx_free(struct kp_dwidx *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->ncus; i++) {
		struct cu_index *cu = &x->cus[i];

		for (size_t j = 0; j < cu->nscopes; j++)
			free(cu->scopes[j].name);
		for (size_t j = 0; j < cu->nroots; j++)
			free(cu->roots[j].inner.v);
		free(cu->scopes);
		free(cu->roots);
		free(cu->top.v);
	}
	free(x->cus);
	free(x->chain);
	free(x->spans);
	free(x->pts);
	free(x->tmp);
	kp_dwraw_free(x->src.raw);
	kp_idmap_fini(&x->by_off);
	free(x);
}

/* An address range of a scope, with its nesting depth. */
struct span {
	Dwarf_Addr lo, hi;
	int scope, depth;
};

struct walk {
	struct kp_dwidx *x;
	struct cu_index *cu;
	size_t nspans;
	bool top; /* the CU level: functions become roots, not descended */
	int root_scope;
	uint64_t stop; /* stop_tags */
};

/* Whether a DIE's children can include functions or inlined instances:
 * skipping types, variables and call sites keeps the walk short. */
static bool may_hold_code(const struct walk *w, int tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
		return !w->top;
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_entry_point:
		return true;
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
		return w->cu->cxx;
	default:
		return false;
	}
}

#define TAG_BIT(t) ((uint64_t)1 << (t))

/* The tags walk_die looks at: functions, and what may_hold_code may
 * descend into (all below 64); the reader passes over the others without
 * decoding them. */
static uint64_t stop_tags(const struct walk *w)
{
	uint64_t m = TAG_BIT(DW_TAG_subprogram) | TAG_BIT(DW_TAG_inlined_subroutine) |
		     TAG_BIT(DW_TAG_lexical_block) | TAG_BIT(DW_TAG_namespace) |
		     TAG_BIT(DW_TAG_module) | TAG_BIT(DW_TAG_try_block) |
		     TAG_BIT(DW_TAG_catch_block) | TAG_BIT(DW_TAG_entry_point);

	if (w->cu->cxx)
		m |= TAG_BIT(DW_TAG_class_type) | TAG_BIT(DW_TAG_structure_type) |
		     TAG_BIT(DW_TAG_union_type);
	return m;
}

static int add_scope(struct kp_dwidx *x, struct cu_index *cu, uint64_t die_off, int parent,
		     bool inlined)
{
	struct kp_dwscope *sc;

	kp_xgrow(&cu->scopes, &cu->scopes_cap, cu->nscopes + 1, sizeof(*cu->scopes));
	sc = &cu->scopes[cu->nscopes];
	memset(sc, 0, sizeof(*sc));
	sc->src = &x->src;
	sc->off = die_off;
	sc->parent = parent;
	sc->inlined = inlined;
	sc->cxx = cu->cxx;
	return (int)cu->nscopes++;
}

static void add_span(struct walk *w, Dwarf_Addr lo, Dwarf_Addr hi, int scope, int depth)
{
	kp_xgrow(&w->x->spans, &w->x->spans_cap, w->nspans + 1, sizeof(*w->x->spans));
	w->x->spans[w->nspans++] = (struct span){lo, hi, scope, depth};
}

/* The scope a DIE's ranges open, made on its first non-empty range. */
struct ranges_ctx {
	struct walk *w;
	const struct kp_dwraw_die *die;
	int parent, depth;
	int me, d, root;
};

static bool on_range(void *arg, uint64_t lo, uint64_t hi)
{
	struct ranges_ctx *rc = arg;
	struct walk *w = rc->w;

	if (hi <= lo)
		return true;
	if (rc->me == rc->parent) {
		rc->me = add_scope(w->x, w->cu, rc->die->off, rc->parent,
				   rc->die->tag == DW_TAG_inlined_subroutine);
		rc->d = rc->depth + 1;
		if (w->top) {
			struct cu_index *cu = w->cu;

			kp_xgrow(&cu->roots, &cu->roots_cap, cu->nroots + 1, sizeof(*cu->roots));
			memset(&cu->roots[cu->nroots], 0, sizeof(*cu->roots));
			cu->roots[cu->nroots].scope = rc->me;
			rc->root = (int)cu->nroots++;
		}
	}
	add_span(w, lo, hi, w->top ? rc->root : rc->me, rc->d);
	return true;
}

/* Depth-first over the DIEs from pos (the first child of a DIE at nesting
 * depth - 1) to the end of their sibling list, leaving *after past it. At
 * the top level each function with code becomes a root (span scope = root
 * number); below, every function and inlined instance is a scope of its
 * own. Returns 0, or -EINVAL for bad data (the walk stops there, what it
 * indexed stays). */
static int walk_die(struct walk *w, uint64_t pos, int parent, int depth, uint64_t *after)
{
	const struct kp_dwraw_unit *u = &w->cu->unit;

	for (;;) {
		struct kp_dwraw_die die;
		int ret = kp_dwraw_scan(u, pos, w->stop, &die), me = parent, d = depth;

		if (ret < 0)
			return ret;
		if (ret == 0) {
			*after = die.next;
			return 0;
		}
		if (die.tag == DW_TAG_subprogram || die.tag == DW_TAG_inlined_subroutine) {
			struct ranges_ctx rc = {w, &die, parent, depth, parent, depth, -1};

			kp_dwraw_ranges(u, &die, on_range, &rc);
			me = rc.me;
			d = rc.d;
		}
		/* children past the depth limit are skipped (hostile nesting) */
		if (die.children && d <= 512 && may_hold_code(w, (int)die.tag))
			ret = walk_die(w, die.next, me, d, &pos);
		else
			ret = kp_dwraw_skip(u, &die, &pos);
		if (ret < 0)
			return ret;
	}
}

static inline bool span_less(const struct span *a, const struct span *b)
{
	return a->lo != b->lo ? a->lo < b->lo : a->depth < b->depth;
}

static inline bool addr_less(const Dwarf_Addr *a, const Dwarf_Addr *b)
{
	return *a < *b;
}

/* A stable merge sort through a scratch array of n items, comparisons
 * inlined (qsort's indirect calls were a tenth of the lookups): runs of
 * 16 by insertion, then merges of doubling width. */
#define KP_MSORT(name, type, less)                                                               \
	static void name(type *v, type *tmp, size_t n)                                           \
	{                                                                                        \
		type *src = v, *dst = tmp;                                                       \
                                                                                                 \
		for (size_t s = 0; s < n; s += 16) {                                             \
			size_t e = s + 16 < n ? s + 16 : n;                                      \
                                                                                                 \
			for (size_t i = s + 1; i < e; i++) {                                     \
				type x = v[i];                                                   \
				size_t j = i;                                                    \
                                                                                                 \
				for (; j > s && less(&x, &v[j - 1]); j--)                        \
					v[j] = v[j - 1];                                         \
				v[j] = x;                                                        \
			}                                                                        \
		}                                                                                \
		for (size_t w = 16; w < n; w *= 2) {                                             \
			for (size_t s = 0; s < n; s += 2 * w) {                                  \
				size_t m = s + w < n ? s + w : n;                                \
				size_t e = s + 2 * w < n ? s + 2 * w : n;                        \
				size_t i = s, j = m, k = s;                                      \
                                                                                                 \
				while (i < m && j < e)                                           \
					dst[k++] = less(&src[j], &src[i]) ? src[j++] : src[i++]; \
				while (i < m)                                                    \
					dst[k++] = src[i++];                                     \
				while (j < e)                                                    \
					dst[k++] = src[j++];                                     \
			}                                                                        \
			type *t = src;                                                           \
			src = dst;                                                               \
			dst = t;                                                                 \
		}                                                                                \
		if (src != v)                                                                    \
			memcpy(v, src, n * sizeof(*v));                                          \
	}

KP_MSORT(sort_spans, struct span, span_less)
KP_MSORT(sort_addrs, Dwarf_Addr, addr_less)

static bool deeper(const struct span *a, const struct span *b)
{
	return a->depth != b->depth ? a->depth > b->depth : a->scope > b->scope;
}

/* Flattens the spans: for each elementary interval, the deepest covering
 * scope (nested ranges in sane DWARF; a heap keeps it right otherwise). */
static void flatten(struct kp_dwidx *x, struct pieces *out, struct span *spans, size_t n)
{
	Dwarf_Addr *pts;
	const struct span **heap;
	size_t npts = 0, nh = 0, next = 0, cap = 0;

	if (!n)
		return;
	/* scratch for both sorts and the heap: 2n addresses' worth */
	kp_xgrow(&x->pts, &x->pts_cap, 4 * n, sizeof(*x->pts));
	kp_xgrow(&x->tmp, &x->tmp_cap, n, sizeof(struct span));
	pts = x->pts;
	sort_spans(spans, x->tmp, n);
	heap = x->tmp; /* free again once the spans are sorted */
	for (size_t i = 0; i < n; i++) {
		pts[npts++] = spans[i].lo;
		pts[npts++] = spans[i].hi;
	}
	sort_addrs(pts, pts + npts, npts);
	for (size_t k = 0; k + 1 < npts; k++) {
		Dwarf_Addr a = pts[k], b = pts[k + 1];
		struct piece *last;

		if (a == b)
			continue;
		while (next < n && spans[next].lo <= a) {
			/* push */
			size_t i = nh++;

			while (i > 0 && deeper(&spans[next], heap[(i - 1) / 2])) {
				heap[i] = heap[(i - 1) / 2];
				i = (i - 1) / 2;
			}
			heap[i] = &spans[next++];
		}
		while (nh && heap[0]->hi <= a) {
			/* pop */
			const struct span *lastspan = heap[--nh];
			size_t i = 0;

			for (;;) {
				size_t c = 2 * i + 1;

				if (c >= nh)
					break;
				if (c + 1 < nh && deeper(heap[c + 1], heap[c]))
					c++;
				if (!deeper(heap[c], lastspan))
					break;
				heap[i] = heap[c];
				i = c;
			}
			if (nh)
				heap[i] = lastspan;
		}
		if (!nh)
			continue;
		last = out->n ? &out->v[out->n - 1] : NULL;
		if (last && last->hi == a && last->scope == heap[0]->scope) {
			last->hi = b;
			continue;
		}
		kp_xgrow(&out->v, &cap, out->n + 1, sizeof(*out->v));
		out->v[out->n++] = (struct piece){a, b, heap[0]->scope};
	}
	/* exact size: many CUs are indexed and kept */
	if (out->n)
		out->v = kp_xrealloc(out->v, out->n * sizeof(*out->v));
}

struct off_query {
	const struct kp_dwidx *x;
	uint64_t off;
};

static bool off_eq(void *ctx, uint32_t id)
{
	const struct off_query *q = ctx;

	return q->x->cus[id - 1].cu_off == q->off;
}

/* The index of the unit whose header is at unit_off, made on first use. */
static struct cu_index *get_cu(struct kp_dwidx *x, uint64_t unit_off)
{
	struct off_query q = {x, unit_off};
	uint32_t id = kp_idmap_find(&x->by_off, kp_hash_u64(q.off), off_eq, &q);
	struct walk w = {0};
	struct cu_index *cu;
	uint64_t end;

	if (id)
		return &x->cus[id - 1];
	kp_xgrow(&x->cus, &x->cap, x->ncus + 1, sizeof(*x->cus));
	cu = &x->cus[x->ncus++];
	memset(cu, 0, sizeof(*cu));
	cu->cu_off = q.off;
	kp_idmap_put(&x->by_off, kp_hash_u64(q.off), (uint32_t)x->ncus);
	/* a unit that does not read holds no scopes */
	cu->unit_ok = kp_dwraw_unit(x->src.raw, unit_off, &cu->unit) == 0;
	if (!cu->unit_ok)
		return cu;
	switch (cu->unit.lang) {
	case DW_LANG_C:
	case DW_LANG_C89:
	case DW_LANG_C99:
	case DW_LANG_C11:
		cu->cxx = false;
		break;
	default:
		cu->cxx = true; /* C++, Rust (impl blocks live in structs), unknown */
	}
	w.x = x;
	w.cu = cu;
	w.top = true;
	w.stop = stop_tags(&w);
	if (cu->unit.die_off < cu->unit.end) {
		struct kp_dwraw_die die;

		if (kp_dwraw_die(&cu->unit, cu->unit.die_off, &die) == 1 && die.children)
			walk_die(&w, die.next, -1, 0, &end);
	}
	flatten(x, &cu->top, x->spans, w.nspans);
	return cu;
}

static bool root_range(void *arg, uint64_t lo, uint64_t hi)
{
	struct walk *w = arg;

	if (hi > lo)
		add_span(w, lo, hi, w->root_scope, 0);
	return true;
}

/* Indexes the subtree of one top-level function. */
static void index_root(struct kp_dwidx *x, struct cu_index *cu, struct root *r)
{
	struct walk w = {.x = x, .cu = cu, .root_scope = r->scope};
	struct kp_dwraw_die die;
	uint64_t end;

	r->indexed = true;
	w.stop = stop_tags(&w);
	if (kp_dwraw_die(&cu->unit, cu->scopes[r->scope].off, &die) != 1)
		return;
	kp_dwraw_ranges(&cu->unit, &die, root_range, &w);
	if (die.children)
		walk_die(&w, die.next, r->scope, 1, &end);
	flatten(x, &r->inner, x->spans, w.nspans);
}

/* The piece of p containing addr, or NULL. */
static const struct piece *find_piece(const struct pieces *p, Dwarf_Addr addr)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && addr < p->v[lo - 1].hi ? &p->v[lo - 1] : NULL;
}

size_t kp_dwidx_chain(struct kp_dwidx *x, Dwarf *dw, Dwarf_Addr addr, struct kp_dwscope ***chain)
{
	uint64_t cu_off;
	struct cu_index *cu;
	const struct piece *pc;
	struct root *r;
	size_t n = 0;
	int s;

	*chain = NULL;
	/* straight to libdw: dwfl_module_addrdie interns every CU in a tree */
	if (!dw)
		return 0;
	if (!x->src.dw) {
		x->src.dw = dw;
		kp_dwraw_open(dwarf_getelf(dw), &x->src.raw);
	}
	/* the unit from .debug_aranges, read here: dwarf_addrdie reads it
	 * too but takes longer than the rest of the lookups of a profile
	 * (libdw 0.188 interns every unit on the way) */
	if (!x->src.raw || kp_dwraw_unit_at(x->src.raw, addr, &cu_off) != 0)
		return 0;
	cu = get_cu(x, cu_off);
	if (!cu->unit_ok)
		return 0;
	pc = find_piece(&cu->top, addr);
	if (!pc)
		return 0;
	r = &cu->roots[pc->scope];
	if (!r->indexed)
		index_root(x, cu, r);
	pc = find_piece(&r->inner, addr);
	s = pc ? pc->scope : r->scope;
	for (; s >= 0 && n < cu->nscopes; s = cu->scopes[s].parent) {
		kp_xgrow(&x->chain, &x->chain_cap, n + 1, sizeof(*x->chain));
		x->chain[n++] = &cu->scopes[s];
		if (!cu->scopes[s].inlined)
			break; /* the function holding the inlined instances */
	}
	*chain = x->chain;
	return n;
}

/* A plain DW_AT_name qualified by the namespaces and classes around its
 * declaration, for functions without a linkage name (GCC gives none to
 * members of classes in an anonymous namespace): what the demangler would
 * have printed, "app::(anonymous namespace)::W::f" rather than "f".
 * Returns a new heap string. */
static char *qualified_name(Dwarf_Die *die, const char *name)
{
	Dwarf_Die decl = *die, *scopes = NULL;
	Dwarf_Attribute attr;
	char buf[4096];
	size_t len = 0;
	int n;

	/* to the declaration: the concrete instance -> its abstract origin ->
	 * the specification inside the class */
	for (int i = 0; i < 8; i++) {
		Dwarf_Die next;

		if (dwarf_attr(&decl, DW_AT_specification, &attr) &&
		    dwarf_formref_die(&attr, &next))
			decl = next;
		else if (dwarf_attr(&decl, DW_AT_abstract_origin, &attr) &&
			 dwarf_formref_die(&attr, &next))
			decl = next;
		else
			break;
	}
	n = dwarf_getscopes_die(&decl, &scopes);
	buf[0] = '\0';
	/* scopes: the declaration, its parents, ..., the CU */
	for (int i = n - 2; i >= 1; i--) {
		const char *part;

		switch (dwarf_tag(&scopes[i])) {
		case DW_TAG_namespace:
			part = dwarf_diename(&scopes[i]);
			if (!part)
				part = "(anonymous namespace)";
			break;
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			part = dwarf_diename(&scopes[i]);
			break;
		default:
			part = NULL;
		}
		if (part && len < sizeof(buf))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s::", part);
	}
	free(scopes);
	if (len >= sizeof(buf))
		len = 0; /* absurdly deep: the plain name will do */
	return kp_xasprintf("%.*s%s", (int)len, buf, name);
}

char *kp_dwscope_name_libdw(const struct kp_dwscope *s, bool full_names)
{
	Dwarf_Attribute attr;
	Dwarf_Die die;
	const char *n;

	if (!dwarf_offdie(s->src->dw, s->off, &die))
		return NULL;
	/* following DW_AT_abstract_origin and DW_AT_specification: a mangled
	 * linkage name (qualified once demangled), else the plain name (C
	 * linkage names are asm aliases such as glibc's "__GI___sigpause") */
	n = dwarf_formstring(dwarf_attr_integrate(&die, DW_AT_linkage_name, &attr));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(&die, DW_AT_MIPS_linkage_name, &attr));
	if (n && *n) {
		char *d = kp_demangle(n, full_names);

		if (strcmp(d, n) != 0 || !dwarf_diename(&die))
			return d;
		free(d);
	}
	n = dwarf_diename(&die);
	if (n && *n && s->cxx)
		return qualified_name(&die, n);
	return n && *n ? kp_demangle(n, full_names) : NULL;
}

/* --- the same rules over the raw reader ---
 * Why: the first dwarf_offdie past a unit makes libdw intern every unit
 * before it (and its abbreviation hash), which costs more than all the
 * rest of a profile's lookups. Any case the raw reader does not handle
 * (references into a dwz supplementary file, bad data) returns an error
 * and the name comes from libdw. */

/* Makes *u the unit holding off (kept when it already is). */
static int unit_for(struct kp_dwraw *r, uint64_t off, struct kp_dwraw_unit *u)
{
	uint64_t uo;

	if (u->r && off >= u->die_off && off < u->end)
		return 0;
	if (kp_dwraw_unit_of(r, off, &uo) != 0 || kp_dwraw_unit(r, uo, u) != 0) {
		u->r = NULL;
		return -EINVAL;
	}
	return 0;
}

/* dwarf_formstring(dwarf_attr_integrate(die, at)): the attribute of the
 * DIE at off, else of its abstract origin, else of its specification, up
 * to 9 DIEs. *str NULL when none has it. */
static int raw_string(struct kp_dwraw *r, uint64_t off, enum kp_dwraw_at at,
		      struct kp_dwraw_unit *u, const char **str)
{
	*str = NULL;
	for (int chain = 0; chain < 9; chain++) {
		struct kp_dwraw_attr a;
		int rc, err;

		if (unit_for(r, off, u) != 0)
			return -EINVAL;
		rc = kp_dwraw_attr(u, off, at, &a);
		if (rc == 1) {
			*str = kp_dwraw_string(u, &a, &err);
			return err;
		}
		if (rc == 0)
			rc = kp_dwraw_attr(u, off, KP_DWRAW_AT_ABSTRACT_ORIGIN, &a);
		if (rc == 0)
			rc = kp_dwraw_attr(u, off, KP_DWRAW_AT_SPECIFICATION, &a);
		if (rc <= 0)
			return rc;
		if ((rc = kp_dwraw_ref(u, &a, &off)) != 0)
			return rc;
	}
	return 0;
}

/* Tags dwarf_getscopes_die descends through (libdw's may_have_scopes):
 * a declaration below any other is not found, and stays unqualified. */
static bool scope_tag(uint32_t tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_module:
	case DW_TAG_lexical_block:
	case DW_TAG_with_stmt:
	case DW_TAG_catch_block:
	case DW_TAG_try_block:
	case DW_TAG_entry_point:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_subprogram:
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
		return true;
	default:
		return false;
	}
}

/* qualified_name over the raw reader. */
static int raw_qualified(struct kp_dwraw *r, uint64_t off, const char *name, char **out)
{
	struct kp_dwraw_unit u = {0};
	uint64_t path[256];
	char buf[4096];
	size_t len = 0;
	int n;

	/* to the declaration: DW_AT_specification, else DW_AT_abstract_origin */
	for (int i = 0; i < 8; i++) {
		struct kp_dwraw_attr a;
		int rc;

		if (unit_for(r, off, &u) != 0)
			return -EINVAL;
		rc = kp_dwraw_attr(&u, off, KP_DWRAW_AT_SPECIFICATION, &a);
		if (rc == 0)
			rc = kp_dwraw_attr(&u, off, KP_DWRAW_AT_ABSTRACT_ORIGIN, &a);
		if (rc < 0)
			return rc;
		if (rc == 0)
			break;
		if ((rc = kp_dwraw_ref(&u, &a, &off)) != 0)
			return rc;
	}
	if (unit_for(r, off, &u) != 0)
		return -EINVAL;
	n = kp_dwraw_path(&u, off, path, sizeof(path) / sizeof(path[0]));
	if (n < 0)
		return n;
	/* the ancestors between the unit DIE and the declaration, outermost
	 * first; libdw only finds a declaration below scope tags */
	for (int i = 1; i < n - 1; i++) {
		struct kp_dwraw_die d;

		if (kp_dwraw_die(&u, path[i], &d) != 1)
			return -EINVAL;
		if (!scope_tag(d.tag)) {
			*out = kp_xstrdup(name);
			return 0;
		}
	}
	buf[0] = '\0';
	for (int i = 1; i < n - 1; i++) {
		struct kp_dwraw_unit pu = u;
		struct kp_dwraw_die d;
		const char *part = NULL;
		int rc;

		if (kp_dwraw_die(&u, path[i], &d) != 1)
			return -EINVAL;
		if (d.tag == DW_TAG_namespace || d.tag == DW_TAG_class_type ||
		    d.tag == DW_TAG_structure_type) {
			if ((rc = raw_string(r, path[i], KP_DWRAW_AT_NAME, &pu, &part)) != 0)
				return rc;
			if (!part && d.tag == DW_TAG_namespace)
				part = "(anonymous namespace)";
		}
		if (part && len < sizeof(buf))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s::", part);
	}
	if (len >= sizeof(buf))
		len = 0; /* absurdly deep: the plain name will do */
	*out = kp_xasprintf("%.*s%s", (int)len, buf, name);
	return 0;
}

/* kp_dwscope_name_libdw's rules over the raw reader. */
static int raw_name(const struct kp_dwscope *s, bool full_names, char **out)
{
	struct kp_dwraw *r = s->src->raw;
	struct kp_dwraw_unit u = {0};
	const char *n, *plain;
	int rc;

	*out = NULL;
	if ((rc = raw_string(r, s->off, KP_DWRAW_AT_LINKAGE_NAME, &u, &n)) != 0)
		return rc;
	if (!n && (rc = raw_string(r, s->off, KP_DWRAW_AT_MIPS_LINKAGE_NAME, &u, &n)) != 0)
		return rc;
	if ((rc = raw_string(r, s->off, KP_DWRAW_AT_NAME, &u, &plain)) != 0)
		return rc;
	if (n && *n) {
		char *d = kp_demangle(n, full_names);

		if (strcmp(d, n) != 0 || !plain) {
			*out = d;
			return 0;
		}
		free(d);
	}
	if (plain && *plain && s->cxx)
		return raw_qualified(r, s->off, plain, out);
	*out = plain && *plain ? kp_demangle(plain, full_names) : NULL;
	return 0;
}

const char *kp_dwscope_name(struct kp_dwscope *s, bool full_names)
{
	if (s->named)
		return s->name;
	s->named = true;
	if (!s->src->raw || raw_name(s, full_names, &s->name) != 0)
		s->name = kp_dwscope_name_libdw(s, full_names);
	return s->name;
}
