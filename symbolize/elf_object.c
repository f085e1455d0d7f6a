/* One Dwfl per object, holding one module reported at bias 0 (so module
 * addresses are the file's own virtual addresses): objects never share an
 * address space, and a module can be loaded, used and freed on its own.
 * This file opens, loads, indexes and names an object; finding its debug
 * files, its symbol table and its DWARF are elf_debuginfo.c's,
 * elf_symtab.c's and elf_dwarf.c's (elf_objectP.h). */
#include "symbolize/elf_object.h"

#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfs/root.h"
#include "symbolize/debug_image.h"
#include "symbolize/debuginfod.h"
#include "symbolize/demangle.h"
#include "symbolize/dwarf_flat.h"
#include "symbolize/dwarf_index.h"
#include "symbolize/elf_objectP.h"
#include "symbolize/fde_start.h"
#include "util/notes.h"
#include "symbolize/symidx.h"
#include "util/cachefile.h"
#include "util/xalloc.h"

static void libelf_init(void)
{
	static bool done;

	if (!done) {
		elf_version(EV_CURRENT);
		done = true;
	}
}

/* Is fd a memfd (memfd_create)? Its link in /proc/self/fd reads
 * "/memfd:NAME (deleted)", and it takes seals. */
static bool is_memfd(int fd, const struct stat *st)
{
	char target[16];
	ssize_t n;

	if (st->st_nlink != 0 || fcntl(fd, F_GET_SEALS) < 0)
		return false;
	n = kp_root_fd_link(fd, target, sizeof(target));
	return n >= 7 && memcmp(target, "/memfd:", 7) == 0;
}

bool kp_elf_object_file_trusted(int fd)
{
	struct stat st;
	int seals;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != 0 && st.st_uid != geteuid()))
		return false;
	if (!(st.st_mode & (S_IWGRP | S_IWOTH)))
		return true;
	seals = fcntl(fd, F_GET_SEALS);
	if (seals >= 0 && (seals & F_SEAL_WRITE))
		return true;
	/* A memfd is mode 0777 whoever made it, and no path leads to it: only
	 * its holders' descriptors (and /proc/PID/fd of a holder, which takes
	 * the right to trace it) reach it, so its owner says who can write it */
	return is_memfd(fd, &st);
}

/* Does the file start as an ELF file does? libdwfl opens a file packed
 * whole with gzip, bzip2, xz or zstd by inflating all of it, without a
 * bound (debug_image.h): such a file is never handed to it. */
bool kp_elf_object_has_elf_magic(int fd)
{
	unsigned char magic[SELFMAG];

	return pread(fd, magic, SELFMAG, 0) == SELFMAG && memcmp(magic, ELFMAG, SELFMAG) == 0;
}

void kp_elf_object_ctx_init(struct kp_elf_object_ctx *ctx, const char *const *dirs, size_t ndirs,
			    bool no_inline, bool full_names, struct kp_cachedir *cache)
{
	size_t len = sizeof(":.debug:/usr/lib/debug");
	char *p;

	memset(ctx, 0, sizeof(*ctx));
	libelf_init();
	for (size_t i = 0; i < ndirs; i++)
		len += strlen(dirs[i]) + 1;
	ctx->debuginfo_path = kp_xmalloc(len);
	p = stpcpy(ctx->debuginfo_path, ":.debug:/usr/lib/debug");
	for (size_t i = 0; i < ndirs; i++) {
		/* ':' separates path elements; a directory containing one
		 * cannot be expressed, so it is left out */
		if (strchr(dirs[i], ':') || !dirs[i][0])
			continue;
		*p++ = ':';
		p = stpcpy(p, dirs[i]);
	}
	ctx->callbacks.find_elf = dwfl_build_id_find_elf;
	/* build-id under each absolute directory, then .gnu_debuglink next to
	 * the file, in .debug/, under each directory; debuginfod when
	 * DEBUGINFOD_URLS is set. Candidates are checked against the build-id
	 * (or the debuglink CRC when there is none). */
	ctx->callbacks.find_debuginfo = kp_elf_debuginfo_find;
	ctx->callbacks.section_address = dwfl_offline_section_address;
	ctx->callbacks.debuginfo_path = &ctx->debuginfo_path;
	ctx->no_inline = no_inline;
	ctx->full_names = full_names;
	if (cache)
		ctx->symidx_dir = kp_cachedir_sub(cache, "symbols");
}

