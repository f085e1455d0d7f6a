/* What an object's compressed debug sections may inflate to
 * (symbolize/debug_image.h, issue 16 item 3), and which files kprof
 * trusts (symbolize/elf_object.h, item 2).
 *
 * The limit's arithmetic (floor, ratio, maximum, no overflow); the sizes
 * the sections of a binary built here state, compressed by objcopy in
 * each format (zlib gABI, zstd gABI, GNU .zdebug), against the plain
 * sections' sizes, with and without skipped sections; an image is made
 * at exactly the limit of what it holds (inflated and copied sections)
 * and not one byte below, before anything is allocated; a header
 * claiming 3 GiB is counted as claimed. Trust: a file
 * of root's or ours writable by nobody else, not one writable by group or
 * others, nor another user's, nor a directory; a memfd by its owner
 * (mode 0777 whatever its maker), sealed or not; a file made with
 * O_TMPFILE (no link either, but opened by path) by its mode. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_file.h"
#include "kp_test.h"
#include "symbolize/debug_image.h"
#include "symbolize/elf_object.h"

static char tmp[64];

/* tmp/name, opened */
static bool open_in_tmp(const char *name, struct kp_test_elf *o)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	return kp_test_elf_open(path, o);
}

/* The size of section name (".debug_x") in the plain file. */
static uint64_t plain_size(Elf *plain, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(plain, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(plain, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(plain, shstrndx, sh.sh_name)) &&
		    strcmp(n, name) == 0)
			return sh.sh_size;
	}
	return 0;
}

/* The uncompressed .debug_* sections of packed but skip (copied into an
 * image as they are). */
static uint64_t copied(Elf *packed, const char *skip)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	uint64_t sum = 0;

	if (elf_getshdrstrndx(packed, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(packed, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(packed, shstrndx, sh.sh_name)) &&
		    (strncmp(n, ".debug_", 7) == 0 || strcmp(n, ".gnu_debugaltlink") == 0) &&
		    !(sh.sh_flags & SHF_COMPRESSED) && sh.sh_type != SHT_NOBITS &&
		    strcmp(n, skip) != 0)
			sum += sh.sh_size;
	}
	return sum;
}

/* What the compressed sections of packed inflate to, from the plain
 * file's sizes: every .debug_* section objcopy compressed (it leaves one
 * as it is when compressing would not shrink it), skip left out. */
static uint64_t expected(Elf *plain, Elf *packed, const char *skip)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	uint64_t sum = 0;

	if (elf_getshdrstrndx(packed, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(packed, scn))) {
		GElf_Shdr sh;
		const char *n;
		char name[64];

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(packed, shstrndx, sh.sh_name)))
			continue;
		if (strncmp(n, ".zdebug_", 8) == 0)
			snprintf(name, sizeof(name), ".%s", n + 2);
		else if (strncmp(n, ".debug_", 7) == 0 && (sh.sh_flags & SHF_COMPRESSED))
			snprintf(name, sizeof(name), "%s", n);
		else
			continue;
		if (!skip || strcmp(name, skip) != 0)
			sum += plain_size(plain, name);
	}
	return sum;
}

static void test_limit(void)
{
	const uint64_t mib = 1u << 20;

	CHECK_EQ_INT(kp_debug_image_inflate_limit(0), 16 * mib);
	CHECK_EQ_INT(kp_debug_image_inflate_limit(150000), 16 * mib); /* the 150 KB program */
	CHECK_EQ_INT(kp_debug_image_inflate_limit(mib / 2 + 1), 16 * mib + 32);
	CHECK_EQ_INT(kp_debug_image_inflate_limit(mib), 32 * mib);
	CHECK_EQ_INT(kp_debug_image_inflate_limit(32 * mib), 1024 * mib);
	CHECK_EQ_INT(kp_debug_image_inflate_limit(33 * mib), 1024 * mib);
	CHECK_EQ_INT(kp_debug_image_inflate_limit(UINT64_MAX), 1024 * mib);
	CHECK_EQ_INT(kp_debug_image_inflate_limit(UINT64_MAX / 32 + 1), 1024 * mib);
	CHECK(KP_INFLATE_RUN >= KP_INFLATE_MAX && KP_INFLATE_RUN_OTHER >= KP_INFLATE_FLOOR);
}

static void check_variant(const char *variant)
{
	static const char *const skip[] = {".debug_line"};
	struct kp_test_elf plain, packed;
	struct kp_debug_image *img = NULL;
	uint64_t all, kept;

	if (!open_in_tmp("plain", &plain) || !open_in_tmp(variant, &packed)) {
		CHECK(!"opened the test binaries");
		kp_test_elf_close(&plain);
		return;
	}
	all = kp_debug_image_stated(packed.elf, NULL, 0);
	kept = kp_debug_image_stated(packed.elf, skip, 1);
	printf("%s: sections state %llu bytes, %llu without .debug_line\n", variant,
	       (unsigned long long)all, (unsigned long long)kept);
	CHECK(kept > 0 && kept < all);
	CHECK_EQ_INT(all, expected(plain.elf, packed.elf, NULL));
	CHECK_EQ_INT(kept, expected(plain.elf, packed.elf, ".debug_line"));
	CHECK_EQ_INT(kp_debug_image_stated(plain.elf, NULL, 0), 0);
	/* an image at exactly the limit (what is inflated and what is
	 * copied), none one byte below */
	kept += copied(packed.elf, skip[0]);
	CHECK(kp_debug_image_open_limit(packed.elf, skip, 1, kept - 1, &img) == NULL);
	CHECK(img == NULL);
	CHECK(kp_debug_image_open_limit(packed.elf, skip, 1, kept, &img) != NULL);
	kp_debug_image_free(img);
	kp_test_elf_close(&packed);
	kp_test_elf_close(&plain);
}

