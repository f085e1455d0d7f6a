/* libunwind's remote unwinding over one sample: see unwind.h. The shape is
 * perf's util/unwind-libunwind-local.c; what differs is where memory comes
 * from (objects' files through the caller's kp_unwind_objects, tables read
 * a page at a time), the frame-pointer continuation where no table covers a
 * frame, and the bounds that make every walk end. */
#include "unwind/unwind.h"

#include <elf.h>
#include <errno.h>
#include <libunwind.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/u64map.h"
#include "util/xalloc.h"

/* Not in libunwind's public headers, exported by libunwind-generic (perf
 * declares it the same way). */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)

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
#define MAX_LOADS	16
/* Objects an address space's unwinds have used (each with its load bias). */
#define MAX_TOUCHED 64
/* A frame pointer or CFA this far above the stack pointer is not "the
 * snapshot was too small" but garbage. */
#define MAX_STACK_SPAN ((uint64_t)64 << 20)

struct load_seg {
	uint64_t off, filesz, vaddr, memsz;
};

/* Unwind tables are read from the object's file a page at a time, the
 * first time a page is needed: an unwind reads a few FDEs and the
 * binary search's path through .eh_frame_hdr, not whole tables (pread,
 * not mmap: a file truncated under a mapping would raise SIGBUS). */
#define TPAGE 4096

struct trange {
	uint64_t lo, hi; /* vaddr extent */
	uint64_t off;	 /* file offset of lo */
	unsigned char **pages;
};

/* What is kept of one object: its load segments (to turn a mapping into a
 * load bias) and the pages of its unwind tables read so far. */
struct utab {
	uint32_t obj; /* the caller's object id: whose file the pages come from */
	bool ok;      /* has a usable .eh_frame_hdr search table */
	struct load_seg segs[MAX_LOADS];
	size_t nsegs;
	uint64_t hdr_vaddr, table_vaddr, fde_count;
	uint64_t img_lo, img_hi; /* the image's vaddr extent */
	/* by vaddr: .eh_frame_hdr, and .eh_frame to the end of its segment's
	 * file bytes (one range when they are adjacent) */
	struct trange r[2];
	size_t nr;
};

struct kp_unwinder {
	struct kp_unwind_objects objs; /* the caller's object files */
	unw_accessors_t acc;
	struct kp_u64map tabs;	 /* object id -> struct utab * */
	struct kp_u64map spaces; /* pid -> unw_addr_space_t */
	struct kp_unwind_stats st;
};

struct touched {
	struct utab *t;
	uint64_t bias;
};

/* One process's libunwind address spaces and the objects whose tables its
 * unwinds have read: libunwind's cache keeps rules by ip, and a cached rule
 * may still read its CFA expression from the object's .eh_frame in a later
 * unwind that never asked for the object's table.
 *
 * The cache's key is the ip alone, but a return address is looked up at
 * its byte - 1 (the call) and a sampled ip at itself: where a call's
 * return address starts a new CFI row (after a noreturn call, before a
 * .cfi_restore_state block), one key stands for two sets of rules, and a
 * walk would take whichever an earlier sample cached. So the sampled
 * frame's step, the only one whose ip is exact, caches in an address space
 * of its own (leaf); the walk goes on from its caller in as, where every
 * key is a return address or kprof's exact ip - 1 of one. */
struct aspace {
	unw_addr_space_t as;
	unw_addr_space_t leaf;
	struct touched t[MAX_TOUCHED];
	size_t nt;
};

/* One unwind's state: libunwind hands it to every accessor as arg. */
struct uctx {
	struct kp_unwinder *u;
	const struct kp_unwind_input *in;
	/* registers by libunwind's numbering (UNW_X86_64_RAX .. RIP) */
	uint64_t regs[17];
	uint32_t have;	      /* bit per register known */
	uint64_t sp0;	      /* address of stack[0] */
	struct aspace *space; /* the process's address space */
	bool noinfo;	      /* the step's find_proc_info found no table */
	bool in_search;	      /* inside find_proc_info's table search */
	bool beyond;	      /* a read fell above the snapshot (it was too small) */
	/* the table range the last read outside the copy found (libunwind's
	 * table search and FDE parsing read word after word from one range) */
	struct utab *hit_t;
	struct trange *hit_r;
	uint64_t hit_bias;
};

