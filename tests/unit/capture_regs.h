/* kp_test_capture_regs: a sample's registers taken in the test itself,
 * for unwinding its own stack as the kernel would hand it over (used by
 * tests/unit/test_unwind.c and tests/fuzz/fuzz_unwind.c). x86-64 only. */
#ifndef KP_TESTS_CAPTURE_REGS_H
#define KP_TESTS_CAPTURE_REGS_H

#include <stdint.h>

/* Stores the caller's registers in perf order (24 slots): ip is the
 * return address, sp the caller's stack pointer after the return; the
 * callee-saved registers are the caller's. */
__asm__(".text\n"
	".globl kp_test_capture_regs\n"
	".type kp_test_capture_regs, @function\n"
	"kp_test_capture_regs:\n"
	"	.cfi_startproc\n"
	"	mov %rax, 0(%rdi)\n"
	"	mov %rbx, 8(%rdi)\n"
	"	mov %rcx, 16(%rdi)\n"
	"	mov %rdx, 24(%rdi)\n"
	"	mov %rsi, 32(%rdi)\n"
	"	mov %rdi, 40(%rdi)\n"
	"	mov %rbp, 48(%rdi)\n"
	"	lea 8(%rsp), %rax\n"
	"	mov %rax, 56(%rdi)\n"
	"	mov (%rsp), %rax\n"
	"	mov %rax, 64(%rdi)\n"
	"	mov %r8, 128(%rdi)\n"
	"	mov %r9, 136(%rdi)\n"
	"	mov %r10, 144(%rdi)\n"
	"	mov %r11, 152(%rdi)\n"
	"	mov %r12, 160(%rdi)\n"
	"	mov %r13, 168(%rdi)\n"
	"	mov %r14, 176(%rdi)\n"
	"	mov %r15, 184(%rdi)\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size kp_test_capture_regs, .-kp_test_capture_regs\n");
void kp_test_capture_regs(uint64_t *regs);

#endif
