/* Unwind tables, per object: the load segments of each object's ELF file
 * (to turn a mapping into a load bias) and its .eh_frame_hdr search table
 * and .eh_frame, read from the file the caller's kp_unwind_objects hands
 * over, a page at a time as libunwind's table search and FDE parsing ask
 * for words (remote.c's access_mem). See unwindP.h. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/unwindP.h"
#include "util/xalloc.h"

/* DW_EH_PE_* pointer encodings used by .eh_frame_hdr */
#define EH_PE_absptr  0x00
#define EH_PE_udata4  0x03
#define EH_PE_sdata4  0x0b
#define EH_PE_udata8  0x04
#define EH_PE_sdata8  0x0c
#define EH_PE_pcrel   0x10
#define EH_PE_datarel 0x30
#define EH_PE_omit    0xff

/* Tables bigger than this are not read (node's are 5 MB). */
#define MAX_TABLE_BYTES ((uint64_t)256 << 20)

/* Unwind tables are read from the object's file a page at a time, the
 * first time a page is needed: an unwind reads a few FDEs and the
 * binary search's path through .eh_frame_hdr, not whole tables (pread,
 * not mmap: a file truncated under a mapping would raise SIGBUS). */
#define TPAGE 4096

static bool pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	unsigned char *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return true;
}

/* The file offset of vaddr, and how many bytes of its segment follow. */
static bool vaddr_to_off(const struct utab *t, uint64_t vaddr, uint64_t *off, uint64_t *left)
{
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct load_seg *s = &t->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
			*off = s->off + (vaddr - s->vaddr);
			*left = s->filesz - (vaddr - s->vaddr);
			return true;
		}
	}
	return false;
}

/* Notes [lo, hi) as table bytes to read on demand. */
static bool add_range(struct utab *t, uint64_t lo, uint64_t hi)
{
	uint64_t off, left;
	struct trange *r = &t->r[t->nr];

	if (hi <= lo || hi - lo > MAX_TABLE_BYTES || !vaddr_to_off(t, lo, &off, &left) ||
	    hi - lo > left)
		return false;
	r->lo = lo;
	r->hi = hi;
	r->off = off;
	r->pages = kp_xcalloc((hi - lo + TPAGE - 1) / TPAGE, sizeof(*r->pages));
	t->nr++;
	return true;
}

/* Decodes an .eh_frame_hdr pointer at p (of hdr at vaddr pv). */
static bool hdr_pointer(const unsigned char *p, const unsigned char *end, uint8_t enc, uint64_t pv,
			uint64_t *val, size_t *len)
{
	uint64_t v = 0;
	int32_t s4;

	switch (enc & 0x0f) {
	case EH_PE_udata4:
	case EH_PE_sdata4:
		if (end - p < 4)
			return false;
		memcpy(&s4, p, 4);
		v = (enc & 0x0f) == EH_PE_sdata4 ? (uint64_t)(int64_t)s4 : (uint32_t)s4;
		*len = 4;
		break;
	case EH_PE_absptr:
	case EH_PE_udata8:
	case EH_PE_sdata8:
		if (end - p < 8)
			return false;
		memcpy(&v, p, 8);
		*len = 8;
		break;
	default:
		return false;
	}
	if ((enc & 0x70) == EH_PE_pcrel)
		v += pv;
	else if ((enc & 0x70) == EH_PE_datarel)
		return false; /* relative to the hdr itself: not used for this field */
	else if (enc & 0x70)
		return false;
	*val = v;
	return true;
}

/* Reads the load segments and the .eh_frame_hdr search table of the ELF
 * file fd (x86-64, as the registers are). */
