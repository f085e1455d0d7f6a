/* The two walkers of a user stack, each a segment of one unwind (unwind.c
 * alternates them): the CFI walker steps libunwind's cursor over the
 * objects' unwind tables; the frame-pointer walker follows the chain of
 * saved frame pointers inside the stack copy where no table covers a
 * frame, validated (it must stay in the snapshot, move up the stack and
 * return into code). Each step is bounded: every frame lies strictly above
 * the last, and a walk ends at max frames. See unwindP.h. */
#include <string.h>

#include "unwind/unwindP.h"

/* A word of the snapshot, if addr is inside it. */
static bool stack_word(const struct uctx *c, uint64_t addr, uint64_t *v)
{
	if (addr < c->sp0 || addr - c->sp0 + 8 > c->in->stack_len)
		return false;
	memcpy(v, c->in->stack + (addr - c->sp0), 8);
	return true;
}

bool kp_walk_is_code(struct uctx *c, uint64_t addr, bool *has_table)
{
	struct kp_unwind_map m;
	const struct utab *t;

	if (!addr || !c->in->find_map(c->in->map_arg, addr, &m))
		return false;
	t = kp_tables_get(&c->u->tables, m.obj);
	*has_table = t && t->ok;
	return true;
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
enum dw_stop kp_walk_dwarf(struct uctx *c, unw_cursor_t *cur, struct walk *w, uint64_t *ip,
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

			if (!kp_walk_is_code(c, nip, &tab)) {
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
