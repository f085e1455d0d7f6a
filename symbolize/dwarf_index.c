#include "symbolize/dwarf_index.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/demangle.h"
#include "symbolize/dwarf_indexP.h"
#include "symbolize/idmap.h"
#include "util/hash.h"
#include "util/xalloc.h"
#include "util/search.h"

struct span;

struct cu_range {
	Dwarf_Addr lo, hi;
	Dwarf_Off die_off; /* the unit's DIE */
};

struct kp_dwarf_index {
	struct cu_index *cus; /* id = index + 1 */
	size_t ncus, cap;
	struct kp_idmap by_off;
	struct kp_dwarf_scope **chain;
	size_t chain_cap;
	/* scratch reused from one walk to the next */
	struct span *spans;
	size_t spans_cap;
	Dwarf_Addr *pts; /* 4n: the 2n ends and a sort's scratch */
	size_t pts_cap;
	void *tmp; /* n spans: a sort's scratch, then the heap */
	size_t tmp_cap;
	/* for units .debug_aranges leaves out (all, from clang by default):
	 * their ranges from their DIEs, sorted, built on the first miss */
	struct cu_range *cu_ranges;
	size_t ncu_ranges;
	bool cu_ranges_built;
};

struct kp_dwarf_index *kp_dwarf_index_new(void)
{
	return kp_xcalloc(1, sizeof(struct kp_dwarf_index));
}

void kp_dwarf_index_cu_fini(struct cu_index *cu)
{
	for (size_t j = 0; j < cu->nscopes; j++)
		free(cu->scopes[j].name);
	for (size_t j = 0; j < cu->nroots; j++)
		free(cu->roots[j].inner.v);
	free(cu->scopes);
	free(cu->roots);
	free(cu->top.v);
}

void kp_dwarf_index_free(struct kp_dwarf_index *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->ncus; i++)
		kp_dwarf_index_cu_fini(&x->cus[i]);
	free(x->cus);
	free(x->chain);
	free(x->spans);
	free(x->pts);
	free(x->tmp);
	free(x->cu_ranges);
	kp_idmap_fini(&x->by_off);
	free(x);
}

/* An address range of a scope, with its nesting depth. */
struct span {
	Dwarf_Addr lo, hi;
	int scope, depth;
};

struct walk {
	struct kp_dwarf_index *x;
	struct cu_index *cu;
	size_t nspans;
	bool top; /* the CU level: functions become roots, not descended */
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

static int add_scope(struct cu_index *cu, Dwarf_Die *die, int parent, bool inlined)
{
	struct kp_dwarf_scope *sc;

	kp_xgrow(&cu->scopes, &cu->scopes_cap, cu->nscopes + 1, sizeof(*cu->scopes));
	sc = &cu->scopes[cu->nscopes];
	memset(sc, 0, sizeof(*sc));
	sc->die = *die;
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

/* Depth-first over the children of die. At the top level each function
 * with code becomes a root (span scope = root number); below, every
 * function and inlined instance is a scope of its own. */
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
			int root = -1;

			/* code addresses are never inherited, while dwarf_ranges
			 * looks for them through abstract origins and
			 * specifications: declarations and abstract instances
			 * (most subprograms of a unit) are told apart here from
			 * their abbreviation alone */
			if (!dwarf_hasattr(&child, DW_AT_low_pc) &&
			    !dwarf_hasattr(&child, DW_AT_ranges))
				off = -1;
			while (off >= 0 && (off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				if (hi <= lo)
					continue;
				if (me == parent) {
					me = add_scope(w->cu, &child, parent,
						       tag == DW_TAG_inlined_subroutine);
					d = depth + 1;
					if (w->top) {
						struct cu_index *cu = w->cu;

						cu->roots = kp_xrealloc(cu->roots,
									(cu->nroots + 1) *
										sizeof(*cu->roots));
						memset(&cu->roots[cu->nroots], 0,
						       sizeof(*cu->roots));
						cu->roots[cu->nroots].scope = me;
						root = (int)cu->nroots++;
					}
				}
				add_span(w, lo, hi, w->top ? root : me, d);
			}
		}
		if (may_hold_code(w, tag) && dwarf_haschildren(&child))
			walk_die(w, &child, me, d);
	} while (dwarf_siblingof(&child, &child) == 0);
}

