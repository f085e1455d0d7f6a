/* kp_dwarf_flat: a whole build's DWARF flattened for the saved index
 * (symidx.h): every scope with its names and call site, the disjoint
 * pieces of code each innermost scope holds, and the line tables as rows,
 * all as the lazy index (dwarf_index.h) would find them address by
 * address. Internal to symbolize/. */
#ifndef KP_SYMBOLIZE_DWARF_FLAT_H
#define KP_SYMBOLIZE_DWARF_FLAT_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/dwarf_index.h"

struct kp_strtab;

/* One scope of a whole flattened build (kp_dwarf_flat_build). */
struct kp_dwarf_flat_scope {
	int32_t parent; /* an earlier scope, or -1 */
	bool inlined;
	bool qualified;	      /* plain is qualified by its namespaces and classes */
	const char *link;     /* linkage name (libdw's string), or NULL */
	const char *plain;    /* plain name (libdw's, or qualified_name), or NULL */
	char *qualified_name; /* heap, when plain was qualified */
	uint32_t call_file;   /* inlined: its call site's file (an id in files), 0 for none */
	uint32_t call_line;   /* and line, 0 for none */
};

struct kp_dwarf_flat_piece {
	Dwarf_Addr lo, hi;
	uint32_t scope;
};

/* [lo, hi) is at line of file (an id in files, never 0). */
struct kp_dwarf_flat_row {
	Dwarf_Addr lo, hi;
	uint32_t file, line;
};

struct kp_dwarf_flat {
	struct kp_dwarf_flat_scope *scopes; /* parents before children */
	size_t nscopes;
	struct kp_dwarf_flat_piece *pieces; /* sorted, disjoint, adjacent ones merged */
	size_t npieces;
	/* the line tables of every unit as kp_dwarf_index_chain reads them: sorted,
	 * disjoint, neighbours at the same file and line merged */
	struct kp_dwarf_flat_row *rows;
	size_t nrows;
	struct kp_strtab *files; /* source files as absolute paths, ids from 1 */
};

/* Indexes every unit and function of dw (one x serves one dw; its lazy
 * index is not filled) and fills out with the whole build flattened: what
 * a lookup of any address would find, for the persisted index. The names
 * point into dw: use out while dw is open. Free with kp_dwarf_flat_fini. */
void kp_dwarf_flat_build(struct kp_dwarf_index *x, Dwarf *dw, struct kp_dwarf_flat *out);
void kp_dwarf_flat_fini(struct kp_dwarf_flat *f);

#endif
