/* libunwind's remote unwinding over one sample (after perf's
 * tools/perf/util/unwind-libunwind-local.c): the accessors through which libunwind
 * reads memory (the stack copy, and the objects' unwind tables through
 * tables.c), the sampled registers and the unwind tables' search, and one
 * process's address spaces, which hold libunwind's rule cache. See
 * unwindP.h. */
#include <stdlib.h>
#include <string.h>

#include "unwind/regs.h"
#include "unwind/unwindP.h"
#include "util/xalloc.h"

/* Not in libunwind's public headers, exported by libunwind-generic (perf
 * declares it the same way). */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)

/* Notes that the address space's unwinds read object t's tables (at
 * bias). */
static void touch(struct uctx *c, struct utab *t, uint64_t bias)
{
	struct aspace *a = c->space;

	for (size_t i = 0; i < a->nt; i++)
		if (a->t[i].t == t && a->t[i].bias == bias)
			return;
	if (a->nt == MAX_TOUCHED) {
		/* forget the rules that may read the objects forgotten here */
		kp_remote_space_flush(a);
		c->hit_r = NULL;
	}
	a->t[a->nt].t = t;
	a->t[a->nt].bias = bias;
	a->nt++;
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
	if (in->more && addr >= c->sp0 + in->stack_len && kp_walk_stack_word(c, addr, valp))
		return 0;
	if (c->hit_r) {
		int r = kp_tables_word(&c->u->tables, c->hit_t, c->hit_r, addr - c->hit_bias, valp);

		if (r)
			return r > 0 ? 0 : -UNW_EINVAL;
	}
	for (size_t i = 0; i < c->space->nt; i++) {
		struct utab *t = c->space->t[i].t;
		uint64_t va = addr - c->space->t[i].bias;

		for (size_t k = 0; k < t->nr; k++) {
			int r = kp_tables_word(&c->u->tables, t, &t->r[k], va, valp);

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
	struct kp_mapping m;
	struct utab *t;
	unw_dyn_info_t di;
	uint64_t bias;
	int ret;

	if (!c->in->find_map(c->in->map_arg, ip, &m) ||
	    !(t = kp_tables_get(&c->u->tables, m.obj)) || !t->ok || !kp_tables_bias(t, &m, &bias))
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

void kp_remote_space_free(struct aspace *a)
{
	if (!a)
		return;
	if (a->as)
		unw_destroy_addr_space(a->as);
	if (a->leaf)
		unw_destroy_addr_space(a->leaf);
	free(a);
}

/* The process's address space: libunwind caches register rules by ip, so
 * processes never share one. */
struct aspace *kp_remote_space_get(struct kp_unwinder *u, pid_t pid)
{
	uint64_t v;
	struct aspace *a;

	if (kp_u64map_get(&u->spaces, (uint64_t)(uint32_t)pid, &v))
		return (struct aspace *)(uintptr_t)v;
	a = kp_xcalloc(1, sizeof(*a));
	a->as = unw_create_addr_space(&u->acc, 0);
	a->leaf = unw_create_addr_space(&u->acc, 0);
	if (!a->as || !a->leaf) {
		kp_remote_space_free(a);
		return NULL;
	}
	unw_set_caching_policy(a->as, UNW_CACHE_GLOBAL);
	unw_set_caching_policy(a->leaf, UNW_CACHE_GLOBAL);
	kp_u64map_put(&u->spaces, (uint64_t)(uint32_t)pid, (uint64_t)(uintptr_t)a);
	return a;
}

/* perf's register numbers -> libunwind's + 1 (0: one the unwind does not
 * use) */
static const uint8_t perf_to_unw[24] = {
	[KP_PERF_REG_AX] = UNW_X86_64_RAX + 1,	[KP_PERF_REG_BX] = UNW_X86_64_RBX + 1,
	[KP_PERF_REG_CX] = UNW_X86_64_RCX + 1,	[KP_PERF_REG_DX] = UNW_X86_64_RDX + 1,
	[KP_PERF_REG_SI] = UNW_X86_64_RSI + 1,	[KP_PERF_REG_DI] = UNW_X86_64_RDI + 1,
	[KP_PERF_REG_BP] = UNW_X86_64_RBP + 1,	[KP_PERF_REG_SP] = UNW_X86_64_RSP + 1,
	[KP_PERF_REG_IP] = UNW_X86_64_RIP + 1,	[KP_PERF_REG_R8] = UNW_X86_64_R8 + 1,
	[KP_PERF_REG_R9] = UNW_X86_64_R9 + 1,	[KP_PERF_REG_R10] = UNW_X86_64_R10 + 1,
	[KP_PERF_REG_R11] = UNW_X86_64_R11 + 1, [KP_PERF_REG_R12] = UNW_X86_64_R12 + 1,
	[KP_PERF_REG_R13] = UNW_X86_64_R13 + 1, [KP_PERF_REG_R14] = UNW_X86_64_R14 + 1,
	[KP_PERF_REG_R15] = UNW_X86_64_R15 + 1,
};

bool kp_remote_ctx_init(struct uctx *c, struct kp_unwinder *u, const struct kp_unwind_input *in)
{
	size_t i = 0;

	memset(c, 0, sizeof(*c));
	c->u = u;
	c->in = in;
	/* one register per bit of the mask, in bit order (kp_regs_get, in
	 * one pass) */
	for (uint64_t m = in->regs ? in->regs_mask : 0; m; m &= m - 1, i++) {
		int bit = __builtin_ctzll(m), r = bit < 24 ? perf_to_unw[bit] - 1 : -1;

		if (r >= 0) {
			c->regs[r] = in->regs[i];
			c->have |= 1u << r;
		}
	}
	c->sp0 = c->regs[UNW_X86_64_RSP];
	return (c->have & (1u << UNW_X86_64_RIP)) && (c->have & (1u << UNW_X86_64_RSP)) &&
	       in->find_map;
}

void kp_remote_space_flush(struct aspace *a)
{
	unw_flush_cache(a->as, 0, 0);
	unw_flush_cache(a->leaf, 0, 0);
	a->nt = 0;
}

void kp_remote_accessors(unw_accessors_t *acc)
{
	acc->find_proc_info = find_proc_info;
	acc->put_unwind_info = put_unwind_info;
	acc->get_dyn_info_list_addr = get_dyn_info_list_addr;
	acc->access_mem = access_mem;
	acc->access_reg = access_reg;
	acc->access_fpreg = access_fpreg;
	acc->resume = resume;
	acc->get_proc_name = get_proc_name;
}