static inline bool span_less(const struct span *a, const struct span *b)
{
	return a->lo != b->lo ? a->lo < b->lo : a->depth < b->depth;
}

static inline bool addr_less(const Dwarf_Addr *a, const Dwarf_Addr *b)
{
	return *a < *b;
}

KP_MSORT(sort_spans, struct span, span_less)
KP_MSORT(sort_addrs, Dwarf_Addr, addr_less)

static bool deeper(const struct span *a, const struct span *b)
{
	return a->depth != b->depth ? a->depth > b->depth : a->scope > b->scope;
}

/* Flattens the spans: for each elementary interval, the deepest covering
 * scope (nested ranges in sane DWARF; a heap keeps it right otherwise). */
static void flatten(struct kp_dwarf_index *x, struct pieces *out, struct span *spans, size_t n)
{
	Dwarf_Addr *pts;
	const struct span **heap;
	size_t npts = 0, nh = 0, next = 0, cap = 0;

	if (!n)
		return;
	/* scratch for both sorts and the heap, reused from CU to CU */
	kp_xgrow(&x->pts, &x->pts_cap, 4 * n, sizeof(*x->pts));
	kp_xgrow(&x->tmp, &x->tmp_cap, n, sizeof(struct span));
	sort_spans(spans, x->tmp, n);
	pts = x->pts;
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
	const struct kp_dwarf_index *x;
	Dwarf_Off off;
};

static bool off_eq(void *ctx, uint32_t id)
{
	const struct off_query *q = ctx;

	return q->x->cus[id - 1].cu_off == q->off;
}

static const char *unit_comp_dir(Dwarf_Die *cudie)
{
	Dwarf_Attribute attr;

	return dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
}

/* A file name of a unit's line table as a kp_dwarf_src: relative names are
 * relative to the unit's directory. */
void kp_dwarf_index_set_src(struct kp_dwarf_src *out, const char *comp_dir, const char *file,
			    int line)
{
	out->file = file;
	out->dir = file && file[0] != '/' && comp_dir && *comp_dir ? comp_dir : NULL;
	out->line = line > 0 ? (uint32_t)line : 0;
}

/* The line-table row of addr in the unit, as dwarf_getsrc_die picks it; a
 * row naming no file (an index past the table, or 0 before DWARF 5, where
 * files count from 1) is none. */
static void unit_row(const struct cu_index *cu, Dwarf_Addr addr, struct kp_dwarf_src *out)
{
	Dwarf_Die cudie = cu->cudie;
	Dwarf_Line *l = dwarf_getsrc_die(&cudie, addr);
	Dwarf_Files *files;
	const char *name;
	size_t idx;
	int line = 0;

	memset(out, 0, sizeof(*out));
	if (!l || dwarf_lineno(l, &line) != 0 || dwarf_line_file(l, &files, &idx) != 0 ||
	    (!cu->v5 && idx == 0) || !(name = dwarf_filesrc(files, idx, NULL, NULL)))
		return;
	kp_dwarf_index_set_src(out, cu->comp_dir, name, line);
}

/* Walks the top level of the unit of cudie into cu (zeroed): its functions
 * with code become roots. */
