/* One Dwfl per object, holding one module reported at bias 0 (so module
 * addresses are the file's own virtual addresses): objects never share an
 * address space, and a module can be loaded, used and freed on its own. */
#include "symbolize/elf_object.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/demangle.h"
#include "util/xalloc.h"

struct load_seg {
	uint64_t off, filesz, vaddr;
};

struct kp_elfobj {
	int fd; /* until handed to libdw */
	char *name, *debug_path;
	bool tried;
	char *error;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	GElf_Addr bias;
	struct load_seg *segs;
	size_t nsegs;
};

static void libelf_init(void)
{
	static bool done;

	if (!done) {
		elf_version(EV_CURRENT);
		done = true;
	}
}

void kp_elf_ctx_init(struct kp_elf_ctx *ctx, const char *const *dirs, size_t ndirs, bool no_inline,
		     bool full_names)
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
	ctx->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
	ctx->callbacks.section_address = dwfl_offline_section_address;
	ctx->callbacks.debuginfo_path = &ctx->debuginfo_path;
	ctx->no_inline = no_inline;
	ctx->full_names = full_names;
}

void kp_elf_ctx_fini(struct kp_elf_ctx *ctx)
{
	free(ctx->debuginfo_path);
	ctx->debuginfo_path = NULL;
}

size_t kp_elf_read_build_id(int fd, uint8_t *buf, size_t cap)
{
	const void *id;
	ssize_t len;
	Elf *elf;

	libelf_init();
	/* ELF_C_READ, not mmap: a file truncated under us must not SIGBUS */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return 0;
	len = elf_kind(elf) == ELF_K_ELF ? dwelf_elf_gnu_build_id(elf, &id) : -1;
	if (len <= 0 || (size_t)len > cap) {
		elf_end(elf);
		return 0;
	}
	memcpy(buf, id, (size_t)len);
	elf_end(elf);
	return (size_t)len;
}

struct kp_elfobj *kp_elfobj_new(int fd, const char *name, const char *debug_path)
{
	struct kp_elfobj *o = kp_xcalloc(1, sizeof(*o));

	o->fd = fd;
	o->name = kp_xstrdup(name);
	o->debug_path = debug_path ? kp_xstrdup(debug_path) : NULL;
	return o;
}

void kp_elfobj_free(struct kp_elfobj *o)
{
	if (!o)
		return;
	if (o->dwfl)
		dwfl_end(o->dwfl);
	if (o->fd >= 0)
		close(o->fd);
	free(o->segs);
	free(o->error);
	free(o->debug_path);
	free(o->name);
	free(o);
}

const char *kp_elfobj_error(const struct kp_elfobj *o)
{
	return o->error;
}

static bool fail(struct kp_elfobj *o, const char *what)
{
	free(o->error);
	o->error = kp_xasprintf("%s: %s", o->name, what);
	if (o->dwfl)
		dwfl_end(o->dwfl);
	o->dwfl = NULL;
	o->mod = NULL;
	return false;
}

static bool load(struct kp_elfobj *o, const struct kp_elf_ctx *ctx)
{
	size_t phnum;
	Elf *elf;
	int fd;

	o->tried = true;
	if (o->fd < 0)
		return fail(o, "file not opened");
	fd = fcntl(o->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return fail(o, strerror(errno));
	o->dwfl = dwfl_begin(&ctx->callbacks);
	if (!o->dwfl) {
		close(fd);
		return fail(o, dwfl_errmsg(-1));
	}
	dwfl_report_begin(o->dwfl);
	/* the debuglink search starts in the directory of the file name given
	 * here, so give the path in our namespace rather than a /proc link */
	o->mod = dwfl_report_elf(o->dwfl, o->name, o->debug_path ? o->debug_path : o->name, fd, 0,
				 true);
	if (!o->mod) {
		close(fd);
		return fail(o, dwfl_errmsg(-1));
	}
	if (dwfl_report_end(o->dwfl, NULL, NULL) != 0)
		return fail(o, dwfl_errmsg(-1));
	/* libdw owns the duplicate now; ours is no longer needed */
	close(o->fd);
	o->fd = -1;
	elf = dwfl_module_getelf(o->mod, &o->bias);
	if (!elf || elf_getphdrnum(elf, &phnum) != 0)
		return fail(o, "no program headers");
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		if (!ph || ph->p_type != PT_LOAD || !ph->p_filesz)
			continue;
		o->segs = kp_xrealloc(o->segs, (o->nsegs + 1) * sizeof(*o->segs));
		o->segs[o->nsegs++] = (struct load_seg){ph->p_offset, ph->p_filesz, ph->p_vaddr};
	}
	if (!o->nsegs)
		return fail(o, "no loadable segments");
	return true;
}

