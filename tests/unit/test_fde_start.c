/* symbolize/fde_start.c on binaries built here from
 * tests/fixtures/sym/fdestart.c (PIE, non-PIE, -O0, a shared library with
 * -fexceptions: a CIE with a personality routine and LSDAs; with clang and
 * lld, 32-bit i386 and big-endian powerpc64 libraries) and
 * stripped as Debian's dh_strip strips them: every byte of every function
 * nm lists (the unstripped build's) is covered by an FDE starting at that
 * function's nm address, cold parts included; no FDE starts anywhere else
 * in .text; through kp_elf_object, a stripped copy names its static
 * functions MODULE+0xSTART and its exported ones by their symbols. Then
 * damaged copies (.eh_frame zeroed, filled with 0xff, a CIE's encoding made
 * unreadable, the file cut short) give nothing or only real starts, and
 * never crash (ASan). */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf_file.h"
#include "kp_test.h"
#include "symbolize/elf_object.h"
#include "symbolize/fde_start.h"

static char tmp[64];

struct nmsym {
	uint64_t addr, size;
	char name[64];
};

/* The sized function symbols (t/T) nm lists for tmp/name; returns how
 * many (at most cap). */
static size_t nm_functions(const char *name, struct nmsym *v, size_t cap)
{
	char cmd[512], line[512];
	size_t n = 0;
	FILE *fp;

	snprintf(cmd, sizeof(cmd), "nm -S --defined-only %s/%s", tmp, name);
	fp = popen(cmd, "r");
	while (fp && fgets(line, sizeof(line), fp) && n < cap) {
		unsigned long long a, s;
		char type, sym[64];

		if (sscanf(line, "%llx %llx %c %63s", &a, &s, &type, sym) == 4 &&
		    (type == 't' || type == 'T') && s) {
			v[n].addr = a;
			v[n].size = s;
			snprintf(v[n].name, sizeof(v[n].name), "%s", sym);
			n++;
		}
	}
	if (fp)
		pclose(fp);
	return n;
}

/* tmp/name, opened */
static bool open_in_tmp(const char *name, struct kp_test_elf *o)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	return kp_test_elf_open(path, o);
}

/* The [lo, hi) of section name in elf, and its file offset. */
static bool section(Elf *elf, const char *name, uint64_t *lo, uint64_t *hi, uint64_t *off)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		const char *n = sh ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;

		if (n && strcmp(n, name) == 0) {
			*lo = sh->sh_addr;
			*hi = sh->sh_addr + sh->sh_size;
			*off = sh->sh_offset;
			return true;
		}
	}
	return false;
}

static bool is_nm_start(const struct nmsym *v, size_t n, uint64_t a)
{
	for (size_t i = 0; i < n; i++) {
		if (v[i].addr == a)
			return true;
	}
	return false;
}

/* The fixture's own functions (not the C library's start files, nor a
 * linker's stubs, which have no FDE on every target). */
static bool fixture_function(const char *name)
{
	return strncmp(name, "st_", 3) == 0 || strncmp(name, "complain", 8) == 0 ||
	       strcmp(name, "exported_fn") == 0 || strcmp(name, "main") == 0 ||
	       strcmp(name, "release") == 0;
}

/* The stripped copy's FDEs against the unstripped build's nm; cold: the
 * build has a cold part (gcc -O2). */
static void check_starts(const char *name, const char *stripped, bool cold)
{
	struct nmsym v[64];
	size_t n = nm_functions(name, v, 64), wrong = 0, covered = 0, stray = 0;
	struct kp_test_elf o;
	struct kp_fde_start *f;
	uint64_t lo, hi, off, s, e;
	bool has_cold = false;

	CHECK(n >= 6);
	if (!open_in_tmp(stripped, &o)) {
		CHECK(!"opened the stripped copy");
		return;
	}
	f = kp_fde_start_new(o.elf, "m");
	CHECK(f != NULL);
	for (size_t i = 0; f && i < n; i++) {
		if (!fixture_function(v[i].name))
			continue;
		has_cold |= strstr(v[i].name, ".cold") != NULL;
		for (uint64_t a = v[i].addr; a < v[i].addr + v[i].size; a++) {
			if (!kp_fde_start_find(f, a, &s, &e) || s != v[i].addr) {
				if (!wrong++)
					fprintf(stderr,
						"%s: %s+%#" PRIx64 ": FDE start %#" PRIx64 "\n",
						stripped, v[i].name, a - v[i].addr, s);
			}
			covered++;
		}
	}
	CHECK_EQ_INT(wrong, 0);
	CHECK(covered > 100);
	CHECK(has_cold == cold);
	/* no FDE in .text starts where nm has no function */
	CHECK(section(o.elf, ".text", &lo, &hi, &off));
	for (uint64_t a = lo; f && a < hi; a++) {
		if (kp_fde_start_find(f, a, &s, &e) && s >= lo && s < hi && !is_nm_start(v, n, s))
			stray++;
	}
	CHECK_EQ_INT(stray, 0);
	/* the name, made once */
	for (size_t i = 0; f && i < n; i++) {
		char want[64];
		const char *a = kp_fde_start_name(f, v[i].addr + v[i].size - 1);

		if (strcmp(v[i].name, "exported_fn") != 0)
			continue;
		snprintf(want, sizeof(want), "m+0x%" PRIx64, v[i].addr);
		CHECK_EQ_STR(a, want);
		CHECK(a == kp_fde_start_name(f, v[i].addr));
	}
	CHECK(kp_fde_start_name(f, 0) == NULL);
	kp_fde_start_free(f);
	kp_test_elf_close(&o);
}

