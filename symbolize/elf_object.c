/* One Dwfl per object, holding one module reported at bias 0 (so module
 * addresses are the file's own virtual addresses): objects never share an
 * address space, and a module can be loaded, used and freed on its own. */
#include "symbolize/elf_object.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfs/root.h"
#include "symbolize/debug_image.h"
#include "symbolize/debuginfod.h"
#include "symbolize/demangle.h"
#include "symbolize/dwarf_index.h"
#include "symbolize/elf_section.h"
#include "symbolize/fde_start.h"
#include "util/notes.h"
#include "symbolize/symidx.h"
#include "util/cachefile.h"
#include "util/xalloc.h"
#include "util/search.h"

/* A function symbol while the table is made; the name points into libdw's
 * copy of the file. */
struct fsym {
	GElf_Addr addr, size;
	GElf_Addr limit; /* sizeless symbols: end of their section */
	const char *name;
	uint8_t rank; /* lower is better among aliases */
};

/* Whether elf has a section named name with bytes in the file. */
static bool has_bytes(Elf *elf, const char *name)
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
	bool refused_debug;	       /* find_debuginfo refused a debug file: no other */
	bool asked_servers;	       /* its debuginfod lookup was made (once an object) */
	struct kp_elf_object_ctx *ctx; /* for find_debuginfo, while loaded */
	/* Where the file's functions start, from .eh_frame: names the code no
	 * symbol covers (fde_start.h), read on the first such address. */
	struct kp_fde_start *fdes;
	bool fdes_tried;
};

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
static bool has_elf_magic(int fd)
{
	unsigned char magic[SELFMAG];

	return pread(fd, magic, SELFMAG, 0) == SELFMAG && memcmp(magic, ELFMAG, SELFMAG) == 0;
}

static void note_refused_debug(struct kp_elf_object *o, const char *path, int fd);
static bool admit(struct kp_elf_object *o, uint64_t need, uint64_t size, uint64_t *budget);

