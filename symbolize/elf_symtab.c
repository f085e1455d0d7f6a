/* An object's symbol table as libdw picked it (.symtab of the file or of
 * its debug file, else .dynsym and MiniDebugInfo), sorted with the best
 * alias kept per address, PLT stubs named as perf names them. */
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/elf_objectP.h"
#include "util/notes.h"
#include "util/xalloc.h"

/* A function symbol while the table is made; the name points into libdw's
 * copy of the file. */
struct fsym {
	GElf_Addr addr, size;
	GElf_Addr limit; /* sizeless symbols: end of their section */
	const char *name;
	uint8_t rank; /* lower is better among aliases */
};

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
void kp_elf_symtab_read(struct kp_elf_object *o)
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
void kp_elf_symtab_note_stripped(struct kp_elf_object *o, struct kp_elf_object_ctx *ctx)
{
	const char *debugfile = NULL;
	Elf *elf = dwfl_module_getelf(o->mod, &(GElf_Addr){0});
	char list[1024];
	size_t len = 0, shown = 0;

	if (!ctx->notes || !elf || kp_elf_object_has_bytes(elf, ".symtab") || o->name[0] == '[')
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
