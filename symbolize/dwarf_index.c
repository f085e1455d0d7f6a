#include "symbolize/dwarf_index.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/demangle.h"
#include "symbolize/idmap.h"
#include "util/hash.h"
#include "util/xalloc.h"

struct piece {
	Dwarf_Addr lo, hi; /* [lo, hi), CU addresses */
	int scope;
};

struct cu_index {
	Dwarf_Off cu_off;
	struct kp_dwscope *scopes;
	size_t nscopes;
	struct piece *pieces; /* sorted, disjoint */
	size_t npieces;
};

struct span;

struct kp_dwidx {
	struct cu_index *cus; /* id = index + 1 */
	size_t ncus, cap;
	struct kp_idmap by_off;
	struct kp_dwscope **chain;
	size_t chain_cap;
	/* scratch reused from one CU to the next */
	struct span *spans;
	size_t spans_cap;
	struct kp_dwscope *scopes;
	size_t scopes_cap;
	Dwarf_Addr *pts;
	size_t pts_cap;
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
		for (size_t j = 0; j < x->cus[i].nscopes; j++)
			free(x->cus[i].scopes[j].name);
		free(x->cus[i].scopes);
		free(x->cus[i].pieces);
	}
	free(x->cus);
	free(x->chain);
	free(x->spans);
	free(x->scopes);
	free(x->pts);
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
	size_t nspans, nscopes;
	bool cxx; /* classes may hold member function definitions */
};

/* Whether a DIE's children can include functions or inlined instances:
 * skipping types, variables and call sites keeps the walk short. */
static bool may_hold_code(const struct walk *w, int tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
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
		return w->cxx;
	default:
		return false;
	}
}

/* Depth-first over the CU; returns nothing, bounded by the DIE tree. */
static void walk_die(struct walk *w, Dwarf_Die *die, int parent, int depth)
{
	Dwarf_Die child;

	if (depth > 512)
		return; /* hostile nesting */
	if (dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child), me = parent, d = depth;

		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;
			bool any = false;

			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				if (hi <= lo)
					continue;
				if (!any) {
					struct kp_dwscope *sc;

					kp_xgrow(&w->x->scopes, &w->x->scopes_cap, w->nscopes + 1,
						 sizeof(*w->x->scopes));
					sc = &w->x->scopes[w->nscopes];
					memset(sc, 0, sizeof(*sc));
					sc->die = child;
					sc->parent = parent;
					sc->inlined = tag == DW_TAG_inlined_subroutine;
					me = (int)w->nscopes++;
					d = depth + 1;
					any = true;
				}
				kp_xgrow(&w->x->spans, &w->x->spans_cap, w->nspans + 1,
					 sizeof(*w->x->spans));
				w->x->spans[w->nspans++] = (struct span){lo, hi, me, d};
			}
		}
		if (may_hold_code(w, tag) && dwarf_haschildren(&child))
			walk_die(w, &child, me, d);
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int span_cmp(const void *pa, const void *pb)
{
	const struct span *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->depth - b->depth;
}

static int addr_cmp(const void *pa, const void *pb)
{
	Dwarf_Addr a = *(const Dwarf_Addr *)pa, b = *(const Dwarf_Addr *)pb;

	return a < b ? -1 : a > b;
}

static bool deeper(const struct span *a, const struct span *b)
{
	return a->depth != b->depth ? a->depth > b->depth : a->scope > b->scope;
}

/* Flattens the spans: for each elementary interval, the deepest covering
 * scope (nested ranges in sane DWARF; a heap keeps it right otherwise). */
static void flatten(struct kp_dwidx *x, struct cu_index *cu, struct span *spans, size_t n)
{
	Dwarf_Addr *pts;
	const struct span **heap;
	size_t npts = 0, nh = 0, next = 0, cap = 0;

	if (!n)
		return;
	qsort(spans, n, sizeof(*spans), span_cmp);
	kp_xgrow(&x->pts, &x->pts_cap, 2 * n, sizeof(*x->pts));
	pts = x->pts;
	heap = kp_xmalloc(n * sizeof(*heap));
	for (size_t i = 0; i < n; i++) {
		pts[npts++] = spans[i].lo;
		pts[npts++] = spans[i].hi;
	}
	qsort(pts, npts, sizeof(*pts), addr_cmp);
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
		last = cu->npieces ? &cu->pieces[cu->npieces - 1] : NULL;
		if (last && last->hi == a && last->scope == heap[0]->scope) {
			last->hi = b;
			continue;
		}
		kp_xgrow(&cu->pieces, &cap, cu->npieces + 1, sizeof(*cu->pieces));
		cu->pieces[cu->npieces++] = (struct piece){a, b, heap[0]->scope};
	}
	free(heap);
	/* exact size: many CUs are indexed and kept */
	if (cu->npieces)
		cu->pieces = kp_xrealloc(cu->pieces, cu->npieces * sizeof(*cu->pieces));
}

