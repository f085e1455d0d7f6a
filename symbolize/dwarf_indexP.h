/* What dwarf_index.c (the lazy per-unit index and its lookups) shares with
 * dwarf_flat.c (a whole build flattened for the saved index): the index of
 * one unit, its making and naming, and the merge sort both use. Private to
 * those two files, after libdwfl's libdwflP.h. */
#ifndef KP_SYMBOLIZE_DWARF_INDEXP_H
#define KP_SYMBOLIZE_DWARF_INDEXP_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "symbolize/dwarf_index.h"

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
	Dwarf_Off cu_off;
	Dwarf_Die cudie;
	const char *comp_dir; /* DW_AT_comp_dir, NULL when the unit has none */
	bool v5;	      /* DWARF 5: files count from 0 */
	struct kp_dwarf_scope *scopes;
	size_t nscopes, scopes_cap;
	struct root *roots; /* by scope: roots[i].scope */
	size_t nroots;
	struct pieces top; /* scope = index in roots */
	bool cxx;	   /* classes may hold member function definitions */
};

/* Walks the top level of the unit of cudie into cu (zeroed): its functions
 * with code become roots. Free with kp_dwarf_index_cu_fini. */
void kp_dwarf_index_cu(struct kp_dwarf_index *x, Dwarf_Die *cudie, struct cu_index *cu);
void kp_dwarf_index_cu_fini(struct cu_index *cu);

/* Indexes the subtree of one top-level function. */
void kp_dwarf_index_root(struct kp_dwarf_index *x, struct cu_index *cu, struct root *r);

/* A file name of a unit's line table as a kp_dwarf_src: relative names are
 * relative to the unit's directory. */
void kp_dwarf_index_set_src(struct kp_dwarf_src *out, const char *comp_dir, const char *file,
			    int line);

/* The scope's linkage name (following DW_AT_abstract_origin and
 * DW_AT_specification), or NULL. */
const char *kp_dwarf_index_linkage_name(Dwarf_Die *die);

/* die's plain name qualified by the namespaces and classes around its
 * declaration ("app::(anonymous namespace)::W::f"). A new heap string. */
char *kp_dwarf_index_qualified_name(Dwarf_Die *die, const char *name);

/* A stable merge sort through a scratch array of n items, comparisons
 * inlined (qsort's merge sort with indirect calls was a sixth of the
 * instructions of a lookup run over libc): runs of 16 by insertion, then
 * merges of doubling width. */
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

#endif
