/* The two walkers of a user stack, each a segment of one unwind (unwind.c
 * alternates them): the CFI walker steps by kprof's rows of the objects'
 * unwind tables (cfi.c), and by libunwind's cursor where a row leaves the
 * step to it; the frame-pointer walker follows the chain of
 * saved frame pointers inside the stack copy where no table covers a
 * frame, validated (it must stay in the snapshot, move up the stack and
 * return into code). Each step is bounded: every frame lies strictly above
 * the last, and a walk ends at max frames. See unwindP.h. */
#include <string.h>

#include "unwind/unwindP.h"

bool kp_walk_stack_word(const struct uctx *c, uint64_t addr, uint64_t *v)
{
	if (addr < c->sp0 || addr - c->sp0 >= MAX_STACK_SPAN)
		return false;
	if (addr - c->sp0 + 8 <= c->in->stack_len) {
		memcpy(v, c->in->stack + (addr - c->sp0), 8);
		return true;
	}
	return c->in->more && c->in->more(c->in->more_arg, addr, v, 8) == 8;
}

static bool stack_word(const struct uctx *c, uint64_t addr, uint64_t *v)
{
	return kp_walk_stack_word(c, addr, v);
}

/* Finds the mapping that holds addr into c (map, map_t, biased and
 * map_bias): the last one found when addr is in it again, else the
 * caller's lookup. False when no mapping holds addr. */
static bool map_find(struct uctx *c, uint64_t addr)
{
	struct kp_tables *tb = &c->u->tables;
	struct kp_unwind_jit ji;
	struct utab *t;

	if (c->mapped && addr >= c->map.start && addr < c->map.end)
		return true;
	c->mapped = c->in->find_map(c->in->map_arg, addr, &c->map);
	if (!c->mapped)
		return false;
	c->map_t = kp_tables_get(tb, c->map.obj);
	c->biased = c->map_t && c->map_t->ok && kp_tables_bias(c->map_t, &c->map, &c->map_bias);
	if (c->map.obj || !tb->objs.jit)
		return true;
	/* anonymous code: the JIT code at addr, when its unwinding info is
	 * known, is the "mapping" (the code at 0 in its table); else the
	 * next address is asked again (other code of the mapping may have) */
	if (tb->objs.jit(tb->objs.arg, c->in->pid, addr, &ji) && addr >= ji.start &&
	    addr < ji.end && (t = kp_jitcfi_get(tb, &ji))) {
		c->map.start = ji.start;
		c->map.end = ji.end;
		c->map_t = t;
		c->map_bias = ji.start;
		c->biased = true;
	} else {
		c->map.end = c->map.start;
	}
	return true;
}

bool kp_walk_is_code(struct uctx *c, uint64_t addr, bool *has_table)
{
	if (!addr || !map_find(c, addr))
		return false;
	*has_table = c->map_t && c->map_t->ok;
	/* CPython's trampolines step by their known rule, as by a table */
	if (!*has_table && !c->map.obj) {
		bool after_call;

		*has_table = kp_pytramp_at(c->u, c->in->pid, addr, &after_call) != 0;
	}
	return true;
}

/* Is the code kp_walk_is_code last found anonymous, with a runtime to ask
 * about it? */
static bool runtime_code(const struct uctx *c)
{
	return c->u->tables.objs.runtime && !c->map.obj;
}

/* The frame-pointer chain from a frame (ip, sp, bp) that no table covers,
 * inside the snapshot. A leaf sampled before its push/mov of the frame
 * pointer, or after its pop, still has bp = its caller's frame: then the
 * return address sits at sp (or above the pushed bp at sp + 8) and the
 * caller would be skipped; that state is recognized from the snapshot.
 * On FP_REENTER, ip, sp and bp are the frame to continue from with CFI. */
