/* kprof's own CFI rows: for an address of an object, the row of its FDE's
 * CFA program in force there (the CFA as a register plus an offset; each
 * register the same, lost, or saved at an offset from the CFA), found as
 * libunwind 1.6 finds it: the FDE through the object's .eh_frame_hdr
 * search table (dwarf_search_unwind_table), its CIE (parse_cie), then the
 * CIE's and the FDE's instructions up to the address (run_cfi_program).
 *
 * Rows are cached by object and address, so a step of a known address is
 * a lookup and a few loads from the stack copy (walk.c). libunwind's own
 * rule cache takes a lock around every step, and Debian's build blocks
 * signals around that lock: two sigprocmask system calls a step, most of
 * the cost of an unwind (docs/performance.md). Its per-thread policy,
 * which would skip the lock, is turned back into the global one by
 * unw_set_caching_policy in every release since 1.6.0.
 *
 * A row says KP_CFI_LIBUNWIND where it cannot hold the rules (expressions,
 * a register held in another, signal frames) or where kprof does not read
 * what libunwind would (pointer encodings other than pc-relative, unknown
 * instructions, CIEs without a sized augmentation): libunwind takes that
 * step and decides. See unwindP.h. */
#include <stdlib.h>
#include <string.h>

#include "unwind/unwindP.h"
#include "util/xalloc.h"

/* Rows kept at most (64 bytes each, 4 MiB): then the cache starts over. */
#define MAX_ROWS (1u << 16)
/* DW_CFA_remember_state nesting followed (GCC nests one or two). */
#define MAX_REMEMBER 8
/* The return address column of x86-64's CIEs. */
#define RA_COL UNW_X86_64_RIP
/* A rule a row does not hold: an expression, another register. */
#define RULE_OTHER 3

/* DW_EH_PE_* pointer encodings */
#define PE_absptr  0x00
#define PE_uleb128 0x01
#define PE_udata2  0x02
#define PE_udata4  0x03
#define PE_udata8  0x04
#define PE_sleb128 0x09
#define PE_sdata2  0x0a
#define PE_sdata4  0x0b
#define PE_sdata8  0x0c
#define PE_pcrel   0x10

/* ---- the tables' bytes ---- */

/* A reader of an object's table bytes [va, end), a word at a time
 * (kp_tables_word, the pages libunwind's reads go through as well). */
struct rd {
	struct kp_tables *tb;
	struct utab *t;
	struct trange *r; /* the range that holds the bytes */
	uint64_t va, end;
	uint64_t wva, w; /* the word held: bytes [wva, wva + 8) */
	bool held, bad;
};

/* A reader at va, bounded by the range that holds it. */
static bool rd_at(struct rd *r, struct kp_tables *tb, struct utab *t, uint64_t va)
{
	memset(r, 0, sizeof(*r));
	r->tb = tb;
	r->t = t;
	r->va = va;
	for (size_t i = 0; i < t->nr; i++) {
		if (va >= t->r[i].lo && va < t->r[i].hi) {
			r->r = &t->r[i];
			r->end = t->r[i].hi;
			return true;
		}
	}
	return false;
}

static uint8_t u8(struct rd *r)
{
	if (r->bad || r->va >= r->end) {
		r->bad = true;
		return 0;
	}
	if (!r->held || r->va < r->wva || r->va - r->wva >= 8) {
		if (kp_tables_word(r->tb, r->t, r->r, r->va, &r->w) != 1) {
			r->bad = true;
			return 0;
		}
		r->wva = r->va;
		r->held = true;
	}
	return (uint8_t)(r->w >> (8 * (r->va++ - r->wva)));
}

/* n little-endian bytes */
static uint64_t un(struct rd *r, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)u8(r) << (8 * i);
	return v;
}

static uint64_t uleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		b = u8(r);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !r->bad);
	return v;
}

static int64_t sleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		b = u8(r);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !r->bad);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* A pointer of encoding enc: absolute or pc-relative (to where it is
 * stored), direct; false for any other. */
