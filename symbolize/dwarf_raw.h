/* kp_dwraw: a minimal reader of DWARF debugging information entries straight
 * from the section bytes, for what kprof does a lot of: every function and
 * inlined instance of a compilation unit with its address ranges, the unit
 * of an address (.debug_aranges), and the names of the few scopes that end
 * up in a profile (symbolize/dwarf_index.c).
 *
 * Why not libdw for this: dwarf_child/dwarf_siblingof/dwarf_ranges take a
 * rwlock on every call (libdw 0.188) and look abbreviations up in a hash
 * table; dwarf_getaranges and the first dwarf_offdie past a unit make libdw
 * intern every unit before it. On libc's debuginfo that was most of the
 * time of symbolizing a profile. libdw stays the fallback for names this
 * reader does not handle (dwz supplementary files) and in charge of
 * everything else.
 *
 * Scope: DWARF 2 to 5, 32- and 64-bit DWARF, units in .debug_info (type
 * units are skipped), every attribute form of DWARF 5 plus the GNU
 * extensions, .debug_ranges and .debug_rnglists, .debug_addr,
 * .debug_aranges, .debug_str/.debug_line_str/.debug_str_offsets. Every read
 * is checked against the end of its unit or section: bad data is an error
 * (-EINVAL), never a read out of bounds or a loop. Internal to symbolize/. */
#ifndef KP_SYMBOLIZE_DWARF_RAW_H
#define KP_SYMBOLIZE_DWARF_RAW_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The bytes of one section; p NULL when the file has none. */
struct kp_dwraw_sec {
	const uint8_t *p;
	size_t n;
};

struct kp_dwraw_secs {
	struct kp_dwraw_sec info, abbrev, ranges, rnglists, addr, aranges;
	struct kp_dwraw_sec str, line_str, str_offsets;
};

/* The sections of one file, its parsed abbreviation tables (in an arena
 * that lives as long as the reader) and its .debug_aranges index. */
struct kp_dwraw;

/* A reader over elf's DWARF sections (as libdw reads them: use
 * dwarf_getelf). Sections still compressed count as missing, as they do
 * for libdw when it could not inflate them. Returns 0, or -ENOENT when
 * .debug_info or .debug_abbrev is missing. *out is the caller's: free it
 * with kp_dwraw_free; it reads elf's data, which must outlive it. */
int kp_dwraw_open(Elf *elf, struct kp_dwraw **out);

/* A reader over the given bytes (which must outlive it): for tests. */
struct kp_dwraw *kp_dwraw_new(const struct kp_dwraw_secs *secs);
void kp_dwraw_free(struct kp_dwraw *r);

struct kp_dwraw_abbrevs;

/* A unit: its header and what its unit DIE says about addresses. */
struct kp_dwraw_unit {
	const struct kp_dwraw *r;
	struct kp_dwraw_abbrevs *abbrevs; /* in r's cache, parsed as DIEs need */
	uint64_t off;			  /* of the unit header in .debug_info */
	uint64_t end;			  /* end of the unit: the next unit's offset */
	uint64_t die_off;		  /* the unit DIE */
	uint16_t version;
	uint8_t unit_type; /* DW_UT_*; DWARF 2-4 units are DW_UT_compile */
	uint8_t addr_size, offset_size;
	uint64_t base;		   /* base address: DW_AT_low_pc (else entry_pc, else 0) */
	uint64_t addr_base;	   /* into .debug_addr */
	uint64_t rnglists_base;	   /* into .debug_rnglists, for DW_FORM_rnglistx */
	uint64_t str_offsets_base; /* into .debug_str_offsets, for DW_FORM_strx */
	int lang;		   /* DW_AT_language, -1 when absent */
};

/* Reads the unit whose header is at off in .debug_info (parsing its
 * abbreviation table into r's cache the first time). Returns 0; -ENOENT
 * for a type unit (u->end still set, to go on to the next unit); -EINVAL
 * for a header or unit DIE that does not parse (u->end set when the length
 * itself was readable, else 0). */
int kp_dwraw_unit(struct kp_dwraw *r, uint64_t off, struct kp_dwraw_unit *u);

/* The offset of the header of the unit that .debug_aranges says covers
 * addr (the index is read on the first call). Returns 0, or -ENOENT when
 * no entry covers addr (or the file has no .debug_aranges). */
int kp_dwraw_unit_at(struct kp_dwraw *r, uint64_t addr, uint64_t *unit_off);

