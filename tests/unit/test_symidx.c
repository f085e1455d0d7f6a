/* The persisted symbol index (symbolize/symidx.h) as a file: what is built
 * is what is looked up, saved and loaded back; a damaged file (every byte
 * changed in turn, random bytes, every truncation) is refused by its
 * checksum, and removed; the same damage with the checksum made to match
 * is refused by the checks of the contents, or answers without reading
 * outside the file (ASan); files kprof must not trust are ignored; the
 * directory is kept under its size. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "kp_test.h"
#include "symbolize/symidx.h"
#include "util/checksum.h"
#include "util/strtab.h"

static char dir[96];			   /* DIR/cache/symbols */
static struct kp_cachedir *cache, *symdir; /* DIR/cache and its symbols/ */
static const uint8_t bid[20] = {0xde, 0xad, 0xbe, 0xef, 1,  2,	3,  4,	5,  6,
				7,    8,    9,	  10,	11, 12, 13, 14, 15, 16};
static const uint8_t other_bid[20] = {0xde, 0xad, 0xbe, 0xef, 1,  2,  3,  4,  5,  6,
				      7,    8,	  9,	10,   11, 12, 13, 14, 15, 17};

/* A small build: text at 0x1000 (file offset 0), two functions; main has
 * an inlined callee (a C++ name, mangled), which has one of its own
 * (plain, qualified); a sizeless symbol up to its section's end. Source
 * lines: main.c and work.h, a line-0 row, a gap without rows; the callees'
 * call sites. */
static struct kp_symidx *build_small(void)
{
	static const char names[] = "main\0helper\0_start\0";
	static const struct kp_symidx_seg segs[] = {{0, 0x3000, 0x1000}};
	static const struct kp_symidx_sym syms[] = {
		{0x1000, 0x100, 0, 0, 0},    /* main */
		{0x1100, 0x80, 0, 5, 0},     /* helper */
		{0x1200, 0, 0x1280, 12, 0}}; /* _start, sizeless */
	struct kp_strtab *files = kp_strtab_new();
	uint32_t main_c = kp_strtab_intern(files, "/src/main.c", 11);
	uint32_t work_h = kp_strtab_intern(files, "/src/work.h", 11);
	struct kp_dwarf_flat_scope scopes[] = {
		{-1, false, false, NULL, "main", NULL, 0, 0},
		{0, true, false, "_ZN2ns4workEi", "work", NULL, main_c, 11},
		{1, true, true, NULL, "ns::(anonymous namespace)::W::step", NULL, work_h, 4},
		{-1, false, false, NULL, "helper", NULL, 0, 0}};
	struct kp_dwarf_flat_piece pieces[] = {{0x1000, 0x1010, 0},
					       {0x1010, 0x1020, 1},
					       {0x1020, 0x1030, 2},
					       {0x1030, 0x1100, 0},
					       {0x1100, 0x1180, 3}};
	struct kp_dwarf_flat_row rows[] = {
		{0x1000, 0x1008, main_c, 10}, {0x1008, 0x1010, main_c, 11},
		{0x1010, 0x1020, work_h, 5},  {0x1020, 0x1030, work_h, 0},
		{0x1040, 0x1100, main_c, 12}, {0x1100, 0x1180, main_c, 40}};
	struct kp_dwarf_flat flat = {scopes, 4, pieces, 5, rows, 6, files};
	struct kp_symidx_input in = {.build_id = bid,
				     .build_id_len = sizeof(bid),
				     .segs = segs,
				     .nsegs = 1,
				     .syms = syms,
				     .sym_strings = names,
				     .nsyms = 3,
				     .dwarf = &flat};
	struct kp_symidx *x = kp_symidx_build(&in);

	kp_strtab_free(files);
	return x;
}

/* The frames of file offset off as "outer;inlined;..." (innermost last),
 * each inlined scope with its call site, then the address's row. */