void kp_elf_object_ctx_fini(struct kp_elf_object_ctx *ctx)
{
	for (int i = 0; i < 3; i++)
		free(ctx->stripped_names[i]);
	for (size_t i = 0; i < ctx->nown; i++)
		free(ctx->own[i]);
	free(ctx->own);
	free(ctx->debuginfo_path);
	ctx->debuginfo_path = NULL;
	kp_cachedir_free(ctx->symidx_dir);
	ctx->symidx_dir = NULL;
	free(ctx->damaged_first);
	ctx->damaged_first = NULL;
	free(ctx->capped_first);
	ctx->capped_first = NULL;
	free(ctx->refused_debug_first);
	ctx->refused_debug_first = NULL;
	kp_debuginfod_free(ctx->debuginfod);
	ctx->debuginfod = NULL;
}

/* Walks the notes in buf[0..len) for the GNU build-id. */
static size_t find_build_id_note(const uint8_t *p, size_t len, uint8_t *buf, size_t cap)
{
	size_t off = 0;

	while (len - off >= 12) {
		uint32_t namesz, descsz, type;
		size_t name_off = off + 12, desc_off, next;

		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		desc_off = name_off + (((size_t)namesz + 3) & ~(size_t)3);
		next = desc_off + (((size_t)descsz + 3) & ~(size_t)3);
		if (namesz > len || descsz > len || desc_off > len || next > len || next <= off)
			return 0;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(p + name_off, "GNU", 4) == 0) {
			if (!descsz || descsz > cap || desc_off + descsz > len)
				return 0;
			memcpy(buf, p + desc_off, descsz);
			return descsz;
		}
		off = next;
	}
	return 0;
}

/* One program header, of either class. */
struct phdr {
	uint32_t type;
	uint64_t off, filesz, vaddr;
};

/* Reads the program headers of the ELF file fd with pread (libelf's
 * ELF_C_READ would read the whole file into memory, and a mmap could
 * SIGBUS on a truncated file). Native byte order only. Returns a new heap
 * array and its length in *n, or NULL when fd is not such an ELF file. */
static struct phdr *read_phdrs(int fd, size_t *n)
{
	unsigned char ident[EI_NIDENT];
	uint64_t phoff;
	size_t phnum, phentsize;
	struct phdr *v;
	bool is64;

	if (pread(fd, ident, sizeof(ident), 0) != (ssize_t)sizeof(ident) ||
	    memcmp(ident, ELFMAG, SELFMAG) != 0)
		return NULL;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (ident[EI_DATA] != ELFDATA2LSB)
		return NULL;
#else
	if (ident[EI_DATA] != ELFDATA2MSB)
		return NULL;
#endif
	is64 = ident[EI_CLASS] == ELFCLASS64;
	if (is64) {
		Elf64_Ehdr eh;

		if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh))
			return NULL;
		phoff = eh.e_phoff;
		phnum = eh.e_phnum;
		phentsize = eh.e_phentsize;
		if (phentsize != sizeof(Elf64_Phdr))
			return NULL;
	} else if (ident[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr eh;

		if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh))
			return NULL;
		phoff = eh.e_phoff;
		phnum = eh.e_phnum;
		phentsize = eh.e_phentsize;
		if (phentsize != sizeof(Elf32_Phdr))
			return NULL;
	} else {
		return NULL;
	}
	if (phnum > 4096)
		return NULL;
	v = kp_xmalloc((phnum ? phnum : 1) * sizeof(*v));
	for (size_t i = 0; i < phnum; i++) {
		if (is64) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), (off_t)(phoff + i * phentsize)) !=
			    (ssize_t)sizeof(ph))
				goto fail;
			v[i] = (struct phdr){ph.p_type, ph.p_offset, ph.p_filesz, ph.p_vaddr};
		} else {
			Elf32_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), (off_t)(phoff + i * phentsize)) !=
			    (ssize_t)sizeof(ph))
				goto fail;
			v[i] = (struct phdr){ph.p_type, ph.p_offset, ph.p_filesz, ph.p_vaddr};
		}
	}
	*n = phnum;
	return v;