static void table_load(struct utab *t, int fd)
{
	Elf64_Ehdr eh;
	uint64_t hdr_vaddr = 0, hdr_size = 0, ehf = 0, p_len;
	bool have_hdr = false;
	unsigned char hdr[32];
	size_t len, pos;

	if (fd < 0 || !pread_all(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256)
		return;
	t->img_lo = UINT64_MAX;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		if (!pread_all(fd, &ph, sizeof(ph), eh.e_phoff + (uint64_t)i * sizeof(ph)))
			return;
		if (ph.p_type == PT_LOAD && t->nsegs < MAX_LOADS && ph.p_memsz >= ph.p_filesz &&
		    ph.p_vaddr + ph.p_memsz >= ph.p_vaddr) {
			t->segs[t->nsegs++] =
				(struct load_seg){ph.p_offset, ph.p_filesz, ph.p_vaddr, ph.p_memsz};
			if (ph.p_vaddr < t->img_lo)
				t->img_lo = ph.p_vaddr;
			if (ph.p_vaddr + ph.p_memsz > t->img_hi)
				t->img_hi = ph.p_vaddr + ph.p_memsz;
		} else if (ph.p_type == PT_GNU_EH_FRAME) {
			have_hdr = true;
			hdr_vaddr = ph.p_vaddr;
			hdr_size = ph.p_filesz;
		}
	}
	if (!t->nsegs || !have_hdr || hdr_size < 12)
		return;
	/* version 1; eh_frame_ptr; fde_count (udata4); table of (sdata4
	 * initial location, sdata4 FDE address), both relative to the hdr:
	 * the only table form dwarf_search_unwind_table reads */
	len = hdr_size < sizeof(hdr) ? (size_t)hdr_size : sizeof(hdr);
	{
		uint64_t off, left;

		if (!vaddr_to_off(t, hdr_vaddr, &off, &left) || left < len ||
		    !pread_all(fd, hdr, len, off))
			return;
	}
	if (hdr[0] != 1 || hdr[2] != EH_PE_udata4 || hdr[3] != (EH_PE_datarel | EH_PE_sdata4))
		return;
	if (!hdr_pointer(hdr + 4, hdr + len, hdr[1], hdr_vaddr + 4, &ehf, &p_len))
		return;
	pos = 4 + p_len;
	if (pos + 4 > len)
		return;
	{
		uint32_t c;

		memcpy(&c, hdr + pos, 4);
		t->fde_count = c;
	}
	pos += 4;
	t->hdr_vaddr = hdr_vaddr;
	t->table_vaddr = hdr_vaddr + pos;
	/* a count that runs past the hdr is cut to what is there */
	if (t->fde_count > (hdr_size - pos) / 8)
		t->fde_count = (hdr_size - pos) / 8;
	if (!t->fde_count)
		return;
	/* the hdr, then .eh_frame to the end of its segment's file bytes */
	{
		uint64_t off, left, lo = hdr_vaddr, hi = hdr_vaddr + hdr_size;

		if (!vaddr_to_off(t, ehf, &off, &left))
			return;
		if (ehf >= hi && ehf - hi < 4096) {
			hi = ehf + left; /* adjacent: one range */
		} else if (ehf + left == lo || (ehf < lo && ehf + left >= hi)) {
			lo = ehf < lo ? ehf : lo;
			hi = ehf + left > hi ? ehf + left : hi;
		} else if (!add_range(t, ehf, ehf + left)) {
			return;
		}
		if (!add_range(t, lo, hi))
			return;
	}
	t->ok = true;
}

static void table_free(struct utab *t)
{
	if (!t)
		return;
	kp_utab_end_cfi(t);
	for (size_t i = 0; i < t->nr; i++) {
		for (uint64_t p = 0; p < (t->r[i].hi - t->r[i].lo + TPAGE - 1) / TPAGE; p++)
			free(t->r[i].pages[p]);
		free(t->r[i].pages);
	}
	free(t);
}

struct utab *kp_tables_get(struct kp_tables *tb, uint32_t obj)
{
	uint64_t v;
	struct utab *t;

	if (!obj)
		return NULL;
	if (kp_u64map_get(&tb->tabs, obj, &v))
		return (struct utab *)(uintptr_t)v;
	t = kp_xcalloc(1, sizeof(*t));
	t->obj = obj;
	table_load(t, tb->objs.fd(tb->objs.arg, obj));
	tb->st.objects++;
	if (!t->ok)
		tb->st.objects_no_table++;
	kp_u64map_put(&tb->tabs, obj, (uint64_t)(uintptr_t)t);
	return t;
}