/* One LEB128-like xz number of p[*at..n), false past the end or 63 bits. */
static bool xz_number(const uint8_t *p, size_t n, size_t *at, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 63 && *at < n; shift += 7) {
		uint8_t b = p[(*at)++];

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* What the xz stream p[0..n) says it inflates to (its index: one stream,
 * stream padding allowed), or UINT64_MAX when it is not one such stream. */
static uint64_t xz_stated(const uint8_t *p, size_t n)
{
	static const uint8_t magic[6] = {0xfd, '7', 'z', 'X', 'Z', 0};
	uint64_t records, sum = 0, blocks = 0, back;
	size_t at, index_at;
	uint32_t v;

	while (n >= 4 && !memcmp(p + n - 4, "\0\0\0\0", 4))
		n -= 4; /* stream padding */
	if (n < 24 || memcmp(p, magic, 6) != 0 || memcmp(p + n - 2, "YZ", 2) != 0)
		return UINT64_MAX;
	memcpy(&v, p + n - 8, 4); /* backward size, little-endian */
	back = ((uint64_t)le32toh(v) + 1) * 4;
	if (back > n - 24)
		return UINT64_MAX;
	index_at = n - 12 - (size_t)back;
	at = index_at;
	if (p[at++] != 0 || !xz_number(p, n - 12, &at, &records) || records > n)
		return UINT64_MAX;
	for (uint64_t i = 0; i < records; i++) {
		uint64_t unpadded, size;

		if (!xz_number(p, n - 12, &at, &unpadded) || !xz_number(p, n - 12, &at, &size) ||
		    unpadded > n)
			return UINT64_MAX;
		blocks += (unpadded + 3) & ~(uint64_t)3;
		sum = size > UINT64_MAX - 1 - sum ? UINT64_MAX - 1 : sum + size;
	}
	/* the blocks must fill the stream between its header and its index */
	return 12 + blocks == index_at ? sum : UINT64_MAX;
}

/* May libdwfl inflate the MiniDebugInfo (.gnu_debugdata, xz) of the
 * object's file? libdwfl decodes it without a bound, so only a trusted
 * file's, and only when its xz index states no more than the object may
 * inflate (an index that lies is found out only after decoding: a
 * trusted file is root's or the user's own). */
static bool minidebuginfo_fits(struct kp_elf_object *o, Elf *elf)
{
	GElf_Shdr sh;
	Elf_Scn *scn = kp_elf_section(elf, NULL, ".gnu_debugdata", false, &sh);
	Elf_Data *raw;
	uint64_t need;

	if (!scn)
		return true;
	if (!o->trusted || !(raw = elf_rawdata(scn, NULL)) || !raw->d_buf)
		return false;
	need = xz_stated(raw->d_buf, raw->d_size);
	return need != UINT64_MAX && admit(o, need, o->file_size, NULL);
}

/* Renames section want of elf (in libelf's copy of the headers, never in
 * the file) to "", so libdw does not find it. */
static void hide_section_name(Elf *elf, const char *want)
{
	GElf_Shdr sh;
	Elf_Scn *scn = NULL;

	while ((scn = kp_elf_section(elf, scn, want, false, &sh))) {
		sh.sh_name += (GElf_Word)strlen(want); /* its own NUL */
		gelf_update_shdr(scn, &sh);
	}
}

/* Could dwfl_standard_find_debuginfo's search by name find anything? A
 * superset of the places it looks (libdwfl's find_debuginfo_in_path): the
 * debuglink name (FILE.debug without one) next to the file, in its .debug/
 * folder, and under each absolute directory of the path, with and without
 * the file's own folder; an absolute debuglink as it is. Only a filter: the
 * search itself, and the checks of what it finds, stay libdwfl's. */
/* Does the path made by the format exist? */
__attribute__((format(printf, 1, 2))) static bool path_exists(const char *fmt, ...)
{
	char cand[PATH_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(cand, sizeof(cand), fmt, ap);
	va_end(ap);
	return n > 0 && (size_t)n < sizeof(cand) && access(cand, F_OK) == 0;
}

static bool candidate_in_dir(const char *path, const char *dir, const char *name)
{
	const char *p = path;

	for (;;) {
		size_t len = strcspn(p, ":");
		const char *entry = p;

		/* "+" and "-" prefixes only say how to check a candidate */
		if (len && (*entry == '+' || *entry == '-')) {
			entry++;
			len--;
		}
		if (len == 0) {
			if (path_exists("%s/%s", dir, name))
				return true;
		} else if (entry[0] != '/') {
			if (path_exists("%s/%.*s/%s", dir, (int)len, entry, name))
				return true;
		} else if (path_exists("%.*s%s/%s", (int)len, entry, dir, name) ||
			   path_exists("%.*s/%s", (int)len, entry, name)) {
			return true;
		}
		p = entry + len;
		if (*p != ':')
			return false;
		p++;
	}
}

static bool debuglink_candidate_exists(const char *path, const char *file_name,
				       const char *debuglink)
{
	const char *slash = file_name ? strrchr(file_name, '/') : NULL;
	char name[NAME_MAX + 1], dir[PATH_MAX], *real, *cut;
	bool found;
	int n;

	if (!slash)
		return false;
	if (debuglink && debuglink[0] == '/')
		return access(debuglink, F_OK) == 0;
	n = debuglink ? snprintf(name, sizeof(name), "%s", debuglink)
		      : snprintf(name, sizeof(name), "%s.debug", slash + 1);
	if (n <= 0 || (size_t)n >= sizeof(name))
		return false;
	n = snprintf(dir, sizeof(dir), "%.*s", (int)(slash - file_name), file_name);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return false;
	if (candidate_in_dir(path, dir, name))
		return true;
	/* the folder of the file the name leads to, symbolic links resolved */
	real = realpath(file_name, NULL);
	cut = real ? strrchr(real, '/') : NULL;
	if (cut)
		*cut = '\0';
	found = cut && strcmp(real, dir) != 0 && candidate_in_dir(path, real, name);
	free(real);
	return found;
}

/* dwfl_standard_find_debuginfo, which asks the debuginfod servers last
 * (when DEBUGINFOD_URLS names any): its downloads bounded and counted
 * (debuginfod.h), and made only when may. */
static int standard_search(struct kp_elf_object *o, bool may, Dwfl_Module *mod, void **userdata,
			   const char *modname, GElf_Addr base, const char *file_name,
			   const char *debuglink_file, GElf_Word debuglink_crc,
			   char **debuginfo_file_name)
{
	struct kp_debuginfod *dl = o && o->ctx ? o->ctx->debuginfod : NULL;
	const unsigned char *id = NULL;
	GElf_Addr vaddr;
	int len, fd;

	kp_debuginfod_begin(dl, may);
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	len = dl ? dwfl_module_build_id(mod, &id, &vaddr) : 0;
	kp_debuginfod_end(dl, o ? o->dwfl : NULL, id, len > 0 ? (size_t)len : 0, fd);
	return fd;
}

/* dwfl_standard_find_debuginfo asks debuginfod last, once an object: a
 * lookup that may download (debuginfod.h). Otherwise only the local
 * search: when its local search fails libdwfl dlopens libdebuginfod
 * (libcurl and some thirty libraries, 20-30 ms) even when DEBUGINFOD_URLS
 * is unset, and most stripped binaries on a machine (every one whose debug
 * package is not installed) fail it. So the standard search runs only when
 * the build-id lookup failed and a file its search by name could find
 * exists. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	/* load() leaves the object in the module's userdata */
	struct kp_elf_object *o = userdata ? *userdata : NULL;
	const struct kp_elf_object_ctx *ctx = o ? o->ctx : NULL;
	int fd;

	if (o && o->refused_debug)
		return -1; /* one was refused: none (load) */

	if (!ctx) {
		fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						  debuglink_file, debuglink_crc,
						  debuginfo_file_name);
	} else if (!o->asked_servers && kp_debuginfod_may(ctx->debuginfod)) {
		o->asked_servers = true;
		fd = standard_search(o, true, mod, userdata, modname, base, file_name,
				     debuglink_file, debuglink_crc, debuginfo_file_name);
	} else {
		fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name,
						  debuglink_file, debuglink_crc,
						  debuginfo_file_name);
		if (fd < 0 &&
		    debuglink_candidate_exists(ctx->debuginfo_path, file_name, debuglink_file))
			fd = standard_search(o, false, mod, userdata, modname, base, file_name,
					     debuglink_file, debuglink_crc, debuginfo_file_name);
	}
	/* a file packed whole is never given to libdwfl; a trusted binary
	 * takes only a trusted debug file (its names would be another
	 * user's, and saved in its build's index) */
	if (fd >= 0 && o &&
	    (!has_elf_magic(fd) || (o->trusted && !kp_elf_object_file_trusted(fd)))) {
		if (has_elf_magic(fd))
			note_refused_debug(o, *debuginfo_file_name, fd);
		o->refused_debug = true;
		close(fd);
		free(*debuginfo_file_name);
		*debuginfo_file_name = NULL;
		fd = -1;
	}
	return fd;
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
	ctx->callbacks.find_debuginfo = find_debuginfo;
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

