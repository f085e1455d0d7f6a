/* A sample of the test itself, for unwinding its own stack as the kernel
 * would hand it over (tests/unit/test_unwind.c, tests/fuzz/fuzz_unwind.c):
 * kp_test_capture_regs takes the registers, kp_test_read_maps the
 * executable mappings as the profiler registers them. x86-64 only. */
#ifndef KP_TESTS_SELF_SAMPLE_H
#define KP_TESTS_SELF_SAMPLE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/symbolize.h"

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

/* One executable mapping of this process and its symbolizer object (0 for
 * anonymous memory). */
struct kp_test_map {
	uint64_t start, end, pgoff;
	uint32_t obj;
};

/* Fills maps[0..cap) from /proc/self/maps, registering each file-backed
 * (and the vDSO) mapping with sym; returns how many (0 when the file
 * cannot be read). */
static inline size_t kp_test_read_maps(struct kp_symbolizer *sym, struct kp_test_map *maps,
				       size_t cap)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096];
	size_t n = 0;

	while (f && fgets(line, sizeof(line), f) && n < cap) {
		unsigned long long s, e, off, ino;
		char perms[8], path[4096] = "";
		unsigned maj, min;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &s, &e, perms, &off, &maj,
			   &min, &ino, path) < 7 ||
		    perms[2] != 'x')
			continue;
		maps[n] = (struct kp_test_map){s, e, off, 0};
		if (path[0] == '/' || strcmp(path, "[vdso]") == 0) {
			struct kp_mapping m = {.pid = getpid(),
					       .path = path,
					       .start = s,
					       .end = e,
					       .pgoff = off,
					       .maj = maj,
					       .min = min,
					       .ino = ino};

			maps[n].obj = kp_sym_object_get(sym, &m);
		}
		n++;
	}
	if (f)
		fclose(f);
	return n;
}

#endif