/* The zlib variant with its .debug_info's header claiming 3 GiB: counted
 * as claimed, and no image under a limit of 1 GiB. */
static void check_claim(void)
{
	const uint64_t claim = (uint64_t)3 << 30;
	struct kp_test_elf o;
	struct kp_debug_image *img = NULL;
	uint64_t before, after;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	char path[128];
	int fd;

	if (!open_in_tmp("zlib", &o)) {
		CHECK(!"opened zlib");
		return;
	}
	before = kp_debug_image_stated(o.elf, NULL, 0);
	fd = -1;
	snprintf(path, sizeof(path), "%s/claim", tmp);
	kp_test_sh("cp %s/zlib %s", tmp, path);
	elf_getshdrstrndx(o.elf, &shstrndx);
	while ((scn = elf_nextscn(o.elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(o.elf, shstrndx, sh.sh_name)) &&
		    strcmp(n, ".debug_info") == 0) {
			GElf_Chdr ch;

			CHECK(gelf_getchdr(scn, &ch) != NULL);
			before -= ch.ch_size;
			fd = open(path, O_WRONLY);
			/* Elf64_Chdr: ch_type, ch_reserved, then ch_size */
			CHECK(fd >= 0 && pwrite(fd, &claim, 8, (off_t)sh.sh_offset + 8) == 8);
		}
	}
	if (fd >= 0)
		close(fd);
	kp_test_elf_close(&o);
	if (!open_in_tmp("claim", &o)) {
		CHECK(!"opened the claim");
		return;
	}
	after = kp_debug_image_stated(o.elf, NULL, 0);
	CHECK_EQ_INT(after, before + claim);
	CHECK(kp_debug_image_open_limit(o.elf, NULL, 0, (uint64_t)1 << 30, &img) == NULL);
	kp_test_elf_close(&o);
}

static void test_stated(void)
{
	const char *src = getenv("KP_FIXTURES") ? getenv("KP_FIXTURES") : "tests/fixtures";

	snprintf(tmp, sizeof(tmp), "/tmp/kp-inflate-XXXXXX");
	if (!mkdtemp(tmp)) {
		CHECK(!"mkdtemp");
		return;
	}
	if (kp_test_sh("cc -g -O2 -DKP_VARIANT=1 -I%s/sym -o %s/plain %s/sym/inline.c", src, tmp,
		       src) != 0 ||
	    kp_test_sh("cd %s && objcopy --compress-debug-sections=zlib plain zlib && "
		       "objcopy --compress-debug-sections=zlib-gnu plain zlibgnu && "
		       "objcopy --compress-debug-sections=zstd plain zstd",
		       tmp) != 0) {
		CHECK(!"built the test binaries");
		return;
	}
	check_variant("zlib");
	check_variant("zlibgnu");
	check_variant("zstd");
	check_claim();
}

/* A new file in tmp with mode, owned by uid (when root), open for reading. */
static int file_with(const char *name, mode_t mode, uid_t uid)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return -1;
	if (write(fd, "x", 1) != 1 || fchmod(fd, mode) != 0 ||
	    (uid != geteuid() && fchown(fd, uid, (gid_t)-1) != 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void check_trust(const char *what, int fd, bool want)
{
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ_INT(kp_elf_object_file_trusted(fd), want);
	printf("%s: %s\n", what, kp_elf_object_file_trusted(fd) ? "trusted" : "not trusted");
	close(fd);
}

static void test_trust(void)
{
	int fd, dir;

	check_trust("ours, 0644", file_with("a", 0644, geteuid()), true);
	check_trust("ours, 0755", file_with("b", 0755, geteuid()), true);
	check_trust("ours, 0664", file_with("c", 0664, geteuid()), false);
	check_trust("ours, 0646", file_with("d", 0646, geteuid()), false);
	if (geteuid() == 0) {
		check_trust("uid 12345's, 0644", file_with("e", 0644, 12345), false);
		check_trust("uid 12345's, 0444", file_with("f", 0444, 12345), false);
	}
	dir = open(tmp, O_RDONLY | O_DIRECTORY);
	check_trust("a directory", dir, false);

	fd = memfd_create("kp inflate test", MFD_CLOEXEC);
	check_trust("a memfd of ours (mode 0777)", fd, true);
	fd = memfd_create("kp inflate test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd >= 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
		close(fd);
		fd = -1;
	}
	check_trust("a memfd of ours, sealed", fd, true);
	if (geteuid() == 0) {
		fd = memfd_create("kp inflate test", MFD_CLOEXEC);
		if (fd >= 0 && fchown(fd, 12345, (gid_t)-1) != 0) {
			close(fd);
			fd = -1;
		}
		check_trust("a memfd of uid 12345's", fd, false);
	}
	/* no link either, but it had a path: its mode counts */
	fd = open(tmp, O_TMPFILE | O_RDWR, 0666);
	if (fd >= 0 && fchmod(fd, 0666) != 0) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0 || errno != EOPNOTSUPP)
		check_trust("an O_TMPFILE file, 0666", fd, false);
	kp_test_sh("rm -rf %s", tmp);
}

static void test_inflate_limit(void)
{
	elf_version(EV_CURRENT);
	test_limit();
	test_stated();
	test_trust();
}

KP_TEST_MAIN(test_inflate_limit)
