#include "symbolize/dwarf_raw.h"

#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "symbolize/idmap.h"
#include "util/hash.h"
#include "util/xalloc.h"

/* What a DIE reader does with an attribute: most are skipped. */
enum {
	A_SKIP,
	A_LOW_PC,
	A_HIGH_PC,
	A_RANGES,
	A_SIBLING,
	A_ENTRY_PC,
	A_LANGUAGE,
	A_ADDR_BASE,
	A_RNGLISTS_BASE,
	A_STR_OFFSETS_BASE,
	/* from here: read only by kp_dwraw_attr, skipped by a walk */
	A_NAME = KP_DWRAW_AT_NAME,
	A_LINKAGE_NAME = KP_DWRAW_AT_LINKAGE_NAME,
	A_MIPS_LINKAGE_NAME = KP_DWRAW_AT_MIPS_LINKAGE_NAME,
	A_ABSTRACT_ORIGIN = KP_DWRAW_AT_ABSTRACT_ORIGIN,
	A_SPECIFICATION = KP_DWRAW_AT_SPECIFICATION,
};

_Static_assert(A_STR_OFFSETS_BASE < A_NAME, "walk kinds before name kinds");

/* One attribute of an abbreviation: 4 bytes, as a large file has
 * hundreds of thousands of them. */
struct attrspec {
	uint16_t form; /* UINT16_MAX: unknown (a DIE using it fails to read) */
	uint8_t kind;  /* A_* */
	int8_t size;   /* of the value in the DIE, -1 when it varies */
};

struct abbrev {
	uint16_t tag; /* 0: no abbreviation with this code */
	bool children;
	bool plain;	/* no attribute the reader decodes */
	int32_t fixed;	/* size of all the attributes, -1 when it varies */
	uint32_t first; /* specs[first .. first + n) */
	uint16_t n;
	/* the specs a walk decodes all lie in [ilo, ihi); with a fixed size,
	 * spec ilo starts lo_off bytes in: the others are jumped over */
	uint16_t ilo, ihi, lo_off;
};

/* Tables whose codes run from 1 without big gaps (all of them, in
 * practice) are arrays by code; the others sorted by code. */
#define DENSE_MAX 4096

struct sparse {
	uint64_t code;
	uint32_t seq; /* order in the table: the first definition of a code wins */
	struct abbrev ab;
};

/* DW_FORM_implicit_const values, by spec index (rare: kept aside). */
struct implicit {
	uint32_t spec;
	int64_t value;
};

/* Value sizes depend on the unit's address and offset sizes (and
 * DW_FORM_ref_addr on DWARF 2): a table is parsed once per such shape. */
struct shape {
	uint8_t addr_size, offset_size, ref_addr_size;
};

/* An abbreviation table, parsed whole on first use (a walk needs nearly
 * every code of the tables it meets), into exact-size arrays. */
struct kp_dwraw_abbrevs {
	uint64_t off; /* in .debug_abbrev */
	struct shape shape;
	bool bad;	      /* no abbreviation parses there */
	struct abbrev *dense; /* by code, below ndense */
	size_t ndense;
	struct sparse *sparse; /* sorted by code, when not dense */
	size_t nsparse;
	struct attrspec *specs;
	struct implicit *imp; /* sorted by spec */
	size_t nimp;
};

/* Memory for the tables, which live as long as the reader: one region
 * in huge pages (every first touch of a 4 KiB page is a fault, and faults
 * are dear on virtual machines), malloc beyond it. */
struct arena {
	uint8_t *p;
	size_t used, cap, map_len;
	void *map;
	void **spill;
	size_t nspill, spill_cap;
};

/* A .debug_aranges entry. */
struct arange {
	uint64_t lo, hi; /* [lo, hi) */
	uint64_t unit;	 /* its unit's header offset in .debug_info */
	uint32_t seq;	 /* order in the section: ties keep it */
};

struct kp_dwraw {
	struct kp_dwraw_secs s;
	struct kp_dwraw_abbrevs **tabs; /* id = index + 1 in by_off */
	size_t ntabs, tabs_cap;
	struct kp_idmap by_off;
	struct arena arena;
	uint64_t *units; /* unit header offsets, ascending */
	size_t nunits;
	uint64_t units_end; /* past the last unit that parses */
	bool units_listed;
	struct arange *aranges; /* sorted by lo */
	size_t naranges;
	bool aranges_read;
	/* parse scratch, reused from one table to the next, sized for the
	 * largest table the section could hold (touched only as far as used) */
	struct sparse *sc_ab;
	struct attrspec *sc_specs;
	struct implicit *sc_imp;
	/* attr_kind for attributes below 0x80, form_size for forms below
	 * 0x30 in the shape last parsed */
	uint8_t kinds[0x80];
	bool kinds_set;
	int8_t sizes[0x30];
	struct shape sizes_shape; /* zero: none yet */
};

/* A bounded reader: any read past end sets bad and yields zeros, so a
 * parse checks once at the end of a record instead of at every field. */
struct cur {
	const uint8_t *p, *end;
	bool bad;
};

