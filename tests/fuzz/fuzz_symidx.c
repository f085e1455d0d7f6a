/* The symbol index (symbolize/symidx.h) as kp_symidx_load reads it: a file
 * in the cache directory named by its build-id. The input becomes that
 * file in a private directory; whatever loads is asked about every address
 * the file itself holds (segment offsets, symbol and piece bounds are all
 * in there), and each scope found is named both ways, demangler included.
 *
 * Input: byte 0 picks the mode.
 *   even: raw. Byte 1 is the build-id length - 1 (mod 64), then the
 *         build-id, then the file (the seeds are real indexes); with bit
 *         1 of byte 0 set the file's checksum is made right first, so
 *         that damage reaches the checks behind it.
 *   odd:  a patch of a valid index built at start-up: byte 1 cuts the file
 *         (0: whole, else to byte1/256 of it), then 3-byte patches
 *         (offset low, offset high, a byte to xor in), so mutations
 *         start from a file every check accepts; its checksum is then
 *         made right (fix_file), so the patch reaches the other checks. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "symbolize/symidx.h"
#include "util/cachefile.h"
#include "util/checksum.h"
#include "util/strtab.h"

static char dir[64];
static struct kp_cachedir *cache;
static uint8_t *good; /* the valid index's file */
static size_t good_len;
static const uint8_t good_bid[20] = {0xde, 0xad, 0xbe, 0xef, 1,	 2,  3,	 4,  5,	 6,
				     7,	   8,	 9,    10,   11, 12, 13, 14, 15, 16};

/* A small build: text at 0x1000, C, C++ and Rust names (mangled ones are
 * demangled at lookup), an inline chain three deep with call sites, a
 * sizeless symbol, line rows with a gap and two files. */
static struct kp_symidx *build_good(void)
{
	static const char names[] = "main\0_ZN2ns6helperEv\0_start\0_RNvCs1234_4core3fmt\0";
	static const struct kp_symidx_seg segs[] = {{0, 0x3000, 0x1000}, {0x3000, 0x100, 0x5000}};
	static const struct kp_symidx_sym syms[] = {{0x1000, 0x100, 0, 0, 0},
						    {0x1100, 0x80, 0, 5, 0},
						    {0x1200, 0, 0x1280, 21, 0},
						    {0x5000, 0x40, 0, 28, 0}};
	struct kp_dwarf_flat_scope scopes[] = {
		{-1, false, false, NULL, "main", NULL, 0, 0},
		{0, true, false, "_ZN2ns4workEi", "work", NULL, 1, 12},
		{1, true, true, NULL, "ns::(anonymous namespace)::W::step", NULL, 2, 7},
		{-1, false, false, "_ZN2ns6helperEv", "helper", NULL, 0, 0},
		{3, true, false, "_RNvCs1234_4core3fmt", NULL, NULL, 2, 0}};
	struct kp_dwarf_flat_piece pieces[] = {{0x1000, 0x1010, 0}, {0x1010, 0x1020, 1},
					       {0x1020, 0x1030, 2}, {0x1030, 0x1100, 0},
					       {0x1100, 0x1140, 3}, {0x1140, 0x1180, 4}};
	struct kp_dwarf_flat_row rows[] = {{0x1000, 0x1008, 1, 10},
					   {0x1008, 0x1010, 1, 11},
					   {0x1010, 0x1030, 2, 3},
					   {0x1040, 0x1100, 1, 4000000},
					   {0x1100, 0x1180, 2, 1}};
	struct kp_strtab *files = kp_strtab_new();
	struct kp_dwarf_flat flat = {scopes, 5, pieces, 6, rows, 5, files};
	struct kp_symidx *x;

	kp_strtab_intern(files, "/src/main.c", 11);
	kp_strtab_intern(files, "/usr/include/c++/12/bits/step.h", 31);
	struct kp_symidx_input in = {.build_id = good_bid,
				     .build_id_len = sizeof(good_bid),
				     .segs = segs,
				     .nsegs = 2,
				     .syms = syms,
				     .sym_strings = names,
				     .nsyms = 4,
				     .dwarf = &flat};

	x = kp_symidx_build(&in);
	kp_strtab_free(files);
	return x;
}

static char *index_path(const uint8_t *bid, size_t len)
{
	static char path[sizeof(dir) + 2 * 64 + 2];
	size_t n = (size_t)snprintf(path, sizeof(path), "%s/", dir);

	for (size_t i = 0; i < len; i++)
		n += (size_t)snprintf(path + n, sizeof(path) - n, "%02x", bid[i]);
	return path;
}

