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
#include <stdint.h>

struct kp_debug_image;

/* What one object's DWARF may inflate to, whoever inflates it (kprof's
 * image or libdw): a compressed section states its inflated size (the
 * gABI Chdr's ch_size, the 8 bytes after .zdebug's "ZLIB"), and a
 * zlib or zstd stream can be made to claim anything: 4 GiB of zeros in a
 * 150 KB program cost a run 68 s and 4.1 GB. So the stated sizes are
 * summed before anything is allocated, and an object whose sum is over
 * its limit gets no DWARF at all (its symbol table still names it):
 *   limit = min(max(KP_INFLATE_FLOOR, KP_INFLATE_RATIO x the size of the
 *           files holding the sections), KP_INFLATE_MAX)
 * Debian's debug files inflate to 1.3 times their size (median of
 * libc6-dbg's 273), 13 at most (a dwz'd one whose .debug_abbrev states
 * 83 times its compressed bytes); the floor leaves any file its first
 * 16 MiB (about 0.5 s of libdw's time if it is garbage). A run's objects
 * together get at most KP_INFLATE_RUN (KP_INFLATE_RUN_OTHER for files
 * kprof does not trust, elf_object.h): docs/symbolize.md. */
#define KP_INFLATE_FLOOR     ((uint64_t)16 << 20)
#define KP_INFLATE_RATIO     32
#define KP_INFLATE_MAX	     ((uint64_t)1 << 30)
#define KP_INFLATE_RUN	     ((uint64_t)4 << 30)
#define KP_INFLATE_RUN_OTHER ((uint64_t)256 << 20)

/* The limit of an object whose compressed sections are in files of
 * file_size bytes together. */
uint64_t kp_debug_image_inflate_limit(uint64_t file_size);

/* The sum of the inflated sizes that elf's compressed DWARF sections
 * (.debug_* with SHF_COMPRESSED, .zdebug_*), all but those named in
 * skip[0..nskip), state: what inflating them would allocate, read from
 * their headers alone (saturating; a header too short to hold a size
 * counts as nothing, since no one can inflate it). Either ELF class. */
uint64_t kp_debug_image_stated(Elf *elf, const char *const *skip, size_t nskip);

/* Builds the image of elf's DWARF sections, all but the ones named in
 * skip[0..nskip) (e.g. ".debug_line"). Returns an ELF handle over the image
 * (for dwarf_begin_elf), or NULL when the file has no compressed DWARF
 * section (nothing to gain: use the file as it is), is not a 64-bit
 * native-endian executable or shared object, or a section does not inflate
 * to its stated size (corrupt: let libdw judge the file). The handle and
 * its memory belong to *img: free them with kp_debug_image_free, after
 * dwarf_end on what was made from the handle. elf itself is not kept.
 * At most 4 GiB is inflated. */
Elf *kp_debug_image_open(Elf *elf, const char *const *skip, size_t nskip,
			 struct kp_debug_image **img);

/* The same, with at most limit bytes of sections in the image (inflated
 * or copied: a hostile file's section headers may all cover the same
 * bytes): when the kept sections state more, NULL before anything is
 * allocated. No decompressor is ever given more room than its section
 * states, so what is inflated stays within limit whatever the streams
 * hold. */
Elf *kp_debug_image_open_limit(Elf *elf, const char *const *skip, size_t nskip, uint64_t limit,
			       struct kp_debug_image **img);
void kp_debug_image_free(struct kp_debug_image *img);

#endif