static inline uint64_t rd_n(struct cur *c, size_t n)
{
	uint64_t v = 0;

	if ((size_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
	/* little-endian DWARF: the files kprof reads are native ones of
	 * little-endian machines */
	switch (n) {
	case 1:
		v = c->p[0];
		break;
	case 2: {
		uint16_t x;

		memcpy(&x, c->p, 2);
		v = x;
		break;
	}
	case 4: {
		uint32_t x;

		memcpy(&x, c->p, 4);
		v = x;
		break;
	}
	case 8:
		memcpy(&v, c->p, 8);
		break;
	default:
		for (size_t i = 0; i < n; i++)
			v |= (uint64_t)c->p[i] << (8 * i);
	}
	c->p += n;
	return v;
}

static inline uint8_t rd_u8(struct cur *c)
{
	if (c->p >= c->end) {
		c->bad = true;
		return 0;
	}
	return *c->p++;
}

/* ULEB128; saturates at UINT64_MAX when the value does not fit (a huge
 * value is as wrong as any other, and the bytes are still consumed). */
static inline uint64_t rd_uleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;

	if (c->p < c->end && *c->p < 0x80)
		return *c->p++; /* most of them */
	for (;;) {
		uint8_t b;

		if (c->p >= c->end) {
			c->bad = true;
			return 0;
		}
		b = *c->p++;
		if (shift < 64) {
			uint64_t part = (uint64_t)(b & 0x7f);

			if (shift > 57 && (part >> (64 - shift)) != 0)
				v = UINT64_MAX;
			else if (v != UINT64_MAX)
				v |= part << shift;
		} else if (b & 0x7f) {
			v = UINT64_MAX;
		}
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
}

static inline int64_t rd_sleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (c->p >= c->end) {
			c->bad = true;
			return 0;
		}
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

static inline void skip_n(struct cur *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return;
	}
	c->p += n;
}

#define HUGE_PAGE ((size_t)2 << 20)

/* Reserves the arena: address space only, touched as tables fill it. */
static void arena_init(struct arena *a, size_t want)
{
	size_t len = (want + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uint8_t *p, *start;

	if (want < HUGE_PAGE / 2) {
		/* small files: pages of the usual size will do */
		len = (want + 4095) & ~(size_t)4095;
		a->map =
			mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (a->map == MAP_FAILED) {
			a->map = NULL;
			return;
		}
		a->p = a->map;
		a->map_len = a->cap = len;
		return;
	}
	p = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return;
	start = (uint8_t *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	if (start > p)
		munmap(p, (size_t)(start - p));
	if (start + len < p + len + HUGE_PAGE)
		munmap(start + len, (size_t)(p + len + HUGE_PAGE - (start + len)));
	madvise(start, len, MADV_HUGEPAGE);
	a->map = a->p = start;
	a->map_len = a->cap = len;
}

/* n bytes, 8-aligned, zeroed; freed with the arena. */
static void *arena_alloc(struct arena *a, size_t n)
{
	void *q;

	n = (n + 7) & ~(size_t)7;
	if (a->p && n <= a->cap - a->used) {
		q = a->p + a->used;
		a->used += n;
		return q; /* fresh anonymous memory is zero */
	}
	q = kp_xcalloc(1, n);
	kp_xgrow(&a->spill, &a->spill_cap, a->nspill + 1, sizeof(*a->spill));
	a->spill[a->nspill++] = q;
	return q;
}

static void arena_fini(struct arena *a)
{
	for (size_t i = 0; i < a->nspill; i++)
		free(a->spill[i]);
	free(a->spill);
	if (a->map)
		munmap(a->map, a->map_len);
}

static uint8_t attr_kind(uint64_t at)
{
	switch (at) {
	case DW_AT_low_pc:
		return A_LOW_PC;
	case DW_AT_high_pc:
		return A_HIGH_PC;
	case DW_AT_ranges:
		return A_RANGES;
	case DW_AT_sibling:
		return A_SIBLING;
	case DW_AT_entry_pc:
		return A_ENTRY_PC;
	case DW_AT_language:
		return A_LANGUAGE;
	case DW_AT_addr_base:
	case DW_AT_GNU_addr_base:
		return A_ADDR_BASE;
	case DW_AT_rnglists_base:
		return A_RNGLISTS_BASE;
	case DW_AT_str_offsets_base:
		return A_STR_OFFSETS_BASE;
	case DW_AT_name:
		return A_NAME;
	case DW_AT_linkage_name:
		return A_LINKAGE_NAME;
	case DW_AT_MIPS_linkage_name:
		return A_MIPS_LINKAGE_NAME;
	case DW_AT_abstract_origin:
		return A_ABSTRACT_ORIGIN;
	case DW_AT_specification:
		return A_SPECIFICATION;
	default:
		return A_SKIP;
	}
}

/* The size of a value of this form in a DIE, or -1 when it varies (or the
 * form is unknown). */
static int8_t form_size(uint64_t form, const struct shape *sh)
{
	switch (form) {
	case DW_FORM_addr:
		return (int8_t)sh->addr_size;
	case DW_FORM_data1:
	case DW_FORM_ref1:
	case DW_FORM_flag:
	case DW_FORM_strx1:
	case DW_FORM_addrx1:
		return 1;
	case DW_FORM_data2:
	case DW_FORM_ref2:
	case DW_FORM_strx2:
	case DW_FORM_addrx2:
		return 2;
	case DW_FORM_strx3:
	case DW_FORM_addrx3:
		return 3;
	case DW_FORM_data4:
	case DW_FORM_ref4:
	case DW_FORM_ref_sup4:
	case DW_FORM_strx4:
	case DW_FORM_addrx4:
		return 4;
	case DW_FORM_data8:
	case DW_FORM_ref8:
	case DW_FORM_ref_sig8:
	case DW_FORM_ref_sup8:
		return 8;
	case DW_FORM_data16:
		return 16;
	case DW_FORM_strp:
	case DW_FORM_line_strp:
	case DW_FORM_sec_offset:
	case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt:
	case DW_FORM_GNU_strp_alt:
		return (int8_t)sh->offset_size;
	case DW_FORM_ref_addr:
		return (int8_t)sh->ref_addr_size;
	case DW_FORM_flag_present:
	case DW_FORM_implicit_const:
		return 0;
	default:
		return -1;
	}
}

static int sparse_cmp(const void *pa, const void *pb)
{
	const struct sparse *a = pa, *b = pb;

	if (a->code != b->code)
		return a->code < b->code ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Parses the abbreviation table at off, up to its 0 code, the end of the
 * section or bad data (the abbreviations before it stay usable). */
static struct kp_dwraw_abbrevs *abbrevs_parse(struct kp_dwraw *r, uint64_t off,
					      const struct shape *shape)
{
	struct kp_dwraw_abbrevs *t = arena_alloc(&r->arena, sizeof(*t));
	const struct kp_dwraw_sec *sec = &r->s.abbrev;
	size_t nab = 0, nspecs = 0, nimp = 0;
	uint64_t maxcode = 0;
	const int8_t *sizes = r->sizes;
	const uint8_t *kinds = r->kinds;
	struct cur c;

	t->off = off;
	t->shape = *shape;
	if (off >= sec->n) {
		t->bad = true;
		return t;
	}
	if (!r->sc_specs) {
		/* room for any table: a spec takes 2 bytes of the section at
		 * least, an implicit_const one 3, an abbreviation 5 */
		r->sc_specs = kp_xmalloc((sec->n / 2 + 1) * sizeof(*r->sc_specs));
		r->sc_imp = kp_xmalloc((sec->n / 3 + 1) * sizeof(*r->sc_imp));
		r->sc_ab = kp_xmalloc((sec->n / 5 + 1) * sizeof(*r->sc_ab));
	}
	if (!r->kinds_set) {
		for (unsigned k = 0; k < sizeof(r->kinds); k++)
			r->kinds[k] = attr_kind(k);
		r->kinds_set = true;
	}
	if (memcmp(&r->sizes_shape, shape, sizeof(*shape)) != 0) {
		for (unsigned f = 0; f < sizeof(r->sizes); f++)
			r->sizes[f] = form_size(f, shape);
		r->sizes_shape = *shape;
	}
	c = (struct cur){sec->p + off, sec->p + sec->n, false};
	for (;;) {
		uint64_t code = rd_uleb(&c), tag;
		struct abbrev ab = {0};
		size_t nimp0 = nimp;
		int32_t at_off = 0; /* of the next spec, -1 once not fixed */
		bool lo_set = false;

		if (c.bad || code == 0)
			break;
		tag = rd_uleb(&c);
		ab.children = rd_u8(&c) != 0;
		/* tag 0 is invalid (and marks a free slot here); tags past
		 * DW_TAG_hi_user are nothing kprof looks for */
		ab.tag = tag == 0 || tag > UINT16_MAX ? UINT16_MAX : (uint16_t)tag;
		ab.first = (uint32_t)nspecs;
		ab.plain = true;
		for (;;) {
			uint64_t at, form;
			struct attrspec *sp;

			if (c.end - c.p >= 2 && !((c.p[0] | c.p[1]) & 0x80)) {
				/* both one byte long: nearly always */
				at = c.p[0];
				form = c.p[1];
				c.p += 2;
				if (!(at | form))
					break;
				sp = &r->sc_specs[nspecs++];
				sp->form = (uint16_t)form;
				sp->kind = kinds[at];
				sp->size = form < sizeof(r->sizes) ? sizes[form] : -1;
			} else {
				at = rd_uleb(&c);
				form = rd_uleb(&c);
				if (c.bad || (at == 0 && form == 0))
					break;
				sp = &r->sc_specs[nspecs++];
				sp->form = form >= UINT16_MAX ? UINT16_MAX : (uint16_t)form;
				sp->kind = at < sizeof(r->kinds) ? kinds[at] : attr_kind(at);
				sp->size = form < sizeof(r->sizes) ? sizes[form]
								   : form_size(form, shape);
			}
			if (form == DW_FORM_implicit_const)
				r->sc_imp[nimp++] =
					(struct implicit){(uint32_t)(nspecs - 1), rd_sleb(&c)};
			if (sp->kind != A_SKIP && sp->kind < A_NAME) {
				ab.plain = false;
				if (!lo_set) {
					/* where the first decoded spec starts */
					lo_set = true;
					ab.ilo = (uint16_t)(nspecs - 1 - ab.first);
					if (at_off > UINT16_MAX)
						at_off = -1;
					ab.lo_off = (uint16_t)(at_off < 0 ? 0 : at_off);
				}
				ab.ihi = (uint16_t)(nspecs - ab.first);
			}
			if (at_off >= 0)
				at_off = sp->size < 0 || at_off > INT32_MAX - 16
						 ? -1
						 : at_off + sp->size;
		}
		if (!c.bad && nspecs - ab.first > UINT16_MAX)
			c.bad = true; /* absurd: the table ends here */
		if (c.bad) {
			/* a cut abbreviation is dropped */
			nspecs = ab.first;
			nimp = nimp0;
			break;
		}
		ab.n = (uint16_t)(nspecs - ab.first);
		ab.fixed = at_off;
		r->sc_ab[nab] = (struct sparse){code, (uint32_t)nab, ab};
		nab++;
		if (code > maxcode)
			maxcode = code;
	}
	if (!nab) {
		t->bad = true;
		return t;
	}
	t->specs = arena_alloc(&r->arena, nspecs * sizeof(*t->specs));
	memcpy(t->specs, r->sc_specs, nspecs * sizeof(*t->specs));
	if (nimp) {
		t->imp = arena_alloc(&r->arena, nimp * sizeof(*t->imp));
		memcpy(t->imp, r->sc_imp, nimp * sizeof(*t->imp));
		t->nimp = nimp;
	}
	if (maxcode < DENSE_MAX && maxcode <= 4 * nab + 64) {
		t->ndense = maxcode + 1;
		t->dense = arena_alloc(&r->arena, t->ndense * sizeof(*t->dense));
		for (size_t i = 0; i < nab; i++) {
			if (!t->dense[r->sc_ab[i].code].tag) /* the first definition wins */
				t->dense[r->sc_ab[i].code] = r->sc_ab[i].ab;
		}
		return t;
	}
	qsort(r->sc_ab, nab, sizeof(*r->sc_ab), sparse_cmp);
	t->sparse = arena_alloc(&r->arena, nab * sizeof(*t->sparse));
	for (size_t i = 0; i < nab; i++) {
		if (!t->nsparse || t->sparse[t->nsparse - 1].code != r->sc_ab[i].code)
			t->sparse[t->nsparse++] = r->sc_ab[i];
	}
	return t;
}

static inline const struct abbrev *abbrev_find(const struct kp_dwraw_abbrevs *t, uint64_t code)
{
	size_t lo = 0, hi = t->nsparse;

	if (code < t->ndense)
		return t->dense[code].tag ? &t->dense[code] : NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->sparse[mid].code < code)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nsparse && t->sparse[lo].code == code ? &t->sparse[lo].ab : NULL;
}

static int64_t implicit_value(const struct kp_dwraw_abbrevs *t, uint32_t spec)
{
	size_t lo = 0, hi = t->nimp;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->imp[mid].spec < spec)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nimp && t->imp[lo].spec == spec ? t->imp[lo].value : 0;
}

struct tab_query {
	const struct kp_dwraw *r;
	uint64_t off;
	struct shape shape;
};

static bool tab_eq(void *ctx, uint32_t id)
{
	const struct tab_query *q = ctx;
	const struct kp_dwraw_abbrevs *t = q->r->tabs[id - 1];

	return t->off == q->off && memcmp(&t->shape, &q->shape, sizeof(q->shape)) == 0;
}

static struct kp_dwraw_abbrevs *abbrevs_get(struct kp_dwraw *r, uint64_t off,
					    const struct shape *shape)
{
	struct tab_query q = {r, off, *shape};
	uint64_t h = kp_hash_u64(off ^ ((uint64_t)shape->addr_size << 56) ^
				 ((uint64_t)shape->offset_size << 60) ^
				 ((uint64_t)shape->ref_addr_size << 52));
	uint32_t id = kp_idmap_find(&r->by_off, h, tab_eq, &q);

	if (id)
		return r->tabs[id - 1];
	kp_xgrow(&r->tabs, &r->tabs_cap, r->ntabs + 1, sizeof(*r->tabs));
	r->tabs[r->ntabs++] = abbrevs_parse(r, off, shape);
	kp_idmap_put(&r->by_off, h, (uint32_t)r->ntabs);
	return r->tabs[r->ntabs - 1];
}

struct kp_dwraw *kp_dwraw_new(const struct kp_dwraw_secs *secs)
{
	struct kp_dwraw *r = kp_xcalloc(1, sizeof(*r));

	r->s = *secs;
	/* what the tables of a whole file take, about: see abbrevs_parse */
	arena_init(&r->arena, 8 * secs->abbrev.n + 4096);
	return r;
}

void kp_dwraw_free(struct kp_dwraw *r)
{
	if (!r)
		return;
	arena_fini(&r->arena);
	free(r->sc_ab);
	free(r->sc_specs);
	free(r->sc_imp);
	free(r->aranges);
	free(r->units);
	free(r->tabs);
	kp_idmap_fini(&r->by_off);
	free(r);
}

/* The data of a section as libdw reads it, or none: a section libdw could
 * not inflate is still compressed (SHF_COMPRESSED, or a GNU .zdebug_ one
 * still starting with "ZLIB"), and libdw treats it as missing too. */
static struct kp_dwraw_sec section_bytes(Elf_Scn *scn, const GElf_Shdr *sh, bool gnu_z)
{
	Elf_Data *d;

	if (sh->sh_type == SHT_NOBITS || (sh->sh_flags & SHF_COMPRESSED))
		return (struct kp_dwraw_sec){0};
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf)
		return (struct kp_dwraw_sec){0};
	if (gnu_z && d->d_size >= 4 && memcmp(d->d_buf, "ZLIB", 4) == 0)
		return (struct kp_dwraw_sec){0};
	return (struct kp_dwraw_sec){d->d_buf, d->d_size};
}

int kp_dwraw_open(Elf *elf, struct kp_dwraw **out)
{
	static const char *const names[] = {"info",    "abbrev", "ranges",   "rnglists",   "addr",
					    "aranges", "str",	 "line_str", "str_offsets"};
	struct kp_dwraw_secs s = {0};
	struct kp_dwraw_sec *slot[] = {&s.info,	   &s.abbrev, &s.ranges,   &s.rnglists,	  &s.addr,
				       &s.aranges, &s.str,    &s.line_str, &s.str_offsets};
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	*out = NULL;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -ENOENT;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		const char *name = sh ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;
		bool gnu_z;

		if (!name)
			continue;
		if (strncmp(name, ".debug_", 7) == 0)
			name += 7, gnu_z = false;
		else if (strncmp(name, ".zdebug_", 8) == 0)
			name += 8, gnu_z = true;
		else
			continue;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			/* the first of a name wins, as in libdw */
			if (strcmp(name, names[i]) == 0 && !slot[i]->p)
				*slot[i] = section_bytes(scn, sh, gnu_z);
		}
	}
	if (!s.info.p || !s.abbrev.p)
		return -ENOENT;
	*out = kp_dwraw_new(&s);
	return 0;
}

