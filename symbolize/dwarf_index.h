/* kp_dwidx: per compilation unit, the address ranges of every function and
 * inlined-subroutine instance, flattened once into sorted disjoint pieces
 * that each name their innermost scope. dwarf_getscopes walks a CU's DIE
 * tree on every call; with this index a lookup is a binary search and a
 * walk up the parents. The DIEs are read from the section bytes by
 * kp_dwraw (symbolize/dwarf_raw.h); libdw remains the fallback for names.
 * Internal to symbolize/. */
#ifndef KP_SYMBOLIZE_DWARF_INDEX_H
#define KP_SYMBOLIZE_DWARF_INDEX_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>

struct kp_dwidx_src;

struct kp_dwscope {
	const struct kp_dwidx_src *src; /* its DWARF, for names */
	Dwarf_Off off;			/* the DIE's offset in .debug_info */
	int parent;			/* index in the CU's scopes, -1 at the top */
	bool inlined;			/* DW_TAG_inlined_subroutine (else DW_TAG_subprogram) */
	bool named;			/* name computed */
	bool cxx;   /* in a C++/Rust/other CU: qualify plain names by their scopes */
	char *name; /* display name, NULL if none */
};

struct kp_dwidx;

struct kp_dwidx *kp_dwidx_new(void);
void kp_dwidx_free(struct kp_dwidx *x);

/* The scopes containing addr (a DWARF address of dw), innermost first,
 * ending with the function that contains them: *chain points to an array
 * owned by x, valid until the next call. Returns its length, 0 when no
 * DWARF describes addr (the unit comes from .debug_aranges, as for libdw's
 * dwarf_addrdie: none there, no chain). One x serves one dw, which must
 * outlive x. */
size_t kp_dwidx_chain(struct kp_dwidx *x, Dwarf *dw, Dwarf_Addr addr, struct kp_dwscope ***chain);

/* The scope's display name (linkage name demangled, else DW_AT_name,
 * following abstract origins), or NULL. Owned by x. */
const char *kp_dwscope_name(struct kp_dwscope *s, bool full_names);

/* The same name found through libdw alone (kp_dwscope_name reads the
 * sections itself and falls back to this for what it does not handle):
 * a new heap string or NULL. For tests. */
char *kp_dwscope_name_libdw(const struct kp_dwscope *s, bool full_names);

#endif
