/* kp_dwarf_index: per compilation unit, the address ranges of every
 * function and inlined-subroutine instance, flattened once into sorted
 * disjoint pieces that each name their innermost scope (struct
 * kp_dwarf_scope). dwarf_getscopes walks a CU's DIE tree on every call;
 * with this index a lookup is a binary search and a walk up the parents.
 * It also names a scope (kp_dwarf_index_scope_name, _pick_name); a whole
 * build flattened for the saved index is dwarf_flat.h's. Internal to
 * symbolize/. */
#ifndef KP_SYMBOLIZE_DWARF_INDEX_H
#define KP_SYMBOLIZE_DWARF_INDEX_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kp_dwarf_scope {
	Dwarf_Die die;
	int parent;   /* index in the CU's scopes, -1 at the top */
	bool inlined; /* DW_TAG_inlined_subroutine (else DW_TAG_subprogram) */
	bool named;   /* name computed */
	bool cxx;     /* in a C++/Rust/other CU: qualify plain names by their scopes */
	char *name;   /* display name, NULL if none */
};

struct kp_dwarf_index;

struct kp_dwarf_index *kp_dwarf_index_new(void);
void kp_dwarf_index_free(struct kp_dwarf_index *x);

/* A source position as DWARF gives it: the file's name from its unit's
 * line table (joined with its directory there), and when that name is
 * relative, the unit's DW_AT_comp_dir it is relative to (addr2line prints
 * DIR/FILE). The strings are libdw's, valid while the Dwarf is open. */
struct kp_dwarf_src {
	const char *dir;  /* the unit's comp_dir when file is relative, else NULL */
	const char *file; /* NULL when unknown */
	uint32_t line;	  /* 0 when unknown (a line-0 row keeps its file) */
};

/* The scopes containing addr (a DWARF address of dw), innermost first,
 * ending with the function that contains them: *chain points to an array
 * owned by x, valid until the next call. Returns its length, 0 when no
 * DWARF describes addr. When row is not NULL it gets the line-table row of
 * addr in its unit, as dwarf_getsrc_die picks it (the last row at or
 * before addr, none past an end of sequence), also where no function
 * covers addr (assembler units have rows but no functions). One x serves
 * one dw. */
size_t kp_dwarf_index_chain(struct kp_dwarf_index *x, Dwarf *dw, Dwarf_Addr addr,
			    struct kp_dwarf_scope ***chain, struct kp_dwarf_src *row);

/* The call site of an inlined scope (DW_AT_call_file, DW_AT_call_line):
 * where, in the scope around it, its code was inlined. */
void kp_dwarf_index_call_site(const struct kp_dwarf_scope *s, struct kp_dwarf_src *out);

/* The scope's display name (linkage name demangled, else DW_AT_name,
 * following abstract origins), or NULL. Owned by x. */
const char *kp_dwarf_index_scope_name(struct kp_dwarf_scope *s, bool full_names);

/* Makes a qualified name ("ns::C::f") of a plain one, as a heap string. */
typedef char *(*kp_dwarf_index_qualify_fn)(void *arg, const char *plain);

/* The naming rule of kp_dwarf_index_scope_name, shared with the persisted index
 * (symidx.h): the demangled linkage name when it is a mangled one (or
 * there is no plain name), else the plain name, qualified by qualify (C++
 * and Rust units) or demangled. An unmangled linkage name loses to the
 * plain name: in C it is an asm alias such as glibc's "__GI___sigpause".
 * link and plain may be NULL. Returns a new heap string, or NULL. */
char *kp_dwarf_index_pick_name(const char *link, const char *plain,
			       kp_dwarf_index_qualify_fn qualify, void *arg, bool full_names);

#endif