struct off_query {
	const struct kp_dwidx *x;
	Dwarf_Off off;
};

static bool off_eq(void *ctx, uint32_t id)
{
	const struct off_query *q = ctx;

	return q->x->cus[id - 1].cu_off == q->off;
}

static struct cu_index *get_cu(struct kp_dwidx *x, Dwarf_Die *cudie)
{
	struct off_query q = {x, dwarf_dieoffset(cudie)};
	uint32_t id = kp_idmap_find(&x->by_off, kp_hash_u64(q.off), off_eq, &q);
	struct walk w = {0};
	struct cu_index *cu;

	if (id)
		return &x->cus[id - 1];
	kp_xgrow(&x->cus, &x->cap, x->ncus + 1, sizeof(*x->cus));
	cu = &x->cus[x->ncus++];
	memset(cu, 0, sizeof(*cu));
	cu->cu_off = q.off;
	w.x = x;
	switch (dwarf_srclang(cudie)) {
	case DW_LANG_C:
	case DW_LANG_C89:
	case DW_LANG_C99:
	case DW_LANG_C11:
		w.cxx = false;
		break;
	default:
		w.cxx = true; /* C++, Rust (impl blocks live in structs), unknown */
	}
	walk_die(&w, cudie, -1, 0);
	if (w.nscopes) {
		cu->nscopes = w.nscopes;
		cu->scopes = kp_xmalloc(w.nscopes * sizeof(*cu->scopes));
		memcpy(cu->scopes, x->scopes, w.nscopes * sizeof(*cu->scopes));
	}
	flatten(x, cu, x->spans, w.nspans);
	kp_idmap_put(&x->by_off, kp_hash_u64(q.off), (uint32_t)x->ncus);
	return cu;
}

size_t kp_dwidx_chain(struct kp_dwidx *x, Dwfl_Module *mod, Dwarf_Addr addr,
		      struct kp_dwscope ***chain)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
	Dwarf_Die cudie;
	struct cu_index *cu;
	size_t lo = 0, hi, n = 0;
	int s;

	*chain = NULL;
	/* straight to libdw: dwfl_module_addrdie interns every CU in a tree */
	if (!dw || !dwarf_addrdie(dw, addr - bias, &cudie))
		return 0;
	cu = get_cu(x, &cudie);
	addr -= bias;
	hi = cu->npieces;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cu->pieces[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= cu->pieces[lo - 1].hi)
		return 0;
	for (s = cu->pieces[lo - 1].scope; s >= 0 && n < cu->nscopes; s = cu->scopes[s].parent) {
		kp_xgrow(&x->chain, &x->chain_cap, n + 1, sizeof(*x->chain));
		x->chain[n++] = &cu->scopes[s];
		if (!cu->scopes[s].inlined)
			break; /* the function holding the inlined instances */
	}
	*chain = x->chain;
	return n;
}

const char *kp_dwscope_name(struct kp_dwscope *s, bool full_names)
{
	Dwarf_Attribute attr;
	const char *n;

	if (s->named)
		return s->name;
	s->named = true;
	/* following DW_AT_abstract_origin and DW_AT_specification: a mangled
	 * linkage name (qualified once demangled), else the plain name (C
	 * linkage names are asm aliases such as glibc's "__GI___sigpause") */
	n = dwarf_formstring(dwarf_attr_integrate(&s->die, DW_AT_linkage_name, &attr));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(&s->die, DW_AT_MIPS_linkage_name, &attr));
	if (n && *n) {
		char *d = kp_demangle(n, full_names);

		if (strcmp(d, n) != 0 || !dwarf_diename(&s->die)) {
			s->name = d;
			return s->name;
		}
		free(d);
	}
	n = dwarf_diename(&s->die);
	s->name = n && *n ? kp_demangle(n, full_names) : NULL;
	return s->name;
}
