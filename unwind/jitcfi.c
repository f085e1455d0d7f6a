/* JIT code's unwinding info (a jitdump's JIT_CODE_UNWINDING_INFO, which
 * node writes with --perf-prof-unwinding-info) as libdw's CFI, so that
 * kprof's rows step through JIT frames as through an object's. libdw
 * reads CFI from an Elf only (dwarf_getcfi_elf), so each code gets a
 * small ELF file in memory (elf_memory): a header, its .eh_frame at the
 * address the info has behind the code, with the code put at 0, and the
 * section names. libdw finds an FDE without .eh_frame_hdr by reading the
 * FDEs in turn: a JIT's info holds one or two. See unwindP.h. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/unwindP.h"
#include "util/xalloc.h"

/* JIT tables kept at most: then they start over (their numbers do not,
 * so rows cached for the old ones are never taken for the new). */
#define MAX_JIT_TABLES 4096
/* An .eh_frame longer than this is not a JIT function's. */
#define MAX_EH_FRAME (64u << 10)

static const char shstrtab[] = "\0.eh_frame\0.shstrtab";

/* Where ji's .eh_frame lies, the code being at 0. Its .eh_frame_hdr (V8
 * writes it right after the .eh_frame) says: its table's first initial
 * location is the code's start relative to the hdr, and its eh_frame_ptr
 * the .eh_frame's relative to its own field (version 1, eh_frame_ptr
 * pcrel sdata4, fde_count udata4, table datarel sdata4). Without a
 * usable hdr, where perf inject puts it: the code's size rounded up to 8. */
static uint64_t eh_frame_at(const struct kp_unwind_jit *ji)
{
	const unsigned char *h = ji->hdr;
	int32_t ptr, loc;
	uint32_t count;
	int64_t at;

	if (ji->hdr_len >= 20 && h[0] == 1 && h[1] == 0x1b && h[2] == 0x03 && h[3] == 0x3b) {
		memcpy(&ptr, h + 4, 4);
		memcpy(&count, h + 8, 4);
		memcpy(&loc, h + 12, 4);
		at = -(int64_t)loc + 4 + ptr; /* the hdr at -loc */
		if (count >= 1 && at >= 0 && at < ((int64_t)1 << 32))
			return (uint64_t)at;
	}
	return (ji->end - ji->start + 7) & ~(uint64_t)7;
}

/* An ELF file holding ji's .eh_frame at vaddr at (caller frees). */
static unsigned char *image_make(const struct kp_unwind_jit *ji, uint64_t at, size_t *size)
{
	size_t off_str = sizeof(Elf64_Ehdr) + ji->eh_frame_len;
	size_t off_sh = (off_str + sizeof(shstrtab) + 7) & ~(size_t)7;
	unsigned char *img;
	Elf64_Ehdr eh = {.e_type = ET_DYN,
			 .e_machine = EM_X86_64,
			 .e_version = EV_CURRENT,
			 .e_shoff = off_sh,
			 .e_ehsize = sizeof(Elf64_Ehdr),
			 .e_shentsize = sizeof(Elf64_Shdr),
			 .e_shnum = 3,
			 .e_shstrndx = 2};
	Elf64_Shdr sh[3] = {{0}};

	*size = off_sh + sizeof(sh);
	img = kp_xcalloc(1, *size);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(img, &eh, sizeof(eh));
	memcpy(img + sizeof(Elf64_Ehdr), ji->eh_frame, ji->eh_frame_len);
	memcpy(img + off_str, shstrtab, sizeof(shstrtab));
	sh[1] = (Elf64_Shdr){.sh_name = 1,
			     .sh_type = SHT_PROGBITS,
			     .sh_flags = SHF_ALLOC,
			     .sh_addr = at,
			     .sh_offset = sizeof(Elf64_Ehdr),
			     .sh_size = ji->eh_frame_len,
			     .sh_addralign = 8};
	sh[2] = (Elf64_Shdr){.sh_name = 11,
			     .sh_type = SHT_STRTAB,
			     .sh_offset = off_str,
			     .sh_size = sizeof(shstrtab),
			     .sh_addralign = 1};
	memcpy(img + off_sh, sh, sizeof(sh));
	return img;
}

void kp_jitcfi_free(struct utab *t)
{
	if (!t)
		return;
	kp_utab_end_cfi(t);
	free(t->image);
	free(t);
}

static void forget_all(struct kp_tables *tb)
{
	size_t pos = 0;
	uint64_t key, v;

	while (kp_u64map_next(&tb->jits, &pos, &key, &v))
		kp_jitcfi_free((struct utab *)(uintptr_t)v);
	kp_u64map_fini(&tb->jits);
	kp_u64map_init(&tb->jits);
}

struct utab *kp_jitcfi_get(struct kp_tables *tb, const struct kp_unwind_jit *ji)
{
	uint64_t v;
	size_t size;
	struct utab *t;

	if (kp_u64map_get(&tb->jits, ji->key, &v))
		return (struct utab *)(uintptr_t)v;
	if (!ji->eh_frame_len || ji->eh_frame_len > MAX_EH_FRAME || ji->end <= ji->start)
		return NULL;
	if (kp_u64map_count(&tb->jits) >= MAX_JIT_TABLES)
		forget_all(tb);
	t = kp_xcalloc(1, sizeof(*t));
	t->jit = true;
	t->obj = KP_JITCFI_OBJ + tb->jit_seq++;
	t->cfi_tried = true;
	t->image = image_make(ji, eh_frame_at(ji), &size);
	t->elf = elf_memory((char *)t->image, size);
	t->cfi = t->elf ? dwarf_getcfi_elf(t->elf) : NULL;
	t->ok = t->cfi != NULL;
	tb->st.jit_codes++;
	/* kept when libdw read nothing too: the code is not asked again */
	kp_u64map_put(&tb->jits, ji->key, (uint64_t)(uintptr_t)t);
	return t->ok ? t : NULL;
}
