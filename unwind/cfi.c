/* kprof's own CFI rows: for an address of an object, the rules in force
 * there (the CFA as a register plus an offset; each register the same,
 * lost, or saved at an offset from the CFA), as elfutils' libdw computes
 * them from the object's .eh_frame (dwarf_getcfi_elf, dwarf_cfi_addrframe:
 * the FDE through .eh_frame_hdr's search table, its CIE, the CFA program
 * up to the address). The object's Elf and Dwarf_CFI are opened on its
 * first row and kept with its tables (struct utab, freed by tables.c).
 *
 * Rows are cached by object and address, so a step of a known address is
 * a lookup and a few loads from the stack copy (walk.c). libunwind's own
 * rule cache takes a lock around every step, and Debian's build blocks
 * signals around that lock: two sigprocmask system calls a step, most of
 * the cost of an unwind (docs/performance.md). Its per-thread policy,
 * which would skip the lock, is turned back into the global one by
 * unw_set_caching_policy in every release since 1.6.0.
 *
 * A row says KP_CFI_LIBUNWIND where it cannot hold the rules (a CFA or a
 * register given by an expression, a register held in another, a
 * val_offset rule, a signal frame, a return address column other than
 * rip) or where libdw cannot say (a damaged .eh_frame, an object it cannot
 * open): libunwind takes that step and decides. See unwindP.h. */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/unwindP.h"
#include "util/xalloc.h"

/* Rows kept at most (64 bytes each, 4 MiB): then the cache starts over. */
#define MAX_ROWS (1u << 16)
/* The return address column of x86-64's CIEs. */
#define RA_COL UNW_X86_64_RIP

/* The object's CFI, opened on its first row from the caller's fd; NULL
 * when libdw finds none (then every row of it is libunwind's). With
 * ELF_C_READ libelf reads with pread (a file truncated under an mmap
 * would raise SIGBUS), and dwarf_getcfi_elf reads .eh_frame and its hdr
 * at once: after it libelf is told to leave the fd alone, which the
 * caller may close and reuse. */
static Dwarf_CFI *cfi_open(struct kp_tables *tb, struct utab *t)
{
	int fd;

	if (t->cfi_tried)
		return t->cfi;
	t->cfi_tried = true;
	fd = tb->objs.fd(tb->objs.arg, t->obj);
	if (fd < 0)
		return NULL;
	t->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!t->elf)
		return NULL;
	t->cfi = dwarf_getcfi_elf(t->elf);
	elf_cntl(t->elf, ELF_C_FDDONE);
	/* libdw holds about the bytes of the ranges libunwind pages in */
	for (size_t i = 0; t->cfi && i < t->nr; i++) {
		t->bytes += t->r[i].hi - t->r[i].lo;
		tb->st.table_bytes += t->r[i].hi - t->r[i].lo;
	}
	return t->cfi;
}

/* Register reg's rule in f as a row holds it; false for the rules it does
 * not hold. libdw's forms (libdw.h, dwarf_frame_register): no ops and a
 * NULL *ops is "same value", no ops in ops_mem "undefined", and
 * call_frame_cfa [plus_uconst N] "offset(N)" (N two's complement; a
 * trailing stack_value makes it val_offset, which is libunwind's).
 * libdw's x86-64 ABI rules make the registers no CFI names undefined, where
 * libunwind keeps the callee's value: so undefined is kept only for the
 * return address and rbp, which compilers mark undefined on purpose (the
 * outermost frame), and is "same" for the others, as libunwind reads them. */
static bool reg_rule(Dwarf_Frame *f, int reg, uint8_t *rule, int16_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	int64_t v = 0;

	*rule = KP_CFI_SAME;
	*off = 0;
	if (dwarf_frame_register(f, reg, mem, &ops, &n) != 0)
		return false;
	if (n == 0) {
		if (ops && (reg == RA_COL || reg == UNW_X86_64_RBP))
			*rule = KP_CFI_UNDEF;
		return true;
	}
	if (ops != mem || ops[0].atom != DW_OP_call_frame_cfa || n > 2)
		return false;
	if (n == 2) {
		if (ops[1].atom != DW_OP_plus_uconst)
			return false;
		v = (int64_t)ops[1].number;
	}
	if (v < INT16_MIN || v > INT16_MAX)
		return false;
	*rule = KP_CFI_SAVED;
	*off = (int16_t)v;
	return true;
}

