/* kp_symidx: everything kprof needs to name the code of one ELF build,
 * flattened into one block that is written to the cache directory under
 * its build-id and mapped back by later runs, so a binary's ELF symbols and
 * DWARF are read and walked once per machine instead of once per run (the
 * idea of Breakpad's .sym files and perf's build-id cache, in a form that
 * needs no parsing).
 *
 * It holds the PT_LOAD segments (file offset -> ELF address), the function
 * symbols kprof picked (one per address, sorted), the whole DWARF inline
 * tree of the build as sorted disjoint address pieces each naming its
 * innermost scope, scopes pointing to their parents and knowing their
 * call sites, and the line tables of every unit merged into one, delta
 * coded in blocks (source files as a string table). Names are stored raw
 * (linkage name and plain name) and demangled at lookup, so one file
 * serves --full-names, --no-inline and runs with or without source lines
 * alike.
 *
 * The file is trusted input only in part: it lives in kprof's private
 * directory (util/cachefile.h), but may be truncated or damaged. So its
 * header carries a checksum of everything after it (util/checksum.h),
 * verified each time it is mapped (tens of microseconds for libc's), and
 * every count, offset, order and parent link is checked too; a file that
 * fails any check is never used to name anything: it is removed, and the
 * build is read again and indexed anew. Internal to symbolize/. */
#ifndef KP_SYMBOLIZE_SYMIDX_H
#define KP_SYMBOLIZE_SYMIDX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/dwarf_flat.h"
#include "util/cachefile.h"

struct kp_symidx_seg {
	uint64_t off, filesz, vaddr;
};

/* A function symbol: [addr, addr + size), or for a sizeless one up to the
 * next symbol but not past limit (the end of its section). name is an
 * offset in the index's strings. */
struct kp_symidx_sym {
	uint64_t addr, size, limit;
	uint32_t name;
	uint32_t reserved;
};

struct kp_symidx_input {
	const uint8_t *build_id;
	size_t build_id_len;
	uint64_t bias;	  /* ELF address = vaddr of the segment + bias */
	uint64_t dw_bias; /* DWARF address = ELF address - dw_bias */
	const struct kp_symidx_seg *segs;
	size_t nsegs;
	const struct kp_symidx_sym *syms; /* sorted by addr, distinct addrs */
	const char *sym_strings;	  /* what their name offsets point into */
	size_t nsyms;
	const struct kp_dwarf_flat *dwarf; /* the whole DWARF flattened, or NULL */
};

struct kp_symidx;

/* A new index made of in, the strings copied (never NULL). Free with
 * kp_symidx_free. */
struct kp_symidx *kp_symidx_build(const struct kp_symidx_input *in);

/* The index of the build in dir: 0 and *out (free with kp_symidx_free),
 * else *out NULL and -ENOENT (none there, or one not to be trusted: a
 * link, another user's, writable by others), -ESTALE (another format
 * version) or -EBADMSG (damaged: its checksum, size, build-id or contents
 * wrong). A stale or damaged file is removed. */
int kp_symidx_load(struct kp_cachedir *dir, const uint8_t *build_id, size_t len,
		   struct kp_symidx **out);

/* Writes idx to dir (made if missing) under its build-id, replacing any
 * older file. Returns false when it could not. */
bool kp_symidx_save(const struct kp_symidx *idx, struct kp_cachedir *dir);

void kp_symidx_free(struct kp_symidx *idx);

/* A build is indexed the second time kprof needs its DWARF, not the first:
 * a full walk costs about twice what one run's lookups do, which only
 * pays back for builds that are profiled again (system libraries, a
 * program measured run after run), not for each new build of a program
 * under development. The first run leaves a marker, dir/HEX.seen (removed
 * when the index is saved, or after 30 days unused). */
bool kp_symidx_seen(struct kp_cachedir *dir, const uint8_t *build_id, size_t len);
void kp_symidx_mark_seen(struct kp_cachedir *dir, const uint8_t *build_id, size_t len);

/* What ELF addresses add to the file's virtual addresses (0 but for
 * prelinked files). */
uint64_t kp_symidx_bias(const struct kp_symidx *idx);

/* The ELF address of file offset off; false outside the loaded segments. */
bool kp_symidx_addr(const struct kp_symidx *idx, uint64_t off, uint64_t *addr);

/* The symbol containing ELF address addr, or NULL (owned by idx). */
const char *kp_symidx_symbol(const struct kp_symidx *idx, uint64_t addr);

/* The scopes containing ELF address addr, innermost first, ending with the
 * function holding the inlined ones: fills up to cap scope ids and returns
 * how many there are (0 when no DWARF describes addr). */
size_t kp_symidx_chain(const struct kp_symidx *idx, uint64_t addr, uint32_t *chain, size_t cap);

bool kp_symidx_inlined(const struct kp_symidx *idx, uint32_t scope);

/* The call site of an inlined scope (where its caller inlined it): its
 * file (owned by idx, NULL when unknown) and *line (0 when unknown). */
const char *kp_symidx_call_site(const struct kp_symidx *idx, uint32_t scope, uint32_t *line);

/* The line-table row of ELF address addr, as reading the build's DWARF
 * gives it (kp_dwarf_index_chain): its file (owned by idx, NULL when no row
 * covers addr) and *line (0 when unknown, also for a line-0 row). */
const char *kp_symidx_line(const struct kp_symidx *idx, uint64_t addr, uint32_t *line);

/* The display name of a scope as kp_dwarf_index_scope_name makes it, as a new heap
 * string, or NULL when it has none. */
char *kp_symidx_scope_name(const struct kp_symidx *idx, uint32_t scope, bool full_names);

/* The size of the block, for the tests and the stats. */
size_t kp_symidx_size(const struct kp_symidx *idx);

/* The symbol among syms[0..n) containing addr, or NULL: a sized symbol
 * covering it (looking back past smaller symbols nested in a bigger one),
 * else a sizeless symbol reaching to the next one within its section.
 * Shared with elf_object.c, which builds the same table. */
const struct kp_symidx_sym *kp_symidx_find_symbol(const struct kp_symidx_sym *syms, size_t n,
						  uint64_t addr);

#endif
