/* The persisted symbol index (symbolize/symidx.h) as a file: what is built
 * is what is looked up, saved and loaded back; a damaged file (every byte
 * changed in turn, every truncation) is refused or answers without
 * reading outside itself (ASan); files kprof must not trust are ignored;
 * the directory is kept under its size. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "kp_test.h"
#include "symbolize/symidx.h"

static char dir[64];
static const uint8_t bid[20] = {0xde, 0xad, 0xbe, 0xef, 1,  2,	3,  4,	5,  6,
				7,    8,    9,	  10,	11, 12, 13, 14, 15, 16};
static const uint8_t other_bid[20] = {0xde, 0xad, 0xbe, 0xef, 1,  2,  3,  4,  5,  6,
				      7,    8,	  9,	10,   11, 12, 13, 14, 15, 17};

/* A small build: text at 0x1000 (file offset 0), two functions; main has
 * an inlined callee (a C++ name, mangled), which has one of its own
 * (plain, qualified); a sizeless symbol up to its section's end. */
static struct kp_symidx *build_small(void)
{
	static const char names[] = "main\0helper\0_start\0";
	static const struct kp_symidx_seg segs[] = {{0, 0x3000, 0x1000}};
	static const struct kp_symidx_sym syms[] = {
		{0x1000, 0x100, 0, 0, 0},    /* main */
		{0x1100, 0x80, 0, 5, 0},     /* helper */
		{0x1200, 0, 0x1280, 12, 0}}; /* _start, sizeless */
	struct kp_dwflat_scope scopes[] = {
		{-1, false, false, NULL, "main", NULL},
		{0, true, false, "_ZN2ns4workEi", "work", NULL},
		{1, true, true, NULL, "ns::(anonymous namespace)::W::step", NULL},
		{-1, false, false, NULL, "helper", NULL}};
	struct kp_dwflat_piece pieces[] = {{0x1000, 0x1010, 0},
					   {0x1010, 0x1020, 1},
					   {0x1020, 0x1030, 2},
					   {0x1030, 0x1100, 0},
					   {0x1100, 0x1180, 3}};
	struct kp_dwflat flat = {scopes, 4, pieces, 5};
	struct kp_symidx_input in = {.build_id = bid,
				     .build_id_len = sizeof(bid),
				     .segs = segs,
				     .nsegs = 1,
				     .syms = syms,
				     .sym_strings = names,
				     .nsyms = 3,
				     .dwarf = &flat};

	return kp_symidx_build(&in);
}

/* The frames of file offset off as "outer;inlined;..." (innermost last). */
static void frames(const struct kp_symidx *x, uint64_t off, char *buf, size_t size)
{
	uint32_t chain[16];
	size_t n, len = 0;
	uint64_t addr;
	const char *sym;

	buf[0] = '\0';
	if (!kp_symidx_addr(x, off, &addr))
		return;
	sym = kp_symidx_symbol(x, addr);
	n = kp_symidx_chain(x, addr, chain, 16);
	len += (size_t)snprintf(buf, size, "%s", sym ? sym : "-");
	for (size_t i = n < 16 ? n : 16; i-- > 0;) {
		char *name = kp_symidx_scope_name(x, chain[i], false);

		if (len < size)
			len += (size_t)snprintf(buf + len, size - len, ";%s%s", name ? name : "?",
						kp_symidx_inlined(x, chain[i]) ? "_[i]" : "");
		free(name);
	}
}

static void check_small(const struct kp_symidx *x)
{
	static const struct {
		uint64_t off;
		const char *want; /* symbol, then the scopes outermost first */
	} cases[] = {
		{0x0, "main;main"},
		{0x15, "main;main;ns::work_[i]"},
		{0x25, "main;main;ns::work_[i];ns::(anonymous namespace)::W::step_[i]"},
		{0x150, "helper;helper"},
		{0x27f, "_start"}, /* sizeless: to the end of its section */
		{0x280, "-"},
		{0x3000, ""}, /* outside the segment */
	};
	char buf[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		frames(x, cases[i].off, buf, sizeof(buf));
		CHECK_EQ_STR(buf, cases[i].want);
	}
}