/* Reads the value of one attribute of form form, leaving c past it: an
 * address, constant, reference or offset as a number (blocks, strings and
 * 16-byte constants read as 0), and the form it had after
 * DW_FORM_indirect. Sets c->bad for an unknown form. */
static uint64_t rd_form(struct cur *c, const struct kp_dwraw_unit *u, uint32_t form,
			int64_t implicit, uint32_t *realform)
{
	for (int hops = 0;; hops++) {
		*realform = form;
		switch (form) {
		case DW_FORM_addr:
			return rd_n(c, u->addr_size);
		case DW_FORM_data1:
		case DW_FORM_ref1:
		case DW_FORM_flag:
		case DW_FORM_strx1:
		case DW_FORM_addrx1:
			return rd_n(c, 1);
		case DW_FORM_data2:
		case DW_FORM_ref2:
		case DW_FORM_strx2:
		case DW_FORM_addrx2:
			return rd_n(c, 2);
		case DW_FORM_strx3:
		case DW_FORM_addrx3:
			return rd_n(c, 3);
		case DW_FORM_data4:
		case DW_FORM_ref4:
		case DW_FORM_ref_sup4:
		case DW_FORM_strx4:
		case DW_FORM_addrx4:
			return rd_n(c, 4);
		case DW_FORM_data8:
		case DW_FORM_ref8:
		case DW_FORM_ref_sig8:
		case DW_FORM_ref_sup8:
			return rd_n(c, 8);
		case DW_FORM_data16:
			skip_n(c, 16);
			return 0;
		case DW_FORM_sdata:
			return (uint64_t)rd_sleb(c);
		case DW_FORM_udata:
		case DW_FORM_ref_udata:
		case DW_FORM_strx:
		case DW_FORM_addrx:
		case DW_FORM_GNU_addr_index:
		case DW_FORM_GNU_str_index:
		case DW_FORM_loclistx:
		case DW_FORM_rnglistx:
			return rd_uleb(c);
		case DW_FORM_strp:
		case DW_FORM_line_strp:
		case DW_FORM_sec_offset:
		case DW_FORM_strp_sup:
		case DW_FORM_GNU_ref_alt:
		case DW_FORM_GNU_strp_alt:
			return rd_n(c, u->offset_size);
		case DW_FORM_ref_addr:
			/* an address in DWARF 2, an offset since */
			return rd_n(c, u->version <= 2 ? u->addr_size : u->offset_size);
		case DW_FORM_flag_present:
			return 1;
		case DW_FORM_implicit_const:
			if (hops) /* its value lives in the abbreviation */
				c->bad = true;
			return (uint64_t)implicit;
		case DW_FORM_string: {
			const uint8_t *z =
				c->p < c->end ? memchr(c->p, 0, (size_t)(c->end - c->p)) : NULL;

			if (!z) {
				c->bad = true;
				c->p = c->end;
			} else {
				c->p = z + 1;
			}
			return 0;
		}
		case DW_FORM_block1:
			skip_n(c, rd_n(c, 1));
			return 0;
		case DW_FORM_block2:
			skip_n(c, rd_n(c, 2));
			return 0;
		case DW_FORM_block4:
			skip_n(c, rd_n(c, 4));
			return 0;
		case DW_FORM_block:
		case DW_FORM_exprloc:
			skip_n(c, rd_uleb(c));
			return 0;
		case DW_FORM_indirect: {
			uint64_t f = rd_uleb(c);

			/* an indirect form naming another indirect one is
			 * legal but pointless: a few hops, then bad data */
			if (c->bad || hops >= 4 || f > UINT32_MAX) {
				c->bad = true;
				return 0;
			}
			form = (uint32_t)f;
			continue;
		}
		default:
			c->bad = true;
			return 0;
		}
	}
}

