/* CPython's perf trampolines (python -X perf, 3.12+): each Python
 * function is entered through a copy of Python/asm_trampoline.S in
 * anonymous memory, named in /tmp/perf-PID.map, with no unwinding info,
 * called from an interpreter that keeps no frame pointer. Its code is
 * tiny and fixed, so kprof recognizes it by its bytes (read from the
 * process through kp_unwind_objects.code) and steps it by its known rule:
 * the return address at CFA - 8, every other register the callee's.
 * Results are cached by address. See docs/unwinding.md. */
#include <string.h>

#include "unwind/unwindP.h"

/* At most this many addresses are remembered; then the cache starts over. */
#define MAX_TRAMP_ADDRS 65536

/* One form of the trampoline: its bytes, the CFA (sp + cfa) at each
 * instruction, and the offset of the return address of its call. */
struct tramp {
	unsigned char code[16];
	uint8_t len, ret_at, n;
	struct {
		uint8_t at, cfa;
	} ins[5];
};

static const struct tramp tramps[] = {
	/* sub $8,%rsp; call *%rcx; add $8,%rsp; ret (3.12, 3.13) */
	{{0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3},
	 11,
	 6,
	 4,
	 {{0, 8}, {4, 16}, {6, 16}, {10, 8}}},
	/* the same behind endbr64 (a build with -fcf-protection) */
	{{0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3},
	 15,
	 10,
	 5,
	 {{0, 8}, {4, 8}, {8, 16}, {10, 16}, {14, 8}}},
};
#define WINDOW 15 /* the longest form */

/* The CFA offset at addr, read from the code around it; 0: no trampoline. */
static uint8_t tramp_read(const struct kp_unwind_objects *o, pid_t pid, uint64_t addr,
			  uint8_t *ret_at_hit)
{
	unsigned char buf[2 * WINDOW];
	uint64_t lo = addr - WINDOW, page = addr & ~(uint64_t)4095;
	ssize_t n;

	/* from the page of addr on: the one before may be unmapped */
	if (addr < WINDOW || lo < page)
		lo = page;
	n = o->code(o->arg, pid, lo, buf, (size_t)(addr - lo) + WINDOW);
	if (n <= 0)
		return 0;
	for (size_t t = 0; t < sizeof(tramps) / sizeof(tramps[0]); t++) {
		const struct tramp *tr = &tramps[t];

		for (uint8_t i = 0; i < tr->n; i++) {
			uint64_t start = addr - tr->ins[i].at;

			if (start < lo || start - lo + tr->len > (uint64_t)n ||
			    memcmp(buf + (start - lo), tr->code, tr->len) != 0)
				continue;
			*ret_at_hit = tr->ins[i].at == tr->ret_at;
			return tr->ins[i].cfa;
		}
	}
	return 0;
}

/* The cache's value: pid << 16 | is the call's return address << 8 | cfa. */
int kp_pytramp_at(struct kp_unwinder *u, pid_t pid, uint64_t addr, bool *after_call)
{
	const struct kp_unwind_objects *o = &u->tables.objs;
	uint64_t v;
	uint8_t cfa, ret = 0;

	if (!o->code)
		return 0;
	if (kp_u64map_get(&u->pytramp, addr, &v) && (uint32_t)(v >> 16) == (uint32_t)pid) {
		*after_call = (v >> 8) & 1;
		return (int)(v & 0xff);
	}
	cfa = tramp_read(o, pid, addr, &ret);
	if (kp_u64map_count(&u->pytramp) >= MAX_TRAMP_ADDRS)
		kp_pytramp_clear(u, 0);
	kp_u64map_put(&u->pytramp_pids, (uint64_t)(uint32_t)pid, 1);
	kp_u64map_put(&u->pytramp, addr, (uint64_t)(uint32_t)pid << 16 | (uint64_t)ret << 8 | cfa);
	*after_call = ret;
	return cfa;
}

void kp_pytramp_clear(struct kp_unwinder *u, pid_t pid)
{
	/* only a process whose code was read empties the cache: a build's
	 * thousands of short processes leave a python's trampolines alone */
	if (pid && !kp_u64map_get(&u->pytramp_pids, (uint64_t)(uint32_t)pid, &(uint64_t){0}))
		return;
	kp_u64map_fini(&u->pytramp);
	kp_u64map_init(&u->pytramp);
	kp_u64map_fini(&u->pytramp_pids);
	kp_u64map_init(&u->pytramp_pids);
}

bool kp_pytramp_row(struct kp_unwinder *u, pid_t pid, uint64_t ip, bool exact,
		    struct kp_cfi_row *row)
{
	bool after_call = false;
	int cfa = kp_pytramp_at(u, pid, ip, &after_call);

	/* a return address must be the one after the call */
	if (!cfa || (!exact && !after_call))
		return false;
	memset(row, 0, sizeof(*row));
	row->kind = KP_CFI_STEP;
	row->cfa_reg = UNW_X86_64_RSP;
	row->cfa_off = cfa;
	row->rule[UNW_X86_64_RIP] = KP_CFI_SAVED;
	row->off[UNW_X86_64_RIP] = -8;
	return true;
}
