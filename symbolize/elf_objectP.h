/* What the files of one ELF object share, after libdwfl's libdwflP.h:
 * the object (struct kp_elf_object) and the steps each file takes of it.
 * elf_object.c opens, loads and names an object; elf_debuginfo.c finds
 * its debug files (libdwfl's search, bounded); elf_symtab.c makes its
 * symbol table; elf_dwarf.c opens its DWARF our way. Private to those
 * files. */
#ifndef KP_SYMBOLIZE_ELF_OBJECTP_H
#define KP_SYMBOLIZE_ELF_OBJECTP_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/elf_object.h"
#include "symbolize/elf_section.h"
#include "symbolize/symidx.h"

struct kp_debug_image;
struct kp_dwarf_index;
struct kp_fde_start;

/* Whether elf has a section named name with bytes in the file. */
static inline bool kp_elf_object_has_bytes(Elf *elf, const char *name)
{
	GElf_Shdr sh;

	return kp_elf_section(elf, NULL, name, true, &sh) != NULL;
}

struct kp_elf_object {
	int fd; /* until handed to libdw; -1 without a file */
	char *name, *debug_path;
	bool tried;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	GElf_Addr bias;
	struct kp_symidx_seg *segs;
	size_t nsegs;
	struct kp_symidx_sym *syms; /* sorted by address, one per address */
	size_t nsyms;
	char *sym_names; /* what syms[].name are offsets into */
	uint8_t build_id[KP_BUILD_ID_MAX];
	size_t build_id_len;
	struct kp_symidx *idx;	      /* the whole build indexed: answers every lookup */
	struct kp_dwarf_index *dwidx; /* inline scopes, built per CU on demand */
	bool dw_tried;
	Dwarf *dw;	    /* from libdw's module, or ours below */
	Dwarf_Addr dw_bias; /* module address - DWARF address */
	Dwarf *own_dw;	    /* the DWARF opened by us (of the file or its debug file) */
	Elf *own_elf;
	int own_fd;
	struct kp_debug_image *image; /* what own_dw reads, when inflated by us */
	Dwarf *alt_dw;		      /* its dwz file (.gnu_debugaltlink), opened by us */
	Elf *alt_elf;
	int alt_fd;
	struct kp_debug_image *alt_image;
	int file_fd;	    /* the file again, while libdw has it: for own_dw */
	uint64_t file_size; /* its size (st_size) */
	/* The file is one kprof trusts (kp_elf_object_file_trusted): its build's index
	 * may be read and written, and its debug files must be trusted too. */
	bool trusted;
	bool refused_debug;	       /* kp_elf_debuginfo_find refused one: no other */
	bool asked_servers;	       /* its debuginfod lookup was made (once an object) */
	struct kp_elf_object_ctx *ctx; /* for kp_elf_debuginfo_find, while loaded */
	/* Where the file's functions start, from .eh_frame: names the code no
	 * symbol covers (fde_start.h), read on the first such address. */
	struct kp_fde_start *fdes;
	bool fdes_tried;
};

/* Does fd start as an ELF file does? (elf_object.c) */
bool kp_elf_object_has_elf_magic(int fd);

/* libdwfl's find_debuginfo callback for every object of a context: the
 * build-id search, then (only when it may find something) the standard
 * search, debuginfod once an object; a debug file refused when the
 * object is trusted and it is not (elf_debuginfo.c). */
int kp_elf_debuginfo_find(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name);

/* Hides the MiniDebugInfo (.gnu_debugdata) of the object's ELF from
 * libdwfl unless it may be inflated (elf_debuginfo.c). */
void kp_elf_debuginfo_bound_mini(struct kp_elf_object *o, Elf *elf);

/* The separate debug file of the loaded object, opened again and checked:
 * its fd and *path (heap), or -1 (elf_debuginfo.c). */
int kp_elf_debuginfo_open(struct kp_elf_object *o, char **path);

/* Reads the loaded object's function symbols into o->syms and
 * o->sym_names (elf_symtab.c). */
void kp_elf_symtab_read(struct kp_elf_object *o);

/* Says, in one note kept current, that the loaded object is stripped and
 * no debuginfo was found for it (elf_symtab.c). */
void kp_elf_symtab_note_stripped(struct kp_elf_object *o, struct kp_elf_object_ctx *ctx);

/* May the object inflate need bytes of compressed debug sections, from
 * files of size bytes? *budget (may be NULL): what it may take
 * (elf_dwarf.c). */
bool kp_elf_dwarf_admit(struct kp_elf_object *o, uint64_t need, uint64_t size, uint64_t *budget);

/* The DWARF of the loaded object and the bias from DWARF to module
 * addresses; lines: with its line tables (the first call decides). Owned
 * by the object (elf_dwarf.c). */
Dwarf *kp_elf_dwarf_get(struct kp_elf_object *o, Dwarf_Addr *bias, bool lines);

/* The size of the DWARF a full walk reads (.debug_info, inflated). */
uint64_t kp_elf_dwarf_info_size(Dwarf *dw);

#endif
