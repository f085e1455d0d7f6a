/* Code addresses as text, as addr2line takes and writes them (`kprof
 * symbolize`): an address parsed ("7f3a", "0x7f3a"), a stream's read, the
 * ELF file they belong to checked, and each written with its frames. */
#ifndef KP_SYMBOLIZE_ADDR_TEXT_H
#define KP_SYMBOLIZE_ADDR_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "symbolize/symbolize.h"
#include "util/diag.h"

/* Addresses in order; free v. */
struct kp_addrs {
	uint64_t *v;
	size_t n, cap;
};

void kp_addrs_add(struct kp_addrs *a, uint64_t addr);

/* Parses one address ("7f3a", "0x7f3a", surrounded by blanks); false when
 * the text is anything else. */
bool kp_addr_text_parse(const char *s, uint64_t *out);

/* Adds the addresses args[0..n) (each as kp_addr_text_parse takes it) to
 * a. Returns 0, or -EINVAL with "not a hex address: \"ARG\"" (its first
 * 60 bytes) in d. */
int kp_addr_text_args(char *const *args, size_t n, struct kp_addrs *a, struct kp_diag *d);

/* Adds the addresses of in, one a line (blank lines skipped), to a.
 * Returns 0, or -EINVAL with "NAME:LINE: not a hex address: ..." in d. */
int kp_addr_text_read(FILE *in, const char *name, struct kp_addrs *a, struct kp_diag *d);

/* The absolute path of exe, an ELF file of this machine's byte order, as
 * the symbolizer takes a mapping's path (a new string, the caller frees);
 * NULL with why not in d. A FIFO or device is refused without waiting on
 * it. */
char *kp_addr_text_elf_path(const char *exe, struct kp_diag *d);

/* A line per address of a to out: the address, then its frames in object
 * obj of sym outermost first, ';' between them, names and paths escaped;
 * inline frames marked _[i] when annotate, each frame's FILE:LINE when
 * lines. */
void kp_addr_text_write(FILE *out, struct kp_symbolizer *sym, uint32_t obj,
			const struct kp_addrs *a, bool annotate, bool lines);

/* Writes a's addresses named in the ELF file at path (an absolute path,
 * kp_addr_text_elf_path's) by a symbolizer of opts, as kp_addr_text_write
 * does; what the symbolizer noted (debuginfo not found, ...) added to
 * notes. */
struct kp_notes;
void kp_addr_text_symbolize(FILE *out, const char *path, const struct kp_sym_options *opts,
			    const struct kp_addrs *a, bool annotate, bool lines,
			    struct kp_notes *notes);

#endif