/* Attributes a DIE may carry that the reader decodes. */
enum {
	KP_DWRAW_LOW_PC = 1 << 0,
	KP_DWRAW_HIGH_PC = 1 << 1,
	KP_DWRAW_RANGES = 1 << 2,
	KP_DWRAW_SIBLING = 1 << 3,
	KP_DWRAW_ENTRY_PC = 1 << 4,
};

struct kp_dwraw_die {
	uint64_t off;	  /* of the DIE in .debug_info */
	uint64_t next;	  /* past its attributes: its first child, or next sibling */
	uint64_t sibling; /* DW_AT_sibling as a .debug_info offset (KP_DWRAW_SIBLING) */
	uint32_t tag;
	bool children;
	unsigned have; /* KP_DWRAW_* */
	/* raw values and their forms, resolved by kp_dwraw_ranges */
	uint64_t low_pc, high_pc, ranges, entry_pc;
	uint16_t low_form, high_form, ranges_form, entry_form;
};

/* Reads the entry at off (within u). Returns 1 for a DIE, 0 for a null
 * entry (the end of a sibling list; die->next is past it, die->tag 0),
 * -EINVAL for bad data. */
int kp_dwraw_die(const struct kp_dwraw_unit *u, uint64_t off, struct kp_dwraw_die *die);

/* Like kp_dwraw_die at off, but DIEs whose tag is not in stop (bit t for
 * tag t < 64) are passed over with their subtrees: the next DIE of the
 * sibling list at off with a tag in stop (1), or the list's end (0), or
 * -EINVAL. The fast way through the types and variables of a unit. */
int kp_dwraw_scan(const struct kp_dwraw_unit *u, uint64_t off, uint64_t stop,
		  struct kp_dwraw_die *die);

/* The offset just past die and all its descendants (its next sibling),
 * through DW_AT_sibling when it points forward inside the unit, else
 * reading the children. Returns 0 or -EINVAL. */
int kp_dwraw_skip(const struct kp_dwraw_unit *u, const struct kp_dwraw_die *die, uint64_t *after);

/* Calls fn for each address range [lo, hi) of die, as libdw's dwarf_ranges
 * gives them (low_pc/high_pc first, else DW_AT_ranges; empty ranges
 * included). Stops when fn returns false. Returns the number of ranges
 * given, or -EINVAL when the data is bad (the ranges before it were given). */
int kp_dwraw_ranges(const struct kp_dwraw_unit *u, const struct kp_dwraw_die *die,
		    bool (*fn)(void *arg, uint64_t lo, uint64_t hi), void *arg);

/* --- names: what kp_dwscope_name reads --- */

/* The offset of the header of the unit holding .debug_info offset off
 * (from a list of unit offsets made on the first call). Returns 0, or
 * -ENOENT when off is past the units that parse. */
int kp_dwraw_unit_of(struct kp_dwraw *r, uint64_t off, uint64_t *unit_off);

enum kp_dwraw_at {
	KP_DWRAW_AT_NAME = 16,
	KP_DWRAW_AT_LINKAGE_NAME,
	KP_DWRAW_AT_MIPS_LINKAGE_NAME,
	KP_DWRAW_AT_ABSTRACT_ORIGIN,
	KP_DWRAW_AT_SPECIFICATION,
};

struct kp_dwraw_attr {
	uint32_t form;	  /* after DW_FORM_indirect */
	uint64_t value;	  /* offset, index or reference as in the DIE */
	const uint8_t *p; /* DW_FORM_string: its first byte */
};

/* Attribute at of the DIE at off (in u), not following any reference.
 * Returns 1 when the DIE has it, 0 when not, -EINVAL for bad data. */
int kp_dwraw_attr(const struct kp_dwraw_unit *u, uint64_t off, enum kp_dwraw_at at,
		  struct kp_dwraw_attr *a);

/* The string a string-class attribute names (inside its section, NUL
 * ended), or NULL with *err -ENOTSUP (in a supplementary file: dwz's
 * alternate debug file) or -EINVAL. */
const char *kp_dwraw_string(const struct kp_dwraw_unit *u, const struct kp_dwraw_attr *a, int *err);

/* The .debug_info offset a reference points to (perhaps in another
 * unit). Returns 0, -ENOTSUP (into a supplementary file) or -EINVAL. */
int kp_dwraw_ref(const struct kp_dwraw_unit *u, const struct kp_dwraw_attr *a, uint64_t *off);

/* The DIEs from the unit DIE down to the DIE at off, both included, into
 * offs[0..max): returns their number, -E2BIG past max, -EINVAL when off is
 * no DIE of u. Siblings are skipped through DW_AT_sibling. */
int kp_dwraw_path(const struct kp_dwraw_unit *u, uint64_t off, uint64_t *offs, size_t max);

#endif
