/* Frames a language runtime describes (kp_unwind_objects.runtime): code
 * in anonymous memory with no unwinding info whose frames the runtime
 * knows how to step (HotSpot's compiled Java frames keep no frame
 * pointer; their size is in the JVM's code cache). The walker asks the
 * runtime frame after frame and checks each answer as the other walkers
 * check theirs: the caller's frame lies strictly above, and returns into
 * code. See docs/java.md. */
#include "unwind/unwindP.h"

enum fp_stop kp_walk_runtime(struct uctx *c, struct walk *w, uint64_t *ip, uint64_t *sp,
			     uint64_t *bp)
{
	const struct kp_unwind_objects *o = &c->u->tables.objs;

	for (;;) {
		struct kp_unwind_rtframe f = {*ip, *sp, *bp, w->n == 1, w->n - 1, c->sp0},
					 caller = {0};
		enum kp_unwind_rtstep r = o->runtime(o->rt_arg, c->in, &f, &caller);
		bool tab = false;

		if (r == KP_UNWIND_RT_NONE)
			return FP_RUNTIME;
		if (r == KP_UNWIND_RT_BEYOND) {
			w->end = KP_UNWIND_SNAPSHOT;
			return FP_END;
		}
		if (r != KP_UNWIND_RT_STEP || caller.sp <= *sp || caller.sp < MIN_STACK_ADDR ||
		    caller.sp - *sp > MAX_STACK_SPAN) {
			w->end = KP_UNWIND_BAD_FRAME;
			return FP_END;
		}
		if (caller.ip == 0) {
			w->end = KP_UNWIND_OUTERMOST;
			return FP_END;
		}
		if (!kp_walk_is_code(c, caller.ip, &tab)) {
			w->end = KP_UNWIND_BAD_FRAME;
			return FP_END;
		}
		if (w->n == w->max) {
			w->end = KP_UNWIND_DEPTH;
			return FP_END;
		}
		w->ips[w->n++] = caller.ip;
		w->sp = caller.sp;
		*ip = caller.ip;
		*sp = caller.sp;
		*bp = caller.bp;
		if (tab)
			return FP_REENTER;
		if (c->map.obj)
			return FP_RUNTIME; /* a file's code without tables */
	}
}
