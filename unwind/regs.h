/* The perf register set of a sample (x86-64): perf's register numbers
 * (arch/x86/include/uapi/asm/perf_regs.h) and the mask of the registers a
 * sample asks the kernel for (perf_event_attr.sample_regs_user: the
 * profiler sets it, the unwinder reads them). The kernel hands the
 * registers over one per bit of the mask, in bit order (kp_regs_get). */
#ifndef KP_UNWIND_REGS_H
#define KP_UNWIND_REGS_H

#include <stdbool.h>
#include <stdint.h>

/* x86-64 perf register numbers (arch/x86/include/uapi/asm/perf_regs.h). */
enum kp_perf_reg {
	KP_PERF_REG_AX = 0,
	KP_PERF_REG_BX = 1,
	KP_PERF_REG_CX = 2,
	KP_PERF_REG_DX = 3,
	KP_PERF_REG_SI = 4,
	KP_PERF_REG_DI = 5,
	KP_PERF_REG_BP = 6,
	KP_PERF_REG_SP = 7,
	KP_PERF_REG_IP = 8,
	KP_PERF_REG_R8 = 16,
	KP_PERF_REG_R9 = 17,
	KP_PERF_REG_R10 = 18,
	KP_PERF_REG_R11 = 19,
	KP_PERF_REG_R12 = 20,
	KP_PERF_REG_R13 = 21,
	KP_PERF_REG_R14 = 22,
	KP_PERF_REG_R15 = 23,
};
/* The registers an unwind needs: ip, sp, bp and the callee-saved ones
 * (and the argument registers, which CFI of hand-written code may use). */
#define KP_UNWIND_REGS_MASK                                                                     \
	((1ULL << 0) | (1ULL << 1) | (1ULL << 2) | (1ULL << 3) | (1ULL << 4) | (1ULL << 5) |    \
	 (1ULL << 6) | (1ULL << 7) | (1ULL << 8) | (1ULL << 16) | (1ULL << 17) | (1ULL << 18) | \
	 (1ULL << 19) | (1ULL << 20) | (1ULL << 21) | (1ULL << 22) | (1ULL << 23))

/* Register reg (enum kp_perf_reg) of a sample whose registers regs were
 * taken with mask: false when the mask has no such register (or there are
 * no registers). */
static inline bool kp_regs_get(const uint64_t *regs, uint64_t mask, int reg, uint64_t *v)
{
	if (!regs || !(mask & (1ULL << reg)))
		return false;
	*v = regs[__builtin_popcountll(mask & ((1ULL << reg) - 1))];
	return true;
}

#endif
