/* kp_dwidx: per compilation unit, the address ranges of every function and
 * inlined-subroutine instance, flattened once into sorted disjoint pieces
 * that each name their innermost scope. dwarf_getscopes walks a CU's DIE
 * tree on every call; with this index a lookup is a binary search and a
 * walk up the parents. Internal to symbolize/. */
#ifndef KP_SYMBOLIZE_DWARF_INDEX_H
#define KP_SYMBOLIZE_DWARF_INDEX_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>

struct kp_dwscope {
	Dwarf_Die die;
	int parent;   /* index in the CU's scopes, -1 at the top */
	bool inlined; /* DW_TAG_inlined_subroutine (else DW_TAG_subprogram) */
	bool named;   /* name computed */
	bool cxx;     /* in a C++/Rust/other CU: qualify plain names by their scopes */
	char *name;   /* display name, NULL if none */
};

struct kp_dwidx;

struct kp_dwidx *kp_dwidx_new(void);
void kp_dwidx_free(struct kp_dwidx *x);

/* The scopes containing addr (a DWARF address of dw), innermost first,
 * ending with the function that contains them: *chain points to an array
 * owned by x, valid until the next call. Returns its length, 0 when no
 * DWARF describes addr. One x serves one dw. */
size_t kp_dwidx_chain(struct kp_dwidx *x, Dwarf *dw, Dwarf_Addr addr, struct kp_dwscope ***chain);

/* The scope's display name (linkage name demangled, else DW_AT_name,
 * following abstract origins), or NULL. Owned by x. */
const char *kp_dwscope_name(struct kp_dwscope *s, bool full_names);

#endif