static bool is_const_form(uint32_t form)
{
	switch (form) {
	case DW_FORM_data1:
	case DW_FORM_data2:
	case DW_FORM_data4:
	case DW_FORM_data8:
	case DW_FORM_sdata:
	case DW_FORM_udata:
	case DW_FORM_implicit_const:
		return true;
	default:
		return false;
	}
}

/* Attributes only the unit DIE's reading wants. */
struct unit_attrs {
	uint64_t lang, addr_base, rnglists_base, str_offsets_base;
	bool has_lang, has_addr_base, has_rnglists_base, has_str_offsets_base;
};

/* Files the value of an attribute the walk decodes into die (or ua). */
static inline void store_attr(const struct kp_dwraw_unit *u, struct kp_dwraw_die *die,
			      struct unit_attrs *ua, uint8_t kind, uint32_t form, uint64_t v)
{
	switch (kind) {
	default:
		break;
	case A_LOW_PC:
		die->low_pc = v;
		die->low_form = (uint16_t)form;
		die->have |= KP_DWRAW_LOW_PC;
		break;
	case A_HIGH_PC:
		die->high_pc = v;
		die->high_form = (uint16_t)form;
		die->have |= KP_DWRAW_HIGH_PC;
		break;
	case A_RANGES:
		die->ranges = v;
		die->ranges_form = (uint16_t)form;
		die->have |= KP_DWRAW_RANGES;
		break;
	case A_ENTRY_PC:
		die->entry_pc = v;
		die->entry_form = (uint16_t)form;
		die->have |= KP_DWRAW_ENTRY_PC;
		break;
	case A_SIBLING:
		switch (form) {
		case DW_FORM_ref1:
		case DW_FORM_ref2:
		case DW_FORM_ref4:
		case DW_FORM_ref8:
		case DW_FORM_ref_udata:
			die->sibling = u->off + v;
			die->have |= v < u->end - u->off ? KP_DWRAW_SIBLING : 0;
			break;
		case DW_FORM_ref_addr:
			die->sibling = v;
			die->have |= KP_DWRAW_SIBLING;
			break;
		default:
			break;
		}
		break;
	case A_LANGUAGE:
		if (ua && is_const_form(form)) {
			ua->lang = v;
			ua->has_lang = true;
		}
		break;
	case A_ADDR_BASE:
		/* the first of DW_AT_GNU_addr_base and DW_AT_addr_base */
		if (ua && !ua->has_addr_base &&
		    (form == DW_FORM_sec_offset || is_const_form(form))) {
			ua->addr_base = v;
			ua->has_addr_base = true;
		}
		break;
	case A_RNGLISTS_BASE:
		if (ua && (form == DW_FORM_sec_offset || is_const_form(form))) {
			ua->rnglists_base = v;
			ua->has_rnglists_base = true;
		}
		break;
	case A_STR_OFFSETS_BASE:
		if (ua && (form == DW_FORM_sec_offset || is_const_form(form))) {
			ua->str_offsets_base = v;
			ua->has_str_offsets_base = true;
		}
		break;
	}
}