static size_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (size_t)st.st_size : 0;
}

static void test_round_trip(char **image, size_t *len)
{
	struct kp_symidx *x = build_small(), *y;
	char path[128];
	FILE *f;

	check_small(x);
	CHECK(kp_symidx_save(x, dir));
	y = kp_symidx_load(dir, bid, sizeof(bid));
	CHECK(y != NULL);
	if (y) {
		check_small(y);
		CHECK_EQ_INT(kp_symidx_size(y), kp_symidx_size(x));
	}
	CHECK(kp_symidx_load(dir, other_bid, sizeof(other_bid)) == NULL);
	snprintf(path, sizeof(path), "%s/deadbeef0102030405060708090a0b0c0d0e0f10", dir);
	CHECK_EQ_INT(file_size(path), kp_symidx_size(x));
	/* private: mode 0600 in a 0700 directory */
	{
		struct stat st;

		CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
		CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);
	}
	*len = file_size(path);
	*image = malloc(*len);
	f = fopen(path, "rb");
	CHECK(f && fread(*image, 1, *len, f) == *len);
	if (f)
		fclose(f);
	kp_symidx_free(x);
	kp_symidx_free(y);
}

static void put_file(const char *image, size_t len)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/deadbeef0102030405060708090a0b0c0d0e0f10", dir);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		CHECK(write(fd, image, len) == (ssize_t)len);
		close(fd);
	}
}

/* Looks up every offset of the segment and a little past it: with ASan,
 * any read outside the file fails the test. */
static void use_all(const struct kp_symidx *x)
{
	char buf[4096];

	for (uint64_t off = 0; off < 0x3010; off += 3)
		frames(x, off, buf, sizeof(buf));
}

static void test_damage(const char *good, size_t len)
{
	char *bad = malloc(len + 64);
	size_t accepted = 0, tried = 0, identity_accepted = 0;
	static const uint8_t values[] = {0x00, 0xff, 0x80, 0x01, 0x7f};

	/* every byte, several values */
	for (size_t i = 0; i < len; i++) {
		for (size_t v = 0; v < sizeof(values); v++) {
			struct kp_symidx *x;

			memcpy(bad, good, len);
			if ((uint8_t)bad[i] == values[v])
				continue;
			bad[i] = (char)values[v];
			put_file(bad, len);
			tried++;
			x = kp_symidx_load(dir, bid, sizeof(bid));
			if (x) {
				accepted++;
				/* magic, version, byte order, size, build-id,
				 * its length, the counts: never accepted */
				if (i < 44 || (i >= 88 && i < 92) || (i >= 112 && i < 152))
					identity_accepted++;
				use_all(x);
				kp_symidx_free(x);
			}
		}
	}
	printf("damaged bytes: %zu files, %zu accepted (names or addresses changed)\n", tried,
	       accepted);
	CHECK_EQ_INT(identity_accepted, 0);
	CHECK(accepted < tried);
	/* every truncation, and a longer file, are refused */
	for (size_t l = 1; l < len; l++) {
		struct kp_symidx *x;

		put_file(good, l);
		x = kp_symidx_load(dir, bid, sizeof(bid));
		if (x) {
			CHECK(!"a truncated index is refused");
			kp_symidx_free(x);
			break;
		}
	}
	memcpy(bad, good, len);
	memset(bad + len, 0, 64);
	put_file(bad, len + 64);
	CHECK(kp_symidx_load(dir, bid, sizeof(bid)) == NULL);
	put_file(good, len);
	{
		struct kp_symidx *x = kp_symidx_load(dir, bid, sizeof(bid));

		CHECK(x != NULL);
		if (x)
			check_small(x);
		kp_symidx_free(x);
	}
	free(bad);
}

/* Random damage, several bytes at once, with a fixed seed: xorshift, so
 * every run tries the same 20000 files. Whatever is accepted is looked up
 * at every offset (ASan watches). */