enum fp_stop kp_walk_fp(struct uctx *c, struct walk *w, bool leaf, uint64_t *ip, uint64_t *sp,
			uint64_t *bp)
{
	uint64_t top = c->sp0 + c->in->stack_len, w0, w1;
	bool tab = false;

	if (leaf && stack_word(c, *sp, &w0)) {
		uint64_t ret = 0, nsp = 0;

		if (w0 != *bp && kp_walk_is_code(c, w0, &tab)) {
			ret = w0; /* before push %rbp, or after pop %rbp */
			nsp = *sp + 8;
		} else if (w0 == *bp && stack_word(c, *sp + 8, &w1) &&
			   kp_walk_is_code(c, w1, &tab)) {
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
			if (runtime_code(c))
				return FP_RUNTIME;
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
		if (*bp + 16 < *bp || !stack_word(c, *bp, &next) || !stack_word(c, *bp + 8, &ret)) {
			bool near = *bp - c->sp0 < MAX_STACK_SPAN;
			bool past = *bp + 16 > top;

			/* past the snapshot (and the live stack, if read): it
			 * was too small; anything else is garbage */
			w->end = near && past ? KP_UNWIND_SNAPSHOT : KP_UNWIND_BAD_FRAME;
			return FP_END;
		}
		if (ret == 0) {
			w->end = KP_UNWIND_OUTERMOST;
			return FP_END;
		}
		if (!kp_walk_is_code(c, ret, &tab)) {
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
		if (tab || runtime_code(c)) {
			*bp = next;
			return tab ? FP_REENTER : FP_RUNTIME;
		}
		/* the next frame must be further up the stack */
		if (next != 0 && next <= *bp) {
			w->end = KP_UNWIND_BAD_FRAME;
			return FP_END;
		}
		*bp = next;
	}
}

/* The caller's registers, as the cursor's step found them, into c (read
 * whole first: the cursor reads the registers it kept through c); a
 * register whose saved value lies above the snapshot is noted lost. */
static void cursor_regs(struct uctx *c, unw_cursor_t *cur)
{
	uint64_t regs[CFI_NREGS] = {0};
	uint32_t have = 0, lost = 0;

	for (int r = 0; r < CFI_NREGS; r++) {
		unw_word_t v;

		c->beyond = false;
		if (unw_get_reg(cur, r, &v) == 0) {
			regs[r] = v;
			have |= 1u << r;
		} else if (c->beyond) {
			lost |= 1u << r;
		}
	}
	c->beyond = false;
	memcpy(c->regs, regs, sizeof(regs));
	c->have = have;
	c->lost = lost;
}

/* One step by libunwind from the frame in c. An exact ip (the sampled
 * one, or one after a signal frame) is looked up at itself, in the
 * address space that caches exact ips; a return address at its call's
 * byte, given to libunwind as an exact ip - 1 in the other (unwindP.h). */
static enum step unw_one(struct uctx *c, bool exact)
{
	unw_cursor_t cur;
	uint64_t ip = c->regs[UNW_X86_64_RIP];
	int ret;

	if (!exact)
		c->regs[UNW_X86_64_RIP] = ip - 1;
	if (unw_init_remote(&cur, exact ? c->space->leaf : c->space->as, c) < 0) {
		c->regs[UNW_X86_64_RIP] = ip;
		return STEP_FAIL;
	}
	c->noinfo = false;
	c->beyond = false;
	ret = unw_step(&cur);
	if (ret <= 0 || c->noinfo) {
		unw_word_t cfa = 0;

		c->regs[UNW_X86_64_RIP] = ip;
		/* No table covered this frame (libunwind looks up ip - 1 for a
		 * return address): libunwind guessed along bp on its own; walk
		 * it ourselves instead, validated. */
		if (c->noinfo)
			return STEP_NOINFO;
		if (ret == 0 && unw_get_reg(&cur, UNW_X86_64_CFA, &cfa) == 0 &&
		    cfa < MIN_STACK_ADDR)
			return STEP_FAIL;
		return ret == 0 ? STEP_OUTERMOST : STEP_FAIL;
	}
	cursor_regs(c, &cur);
	return STEP_NEXT;
}

/* A word of memory for a row's step: the snapshot's. A read above it,
 * within a stack's reach, says the snapshot was too small (as remote.c's
 * access_mem does for libunwind). */
static bool mem_word(struct uctx *c, uint64_t addr, uint64_t *v)
{
	if (stack_word(c, addr, v))
		return true;
	if (addr >= c->sp0 && addr - c->sp0 < MAX_STACK_SPAN)
		c->beyond = true;
	return false;
}

/* The caller's registers into c by row, as libunwind's step computes
 * them (apply_reg_state, then x86-64's unw_step): the CFA from its
 * register (sp is the CFA of the frame below, so always known); the end
 * of the stack where the return address, or the frame pointer (x86-64's
 * ABI), is undefined; the return address read; each saved register read
 * (libunwind reads it when asked, kprof at once: the same bytes); sp the
 * CFA. The registers change only once the step can no longer fail. */
static enum step row_step(struct uctx *c, const struct kp_cfi_row *row)
{
	uint32_t bit = 1u << row->cfa_reg;
	uint64_t cfa, ra;

	if (row->cfa_reg != UNW_X86_64_RSP && !(c->have & bit)) {
		c->beyond = (c->lost & bit) != 0;
		return STEP_FAIL;
	}
	cfa = c->regs[row->cfa_reg] + (uint64_t)(int64_t)row->cfa_off;
	if (cfa < MIN_STACK_ADDR)
		return STEP_FAIL;
	if (row->rule[UNW_X86_64_RIP] == KP_CFI_UNDEF)
		return STEP_OUTERMOST;
	if (!mem_word(c, cfa + (uint64_t)(int64_t)row->off[UNW_X86_64_RIP], &ra))
		return STEP_FAIL;
	if (row->rule[UNW_X86_64_RBP] == KP_CFI_UNDEF)
		return STEP_OUTERMOST;
	for (uint32_t m = row->changed; m; m &= m - 1) {
		int r = __builtin_ctz(m);

		bit = 1u << r;
		c->have &= ~bit;
		c->lost &= ~bit;
		if (row->rule[r] == KP_CFI_UNDEF)
			continue;
		c->beyond = false;
		if (mem_word(c, cfa + (uint64_t)(int64_t)row->off[r], &c->regs[r]))
			c->have |= bit;
		else if (c->beyond)
			c->lost |= bit;
	}
	c->beyond = false;
	c->regs[UNW_X86_64_RSP] = cfa;
	c->regs[UNW_X86_64_RIP] = ra;
	bit = 1u << UNW_X86_64_RSP | 1u << UNW_X86_64_RIP;
	c->have |= bit;
	c->lost &= ~bit;
	return STEP_NEXT;
}

/* The row of the frame whose ip is ip: looked up at ip itself when exact,
 * at the call's byte when a return address. */
static const struct kp_cfi_row *frame_row(struct uctx *c, uint64_t ip, bool exact)
{
	static const struct kp_cfi_row noinfo = {.kind = KP_CFI_NOINFO};
	uint64_t at = exact ? ip : ip - 1;

	if (!map_find(c, at) || !c->biased)
		return &noinfo;
	return kp_cfi_row(&c->u->cfi, &c->u->tables, c->map_t, at - c->map_bias);
}

enum step kp_walk_step(struct uctx *c, bool *exact)
{
	const struct kp_cfi_row *row = frame_row(c, c->regs[UNW_X86_64_RIP], *exact);
	struct kp_cfi_row tramp;
	bool signal = row->signal;
	enum step r;

	c->beyond = false;
	if (row->kind == KP_CFI_NOINFO && !c->map.obj &&
	    kp_pytramp_row(c->u, c->in->pid, c->regs[UNW_X86_64_RIP], *exact, &tramp)) {
		c->u->tables.st.steps_kprof++;
		r = row_step(c, &tramp);
	} else if (row->kind == KP_CFI_STEP && !c->u->libunwind_only) {
		c->u->tables.st.steps_kprof++;
		r = row_step(c, row);
	} else if (row->kind == KP_CFI_NOINFO && !c->u->libunwind_only) {
		return STEP_NOINFO;
	} else {
		c->u->tables.st.steps_libunwind++;
		r = unw_one(c, *exact);
	}
	*exact = r == STEP_NEXT && signal;
	return r;
}

enum dw_stop kp_walk_cfi(struct uctx *c, struct walk *w, uint64_t *ip, uint64_t *sp, uint64_t *bp,
			 bool exact)
{
	for (;;) {
		enum step r = kp_walk_step(c, &exact);
		uint64_t nip = c->regs[UNW_X86_64_RIP], nsp = c->regs[UNW_X86_64_RSP];
		bool tab;

		if (r == STEP_NOINFO)
			return DW_FP;
		if (r != STEP_NEXT) {
			w->end = r == STEP_OUTERMOST ? KP_UNWIND_OUTERMOST
				 : c->beyond	     ? KP_UNWIND_SNAPSHOT
						     : KP_UNWIND_BAD_FRAME;
			return DW_END;
		}
		if (nip == 0) {
			w->end = KP_UNWIND_OUTERMOST;
			return DW_END;
		}
		/* callers live higher up the stack: anything else loops */
		if (nsp <= *sp || !kp_walk_is_code(c, nip, &tab)) {
			w->end = KP_UNWIND_BAD_FRAME;
			return DW_END;
		}
		if (w->n == w->max) {
			w->end = KP_UNWIND_DEPTH;
			return DW_END;
		}
		w->ips[w->n++] = nip;
		w->sp = nsp;
		*ip = nip;
		*sp = nsp;
		*bp = c->have & (1u << UNW_X86_64_RBP) ? c->regs[UNW_X86_64_RBP] : 0;
	}
}