void kp_dwarf_index_cu(struct kp_dwarf_index *x, Dwarf_Die *cudie, struct cu_index *cu)
{
	struct walk w = {0};

	cu->cu_off = dwarf_dieoffset(cudie);
	cu->cudie = *cudie;
	cu->comp_dir = unit_comp_dir(cudie);
	{
		Dwarf_Half version = 0;

		cu->v5 = dwarf_cu_info(cudie->cu, &version, NULL, NULL, NULL, NULL, NULL, NULL) ==
				 0 &&
			 version >= 5;
	}
	switch (dwarf_srclang(cudie)) {
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
	walk_die(&w, cudie, -1, 0);
	flatten(x, &cu->top, x->spans, w.nspans);
}

static struct cu_index *get_cu(struct kp_dwarf_index *x, Dwarf_Die *cudie)
{
	struct off_query q = {x, dwarf_dieoffset(cudie)};
	uint32_t id = kp_idmap_find(&x->by_off, kp_hash_u64(q.off), off_eq, &q);
	struct cu_index *cu;

	if (id)
		return &x->cus[id - 1];
	kp_xgrow(&x->cus, &x->cap, x->ncus + 1, sizeof(*x->cus));
	cu = &x->cus[x->ncus++];
	memset(cu, 0, sizeof(*cu));
	kp_dwarf_index_cu(x, cudie, cu);
	kp_idmap_put(&x->by_off, kp_hash_u64(q.off), (uint32_t)x->ncus);
	return cu;
}

/* Indexes the subtree of one top-level function. */
void kp_dwarf_index_root(struct kp_dwarf_index *x, struct cu_index *cu, struct root *r)
{
	Dwarf_Die die = cu->scopes[r->scope].die;
	struct walk w = {.x = x, .cu = cu};
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	r->indexed = true;
	while ((off = dwarf_ranges(&die, off, &base, &lo, &hi)) > 0) {
		if (hi > lo)
			add_span(&w, lo, hi, r->scope, 0);
	}
	walk_die(&w, &die, r->scope, 1);
	flatten(x, &r->inner, x->spans, w.nspans);
}

/* The piece of p containing addr, or NULL. */
static const struct piece *find_piece(const struct pieces *p, Dwarf_Addr addr)
{
	size_t lo = KP_FIRST_ABOVE(p->v, p->n, lo, addr);

	return lo > 0 && addr < p->v[lo - 1].hi ? &p->v[lo - 1] : NULL;
}

static int cu_range_cmp(const void *pa, const void *pb)
{
	const struct cu_range *a = pa, *b = pb;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static int off_cmp(const void *pa, const void *pb)
{
	Dwarf_Off a = *(const Dwarf_Off *)pa, b = *(const Dwarf_Off *)pb;

	return a < b ? -1 : a > b;
}

/* The ranges of the units .debug_aranges leaves out (all of them when
 * there is none), read from the unit DIEs with libdw. Units it covers are
 * skipped: opening a unit's DIE decodes its abbreviations, which for every
 * unit of libc would cost more than the lookups. */
static void build_cu_ranges(struct kp_dwarf_index *x, Dwarf *dw)
{
	Dwarf_Aranges *ar;
	Dwarf_Off off = 0, next, *covered = NULL;
	size_t hsize, cap = 0, naranges = 0, ncovered = 0;

	x->cu_ranges_built = true;
	if (dwarf_getaranges(dw, &ar, &naranges) == 0 && naranges) {
		covered = kp_xmalloc(naranges * sizeof(*covered));
		for (size_t i = 0; i < naranges; i++) {
			Dwarf_Arange *a = dwarf_onearange(ar, i);
			Dwarf_Addr start;
			Dwarf_Word len;

			if (a && dwarf_getarangeinfo(a, &start, &len, &covered[ncovered]) == 0)
				ncovered++;
		}
		qsort(covered, ncovered, sizeof(*covered), off_cmp);
	}
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Off die_off = off + hsize;
		Dwarf_Die cudie;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t r = 0;

		off = next;
		if (ncovered && bsearch(&die_off, covered, ncovered, sizeof(*covered), off_cmp))
			continue;
		if (!dwarf_offdie(dw, die_off, &cudie))
			continue;
		while ((r = dwarf_ranges(&cudie, r, &base, &lo, &hi)) > 0) {
			if (hi <= lo)
				continue;
			kp_xgrow(&x->cu_ranges, &cap, x->ncu_ranges + 1, sizeof(*x->cu_ranges));
			x->cu_ranges[x->ncu_ranges++] = (struct cu_range){lo, hi, die_off};
		}
	}
	free(covered);
	if (x->ncu_ranges)
		qsort(x->cu_ranges, x->ncu_ranges, sizeof(*x->cu_ranges), cu_range_cmp);
}

/* The unit holding addr: .debug_aranges through libdw, else (the section
 * is optional, and clang does not emit it by default) the own ranges of
 * the units it does not cover. */
static bool find_cu(struct kp_dwarf_index *x, Dwarf *dw, Dwarf_Addr addr, Dwarf_Die *cudie)
{
	size_t lo;

	if (dwarf_addrdie(dw, addr, cudie))
		return true;
	if (!x->cu_ranges_built)
		build_cu_ranges(x, dw);
	/* the last range starting at or below addr (units do not overlap) */
	lo = KP_FIRST_ABOVE(x->cu_ranges, x->ncu_ranges, lo, addr);
	return lo > 0 && addr < x->cu_ranges[lo - 1].hi &&
	       dwarf_offdie(dw, x->cu_ranges[lo - 1].die_off, cudie);
}

size_t kp_dwarf_index_chain(struct kp_dwarf_index *x, Dwarf *dw, Dwarf_Addr addr,
			    struct kp_dwarf_scope ***chain, struct kp_dwarf_src *row)
{
	Dwarf_Die cudie;
	struct cu_index *cu;
	const struct piece *pc;
	struct root *r;
	size_t n = 0;
	int s;

	*chain = NULL;
	if (row)
		memset(row, 0, sizeof(*row));
	/* straight to libdw: dwfl_module_addrdie interns every CU in a tree */
	if (!dw || !find_cu(x, dw, addr, &cudie))
		return 0;
	cu = get_cu(x, &cudie);
	if (row)
		unit_row(cu, addr, row);
	pc = find_piece(&cu->top, addr);
	if (!pc)
		return 0;
	r = &cu->roots[pc->scope];
	if (!r->indexed)
		kp_dwarf_index_root(x, cu, r);
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

/* The file of index idx in the line table of the unit of die, or NULL. In
 * DWARF 5 the files count from 0 (the unit's own file), before from 1 (0
 * is none; libdw puts a placeholder there). */
static const char *unit_file(Dwarf_Die *die, Dwarf_Word idx, const char **comp_dir)
{
	Dwarf_Die cudie;
	Dwarf_Files *files;
	Dwarf_Half version = 0;
	size_t nfiles;

	*comp_dir = NULL;
	if (!dwarf_diecu(die, &cudie, NULL, NULL) ||
	    dwarf_cu_info(cudie.cu, &version, NULL, NULL, NULL, NULL, NULL, NULL) != 0 ||
	    (version < 5 && idx == 0) || dwarf_getsrcfiles(&cudie, &files, &nfiles) != 0 ||
	    idx >= nfiles)
		return NULL;
	*comp_dir = unit_comp_dir(&cudie);
	return dwarf_filesrc(files, idx, NULL, NULL);
}

void kp_dwarf_index_call_site(const struct kp_dwarf_scope *s, struct kp_dwarf_src *out)
{
	Dwarf_Die die = s->die;
	Dwarf_Attribute attr;
	Dwarf_Word file = 0, line = 0;
	const char *comp_dir, *name = NULL;

	memset(out, 0, sizeof(*out));
	if (!s->inlined)
		return;
	if (dwarf_formudata(dwarf_attr(&die, DW_AT_call_file, &attr), &file) == 0)
		name = unit_file(&die, file, &comp_dir);
	if (dwarf_formudata(dwarf_attr(&die, DW_AT_call_line, &attr), &line) != 0 ||
	    line > INT32_MAX)
		line = 0;
	if (name)
		kp_dwarf_index_set_src(out, comp_dir, name, (int)line);
	else
		out->line = (uint32_t)line;
}

/* A plain DW_AT_name qualified by the namespaces and classes around its
 * declaration, for functions without a linkage name (GCC gives none to
 * members of classes in an anonymous namespace): what the demangler would
 * have printed, "app::(anonymous namespace)::W::f" rather than "f".
 * Returns a new heap string. */
char *kp_dwarf_index_qualified_name(Dwarf_Die *die, const char *name)
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

char *kp_dwarf_index_pick_name(const char *link, const char *plain,
			       kp_dwarf_index_qualify_fn qualify, void *arg, bool full_names)
{
	if (link && *link) {
		char *d = kp_demangle(link, full_names);

		if (strcmp(d, link) != 0 || !plain)
			return d;
		free(d);
	}
	if (!plain || !*plain)
		return NULL;
	return qualify ? qualify(arg, plain) : kp_demangle(plain, full_names);
}

static char *qualify_die(void *die, const char *plain)
{
	return kp_dwarf_index_qualified_name(die, plain);
}

/* The scope's linkage name (following DW_AT_abstract_origin and
 * DW_AT_specification), or NULL. */
const char *kp_dwarf_index_linkage_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));

	return n ? n : dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
}

const char *kp_dwarf_index_scope_name(struct kp_dwarf_scope *s, bool full_names)
{
	if (s->named)
		return s->name;
	s->named = true;
	s->name = kp_dwarf_index_pick_name(kp_dwarf_index_linkage_name(&s->die),
					   dwarf_diename(&s->die), s->cxx ? qualify_die : NULL,
					   &s->die, full_names);
	return s->name;
}
