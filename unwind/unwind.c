/* The unwinder: its lifecycle and its two entry points (see unwind.h).
 * kp_unwind_stack alternates the walkers of walk.c, CFI where an unwind
 * table covers the frame and the frame-pointer chain where none does;
 * kp_unwind_leaf takes one CFI step from the sampled frame. kprof's rows
 * are cfi.c's, libunwind's accessors remote.c's, the tables tables.c's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/unwindP.h"
#include "util/xalloc.h"

struct kp_unwinder *kp_unwind_new(const struct kp_unwind_objects *objs)
{
	struct kp_unwinder *u = kp_xcalloc(1, sizeof(*u));

	kp_tables_init(&u->tables, objs);
	kp_cfi_init(&u->cfi);
	kp_remote_accessors(&u->acc);
	kp_u64map_init(&u->spaces);
	kp_u64map_init(&u->pytramp);
	kp_u64map_init(&u->pytramp_pids);
	return u;
}

void kp_unwind_free(struct kp_unwinder *u)
{
	size_t pos = 0;
	uint64_t key, v;

	if (!u)
		return;
	kp_tables_fini(&u->tables);
	kp_cfi_fini(&u->cfi);
	while (kp_u64map_next(&u->spaces, &pos, &key, &v))
		kp_remote_space_free((struct aspace *)(uintptr_t)v);
	kp_u64map_fini(&u->spaces);
	kp_u64map_fini(&u->pytramp);
	kp_u64map_fini(&u->pytramp_pids);
	free(u);
}

void kp_unwind_set_libunwind_only(struct kp_unwinder *u, bool on)
{
	u->libunwind_only = on;
}

void kp_unwind_flush(struct kp_unwinder *u, pid_t pid)
{
	uint64_t v;

	/* anonymous code may have been replaced: read trampolines again */
	kp_pytramp_clear(u, pid);
	if (kp_u64map_get(&u->spaces, (uint64_t)(uint32_t)pid, &v))
		kp_remote_space_flush((struct aspace *)(uintptr_t)v);
}

void kp_unwind_forget(struct kp_unwinder *u, pid_t pid)
{
	uint64_t v;

	kp_pytramp_clear(u, pid);
	if (kp_u64map_get(&u->spaces, (uint64_t)(uint32_t)pid, &v)) {
		kp_remote_space_free((struct aspace *)(uintptr_t)v);
		kp_u64map_del(&u->spaces, (uint64_t)(uint32_t)pid);
	}
}

void kp_unwind_drop_objects(struct kp_unwinder *u, const uint32_t *objs, size_t n)
{
	size_t pos = 0;
	uint64_t key, v;

	if (!n)
		return;
	/* the address spaces that read these tables forget what they cached
	 * of them (their rules, the touched list's pointers) */
	while (kp_u64map_next(&u->spaces, &pos, &key, &v)) {
		struct aspace *a = (struct aspace *)(uintptr_t)v;

		for (size_t i = 0; i < a->nt; i++) {
			bool hit = false;

			for (size_t k = 0; k < n && !hit; k++)
				hit = a->t[i].t->obj == objs[k];
			if (hit) {
				kp_remote_space_flush(a);
				break;
			}
		}
	}
	for (size_t k = 0; k < n; k++)
		kp_tables_drop(&u->tables, objs[k]);
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
	if (!max || !kp_remote_ctx_init(&c, u, in) || !(a = kp_remote_space_get(u, in->pid))) {
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
		bool tab = false;

		if (!kp_walk_is_code(&c, ip, &tab)) {
			w.end = KP_UNWIND_BAD_FRAME;
			break;
		}
		if (tab) {
			if (!leaf) {
				/* re-entering CFI from a frame-pointer frame: only
				 * ip (a return address), sp and bp are known */
				c.have = 1u << UNW_X86_64_RIP | 1u << UNW_X86_64_RSP |
					 1u << UNW_X86_64_RBP;
				c.lost = 0;
				c.regs[UNW_X86_64_RIP] = ip;
				c.regs[UNW_X86_64_RSP] = sp;
				c.regs[UNW_X86_64_RBP] = bp;
			}
			/* the sampled ip is exact, a return address is not */
			if (kp_walk_cfi(&c, &w, &ip, &sp, &bp, leaf) == DW_END)
				break;
		}
		/* a runtime's code (HotSpot's) steps by what the runtime says,
		 * as long as it knows the frames */
		if (u->tables.objs.runtime && !c.map.obj) {
			enum fp_stop r = kp_walk_runtime(&c, &w, &ip, &sp, &bp);

			if (r == FP_END)
				break;
			leaf = false;
			if (r == FP_REENTER)
				continue;
		}
		/* the prologue check is for the sampled frame alone; a return
		 * address into a runtime's code asks the runtime again */
		if (kp_walk_fp(&c, &w, w.n == 1, &ip, &sp, &bp) == FP_END)
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
	uint64_t ip, bp, sp, nip, nbp, nsp;
	bool tab, exact = true;

	if (!kp_remote_ctx_init(&c, u, in) || !(c.have & (1u << UNW_X86_64_RBP)) ||
	    !(a = kp_remote_space_get(u, in->pid)))
		return 0;
	c.space = a;
	ip = c.regs[UNW_X86_64_RIP];
	bp = c.regs[UNW_X86_64_RBP];
	sp = c.regs[UNW_X86_64_RSP];
	if (!kp_walk_is_code(&c, ip, &tab) || !tab || kp_walk_step(&c, &exact) != STEP_NEXT ||
	    !(c.have & (1u << UNW_X86_64_RBP)))
		return 0;
	nip = c.regs[UNW_X86_64_RIP];
	nsp = c.regs[UNW_X86_64_RSP];
	nbp = c.regs[UNW_X86_64_RBP];
	/* The function has not set up its frame when its CFI leaves the
	 * frame pointer as it was: then the chain's first return address is
	 * its caller's, and the one CFI found is the missing frame. */
	if (nip == fp_ret || nbp != bp || nsp <= sp || !kp_walk_is_code(&c, nip, &tab))
		return 0;
	return nip;
}

void kp_unwind_stats(const struct kp_unwinder *u, struct kp_unwind_stats *st)
{
	*st = u->tables.st;
	st->rows = u->cfi.misses;
}
