/* CPython's perf trampolines (unwind/pytramp.c), known by their bytes
 * through kp_unwind_objects.code and stepped by their rule: sampled at
 * each instruction (where the frame-pointer chain's guess fails inside,
 * sp + 8 holding the return address), as a return address reached from a
 * frame-pointer frame (the call's, and not another instruction's), at a
 * page's start (the window read from the page on), behind endbr64; not
 * for other bytes, nor without the callback. */
#include <errno.h>
#include <string.h>

#include "kp_test.h"
#include "unwind/unwind.h"

#define BASE   0x7f0000010000ull /* anonymous code, 16 KiB */
#define TRAMP  (BASE + 0x1ff3)	 /* a trampoline (3.12's bytes) */
#define TRAMP2 (BASE + 0x2000)	 /* one at a page's start */
#define TRAMP3 (BASE + 0x2100)	 /* one behind endbr64 */
#define CALLER (BASE + 0x3000)	 /* other JIT code */
#define STACK  0x7ffd00001000ull

static const unsigned char tramp[] = {0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
				      0x48, 0x83, 0xc4, 0x08, 0xc3};
static const unsigned char endbr[] = {0xf3, 0x0f, 0x1e, 0xfa};
static unsigned char mem[0x4000];
static int reads;

static int no_fd(void *arg, uint32_t obj)
{
	(void)arg;
	(void)obj;
	return -1;
}

static ssize_t code(void *arg, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	(void)pid;
	reads++;
	if (addr < BASE || addr >= BASE + sizeof(mem))
		return -EIO;
	if (len > BASE + sizeof(mem) - addr)
		len = BASE + sizeof(mem) - addr;
	memcpy(buf, mem + (addr - BASE), len);
	return (ssize_t)len;
}

static bool find_map(void *arg, uint64_t addr, struct kp_mapping *out)
{
	(void)arg;
	if (addr < BASE || addr >= BASE + sizeof(mem))
		return false;
	*out = (struct kp_mapping){.start = BASE, .end = BASE + sizeof(mem)};
	return true;
}

/* Walks a sample (ip, sp, bp) over image; the frames into ips. */
static size_t walk(bool with_code, const uint64_t *image, size_t words, uint64_t ip, uint64_t sp,
		   uint64_t bp, uint64_t *ips)
{
	uint64_t regs[17] = {0};
	struct kp_unwind_objects objs = {no_fd, NULL, NULL, with_code ? code : NULL, NULL, NULL};
	struct kp_unwinder *u = kp_unwind_new(&objs);
	struct kp_unwind_result res;
	struct kp_unwind_input in = {.pid = 4242,
				     .regs = regs,
				     .regs_mask = KP_UNWIND_REGS_MASK,
				     .stack = (const unsigned char *)image,
				     .stack_len = words * 8,
				     .find_map = find_map};

	regs[6] = bp; /* bp, sp, ip: perf's order */
	regs[7] = sp;
	regs[8] = ip;
	kp_unwind_stack(u, &in, ips, 16, &res);
	kp_unwind_free(u);
	return res.n;
}

static void setup(void)
{
	memset(mem, 0xcc, sizeof(mem));
	memcpy(mem + (TRAMP - BASE), tramp, sizeof(tramp));
	memcpy(mem + (TRAMP2 - BASE), tramp, sizeof(tramp));
	memcpy(mem + (TRAMP3 - BASE), endbr, sizeof(endbr));
	memcpy(mem + (TRAMP3 - BASE) + sizeof(endbr), tramp, sizeof(tramp));
}

/* Sampled in the trampoline at off: the return address at sp + slot. */
static void check_leaf(unsigned off, unsigned slot)
{
	/* bp points above the copy: the chain has nothing to go on */
	uint64_t image[4] = {0x1234, 0x1234, 0, 0}, ips[16];
	size_t n;

	image[slot / 8] = CALLER + 0x10;
	n = walk(true, image, 4, TRAMP + off, STACK, STACK + 0x1000, ips);
	CHECK(n >= 2 && ips[1] == CALLER + 0x10);
}

static void test_leaf(void)
{
	setup();
	check_leaf(0, 0);
	check_leaf(4, 8);
	check_leaf(6, 8);
	check_leaf(10, 0);
}

/* A frame-pointer frame (CALLER) returns into the trampoline at ret, whose
 * caller is CALLER + 0x10: frames found, ips filled. */
static size_t through(bool with_code, uint64_t ret, uint64_t *ips)
{
	/* CALLER's frame: saved rbp 0 (the chain's end), its return address;
	 * the trampoline's: its sub's slot, the return address */
	uint64_t image[8] = {0, 0, 0, ret, 0x5555, CALLER + 0x10, 0, 0};

	return walk(with_code, image, 8, CALLER, STACK, STACK + 0x10, ips);
}

static void test_return_address(void)
{
	uint64_t ips[16];

	setup();
	reads = 0;
	CHECK_EQ_INT(through(true, TRAMP + 6, ips), 3);
	CHECK(ips[1] == TRAMP + 6 && ips[2] == CALLER + 0x10);
	CHECK(reads >= 1);
	CHECK_EQ_INT(through(true, TRAMP2 + 6, ips), 3);
	CHECK(ips[2] == CALLER + 0x10);
	CHECK_EQ_INT(through(true, TRAMP3 + 10, ips), 3);
	CHECK(ips[2] == CALLER + 0x10);
	/* not the call's return address; not a trampoline; no callback */
	CHECK_EQ_INT(through(true, TRAMP + 4, ips), 2);
	CHECK_EQ_INT(through(true, CALLER + 0x20, ips), 2);
	CHECK_EQ_INT(through(false, TRAMP + 6, ips), 2);
	mem[TRAMP - BASE + 1] ^= 1; /* one byte off */
	CHECK_EQ_INT(through(true, TRAMP + 6, ips), 2);
}

KP_TEST_MAIN(test_leaf, test_return_address)
