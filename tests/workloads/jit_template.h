/* The machine code the JIT workloads copy into executable memory (each
 * .c file here is a program of its own; this header is included by those
 * that play JIT). */
#ifndef KP_JIT_TEMPLATE_H
#define KP_JIT_TEMPLATE_H

/* The template: position independent, with a frame (push/mov of the frame
 * pointer) so that a frame-pointer walk from inside the copy reaches its
 * caller. Returns the sum 1..n. */
#if defined(__x86_64__)
__asm__(".text\n"
	".globl kp_jit_template\n"
	".type kp_jit_template, @function\n"
	"kp_jit_template:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	xor %eax, %eax\n"
	"1:	add %rdi, %rax\n"
	"	dec %rdi\n"
	"	jnz 1b\n"
	"	pop %rbp\n"
	"	ret\n"
	".globl kp_jit_template_end\n"
	"kp_jit_template_end:\n"
	".size kp_jit_template, kp_jit_template_end - kp_jit_template\n");
#define KP_HAVE_TEMPLATE 1
#elif defined(__aarch64__)
__asm__(".text\n"
	".globl kp_jit_template\n"
	".type kp_jit_template, %function\n"
	"kp_jit_template:\n"
	"	stp x29, x30, [sp, #-16]!\n"
	"	mov x29, sp\n"
	"	mov x1, #0\n"
	"1:	add x1, x1, x0\n"
	"	subs x0, x0, #1\n"
	"	b.ne 1b\n"
	"	mov x0, x1\n"
	"	ldp x29, x30, [sp], #16\n"
	"	ret\n"
	".globl kp_jit_template_end\n"
	"kp_jit_template_end:\n"
	".size kp_jit_template, kp_jit_template_end - kp_jit_template\n");
#define KP_HAVE_TEMPLATE 1
#endif

#ifdef KP_HAVE_TEMPLATE
extern const char kp_jit_template[], kp_jit_template_end[];
#endif

#endif