static void put_file(const char *path, const uint8_t *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len) || close(fd) != 0)
		abort();
}

static void cleanup(void)
{
	unlink(index_path(good_bid, sizeof(good_bid)));
	kp_cachedir_free(cache);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct kp_symidx *x;
	struct stat st;
	FILE *f;

	fuzz_tmpdir(dir, sizeof(dir), "symidx");
	cache = kp_cachedir_new(dir, NULL, NULL);
	atexit(cleanup);
	x = build_good();
	if (!kp_symidx_save(x, cache))
		abort();
	kp_symidx_free(x);
	f = fopen(index_path(good_bid, sizeof(good_bid)), "rb");
	if (!f || fstat(fileno(f), &st) != 0)
		abort();
	good_len = (size_t)st.st_size;
	good = malloc(good_len);
	if (!good || fread(good, 1, good_len, f) != good_len)
		abort();
	fclose(f);
	return 0;
}

/* The checksum (8 bytes at 16, over the file from its size field at 24
 * on; symbolize/symidx.c's header) made right for file[0..len). */
static void fix_file(uint8_t *file, size_t len)
{
	uint64_t sum;

	if (len < 24)
		return;
	sum = kp_checksum(file + 24, len - 24);
	memcpy(file + 16, &sum, 8);
}

static void ask(const struct kp_symidx *x, uint64_t addr)
{
	uint32_t chain[16];
	size_t n = kp_symidx_chain(x, addr, chain, 16);
	const char *sym = kp_symidx_symbol(x, addr);

	uint32_t line = 0;
	const char *file = kp_symidx_line(x, addr, &line);

	if (sym)
		FUZZ_CHECK(strlen(sym) < kp_symidx_size(x));
	if (file)
		FUZZ_CHECK(strlen(file) < kp_symidx_size(x));
	for (size_t i = 0; i < n && i < 16; i++) {
		char *a = kp_symidx_scope_name(x, chain[i], false);
		char *b = kp_symidx_scope_name(x, chain[i], true);

		const char *call = kp_symidx_call_site(x, chain[i], &line);

		if (call)
			FUZZ_CHECK(strlen(call) < kp_symidx_size(x));
		(void)kp_symidx_inlined(x, chain[i]);
		free(a);
		free(b);
	}
}

static void use(const struct kp_symidx *x, const uint8_t *file, size_t len)
{
	(void)kp_symidx_bias(x);
	FUZZ_CHECK(kp_symidx_size(x) == len);
	for (size_t i = 0; i + 8 <= len && i < 8 * 512; i += 8) {
		uint64_t v, addr;

		memcpy(&v, file + i, 8);
		if (kp_symidx_addr(x, v, &addr)) {
			ask(x, addr);
			ask(x, addr - 1);
		}
		ask(x, v);
		ask(x, v - 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t mode = fuzz_byte(&in), b1 = fuzz_byte(&in);
	const uint8_t *bid = good_bid;
	size_t bid_len = sizeof(good_bid), len;
	struct kp_symidx *x;
	uint8_t *file;
	char *path;
	int err;

	if (mode & 1) {
		len = b1 ? good_len * b1 / 256 : good_len;
		file = malloc(good_len);
		memcpy(file, good, good_len);
		while (in.n >= 3) {
			size_t off = (size_t)(in.p[0] | in.p[1] << 8);

			if (off < good_len)
				file[off] ^= in.p[2];
			in.p += 3;
			in.n -= 3;
		}
		fix_file(file, len);
	} else {
		bid_len = (size_t)(b1 % 64) + 1;
		if (in.n < bid_len)
			return 0;
		bid = in.p;
		len = in.n - bid_len;
		file = malloc(len ? len : 1);
		if (len)
			memcpy(file, in.p + bid_len, len);
		if (mode & 2)
			fix_file(file, len);
	}
	path = index_path(bid, bid_len);
	put_file(path, file, len);
	err = kp_symidx_load(cache, bid, bid_len, &x);
	FUZZ_CHECK(err == 0 ? x != NULL
			    : !x && (err == -ENOENT || err == -ESTALE || err == -EBADMSG));
	/* the valid index itself must load */
	if ((mode & 1) && len == good_len && memcmp(file, good, len) == 0)
		FUZZ_CHECK(x != NULL);
	if (x) {
		use(x, file, len);
		kp_symidx_free(x);
	}
	unlink(path);
	free(file);
	return 0;
}