static void emit_name(void *arg, const struct kp_elf_frame *fr)
{
	snprintf(arg, 128, "%s", fr->name);
}

/* Through kp_elf_object: symbols win, FDEs name the rest. */
static void check_object(const char *name, const char *stripped, bool lib)
{
	struct nmsym v[64];
	size_t n = nm_functions(name, v, 64);
	struct kp_elf_object_ctx ctx;
	struct kp_elf_object *o;
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmp, stripped);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	kp_elf_object_ctx_init(&ctx, NULL, 0, false, false, NULL);
	o = kp_elf_object_new(fd, path, path, (const uint8_t *)"", 0);
	for (size_t i = 0; i < n; i++) {
		char got[128] = "[unknown]", want[128];
		uint64_t mid = v[i].addr + v[i].size / 2;

		if (strncmp(v[i].name, "st_", 3) && strcmp(v[i].name, "exported_fn"))
			continue;
		kp_elf_object_lookup_vaddr(o, &ctx, mid, emit_name, got);
		if (lib && strcmp(v[i].name, "exported_fn") == 0)
			snprintf(want, sizeof(want), "exported_fn"); /* in .dynsym */
		else
			snprintf(want, sizeof(want), "%s+0x%" PRIx64, stripped, v[i].addr);
		CHECK_EQ_STR(got, want);
	}
	kp_elf_object_free(o);
	kp_elf_object_ctx_fini(&ctx);
}

/* A copy of tmp/from with len bytes at off set to byte (or cut at off
 * when len is 0). */