/* perf's preference among symbols at one address: functions over untyped
 * labels, global over weak over local, then the longer name (a deliberate
 * public name rather than a terse internal alias). */
static uint8_t sym_rank(const GElf_Sym *s)
{
	uint8_t r = GELF_ST_TYPE(s->st_info) == STT_NOTYPE ? 4 : 0;
	int bind = GELF_ST_BIND(s->st_info);

	if (bind == STB_WEAK)
		r += 1;
	else if (bind != STB_GLOBAL)
		r += 2;
	return r;
}

static int fsym_cmp(const void *pa, const void *pb)
{
	const struct fsym *a = pa, *b = pb;
	size_t la, lb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	la = strlen(a->name);
	lb = strlen(b->name);
	if (la != lb)
		return la > lb ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* dwfl_module_addrinfo scans the whole symbol table on every call (elfutils
 * 0.188); a sorted copy of the function symbols makes a lookup a binary
 * search. The table is the one libdw picked: .symtab of the file or of its
 * debuginfo, else .dynsym (plus .gnu_debugdata). */
struct fsyms {
	struct fsym *v;
	size_t n, cap;
	char **plt_names; /* "name@plt" strings made for PLT entries */
	size_t nplt;
};

static void add_fsym(struct fsyms *t, struct fsym s)
{
	kp_xgrow(&t->v, &t->cap, t->n + 1, sizeof(*t->v));
	t->v[t->n++] = s;
}

/* PLT stubs have no symbols: name them "callee@plt" as perf does, from the
 * PLT relocations in order (.plt.sec when the binary has IBT stubs, else
 * .plt after its header entry). x86-64, i386 and AArch64 layouts. */
static void add_plt_symbols(struct kp_elf_object *o, struct fsyms *t)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(o->mod, &bias);
	GElf_Ehdr eh;
	GElf_Shdr plt, sec, rel, dsym;
	Elf_Scn *pltscn, *secscn, *relscn, *symscn;
	Elf_Data *reldata, *symdata;
	size_t shstrndx, header, ent, nrel;
	GElf_Addr base, end;
	bool rela = true;

	if (!elf || !gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	switch (eh.e_machine) {
	case EM_X86_64:
	case EM_386:
		header = 16;
		break;
	case EM_AARCH64:
		header = 32;
		break;
	default:
		return;
	}
	ent = 16;
	pltscn = kp_elf_section(elf, NULL, ".plt", true, &plt);
	secscn = kp_elf_section(elf, NULL, ".plt.sec", true, &sec);
	relscn = kp_elf_section(elf, NULL, ".rela.plt", true, &rel);
	if (!relscn) {
		relscn = kp_elf_section(elf, NULL, ".rel.plt", true, &rel);
		rela = false;
	}
	if (!relscn || (!pltscn && !secscn) || !rel.sh_entsize)
		return;
	if (secscn) {
		base = sec.sh_addr;
		end = sec.sh_addr + sec.sh_size;
	} else {
		base = plt.sh_addr + header;
		end = plt.sh_addr + plt.sh_size;
	}
	symscn = elf_getscn(elf, rel.sh_link);
	reldata = elf_getdata(relscn, NULL);
	symdata = symscn ? elf_getdata(symscn, NULL) : NULL;
	if (!reldata || !symdata || !gelf_getshdr(symscn, &dsym))
		return;
	nrel = rel.sh_size / rel.sh_entsize;
	for (size_t i = 0; i < nrel && base + (i + 1) * ent <= end; i++) {
		GElf_Rela ra;
		GElf_Rel r;
		GElf_Sym sym;
		uint64_t info;
		const char *name;

		if (rela ? !gelf_getrela(reldata, (int)i, &ra) : !gelf_getrel(reldata, (int)i, &r))
			break;
		info = rela ? ra.r_info : r.r_info;
		if (!(eh.e_ident[EI_CLASS] == ELFCLASS64 ? GELF_R_SYM(info) : ELF32_R_SYM(info)))
			continue; /* IRELATIVE: no symbol */
		if (!gelf_getsym(symdata,
				 (int)(eh.e_ident[EI_CLASS] == ELFCLASS64 ? GELF_R_SYM(info)
									  : ELF32_R_SYM(info)),
				 &sym))
			continue;
		name = elf_strptr(elf, dsym.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		t->plt_names = kp_xrealloc(t->plt_names, (t->nplt + 1) * sizeof(*t->plt_names));
		t->plt_names[t->nplt] = kp_xasprintf("%s@plt", name);
		add_fsym(t, (struct fsym){base + i * ent + bias, ent, 0, t->plt_names[t->nplt], 0});
		t->nplt++;
	}
}

/* The function symbols, sorted, the best alias kept per address, their
 * names copied into o->sym_names (so the table can go into an index). */
static void index_symbols(struct kp_elf_object *o)
{
	int n = dwfl_module_getsymtab(o->mod);
	struct fsyms t = {0};
	size_t k = 0, len = 0, cap = 0;

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr, limit = 0, symbias = 0;
		GElf_Word shndx;
		Elf *symelf = NULL;
		const char *name =
			dwfl_module_getsym_info(o->mod, i, &sym, &addr, &shndx, &symelf, &symbias);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name || !*name || shndx == SHN_UNDEF || shndx == SHN_ABS || !addr)
			continue;
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		if (type == STT_NOTYPE && name[0] == '$')
			continue; /* ARM mapping symbols */
		if (!sym.st_size) {
			/* a sizeless symbol (crti's _init) reaches no further than
			 * its section: not into .plt after .init */
			GElf_Shdr mem,
				*sh = symelf ? gelf_getshdr(elf_getscn(symelf, shndx), &mem) : NULL;

			limit = sh ? sh->sh_addr + sh->sh_size + symbias : addr + 1;
		}
		add_fsym(&t, (struct fsym){addr, sym.st_size, limit, name, sym_rank(&sym)});
	}
	add_plt_symbols(o, &t);
	if (t.n) {
		qsort(t.v, t.n, sizeof(*t.v), fsym_cmp);
		/* keep the best alias per address */
		for (size_t i = 1; i < t.n; i++) {
			if (t.v[i].addr != t.v[k].addr)
				t.v[++k] = t.v[i];
		}
		t.n = k + 1;
	}
	o->syms = kp_xmalloc((t.n ? t.n : 1) * sizeof(*o->syms));
	for (size_t i = 0; i < t.n; i++) {
		size_t l = strlen(t.v[i].name) + 1;

		kp_xgrow(&o->sym_names, &cap, len + l, 1);
		memcpy(o->sym_names + len, t.v[i].name, l);
		o->syms[i] = (struct kp_symidx_sym){.addr = t.v[i].addr,
						    .size = t.v[i].size,
						    .limit = t.v[i].limit,
						    .name = (uint32_t)len};
		len += l;
	}
	o->nsyms = t.n;
	for (size_t i = 0; i < t.nplt; i++)
		free(t.plt_names[i]);
	free(t.plt_names);
	free(t.v);
}

