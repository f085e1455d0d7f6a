/* kp_elf_object: one ELF file (executable, shared library, vDSO image) opened
 * while its process lived, symbolized later through libdw: file offset ->
 * ELF address (PT_LOAD), symtab/dynsym symbol (from the file or its
 * separate debuginfo), inline chain from DWARF. Internal to symbolize/. */
#ifndef KP_SYMBOLIZE_ELF_OBJECT_H
#define KP_SYMBOLIZE_ELF_OBJECT_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KP_BUILD_ID_MAX 64

/* Shared by every object of one symbolizer; must outlive them. */
struct kp_notes;
struct kp_cachedir;
struct kp_debuginfod;

struct kp_elf_object_ctx {
	Dwfl_Callbacks callbacks; /* standard find_debuginfo on debuginfo_path */
	char *debuginfo_path;	  /* ":.debug:/usr/lib/debug[:DIR...]" */
	bool no_inline, full_names;
	bool no_lines; /* frames without source file and line: .debug_line is not read */
	struct kp_cachedir
		*symidx_dir; /* where builds' symbol indexes are kept (symidx.h), or NULL */
	unsigned nindexes_loaded, nindexes_saved, nindexes_damaged;
	size_t damaged_slot;	/* the one note about damaged indexes */
	char *damaged_first;	/* the first damaged build's file, for that note */
	struct kp_notes *notes; /* where to say a file has no symbols, may be NULL */
	size_t stripped_slot;	/* the one note about stripped files */
	unsigned nstripped;
	char *stripped_names[3]; /* the first few, for that note */
	char **own;		 /* files left out of that note (kprof's own) */
	size_t nown;
	/* What compressed DWARF the run's objects stated and were let
	 * inflate (debug_image.h), of trusted files and of the others, and
	 * the objects refused for it: one note kept current. */
	uint64_t inflated, inflated_other;
	unsigned ncapped;
	size_t capped_slot;
	char *capped_first;
	/* Debug files refused for a trusted binary (not trusted themselves):
	 * one note kept current. */
	unsigned nrefused_debug;
	size_t refused_debug_slot;
	char *refused_debug_first;
	/* the bounds on debuginfod's downloads, NULL when no server is
	 * configured (DEBUGINFOD_URLS); set by the owner, freed by
	 * kp_elf_object_ctx_fini */
	struct kp_debuginfod *debuginfod;
};

/* cache: kprof's cache directory (symbol indexes go in its symbols/), or
 * NULL to keep none; it must outlive ctx. */
void kp_elf_object_ctx_init(struct kp_elf_object_ctx *ctx, const char *const *dirs, size_t ndirs,
			    bool no_inline, bool full_names, struct kp_cachedir *cache);
void kp_elf_object_ctx_fini(struct kp_elf_object_ctx *ctx);

struct kp_elf_object;

/* Takes ownership of fd (may be -1: no file). name is for messages ("/usr/lib/libc.so.6",
 * "[vdso]"); debug_path is where debuglink lookups start (a path in our
 * namespace, may be NULL); the build-id (may be empty) names the file's
 * symbol index in the cache. Returns a new object; free with
 * kp_elf_object_free. */
struct kp_elf_object *kp_elf_object_new(int fd, const char *name, const char *debug_path,
					const uint8_t *build_id, size_t build_id_len);
void kp_elf_object_free(struct kp_elf_object *o);

/* An object made without a file (fd -1) is named only from its build's
 * saved index, unless it is given its file before its first lookup:
 * kp_elf_object_wants_file says whether it would take one, and
 * kp_elf_object_give_file hands it fd (taking ownership) and the path its
 * debuglink search starts from; false when it takes neither. */
bool kp_elf_object_wants_file(const struct kp_elf_object *o);
bool kp_elf_object_give_file(struct kp_elf_object *o, int fd, const char *debug_path);

/* A descriptor of the object's file, for readers of its other bytes (the
 * unwinder's tables), or -1 without a file; before and after its symbols
 * are read. Still owned by the object. */
int kp_elf_object_fd(const struct kp_elf_object *o);

/* May kprof trust what the file open as fd says about itself: that a
 * build-id names it, that its symbols and DWARF are that build's? Only when
 * no other user could have written it: a regular file owned by root or by
 * kprof's effective user (the owner of its cache directory), writable by
 * neither group nor others (or sealed against writes: F_SEAL_WRITE, as
 * runc seals the memfd it runs from), or a memfd (mode 0777 whoever made
 * it, but reached only through its holders' descriptors). Only a
 * trusted file's build is saved to the cache or named from it, and a
 * trusted binary's debug files must be trusted too (docs/symbolize.md,
 * "Trust"). */
bool kp_elf_object_file_trusted(int fd);

/* Reads the GNU build-id note of the ELF file fd into buf; returns its
 * length, or 0 when there is none or the file is not ELF. */
size_t kp_elf_object_read_build_id(int fd, uint8_t *buf, size_t cap);

/* Whether fd is an ELF file in this machine's byte order. */
bool kp_elf_object_is_elf(int fd);

/* One frame of an address. The strings are only valid during the call. */
struct kp_elf_frame {
	const char *name;
	bool inlined;	  /* an inlined callee */
	const char *dir;  /* the directory file is relative to (DIR/FILE), or NULL */
	const char *file; /* source file, NULL when unknown (or no_lines) */
	uint32_t line;	  /* 0 when unknown */
};

/* Receives each frame, outermost first. The innermost frame's file and
 * line are the line-table row of the address; each outer frame's are the
 * call site of the inlined callee inside it (as addr2line -i prints
 * them). */
typedef void (*kp_elf_emit_fn)(void *arg, const struct kp_elf_frame *f);

/* Names the code at file offset off. Returns true when a symbol was found
 * (frames emitted), false when nothing names it (nothing emitted). On
 * first use, loads the build's symbol index from the cache, else the file,
 * its symbols and its debuginfo (then indexing the build when the cache is
 * on and it has DWARF). */
bool kp_elf_object_lookup(struct kp_elf_object *o, struct kp_elf_object_ctx *ctx, uint64_t off,
			  kp_elf_emit_fn emit, void *arg);

/* Whether the object was tried and nothing could be read of it (no file,
 * not ELF, no loadable segment) and no saved index names it. */
bool kp_elf_object_unreadable(const struct kp_elf_object *o);

/* The same for ELF virtual address vaddr (as addr2line takes them): works
 * for separate debug files too, which have no file offsets for code. */
bool kp_elf_object_lookup_vaddr(struct kp_elf_object *o, struct kp_elf_object_ctx *ctx,
				uint64_t vaddr, kp_elf_emit_fn emit, void *arg);

#endif