/* Inlined into its three callers: with ua NULL in two of them, the unit
 * attributes' branches go away. */
static inline __attribute__((always_inline)) int read_die(const struct kp_dwraw_unit *u,
							  uint64_t off, struct kp_dwraw_die *die,
							  struct unit_attrs *ua)
{
	const uint8_t *base = u->r->s.info.p;
	struct cur c;
	const struct abbrev *ab;
	const struct attrspec *sp;
	uint64_t code;

	die->off = off;
	die->tag = 0;
	die->children = false;
	die->have = 0;
	die->sibling = 0;
	if (off < u->die_off || off > u->end)
		return -EINVAL;
	if (off == u->end) {
		/* the unit ends without its null entries: the end of every
		 * list open there */
		die->next = off;
		return 0;
	}
	c = (struct cur){base + off, base + u->end, false};
	code = rd_uleb(&c);
	if (c.bad)
		return -EINVAL;
	if (code == 0) {
		die->next = (uint64_t)(c.p - base);
		return 0;
	}
	ab = abbrev_find(u->abbrevs, code);
	if (!ab)
		return -EINVAL;
	die->tag = ab->tag;
	die->children = ab->children;
	if (ab->fixed >= 0) {
		/* most DIEs: a known size, nothing or a few things to decode */
		const uint8_t *end = c.p + ab->fixed;

		if ((uint64_t)(c.end - c.p) < (uint64_t)ab->fixed)
			return -EINVAL;
		c.p += ab->lo_off;
		sp = u->abbrevs->specs + ab->first + ab->ilo;
		for (uint32_t i = ab->ilo; i < ab->ihi; i++, sp++) {
			uint32_t form;
			uint64_t v;

			if (sp->kind == A_SKIP || sp->kind >= A_NAME) {
				c.p += sp->size;
				continue;
			}
			v = rd_form(&c, u, sp->form,
				    sp->form == DW_FORM_implicit_const
					    ? implicit_value(u->abbrevs, ab->first + i)
					    : 0,
				    &form);
			store_attr(u, die, ua, sp->kind, form, v);
		}
		if (c.bad)
			return -EINVAL;
		die->next = (uint64_t)(end - base);
		return 1;
	}
	sp = u->abbrevs->specs + ab->first;
	for (uint32_t i = 0; i < ab->n; i++, sp++) {
		uint32_t form;
		uint64_t v;

		if ((sp->kind == A_SKIP || sp->kind >= A_NAME) && sp->size >= 0) {
			skip_n(&c, (uint64_t)sp->size);
			continue;
		}
		v = rd_form(&c, u, sp->form,
			    sp->form == DW_FORM_implicit_const
				    ? implicit_value(u->abbrevs, ab->first + i)
				    : 0,
			    &form);
		store_attr(u, die, ua, sp->kind, form, v);
	}
	if (c.bad)
		return -EINVAL;
	die->next = (uint64_t)(c.p - base);
	return 1;
}

int kp_dwraw_die(const struct kp_dwraw_unit *u, uint64_t off, struct kp_dwraw_die *die)
{
	return read_die(u, off, die, NULL);
}

int kp_dwraw_scan(const struct kp_dwraw_unit *u, uint64_t pos, uint64_t stop,
		  struct kp_dwraw_die *die)
{
	const uint8_t *base = u->r->s.info.p;

	for (;;) {
		struct kp_dwraw_die d;
		const struct abbrev *ab;
		struct cur c;
		uint64_t code;
		int rc;

		if (pos < u->die_off || pos >= u->end)
			return read_die(u, pos, die, NULL); /* the end, or bad */
		c = (struct cur){base + pos, base + u->end, false};
		code = rd_uleb(&c);
		ab = code && !c.bad ? abbrev_find(u->abbrevs, code) : NULL;
		if (!ab || (ab->tag < 64 && (stop >> ab->tag) & 1))
			return read_die(u, pos, die, NULL); /* null entry, bad, or wanted */
		if (ab->fixed >= 0) {
			const uint8_t *end = c.p + ab->fixed;
			const struct attrspec *sp = u->abbrevs->specs + ab->first + ab->ilo;

			if ((uint64_t)(c.end - c.p) < (uint64_t)ab->fixed)
				return -EINVAL;
			/* a leaf of a known size: no need to look inside */
			if (!ab->children) {
				pos = (uint64_t)(end - base);
				continue;
			}
			/* a type with members and a DW_AT_sibling as its only
			 * decoded attribute, at a known place (most of them):
			 * straight to its sibling when that points forward */
			if (ab->ihi == ab->ilo + 1 && sp->kind == A_SIBLING &&
			    (sp->form == DW_FORM_ref4 || sp->form == DW_FORM_ref2 ||
			     sp->form == DW_FORM_ref1 || sp->form == DW_FORM_ref8)) {
				struct cur v = {c.p + ab->lo_off, end, false};
				uint64_t sib = u->off + rd_n(&v, (size_t)sp->size);

				if (!v.bad && sib > (uint64_t)(end - base) && sib <= u->end &&
				    sib >= u->off) {
					pos = sib;
					continue;
				}
			}
		}
		rc = read_die(u, pos, &d, NULL);
		if (rc <= 0)
			return rc < 0 ? rc : -EINVAL;
		if ((rc = kp_dwraw_skip(u, &d, &pos)) < 0)
			return rc;
	}
}