static bool ptr(struct rd *r, uint8_t enc, uint64_t *v)
{
	uint64_t at = r->va, x;

	switch (enc & 0x0f) {
	case PE_absptr:
	case PE_udata8:
	case PE_sdata8:
		x = un(r, 8);
		break;
	case PE_udata4:
		x = un(r, 4);
		break;
	case PE_sdata4:
		x = (uint64_t)(int64_t)(int32_t)(uint32_t)un(r, 4);
		break;
	case PE_udata2:
		x = un(r, 2);
		break;
	case PE_sdata2:
		x = (uint64_t)(int64_t)(int16_t)(uint16_t)un(r, 2);
		break;
	case PE_uleb128:
		x = uleb(r);
		break;
	case PE_sleb128:
		x = (uint64_t)sleb(r);
		break;
	default:
		return false;
	}
	if ((enc & 0x70) == PE_pcrel)
		x += at;
	else if (enc & 0xf0)
		return false;
	*v = x;
	return !r->bad;
}

/* ---- CIE and FDE ---- */

struct cie {
	uint64_t code_align, ra;
	int64_t data_align;
	uint8_t fde_enc;
	bool signal;
	uint64_t instr, end; /* its initial instructions */
};

/* The CIE's augmentation data ("zR", "zPLR", "zRS"...), as parse_cie
 * reads it; false for anything else. */
static bool cie_aug(struct rd *r, const char *aug, struct cie *ci)
{
	uint64_t end, skip;

	if (aug[0] != 'z')
		return false; /* libunwind's FDE pointers would be absolute */
	end = uleb(r);
	end += r->va;
	for (const char *a = aug + 1; *a; a++) {
		uint8_t enc;

		switch (*a) {
		case 'L':
			u8(r);
			break;
		case 'R':
			ci->fde_enc = u8(r);
			break;
		case 'P': /* the personality pointer: its size alone */
			enc = u8(r);
			if ((enc & 0x70) == 0x50 || !ptr(r, enc & 0x0f, &skip))
				return false; /* aligned: its size depends on where */
			break;
		case 'S':
			ci->signal = true;
			break;
		default:
			return false;
		}
	}
	return !r->bad && r->va == end;
}

/* The CIE at va, as libunwind's parse_cie reads it. */
static bool cie_read(struct kp_tables *tb, struct utab *t, uint64_t va, struct cie *ci)
{
	struct rd r;
	uint64_t len;
	char aug[5] = {0};
	size_t n = 0;
	uint8_t version, ch;

	memset(ci, 0, sizeof(*ci));
	if (!rd_at(&r, tb, t, va))
		return false;
	len = un(&r, 4);
	if (len == 0xffffffff) {
		len = un(&r, 8);
		ci->end = r.va + len;
		if (un(&r, 8) != 0)
			return false;
	} else {
		ci->end = r.va + len;
		if (un(&r, 4) != 0)
			return false;
	}
	/* version 4 adds two fields libunwind 1.6 does not read */
	version = u8(&r);
	if (version != 1 && version != 3)
		return false;
	/* libunwind keeps four characters: longer strings are its own */
	while ((ch = u8(&r)) != 0 && !r.bad) {
		if (n == 4)
			return false;
		aug[n++] = (char)ch;
	}
	ci->code_align = uleb(&r);
	ci->data_align = sleb(&r);
	ci->ra = version == 1 ? u8(&r) : uleb(&r);
	ci->fde_enc = PE_udata8;
	if (!cie_aug(&r, aug, ci))
		return false;
	ci->instr = r.va;
	return !r.bad;
}

/* ---- the CFA program ---- */

struct rstate {
	bool cfa_set, cfa_expr;
	uint8_t cfa_reg;
	int64_t cfa_off;
	uint8_t rule[CFI_NREGS]; /* enum kp_cfi_rule, or RULE_OTHER */
	int64_t off[CFI_NREGS];
};

struct prog {
	const struct cie *ci;
	struct rstate cur, init;
	struct rstate saved[MAX_REMEMBER];
	size_t depth;
	bool in_cie;
	uint64_t loc;
};

