/* The image is a minimal ELF file: header, the kept sections (inflated or
 * copied), a section name table and the section headers; no program
 * headers (libdw reads DWARF by section name only). */
#include "symbolize/debug_image.h"

#include <gelf.h>
#include <libdeflate.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zstd.h>

#include "util/xalloc.h"

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2 /* not in older <elf.h> */
#endif

#define HUGE_PAGE (2u << 20)

struct kp_debug_image {
	void *map; /* the whole mapping, for munmap */
	size_t map_len;
	Elf *elf;
};

enum packing { PLAIN, GABI_ZLIB, GABI_ZSTD, GNU_ZLIB };

struct kept {
	Elf_Scn *scn;
	GElf_Shdr sh;
	const char *name; /* ".debug_..." (a .zdebug_ name without its 'z') */
	char *renamed;	  /* owned: that name, for a .zdebug_ section */
	enum packing packing;
	const unsigned char *in; /* compressed or plain bytes in the file */
	size_t in_len, out_len, out_off, name_off;
	size_t align; /* of the inflated data, 1 to 64 */
};

static bool skipped(const char *name, const char *const *skip, size_t nskip)
{
	for (size_t i = 0; i < nskip; i++)
		if (strcmp(name, skip[i]) == 0)
			return true;
	return false;
}

/* Reads how sec is packed and its inflated size; false when its header
 * makes no sense. */
static bool read_packing(struct kept *k)
{
	Elf_Data *raw = elf_rawdata(k->scn, NULL);
	uint64_t size = 0;

	if (!raw || !raw->d_buf)
		return false;
	k->in = raw->d_buf;
	k->in_len = raw->d_size;
	if (k->sh.sh_flags & SHF_COMPRESSED) {
		Elf64_Chdr ch;

		if (k->in_len < sizeof(ch))
			return false;
		memcpy(&ch, k->in, sizeof(ch));
		if (ch.ch_type == ELFCOMPRESS_ZLIB)
			k->packing = GABI_ZLIB;
		else if (ch.ch_type == ELFCOMPRESS_ZSTD)
			k->packing = GABI_ZSTD;
		else
			return false;
		size = ch.ch_size;
		k->align = (size_t)ch.ch_addralign;
		k->in += sizeof(ch);
		k->in_len -= sizeof(ch);
	} else if (k->packing == GNU_ZLIB) {
		/* .zdebug_*: "ZLIB", the size as 8 bytes big-endian, zlib */
		if (k->in_len < 12 || memcmp(k->in, "ZLIB", 4) != 0)
			return false;
		for (int i = 4; i < 12; i++)
			size = size << 8 | k->in[i];
		k->in += 12;
		k->in_len -= 12;
	} else {
		size = k->in_len;
	}
	if (!k->align)
		k->align = (size_t)k->sh.sh_addralign;
	if (k->align < 1 || k->align > 64 || (k->align & (k->align - 1)))
		k->align = 1;
	/* zlib grows data about a thousandfold at most; a zstd frame states
	 * its size, which must agree */
	if ((k->packing == GABI_ZLIB || k->packing == GNU_ZLIB) && size / 1100 > k->in_len)
		return false;
	if (k->packing == GABI_ZSTD) {
		unsigned long long stated = ZSTD_getFrameContentSize(k->in, k->in_len);

		if (stated != ZSTD_CONTENTSIZE_UNKNOWN && stated != size)
			return false;
		if (size > (1ull << 32))
			return false;
	}
	k->out_len = (size_t)size;
	return size == k->out_len;
}

static bool inflate_into(struct libdeflate_decompressor *z, const struct kept *k,
			 unsigned char *out)
{
	size_t got = 0;

	switch (k->packing) {
	case PLAIN:
		memcpy(out, k->in, k->in_len);
		return true;
	case GABI_ZLIB:
	case GNU_ZLIB:
		return libdeflate_zlib_decompress(z, k->in, k->in_len, out, k->out_len, &got) ==
			       LIBDEFLATE_SUCCESS &&
		       got == k->out_len;
	case GABI_ZSTD:
		got = ZSTD_decompress(out, k->out_len, k->in, k->in_len);
		return !ZSTD_isError(got) && got == k->out_len;
	}
	return false;
}