/* A stripped file whose debuginfo was not found names only its exported
 * functions: say so (one note, kept current), since its other frames are
 * named by where they start (lookup_fde), or [unknown]. */
static void note_if_stripped(struct kp_elf_object *o, struct kp_elf_object_ctx *ctx)
{
	const char *debugfile = NULL;
	Elf *elf = dwfl_module_getelf(o->mod, &(GElf_Addr){0});
	char list[1024];
	size_t len = 0, shown = 0;

	if (!ctx->notes || !elf || has_bytes(elf, ".symtab") || o->name[0] == '[')
		return;
	dwfl_module_info(o->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	if (debugfile)
		return;
	for (size_t i = 0; i < ctx->nown; i++)
		if (strcmp(ctx->own[i], o->name) == 0)
			return;
	if (ctx->nstripped < 3)
		ctx->stripped_names[ctx->nstripped] = kp_xstrdup(o->name);
	ctx->nstripped++;
	list[0] = '\0';
	for (; shown < 3 && shown < ctx->nstripped; shown++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", shown ? ", " : "",
					ctx->stripped_names[shown]);
	if (ctx->nstripped == 1)
		kp_notes_update(ctx->notes, &ctx->stripped_slot,
				"%s is stripped and no debuginfo was found for it (by build-id, "
				".gnu_debuglink, --debuginfo-dir, debuginfod): only its exported "
				"functions are named, the others by where they start (NAME+0xADDR, "
				"for addr2line or its debug package)",
				list);
	else
		kp_notes_update(ctx->notes, &ctx->stripped_slot,
				"%u stripped binaries have no debuginfo (%s%s): only their "
				"exported functions are named, the others by where they start "
				"(NAME+0xADDR); install their debug packages or use "
				"--debuginfo-dir",
				ctx->nstripped, list, ctx->nstripped > 3 ? ", ..." : "");
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
		*userdata = o; /* for find_debuginfo */
	elf = dwfl_module_getelf(o->mod, &o->bias);
	/* MiniDebugInfo: libdwfl inflates it (xz) without a bound (156 KB
	 * of another user's program stated a GiB: 12 s and 1 GB of memory);
	 * one that may not be inflated is hidden from it */
	if (elf && !minidebuginfo_fits(o, elf))
		hide_section_name(elf, ".gnu_debugdata");
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
	if (!has_elf_magic(o->fd) || fstat(o->fd, &st) != 0)
		return fail(o);
	o->file_size = (uint64_t)st.st_size;
	/* libdw gets a duplicate; ours is kept for the DWARF, which kprof
	 * opens itself (get_dwarf) */
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
	index_symbols(o);
	if (o->refused_debug) {
		/* libdwfl keeps a debug file its search validated (by build-id)
		 * even when find_debuginfo refuses it: start again without one
		 * (find_debuginfo now finds none) */
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
		index_symbols(o);
	}
	note_if_stripped(o, ctx);
	return true;
}

/* DWARF sections kprof never reads: location lists (a third of a Debian
 * debug file), macros; and the line tables (a sixth) unless source lines
 * are wanted or the build is indexed (its index holds them). */
static const char *const unused_dwarf[] = {".debug_loclists", ".debug_loc", ".debug_macro",
					   ".debug_macinfo", ".debug_line"};
#define N_UNUSED_DWARF (sizeof(unused_dwarf) / sizeof(unused_dwarf[0]))

static bool skipped_name(const char *name, const char *const *skip, size_t nskip)
{
	for (size_t i = 0; i < nskip; i++)
		if (strcmp(name, skip[i]) == 0)
			return true;
	return false;
}

/* How many of unused_dwarf to leave out. */
static size_t n_unused(bool lines)
{
	return lines ? N_UNUSED_DWARF - 1 : N_UNUSED_DWARF;
}

/* The MiB of n, rounded up, for notes. */
static unsigned long long mib(uint64_t n)
{
	return (unsigned long long)(n / (1u << 20) + (n % (1u << 20) != 0));
}

/* Counts an object whose compressed debug sections state more than it
 * may inflate (need, over left), in one note kept current. */
static void note_capped(struct kp_elf_object *o, struct kp_elf_object_ctx *ctx, uint64_t need,
			uint64_t left, bool by_run)
{
	if (!ctx->ncapped++)
		ctx->capped_first = kp_xasprintf("%s (%llu MiB stated, %llu MiB %s)", o->name,
						 mib(need), (unsigned long long)left >> 20,
						 by_run ? "left to the run" : "its limit");
	if (!ctx->notes)
		return;
	if (ctx->ncapped == 1)
		kp_notes_update(
			ctx->notes, &ctx->capped_slot,
			"the compressed debug sections of %s were not inflated, over kprof's "
			"limits (%llu times the size of their files, at least %llu MiB, at most "
			"%llu MiB an object; %llu MiB a run, %llu MiB for files of other users): "
			"it is named from its symbol table only",
			ctx->capped_first, (unsigned long long)KP_INFLATE_RATIO,
			mib(KP_INFLATE_FLOOR), mib(KP_INFLATE_MAX), mib(KP_INFLATE_RUN),
			mib(KP_INFLATE_RUN_OTHER));
	else
		kp_notes_update(
			ctx->notes, &ctx->capped_slot,
			"the compressed debug sections of %u binaries were not inflated, over "
			"kprof's limits (%llu times the size of their files, at least %llu MiB, at "
			"most %llu MiB an object; %llu MiB a run, %llu MiB for files of other "
			"users; the first: %s): they are named from their symbol tables only",
			ctx->ncapped, (unsigned long long)KP_INFLATE_RATIO, mib(KP_INFLATE_FLOOR),
			mib(KP_INFLATE_MAX), mib(KP_INFLATE_RUN), mib(KP_INFLATE_RUN_OTHER),
			ctx->capped_first);
}

/* Counts a debug file refused for a trusted binary, in one note kept
 * current. */
static void note_refused_debug(struct kp_elf_object *o, const char *path, int fd)
{
	struct kp_elf_object_ctx *ctx = o->ctx;
	struct stat st;

	if (!ctx)
		return;
	if (!ctx->nrefused_debug++)
		ctx->refused_debug_first =
			fstat(fd, &st) == 0
				? kp_xasprintf("%s (for %s; owned by uid %u, mode %04o)",
					       path ? path : "?", o->name, (unsigned)st.st_uid,
					       (unsigned)(st.st_mode & 07777))
				: kp_xasprintf("%s (for %s)", path ? path : "?", o->name);
	if (!ctx->notes)
		return;
	if (ctx->nrefused_debug == 1)
		kp_notes_update(ctx->notes, &ctx->refused_debug_slot,
				"ignored the debug file %s: another user could have written it, "
				"and the binary is one kprof trusts (root's or yours, written by "
				"no one else)",
				ctx->refused_debug_first);
	else
		kp_notes_update(ctx->notes, &ctx->refused_debug_slot,
				"ignored %u debug files that other users could have written, "
				"found for binaries kprof trusts (the first: %s)",
				ctx->nrefused_debug, ctx->refused_debug_first);
}

/* May the object inflate the need bytes its compressed debug sections
 * state, from files of size bytes together (debug_image.h)? If so they
 * are counted in the run's total and *budget (may be NULL) is what the
 * object may take (its limit, or what the run has left if less); else it
 * is said once. */
static bool admit(struct kp_elf_object *o, uint64_t need, uint64_t size, uint64_t *budget)
{
	struct kp_elf_object_ctx *ctx = o->ctx;
	uint64_t limit = kp_debug_image_inflate_limit(size);
	uint64_t *used = o->trusted ? &ctx->inflated : &ctx->inflated_other;
	uint64_t run = o->trusted ? KP_INFLATE_RUN : KP_INFLATE_RUN_OTHER;

	if (need <= limit && need <= run - *used) {
		if (budget)
			*budget = limit < run - *used ? limit : run - *used;
		*used += need;
		return true;
	}
	note_capped(o, ctx, need, need > limit ? limit : run - *used, need <= limit);
	return false;
}

/* The dwz file a DWARF file names (.gnu_debugaltlink: a path, then the
 * build-id it must have): its build-id (*len bytes) and *name, or NULL. */
static const uint8_t *altlink(Elf *elf, const char **name, size_t *len)
{
	GElf_Shdr mem, *sh = &mem;
	Elf_Scn *scn = NULL;

	while ((scn = kp_elf_section(elf, scn, ".gnu_debugaltlink", false, sh))) {
		Elf_Data *d;
		const char *nul;

		if (sh->sh_type == SHT_NOBITS || (sh->sh_flags & SHF_COMPRESSED))
			continue;
		d = elf_rawdata(scn, NULL);
		nul = d && d->d_buf ? memchr(d->d_buf, '\0', d->d_size) : NULL;
		if (!nul || d->d_size - (size_t)(nul - (const char *)d->d_buf) - 1 == 0)
			return NULL;
		*name = d->d_buf;
		*len = d->d_size - (size_t)(nul - (const char *)d->d_buf) - 1;
		return (const uint8_t *)nul + 1;
	}
	return NULL;
}

/* The dwz file of a DWARF file found at path (NULL: an unknown place),
 * where libdw 0.188 would look for it: by build-id under /usr/lib/debug,
 * then by its name (relative to the DWARF file's folder). Opened by us,
 * so libdw never opens one on its own (and inflates it without a bound):
 * an ELF file with the build-id the link names, trusted when the binary
 * is. Returns its Elf (*fd its descriptor) or NULL. */
static Elf *open_alt(struct kp_elf_object *o, const char *path, const char *name, const uint8_t *id,
		     size_t len, int *fd)
{
	char cand[PATH_MAX];
	const char *slash = path ? strrchr(path, '/') : NULL;

	*fd = -1;
	if (len < 3 || len > KP_BUILD_ID_MAX)
		return NULL;
	for (int i = 0; i < 2; i++) {
		Elf *elf;
		int n;

		if (i == 0) {
			n = snprintf(cand, sizeof(cand), "/usr/lib/debug/.build-id/%02x/", id[0]);
			for (size_t k = 1; k < len && n > 0 && (size_t)n < sizeof(cand); k++)
				n += snprintf(cand + n, sizeof(cand) - (size_t)n, "%02x", id[k]);
			if (n > 0 && (size_t)n < sizeof(cand))
				n += snprintf(cand + n, sizeof(cand) - (size_t)n, ".debug");
		} else if (name[0] == '/') {
			n = snprintf(cand, sizeof(cand), "%s", name);
		} else if (slash) {
			n = snprintf(cand, sizeof(cand), "%.*s/%s", (int)(slash - path), path,
				     name);
		} else {
			break;
		}
		if (n <= 0 || (size_t)n >= sizeof(cand))
			continue;
		*fd = open(cand, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (*fd < 0)
			continue;
		elf = has_elf_magic(*fd) && (!o->trusted || kp_elf_object_file_trusted(*fd))
			      ? elf_begin(*fd, ELF_C_READ_MMAP_PRIVATE, NULL)
			      : NULL;
		if (elf) {
			const void *got;
			ssize_t glen =
				elf_kind(elf) == ELF_K_ELF ? dwelf_elf_gnu_build_id(elf, &got) : -1;

			if (glen == (ssize_t)len && memcmp(got, id, len) == 0)
				return elf;
			elf_end(elf);
		}
		close(*fd);
		*fd = -1;
	}
	return NULL;
}

/* The Dwarf of elf (open on fd; both taken), through an image of its
 * sections inflated our way when some are compressed, else the file as
 * it is with the sections in skip hidden (made NOBITS in a private
 * copy-on-write mapping: libdw would inflate them too). */
static Dwarf *dwarf_of(Elf *elf, int fd, const char *const *skip, size_t nskip, uint64_t limit,
		       struct kp_debug_image **image, Elf **kept_elf, int *kept_fd)
{
	Elf *img = kp_debug_image_open_limit(elf, skip, nskip, limit, image);
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (img) {
		/* the image holds all libdw will read */
		elf_end(elf);
		close(fd);
		return dwarf_begin_elf(img, DWARF_C_READ, NULL);
	}
	*kept_elf = elf;
	*kept_fd = fd;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		const char *name = sh ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;

		if (name && skipped_name(name, skip, nskip)) {
			sh->sh_type = SHT_NOBITS;
			gelf_update_shdr(scn, sh);
		}
	}
	return dwarf_begin_elf(elf, DWARF_C_READ, NULL);
}

/* The DWARF in the file open as fd (taken), found at path (may be NULL),
 * and its dwz file, opened our way (libdw inflates every DWARF section it
 * knows when it opens a file, with zlib, and Debian's debug files are
 * compressed): only the sections kprof reads, and only when what they
 * state fits the object's limits (debug_image.h). */
static Dwarf *open_dwarf(struct kp_elf_object *o, int fd, const char *path, bool lines)
{
	const char *skip[N_UNUSED_DWARF + 1], *alt_name = NULL;
	size_t nskip = n_unused(lines), alt_len = 0, shstrndx;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL), *alt = NULL;
	const uint8_t *alt_id;
	uint64_t need, size, budget;
	struct stat st;
	int alt_fd = -1;

	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) != 0 ||
	    fstat(fd, &st) != 0) {
		if (elf)
			elf_end(elf);
		close(fd);
		return NULL;
	}
	memcpy(skip, unused_dwarf, nskip * sizeof(*skip));
	size = (uint64_t)st.st_size;
	alt_id = altlink(elf, &alt_name, &alt_len);
	if (alt_id)
		alt = open_alt(o, path, alt_name, alt_id, alt_len, &alt_fd);
	if (alt && fstat(alt_fd, &st) == 0)
		size += (uint64_t)st.st_size;
	need = kp_debug_image_stated(elf, skip, nskip);
	if (alt) {
		uint64_t more = kp_debug_image_stated(alt, skip, nskip);

		need = more > UINT64_MAX - need ? UINT64_MAX : need + more;
	}
	if (!admit(o, need, size, &budget)) {
		if (alt) {
			elf_end(alt);
			close(alt_fd);
		}
		elf_end(elf);
		close(fd);
		return NULL;
	}
	/* no dwz file of ours: libdw must not look for one itself (nor for
	 * one of the dwz file's) */
	skip[nskip] = ".gnu_debugaltlink";
	if (alt)
		o->alt_dw = dwarf_of(alt, alt_fd, skip, nskip + 1, budget, &o->alt_image,
				     &o->alt_elf, &o->alt_fd);
	o->own_dw = dwarf_of(elf, fd, skip, nskip + !o->alt_dw, budget, &o->image, &o->own_elf,
			     &o->own_fd);
	if (o->own_dw && o->alt_dw)
		dwarf_setalt(o->own_dw, o->alt_dw);
	return o->own_dw;
}

