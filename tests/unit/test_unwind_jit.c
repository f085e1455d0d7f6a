/* JIT code stepped by its own unwinding info (unwind/jitcfi.c): the
 * .eh_frame and .eh_frame_hdr node 20 wrote for an optimized function of
 * 388 bytes (--perf-prof-unwinding-info), handed over by the caller's
 * kp_unwind_objects.jit, walked by kprof's rows (the steps counted) in
 * the body (CFA from rbp), at the entry and after the epilogue's pop
 * (CFA from rsp); without the callback the same frames come from the
 * frame-pointer chain, none by rows, except where a code address lies at
 * the top of the stack in the body (the chain takes it for the return
 * address); damaged info falls back to the chain. */
#include <stdlib.h>
#include <string.h>

#include "kp_test.h"
#include "unwind/unwind.h"

#define CODE   0x7f0000010000ull /* the function with unwinding info */
#define CALLER 0x7f0000020000ull /* JIT code without */
#define STACK  0x7ffd00001000ull

/* V8's bytes: CIE (CFA rsp+8, RA at CFA-8), FDE for [0, 386): at 0xf
 * CFA offset 16 and rbp at CFA-16, at 0x12 CFA from rbp, at 0x46 from
 * rsp, at 0x47 offset 8, at 0x59 rbp+16; a terminator; then the hdr. */
static const char eh_hex[] = "1800000000000000037a4c520001781002ff1b0c07089001000000002000000020"
			     "00000054feffff82010000004f0e108602430d06740d07410e08520c0610000000"
			     "0000";
static const char hdr_hex[] = "011b033bb8ffffff0100000034feffffd8ffffff";
static unsigned char eh[68], hdr[20];
static bool garbage;
static uint64_t top_word; /* the word at STACK */

static void unhex(const char *s, unsigned char *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		sscanf(s + 2 * i, "%2x", &v);
		out[i] = (unsigned char)v;
	}
}

static int no_fd(void *arg, uint32_t obj)
{
	(void)arg;
	(void)obj;
	return -1;
}

static bool jit_info(void *arg, pid_t pid, uint64_t addr, struct kp_unwind_jit *out)
{
	static unsigned char junk[68];

	(void)arg;
	(void)pid;
	if (addr < CODE || addr >= CODE + 388)
		return false;
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)(i * 37 + 11);
	*out = (struct kp_unwind_jit){.start = CODE,
				      .end = CODE + 388,
				      .key = garbage ? 2 : 1,
				      .eh_frame = garbage ? junk : eh,
				      .eh_frame_len = sizeof(eh),
				      .hdr = hdr,
				      .hdr_len = sizeof(hdr)};
	return true;
}

/* One anonymous mapping holds both functions. */
static bool find_map(void *arg, uint64_t addr, struct kp_mapping *out)
{
	(void)arg;
	if (addr < CODE - 0x10000 || addr >= CODE + 0x100000)
		return false;
	*out = (struct kp_mapping){.start = CODE - 0x10000, .end = CODE + 0x100000};
	return true;
}

/* Walks a sample at ip with sp, bp over the stack image; returns the
 * frames found into ips and the unwinder's stats into st. */
static size_t walk(bool with_jit, uint64_t ip, uint64_t sp, uint64_t bp, uint64_t *ips,
		   struct kp_unwind_stats *st)
{
	static uint64_t image[32];
	uint64_t regs[17] = {0};
	struct kp_unwind_objects objs = {no_fd, NULL, with_jit ? jit_info : NULL, NULL, NULL, NULL};
	struct kp_unwinder *u = kp_unwind_new(&objs);
	struct kp_unwind_result res;
	struct kp_unwind_input in = {
		.pid = 4242, .regs = regs, .regs_mask = KP_UNWIND_REGS_MASK, .find_map = find_map};

	memset(image, 0, sizeof(image));
	image[0] = top_word;
	image[0x30 / 8] = STACK + 0x60;	 /* the caller's rbp, saved */
	image[0x38 / 8] = CALLER + 0x10; /* the return address */
	regs[6] = bp;			 /* bp, sp, ip: perf's order */
	regs[7] = sp;
	regs[8] = ip;
	in.stack = (const unsigned char *)image + (sp - STACK);
	in.stack_len = sizeof(image) - (sp - STACK);
	kp_unwind_stack(u, &in, ips, 16, &res);
	kp_unwind_stats(u, st);
	kp_unwind_free(u);
	return res.n;
}

static void check_walk(uint64_t ip, uint64_t sp, uint64_t bp)
{
	uint64_t ips[16], fp_ips[16];
	struct kp_unwind_stats st, fp_st;
	size_t n = walk(true, ip, sp, bp, ips, &st), fp_n = walk(false, ip, sp, bp, fp_ips, &fp_st);

	CHECK_EQ_INT(n, 2);
	CHECK(n >= 2 && ips[0] == ip && ips[1] == CALLER + 0x10);
	CHECK_EQ_INT(st.jit_codes, 1);
	CHECK(st.steps_kprof >= 1);
	/* the frame-pointer walk agrees (V8 keeps frame pointers) */
	CHECK(fp_n == n && memcmp(ips, fp_ips, n * sizeof(*ips)) == 0);
	CHECK_EQ_INT(fp_st.steps_kprof, 0);
	CHECK_EQ_INT(fp_st.jit_codes, 0);
}

static void test_jit_rows(void)
{
	unhex(eh_hex, eh, sizeof(eh));
	unhex(hdr_hex, hdr, sizeof(hdr));
	check_walk(CODE + 0x20, STACK, STACK + 0x30);	     /* the body: CFA from rbp */
	check_walk(CODE, STACK + 0x38, STACK + 0x60);	     /* the entry */
	check_walk(CODE + 0x47, STACK + 0x38, STACK + 0x60); /* after the epilogue's pop */
}

/* A code address at the top of the stack (a spilled pointer) in the
 * body: the frame-pointer walk takes it for the leaf's return address
 * (the state before a push), the rows know better. */
static void test_jit_spilled(void)
{
	uint64_t ips[16];
	struct kp_unwind_stats st;
	size_t n;

	top_word = CODE + 0x100;
	n = walk(true, CODE + 0x20, STACK, STACK + 0x30, ips, &st);
	CHECK(n == 2 && ips[1] == CALLER + 0x10);
	n = walk(false, CODE + 0x20, STACK, STACK + 0x30, ips, &st);
	CHECK(n >= 2 && ips[1] == CODE + 0x100);
	top_word = 0;
}

static void test_jit_garbage(void)
{
	uint64_t ips[16];
	struct kp_unwind_stats st;
	size_t n;

	garbage = true;
	n = walk(true, CODE + 0x20, STACK, STACK + 0x30, ips, &st);
	garbage = false;
	CHECK(n == 2 && ips[1] == CALLER + 0x10);
	CHECK_EQ_INT(st.steps_kprof, 0);
}

KP_TEST_MAIN(test_jit_rows, test_jit_spilled, test_jit_garbage)