/* Anonymous memory, in huge pages when it is big enough for them. */
static bool map_image(struct kp_debug_image *img, size_t len)
{
	size_t keep = (len + 4095) & ~(size_t)4095;
	size_t want = keep < HUGE_PAGE ? keep : keep + HUGE_PAGE;
	unsigned char *p =
		mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *start;

	if (p == MAP_FAILED)
		return false;
	img->map = p;
	img->map_len = want;
	if (want == keep)
		return true;
	/* keep [start, start + keep) with start on a huge page boundary */
	start = (unsigned char *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	if (start > p)
		munmap(p, (size_t)(start - p));
	if (start + keep < p + want)
		munmap(start + keep, (size_t)(p + want - (start + keep)));
	img->map = start;
	img->map_len = keep;
	madvise(start, keep, MADV_HUGEPAGE);
	return true;
}

static void free_kept(struct kept *kept, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(kept[i].renamed);
	free(kept);
}

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

uint64_t kp_debug_image_inflate_limit(uint64_t file_size)
{
	uint64_t by_size = file_size > KP_INFLATE_MAX / KP_INFLATE_RATIO
				   ? KP_INFLATE_MAX
				   : file_size * KP_INFLATE_RATIO;

	if (by_size < KP_INFLATE_FLOOR)
		by_size = KP_INFLATE_FLOOR;
	return by_size < KP_INFLATE_MAX ? by_size : KP_INFLATE_MAX;
}

uint64_t kp_debug_image_stated(Elf *elf, const char *const *skip, size_t nskip)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	uint64_t sum = 0;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		char plain[256];
		uint64_t size = 0;

		/* the sections kp_debug_image_open takes, by the same names */
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (strncmp(name, ".zdebug_", 8) == 0)
			snprintf(plain, sizeof(plain), ".%s", name + 2);
		else if (strncmp(name, ".debug_", 7) == 0 || strcmp(name, ".gnu_debugaltlink") == 0)
			snprintf(plain, sizeof(plain), "%s", name);
		else
			continue;
		if (skipped(plain, skip, nskip))
			continue;
		if (sh.sh_flags & SHF_COMPRESSED) {
			GElf_Chdr ch;

			if (!gelf_getchdr(scn, &ch))
				continue;
			size = ch.ch_size;
		} else if (name[1] == 'z') {
			Elf_Data *raw = elf_rawdata(scn, NULL);
			const unsigned char *p = raw ? raw->d_buf : NULL;

			if (!p || raw->d_size < 12 || memcmp(p, "ZLIB", 4) != 0)
				continue;
			for (int i = 4; i < 12; i++)
				size = size << 8 | p[i];
		} else {
			continue;
		}
		sum = size > UINT64_MAX - sum ? UINT64_MAX : sum + size;
	}
	return sum;
}

Elf *kp_debug_image_open(Elf *elf, const char *const *skip, size_t nskip,
			 struct kp_debug_image **out)
{
	return kp_debug_image_open_limit(elf, skip, nskip, (uint64_t)1 << 32, out);
}

/* The sections an image keeps and where they go in it. */
struct layout {
	struct kept *kept;
	size_t nkept, cap;
	size_t names_len; /* of the section name table: the empty name first */
	size_t names_off, shoff, total;
};

/* Collects the debug sections of elf not in skip into l, with how each
 * is packed; *packed says whether any is compressed. False when a
 * section's header makes no sense. */
static bool keep_sections(Elf *elf, size_t shstrndx, const char *const *skip, size_t nskip,
			  struct layout *l, bool *packed)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		struct kept k = {.scn = scn};
		const char *name;

		if (!gelf_getshdr(scn, &k.sh) || k.sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, k.sh.sh_name);
		if (!name)
			continue;
		if (strncmp(name, ".zdebug_", 8) == 0) {
			k.packing = GNU_ZLIB;
			name = k.renamed = kp_xasprintf(".%s", name + 2); /* ".debug_..." */
		} else if (strncmp(name, ".debug_", 7) != 0 &&
			   strcmp(name, ".gnu_debugaltlink") != 0) {
			continue;
		}
		if (skipped(name, skip, nskip)) {
			free(k.renamed);
			continue;
		}
		k.name = name;
		if (!read_packing(&k)) {
			free(k.renamed);
			return false;
		}
		*packed |= k.packing != PLAIN;
		kp_xgrow(&l->kept, &l->cap, l->nkept + 1, sizeof(*l->kept));
		l->kept[l->nkept++] = k;
		l->names_len += strlen(name) + 1;
	}
	return true;
}

/* Places the kept sections in the image: header, sections, names
 * (".shstrtab" last), headers. False when the sizes overflow or together
 * exceed limit, checked before anything is allocated (copies count too:
 * section headers of a hostile file may all cover the same bytes). */