/* The separate debug file of the module, as libdw found it for the
 * symbols (through find_debuginfo) or by the same search; checked again,
 * since its path is opened anew. Returns its fd and *path (heap), or -1. */
static int open_debug_file(struct kp_elf_object *o, char **path)
{
	const char *mainfile = NULL, *debugfile = NULL;
	void **userdata;
	Dwarf_Addr start;
	int fd = -1;

	*path = NULL;
	if (!dwfl_module_info(o->mod, &userdata, &start, NULL, NULL, NULL, &mainfile, &debugfile))
		return -1;
	if (debugfile) {
		fd = open(debugfile, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0 &&
		    (!has_elf_magic(fd) || (o->trusted && !kp_elf_object_file_trusted(fd)))) {
			close(fd);
			return -1;
		}
		*path = kp_xstrdup(debugfile);
	} else {
		Elf *main_elf = dwfl_module_getelf(o->mod, &(GElf_Addr){0});
		GElf_Word crc = 0;
		const char *link = main_elf ? dwelf_elf_gnu_debuglink(main_elf, &crc) : NULL;

		/* build-id, debuglink, debuginfod: the path libdw would take */
		fd = find_debuginfo(o->mod, userdata, o->name, start, mainfile ? mainfile : o->name,
				    link, crc, path);
	}
	return fd;
}