fail:
	free(v);
	return NULL;
}

size_t kp_elf_object_read_build_id(int fd, uint8_t *buf, size_t cap)
{
	size_t n = 0, found = 0;
	struct phdr *ph = read_phdrs(fd, &n);

	for (size_t i = 0; ph && i < n && !found; i++) {
		uint8_t *notes;

		if (ph[i].type != PT_NOTE || !ph[i].filesz || ph[i].filesz > (1u << 20))
			continue;
		notes = kp_xmalloc(ph[i].filesz);
		if (pread(fd, notes, ph[i].filesz, (off_t)ph[i].off) == (ssize_t)ph[i].filesz)
			found = find_build_id_note(notes, ph[i].filesz, buf, cap);
		free(notes);
	}
	free(ph);
	return found;
}

bool kp_elf_object_is_elf(int fd)
{
	size_t n = 0;
	struct phdr *ph = read_phdrs(fd, &n);

	free(ph);
	return ph != NULL;
}

struct kp_elf_object *kp_elf_object_new(int fd, const char *name, const char *debug_path,
					const uint8_t *build_id, size_t build_id_len)
{
	struct kp_elf_object *o = kp_xcalloc(1, sizeof(*o));

	o->fd = fd;
	o->own_fd = o->alt_fd = o->file_fd = -1;
	o->name = kp_xstrdup(name);
	o->debug_path = debug_path ? kp_xstrdup(debug_path) : NULL;
	if (build_id_len <= sizeof(o->build_id)) {
		memcpy(o->build_id, build_id, build_id_len);
		o->build_id_len = build_id_len;
	}
	return o;
}

bool kp_elf_object_wants_file(const struct kp_elf_object *o)
{
	return o->fd < 0 && !o->tried;
}

bool kp_elf_object_give_file(struct kp_elf_object *o, int fd, const char *debug_path)
{
	if (!kp_elf_object_wants_file(o))
		return false;
	o->fd = fd;
	free(o->debug_path);
	o->debug_path = debug_path ? kp_xstrdup(debug_path) : NULL;
	return true;
}

int kp_elf_object_fd(const struct kp_elf_object *o)
{
	return o->fd >= 0 ? o->fd : o->file_fd;
}

/* Frees what libdw read for the object and the tables made from it. */
static void unload(struct kp_elf_object *o)
{
	if (o->dwfl)
		dwfl_end(o->dwfl);
	o->dwfl = NULL;
	o->mod = NULL;
	free(o->segs);
	free(o->syms);
	free(o->sym_names);
	o->segs = NULL;
	o->syms = NULL;
	o->sym_names = NULL;
	o->nsegs = o->nsyms = 0;
	kp_dwarf_index_free(o->dwidx);
	o->dwidx = NULL;
	kp_fde_start_free(o->fdes);
	o->fdes = NULL;
	o->fdes_tried = false;
	/* the DWARF before its dwz file (dwarf_setalt leaves that to us) */
	if (o->own_dw)
		dwarf_end(o->own_dw);
	if (o->alt_dw)
		dwarf_end(o->alt_dw);
	kp_debug_image_free(o->image);
	kp_debug_image_free(o->alt_image);
	if (o->own_elf)
		elf_end(o->own_elf);
	if (o->alt_elf)
		elf_end(o->alt_elf);
	if (o->own_fd >= 0)
		close(o->own_fd);
	if (o->alt_fd >= 0)
		close(o->alt_fd);
	if (o->file_fd >= 0)
		close(o->file_fd);
	o->own_dw = o->alt_dw = o->dw = NULL;
	o->image = o->alt_image = NULL;
	o->own_elf = o->alt_elf = NULL;
	o->own_fd = o->alt_fd = o->file_fd = -1;
}

void kp_elf_object_free(struct kp_elf_object *o)
{
	if (!o)
		return;
	unload(o);
	if (o->fd >= 0)
		close(o->fd);
	kp_symidx_free(o->idx);
	free(o->debug_path);
	free(o->name);
	free(o);
}