static bool lay_out(struct layout *l, uint64_t limit)
{
	uint64_t taken = 0;
	size_t off;

	for (size_t i = 0; i < l->nkept; i++) {
		if (l->kept[i].out_len > limit - taken)
			return false;
		taken += l->kept[i].out_len;
	}
	off = sizeof(Elf64_Ehdr);
	for (size_t i = 0; i < l->nkept; i++) {
		off = align_up(off, l->kept[i].align);
		l->kept[i].out_off = off;
		if (l->kept[i].out_len > SIZE_MAX / 2 - off)
			return false;
		off += l->kept[i].out_len;
	}
	l->names_off = off;
	l->names_len += sizeof(".shstrtab");
	l->shoff = align_up(l->names_off + l->names_len, 8);
	l->total = l->shoff + (l->nkept + 2) * sizeof(Elf64_Shdr);
	return true;
}

/* Writes the image's ELF header, section names and section headers
 * around the sections already in image. */
static void write_headers(void *image, const GElf_Ehdr *eh, const struct layout *l)
{
	char *base = image;
	Elf64_Ehdr *h = image;
	Elf64_Shdr *sh = (void *)(base + l->shoff);
	size_t off = l->names_off + 1; /* names start with the empty name */

	memcpy(h->e_ident, eh->e_ident, EI_NIDENT);
	h->e_type = eh->e_type;
	h->e_machine = eh->e_machine;
	h->e_version = EV_CURRENT;
	h->e_flags = (Elf64_Word)eh->e_flags;
	h->e_ehsize = sizeof(Elf64_Ehdr);
	h->e_shentsize = sizeof(Elf64_Shdr);
	h->e_shoff = l->shoff;
	h->e_shnum = (Elf64_Half)(l->nkept + 2);
	h->e_shstrndx = (Elf64_Half)(l->nkept + 1);
	for (size_t i = 0; i < l->nkept; i++) {
		const struct kept *k = &l->kept[i];
		Elf64_Shdr *s = &sh[i + 1];

		s->sh_name = (Elf64_Word)(off - l->names_off);
		off = (size_t)(stpcpy(base + off, k->name) + 1 - base);
		s->sh_type = k->sh.sh_type;
		s->sh_flags = k->sh.sh_flags & ~(GElf_Xword)(SHF_COMPRESSED | SHF_ALLOC);
		s->sh_offset = k->out_off;
		s->sh_size = k->out_len;
		s->sh_addralign = k->align;
		s->sh_entsize = k->sh.sh_entsize;
	}
	sh[l->nkept + 1].sh_name = (Elf64_Word)(off - l->names_off);
	strcpy(base + off, ".shstrtab");
	sh[l->nkept + 1].sh_type = SHT_STRTAB;
	sh[l->nkept + 1].sh_offset = l->names_off;
	sh[l->nkept + 1].sh_size = l->names_len;
	sh[l->nkept + 1].sh_addralign = 1;
}

Elf *kp_debug_image_open_limit(Elf *elf, const char *const *skip, size_t nskip, uint64_t limit,
			       struct kp_debug_image **out)
{
	struct kp_debug_image *img = NULL;
	struct libdeflate_decompressor *z = NULL;
	struct layout l = {.names_len = 1};
	size_t shstrndx;
	bool packed = false;
	GElf_Ehdr eh;

	*out = NULL;
	if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] !=
		    (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB) ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	if (!keep_sections(elf, shstrndx, skip, nskip, &l, &packed) || !packed ||
	    !lay_out(&l, limit))
		goto fail;
	img = kp_xcalloc(1, sizeof(*img));
	z = libdeflate_alloc_decompressor();
	if (!z || !map_image(img, l.total))
		goto fail;
	for (size_t i = 0; i < l.nkept; i++)
		if (!inflate_into(z, &l.kept[i], (unsigned char *)img->map + l.kept[i].out_off))
			goto fail;
	write_headers(img->map, &eh, &l);
	img->elf = elf_memory((char *)img->map, l.total);
	if (!img->elf || elf_kind(img->elf) != ELF_K_ELF)
		goto fail;
	libdeflate_free_decompressor(z);
	free_kept(l.kept, l.nkept);
	*out = img;
	return img->elf;
fail:
	if (z)
		libdeflate_free_decompressor(z);
	free_kept(l.kept, l.nkept);
	kp_debug_image_free(img);
	return NULL;
}

void kp_debug_image_free(struct kp_debug_image *img)
{
	if (!img)
		return;
	if (img->elf)
		elf_end(img->elf);
	if (img->map)
		munmap(img->map, img->map_len);
	free(img);
}