/* A prelinked file's DWARF is at other addresses than its code: libdw
 * works the bias out (.gnu.prelink_undo), and inflates its sections
 * itself. Only for a trusted file (glibc 2.36 dropped prelink; anyone can
 * add the section), and only when the file and the debug file libdw found
 * for its symbols state what the object may inflate. */
static Dwarf *prelinked_dwarf(struct kp_elf_object *o, Elf *main_elf)
{
	uint64_t need = kp_debug_image_stated(main_elf, NULL, 0), size = o->file_size;
	const char *debugfile = NULL;
	Dwarf *dw;

	dwfl_module_info(o->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	if (debugfile) {
		int fd = open(debugfile, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
		struct stat st;

		if (elf && fstat(fd, &st) == 0) {
			uint64_t more = kp_debug_image_stated(elf, NULL, 0);

			need = more > UINT64_MAX - need ? UINT64_MAX : need + more;
			size += (uint64_t)st.st_size;
		}
		if (elf)
			elf_end(elf);
		if (fd >= 0)
			close(fd);
	}
	if (!admit(o, need, size, NULL))
		return NULL;
	dw = dwfl_module_getdwarf(o->mod, &o->dw_bias);
	return dw;
}

/* The DWARF of the object and the bias from DWARF to module addresses;
 * lines: with its line tables (the first call decides). */
static Dwarf *get_dwarf(struct kp_elf_object *o, Dwarf_Addr *bias, bool lines)
{
	if (!o->dw_tried) {
		Elf *main_elf = dwfl_module_getelf(o->mod, &(GElf_Addr){0});

		o->dw_tried = true;
		o->dw_bias = o->bias;
		if (!main_elf) {
			/* nothing */
		} else if (has_bytes(main_elf, ".gnu.prelink_undo") && o->trusted) {
			o->dw = prelinked_dwarf(o, main_elf);
		} else if (has_bytes(main_elf, ".debug_info") ||
			   has_bytes(main_elf, ".zdebug_info")) {
			/* the file's own DWARF, linked at its addresses */
			int fd = o->file_fd >= 0 ? fcntl(o->file_fd, F_DUPFD_CLOEXEC, 0) : -1;

			if (fd >= 0)
				o->dw = open_dwarf(o, fd, o->debug_path ? o->debug_path : o->name,
						   lines);
		} else {
			/* a separate debug file, linked at the binary's addresses */
			char *path;
			int fd = open_debug_file(o, &path);

			if (fd >= 0)
				o->dw = open_dwarf(o, fd, path, lines);
			free(path);
		}
	}
	*bias = o->dw_bias;
	return o->dw;
}

/* The size of the DWARF a full walk reads (.debug_info, inflated). */
static uint64_t dwarf_info_size(Dwarf *dw)
{
	Elf *elf = dwarf_getelf(dw);
	GElf_Shdr sh;
	GElf_Chdr ch;
	Elf_Scn *scn = elf ? kp_elf_section(elf, NULL, ".debug_info", false, &sh) : NULL;

	if (!scn)
		return 0;
	if ((sh.sh_flags & SHF_COMPRESSED) && gelf_getchdr(scn, &ch))
		return ch.ch_size;
	return sh.sh_size;
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
	Dwarf *dw = get_dwarf(o, &dwbias, true);
	struct kp_dwarf_flat flat;
	struct kp_symidx_input in = {0};

	if (!o->trusted || !dw || dwarf_info_size(dw) > KP_SYMIDX_MAX_DWARF)
		return;
	if (!o->dwidx)
		o->dwidx = kp_dwarf_index_new();
	kp_dwarf_index_flatten(o->dwidx, dw, &flat);
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
	kp_dwarf_index_flat_fini(&flat);
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
		Dwarf *dw = get_dwarf(o, &dwbias, !ctx->no_lines);

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
