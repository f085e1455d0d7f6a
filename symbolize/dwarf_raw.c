#include "symbolize/dwarf_raw.h"

#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

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
};

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
	bool plain;	   /* no attribute the reader decodes */
	int32_t fixed;	   /* size of all the attributes, -1 when it varies */
	uint32_t first, n; /* specs[first .. first + n) */
};

/* Codes below DENSE_MAX are looked up by index; the rare others (a
 * producer numbering codes sparsely, or hostile data) by binary search. */
#define DENSE_MAX 4096

struct sparse {
	uint64_t code;
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

/* An abbreviation table, parsed lazily as libdw does: only as far as the
 * highest code a DIE asked for (the types a walk skips through their
 * siblings never need theirs). */
struct kp_dwraw_abbrevs {
	uint64_t off; /* in .debug_abbrev */
	struct shape shape;
	bool bad;		   /* off is outside the section */
	const uint8_t *next, *end; /* what is left to parse; next NULL when done */
	struct abbrev *dense;	   /* by code, below ndense */
	size_t ndense, dense_cap;
	struct sparse *sparse; /* sorted by code */
	size_t nsparse, sparse_cap;
	struct attrspec *specs;
	size_t nspecs, specs_cap;
	struct implicit *imp; /* sorted by spec */
	size_t nimp, imp_cap;
};

struct kp_dwraw {
	struct kp_dwraw_secs s;
	struct kp_dwraw_abbrevs **tabs; /* id = index + 1 in by_off */
	size_t ntabs, tabs_cap;
	struct kp_idmap by_off;
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

static struct kp_dwraw_abbrevs *abbrevs_free(struct kp_dwraw_abbrevs *t)
{
	if (t) {
		free(t->dense);
		free(t->sparse);
		free(t->specs);
		free(t->imp);
		free(t);
	}
	return NULL;
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

static struct kp_dwraw_abbrevs *abbrevs_new(const struct kp_dwraw_sec *sec, uint64_t off,
					    const struct shape *shape)
{
	struct kp_dwraw_abbrevs *t = kp_xcalloc(1, sizeof(*t));

	t->off = off;
	t->shape = *shape;
	if (off >= sec->n) {
		t->bad = true;
		return t;
	}
	t->next = sec->p + off;
	t->end = sec->p + sec->n;
	return t;
}

/* Parses the next abbreviation of t into *ab and returns its code, or 0 at
 * the end of the table or on bad data (then the table is done: the
 * abbreviations read so far stay usable). */
static uint64_t abbrev_parse_next(struct kp_dwraw_abbrevs *t, struct abbrev *ab)
{
	struct cur c = {t->next, t->end, false};
	uint64_t code = rd_uleb(&c), tag;

	memset(ab, 0, sizeof(*ab));
	if (c.bad || code == 0)
		goto done;
	tag = rd_uleb(&c);
	ab->children = rd_u8(&c) != 0;
	/* tag 0 is invalid (and marks a free slot here); tags past
	 * DW_TAG_hi_user are nothing kprof looks for */
	ab->tag = tag == 0 || tag > UINT16_MAX ? UINT16_MAX : (uint16_t)tag;
	ab->first = (uint32_t)t->nspecs;
	ab->plain = true;
	for (;;) {
		uint64_t at = rd_uleb(&c), form = rd_uleb(&c);
		struct attrspec *sp;

		if (c.bad)
			goto done;
		if (at == 0 && form == 0)
			break;
		if (t->nspecs >= UINT32_MAX - 1)
			goto done;
		if (form == DW_FORM_implicit_const) {
			int64_t v = rd_sleb(&c);

			if (t->nimp == t->imp_cap)
				kp_xgrow(&t->imp, &t->imp_cap, t->nimp + 1, sizeof(*t->imp));
			t->imp[t->nimp++] = (struct implicit){(uint32_t)t->nspecs, v};
		}
		if (t->nspecs == t->specs_cap)
			kp_xgrow(&t->specs, &t->specs_cap, t->nspecs + 1, sizeof(*t->specs));
		sp = &t->specs[t->nspecs++];
		*sp = (struct attrspec){form >= UINT16_MAX ? UINT16_MAX : (uint16_t)form,
					attr_kind(at), form_size(form, &t->shape)};
		if (sp->kind != A_SKIP)
			ab->plain = false;
		if (sp->size < 0 || ab->fixed < 0 || ab->fixed > INT32_MAX - 16)
			ab->fixed = -1;
		else
			ab->fixed += sp->size;
	}
	if (c.bad)
		goto done;
	ab->n = (uint32_t)t->nspecs - ab->first;
	t->next = c.p;
	return code;
done:
	t->next = NULL;
	return 0;
}

static struct abbrev *abbrev_lookup(struct kp_dwraw_abbrevs *t, uint64_t code)
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

/* Files a parsed abbreviation; a code defined twice keeps its first one. */
static void abbrev_store(struct kp_dwraw_abbrevs *t, uint64_t code, const struct abbrev *ab)
{
	size_t i;

	if (abbrev_lookup(t, code))
		return;
	if (code < DENSE_MAX) {
		if (code >= t->ndense) {
			kp_xgrow(&t->dense, &t->dense_cap, code + 1, sizeof(*t->dense));
			memset(t->dense + t->ndense, 0, (code + 1 - t->ndense) * sizeof(*t->dense));
			t->ndense = code + 1;
		}
		t->dense[code] = *ab;
		return;
	}
	kp_xgrow(&t->sparse, &t->sparse_cap, t->nsparse + 1, sizeof(*t->sparse));
	for (i = t->nsparse; i > 0 && t->sparse[i - 1].code > code; i--)
		t->sparse[i] = t->sparse[i - 1];
	t->sparse[i] = (struct sparse){code, *ab};
	t->nsparse++;
}

/* The abbreviation with this code, parsing the table on as far as it. The
 * pointer is valid until the next call on t. */
static const struct abbrev *abbrev_find(struct kp_dwraw_abbrevs *t, uint64_t code)
{
	const struct abbrev *ab = abbrev_lookup(t, code);

	while (!ab && t->next) {
		struct abbrev next;
		uint64_t c = abbrev_parse_next(t, &next);

		if (!c)
			break;
		abbrev_store(t, c, &next);
		if (c == code)
			ab = abbrev_lookup(t, code);
	}
	return ab;
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
	r->tabs[r->ntabs++] = abbrevs_new(&r->s.abbrev, off, shape);
	kp_idmap_put(&r->by_off, h, (uint32_t)r->ntabs);
	return r->tabs[r->ntabs - 1];
}

struct kp_dwraw *kp_dwraw_new(const struct kp_dwraw_secs *secs)
{
	struct kp_dwraw *r = kp_xcalloc(1, sizeof(*r));