static void test_random_damage(const char *good, size_t len)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	char *bad = malloc(len + 256);
	size_t accepted = 0;

	for (int round = 0; round < 20000; round++) {
		size_t n = len, flips;
		struct kp_symidx *idx;

		memcpy(bad, good, len);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		flips = 1 + x % 8;
		for (size_t i = 0; i < flips; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			bad[(x >> 8) % len] = (char)(x >> 40);
		}
		if (round % 10 == 0) /* sometimes a length that lies, too */
			n = (size_t)(x >> 20) % (len + 256);
		put_file(bad, n ? n : 1);
		idx = kp_symidx_load(dir, bid, sizeof(bid));
		if (idx) {
			accepted++;
			use_all(idx);
			kp_symidx_free(idx);
		}
	}
	printf("random damage: 20000 files, %zu accepted\n", accepted);
	CHECK(accepted < 20000);
	free(bad);
}

/* Files kprof did not write itself are not read: a symlink, a file others
 * can write. */
static void test_trust(const char *good, size_t len)
{
	char path[128], target[128];

	snprintf(path, sizeof(path), "%s/deadbeef0102030405060708090a0b0c0d0e0f10", dir);
	snprintf(target, sizeof(target), "%s/elsewhere", dir);
	put_file(good, len);
	CHECK(rename(path, target) == 0);
	CHECK(symlink(target, path) == 0);
	CHECK(kp_symidx_load(dir, bid, sizeof(bid)) == NULL);
	unlink(path);
	unlink(target);
	put_file(good, len);
	CHECK(chmod(path, 0622) == 0);
	CHECK(kp_symidx_load(dir, bid, sizeof(bid)) == NULL);
	CHECK(chmod(path, 0600) == 0);
	{
		struct kp_symidx *x = kp_symidx_load(dir, bid, sizeof(bid));

		CHECK(x != NULL);
		kp_symidx_free(x);
	}
}

/* Over 512 MiB, saving an index removes the least recently used ones
 * until three quarters of that are left (sparse stand-ins). */
static void test_prune(void)
{
	static const char *const names[] = {"aa01", "aa02", "aa03"};
	struct kp_symidx *x = build_small();
	char path[128];

	for (int i = 0; i < 3; i++) {
		struct timeval tv[2] = {{1000000 + i * 1000, 0}, {1000000 + i * 1000, 0}};
		int fd;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		CHECK(fd >= 0 && ftruncate(fd, (off_t)200 << 20) == 0);
		if (fd >= 0)
			close(fd);
		CHECK(utimes(path, tv) == 0);
	}
	snprintf(path, sizeof(path), "%s/not-an-index", dir);
	close(open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600));
	CHECK(kp_symidx_save(x, dir));
	/* 600 MiB + ours: the two oldest go (to 200 MiB + ours) */
	snprintf(path, sizeof(path), "%s/aa01", dir);
	CHECK(access(path, F_OK) != 0);
	snprintf(path, sizeof(path), "%s/aa02", dir);
	CHECK(access(path, F_OK) != 0);
	snprintf(path, sizeof(path), "%s/aa03", dir);
	CHECK(access(path, F_OK) == 0);
	unlink(path);
	snprintf(path, sizeof(path), "%s/not-an-index", dir);
	CHECK(access(path, F_OK) == 0);
	kp_symidx_free(x);
	x = kp_symidx_load(dir, bid, sizeof(bid));
	CHECK(x != NULL); /* ours kept */
	kp_symidx_free(x);
}

int main(void)
{
	char *good = NULL;
	size_t len = 0;

	snprintf(dir, sizeof(dir), "/tmp/kp-symidx-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	strcat(dir, "/cache/symbols"); /* made by the first save */
	test_round_trip(&good, &len);
	if (good) {
		test_damage(good, len);
		test_random_damage(good, len);
		test_trust(good, len);
	}
	test_prune();
	free(good);
	*strstr(dir, "/cache") = '\0';
	kp_test_sh("rm -rf %s", dir);
	printf("%d passed, %d failed\n", kp_test_passed, kp_test_failed);
	return kp_test_failed ? 1 : 0;
}