static void frames(const struct kp_symidx *x, uint64_t off, char *buf, size_t size)
{
	uint32_t chain[16], line;
	size_t n, len = 0;
	uint64_t addr;
	const char *sym, *file;

	buf[0] = '\0';
	if (!kp_symidx_addr(x, off, &addr))
		return;
	sym = kp_symidx_symbol(x, addr);
	n = kp_symidx_chain(x, addr, chain, 16);
	len += (size_t)snprintf(buf, size, "%s", sym ? sym : "-");
	for (size_t i = n < 16 ? n : 16; i-- > 0;) {
		char *name = kp_symidx_scope_name(x, chain[i], false);

		file = kp_symidx_call_site(x, chain[i], &line);
		if (len < size)
			len += (size_t)snprintf(buf + len, size - len, ";%s%s", name ? name : "?",
						kp_symidx_inlined(x, chain[i]) ? "_[i]" : "");
		if (len < size && (file || line))
			len += (size_t)snprintf(buf + len, size - len, "@%s:%u", file ? file : "??",
						line);
		free(name);
	}
	file = kp_symidx_line(x, addr, &line);
	if (len < size && file)
		snprintf(buf + len, size - len, " %s:%u", file, line);
}

static void check_small(const struct kp_symidx *x)
{
	static const struct {
		uint64_t off;
		const char *want; /* symbol, then the scopes outermost first, then the row */
	} cases[] = {
		{0x0, "main;main /src/main.c:10"},
		{0x7, "main;main /src/main.c:10"},
		{0x8, "main;main /src/main.c:11"},
		{0x15, "main;main;ns::work_[i]@/src/main.c:11 /src/work.h:5"},
		{0x25, "main;main;ns::work_[i]@/src/main.c:11;ns::(anonymous "
		       "namespace)::W::step_[i]@/src/work.h:4 /src/work.h:0"},
		{0x30, "main;main"}, /* no row */
		{0x3f, "main;main"},
		{0x40, "main;main /src/main.c:12"},
		{0x150, "helper;helper /src/main.c:40"},
		{0x17f, "helper;helper /src/main.c:40"},
		{0x180, "-"},
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

/* The line table's encoding: random rows (small and large address and
 * line steps, lines down as well as up, near 2^32, file changes, gaps,
 * neighbours alike that the builder must not merge away) read back at
 * every row's first and last address and in every gap, across block
 * boundaries. */
static void test_line_table(void)
{
	enum { NROWS = 5000 };
	struct kp_dwarf_flat_row *rows = calloc(NROWS, sizeof(*rows));
	struct kp_strtab *files = kp_strtab_new();
	struct kp_dwarf_flat flat = {0};
	struct kp_symidx_input in = {.build_id = bid, .build_id_len = sizeof(bid)};
	uint64_t r = 0x2545f4914f6cdd1dULL, addr = 0x400000;
	uint32_t line = 100;
	size_t bad = 0;
	struct kp_symidx *x;
	char name[32];

	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "/src/f%d.c", i);
		kp_strtab_intern(files, name, strlen(name));
	}
	for (size_t i = 0; i < NROWS; i++) {
		uint64_t step;

		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		step = r % 16 == 0 ? (r >> 8) % 100000 + 1 : (r >> 8) % 40 + 1;
		if (r % 97 == 0)
			step += (uint64_t)1 << 33; /* a distant section */
		if (i && r % 5 == 0)
			addr += (r >> 20) % 64 + 1; /* a gap */
		rows[i].lo = addr;
		rows[i].hi = addr += step;
		switch (r % 7) {
		case 0:
			line = (uint32_t)(r >> 32); /* anywhere, near 2^32 too */
			break;
		case 1:
			line -= line > 50 ? (uint32_t)(r >> 40) % 50 : 0;
			break;
		case 2:
			line = 0; /* a line-0 row */
			break;
		default:
			line += (uint32_t)(r >> 40) % 9;
		}
		rows[i].line = line;
		rows[i].file = i && r % 3 ? rows[i - 1].file : 1 + (uint32_t)(r >> 24) % 300;
	}
	flat.rows = rows;
	flat.nrows = NROWS;
	flat.files = files;
	in.dwarf = &flat;
	x = kp_symidx_build(&in);
	for (size_t i = 0; i < NROWS; i++) {
		uint64_t probe[3] = {rows[i].lo, rows[i].hi - 1,
				     rows[i].lo + (rows[i].hi - rows[i].lo) / 2};

		for (int k = 0; k < 3; k++) {
			uint32_t got_line;
			const char *got = kp_symidx_line(x, probe[k], &got_line);
			const char *want = kp_strtab_str(files, rows[i].file);

			if (!got || strcmp(got, want) != 0 || got_line != rows[i].line)
				bad++;
		}
		if (i + 1 < NROWS && rows[i + 1].lo > rows[i].hi) {
			uint32_t got_line;

			if (kp_symidx_line(x, rows[i].hi, &got_line) ||
			    kp_symidx_line(x, rows[i + 1].lo - 1, &got_line))
				bad++;
		}
	}
	{
		uint32_t l;

		CHECK(kp_symidx_line(x, rows[0].lo - 1, &l) == NULL);
		CHECK(kp_symidx_line(x, rows[NROWS - 1].hi, &l) == NULL);
		CHECK(kp_symidx_line(x, UINT64_MAX, &l) == NULL);
	}
	printf("line table: %d rows in %zu bytes, %zu misread\n", NROWS, kp_symidx_size(x), bad);
	CHECK_EQ_INT(bad, 0);
	kp_symidx_free(x);
	/* compact: rows as a compiler makes them (small steps, lines a little
	 * up or down, the file mostly the same) take under 3 bytes each, block
	 * directory included, where 16-byte rows would double an index */
	addr = 0x1000;
	line = 1000;
	for (size_t i = 0; i < NROWS; i++) {
		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		rows[i].lo = addr;
		rows[i].hi = addr += 1 + r % 40;
		line += (uint32_t)(r >> 20) % 9 - 3;
		rows[i].line = line;
		rows[i].file = i && r % 50 ? rows[i - 1].file : 1 + (uint32_t)(r >> 24) % 300;
	}
	x = kp_symidx_build(&in);
	{
		struct kp_symidx *none;
		size_t bytes;

		flat.nrows = 0;
		none = kp_symidx_build(&in);
		bytes = kp_symidx_size(x) - kp_symidx_size(none);
		printf("line table of a compiler's rows: %.2f bytes a row\n",
		       (double)bytes / NROWS);
		CHECK(bytes < 3 * NROWS);
		kp_symidx_free(none);
	}
	kp_symidx_free(x);
	kp_strtab_free(files);
	free(rows);
}