/* The object cannot be read: its frames are [unknown] (counted; the
 * files that could not be opened are named in notes by objcache.c). */
static bool fail(struct kp_elf_object *o)
{
	unload(o);
	return false;
}

/* Reports the file to a new Dwfl of its own (through a duplicate of
 * file_fd, which libdw takes): its one module, at bias 0. Returns the
 * module's ELF, or NULL. */
static Elf *report(struct kp_elf_object *o, struct kp_elf_object_ctx *ctx)
{
	int fd = fcntl(o->file_fd, F_DUPFD_CLOEXEC, 0);
	void **userdata;
	Elf *elf;

	if (fd < 0)
		return NULL;
	o->dwfl = dwfl_begin(&ctx->callbacks);
	if (!o->dwfl) {
		close(fd);
		return NULL;
	}
	/* its debuginfod client bounded before any lookup can use it */
	kp_debuginfod_bind(ctx->debuginfod, o->dwfl);
	dwfl_report_begin(o->dwfl);
	/* the debuglink search starts in the directory of the file name given
	 * here, so give the path in our namespace rather than a /proc link */
	o->mod = dwfl_report_elf(o->dwfl, o->name, o->debug_path ? o->debug_path : o->name, fd, 0,
				 true);
	if (!o->mod) {
		close(fd);
		return NULL; /* not ELF, or libdw refused it */
	}
	if (dwfl_report_end(o->dwfl, NULL, NULL) != 0)
		return NULL;
	if (dwfl_module_info(o->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL))
		*userdata = o; /* for kp_elf_debuginfo_find */
	elf = dwfl_module_getelf(o->mod, &o->bias);
	/* MiniDebugInfo: libdwfl inflates it (xz) without a bound (156 KB
	 * of another user's program stated a GiB: 12 s and 1 GB of memory);
	 * one that may not be inflated is hidden from it */
	if (elf)
		kp_elf_debuginfo_bound_mini(o, elf);
	return elf;
}

static bool load(struct kp_elf_object *o, struct kp_elf_object_ctx *ctx)
{
	struct stat st;
	size_t phnum;
	Elf *elf;

	o->tried = true;
	if (o->fd < 0)
		return fail(o); /* no file: only an index could name it */
	if (!kp_elf_object_has_elf_magic(o->fd) || fstat(o->fd, &st) != 0)
		return fail(o);
	o->file_size = (uint64_t)st.st_size;
	/* libdw gets a duplicate; ours is kept for the DWARF, which kprof
	 * opens itself (kp_elf_dwarf_get) */
	o->file_fd = o->fd;
	o->fd = -1;
	o->ctx = ctx;
	elf = report(o, ctx);
	if (!elf || elf_getphdrnum(elf, &phnum) != 0)
		return fail(o);
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		if (!ph || ph->p_type != PT_LOAD || !ph->p_filesz)
			continue;
		o->segs = kp_xrealloc(o->segs, (o->nsegs + 1) * sizeof(*o->segs));
		o->segs[o->nsegs++] =
			(struct kp_symidx_seg){ph->p_offset, ph->p_filesz, ph->p_vaddr};
	}
	if (!o->nsegs)
		return fail(o);
	kp_elf_symtab_read(o);
	if (o->refused_debug) {
		/* libdwfl keeps a debug file its search validated (by build-id)
		 * even when kp_elf_debuginfo_find refuses it: start again without one
		 * (kp_elf_debuginfo_find now finds none) */
		free(o->syms);
		free(o->sym_names);
		o->syms = NULL;
		o->sym_names = NULL;
		o->nsyms = 0;
		dwfl_end(o->dwfl);
		o->dwfl = NULL;
		o->mod = NULL;
		if (!report(o, ctx))
			return fail(o);
		kp_elf_symtab_read(o);
	}
	kp_elf_symtab_note_stripped(o, ctx);
	return true;
}

/* A full walk reads DWARF at about 100 MB/s: past this, indexing a build
 * would hold up the end of a run by more than half a second, so such
 * builds are looked up lazily every run instead. */
#define KP_SYMIDX_MAX_DWARF ((uint64_t)64 << 20)