	r->s = *secs;
	return r;
}

void kp_dwraw_free(struct kp_dwraw *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ntabs; i++)
		abbrevs_free(r->tabs[i]);
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
	static const char *const names[] = {"info", "abbrev", "ranges", "rnglists", "addr"};
	struct kp_dwraw_secs s = {0};
	struct kp_dwraw_sec *slot[] = {&s.info, &s.abbrev, &s.ranges, &s.rnglists, &s.addr};
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
	uint64_t lang, addr_base, rnglists_base;
	bool has_lang, has_addr_base, has_rnglists_base;
};

static int read_die(const struct kp_dwraw_unit *u, uint64_t off, struct kp_dwraw_die *die,
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
	if (ab->plain && ab->fixed >= 0) {
		/* most DIEs: nothing to decode, a known size */
		skip_n(&c, (uint64_t)ab->fixed);
		if (c.bad)
			return -EINVAL;
		die->next = (uint64_t)(c.p - base);
		return 1;
	}
	sp = u->abbrevs->specs + ab->first;
	for (uint32_t i = 0; i < ab->n; i++, sp++) {
		uint32_t form;
		uint64_t v;

		if (sp->kind == A_SKIP && sp->size >= 0) {
			skip_n(&c, (uint64_t)sp->size);
			continue;
		}
		v = rd_form(&c, u, sp->form,
			    sp->form == DW_FORM_implicit_const
				    ? implicit_value(u->abbrevs, ab->first + i)
				    : 0,
			    &form);
		switch (sp->kind) {
		case A_SKIP:
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
		}
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
	/* the base address of range lists: libdw's rule */
	if (!(die.have & KP_DWRAW_LOW_PC) ||
	    form_addr(u, die.low_form, die.low_pc, &u->base) != 0) {
		if (!(die.have & KP_DWRAW_ENTRY_PC) ||
		    form_addr(u, die.entry_form, die.entry_pc, &u->base) != 0)
			u->base = 0;
	}
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