static size_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (size_t)st.st_size : 0;
}

/* The index of id in the cache, or NULL; *err (may be NULL) what the load
 * said. */
static struct kp_symidx *load_err(const uint8_t *id, int *err)
{
	struct kp_symidx *x;
	int e = kp_symidx_load(symdir, id, sizeof(bid), &x);

	if (err)
		*err = e;
	CHECK((e == 0) == (x != NULL));
	return x;
}

static struct kp_symidx *load(const uint8_t *id)
{
	return load_err(id, NULL);
}

static const char *index_path(void)
{
	static char path[sizeof(dir) + 48];

	snprintf(path, sizeof(path), "%s/deadbeef0102030405060708090a0b0c0d0e0f10", dir);
	return path;
}

static void test_round_trip(char **image, size_t *len)
{
	struct kp_symidx *x = build_small(), *y;
	FILE *f;
	int err;

	check_small(x);
	CHECK(kp_symidx_save(x, symdir));
	y = load(bid);
	CHECK(y != NULL);
	if (y) {
		check_small(y);
		CHECK_EQ_INT(kp_symidx_size(y), kp_symidx_size(x));
	}
	CHECK(load_err(other_bid, &err) == NULL);
	CHECK_EQ_INT(err, -ENOENT);
	CHECK_EQ_INT(file_size(index_path()), kp_symidx_size(x));
	/* private: mode 0600 in a 0700 directory */
	{
		struct stat st;

		CHECK(stat(index_path(), &st) == 0 && (st.st_mode & 0777) == 0600);
		CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);
	}
	*len = file_size(index_path());
	*image = malloc(*len);
	f = fopen(index_path(), "rb");
	CHECK(f && fread(*image, 1, *len, f) == *len);
	if (f)
		fclose(f);
	kp_symidx_free(x);
	kp_symidx_free(y);
}

