/* symbolize/debug_image: the in-memory image of a file's DWARF sections,
 * inflated by us. A binary built here with -g is compressed by objcopy in
 * each format (zlib gABI, zstd gABI, GNU .zdebug); the image must hold the
 * same bytes as the uncompressed sections, without the skipped ones, and
 * libdw must read it. Files with nothing compressed, corrupt compressed
 * data and absurd sizes give no image (and no crash). */
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf_file.h"
#include "kp_test.h"
#include "symbolize/debug_image.h"

static char tmp[64];
static const char *const skip[] = {".debug_line", ".debug_loclists", ".debug_loc"};

/* The data of section name in elf (inflated by libelf if need be), or NULL. */
static Elf_Data *section(Elf *elf, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (strcmp(n, name) == 0) {
			if (sh.sh_flags & SHF_COMPRESSED)
				elf_compress(scn, 0, 0);
			return elf_getdata(scn, NULL);
		}
	}
	return NULL;
}

static int count_units(Elf *elf)
{
	Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	Dwarf_Off off = 0, next;
	size_t hsize;
	int n = 0;

	if (!dw)
		return -1;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		n++;
		off = next;
	}
	dwarf_end(dw);
	return n;
}

/* The image of variant matches the plain file, section by section. */
static void check_variant(const char *variant)
{
	static const char *const kept[] = {".debug_info", ".debug_abbrev", ".debug_str",
					   ".debug_aranges"};
	char path[128], plain_path[128];
	struct kp_test_elf plain, packed;
	struct kp_debug_image *img = NULL;
	Elf *image;

	snprintf(path, sizeof(path), "%s/%s", tmp, variant);
	snprintf(plain_path, sizeof(plain_path), "%s/plain", tmp);
	if (!kp_test_elf_open(plain_path, &plain) || !kp_test_elf_open(path, &packed)) {
		CHECK(!"opened the test binaries");
		return;
	}
	image = kp_debug_image_open(packed.elf, skip, 3, &img);
	CHECK(image != NULL);
	if (image) {
		CHECK_EQ_INT(count_units(image), count_units(plain.elf));
		for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
			Elf_Data *a = section(plain.elf, kept[i]), *b = section(image, kept[i]);

			CHECK(a && b && a->d_size == b->d_size &&
			      memcmp(a->d_buf, b->d_buf, a->d_size) == 0);
		}
		CHECK(section(image, ".debug_line") == NULL);
		CHECK(section(image, ".zdebug_info") == NULL);
	}
	kp_debug_image_free(img);
	kp_test_elf_close(&packed);
	kp_test_elf_close(&plain);
	printf("%s: image %s\n", variant, image ? "matches" : "missing");
}

/* Offset and size in the file of section name. */
static bool file_range(const char *path, const char *name, uint64_t *off, uint64_t *size)
{
	struct kp_test_elf o;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	bool found = false;

	if (!kp_test_elf_open(path, &o) || elf_getshdrstrndx(o.elf, &shstrndx) != 0) {
		kp_test_elf_close(&o);
		return false;
	}
	while (!found && (scn = elf_nextscn(o.elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(o.elf, shstrndx, sh.sh_name)) &&
		    strcmp(n, name) == 0) {
			*off = sh.sh_offset;
			*size = sh.sh_size;
			found = true;
		}
	}
	kp_test_elf_close(&o);
	return found;
}

/* A copy of variant with bytes at offset (from the start of its
 * .debug_info) overwritten; no image, no crash. */
static void check_damaged(const char *variant, const char *what, uint64_t at, const void *bytes,
			  size_t n)
{
	char src[128], path[128];
	uint64_t off, size;
	struct kp_test_elf o;
	struct kp_debug_image *img = NULL;
	int fd;

	snprintf(src, sizeof(src), "%s/%s", tmp, variant);
	snprintf(path, sizeof(path), "%s/damaged", tmp);
	kp_test_sh("cp %s %s", src, path);
	if (!file_range(path, ".debug_info", &off, &size) || at + n > size) {
		CHECK(!"found .debug_info to damage");
		return;
	}
	fd = open(path, O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, bytes, n, (off_t)(off + at)) == (ssize_t)n);
	if (fd >= 0)
		close(fd);
	CHECK(kp_test_elf_open(path, &o));
	if (o.elf)
		CHECK(kp_debug_image_open(o.elf, skip, 3, &img) == NULL);
	printf("%s, %s: no image\n", variant, what);
	kp_debug_image_free(img);
	kp_test_elf_close(&o);
}

static void test_debug_image(void)
{
	const char *src = getenv("KP_FIXTURES") ? getenv("KP_FIXTURES") : "tests/fixtures";
	struct kp_test_elf o;
	struct kp_debug_image *img = NULL;
	static const unsigned char garbage[64] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5};
	uint64_t huge = (uint64_t)1 << 40;

	elf_version(EV_CURRENT);
	snprintf(tmp, sizeof(tmp), "/tmp/kp-dbgimg-XXXXXX");
	if (!mkdtemp(tmp)) {
		CHECK(!"mkdtemp");
		return;
	}
	if (kp_test_sh("cc -g -O2 -DKP_VARIANT=1 -I%s/sym -o %s/plain %s/sym/inline.c", src, tmp,
		       src) != 0) {
		CHECK(!"built the test binary");
		return;
	}
	CHECK(kp_test_sh("cd %s && objcopy --compress-debug-sections=zlib plain zlib && "
			 "objcopy --compress-debug-sections=zlib-gnu plain zlibgnu && "
			 "objcopy --compress-debug-sections=zstd plain zstd",
			 tmp) == 0);

	/* nothing compressed: nothing to gain, no image */
	{
		char path[128];

		snprintf(path, sizeof(path), "%s/plain", tmp);
		CHECK(kp_test_elf_open(path, &o));
		if (o.elf)
			CHECK(kp_debug_image_open(o.elf, skip, 3, &img) == NULL);
		kp_test_elf_close(&o);
	}
	check_variant("zlib");
	check_variant("zlibgnu");
	check_variant("zstd");

	/* the gABI header says 2^40 bytes: refused before any allocation */
	check_damaged("zlib", "absurd ch_size", 8, &huge, sizeof(huge));
	/* zstd may grow data far more than zlib, but its frame states the
	 * size, which must agree with the header's */
	check_damaged("zstd", "ch_size unlike the frame's", 8, &huge, sizeof(huge));
	/* an unknown compression type */
	check_damaged("zlib", "unknown ch_type", 0, "\x07\0\0\0", 4);
	/* the zlib stream itself damaged */
	check_damaged("zlib", "damaged stream", 24 + 100, garbage, sizeof(garbage));
	/* (a zstd frame without a checksum cannot tell damaged literals: its
	 * header is damaged here, right after the 24-byte ELF header) */
	check_damaged("zstd", "damaged frame header", 24, garbage, sizeof(garbage));
	kp_test_sh("rm -rf %s", tmp);
}

KP_TEST_MAIN(test_debug_image)