/* Indexes the whole build (symbols and all of its DWARF) and saves the
 * index for later runs; this run's lookups then use it too, so a run that
 * writes an index and one that reads it name every address alike. Only
 * builds with DWARF are indexed: their ELF symbols alone are read in a
 * millisecond or two, and a build indexed without its debuginfo would
 * stay that way after the debuginfo is installed. When: see
 * kp_symidx_seen. */
static void build_index(struct kp_elf_object *o, struct kp_elf_object_ctx *ctx)
{
	Dwarf_Addr dwbias;
	Dwarf *dw = kp_elf_dwarf_get(o, &dwbias, true);
	struct kp_dwarf_flat flat;
	struct kp_symidx_input in = {0};

	if (!o->trusted || !dw || kp_elf_dwarf_info_size(dw) > KP_SYMIDX_MAX_DWARF)
		return;
	if (!o->dwidx)
		o->dwidx = kp_dwarf_index_new();
	kp_dwarf_flat_build(o->dwidx, dw, &flat);
	in.build_id = o->build_id;
	in.build_id_len = o->build_id_len;
	in.bias = o->bias;
	in.dw_bias = dwbias;
	in.segs = o->segs;
	in.nsegs = o->nsegs;
	in.syms = o->syms;
	in.sym_strings = o->sym_names;
	in.nsyms = o->nsyms;
	in.dwarf = &flat;
	o->idx = kp_symidx_build(&in);
	kp_dwarf_flat_fini(&flat);
	if (kp_symidx_save(o->idx, ctx->symidx_dir))
		ctx->nindexes_saved++;
	unload(o);
}

/* Counts a damaged index, in one note kept current. */
static void note_damaged(struct kp_elf_object *o, struct kp_elf_object_ctx *ctx)
{
	if (!ctx->nindexes_damaged++)
		ctx->damaged_first = kp_xstrdup(o->name);
	if (!ctx->notes)
		return;
	if (ctx->nindexes_damaged == 1)
		kp_notes_update(ctx->notes, &ctx->damaged_slot,
				"the symbol index of %s in %s was damaged (its checksum or "
				"contents were wrong): it was ignored and removed, and is rebuilt "
				"from the build's DWARF when that is found",
				ctx->damaged_first, kp_cachedir_path(ctx->symidx_dir));
	else
		kp_notes_update(
			ctx->notes, &ctx->damaged_slot,
			"%u symbol indexes in %s were damaged (their checksums or "
			"contents were wrong; the first: %s's): they were ignored and "
			"removed, and are rebuilt from the builds' DWARF when that is found",
			ctx->nindexes_damaged, kp_cachedir_path(ctx->symidx_dir),
			ctx->damaged_first);
}

/* The index saved by an earlier run, else the file read with libdw (and
 * indexed, when the cache is on and an earlier run needed its DWARF, or
 * when the index it left cannot be used: damaged, or of another format). */
static void open_object(struct kp_elf_object *o, struct kp_elf_object_ctx *ctx)
{
	bool rebuild = false;

	/* A build-id is a claim, not a proof: a file another user could have
	 * written is named from itself alone, and its build's index is
	 * neither read nor written (docs/symbolize.md, "Trust"). An object
	 * without a file has only its index. */
	o->trusted = o->fd >= 0 && kp_elf_object_file_trusted(o->fd);
	if (ctx->symidx_dir && o->build_id_len && (o->fd < 0 || o->trusted)) {
		int err = kp_symidx_load(ctx->symidx_dir, o->build_id, o->build_id_len, &o->idx);

		if (!err) {
			o->tried = true;
			ctx->nindexes_loaded++;
			/* kept for the unwinder's tables (kp_elf_object_fd):
			 * a continuous recording goes on after naming */
			o->file_fd = o->fd;
			o->fd = -1;
			return;
		}
		if (err == -EBADMSG)
			note_damaged(o, ctx);
		rebuild = err == -EBADMSG || err == -ESTALE;
	}
	if (load(o, ctx) && ctx->symidx_dir && o->build_id_len && o->trusted && !ctx->no_inline &&
	    (rebuild || kp_symidx_seen(ctx->symidx_dir, o->build_id, o->build_id_len)))
		build_index(o, ctx);
}

/* Deep enough for any chain walk_die makes (it stops at 512 levels). */
#define KP_MAX_CHAIN 600

