/* Unit tests' ELF files opened with libelf (header-only, as kp_test.h):
 * test_debug_image, test_fde_start, test_inflate_limit. */
#ifndef KP_TESTS_UNIT_ELF_FILE_H
#define KP_TESTS_UNIT_ELF_FILE_H

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <unistd.h>

struct kp_test_elf {
	int fd;
	Elf *elf;
};

/* Opens path read-only (a private mapping: the tests may poke at it). */
static inline bool kp_test_elf_open(const char *path, struct kp_test_elf *o)
{
	elf_version(EV_CURRENT);
	o->fd = open(path, O_RDONLY);
	o->elf = o->fd >= 0 ? elf_begin(o->fd, ELF_C_READ_MMAP_PRIVATE, NULL) : NULL;
	return o->elf != NULL;
}

static inline void kp_test_elf_close(struct kp_test_elf *o)
{
	if (o->elf)
		elf_end(o->elf);
	if (o->fd >= 0)
		close(o->fd);
}

#endif
