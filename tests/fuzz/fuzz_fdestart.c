/* Function starts from unwind tables (symbolize/fde_start.h): the input is
 * an ELF file (a stripped program or library is outside data), opened with
 * libelf from memory and given to kp_fde_start_new, which reads its
 * executable segments and its .eh_frame. Then addresses are looked up:
 * 64 spread over each executable segment (at most 4), its first and last
 * byte, and around each FDE found (its start, its last byte, the bytes
 * either side).
 *
 * Checked beyond no crash: an FDE found covers the address, lies inside
 * one executable PT_LOAD segment of the file (read again here) and is not
 * empty; its first and last byte find the same FDE, the byte past it
 * another or none; its name is "fz+0xSTART", made once (the same pointer
 * every time); a lookup without a table finds nothing.
 *
 * Seeds (corpus/fdestart/): small stripped shared libraries built from
 * tests/fixtures/sym/fdestart.c by tests/fuzz/make-fdestart-seeds.sh. */
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>

#include "fuzz.h"
#include "symbolize/fde_start.h"

#define MAX_SEGS 4
#define PROBES	 64

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (elf_version(EV_CURRENT) == EV_NONE)
		abort();
	return 0;
}

struct seg {
	uint64_t lo, hi;
};

static size_t exec_segments(Elf *elf, struct seg *s, size_t cap)
{
	size_t phnum, n = 0;

	if (elf_getphdrnum(elf, &phnum) != 0)
		return 0;
	for (size_t i = 0; i < phnum && n < cap; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		if (ph && ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && ph->p_memsz &&
		    ph->p_vaddr + ph->p_memsz >= ph->p_vaddr)
			s[n++] = (struct seg){ph->p_vaddr, ph->p_vaddr + ph->p_memsz};
	}
	return n;
}

/* Whether [lo, hi) lies in one executable segment: all of them are read
 * here, so an FDE kprof kept is inside one of those it looked at. */
static bool in_exec(Elf *elf, uint64_t lo, uint64_t hi)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum) != 0)
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		if (ph && ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && lo >= ph->p_vaddr &&
		    hi <= ph->p_vaddr + ph->p_memsz && ph->p_vaddr + ph->p_memsz >= ph->p_vaddr)
			return true;
	}
	return false;
}

static void check_fde(Elf *elf, struct kp_fde_start *f, uint64_t a)
{
	uint64_t s, e, s2, e2;
	const char *name;
	char want[64];

	if (!kp_fde_start_find(f, a, &s, &e)) {
		FUZZ_CHECK(kp_fde_start_name(f, a) == NULL);
		return;
	}
	FUZZ_CHECK(s <= a && a < e);
	FUZZ_CHECK(in_exec(elf, s, e));
	FUZZ_CHECK(kp_fde_start_find(f, s, &s2, &e2) && s2 == s && e2 == e);
	FUZZ_CHECK(kp_fde_start_find(f, e - 1, &s2, &e2) && s2 == s && e2 == e);
	FUZZ_CHECK(!kp_fde_start_find(f, e, &s2, &e2) || s2 >= e);
	FUZZ_CHECK(!kp_fde_start_find(f, s - 1, &s2, &e2) || e2 <= s);
	name = kp_fde_start_name(f, a);
	snprintf(want, sizeof(want), "fz+0x%" PRIx64, s);
	FUZZ_CHECK(name && strcmp(name, want) == 0);
	FUZZ_CHECK(kp_fde_start_name(f, e - 1) == name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* libelf may write to the image it is given (ELF_C_READ_MMAP on
	 * memory): a copy */
	char *copy = malloc(size ? size : 1);
	struct seg segs[MAX_SEGS];
	struct kp_fde_start *f;
	uint64_t s, e;
	size_t nsegs;
	Elf *elf;

	memcpy(copy, data, size);
	elf = elf_memory(copy, size);
	if (!elf) {
		free(copy);
		return 0;
	}
	f = kp_fde_start_new(elf, "fz");
	nsegs = exec_segments(elf, segs, MAX_SEGS);
	FUZZ_CHECK(f == NULL || nsegs > 0);
	for (size_t i = 0; f && i < nsegs; i++) {
		uint64_t len = segs[i].hi - segs[i].lo;

		for (uint64_t k = 0; k < PROBES; k++) {
			uint64_t a = segs[i].lo + len / PROBES * k;

			check_fde(elf, f, a);
			if (kp_fde_start_find(f, a, &s, &e)) {
				check_fde(elf, f, e);
				check_fde(elf, f, s - 1);
			}
		}
		check_fde(elf, f, segs[i].hi - 1);
	}
	FUZZ_CHECK(!kp_fde_start_find(NULL, 0, &s, &e) && !kp_fde_start_name(NULL, 0));
	kp_fde_start_free(f);
	elf_end(elf);
	free(copy);
	return 0;
}