void kp_tables_drop(struct kp_tables *tb, uint32_t obj)
{
	uint64_t v;

	if (!kp_u64map_get(&tb->tabs, obj, &v))
		return;
	tb->st.table_bytes -= ((struct utab *)(uintptr_t)v)->bytes;
	table_free((struct utab *)(uintptr_t)v);
	kp_u64map_del(&tb->tabs, obj);
}

bool kp_tables_bias(const struct utab *t, const struct kp_mapping *m, uint64_t *bias)
{
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct load_seg *s = &t->segs[i];
		uint64_t page_off = s->off & ~(uint64_t)4095;

		if (m->pgoff >= page_off && m->pgoff < s->off + s->filesz) {
			*bias = m->start - (s->vaddr + (m->pgoff - s->off));
			return true;
		}
	}
	return false;
}

/* Page p of range r, read from the object's file on first use; NULL when
 * it cannot be read (the caller closed the object's file). */
static const unsigned char *table_page(struct kp_tables *tb, struct utab *t, struct trange *r,
				       uint64_t p)
{
	uint64_t len = r->hi - r->lo - p * TPAGE;
	int fd;

	if (r->pages[p])
		return r->pages[p];
	fd = tb->objs.fd(tb->objs.arg, t->obj);
	if (len > TPAGE)
		len = TPAGE;
	r->pages[p] = kp_xmalloc(TPAGE);
	if (fd < 0 || !pread_all(fd, r->pages[p], len, r->off + p * TPAGE)) {
		free(r->pages[p]);
		r->pages[p] = NULL;
		return NULL;
	}
	tb->st.table_bytes += TPAGE;
	t->bytes += TPAGE;
	return r->pages[p];
}

int kp_tables_word(struct kp_tables *tb, struct utab *t, struct trange *r, uint64_t va,
		   uint64_t *valp)
{
	unsigned char b[8] = {0};
	uint64_t n, v;

	if (va < r->lo || va >= r->hi)
		return 0;
	if (r->hi - va >= 8 && (va - r->lo) % TPAGE <= TPAGE - 8) {
		/* the common case: 8 bytes inside one page */
		const unsigned char *pg = table_page(tb, t, r, (va - r->lo) / TPAGE);

		if (!pg)
			return -1;
		memcpy(valp, pg + (va - r->lo) % TPAGE, 8);
		return 1;
	}
	n = r->hi - va < 8 ? r->hi - va : 8;
	for (uint64_t i = 0; i < n;) {
		uint64_t at = va + i - r->lo, p = at / TPAGE, in = TPAGE - at % TPAGE;
		const unsigned char *pg = table_page(tb, t, r, p);

		if (!pg)
			return -1;
		if (in > n - i)
			in = n - i;
		memcpy(b + i, pg + at % TPAGE, in);
		i += in;
	}
	memcpy(&v, b, 8);
	*valp = v;
	return 1;
}

void kp_tables_init(struct kp_tables *tb, const struct kp_unwind_objects *objs)
{
	tb->objs = *objs;
	kp_u64map_init(&tb->tabs);
	kp_u64map_init(&tb->jits);
	tb->jit_seq = 0;
	memset(&tb->st, 0, sizeof(tb->st));
}

void kp_tables_fini(struct kp_tables *tb)
{
	size_t pos = 0;
	uint64_t key, v;

	while (kp_u64map_next(&tb->tabs, &pos, &key, &v))
		table_free((struct utab *)(uintptr_t)v);
	kp_u64map_fini(&tb->tabs);
	pos = 0;
	while (kp_u64map_next(&tb->jits, &pos, &key, &v))
		kp_jitcfi_free((struct utab *)(uintptr_t)v);
	kp_u64map_fini(&tb->jits);
}