static bool reg_set(struct prog *p, uint64_t reg, uint8_t rule, int64_t off)
{
	if (reg >= CFI_NREGS)
		return false; /* libunwind's EBADREG */
	p->cur.rule[reg] = rule;
	p->cur.off[reg] = off;
	return true;
}

static bool reg_restore(struct prog *p, uint64_t reg)
{
	/* in the CIE, libunwind restores from a state not set up yet */
	if (reg >= CFI_NREGS || p->in_cie)
		return false;
	p->cur.rule[reg] = p->init.rule[reg];
	p->cur.off[reg] = p->init.off[reg];
	return true;
}

static bool cfa_set(struct prog *p, uint64_t reg, int64_t off)
{
	if (reg >= CFI_NREGS)
		return false;
	p->cur.cfa_set = true;
	p->cur.cfa_expr = false;
	p->cur.cfa_reg = (uint8_t)reg;
	p->cur.cfa_off = off;
	return true;
}

/* A block (an expression): skipped, its rule noted as one a row does not
 * hold. */
static void block_skip(struct rd *r)
{
	uint64_t len = uleb(r);

	if (len > r->end - r->va)
		r->bad = true;
	else
		r->va += len;
}

/* One instruction with an operand in its low six bits. */
static bool op_short(struct prog *p, struct rd *r, uint8_t op)
{
	uint8_t arg = op & 0x3f;
	uint64_t da = (uint64_t)p->ci->data_align;

	switch (op >> 6) {
	case 1: /* DW_CFA_advance_loc */
		p->loc += arg * p->ci->code_align;
		return true;
	case 2: /* DW_CFA_offset */
		return reg_set(p, arg, KP_CFI_SAVED, (int64_t)(uleb(r) * da));
	default: /* DW_CFA_restore */
		return reg_restore(p, arg);
	}
}

/* The rest of the instructions libunwind 1.6 knows; false for those it
 * fails on, ignores or that kprof leaves to it. */
static bool op_long(struct prog *p, struct rd *r, uint8_t op)
{
	uint64_t da = (uint64_t)p->ci->data_align, ca = p->ci->code_align, reg;

	switch (op) {
	case 0x00: /* DW_CFA_nop */
		return true;
	case 0x2e: /* DW_CFA_GNU_args_size: for resuming, not stepping */
		uleb(r);
		return true;
	case 0x02: /* DW_CFA_advance_loc1, 2, 4 */
	case 0x03:
	case 0x04:
		p->loc += un(r, op == 0x02 ? 1 : op == 0x03 ? 2 : 4) * ca;
		return true;
	case 0x05: /* DW_CFA_offset_extended */
		reg = uleb(r);
		return reg_set(p, reg, KP_CFI_SAVED, (int64_t)(uleb(r) * da));
	case 0x11: /* DW_CFA_offset_extended_sf */
		reg = uleb(r);
		return reg_set(p, reg, KP_CFI_SAVED, (int64_t)((uint64_t)sleb(r) * da));
	case 0x2f: /* DW_CFA_GNU_negative_offset_extended */
		reg = uleb(r);
		return reg_set(p, reg, KP_CFI_SAVED, -(int64_t)(uleb(r) * da));
	case 0x06: /* DW_CFA_restore_extended */
		return reg_restore(p, uleb(r));
	case 0x07: /* DW_CFA_undefined */
		return reg_set(p, uleb(r), KP_CFI_UNDEF, 0);
	case 0x08: /* DW_CFA_same_value */
		return reg_set(p, uleb(r), KP_CFI_SAME, 0);
	case 0x09: /* DW_CFA_register */
		reg = uleb(r);
		uleb(r);
		return reg_set(p, reg, RULE_OTHER, 0);
	case 0x0a: /* DW_CFA_remember_state */
		if (p->depth == MAX_REMEMBER)
			return false;
		p->saved[p->depth++] = p->cur;
		return true;
	case 0x0b: /* DW_CFA_restore_state */
		if (!p->depth)
			return false;
		p->cur = p->saved[--p->depth];
		return true;
	case 0x0c: /* DW_CFA_def_cfa (offset not factored) */
		reg = uleb(r);
		return cfa_set(p, reg, (int64_t)uleb(r));
	case 0x12: /* DW_CFA_def_cfa_sf (factored) */
		reg = uleb(r);
		return cfa_set(p, reg, (int64_t)((uint64_t)sleb(r) * da));
	case 0x0d: /* DW_CFA_def_cfa_register */
		return cfa_set(p, uleb(r), p->cur.cfa_off);
	case 0x0e: /* DW_CFA_def_cfa_offset */
		p->cur.cfa_off = (int64_t)uleb(r);
		return true;
	case 0x13: /* DW_CFA_def_cfa_offset_sf */
		p->cur.cfa_off = (int64_t)((uint64_t)sleb(r) * da);
		return true;
	case 0x0f: /* DW_CFA_def_cfa_expression */
		p->cur.cfa_set = p->cur.cfa_expr = true;
		block_skip(r);
		return true;
	case 0x10: /* DW_CFA_expression, DW_CFA_val_expression */
	case 0x16:
		reg = uleb(r);
		block_skip(r);
		return reg_set(p, reg, RULE_OTHER, 0);
	default:
		return false;
	}
}