/* ---- unwind tables, once per object ---- */

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
	for (size_t i = 0; i < t->nr; i++) {
		for (uint64_t p = 0; p < (t->r[i].hi - t->r[i].lo + TPAGE - 1) / TPAGE; p++)
			free(t->r[i].pages[p]);
		free(t->r[i].pages);
	}
	free(t);
}

/* The tables of object obj, read on first use. NULL for obj 0. */
static struct utab *table_get(struct kp_unwinder *u, uint32_t obj)
{
	uint64_t v;
	struct utab *t;

	if (!obj)
		return NULL;
	if (kp_u64map_get(&u->tabs, obj, &v))
		return (struct utab *)(uintptr_t)v;
	t = kp_xcalloc(1, sizeof(*t));
	t->obj = obj;
	table_load(t, u->objs.fd(u->objs.arg, obj));
	u->st.objects++;
	if (!t->ok)
		u->st.objects_no_table++;
	kp_u64map_put(&u->tabs, obj, (uint64_t)(uintptr_t)t);
	return t;
}

/* The load bias of the object mapped as m (address = vaddr + bias). */
static bool map_bias(const struct utab *t, const struct kp_unwind_map *m, uint64_t *bias)
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

/* ---- libunwind's accessors ---- */

static void touch(struct uctx *c, struct utab *t, uint64_t bias)
{
	struct aspace *a = c->space;

	for (size_t i = 0; i < a->nt; i++)
		if (a->t[i].t == t && a->t[i].bias == bias)
			return;
	if (a->nt == MAX_TOUCHED) {
		/* forget the rules that may read the objects forgotten here */
		unw_flush_cache(a->as, 0, 0);
		unw_flush_cache(a->leaf, 0, 0);
		a->nt = 0;
		c->hit_r = NULL;
	}
	a->t[a->nt].t = t;
	a->t[a->nt].bias = bias;
	a->nt++;
}

/* Page p of range r, read from the object's file on first use; NULL when
 * it cannot be read (the caller closed the object's file). */
static const unsigned char *table_page(struct kp_unwinder *u, struct utab *t, struct trange *r,
				       uint64_t p)
{
	uint64_t len = r->hi - r->lo - p * TPAGE;
	int fd;

	if (r->pages[p])
		return r->pages[p];
	fd = u->objs.fd(u->objs.arg, t->obj);
	if (len > TPAGE)
		len = TPAGE;
	r->pages[p] = kp_xmalloc(TPAGE);
	if (fd < 0 || !pread_all(fd, r->pages[p], len, r->off + p * TPAGE)) {
		free(r->pages[p]);
		r->pages[p] = NULL;
		return NULL;
	}
	u->st.table_bytes += TPAGE;
	return r->pages[p];
}

/* Reads up to 8 bytes at vaddr va of range r into *valp (zeros past its
 * end): 1 done, 0 not in r, -1 unreadable. */