static bool damage(const char *from, const char *to, uint64_t off, size_t len, int byte)
{
	char path[256];
	uint8_t buf[4096];
	int fd;
	bool ok;

	if (kp_test_sh("cp %s/%s %s/%s", tmp, from, tmp, to) != 0)
		return false;
	snprintf(path, sizeof(path), "%s/%s", tmp, to);
	if (!len)
		return truncate(path, (off_t)off) == 0;
	fd = open(path, O_WRONLY);
	memset(buf, byte, sizeof(buf));
	ok = fd >= 0 && len <= sizeof(buf) && pwrite(fd, buf, len, (off_t)off) == (ssize_t)len;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* A damaged copy: no crash, and whatever it finds starts where nm says
 * a function starts. */
static void check_damaged(const char *to, const struct nmsym *v, size_t n, bool expect_none)
{
	struct kp_test_elf o;
	struct kp_fde_start *f;
	size_t bad = 0;

	if (!open_in_tmp(to, &o)) {
		CHECK(!"opened the damaged copy");
		kp_test_elf_close(&o);
		return;
	}
	f = kp_fde_start_new(o.elf, "m");
	for (size_t i = 0; f && i < n; i++) {
		uint64_t s, e;

		if (kp_fde_start_find(f, v[i].addr, &s, &e) && !is_nm_start(v, n, s))
			bad++;
	}
	CHECK_EQ_INT(bad, 0);
	if (expect_none)
		CHECK(f == NULL);
	kp_fde_start_free(f);
	kp_test_elf_close(&o);
}

static void test_damaged(void)
{
	struct nmsym v[64];
	size_t n = nm_functions("pie", v, 64);
	struct kp_test_elf o;
	uint64_t lo, hi, off = 0;
	bool ok;

	CHECK(open_in_tmp("pie", &o));
	ok = o.elf && section(o.elf, ".eh_frame", &lo, &hi, &off);
	kp_test_elf_close(&o);
	CHECK(ok);
	if (!ok)
		return;
	CHECK(damage("pie", "zeroed", off, hi - lo, 0));
	check_damaged("zeroed", v, n, true);
	CHECK(damage("pie", "ones", off, hi - lo, 0xff));
	check_damaged("ones", v, n, true);
	/* the augmentation data of the first CIE ("zR": the 'R' byte, at 17
	 * past its start) says indirect: its FDEs cannot be read */
	CHECK(damage("pie", "indirect", off + 17, 1, 0x9b));
	check_damaged("indirect", v, n, false);
	/* every byte after the first CIE turned to garbage, one at a time
	 * would take long: a stretch of each sixteenth */
	for (uint64_t at = 0; at < hi - lo; at += (hi - lo) / 16 + 1) {
		CHECK(damage("pie", "stretch", off + at, 24 < hi - lo - at ? 24 : hi - lo - at,
			     0xa5));
		check_damaged("stretch", v, n, false);
	}
	/* the file cut inside .eh_frame: libelf refuses the section */
	CHECK(damage("pie", "cut", off + (hi - lo) / 2, 0, 0));
	check_damaged("cut", v, n, true);
}

static void test_module(void)
{
	char *m;

	CHECK_EQ_STR(m = kp_fde_start_module("/usr/bin/bash"), "bash");
	free(m);
	CHECK_EQ_STR(m = kp_fde_start_module("/tmp/x/prog (deleted)"), "prog");
	free(m);
	CHECK_EQ_STR(m = kp_fde_start_module("/memfd:jit (deleted)"), "memfd:jit");
	free(m);
	CHECK_EQ_STR(m = kp_fde_start_module("plain"), "plain");
	free(m);
	CHECK_EQ_STR(m = kp_fde_start_module("[vdso]"), "[vdso]");
	free(m);
}

static void test_builds(void)
{
	const char *src = getenv("KP_FIXTURES") ? getenv("KP_FIXTURES") : "tests/fixtures";
	static const char strip_exe[] = "strip --remove-section=.comment --remove-section=.note";

	elf_version(EV_CURRENT);
	snprintf(tmp, sizeof(tmp), "/tmp/kp-fdestart-XXXXXX");
	if (!mkdtemp(tmp)) {
		CHECK(!"mkdtemp");
		return;
	}
	if (kp_test_sh("cd %s && cc -O2 -o pie %s/sym/fdestart.c && "
		       "cc -O2 -fno-pie -no-pie -o nopie %s/sym/fdestart.c && "
		       "cc -O0 -fomit-frame-pointer -o O0 %s/sym/fdestart.c && "
		       "cc -O2 -fPIC -shared -fexceptions -DKP_FDESTART_LIB -DKP_FDESTART_CLEANUP "
		       "-o lib.so %s/sym/fdestart.c && "
		       "%s -o pie.stripped pie && %s -o nopie.stripped nopie && "
		       "%s -o O0.stripped O0 && %s --strip-unneeded -o lib.so.stripped lib.so",
		       tmp, src, src, src, src, strip_exe, strip_exe, strip_exe, strip_exe) != 0) {
		CHECK(!"built and stripped the fixtures");
		return;
	}
	check_starts("pie", "pie.stripped", true);
	check_starts("nopie", "nopie.stripped", true);
	check_starts("O0", "O0.stripped", false);
	check_starts("lib.so", "lib.so.stripped", true);
	/* 32-bit and big-endian pointers, where clang and lld can build for
	 * i386 and powerpc64 (no C library needed: -nostdlib) */
	if (kp_test_sh(
		    "cd %s && f='-O2 -fPIC -shared -nostdlib -fuse-ld=lld -DKP_FDESTART_LIB "
		    "-Wno-unknown-attributes' && "
		    "clang --target=i386-linux-gnu $f -o i386.so %s/sym/fdestart.c && "
		    "clang --target=powerpc64-linux-gnu -mabi=elfv2 $f -o powerpc64.so "
		    "%s/sym/fdestart.c && "
		    "llvm-strip --strip-unneeded -o i386.so.stripped i386.so && "
		    "llvm-strip --strip-unneeded -o powerpc64.so.stripped powerpc64.so 2>/dev/null",
		    tmp, src, src) == 0) {
		check_starts("i386.so", "i386.so.stripped", false);
		check_starts("powerpc64.so", "powerpc64.so.stripped", false);
	} else {
		printf("skipped i386 and powerpc64: no clang, lld or llvm-strip\n");
	}
	check_object("pie", "pie.stripped", false);
	check_object("nopie", "nopie.stripped", false);
	check_object("lib.so", "lib.so.stripped", true);
	test_damaged();
}

static void cleanup(void)
{
	if (tmp[0])
		kp_test_sh("rm -rf %s", tmp);
}

KP_TEST_MAIN(test_module, test_builds, cleanup)
