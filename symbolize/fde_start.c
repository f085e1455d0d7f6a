/* Every FDE of .eh_frame, read once into a sorted table of [start, end)
 * ranges; a lookup is a binary search. */
#include "symbolize/fde_start.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/elf_section.h"
#include "util/search.h"
#include "util/u64map.h"
#include "util/xalloc.h"

/* Executable PT_LOAD segments looked at: real objects have one or two. */
#define MAX_XSEGS 16
/* A CIE whose FDEs' pointers kprof cannot read (kept in the CIE map). */
#define ENC_UNUSABLE 0x100

struct fde {
	uint64_t start, end;
};

struct kp_fde_start {
	struct fde *v; /* sorted by start, disjoint */
	size_t n;
	char **names; /* names[i]: v[i]'s name once made, else NULL */
	char *module;
};

/* What reading the section needs besides the entry. */
struct reader {
	const uint8_t *base; /* the section's bytes */
	uint64_t vaddr;	     /* the section's address (pcrel pointers) */
	unsigned addr_size;  /* 4 or 8, by the ELF class */
	bool big;	     /* big-endian */
	struct fde xsegs[MAX_XSEGS];
	size_t nxsegs;
};

/* Bytes of a pointer of format enc (its low 4 bits), 0 for those kprof does
 * not read (LEB128: never used for an FDE's pointers; omit). */
static unsigned value_size(unsigned enc, unsigned addr_size)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		return addr_size;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	default:
		return 0;
	}
}

/* Reads a pointer of encoding enc at *p (before end), advancing *p: the
 * value's format, and pcrel (from the field's own address) or absolute;
 * false for anything else (datarel, textrel, aligned, indirect: not what
 * compilers and linkers write for an FDE's location). */
static bool read_value(const struct reader *r, const uint8_t **p, const uint8_t *end, unsigned enc,
		       uint64_t *out)
{
	unsigned size = value_size(enc, r->addr_size);
	uint64_t v = 0, field = r->vaddr + (uint64_t)(*p - r->base);

	if (!size || (size_t)(end - *p) < size || (enc & 0x70) > DW_EH_PE_pcrel ||
	    (enc & DW_EH_PE_indirect))
		return false;
	for (unsigned i = 0; i < size; i++)
		v |= (uint64_t)(*p)[r->big ? i : size - 1 - i] << (8 * (size - 1 - i));
	*p += size;
	if ((enc & DW_EH_PE_signed) && size < 8 && (v >> (8 * size - 1)))
		v |= ~(uint64_t)0 << (8 * size); /* sign-extend */
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		v += field;
	if (r->addr_size == 4)
		v &= 0xffffffffu;
	*out = v;
	return true;
}

/* The encoding of the pointers of a CIE's FDEs ('R' in its augmentation:
 * "zR", "zPLR", ...), or ENC_UNUSABLE when kprof cannot tell. */
static unsigned fde_encoding(const Dwarf_CIE *cie, unsigned addr_size)
{
	const char *a = cie->augmentation;
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p + cie->augmentation_data_size;

	if (a[0] != 'z')
		return a[0] == '\0' ? DW_EH_PE_absptr : ENC_UNUSABLE;
	for (a++; *a; a++) {
		unsigned size;

		switch (*a) {
		case 'R':
			return p < end ? *p : ENC_UNUSABLE;
		case 'L': /* the LSDA's encoding: a byte */
			p++;
			break;
		case 'P': /* the personality routine: encoding and pointer */
			size = p < end ? value_size(*p, addr_size) : 0;
			if (!size)
				return ENC_UNUSABLE;
			p += 1 + size;
			break;
		case 'S': /* signal frame; AArch64's BTI and MTE marks */
		case 'B':
		case 'G':
			break;
		default:
			return ENC_UNUSABLE;
		}
		if (p > end)
			return ENC_UNUSABLE;
	}
	return DW_EH_PE_absptr;
}

/* Whether [start, end) lies inside one executable segment. */
static bool in_code(const struct reader *r, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < r->nxsegs; i++) {
		if (start >= r->xsegs[i].start && end <= r->xsegs[i].end)
			return true;
	}
	return false;
}

/* The executable PT_LOAD segments' address ranges; false without any. */
static bool code_segments(Elf *elf, struct reader *r)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum) != 0)
		return false;
	for (size_t i = 0; i < phnum && r->nxsegs < MAX_XSEGS; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		if (!ph || ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !ph->p_memsz ||
		    ph->p_vaddr + ph->p_memsz < ph->p_vaddr)
			continue;
		r->xsegs[r->nxsegs++] = (struct fde){ph->p_vaddr, ph->p_vaddr + ph->p_memsz};
	}
	return r->nxsegs > 0;
}

/* The .eh_frame section's bytes (libelf checks they lie in the file) and
 * address; NULL without one. */
static Elf_Data *eh_frame(Elf *elf, uint64_t *vaddr)
{
	GElf_Shdr sh;
	Elf_Scn *scn = kp_elf_section(elf, NULL, ".eh_frame", true, &sh);
	Elf_Data *d = scn ? elf_rawdata(scn, NULL) : NULL;

	*vaddr = scn ? sh.sh_addr : 0;
	return d && d->d_buf && d->d_size ? d : NULL;
}