/* Runs the instructions [r->va, r->end) while the location stays at or
 * below target, as run_cfi_program does. */
static bool prog_run(struct prog *p, struct rd *r, uint64_t target)
{
	while (p->loc <= target && r->va < r->end) {
		uint8_t op = u8(r);

		if (r->bad || !(op & 0xc0 ? op_short(p, r, op) : op_long(p, r, op)) || r->bad)
			return false;
	}
	return true;
}

/* The row of the program's state; KP_CFI_LIBUNWIND where it cannot say. */
static void row_make(const struct prog *p, struct kp_cfi_row *row)
{
	const struct rstate *s = &p->cur;

	memset(row, 0, sizeof(*row));
	row->kind = KP_CFI_LIBUNWIND;
	row->signal = p->ci->signal;
	if (p->ci->signal || p->ci->ra != RA_COL || !s->cfa_set || s->cfa_expr ||
	    s->cfa_reg >= RA_COL || s->cfa_off < INT32_MIN || s->cfa_off > INT32_MAX)
		return;
	for (int i = 0; i < CFI_NREGS; i++) {
		if (s->rule[i] == RULE_OTHER || (s->rule[i] == KP_CFI_SAVED &&
						 (s->off[i] < INT16_MIN || s->off[i] > INT16_MAX)))
			return;
		row->rule[i] = s->rule[i];
		row->off[i] = (int16_t)s->off[i];
		if (i < RA_COL && i != UNW_X86_64_RSP && s->rule[i] != KP_CFI_SAME)
			row->changed |= (uint16_t)(1u << i);
	}
	/* a return address the same as the callee's: libunwind's loop check */
	if (row->rule[RA_COL] == KP_CFI_SAME)
		return;
	row->cfa_reg = s->cfa_reg;
	row->cfa_off = (int32_t)s->cfa_off;
	row->kind = KP_CFI_STEP;
}

/* ---- finding the row of an address ---- */

/* The FDE of va through the search table, as remote_lookup finds it:
 * the last entry that starts at or below va (relative to the hdr, in 32
 * bits). KP_CFI_STEP when there is one (*fde). */
static enum kp_cfi_kind fde_find(struct kp_tables *tb, struct utab *t, uint64_t va, uint64_t *fde)
{
	int32_t rel = (int32_t)(uint32_t)(va - t->hdr_vaddr);
	uint64_t lo = 0, hi = t->fde_count, w;
	struct rd r;

	if (!rd_at(&r, tb, t, t->table_vaddr))
		return KP_CFI_LIBUNWIND;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (kp_tables_word(tb, t, r.r, t->table_vaddr + mid * 8, &w) != 1)
			return KP_CFI_LIBUNWIND;
		if (rel < (int32_t)(uint32_t)w)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (hi == 0)
		return KP_CFI_NOINFO;
	if (kp_tables_word(tb, t, r.r, t->table_vaddr + (hi - 1) * 8, &w) != 1)
		return KP_CFI_LIBUNWIND;
	*fde = t->hdr_vaddr + (uint64_t)(int64_t)(int32_t)(uint32_t)(w >> 32);
	return KP_CFI_STEP;
}

