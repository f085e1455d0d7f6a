/* kp_debug_image: the DWARF sections of an ELF file, decompressed, in one
 * private in-memory ELF image for libdw.
 *
 * Why: Debian's debug files (and binaries built with -gz) keep their DWARF
 * compressed. libdw inflates every such section with zlib when it opens the
 * file, line tables and location lists included, which kprof never reads.
 * Here only the sections kprof reads are inflated, with libdeflate (about
 * twice zlib's speed; zstd sections with libzstd), into memory asked for in
 * huge pages (a first touch of a page costs more than inflating it on some
 * virtual machines). Internal to symbolize/. */
#ifndef KP_SYMBOLIZE_DEBUG_IMAGE_H
#define KP_SYMBOLIZE_DEBUG_IMAGE_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>

struct kp_debug_image;

/* Builds the image of elf's DWARF sections, all but the ones named in
 * skip[0..nskip) (e.g. ".debug_line"). Returns an ELF handle over the image
 * (for dwarf_begin_elf), or NULL when the file has no compressed DWARF
 * section (nothing to gain: use the file as it is), is not a 64-bit
 * native-endian executable or shared object, or a section does not inflate
 * to its stated size (corrupt: let libdw judge the file). The handle and
 * its memory belong to *img: free them with kp_debug_image_free, after
 * dwarf_end on what was made from the handle. elf itself is not kept. */
Elf *kp_debug_image_open(Elf *elf, const char *const *skip, size_t nskip,
			 struct kp_debug_image **img);
void kp_debug_image_free(struct kp_debug_image *img);

#endif