int kp_dwraw_skip(const struct kp_dwraw_unit *u, const struct kp_dwraw_die *die, uint64_t *after)
{
	uint64_t pos;
	size_t depth = 1;

	if (!die->children) {
		*after = die->next;
		return 0;
	}
	/* pointing forward past the DIE's attributes and inside the unit,
	 * else the children are read: every step moves forward, so hostile
	 * siblings cannot make this loop */
	if ((die->have & KP_DWRAW_SIBLING) && die->sibling > die->next && die->sibling <= u->end) {
		*after = die->sibling;
		return 0;
	}
	pos = die->next;
	while (depth > 0) {
		struct kp_dwraw_die d;
		int rc = read_die(u, pos, &d, NULL);

		if (rc < 0)
			return rc;
		if (rc == 0) {
			depth--;
			pos = d.next;
		} else if (!d.children) {
			pos = d.next;
		} else if ((d.have & KP_DWRAW_SIBLING) && d.sibling > d.next &&
			   d.sibling <= u->end) {
			pos = d.sibling;
		} else {
			pos = d.next;
			depth++;
		}
	}
	*after = pos;
	return 0;
}

/* The first unit header size of .debug_rnglists/.debug_addr: where
 * libdw looks when a DWARF 5 unit names no base. */
static uint64_t first_header_size(const struct kp_dwraw_sec *s, uint64_t size32, uint64_t size64)
{
	if (!s->p || s->n < 4)
		return 0;
	if (s->p[0] == 0xff && s->p[1] == 0xff && s->p[2] == 0xff && s->p[3] == 0xff)
		return size64;
	return size32;
}

static int addrx(const struct kp_dwraw_unit *u, uint64_t idx, uint64_t *addr)
{
	const struct kp_dwraw_sec *s = &u->r->s.addr;
	struct cur c;

	if (!s->p || u->addr_size > s->n || u->addr_base > s->n - u->addr_size)
		return -EINVAL;
	if (idx > (s->n - u->addr_size - u->addr_base) / u->addr_size)
		return -EINVAL;
	c = (struct cur){s->p + u->addr_base + idx * u->addr_size, s->p + s->n, false};
	*addr = rd_n(&c, u->addr_size);
	return c.bad ? -EINVAL : 0;
}

/* An attribute of the address class (dwarf_formaddr's forms). */
static int form_addr(const struct kp_dwraw_unit *u, uint32_t form, uint64_t v, uint64_t *addr)
{
	switch (form) {
	case DW_FORM_addr:
		*addr = v;
		return 0;
	case DW_FORM_addrx:
	case DW_FORM_addrx1:
	case DW_FORM_addrx2:
	case DW_FORM_addrx3:
	case DW_FORM_addrx4:
	case DW_FORM_GNU_addr_index:
		return addrx(u, v, addr);
	default:
		return -EINVAL;
	}
}

int kp_dwraw_unit(struct kp_dwraw *r, uint64_t off, struct kp_dwraw_unit *u)
{
	const struct kp_dwraw_sec *info = &r->s.info;
	struct unit_attrs ua = {0};
	struct kp_dwraw_die die;
	uint64_t len, abbrev_off;
	struct shape shape;
	struct cur c;

	memset(u, 0, sizeof(*u));
	u->r = r;
	u->off = off;
	u->lang = -1;
	if (off >= info->n)
		return -EINVAL;
	c = (struct cur){info->p + off, info->p + info->n, false};
	len = rd_n(&c, 4);
	u->offset_size = 4;
	if (len == 0xffffffff) {
		len = rd_n(&c, 8);
		u->offset_size = 8;
	} else if (len >= 0xfffffff0) {
		return -EINVAL; /* reserved */
	}
	if (c.bad || len > (uint64_t)(c.end - c.p))
		return -EINVAL; /* the unit runs past the section */
	u->end = (uint64_t)(c.p - info->p) + len;
	c.end = info->p + u->end;
	u->version = (uint16_t)rd_n(&c, 2);
	if (u->version < 2 || u->version > 5)
		return -EINVAL;
	if (u->version >= 5) {
		u->unit_type = rd_u8(&c);
		u->addr_size = rd_u8(&c);
		abbrev_off = rd_n(&c, u->offset_size);
		switch (u->unit_type) {
		case DW_UT_compile:
		case DW_UT_partial:
			break;
		case DW_UT_skeleton:
		case DW_UT_split_compile:
			skip_n(&c, 8); /* dwo_id */
			break;
		default:
			return c.bad ? -EINVAL : -ENOENT; /* type units, unknown kinds */
		}
	} else {
		u->unit_type = DW_UT_compile;
		abbrev_off = rd_n(&c, u->offset_size);
		u->addr_size = rd_u8(&c);
	}
	if (c.bad || (u->addr_size != 2 && u->addr_size != 4 && u->addr_size != 8))
		return -EINVAL;
	u->die_off = (uint64_t)(c.p - info->p);
	shape = (struct shape){u->addr_size, u->offset_size,
			       u->version <= 2 ? u->addr_size : u->offset_size};
	u->abbrevs = abbrevs_get(r, abbrev_off, &shape);
	if (u->abbrevs->bad)
		return -EINVAL;
	if (read_die(u, u->die_off, &die, &ua) != 1)
		return -EINVAL;
	u->lang = ua.has_lang && ua.lang <= INT32_MAX ? (int)ua.lang : -1;
	if (ua.has_addr_base)
		u->addr_base = ua.addr_base;
	else if (u->version >= 5)
		u->addr_base = first_header_size(&r->s.addr, 8, 16);
	if (ua.has_rnglists_base)
		u->rnglists_base = ua.rnglists_base;
	else if (u->version >= 5)
		u->rnglists_base = first_header_size(&r->s.rnglists, 12, 20);
	if (ua.has_str_offsets_base)
		u->str_offsets_base = ua.str_offsets_base;
	else if (u->version >= 5)
		u->str_offsets_base = first_header_size(&r->s.str_offsets, 8, 16);
	/* the base address of range lists: libdw's rule */
	if (!(die.have & KP_DWRAW_LOW_PC) ||
	    form_addr(u, die.low_form, die.low_pc, &u->base) != 0) {
		if (!(die.have & KP_DWRAW_ENTRY_PC) ||
		    form_addr(u, die.entry_form, die.entry_pc, &u->base) != 0)
			u->base = 0;
	}
	return 0;
}