/* One address's scopes, innermost first, from the index or from libdw, and
 * its line-table row. */
struct chain {
	size_t n;
	const void *src;
	bool (*inlined)(const void *src, size_t i);
	char *(*name)(const void *src, size_t i, bool full_names); /* heap, or NULL */
	void (*call_site)(const void *src, size_t i, struct kp_dwarf_src *out);
	struct kp_dwarf_src row;
};

/* The frames of one address, by the rule both sources follow: the symbol
 * names the function (as perf does, "foo.cold" included), the outermost
 * scope only when there is no symbol (and it is not an inlined one); then
 * the inlined callees, from the one the function calls down to the
 * innermost. Each frame's source position is the call site of the callee
 * inlined into it, the innermost's the address's row (also under
 * no_inline: the function's own line, where its callee was inlined).
 * Returns false (nothing emitted) when nothing names it. */
static bool emit_frames(const char *sym, const struct chain *c, const struct kp_elf_object_ctx *ctx,
			kp_elf_emit_fn emit, void *arg)
{
	struct kp_elf_frame f = {0};
	char *outer = NULL;
	size_t i = c->n;

	if (sym)
		outer = kp_demangle(sym, ctx->full_names);
	else if (c->n && !c->inlined(c->src, c->n - 1))
		outer = c->name(c->src, c->n - 1, ctx->full_names);
	if (!outer)
		return false;
	/* i: the next inlined scope, outermost first */
	for (f.name = outer; f.name; f.inlined = true) {
		struct kp_dwarf_src src = c->row;
		char *name = NULL;

		while (i-- > 0 && !c->inlined(c->src, i))
			;
		if (i != (size_t)-1 && !ctx->no_lines)
			c->call_site(c->src, i, &src);
		if (!ctx->no_lines) {
			f.dir = src.dir;
			f.file = src.file;
			f.line = src.line;
		}
		emit(arg, &f);
		if (i == (size_t)-1 || ctx->no_inline)
			break;
		name = c->name(c->src, i, ctx->full_names);
		free(outer);
		outer = name;
		f.name = name ? name : "[unknown]";
	}
	free(outer);
	return true;
}

struct index_chain {
	const struct kp_symidx *x;
	uint32_t ids[KP_MAX_CHAIN];
};

static bool index_inlined(const void *src, size_t i)
{
	const struct index_chain *ic = src;

	return kp_symidx_inlined(ic->x, ic->ids[i]);
}

static char *index_name(const void *src, size_t i, bool full_names)
{
	const struct index_chain *ic = src;

	return kp_symidx_scope_name(ic->x, ic->ids[i], full_names);
}

static void index_call_site(const void *src, size_t i, struct kp_dwarf_src *out)
{
	const struct index_chain *ic = src;

	out->dir = NULL;
	out->file = kp_symidx_call_site(ic->x, ic->ids[i], &out->line);
}

/* Names ELF address addr (bias included) from the build's index. */
static bool lookup_index(const struct kp_symidx *x, const struct kp_elf_object_ctx *ctx,
			 uint64_t addr, kp_elf_emit_fn emit, void *arg)
{
	struct index_chain ic = {.x = x};
	struct chain c = {0, &ic, index_inlined, index_name, index_call_site, {0}};
	const char *sym = kp_symidx_symbol(x, addr);

	if (!ctx->no_inline || !sym || !ctx->no_lines) {
		c.n = kp_symidx_chain(x, addr, ic.ids, KP_MAX_CHAIN);
		if (c.n > KP_MAX_CHAIN)
			c.n = KP_MAX_CHAIN;
	}
	if (!ctx->no_lines)
		c.row.file = kp_symidx_line(x, addr, &c.row.line);
	return emit_frames(sym, &c, ctx, emit, arg);
}

static bool dwarf_inlined(const void *src, size_t i)
{
	struct kp_dwarf_scope *const *scopes = src;

	return scopes[i]->inlined;
}

static char *dwarf_name(const void *src, size_t i, bool full_names)
{
	struct kp_dwarf_scope *const *scopes = src;
	const char *n = kp_dwarf_index_scope_name(scopes[i], full_names);

	return n ? kp_xstrdup(n) : NULL;
}