/* The name of a DWARF function or inlined-subroutine DIE, following
 * DW_AT_abstract_origin and DW_AT_specification: the linkage name when
 * there is one (qualified once demangled), else DW_AT_name. Returns a new
 * heap string or NULL. */
static char *die_name(Dwarf_Die *die, bool full_names)
{
	Dwarf_Attribute attr;
	const char *s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));

	if (!s)
		s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!s)
		s = dwarf_diename(die);
	return s && *s ? kp_demangle(s, full_names) : NULL;
}

bool kp_elfobj_lookup(struct kp_elfobj *o, const struct kp_elf_ctx *ctx, uint64_t off,
		      kp_elf_emit_fn emit, void *arg)
{
	const struct load_seg *seg = NULL;
	Dwarf_Die *scopes = NULL;
	int nscopes = 0, sub = -1;
	GElf_Addr addr;
	GElf_Off symoff;
	GElf_Sym sym;
	const char *sname;
	char *outer = NULL;

	if (!o->tried)
		load(o, ctx);
	if (!o->mod)
		return false;
	for (size_t i = 0; i < o->nsegs; i++) {
		if (off >= o->segs[i].off && off - o->segs[i].off < o->segs[i].filesz) {
			seg = &o->segs[i];
			break;
		}
	}
	if (!seg)
		return false;
	addr = seg->vaddr + (off - seg->off) + o->bias;
	sname = dwfl_module_addrinfo(o->mod, addr, &symoff, &sym, NULL, NULL, NULL);
	if (!ctx->no_inline || !sname || !*sname) {
		Dwarf_Addr dwbias;
		Dwarf_Die *cu = dwfl_module_addrdie(o->mod, addr, &dwbias);

		if (cu)
			nscopes = dwarf_getscopes(cu, addr - dwbias, &scopes);
		if (nscopes > 0) {
			/* past an inlined instance, dwarf_getscopes continues with
			 * the scopes of its abstract origin; the callers are the
			 * instance's physical parents */
			Dwarf_Die inner = scopes[0];

			free(scopes);
			scopes = NULL;
			nscopes = dwarf_getscopes_die(&inner, &scopes);
		}
		if (nscopes < 0)
			nscopes = 0;
	}
	for (int i = 0; i < nscopes; i++) {
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			sub = i;
			break;
		}
	}
	if (sname && *sname)
		outer = kp_demangle(sname, ctx->full_names);
	else if (sub >= 0)
		outer = die_name(&scopes[sub], ctx->full_names);
	if (!outer) {
		free(scopes);
		return false;
	}
	emit(arg, outer, false);
	free(outer);
	if (!ctx->no_inline) {
		/* scopes run innermost first: emit the inlined callees from the
		 * one called by the function down to the innermost */
		for (int i = (sub >= 0 ? sub : nscopes) - 1; i >= 0; i--) {
			char *name;

			if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
				continue;
			name = die_name(&scopes[i], ctx->full_names);
			emit(arg, name ? name : "[unknown]", true);
			free(name);
		}
	}
	free(scopes);
	return true;
}