static int range_word(struct kp_unwinder *u, struct utab *t, struct trange *r, uint64_t va,
		      unw_word_t *valp)
{
	unsigned char b[8] = {0};
	uint64_t n, v;

	if (va < r->lo || va >= r->hi)
		return 0;
	if (r->hi - va >= 8 && (va - r->lo) % TPAGE <= TPAGE - 8) {
		/* the common case: 8 bytes inside one page */
		const unsigned char *pg = table_page(u, t, r, (va - r->lo) / TPAGE);

		if (!pg)
			return -1;
		memcpy(valp, pg + (va - r->lo) % TPAGE, 8);
		return 1;
	}
	n = r->hi - va < 8 ? r->hi - va : 8;
	for (uint64_t i = 0; i < n;) {
		uint64_t at = va + i - r->lo, p = at / TPAGE, in = TPAGE - at % TPAGE;
		const unsigned char *pg = table_page(u, t, r, p);

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

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write, void *arg)
{
	struct uctx *c = arg;
	const struct kp_unwind_input *in = c->in;

	(void)as;
	if (write)
		return -UNW_EINVAL;
	if (addr >= c->sp0 && addr - c->sp0 + 8 <= in->stack_len) {
		memcpy(valp, in->stack + (addr - c->sp0), 8);
		return 0;
	}
	if (c->hit_r) {
		int r = range_word(c->u, c->hit_t, c->hit_r, addr - c->hit_bias, valp);

		if (r)
			return r > 0 ? 0 : -UNW_EINVAL;
	}
	for (size_t i = 0; i < c->space->nt; i++) {
		struct utab *t = c->space->t[i].t;
		uint64_t va = addr - c->space->t[i].bias;

		for (size_t k = 0; k < t->nr; k++) {
			int r = range_word(c->u, t, &t->r[k], va, valp);

			if (r) {
				c->hit_t = t;
				c->hit_r = &t->r[k];
				c->hit_bias = c->space->t[i].bias;
				return r > 0 ? 0 : -UNW_EINVAL;
			}
		}
	}
	/* Elsewhere in a touched object's image, while the table search reads
	 * a CIE: what its personality pointer leads to (its GOT entry), which
	 * unwinding never uses. Not for the frames' own reads: a garbage CFA
	 * there would read zeros (an "outermost" frame) where a walk in a
	 * fresh address space fails, depending on what earlier walks touched. */
	for (size_t i = 0; c->in_search && i < c->space->nt; i++) {
		uint64_t va = addr - c->space->t[i].bias;

		if (va >= c->space->t[i].t->img_lo && va < c->space->t[i].t->img_hi) {
			*valp = 0;
			return 0;
		}
	}
	if (addr >= c->sp0 && addr - c->sp0 < MAX_STACK_SPAN)
		c->beyond = true;
	return -UNW_EINVAL;
}

/* libunwind's x86-64 register numbers -> perf's */
static const int8_t unw_to_perf[17] = {
	[UNW_X86_64_RAX] = KP_PERF_REG_AX,
	[UNW_X86_64_RDX] = KP_PERF_REG_DX,
	[UNW_X86_64_RCX] = KP_PERF_REG_CX,
	[UNW_X86_64_RBX] = KP_PERF_REG_BX,
	[UNW_X86_64_RSI] = KP_PERF_REG_SI,
	[UNW_X86_64_RDI] = KP_PERF_REG_DI,
	[UNW_X86_64_RBP] = KP_PERF_REG_BP,
	[UNW_X86_64_RSP] = KP_PERF_REG_SP,
	[UNW_X86_64_R8] = 16,
	[UNW_X86_64_R9] = 17,
	[UNW_X86_64_R10] = 18,
	[UNW_X86_64_R11] = 19,
	[UNW_X86_64_R12] = 20,
	[UNW_X86_64_R13] = 21,
	[UNW_X86_64_R14] = 22,
	[UNW_X86_64_R15] = 23,
	[UNW_X86_64_RIP] = KP_PERF_REG_IP,
};

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp, int write, void *arg)
{
	struct uctx *c = arg;

	(void)as;
	if (write || reg < 0 || reg > UNW_X86_64_RIP || !(c->have & (1u << reg)))
		return -UNW_EBADREG;
	*valp = c->regs[reg];
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			void *arg)
{
	(void)as;
	(void)reg;
	(void)val;
	(void)write;
	(void)arg;
	return -UNW_EINVAL;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct uctx *c = arg;
	struct kp_unwind_map m;
	struct utab *t;
	unw_dyn_info_t di;
	uint64_t bias;
	int ret;

	if (!c->in->find_map(c->in->map_arg, ip, &m) || !(t = table_get(c->u, m.obj)) || !t->ok ||
	    !map_bias(t, &m, &bias))
		goto noinfo;
	touch(c, t, bias);
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = m.start;
	di.end_ip = m.end;
	di.u.rti.segbase = bias + t->hdr_vaddr;
	di.u.rti.table_data = bias + t->table_vaddr;
	/* in words; each entry is two 32-bit values */
	di.u.rti.table_len = t->fde_count * 8 / sizeof(unw_word_t);
	c->in_search = true;
	ret = dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
	c->in_search = false;
	if (ret == -UNW_ENOINFO)
		goto noinfo;
	return ret;
noinfo:
	c->noinfo = true;
	return -UNW_ENOINFO;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	(void)as;
	(void)pi;
	(void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dil_addr, void *arg)
{
	(void)as;
	(void)dil_addr;
	(void)arg;
	return -UNW_ENOINFO;
}

static int resume(unw_addr_space_t as, unw_cursor_t *cu, void *arg)
{
	(void)as;
	(void)cu;
	(void)arg;
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			 unw_word_t *off, void *arg)
{
	(void)as;
	(void)addr;
	(void)buf;
	(void)len;
	(void)off;
	(void)arg;
	return -UNW_EINVAL;
}

/* ---- the unwinder ---- */

static void space_free(struct aspace *a)
{
	if (!a)
		return;
	if (a->as)
		unw_destroy_addr_space(a->as);
	if (a->leaf)
		unw_destroy_addr_space(a->leaf);
	free(a);
}

struct kp_unwinder *kp_unwind_new(const struct kp_unwind_objects *objs)
{
	struct kp_unwinder *u = kp_xcalloc(1, sizeof(*u));

	u->objs = *objs;
	u->acc.find_proc_info = find_proc_info;
	u->acc.put_unwind_info = put_unwind_info;
	u->acc.get_dyn_info_list_addr = get_dyn_info_list_addr;
	u->acc.access_mem = access_mem;
	u->acc.access_reg = access_reg;
	u->acc.access_fpreg = access_fpreg;
	u->acc.resume = resume;
	u->acc.get_proc_name = get_proc_name;
	kp_u64map_init(&u->tabs);
	kp_u64map_init(&u->spaces);
	return u;
}

void kp_unwind_free(struct kp_unwinder *u)
{
	size_t pos = 0;
	uint64_t key, v;

	if (!u)
		return;
	while (kp_u64map_next(&u->tabs, &pos, &key, &v))
		table_free((struct utab *)(uintptr_t)v);
	pos = 0;
	while (kp_u64map_next(&u->spaces, &pos, &key, &v))
		space_free((struct aspace *)(uintptr_t)v);
	kp_u64map_fini(&u->tabs);
	kp_u64map_fini(&u->spaces);
	free(u);
}

/* The process's address space: libunwind caches register rules by ip, so
 * processes never share one. */
static struct aspace *space_get(struct kp_unwinder *u, pid_t pid)
{
	uint64_t v;
	struct aspace *a;

	if (kp_u64map_get(&u->spaces, (uint64_t)(uint32_t)pid, &v))
		return (struct aspace *)(uintptr_t)v;
	a = kp_xcalloc(1, sizeof(*a));
	a->as = unw_create_addr_space(&u->acc, 0);
	a->leaf = unw_create_addr_space(&u->acc, 0);
	if (!a->as || !a->leaf) {
		space_free(a);
		return NULL;
	}
	unw_set_caching_policy(a->as, UNW_CACHE_GLOBAL);
	unw_set_caching_policy(a->leaf, UNW_CACHE_GLOBAL);
	kp_u64map_put(&u->spaces, (uint64_t)(uint32_t)pid, (uint64_t)(uintptr_t)a);
	return a;
}

void kp_unwind_flush(struct kp_unwinder *u, pid_t pid)
{
	uint64_t v;

	if (kp_u64map_get(&u->spaces, (uint64_t)(uint32_t)pid, &v)) {
		struct aspace *a = (struct aspace *)(uintptr_t)v;

		unw_flush_cache(a->as, 0, 0);
		unw_flush_cache(a->leaf, 0, 0);
		a->nt = 0;
	}
}

void kp_unwind_forget(struct kp_unwinder *u, pid_t pid)
{
	uint64_t v;

	if (kp_u64map_get(&u->spaces, (uint64_t)(uint32_t)pid, &v)) {
		space_free((struct aspace *)(uintptr_t)v);
		kp_u64map_del(&u->spaces, (uint64_t)(uint32_t)pid);
	}
}

static bool perf_reg(const struct kp_unwind_input *in, int bit, uint64_t *v)
{
	if (!in->regs || !(in->regs_mask & (1ULL << bit)))
		return false;
	*v = in->regs[__builtin_popcountll(in->regs_mask & ((1ULL << bit) - 1))];
	return true;
}

/* Sets up c with the sample's registers; false without ip and sp. */
static bool ctx_init(struct uctx *c, struct kp_unwinder *u, const struct kp_unwind_input *in)
{
	memset(c, 0, sizeof(*c));
	c->u = u;
	c->in = in;
	for (int r = 0; r <= UNW_X86_64_RIP; r++)
		if (perf_reg(in, unw_to_perf[r], &c->regs[r]))
			c->have |= 1u << r;
	c->sp0 = c->regs[UNW_X86_64_RSP];
	return (c->have & (1u << UNW_X86_64_RIP)) && (c->have & (1u << UNW_X86_64_RSP)) &&
	       in->find_map;
}

/* A word of the snapshot, if addr is inside it. */
static bool stack_word(const struct uctx *c, uint64_t addr, uint64_t *v)
{
	if (addr < c->sp0 || addr - c->sp0 + 8 > c->in->stack_len)
		return false;
	memcpy(v, c->in->stack + (addr - c->sp0), 8);
	return true;
}

/* Is addr code, and does an unwind table cover its object? */
static bool is_code(struct uctx *c, uint64_t addr, bool *has_table)
{
	struct kp_unwind_map m;
	const struct utab *t;

	if (!addr || !c->in->find_map(c->in->map_arg, addr, &m))
		return false;
	t = table_get(c->u, m.obj);
	*has_table = t && t->ok;
	return true;
}

/* Where a frame-pointer segment stopped. */
enum fp_stop {
	FP_END,	    /* the walk is over: end says why */
	FP_REENTER, /* a return address with tables: continue with CFI from regs */
};

struct walk {
	uint64_t *ips;
	size_t n, max;
	enum kp_unwind_end end;
	size_t fp_frames;
	uint64_t sp;
};

/* The frame-pointer chain from a frame (ip, sp, bp) that no table covers,
 * inside the snapshot. A leaf sampled before its push/mov of the frame
 * pointer, or after its pop, still has bp = its caller's frame: then the
 * return address sits at sp (or above the pushed bp at sp + 8) and the
 * caller would be skipped; that state is recognized from the snapshot.
 * On FP_REENTER, ip, sp and bp are the frame to continue from with CFI. */
static enum fp_stop fp_walk(struct uctx *c, struct walk *w, bool leaf, uint64_t *ip, uint64_t *sp,
			    uint64_t *bp)
{
	uint64_t top = c->sp0 + c->in->stack_len, w0, w1;
	bool tab = false;

	if (leaf && stack_word(c, *sp, &w0)) {
		uint64_t ret = 0, nsp = 0;

		if (w0 != *bp && is_code(c, w0, &tab)) {
			ret = w0; /* before push %rbp, or after pop %rbp */
			nsp = *sp + 8;
		} else if (w0 == *bp && stack_word(c, *sp + 8, &w1) && is_code(c, w1, &tab)) {
			ret = w1; /* between push %rbp and mov %rsp, %rbp */
			nsp = *sp + 16;
		}
		if (ret) {
			if (w->n == w->max) {
				w->end = KP_UNWIND_DEPTH;
				return FP_END;
			}
			w->ips[w->n++] = ret;
			w->fp_frames++;
			*ip = ret;
			*sp = nsp;
			w->sp = nsp;
			if (tab)
				return FP_REENTER;
		}
	}
	for (;;) {
		uint64_t next = 0, ret = 0;

		if (*bp == 0) {
			w->end = KP_UNWIND_OUTERMOST;
			return FP_END;
		}
		/* a frame must lie above the stack pointer, aligned, inside
		 * the snapshot */
		if ((*bp & 7) || *bp < *sp) {
			w->end = KP_UNWIND_BAD_FRAME;
			return FP_END;
		}
		if (*bp + 16 > top || *bp + 16 < *bp) {
			w->end = *bp - c->sp0 < MAX_STACK_SPAN ? KP_UNWIND_SNAPSHOT
							       : KP_UNWIND_BAD_FRAME;
			return FP_END;
		}
		stack_word(c, *bp, &next);
		stack_word(c, *bp + 8, &ret);
		if (ret == 0) {
			w->end = KP_UNWIND_OUTERMOST;
			return FP_END;
		}
		if (!is_code(c, ret, &tab)) {
			w->end = KP_UNWIND_BAD_FRAME;
			return FP_END;
		}
		if (w->n == w->max) {
			w->end = KP_UNWIND_DEPTH;
			return FP_END;
		}
		w->ips[w->n++] = ret;
		w->fp_frames++;
		*ip = ret;
		*sp = *bp + 16;
		w->sp = *sp;
		if (tab) {
			*bp = next;
			return FP_REENTER;
		}
		/* the next frame must be further up the stack */
		if (next != 0 && next <= *bp) {
			w->end = KP_UNWIND_BAD_FRAME;
			return FP_END;
		}
		*bp = next;
	}
}

enum dw_stop {
	DW_END,	 /* the walk is over: end says why */
	DW_FP,	 /* no table: go on with the frame-pointer chain */
	DW_NEXT, /* one step done (one): go on with CFI from c->regs */
};

/* The caller's registers, as the cursor's step found them, into c (read
 * whole first: the cursor reads the registers it kept through c). */
static void cursor_regs(struct uctx *c, unw_cursor_t *cur)
{
	uint64_t regs[17] = {0};
	uint32_t have = 0;

	for (int r = 0; r <= UNW_X86_64_RIP; r++) {
		unw_word_t v;

		if (unw_get_reg(cur, r, &v) == 0) {
			regs[r] = v;
			have |= 1u << r;
		}
	}
	memcpy(c->regs, regs, sizeof(regs));
	c->have = have;
}

/* The CFI segment from the cursor's frame on (one step only with one).
 * On DW_FP the frame-pointer chain goes on from (*ip, *sp, *bp). */
static enum dw_stop dwarf_walk(struct uctx *c, unw_cursor_t *cur, struct walk *w, uint64_t *ip,
			       uint64_t *sp, uint64_t *bp, bool one)
{
	for (;;) {
		unw_word_t nip = 0, nsp = 0, nbp = 0;
		int ret;

		c->noinfo = false;
		c->beyond = false;
		ret = unw_step(cur);
		/* No table covered this frame (libunwind looks up ip - 1 for a
		 * return address): libunwind guessed along bp on its own; walk
		 * it ourselves instead, validated. */
		if (c->noinfo)
			return DW_FP;
		if (ret == 0) {
			w->end = KP_UNWIND_OUTERMOST;
			return DW_END;
		}
		if (ret < 0) {
			w->end = c->beyond ? KP_UNWIND_SNAPSHOT : KP_UNWIND_BAD_FRAME;
			return DW_END;
		}
		unw_get_reg(cur, UNW_REG_IP, &nip);
		unw_get_reg(cur, UNW_REG_SP, &nsp);
		if (unw_get_reg(cur, UNW_X86_64_RBP, &nbp) < 0)
			nbp = 0;
		if (nip == 0) {
			w->end = KP_UNWIND_OUTERMOST;
			return DW_END;
		}
		/* callers live higher up the stack: anything else loops */
		if (nsp <= *sp) {
			w->end = KP_UNWIND_BAD_FRAME;
			return DW_END;
		}
		{
			bool tab;

			if (!is_code(c, nip, &tab)) {
				w->end = KP_UNWIND_BAD_FRAME;
				return DW_END;
			}
		}
		if (w->n == w->max) {
			w->end = KP_UNWIND_DEPTH;
			return DW_END;
		}
		w->ips[w->n++] = nip;
		w->sp = nsp;
		*ip = nip;
		*sp = nsp;
		*bp = nbp;
		if (one) {
			cursor_regs(c, cur);
			return DW_NEXT;
		}
	}
}

int kp_unwind_stack(struct kp_unwinder *u, const struct kp_unwind_input *in, uint64_t *ips,
		    size_t max, struct kp_unwind_result *res)
{
	struct uctx c;
	struct walk w = {.ips = ips, .max = max, .end = KP_UNWIND_DEPTH};
	struct aspace *a;
	uint64_t ip, sp, bp;
	bool leaf = true;

	memset(res, 0, sizeof(*res));
	if (!max || !ctx_init(&c, u, in) || !(a = space_get(u, in->pid))) {
		res->end = KP_UNWIND_NO_REGS;
		return -EINVAL;
	}
	c.space = a;
	ip = c.regs[UNW_X86_64_RIP];
	sp = c.regs[UNW_X86_64_RSP];
	bp = c.have & (1u << UNW_X86_64_RBP) ? c.regs[UNW_X86_64_RBP] : 0;
	ips[w.n++] = ip;
	w.sp = sp;
	/* at most one segment per frame: each one adds a frame or ends */
	for (size_t seg = 0; seg <= max; seg++) {
		unw_cursor_t cur;
		bool tab = false;
		enum dw_stop r;

		if (!is_code(&c, ip, &tab)) {
			w.end = KP_UNWIND_BAD_FRAME;
			break;
		}
		if (tab) {
			if (!leaf) {
				/* re-entering CFI from a frame-pointer frame: only
				 * ip, sp and bp are known */
				c.have = 1u << UNW_X86_64_RIP | 1u << UNW_X86_64_RSP |
					 1u << UNW_X86_64_RBP;
				/* ip is a return address: libunwind takes the first
				 * frame's as exact, so give it the call's own byte
				 * (the rules in force at the call, also when the call
				 * is its function's last instruction) */
				c.regs[UNW_X86_64_RIP] = ip - 1;
				c.regs[UNW_X86_64_RSP] = sp;
				c.regs[UNW_X86_64_RBP] = bp;
			}
			if (unw_init_remote(&cur, leaf ? a->leaf : a->as, &c) < 0) {
				w.end = KP_UNWIND_BAD_FRAME;
				break;
			}
			r = dwarf_walk(&c, &cur, &w, &ip, &sp, &bp, leaf);
			if (r == DW_NEXT) {
				/* on from the caller, its ip a return address: the
				 * call's own byte, as when re-entering CFI (a sample
				 * inside a signal trampoline, whose caller's ip is
				 * exact, is looked up one byte early) */
				c.regs[UNW_X86_64_RIP] = ip - 1;
				if (unw_init_remote(&cur, a->as, &c) < 0) {
					w.end = KP_UNWIND_BAD_FRAME;
					break;
				}
				r = dwarf_walk(&c, &cur, &w, &ip, &sp, &bp, false);
			}
			if (r == DW_END)
				break;
		}
		/* the prologue check is for the sampled frame alone */
		if (fp_walk(&c, &w, w.n == 1, &ip, &sp, &bp) == FP_END)
			break;
		leaf = false;
	}
	res->n = w.n;
	res->end = w.end;
	res->fp_frames = w.fp_frames;
	res->last_sp = w.sp;
	return 0;
}

uint64_t kp_unwind_leaf(struct kp_unwinder *u, const struct kp_unwind_input *in, uint64_t fp_ret)
{
	struct uctx c;
	struct aspace *a;
	unw_cursor_t cur;
	unw_word_t ip, bp, nip = 0, nbp = 0, nsp = 0;
	bool tab;

	if (!ctx_init(&c, u, in) || !(c.have & (1u << UNW_X86_64_RBP)) ||
	    !(a = space_get(u, in->pid)))
		return 0;
	c.space = a;
	ip = c.regs[UNW_X86_64_RIP];
	bp = c.regs[UNW_X86_64_RBP];
	if (!is_code(&c, ip, &tab) || !tab || unw_init_remote(&cur, a->leaf, &c) < 0)
		return 0;
	if (unw_step(&cur) <= 0 || c.noinfo)
		return 0;
	unw_get_reg(&cur, UNW_REG_IP, &nip);
	unw_get_reg(&cur, UNW_REG_SP, &nsp);
	if (unw_get_reg(&cur, UNW_X86_64_RBP, &nbp) < 0)
		return 0;
	/* The function has not set up its frame when its CFI leaves the
	 * frame pointer as it was: then the chain's first return address is
	 * its caller's, and the one CFI found is the missing frame. */
	if (nip == fp_ret || nbp != bp || nsp <= c.regs[UNW_X86_64_RSP] || !is_code(&c, nip, &tab))
		return 0;
	return nip;
}

void kp_unwind_stats(const struct kp_unwinder *u, struct kp_unwind_stats *st)
{
	*st = u->st;
}