static void put_file(const char *image, size_t len)
{
	int fd;

	unlink(index_path());
	fd = open(index_path(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		CHECK(write(fd, image, len) == (ssize_t)len);
		close(fd);
	}
}

/* The header's checksum (bytes 16-23, symidx.c's struct header) made to
 * match the bytes after it (24 to the end), as if the damage had been
 * written by kprof itself: what the checks of the contents must catch. */
static void reseal(char *image, size_t len)
{
	uint64_t sum;

	if (len < 24)
		return;
	sum = kp_checksum(image + 24, len - 24);
	memcpy(image + 16, &sum, sizeof(sum));
}

/* Looks up every offset of the segment and a little past it: with ASan,
 * any read outside the file fails the test. */
static void use_all(const struct kp_symidx *x)
{
	char buf[4096];

	for (uint64_t off = 0; off < 0x3010; off += 3)
		frames(x, off, buf, sizeof(buf));
	for (uint64_t a = 0; a < 0x2000; a += 5) {
		uint32_t line;

		kp_symidx_line(x, a, &line);
	}
}

/* Every byte changed in turn to several values: never accepted, said to
 * be damaged (or, for the version and the byte order, of another format)
 * and removed. Resealed, the same files: magic, version, byte order,
 * size, build-id, its length and the counts are never accepted, and what
 * is accepted is read within the file. */
static void test_damage(const char *good, size_t len, bool resealed)
{
	char *bad = malloc(len + 64);
	size_t accepted = 0, tried = 0, identity_accepted = 0, wrong_err = 0, left = 0;
	static const uint8_t values[] = {0x00, 0xff, 0x80, 0x01, 0x7f};

	for (size_t i = 0; i < len; i++) {
		for (size_t v = 0; v < sizeof(values); v++) {
			struct kp_symidx *x;
			int err;

			memcpy(bad, good, len);
			if ((uint8_t)bad[i] == values[v] || (resealed && i >= 16 && i < 24))
				continue;
			bad[i] = (char)values[v];
			if (resealed)
				reseal(bad, len);
			put_file(bad, len);
			tried++;
			x = load_err(bid, &err);
			if (x) {
				accepted++;
				/* magic, version, byte order, size, build-id,
				 * its length, the counts */
				if (i < 52 || (i >= 96 && i < 100) || (i >= 120 && i < 184))
					identity_accepted++;
				use_all(x);
				kp_symidx_free(x);
				continue;
			}
			if (err != (i >= 8 && i < 16 ? -ESTALE : -EBADMSG))
				wrong_err++;
			if (access(index_path(), F_OK) == 0)
				left++;
		}
	}
	printf("damaged bytes%s: %zu files, %zu accepted (names or addresses changed)\n",
	       resealed ? ", checksum made to match" : "", tried, accepted);
	CHECK_EQ_INT(identity_accepted, 0);
	CHECK_EQ_INT(wrong_err, 0);
	CHECK_EQ_INT(left, 0); /* a damaged file is removed */
	if (resealed)
		CHECK(accepted < tried);
	else
		CHECK_EQ_INT(accepted, 0);
	/* every truncation, and a longer file, are refused */
	for (size_t l = 1; l < len; l++) {
		struct kp_symidx *x;

		memcpy(bad, good, l);
		if (resealed)
			reseal(bad, l);
		put_file(bad, l);
		x = load(bid);
		if (x) {
			CHECK(!"a truncated index is refused");
			kp_symidx_free(x);
			break;
		}
	}
	memcpy(bad, good, len);
	memset(bad + len, 0, 64);
	if (resealed)
		reseal(bad, len + 64);
	put_file(bad, len + 64);
	CHECK(load(bid) == NULL);
	put_file(good, len);
	{
		struct kp_symidx *x = load(bid);

		CHECK(x != NULL);
		if (x)
			check_small(x);
		kp_symidx_free(x);
	}
	free(bad);
}

/* Damaged files a run tries: a quarter under ASan, whose suite has the
 * time of three builds to share (fuzz/symidx damages indexes under ASan
 * at length). */
#ifdef __SANITIZE_ADDRESS__
#define DAMAGE_ROUNDS 5000
#else
#define DAMAGE_ROUNDS 20000
#endif

/* Random damage, several bytes at once, with a fixed seed: xorshift, so
 * every run tries the same DAMAGE_ROUNDS files. Never accepted as it is; with the
 * checksum made to match, whatever is accepted is looked up at every
 * offset (ASan watches). */
static void test_random_damage(const char *good, size_t len, bool resealed)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	char *bad = malloc(len + 256);
	size_t accepted = 0;

	for (int round = 0; round < DAMAGE_ROUNDS; round++) {
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
		if (!n)
			n = 1;
		if (n > len)
			memset(bad + len, 0, n - len);
		if (resealed)
			reseal(bad, n);
		if (!resealed && n == len && memcmp(bad, good, len) == 0)
			continue; /* no damage after all */
		put_file(bad, n);
		idx = load(bid);
		if (idx) {
			accepted++;
			use_all(idx);
			kp_symidx_free(idx);
		}
	}
	printf("random damage%s: 20000 files, %zu accepted\n",
	       resealed ? ", checksum made to match" : "", accepted);
	if (resealed)
		CHECK(accepted < 20000);
	else
		CHECK_EQ_INT(accepted, 0);
	free(bad);
}