/* One FDE's range, read with its CIE's encoding (from the CIE map), kept
 * when it lies in code. */
static void add_fde(const struct reader *r, const struct kp_u64map *cies, const Dwarf_FDE *e,
		    struct kp_fde_start *f, size_t *cap)
{
	const uint8_t *p = e->start;
	uint64_t enc, start, len;

	if (!kp_u64map_get(cies, e->CIE_pointer, &enc) || enc == ENC_UNUSABLE)
		return;
	if (!read_value(r, &p, e->end, (unsigned)enc, &start) ||
	    !read_value(r, &p, e->end, (unsigned)enc & 0x0f, &len))
		return;
	if (!len || start + len < start || !in_code(r, start, start + len))
		return;
	kp_xgrow(&f->v, cap, f->n + 1, sizeof(*f->v));
	f->v[f->n++] = (struct fde){start, start + len};
}

static int fde_cmp(const void *pa, const void *pb)
{
	const struct fde *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

/* Every entry in order; a damaged one is skipped when libdw could tell
 * where the next starts (as its own search does), else the walk ends. */
static void read_entries(const struct reader *r, const unsigned char *ident, Elf_Data *data,
			 struct kp_fde_start *f)
{
	struct kp_u64map cies;
	size_t cap = 0;
	Dwarf_Off off = 0, next;

	kp_u64map_init(&cies);
	for (;; off = next) {
		Dwarf_CFI_Entry e;
		int rc;

		next = off;
		rc = dwarf_next_cfi(ident, data, true, off, &next, &e);
		if (rc > 0 || next <= off || next == (Dwarf_Off)-1)
			break;
		if (rc < 0)
			continue;
		if (dwarf_cfi_cie_p(&e))
			kp_u64map_put(&cies, off, fde_encoding(&e.cie, r->addr_size));
		else
			add_fde(r, &cies, &e.fde, f, &cap);
	}
	kp_u64map_fini(&cies);
}

struct kp_fde_start *kp_fde_start_new(Elf *elf, const char *module)
{
	struct reader r = {0};
	struct kp_fde_start *f;
	const unsigned char *ident;
	Elf_Data *data;
	size_t k = 0;

	if (!elf || !(ident = (const unsigned char *)elf_getident(elf, NULL)) ||
	    !code_segments(elf, &r) || !(data = eh_frame(elf, &r.vaddr)))
		return NULL;
	r.base = data->d_buf;
	r.addr_size = ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	r.big = ident[EI_DATA] == ELFDATA2MSB;
	f = kp_xcalloc(1, sizeof(*f));
	read_entries(&r, ident, data, f);
	if (!f->n) {
		kp_fde_start_free(f);
		return NULL;
	}
	qsort(f->v, f->n, sizeof(*f->v), fde_cmp);
	/* disjoint ranges: an FDE overlapping the one before is dropped (a
	 * damaged table; real ones never overlap) */
	for (size_t i = 1; i < f->n; i++) {
		if (f->v[i].start >= f->v[k].end)
			f->v[++k] = f->v[i];
	}
	f->n = k + 1;
	f->names = kp_xcalloc(f->n, sizeof(*f->names));
	f->module = kp_xstrdup(module);
	return f;
}

void kp_fde_start_free(struct kp_fde_start *f)
{
	if (!f)
		return;
	for (size_t i = 0; f->names && i < f->n; i++)
		free(f->names[i]);
	free(f->names);
	free(f->module);
	free(f->v);
	free(f);
}

/* The index of the FDE covering vaddr, or f->n. */
static size_t find(const struct kp_fde_start *f, uint64_t vaddr)
{
	size_t lo = KP_FIRST_ABOVE(f->v, f->n, start, vaddr);

	return lo && vaddr < f->v[lo - 1].end ? lo - 1 : f->n;
}

bool kp_fde_start_find(const struct kp_fde_start *f, uint64_t vaddr, uint64_t *start, uint64_t *end)
{
	size_t i = f ? find(f, vaddr) : 0;

	if (!f || i == f->n)
		return false;
	*start = f->v[i].start;
	*end = f->v[i].end;
	return true;
}

const char *kp_fde_start_name(struct kp_fde_start *f, uint64_t vaddr)
{
	size_t i = f ? find(f, vaddr) : 0;

	if (!f || i == f->n)
		return NULL;
	if (!f->names[i])
		f->names[i] = kp_xasprintf("%s+0x%" PRIx64, f->module, f->v[i].start);
	return f->names[i];
}

char *kp_fde_start_module(const char *path)
{
	static const char deleted[] = " (deleted)";
	const char *slash = strrchr(path, '/');
	const char *base = slash && slash[1] ? slash + 1 : path;
	size_t n = strlen(base);

	if (n > sizeof(deleted) - 1 && strcmp(base + n - (sizeof(deleted) - 1), deleted) == 0)
		n -= sizeof(deleted) - 1;
	return kp_xstrndup(base, n);
}