static void dwarf_call_site(const void *src, size_t i, struct kp_dwarf_src *out)
{
	struct kp_dwarf_scope *const *scopes = src;

	kp_dwarf_index_call_site(scopes[i], out);
}

/* The last resort for code no symbol (and no DWARF) names: the start of
 * the function its unwind table covers it with, "MODULE+0xSTART"
 * (fde_start.h). The main file's ELF holds .eh_frame, whether or not a
 * debug file was found. */
static bool lookup_fde(struct kp_elf_object *o, GElf_Addr addr, kp_elf_emit_fn emit, void *arg)
{
	const char *name;

	if (!o->fdes_tried) {
		Elf *elf = dwfl_module_getelf(o->mod, &(GElf_Addr){0});
		char *module = kp_fde_start_module(o->name);

		o->fdes_tried = true;
		o->fdes = kp_fde_start_new(elf, module);
		free(module);
	}
	name = kp_fde_start_name(o->fdes, addr - o->bias);
	if (!name)
		return false;
	emit(arg, &(struct kp_elf_frame){.name = name});
	return true;
}

/* Names ELF address addr (bias included) from the symbols and DWARF
 * read with libdw, else from the unwind table. */
static bool lookup_dwarf(struct kp_elf_object *o, struct kp_elf_object_ctx *ctx, GElf_Addr addr,
			 kp_elf_emit_fn emit, void *arg)
{
	struct kp_dwarf_scope **scopes = NULL;
	struct chain c = {0, NULL, dwarf_inlined, dwarf_name, dwarf_call_site, {0}};
	const struct kp_symidx_sym *fs = kp_symidx_find_symbol(o->syms, o->nsyms, addr);

	if (!ctx->no_inline || !fs || !ctx->no_lines) {
		Dwarf_Addr dwbias;
		Dwarf *dw = kp_elf_dwarf_get(o, &dwbias, !ctx->no_lines);

		if (!o->dwidx) {
			o->dwidx = kp_dwarf_index_new();
			/* the next run that needs this DWARF indexes it */
			if (dw && ctx->symidx_dir && o->build_id_len && o->trusted &&
			    !kp_symidx_seen(ctx->symidx_dir, o->build_id, o->build_id_len))
				kp_symidx_mark_seen(ctx->symidx_dir, o->build_id, o->build_id_len);
		}
		if (dw)
			c.n = kp_dwarf_index_chain(o->dwidx, dw, addr - dwbias, &scopes,
						   ctx->no_lines ? NULL : &c.row);
	}
	c.src = scopes;
	return emit_frames(fs ? o->sym_names + fs->name : NULL, &c, ctx, emit, arg) ||
	       lookup_fde(o, addr, emit, arg);
}

bool kp_elf_object_lookup(struct kp_elf_object *o, struct kp_elf_object_ctx *ctx, uint64_t off,
			  kp_elf_emit_fn emit, void *arg)
{
	uint64_t addr;

	if (!o->tried)
		open_object(o, ctx);
	if (o->idx)
		return kp_symidx_addr(o->idx, off, &addr) &&
		       lookup_index(o->idx, ctx, addr, emit, arg);
	if (!o->mod)
		return false;
	for (size_t i = 0; i < o->nsegs; i++) {
		const struct kp_symidx_seg *seg = &o->segs[i];

		if (off >= seg->off && off - seg->off < seg->filesz)
			return lookup_dwarf(o, ctx, seg->vaddr + (off - seg->off) + o->bias, emit,
					    arg);
	}
	return false;
}

bool kp_elf_object_lookup_vaddr(struct kp_elf_object *o, struct kp_elf_object_ctx *ctx,
				uint64_t vaddr, kp_elf_emit_fn emit, void *arg)
{
	if (!o->tried)
		open_object(o, ctx);
	if (o->idx)
		return lookup_index(o->idx, ctx, vaddr + kp_symidx_bias(o->idx), emit, arg);
	return o->mod && lookup_dwarf(o, ctx, vaddr + o->bias, emit, arg);
}

bool kp_elf_object_unreadable(const struct kp_elf_object *o)
{
	return o->tried && !o->idx && !o->nsegs;
}