/* The CFA of f as a register plus an offset: one DW_OP_bregx (reg,
 * offset), as libdw gives a def_cfa rule, or one DW_OP_bregN (offset). */
static bool cfa_rule(Dwarf_Frame *f, uint8_t *reg, int32_t *off)
{
	Dwarf_Op *ops;
	size_t n;
	uint64_t r;
	int64_t o;

	if (dwarf_frame_cfa(f, &ops, &n) != 0 || n != 1)
		return false;
	if (ops[0].atom == DW_OP_bregx) {
		r = ops[0].number;
		o = (int64_t)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		r = ops[0].atom - DW_OP_breg0;
		o = (int64_t)ops[0].number;
	} else {
		return false;
	}
	if (r >= RA_COL || o < INT32_MIN || o > INT32_MAX)
		return false;
	*reg = (uint8_t)r;
	*off = (int32_t)o;
	return true;
}

/* The row of frame f; KP_CFI_LIBUNWIND where it cannot say. */
static void row_make(Dwarf_Frame *f, struct kp_cfi_row *row)
{
	bool signal = false;
	int ra = dwarf_frame_info(f, NULL, NULL, &signal);

	row->signal = signal;
	if (ra != RA_COL || signal || !cfa_rule(f, &row->cfa_reg, &row->cfa_off))
		return;
	for (int i = 0; i < CFI_NREGS; i++) {
		if (i == UNW_X86_64_RSP)
			continue; /* the caller's sp is the CFA */
		if (!reg_rule(f, i, &row->rule[i], &row->off[i]))
			return;
		if (i < RA_COL && row->rule[i] != KP_CFI_SAME)
			row->changed |= (uint16_t)(1u << i);
	}
	/* a return address the same as the callee's: libunwind's loop check */
	if (row->rule[RA_COL] == KP_CFI_SAME)
		return;
	row->kind = KP_CFI_STEP;
}

/* The row at va of object t. */
static void row_find(struct kp_tables *tb, struct utab *t, uint64_t va, struct kp_cfi_row *row)
{
	Dwarf_CFI *cfi = cfi_open(tb, t);
	Dwarf_Frame *f;

	memset(row, 0, sizeof(*row));
	row->kind = KP_CFI_LIBUNWIND;
	if (!cfi)
		return;
	if (dwarf_cfi_addrframe(cfi, va, &f) != 0) {
		/* no FDE covers va: the frame-pointer chain (any other error
		 * is a damaged table, libunwind's to judge) */
		if (!strcmp(dwarf_errmsg(-1), "no matching address range"))
			row->kind = KP_CFI_NOINFO;
		return;
	}
	row_make(f, row);
	free(f);
}

void kp_cfi_init(struct kp_cfi *cf)
{
	memset(cf, 0, sizeof(*cf));
	kp_u64map_init(&cf->idx);
	elf_version(EV_CURRENT);
}

void kp_cfi_fini(struct kp_cfi *cf)
{
	kp_u64map_fini(&cf->idx);
	free(cf->rows);
}

const struct kp_cfi_row *kp_cfi_row(struct kp_cfi *cf, struct kp_tables *tb, struct utab *t,
				    uint64_t va)
{
	/* an address past 2^40 or an object id past 2^24 (the caller's past
	 * 2^23, where JIT tables' numbers start) is found each time, in the
	 * slot after the last row */
	bool keyed = t->obj < (t->jit ? 1u << 24 : KP_JITCFI_OBJ) && va < ((uint64_t)1 << 40);
	uint64_t key = (uint64_t)t->obj << 40 | va, v;
	struct kp_cfi_row *row;

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
	row_find(tb, t, va, row);
	if (keyed)
		kp_u64map_put(&cf->idx, key, cf->n++);
	return row;
}
