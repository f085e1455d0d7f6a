/* kp_fde_start: where the function covering an address starts, from the
 * unwind table of its ELF object (.eh_frame), for the code its symbol
 * tables do not name: Debian strips .symtab from its programs and
 * libraries, leaving .dynsym's exported functions, but keeps .eh_frame,
 * which has one FDE (frame description entry) per function, the start
 * and length of its code. Such a function is named "MODULE+0xSTART", START
 * its ELF virtual address (what its symbol's st_value would be), so its
 * samples merge into one frame and `addr2line -e FILE START` or a debug
 * package names it later (docs/symbolize.md, "Functions without a
 * symbol").
 *
 * libdw splits the section into its entries (dwarf_next_cfi: lengths, CIE
 * pointers, augmentation strings, all checked against the section); kprof
 * reads each FDE's two pointers with its CIE's encoding. libdw's frame
 * calls (dwarf_cfi_addrframe, dwarf_frame_info) give the row of the CFA
 * program at an address, not its FDE's range, and run that program, whose
 * cost a damaged file can inflate; this reads each entry once. Internal to
 * symbolize/. */
#ifndef KP_SYMBOLIZE_FDE_START_H
#define KP_SYMBOLIZE_FDE_START_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

struct kp_fde_start;

/* Reads the .eh_frame of elf once: every FDE whose range lies inside one
 * executable PT_LOAD segment, sorted (overlapping ones dropped). module
 * prefixes the names (copied). Returns NULL when there is none (no
 * .eh_frame, damaged from its start, nothing in executable code); elf is
 * not kept. Time and memory are linear in the section's size. */
struct kp_fde_start *kp_fde_start_new(Elf *elf, const char *module);
void kp_fde_start_free(struct kp_fde_start *f);

/* The FDE covering ELF address vaddr: true and its [start, end). f may be
 * NULL (then false). */
bool kp_fde_start_find(const struct kp_fde_start *f, uint64_t vaddr, uint64_t *start,
		       uint64_t *end);

/* "MODULE+0xSTART" of the FDE covering vaddr, or NULL when none covers
 * it (f may be NULL). Made once per FDE; owned by f. */
const char *kp_fde_start_name(struct kp_fde_start *f, uint64_t vaddr);

/* The MODULE of an object's path: its last component, without the
 * " (deleted)" the kernel adds to a removed file. Returns a new string
 * (free it). */
char *kp_fde_start_module(const char *path);

#endif