/* The row at va from the FDE at fva, as dwarf_extract_proc_info_from_fde
 * and libunwind's parser read it. */
static void fde_row(struct kp_tables *tb, struct utab *t, uint64_t fva, uint64_t va,
		    struct kp_cfi_row *row)
{
	struct rd r, cr;
	struct cie ci;
	struct prog p;
	uint64_t len, end, at, cie_off, start, range;

	memset(row, 0, sizeof(*row));
	row->kind = KP_CFI_LIBUNWIND;
	if (!rd_at(&r, tb, t, fva))
		return;
	len = un(&r, 4);
	if (len == 0xffffffff) {
		len = un(&r, 8);
		end = r.va + len;
		at = r.va;
		cie_off = un(&r, 8);
	} else {
		end = r.va + len;
		at = r.va;
		cie_off = (uint64_t)(int64_t)(int32_t)(uint32_t)un(&r, 4);
	}
	if (r.bad)
		return;
	if (len == 0 || cie_off == 0) { /* the table's end, or a CIE */
		row->kind = KP_CFI_NOINFO;
		return;
	}
	if (!cie_read(tb, t, at - cie_off, &ci) || (ci.fde_enc & 0x70) != PE_pcrel ||
	    !ptr(&r, ci.fde_enc, &start) || !ptr(&r, ci.fde_enc & 0x0f, &range))
		return;
	if (va < start || va >= start + range) {
		row->kind = KP_CFI_NOINFO;
		return;
	}
	block_skip(&r); /* the augmentation data (the LSDA) */
	if (r.bad || end > r.end)
		return;
	r.end = end;
	memset(&p, 0, sizeof(p));
	p.ci = &ci;
	p.in_cie = true;
	if (!rd_at(&cr, tb, t, ci.instr) || ci.end > cr.end)
		return;
	cr.end = ci.end;
	if (!prog_run(&p, &cr, UINT64_MAX))
		return;
	p.init = p.cur;
	p.in_cie = false;
	p.depth = 0;
	p.loc = start;
	if (prog_run(&p, &r, va))
		row_make(&p, row);
}

void kp_cfi_init(struct kp_cfi *cf)
{
	memset(cf, 0, sizeof(*cf));
	kp_u64map_init(&cf->idx);
}

void kp_cfi_fini(struct kp_cfi *cf)
{
	kp_u64map_fini(&cf->idx);
	free(cf->rows);
}

const struct kp_cfi_row *kp_cfi_row(struct kp_cfi *cf, struct kp_tables *tb, struct utab *t,
				    uint64_t va)
{
	/* an address past 2^40 or an object id past 2^24 is found each
	 * time, in the slot after the last row */
	bool keyed = t->obj < (1u << 24) && va < ((uint64_t)1 << 40);
	uint64_t key = (uint64_t)t->obj << 40 | va, v, fde;
	struct kp_cfi_row *row;
	enum kp_cfi_kind k;

	if (keyed && kp_u64map_get(&cf->idx, key, &v)) {
		cf->hits++;
		return &cf->rows[v];
	}
	cf->misses++;
	if (cf->n == MAX_ROWS) {
		kp_u64map_fini(&cf->idx);
		kp_u64map_init(&cf->idx);
		cf->n = 0;
	}
	if (cf->n == cf->cap) {
		cf->cap = cf->cap ? cf->cap * 2 : 256;
		cf->rows = kp_xrealloc(cf->rows, cf->cap * sizeof(*cf->rows));
	}
	row = &cf->rows[cf->n];
	k = fde_find(tb, t, va, &fde);
	if (k == KP_CFI_STEP) {
		fde_row(tb, t, fde, va, row);
	} else {
		memset(row, 0, sizeof(*row));
		row->kind = (uint8_t)k;
	}
	if (keyed)
		kp_u64map_put(&cf->idx, key, cf->n++);
	return row;
}