static int arange_cmp(const void *pa, const void *pb)
{
	const struct arange *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Reads every set of .debug_aranges: (address, length) tuples naming the
 * unit at debug_info_offset. A set that does not parse is dropped from
 * where it goes wrong; the next set is found through its length. */
static void read_aranges(struct kp_dwraw *r)
{
	const struct kp_dwraw_sec *s = &r->s.aranges;
	size_t cap = 0, at = 0;

	while (s->p && at < s->n) {
		struct cur c = {s->p + at, s->p + s->n, false};
		uint64_t len = rd_n(&c, 4), unit, set_end;
		unsigned osize = 4, asize, ssize;

		if (len == 0xffffffff) {
			len = rd_n(&c, 8);
			osize = 8;
		} else if (len >= 0xfffffff0) {
			break;
		}
		if (c.bad || len > (uint64_t)(c.end - c.p))
			break;
		set_end = (uint64_t)(c.p - s->p) + len;
		c.end = s->p + set_end;
		at = set_end;
		if (rd_n(&c, 2) != 2)
			continue;
		unit = rd_n(&c, osize);
		asize = rd_u8(&c);
		ssize = rd_u8(&c);
		/* segmented addresses: nothing kprof reads has them */
		if (c.bad || (asize != 2 && asize != 4 && asize != 8) || ssize != 0)
			continue;
		/* tuples start at a multiple of their size from the set start */
		{
			size_t set_start = (size_t)(set_end - len) - (osize == 8 ? 12 : 4);
			size_t rel = (size_t)(c.p - s->p) - set_start;

			if (rel % (2 * asize))
				skip_n(&c, 2 * asize - rel % (2 * asize));
		}
		for (;;) {
			uint64_t lo, n;

			lo = rd_n(&c, asize);
			n = rd_n(&c, asize);
			if (c.bad || (lo == 0 && n == 0))
				break;
			if (!n)
				continue;
			if (r->naranges == cap)
				kp_xgrow(&r->aranges, &cap, r->naranges + 1, sizeof(*r->aranges));
			r->aranges[r->naranges] = (struct arange){
				lo, lo + n < lo ? UINT64_MAX : lo + n, unit, (uint32_t)r->naranges};
			r->naranges++;
		}
	}
	if (r->naranges)
		qsort(r->aranges, r->naranges, sizeof(*r->aranges), arange_cmp);
}

int kp_dwraw_unit_at(struct kp_dwraw *r, uint64_t addr, uint64_t *unit_off)
{
	size_t lo = 0, hi;

	if (!r->aranges_read) {
		r->aranges_read = true;
		read_aranges(r);
	}
	hi = r->naranges;
	/* the last range starting at or before addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->aranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= r->aranges[lo - 1].hi)
		return -ENOENT;
	*unit_off = r->aranges[lo - 1].unit;
	return 0;
}

/* DWARF 2-4 .debug_ranges from offset off: address pairs relative to the
 * base, (0, 0) at the end, (all ones, base) choosing a new base. */
static int ranges_v4(const struct kp_dwraw_unit *u, uint64_t off,
		     bool (*fn)(void *arg, uint64_t lo, uint64_t hi), void *arg)
{
	const struct kp_dwraw_sec *s = &u->r->s.ranges;
	uint64_t escape = u->addr_size == 8 ? UINT64_MAX : (1ull << (8 * u->addr_size)) - 1;
	uint64_t base = u->base;
	struct cur c;
	int n = 0;

	if (!s->p || off >= s->n)
		return -EINVAL;
	c = (struct cur){s->p + off, s->p + s->n, false};
	for (;;) {
		uint64_t b = rd_n(&c, u->addr_size), e = rd_n(&c, u->addr_size);

		if (c.bad)
			return -EINVAL;
		if (b == escape) {
			if (e == escape)
				return -EINVAL;
			base = e;
			continue;
		}
		if (b == 0 && e == 0)
			return n;
		n++;
		if (!fn(arg, b + base, e + base))
			return n;
	}
}

/* DWARF 5 .debug_rnglists from offset off. */
static int ranges_v5(const struct kp_dwraw_unit *u, uint64_t off,
		     bool (*fn)(void *arg, uint64_t lo, uint64_t hi), void *arg)
{
	const struct kp_dwraw_sec *s = &u->r->s.rnglists;
	uint64_t base = u->base;
	struct cur c;
	int n = 0;

	if (!s->p || off >= s->n)
		return -EINVAL;
	c = (struct cur){s->p + off, s->p + s->n, false};
	for (;;) {
		uint8_t kind = rd_u8(&c);
		uint64_t b = 0, e = 0, x, y;

		if (c.bad)
			return -EINVAL;
		switch (kind) {
		case DW_RLE_end_of_list:
			return n;
		case DW_RLE_base_addressx:
			x = rd_uleb(&c);
			if (c.bad || addrx(u, x, &base) != 0)
				return -EINVAL;
			continue;
		case DW_RLE_startx_endx:
			x = rd_uleb(&c);
			y = rd_uleb(&c);
			if (c.bad || addrx(u, x, &b) != 0 || addrx(u, y, &e) != 0)
				return -EINVAL;
			break;
		case DW_RLE_startx_length:
			x = rd_uleb(&c);
			y = rd_uleb(&c);
			if (c.bad || addrx(u, x, &b) != 0)
				return -EINVAL;
			e = b + y;
			break;
		case DW_RLE_offset_pair:
			x = rd_uleb(&c);
			y = rd_uleb(&c);
			b = base + x;
			e = base + y;
			break;
		case DW_RLE_base_address:
			base = rd_n(&c, u->addr_size);
			continue;
		case DW_RLE_start_end:
			b = rd_n(&c, u->addr_size);
			e = rd_n(&c, u->addr_size);
			break;
		case DW_RLE_start_length:
			b = rd_n(&c, u->addr_size);
			e = b + rd_uleb(&c);
			break;
		default:
			return -EINVAL;
		}
		if (c.bad)
			return -EINVAL;
		n++;
		if (!fn(arg, b, e))
			return n;
	}
}

int kp_dwraw_ranges(const struct kp_dwraw_unit *u, const struct kp_dwraw_die *die,
		    bool (*fn)(void *arg, uint64_t lo, uint64_t hi), void *arg)
{
	const struct kp_dwraw_sec *s;
	uint64_t lo, off;

	/* one contiguous range, when both ends read (dwarf_highpc's rule:
	 * an address, else a constant offset from low_pc) */
	if ((die->have & KP_DWRAW_LOW_PC) && (die->have & KP_DWRAW_HIGH_PC) &&
	    form_addr(u, die->low_form, die->low_pc, &lo) == 0) {
		uint64_t hi;
		bool ok = form_addr(u, die->high_form, die->high_pc, &hi) == 0;

		if (!ok && is_const_form(die->high_form)) {
			hi = lo + die->high_pc;
			ok = true;
		}
		if (ok) {
			fn(arg, lo, hi);
			return 1;
		}
	}
	if (!(die->have & KP_DWRAW_RANGES))
		return 0;
	if (u->base == UINT64_MAX)
		return -EINVAL;
	if (u->version < 5) {
		switch (die->ranges_form) {
		case DW_FORM_sec_offset:
			break;
		case DW_FORM_data1:
		case DW_FORM_data2:
		case DW_FORM_data4:
		case DW_FORM_data8:
		case DW_FORM_udata:
		case DW_FORM_sdata:
			if (u->version > 3)
				return -EINVAL; /* a constant since DWARF 4 */
			break;
		default:
			return -EINVAL;
		}
		return ranges_v4(u, die->ranges, fn, arg);
	}
	s = &u->r->s.rnglists;
	if (die->ranges_form == DW_FORM_rnglistx) {
		/* an index into the offsets after the unit's rnglists_base */
		struct cur c;

		if (!s->p || u->offset_size > s->n || u->rnglists_base > s->n - u->offset_size)
			return -EINVAL;
		if (die->ranges > (s->n - u->offset_size - u->rnglists_base) / u->offset_size)
			return -EINVAL;
		c = (struct cur){s->p + u->rnglists_base + die->ranges * u->offset_size,
				 s->p + s->n, false};
		off = rd_n(&c, u->offset_size) + u->rnglists_base;
		if (c.bad)
			return -EINVAL;
	} else if (die->ranges_form == DW_FORM_sec_offset) {
		off = die->ranges;
	} else {
		return -EINVAL;
	}
	return ranges_v5(u, off, fn, arg);
}

int kp_dwraw_unit_of(struct kp_dwraw *r, uint64_t off, uint64_t *unit_off)
{
	const struct kp_dwraw_sec *info = &r->s.info;
	size_t lo = 0, hi;

	if (!r->units_listed) {
		size_t cap = 0;
		uint64_t at = 0;

		r->units_listed = true;
		while (at < info->n) {
			struct cur c = {info->p + at, info->p + info->n, false};
			uint64_t len = rd_n(&c, 4);

			if (len == 0xffffffff)
				len = rd_n(&c, 8);
			else if (len >= 0xfffffff0)
				break;
			if (c.bad || len > (uint64_t)(c.end - c.p))
				break;
			if (r->nunits == cap)
				kp_xgrow(&r->units, &cap, r->nunits + 1, sizeof(*r->units));
			r->units[r->nunits++] = at;
			at = (uint64_t)(c.p - info->p) + len;
		}
		r->units_end = at;
	}
	if (off >= r->units_end)
		return -ENOENT;
	hi = r->nunits;
	/* the last unit starting at or before off */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->units[mid] <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -ENOENT;
	*unit_off = r->units[lo - 1];
	return 0;
}

int kp_dwraw_attr(const struct kp_dwraw_unit *u, uint64_t off, enum kp_dwraw_at at,
		  struct kp_dwraw_attr *a)
{
	const uint8_t *base = u->r->s.info.p;
	const struct abbrev *ab;
	const struct attrspec *sp;
	struct cur c;
	uint64_t code;

	if (off < u->die_off || off >= u->end)
		return -EINVAL;
	c = (struct cur){base + off, base + u->end, false};
	code = rd_uleb(&c);
	if (c.bad || code == 0)
		return -EINVAL;
	ab = abbrev_find(u->abbrevs, code);
	if (!ab)
		return -EINVAL;
	sp = u->abbrevs->specs + ab->first;
	for (uint32_t i = 0; i < ab->n; i++, sp++) {
		const uint8_t *start = c.p;
		uint32_t form;
		uint64_t v;

		if (sp->kind != (uint8_t)at && sp->size >= 0) {
			skip_n(&c, (uint64_t)sp->size);
			continue;
		}
		v = rd_form(&c, u, sp->form,
			    sp->form == DW_FORM_implicit_const
				    ? implicit_value(u->abbrevs, ab->first + i)
				    : 0,
			    &form);
		if (c.bad)
			return -EINVAL;
		if (sp->kind == (uint8_t)at) {
			a->form = form;
			a->value = v;
			a->p = NULL;
			if (form == DW_FORM_string) {
				/* after the forms of DW_FORM_indirect, if any */
				struct cur f = {start, c.p, false};

				for (uint32_t fm = sp->form; fm == DW_FORM_indirect && !f.bad;)
					fm = (uint32_t)rd_uleb(&f);
				a->p = f.p;
			}
			return 1;
		}
	}
	return c.bad ? -EINVAL : 0;
}

const char *kp_dwraw_string(const struct kp_dwraw_unit *u, const struct kp_dwraw_attr *a, int *err)
{
	const struct kp_dwraw_sec *s;
	uint64_t off = a->value;

	*err = 0;
	switch (a->form) {
	case DW_FORM_string:
		if (!a->p)
			break;
		return (const char *)a->p;
	case DW_FORM_strp:
		s = &u->r->s.str;
		goto in_section;
	case DW_FORM_line_strp:
		s = &u->r->s.line_str;
		goto in_section;
	case DW_FORM_strx:
	case DW_FORM_strx1:
	case DW_FORM_strx2:
	case DW_FORM_strx3:
	case DW_FORM_strx4:
	case DW_FORM_GNU_str_index: {
		const struct kp_dwraw_sec *so = &u->r->s.str_offsets;
		struct cur c;

		if (!so->p || u->offset_size > so->n ||
		    u->str_offsets_base > so->n - u->offset_size ||
		    a->value > (so->n - u->offset_size - u->str_offsets_base) / u->offset_size)
			break;
		c = (struct cur){so->p + u->str_offsets_base + a->value * u->offset_size,
				 so->p + so->n, false};
		off = rd_n(&c, u->offset_size);
		s = &u->r->s.str;
		goto in_section;
	}
	case DW_FORM_GNU_strp_alt:
	case DW_FORM_strp_sup:
		*err = -ENOTSUP; /* in a supplementary file */
		return NULL;
	default:
		break;
	}
	*err = -EINVAL;
	return NULL;
in_section:
	/* a string ends inside its section */
	if (!s->p || off >= s->n || !memchr(s->p + off, 0, s->n - off)) {
		*err = -EINVAL;
		return NULL;
	}
	return (const char *)s->p + off;
}

int kp_dwraw_ref(const struct kp_dwraw_unit *u, const struct kp_dwraw_attr *a, uint64_t *off)
{
	switch (a->form) {
	case DW_FORM_ref1:
	case DW_FORM_ref2:
	case DW_FORM_ref4:
	case DW_FORM_ref8:
	case DW_FORM_ref_udata:
		if (a->value >= u->end - u->off)
			return -EINVAL;
		*off = u->off + a->value;
		return 0;
	case DW_FORM_ref_addr:
		*off = a->value;
		return 0;
	case DW_FORM_GNU_ref_alt:
	case DW_FORM_ref_sup4:
	case DW_FORM_ref_sup8:
		return -ENOTSUP;
	default:
		return -EINVAL;
	}
}

int kp_dwraw_path(const struct kp_dwraw_unit *u, uint64_t off, uint64_t *offs, size_t max)
{
	uint64_t pos = u->die_off;
	size_t n = 0;

	/* down from the unit DIE, into the child whose subtree holds off:
	 * every step moves forward, so this ends */
	for (;;) {
		struct kp_dwraw_die d;
		uint64_t after;
		int rc = kp_dwraw_die(u, pos, &d);

		if (rc <= 0)
			return -EINVAL; /* off is no DIE of this unit */
		if (d.off == off) {
			if (n >= max)
				return -E2BIG;
			offs[n++] = off;
			return (int)n;
		}
		if (kp_dwraw_skip(u, &d, &after) != 0)
			return -EINVAL;
		if (off < after && d.children) {
			if (n >= max)
				return -E2BIG;
			offs[n++] = d.off;
			pos = d.next;
		} else {
			pos = after;
		}
		if (pos > off)
			return -EINVAL;
	}
}
