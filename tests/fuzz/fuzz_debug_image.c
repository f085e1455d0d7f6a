/* Compressed DWARF (symbolize/debug_image.h): the input is an ELF file
 * (binaries and debug files on disk are outside data), opened with libelf
 * from memory and given to kp_debug_image_open, which reads its section
 * headers and inflates the .debug_ / .zdebug_ sections (zlib, zstd, GNU
 * zlib) into an image of its own. What it makes is walked with libelf:
 * every section must lie inside the image, named .debug_* (or
 * .gnu_debugaltlink) and uncompressed, plus the name table.
 *
 * It holds the limit (debug_image.h): the sections the image holds,
 * inflated or copied, never take more than it, nor do the compressed
 * ones kept state more; the image is the sections and its headers.
 *
 * Input: byte 0 picks the sections to skip (bit 0 .debug_line, bit 1
 * .debug_info) and the limit (bit 2: half of what the kept sections
 * state, else kprof's for a file of the input's size), then the ELF
 * file. */
#include <gelf.h>
#include <stdbool.h>

#include "fuzz.h"
#include "symbolize/debug_image.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		abort();
	return 0;
}

static void walk(Elf *img, uint64_t limit, size_t in_size)
{
	GElf_Ehdr eh;
	size_t shstrndx, n = 0, size;
	uint64_t held = 0;
	Elf_Scn *scn = NULL;
	const char *base = elf_rawfile(img, &size);

	FUZZ_CHECK(base && gelf_getehdr(img, &eh) && elf_getshdrstrndx(img, &shstrndx) == 0);
	while ((scn = elf_nextscn(img, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		FUZZ_CHECK(gelf_getshdr(scn, &sh));
		FUZZ_CHECK(sh.sh_offset <= size && sh.sh_size <= size - sh.sh_offset);
		FUZZ_CHECK(!(sh.sh_flags & SHF_COMPRESSED));
		name = elf_strptr(img, shstrndx, sh.sh_name);
		FUZZ_CHECK(name);
		FUZZ_CHECK(strncmp(name, ".debug_", 7) == 0 ||
			   strcmp(name, ".gnu_debugaltlink") == 0 ||
			   (elf_ndxscn(scn) == shstrndx && strcmp(name, ".shstrtab") == 0));
		if (elf_ndxscn(scn) != shstrndx)
			held += sh.sh_size;
		d = elf_rawdata(scn, NULL);
		if (d && d->d_size) {
			const unsigned char *p = d->d_buf;
			unsigned sum = 0;

			for (size_t i = 0; i < d->d_size; i++)
				sum += p[i];
			(void)sum;
		}
		n++;
	}
	FUZZ_CHECK(n >= 2 && n + 1 == eh.e_shnum);
	/* the sections within the limit; the rest: the ELF header, each
	 * section's alignment (64 at most) and header, and the names (no
	 * longer than the input's) */
	FUZZ_CHECK(held <= limit);
	FUZZ_CHECK(size <= held + sizeof(Elf64_Ehdr) +
				   (uint64_t)(n + 1) * (64 + sizeof(Elf64_Shdr)) + in_size + 16);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {".debug_line", ".debug_info"};
	struct fuzz_in in = {data, size};
	uint8_t how = fuzz_byte(&in);
	const char *skip[2];
	size_t nskip = 0;
	struct kp_debug_image *img = NULL;
	char *copy;
	Elf *elf, *out;

	for (int i = 0; i < 2; i++)
		if (how & (1 << i))
			skip[nskip++] = names[i];
	/* libelf reads the buffer in place: give it one of exactly the size */
	copy = malloc(in.n ? in.n : 1);
	if (!copy)
		abort();
	if (in.n)
		memcpy(copy, in.p, in.n);
	elf = elf_memory(copy, in.n);
	if (elf) {
		uint64_t stated = kp_debug_image_stated(elf, skip, nskip);
		uint64_t limit = how & 4 ? stated / 2 : kp_debug_image_inflate_limit(in.n);

		out = kp_debug_image_open_limit(elf, skip, nskip, limit, &img);
		FUZZ_CHECK(!out == !img);
		if (out) {
			FUZZ_CHECK(stated <= limit);
			walk(out, limit, in.n);
		}
		kp_debug_image_free(img);
		elf_end(elf);
	}
	free(copy);
	return 0;
}
