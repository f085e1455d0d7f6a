/* Finding an object's debug files, as libdwfl's find_debuginfo callback:
 * by build-id, by .gnu_debuglink where a file could be, through debuginfod
 * (bounded: debuginfod.h); MiniDebugInfo let inflate only within bounds;
 * a trusted binary's debug files trusted too (docs/symbolize.md). */
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <endian.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/debuginfod.h"
#include "symbolize/elf_objectP.h"
#include "util/notes.h"
#include "util/xalloc.h"

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
	return need != UINT64_MAX && kp_elf_dwarf_admit(o, need, o->file_size, NULL);
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
int kp_elf_debuginfo_find(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	/* elf_object.c's load() leaves the object in the module's userdata */
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
	    (!kp_elf_object_has_elf_magic(fd) || (o->trusted && !kp_elf_object_file_trusted(fd)))) {
		if (kp_elf_object_has_elf_magic(fd))
			note_refused_debug(o, *debuginfo_file_name, fd);
		o->refused_debug = true;
		close(fd);
		free(*debuginfo_file_name);
		*debuginfo_file_name = NULL;
		fd = -1;
	}
	return fd;
}

/* The separate debug file of the module, as libdw found it for the
 * symbols (through kp_elf_debuginfo_find) or by the same search; checked again,
 * since its path is opened anew. Returns its fd and *path (heap), or -1. */
int kp_elf_debuginfo_open(struct kp_elf_object *o, char **path)
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
		if (fd >= 0 && (!kp_elf_object_has_elf_magic(fd) ||
				(o->trusted && !kp_elf_object_file_trusted(fd)))) {
			close(fd);
			return -1;
		}
		*path = kp_xstrdup(debugfile);
	} else {
		Elf *main_elf = dwfl_module_getelf(o->mod, &(GElf_Addr){0});
		GElf_Word crc = 0;
		const char *link = main_elf ? dwelf_elf_gnu_debuglink(main_elf, &crc) : NULL;

		/* build-id, debuglink, debuginfod: the path libdw would take */
		fd = kp_elf_debuginfo_find(o->mod, userdata, o->name, start,
					   mainfile ? mainfile : o->name, link, crc, path);
	}
	return fd;
}

void kp_elf_debuginfo_bound_mini(struct kp_elf_object *o, Elf *elf)
{
	if (!minidebuginfo_fits(o, elf))
		hide_section_name(elf, ".gnu_debugdata");
}
