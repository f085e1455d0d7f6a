/* An object's DWARF, opened our way: only the sections kprof reads,
 * inflated within the object's and the run's bounds (debug_image.h), its
 * dwz file found and checked by us, a prelinked file's through libdw. */
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/debug_image.h"
#include "symbolize/elf_objectP.h"
#include "util/notes.h"
#include "util/xalloc.h"

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

/* May the object inflate the need bytes its compressed debug sections
 * state, from files of size bytes together (debug_image.h)? If so they
 * are counted in the run's total and *budget (may be NULL) is what the
 * object may take (its limit, or what the run has left if less); else it
 * is said once. */
bool kp_elf_dwarf_admit(struct kp_elf_object *o, uint64_t need, uint64_t size, uint64_t *budget)
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
		elf = kp_elf_object_has_elf_magic(*fd) &&
				      (!o->trusted || kp_elf_object_file_trusted(*fd))
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
	if (!kp_elf_dwarf_admit(o, need, size, &budget)) {
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
	if (!kp_elf_dwarf_admit(o, need, size, NULL))
		return NULL;
	dw = dwfl_module_getdwarf(o->mod, &o->dw_bias);
	return dw;
}

/* The DWARF of the object and the bias from DWARF to module addresses;
 * lines: with its line tables (the first call decides). */
Dwarf *kp_elf_dwarf_get(struct kp_elf_object *o, Dwarf_Addr *bias, bool lines)
{
	if (!o->dw_tried) {
		Elf *main_elf = dwfl_module_getelf(o->mod, &(GElf_Addr){0});

		o->dw_tried = true;
		o->dw_bias = o->bias;
		if (!main_elf) {
			/* nothing */
		} else if (kp_elf_object_has_bytes(main_elf, ".gnu.prelink_undo") && o->trusted) {
			o->dw = prelinked_dwarf(o, main_elf);
		} else if (kp_elf_object_has_bytes(main_elf, ".debug_info") ||
			   kp_elf_object_has_bytes(main_elf, ".zdebug_info")) {
			/* the file's own DWARF, linked at its addresses */
			int fd = o->file_fd >= 0 ? fcntl(o->file_fd, F_DUPFD_CLOEXEC, 0) : -1;

			if (fd >= 0)
				o->dw = open_dwarf(o, fd, o->debug_path ? o->debug_path : o->name,
						   lines);
		} else {
			/* a separate debug file, linked at the binary's addresses */
			char *path;
			int fd = kp_elf_debuginfo_open(o, &path);

			if (fd >= 0)
				o->dw = open_dwarf(o, fd, path, lines);
			free(path);
		}
	}
	*bias = o->dw_bias;
	return o->dw;
}

/* The size of the DWARF a full walk reads (.debug_info, inflated). */
uint64_t kp_elf_dwarf_info_size(Dwarf *dw)
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