/* An index of an earlier format (1: no checksum; 2: no source lines) is
 * of another format: -ESTALE, and removed. */
static void test_old_version(const char *good, size_t len)
{
	char *old = malloc(len);
	int err;

	for (uint32_t v = 1; v <= 2; v++) {
		memcpy(old, good, len);
		memcpy(old + 8, &v, sizeof(v));
		put_file(old, len);
		CHECK(load_err(bid, &err) == NULL);
		CHECK_EQ_INT(err, -ESTALE);
		CHECK(access(index_path(), F_OK) != 0);
	}
	free(old);
}

/* Files kprof did not write itself are not read (and left alone): a
 * symlink, a file others can write. */
static void test_trust(const char *good, size_t len)
{
	char target[sizeof(dir) + 16];
	int err;

	snprintf(target, sizeof(target), "%s/elsewhere", dir);
	put_file(good, len);
	CHECK(rename(index_path(), target) == 0);
	CHECK(symlink(target, index_path()) == 0);
	CHECK(load_err(bid, &err) == NULL);
	CHECK_EQ_INT(err, -ENOENT);
	CHECK(access(target, F_OK) == 0);
	unlink(index_path());
	unlink(target);
	put_file(good, len);
	CHECK(chmod(index_path(), 0622) == 0);
	CHECK(load_err(bid, &err) == NULL);
	CHECK_EQ_INT(err, -ENOENT);
	CHECK(chmod(index_path(), 0600) == 0);
	{
		struct kp_symidx *x = load(bid);

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
	char path[sizeof(dir) + 16];

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
	CHECK(kp_symidx_save(x, symdir));
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
	x = load(bid);
	CHECK(x != NULL); /* ours kept */
	kp_symidx_free(x);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* KP_BENCH_INDEX=FILE (scripts/bench-symbolize): what using a saved index
 * costs and how much of it is its checksum: 201 loads of a copy of FILE
 * (map, checksum, checks of the contents) and 201 checksums alone of the
 * mapped file; least and median. Timing only: nothing is checked. */
static int bench(const char *file)
{
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	double load[201], sum[201];
	char top[64], path[256], cmd[1024];
	struct kp_cachedir *d;
	uint8_t id[64];
	size_t idlen = strlen(base) / 2, size;
	struct stat st;
	void *p;
	int fd;

	snprintf(top, sizeof(top), "/tmp/kp-symidx-bench-XXXXXX");
	if (idlen > 64 || !mkdtemp(top))
		return 1;
	for (size_t i = 0; i < idlen; i++)
		if (sscanf(base + 2 * i, "%2hhx", &id[i]) != 1)
			return 1;
	snprintf(cmd, sizeof(cmd), "cp '%s' %s/", file, top);
	chmod(top, 0700);
	if (kp_test_sh("%s", cmd) != 0)
		return 1;
	d = kp_cachedir_new(top, NULL, NULL);
	for (int i = 0; i < 201; i++) {
		struct kp_symidx *x;
		double t0 = now_us();
		int err = kp_symidx_load(d, id, idlen, &x);

		load[i] = now_us() - t0;
		if (err) {
			fprintf(stderr, "%s: not a valid index (%d)\n", file, err);
			return 1;
		}
		kp_symidx_free(x);
	}
	snprintf(path, sizeof(path), "%s/%s", top, base);
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) != 0)
		return 1;
	size = (size_t)st.st_size;
	p = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return 1;
	for (int i = 0; i < 201; i++) {
		double t0 = now_us();
		volatile uint64_t v = kp_checksum((const char *)p + 24, size - 24);

		(void)v;
		sum[i] = now_us() - t0;
	}
	munmap(p, size);
	qsort(load, 201, sizeof(double), cmp_double);
	qsort(sum, 201, sizeof(double), cmp_double);
	printf("index %s: %zu KiB; a load (map, checksum, checks) %.1f us least, %.1f median; "
	       "the checksum alone %.1f us least, %.1f median (%.1f GB/s)\n",
	       base, size / 1024, load[0], load[100], sum[0], sum[100],
	       (double)size / sum[100] / 1e3);
	kp_cachedir_free(d);
	kp_test_sh("rm -rf %s", top);
	return 0;
}

int main(void)
{
	char *good = NULL, top[64];
	size_t len = 0;

	if (getenv("KP_BENCH_INDEX"))
		return bench(getenv("KP_BENCH_INDEX"));
	snprintf(top, sizeof(top), "/tmp/kp-symidx-XXXXXX");
	if (!mkdtemp(top))
		return 1;
	snprintf(dir, sizeof(dir), "%s/cache/symbols", top); /* made by the first save */
	snprintf(top + strlen(top), sizeof(top) - strlen(top), "/cache");
	cache = kp_cachedir_new(top, NULL, NULL);
	symdir = kp_cachedir_sub(cache, "symbols");
	test_line_table();
	test_round_trip(&good, &len);
	if (good) {
		test_damage(good, len, false);
		test_damage(good, len, true);
		test_random_damage(good, len, false);
		test_random_damage(good, len, true);
		test_old_version(good, len);
		test_trust(good, len);
	}
	test_prune();
	free(good);
	kp_cachedir_free(symdir);
	kp_cachedir_free(cache);
	*strstr(top, "/cache") = '\0';
	kp_test_sh("rm -rf %s", top);
	printf("%d passed, %d failed\n", kp_test_passed, kp_test_failed);
	return kp_test_failed ? 1 : 0;
}
