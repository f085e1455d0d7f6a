/* The jitdump reader (symbolize/jitdump.c) on synthetic files: names and
 * lines, V8's debug-entry skew, the last load winning, MOVE, a file fed
 * in two parts at every byte (a record being written), truncation at
 * every length, version 2 and the other byte order refused, absurd sizes,
 * loads outside JIT code ignored, and reading a file as it grows. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kp_test.h"
#include "symbolize/jitdump.h"
#include "symbolize/symbolize.h"
#include "util/xalloc.h"

/* One string table for every file read here (as jit.c shares its own). */
static struct kp_strtab *strings(void)
{
	static struct kp_strtab *st;

	if (!st)
		st = kp_strtab_new();
	return st;
}

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct buf *b, const void *d, size_t n)
{
	kp_xgrow(&b->p, &b->cap, b->n + n, 1);
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

/* A jitdump of the whole of b, parsed at once (no keep filter). */
static void parse_whole(struct kp_jitdump *jd, const struct buf *b)
{
	kp_jitdump_init(jd, strings(), NULL, NULL);
	kp_jitdump_parse(jd, b->p, b->n, b->n);
}

static void put32(struct buf *b, uint32_t v)
{
	put(b, &v, 4);
}

static void put64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void header(struct buf *b, uint32_t magic, uint32_t version, uint32_t reserved)
{
	put32(b, magic);
	put32(b, version);
	put32(b, 40);
	put32(b, 62);
	put32(b, reserved);
	put32(b, 1234);
	put64(b, 1);
	put64(b, 0);
}

static void rec(struct buf *b, uint32_t id, uint32_t size)
{
	put32(b, id);
	put32(b, size);
	put64(b, 2);
}

static void load(struct buf *b, uint64_t addr, uint64_t size, uint64_t index, const char *name)
{
	size_t nlen = strlen(name) + 1;

	rec(b, 0, (uint32_t)(56 + nlen + size));
	put32(b, 1234);
	put32(b, 1235);
	put64(b, addr);
	put64(b, addr);
	put64(b, size);
	put64(b, index);
	put(b, name, nlen);
	for (uint64_t i = 0; i < size; i++)
		put(b, "\xcc", 1);
}

struct ent {
	uint64_t addr;
	uint32_t line;
	const char *file;
};

static void debug(struct buf *b, uint64_t addr, const struct ent *e, size_t n)
{
	size_t size = 32;

	for (size_t i = 0; i < n; i++)
		size += 16 + strlen(e[i].file) + 1;
	rec(b, 2, (uint32_t)((size + 7) & ~(size_t)7));
	put64(b, addr);
	put64(b, n);
	for (size_t i = 0; i < n; i++) {
		put64(b, e[i].addr);
		put32(b, e[i].line);
		put32(b, 3);
		put(b, e[i].file, strlen(e[i].file) + 1);
	}
	for (; size & 7; size++)
		put(b, "", 1);
}

static void move(struct buf *b, uint64_t from, uint64_t to, uint64_t size, uint64_t index)
{
	rec(b, 1, 64);
	put32(b, 1234);
	put32(b, 1235);
	put64(b, to);
	put64(b, from);
	put64(b, to);
	put64(b, size);
	put64(b, index);
}

static void unwind(struct buf *b, uint64_t len, uint64_t hdr, uint64_t mapped)
{
	rec(b, 4, (uint32_t)(40 + ((len + 7) & ~(uint64_t)7)));
	put64(b, len);
	put64(b, hdr);
	put64(b, mapped);
	for (uint64_t i = 0; i < ((len + 7) & ~(uint64_t)7); i++)
		put(b, "\x01", 1);
}

/* The name jd gives addr, "(none)" when no load covers it. */
static const char *name_of(const struct kp_jitdump *jd, uint64_t addr)
{
	static char buf[512];
	const struct kp_jitdump_code *c = kp_jitdump_find(jd, addr);

	if (!c)
		return "(none)";
	kp_jitdump_name(jd, c, addr, buf, sizeof(buf));
	return buf;
}

/* A file with two functions, lines for the first, a JIT's CLOSE. */
static void sample_file(struct buf *b)
{
	static const struct ent e[] = {
		{0x1000, 5, "/a.js"}, {0x1010, 7, "/a.js"}, {0x1040, 9, "/b.js"}};

	header(b, 0x4A695444, 1, 0);
	debug(b, 0x1000, e, 3);
	unwind(b, 88, 20, 88);
	load(b, 0x1000, 0x100, 0, "JS:*f /a.js:4:10");
	load(b, 0x2000, 0x80, 1, "JS:g /b.js:1:1");
	load(b, 0x3000, 0x10, 2, "stub");
	rec(b, 3, 16);
}

static void check_sample(const struct kp_jitdump *jd)
{
	CHECK_EQ_STR(name_of(jd, 0x1000), "JS:*f /a.js:5");
	CHECK_EQ_STR(name_of(jd, 0x100f), "JS:*f /a.js:5");
	CHECK_EQ_STR(name_of(jd, 0x1010), "JS:*f /a.js:7");
	CHECK_EQ_STR(name_of(jd, 0x10ff), "JS:*f /b.js:9");
	CHECK_EQ_STR(name_of(jd, 0x1100), "(none)");
	CHECK_EQ_STR(name_of(jd, 0x2010), "JS:g /b.js:1:1");
	CHECK_EQ_STR(name_of(jd, 0x3000), "stub");
	CHECK_EQ_STR(name_of(jd, 0xfff), "(none)");
	CHECK(kp_jitdump_find(jd, 0x1000) && kp_jitdump_find(jd, 0x1000)->unwind_len == 88);
	CHECK(kp_jitdump_find(jd, 0x2000) && kp_jitdump_find(jd, 0x2000)->unwind == NULL);
	CHECK_EQ_INT(jd->st.loads, 3);
	CHECK_EQ_INT(jd->st.bad_records, 0);
	CHECK_EQ_INT(jd->state, KP_JITDUMP_CLOSED);
}

static void test_names(void)
{
	struct buf b = {0};
	struct kp_jitdump jd;

	sample_file(&b);
	kp_jitdump_init(&jd, strings(), NULL, NULL);
	CHECK_EQ_INT(kp_jitdump_parse(&jd, b.p, b.n, b.n), b.n);
	check_sample(&jd);
	kp_jitdump_fini(&jd);
	free(b.p);
}

/* Fed in two parts at every byte, the first read while the file held only
 * it (a record being written): the same as read at once. */
static void test_split(void)
{
	struct buf b = {0};
	size_t fails = 0;

	sample_file(&b);
	for (size_t k = 0; k <= b.n; k++) {
		struct kp_jitdump jd;
		uint64_t used;

		kp_jitdump_init(&jd, strings(), NULL, NULL);
		used = kp_jitdump_parse(&jd, b.p, k, k);
		if (used > k || jd.off != used || jd.state > KP_JITDUMP_CLOSED)
			fails++;
		kp_jitdump_parse(&jd, b.p + jd.off, b.n - jd.off, b.n - jd.off);
		if (jd.off != b.n || jd.st.loads != 3 ||
		    strcmp(name_of(&jd, 0x1010), "JS:*f /a.js:7"))
			fails++;
		kp_jitdump_fini(&jd);
	}
	CHECK_EQ_INT(fails, 0);
	free(b.p);
}

/* Every truncation reads without harm and takes only whole records. */
static void test_truncated(void)
{
	struct buf b = {0};
	size_t fails = 0;

	sample_file(&b);
	for (size_t k = 0; k < b.n; k++) {
		struct kp_jitdump jd;
		uint8_t *copy = kp_xmalloc(k + 1);

		memcpy(copy, b.p, k);
		kp_jitdump_init(&jd, strings(), NULL, NULL);
		kp_jitdump_parse(&jd, copy, k, k);
		/* the last load ends where CLOSE starts */
		if (jd.state > KP_JITDUMP_RECORDS || jd.st.loads > (k < b.n - 16 ? 2u : 3u) ||
		    jd.st.bad_records)
			fails++;
		kp_jitdump_fini(&jd);
		free(copy);
	}
	CHECK_EQ_INT(fails, 0);
	free(b.p);
}

static void test_refused(void)
{
	struct buf b = {0};
	struct kp_jitdump jd;

	header(&b, 0x4A695444, 2, 0);
	load(&b, 0x1000, 0x10, 0, "f");
	kp_jitdump_init(&jd, strings(), NULL, NULL);
	CHECK_EQ_INT(kp_jitdump_parse(&jd, b.p, b.n, b.n), 0);
	CHECK_EQ_INT(jd.state, KP_JITDUMP_REFUSED);
	CHECK_EQ_STR(jd.error, "version 2, kprof reads version 1");
	CHECK_EQ_STR(name_of(&jd, 0x1000), "(none)");
	kp_jitdump_fini(&jd);
	b.n = 0;
	header(&b, 0x4454694A, 1, 0);
	parse_whole(&jd, &b);
	CHECK_EQ_STR(jd.error, "written in the other byte order");
	kp_jitdump_fini(&jd);
	free(b.p);
}

/* V8 writes each debug entry 0x40 above its code. */
static void test_v8_skew(void)
{
	static const struct ent e[] = {{0x1040, 8, "/h.js"}, {0x1079, 10, "/h.js"}};
	struct buf b = {0};
	struct kp_jitdump jd;

	header(&b, 0x4A695444, 1, 0xDEADBEEF);
	debug(&b, 0x1000, e, 2);
	load(&b, 0x1000, 0x100, 0, "JS:*hot /h.js:8:22");
	parse_whole(&jd, &b);
	CHECK_EQ_STR(name_of(&jd, 0x1000), "JS:*hot /h.js:8");
	CHECK_EQ_STR(name_of(&jd, 0x1038), "JS:*hot /h.js:8");
	CHECK_EQ_STR(name_of(&jd, 0x1039), "JS:*hot /h.js:10");
	kp_jitdump_fini(&jd);
	free(b.p);
}

/* node 20's V8 writes the file names of its user scripts' entries as heap
 * bytes (NULs inside) of the name's length: the entries are read by their
 * common size and take the script the load names. A name with a control
 * byte elsewhere makes the record malformed. */
static void test_v8_garbled(void)
{
	static const char garbage[] = "hfb*\0\0\0\0+XZd4)\xc3"
				      "6/calls.js";
	static const struct ent bad[] = {{0x5000, 4, "/x\x01.js"}};
	struct buf b = {0};
	struct kp_jitdump jd;
	size_t size = 32 + 3 * (16 + sizeof(garbage));

	header(&b, 0x4A695444, 1, 0xDEADBEEF);
	rec(&b, 2, (uint32_t)((size + 7) & ~(size_t)7));
	put64(&b, 0x9000);
	put64(&b, 3);
	for (int i = 0; i < 3; i++) {
		put64(&b, 0x9040 + 0x20 * (uint64_t)i);
		put32(&b, 10 + (uint32_t)i);
		put32(&b, 1);
		put(&b, garbage, sizeof(garbage));
	}
	for (; size & 7; size++)
		put(&b, "", 1);
	load(&b, 0x9000, 0x100, 3, "JS:*fib /w/calls.js:10:22");
	parse_whole(&jd, &b);
	CHECK_EQ_STR(name_of(&jd, 0x9000), "JS:*fib /w/calls.js:10");
	CHECK_EQ_STR(name_of(&jd, 0x9045), "JS:*fib /w/calls.js:12");
	CHECK_EQ_INT(jd.st.bad_records, 0);
	kp_jitdump_fini(&jd);
	/* not V8's: no second reading */
	b.n = 0;
	header(&b, 0x4A695444, 1, 0);
	debug(&b, 0x5000, bad, 1);
	load(&b, 0x5000, 0x10, 4, "JS:*g /x.js:1:1");
	parse_whole(&jd, &b);
	CHECK_EQ_STR(name_of(&jd, 0x5000), "JS:*g /x.js:1:1");
	CHECK_EQ_INT(jd.st.bad_records, 1);
	kp_jitdump_fini(&jd);
	free(b.p);
}

/* The last load covering an address wins; MOVE moves a load. */
static void test_overlap_move(void)
{
	static const struct ent e[] = {{0x4000, 3, "/m.js"}};
	struct buf b = {0};
	struct kp_jitdump jd;

	header(&b, 0x4A695444, 1, 0);
	load(&b, 0x1000, 0x100, 0, "old");
	load(&b, 0x1080, 0x100, 1, "new");
	debug(&b, 0x4000, e, 1);
	load(&b, 0x4000, 0x40, 2, "m /m.js:1:1");
	move(&b, 0x4000, 0x9000, 0x40, 2);
	move(&b, 0x7000, 0x8000, 0x40, 77); /* never loaded */
	parse_whole(&jd, &b);
	CHECK_EQ_STR(name_of(&jd, 0x1050), "old");
	CHECK_EQ_STR(name_of(&jd, 0x1080), "new");
	CHECK_EQ_STR(name_of(&jd, 0x1170), "new");
	CHECK_EQ_STR(name_of(&jd, 0x4010), "(none)");
	CHECK_EQ_STR(name_of(&jd, 0x9010), "m /m.js:3");
	CHECK_EQ_INT(jd.st.unmatched, 1);
	CHECK_EQ_INT(jd.npieces, 3);
	kp_jitdump_fini(&jd);
	free(b.p);
}

static bool keep_high(void *arg, uint64_t start, uint64_t end)
{
	(void)arg;
	(void)end;
	return start >= 0x2000;
}

/* Absurd sizes: counted and skipped where the record's size can be
 * trusted, the file left where it cannot; loads outside JIT code ignored. */
static void test_absurd(void)
{
	struct buf b = {0};
	struct kp_jitdump jd;

	header(&b, 0x4A695444, 1, 0);
	load(&b, 0x1000, 0x10, 0, "builtin");
	load(&b, 0x2000, 0x10, 1, "ok");
	rec(&b, 0, 60); /* a load whose code cannot fit */
	put32(&b, 1), put32(&b, 1), put64(&b, 0x3000), put64(&b, 0x3000), put64(&b, 1 << 20);
	put64(&b, 3), put32(&b, 0x6100);
	rec(&b, 2, 40); /* a million debug entries in 40 bytes */
	put64(&b, 0x2000), put64(&b, 1000000), put64(&b, 0);
	rec(&b, 4, 48); /* unwinding info longer than its record */
	put64(&b, 4096), put64(&b, 20), put64(&b, 4096), put64(&b, 0);
	rec(&b, 9, 24); /* a type from a later version */
	put64(&b, 0);
	rec(&b, 0, 8); /* a record smaller than its header */
	load(&b, 0x5000, 0x10, 5, "after");
	kp_jitdump_init(&jd, strings(), keep_high, NULL);
	kp_jitdump_parse(&jd, b.p, b.n, b.n);
	CHECK_EQ_STR(name_of(&jd, 0x1000), "(none)");
	CHECK_EQ_STR(name_of(&jd, 0x2000), "ok");
	CHECK_EQ_STR(name_of(&jd, 0x3000), "(none)");
	CHECK_EQ_STR(name_of(&jd, 0x5000), "(none)");
	CHECK_EQ_INT(jd.st.ignored, 1);
	CHECK_EQ_INT(jd.st.bad_records, 3);
	CHECK_EQ_INT(jd.st.unknown_types, 1);
	CHECK_EQ_INT(jd.state, KP_JITDUMP_BROKEN);
	kp_jitdump_fini(&jd);
	free(b.p);
}

/* Through a file as the JIT writes it: half a record, then the rest. */
static void test_growing_file(void)
{
	char path[] = "/tmp/kp-jitdump-XXXXXX";
	int fd = mkstemp(path);
	struct buf b = {0};
	struct kp_jitdump jd;
	size_t half;

	CHECK(fd >= 0);
	sample_file(&b);
	half = b.n - 40; /* inside the third load */
	CHECK(write(fd, b.p, half) == (ssize_t)half);
	kp_jitdump_init(&jd, strings(), NULL, NULL);
	CHECK_EQ_INT(kp_jitdump_read(&jd, fd, 0), 0);
	CHECK_EQ_INT(jd.st.loads, 2);
	CHECK_EQ_STR(name_of(&jd, 0x3000), "(none)");
	CHECK(write(fd, b.p + half, b.n - half) == (ssize_t)(b.n - half));
	CHECK_EQ_INT(kp_jitdump_read(&jd, fd, 0), 0);
	check_sample(&jd);
	kp_jitdump_fini(&jd);
	close(fd);
	unlink(path);
	free(b.p);
}

/* A symbolizer that was told this process mapped the jitdump holding
 * b (as V8 maps it, for its MMAP2 record), owned by owner (-1: ours):
 * the name it gives JIT address addr, and its notes in *notes (joined). */
static const char *sym_name(const struct buf *b, int owner, uint64_t addr, char *notes,
			    size_t nsize)
{
	static char name[512];
	char dir[] = "/tmp/kp-jitdump-dir-XXXXXX", path[96];
	struct kp_symbolizer *sym = kp_sym_new(NULL);
	struct kp_sym_frames fr = {0};
	struct kp_loc loc = {.addr = addr, .kind = KP_LOC_JIT};
	const char *const *nl;
	struct stat st;
	size_t nn;
	void *at;
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0 && write(fd, b->p, b->n) == (ssize_t)b->n);
	if (owner >= 0)
		CHECK(fchown(fd, (uid_t)owner, (gid_t)owner) == 0);
	fstat(fd, &st);
	at = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (at == MAP_FAILED) /* a noexec /tmp */
		at = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(at != MAP_FAILED);
	kp_sym_jitdump_mapped(sym, &(struct kp_mapping){
					   .pid = getpid(),
					   .path = path,
					   .start = (uint64_t)(uintptr_t)at,
					   .end = (uint64_t)(uintptr_t)at + 4096,
					   .ino = st.st_ino,
					   .maj = major(st.st_dev),
					   .min = minor(st.st_dev),
				   });
	kp_sym_jit_poll(sym);
	munmap(at, 4096);
	close(fd);
	unlink(path);
	rmdir(dir);
	loc.obj = kp_sym_jit_get(sym, getpid());
	kp_sym_resolve(sym, &loc, &fr);
	snprintf(name, sizeof(name), "%s", fr.n ? fr.frames[0].name : "(no frame)");
	nl = kp_sym_notes(sym, &nn);
	notes[0] = 0;
	for (size_t i = 0; i < nn; i++)
		snprintf(notes + strlen(notes), nsize - strlen(notes), "%s|", nl[i]);
	kp_sym_frames_fini(&fr);
	kp_sym_free(sym);
	return name;
}

/* Through the symbolizer: named while the process lives; refused with a
 * note when another user owns the file or its version is 2. */
static void test_symbolizer(void)
{
	struct buf b = {0};
	char notes[1024];

	sample_file(&b);
	CHECK_EQ_STR(sym_name(&b, -1, 0x1010, notes, sizeof(notes)), "JS:*f /a.js:7");
	CHECK_EQ_STR(notes, "");
	if (geteuid() == 0) {
		/* not named (the placeholder may say why) */
		CHECK(strncmp(sym_name(&b, 12345, 0x1010, notes, sizeof(notes)), "[unknown", 8) ==
		      0);
		CHECK(strstr(notes, "owned by uid 12345, not the process's user") != NULL);
	}
	b.n = 0;
	header(&b, 0x4A695444, 2, 0);
	load(&b, 0x1000, 0x10, 0, "f");
	CHECK(strncmp(sym_name(&b, -1, 0x1000, notes, sizeof(notes)), "[unknown", 8) == 0);
	CHECK(strstr(notes, ": version 2, kprof reads version 1") != NULL);
	free(b.p);
}

/* Depth of the pieces' tree under node t. */
static unsigned depth(const struct kp_jitdump *jd, uint32_t t)
{
	unsigned l, r;

	if (!t)
		return 0;
	l = depth(jd, jd->pieces[t].left);
	r = depth(jd, jd->pieces[t].right);
	return 1 + (l > r ? l : r);
}

/* Loads in descending address order (V8 allocating code downwards; an
 * attacker's choice): each was a memmove of every piece above it, 600,000
 * of them took minutes. Now a tree: its depth stays logarithmic (about
 * 3 ln n for a treap), so the work is n log n, and every load is found. */
static void test_descending(void)
{
	enum { N = 600000 };
	struct buf b = {0};
	struct kp_jitdump jd;
	struct kp_strtab *own = kp_strtab_new();
	char name[32];
	unsigned d;

	header(&b, 0x4A695444, 1, 0);
	for (uint32_t i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		load(&b, 0x7f0000000000 - (uint64_t)i * 0x100, 0x10, i, name);
	}
	kp_jitdump_init(&jd, own, NULL, NULL);
	CHECK_EQ_INT(kp_jitdump_parse(&jd, b.p, b.n, b.n), b.n);
	CHECK_EQ_INT(jd.st.loads, N);
	CHECK_EQ_INT(jd.npieces, N);
	d = depth(&jd, jd.root);
	CHECK(d < 100);
	CHECK_EQ_STR(name_of(&jd, 0x7f0000000000 - 0x100 * 12345 + 4), "f12345");
	CHECK_EQ_STR(name_of(&jd, 0x7f0000000000 - 0x100 * 12345 + 0x10), "(none)");
	CHECK(kp_jitdump_next(&jd, 0)->start == 0x7f0000000000 - (uint64_t)(N - 1) * 0x100);
	kp_jitdump_fini(&jd);
	kp_strtab_free(own);
	free(b.p);
}

/* A temporary file holding b, open for reading (unlinked). */
static int temp_file(const struct buf *b)
{
	char path[] = "/tmp/kp-jitdump-XXXXXX";
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	CHECK(write(fd, b->p, b->n) == (ssize_t)b->n);
	unlink(path);
	return fd;
}

/* Names of 64 KiB (the most the format allows kprof to read): kept cut
 * at 4 KiB when parsed from a buffer; read from the file only when
 * named, so that a file of 500 of them (32 MB of names) leaves its
 * state at its ranges alone (was: every name interned whole, 32 MB). */
static void test_names_capped(void)
{
	enum { N = 500, LEN = 65536 };
	char *big = kp_xmalloc(LEN + 1), out[8192];
	struct buf b = {0};
	struct kp_jitdump jd;
	struct kp_strtab *own = kp_strtab_new();
	const struct kp_jitdump_code *c;
	int fd;

	memset(big, 'n', LEN);
	big[LEN] = 0;
	header(&b, 0x4A695444, 1, 0);
	for (uint32_t i = 0; i < N; i++) {
		snprintf(big, 16, "%08u", i);
		big[8] = 'n';
		load(&b, 0x100000 + (uint64_t)i * 0x100, 0x10, i, big);
	}
	/* from a buffer: interned, cut */
	kp_jitdump_init(&jd, own, NULL, NULL);
	kp_jitdump_parse(&jd, b.p, b.n, b.n);
	CHECK_EQ_INT(jd.st.loads, N);
	c = kp_jitdump_find(&jd, 0x100000);
	CHECK(c && kp_strtab_len(own, c->name) == 4096);
	CHECK(jd.bytes < (uint64_t)N * 4200 + (1 << 20));
	kp_jitdump_fini(&jd);
	/* from a file: not held, read when named */
	fd = temp_file(&b);
	kp_jitdump_init(&jd, own, NULL, NULL);
	CHECK_EQ_INT(kp_jitdump_read(&jd, fd, 0), 0);
	CHECK_EQ_INT(jd.st.loads, N);
	CHECK(jd.bytes < (1 << 20));
	c = kp_jitdump_find(&jd, 0x100000 + 123 * 0x100);
	CHECK(c && c->name == 0 && c->name_len == 4096);
	CHECK_EQ_INT(kp_jitdump_name(&jd, c, c->start, out, sizeof(out)), 4096);
	CHECK(strncmp(out, "00000123nnn", 11) == 0);
	kp_jitdump_fini(&jd);
	close(fd);
	kp_strtab_free(own);
	free(big);
	free(b.p);
}

/* A cap on the state: the file is read no further past it (FULL, with
 * the offset), what was read still names. */
static void test_state_cap(void)
{
	struct buf b = {0};
	struct kp_jitdump jd;
	int fd;

	header(&b, 0x4A695444, 1, 0);
	for (uint32_t i = 0; i < 20000; i++)
		load(&b, 0x100000 + (uint64_t)i * 0x100, 0x10, i, "f");
	fd = temp_file(&b);
	kp_jitdump_init(&jd, strings(), NULL, NULL);
	jd.max_bytes = 256 << 10;
	CHECK_EQ_INT(kp_jitdump_read(&jd, fd, 0), 0);
	CHECK_EQ_INT(jd.state, KP_JITDUMP_FULL);
	CHECK(jd.st.loads > 100 && jd.st.loads < 20000);
	CHECK(jd.bytes < (256 << 10) + (128 << 10));
	CHECK(strstr(jd.error, "offset ") != NULL);
	CHECK(kp_jitdump_find(&jd, 0x100000) != NULL);
	kp_jitdump_fini(&jd);
	close(fd);
	free(b.p);
}

static bool stop_now(void)
{
	return true;
}

/* A pending stop ends a read before its next buffer, and the read says
 * it stopped short (short_read). */
static void test_stop(void)
{
	struct buf b = {0};
	struct kp_jitdump jd;
	int fd;

	sample_file(&b);
	fd = temp_file(&b);
	kp_jitdump_init(&jd, strings(), NULL, NULL);
	jd.stop = stop_now;
	CHECK_EQ_INT(kp_jitdump_read(&jd, fd, 0), -EINTR);
	CHECK_EQ_INT(jd.off, 0);
	CHECK(jd.short_read && jd.size_seen == b.n);
	jd.stop = NULL;
	CHECK_EQ_INT(kp_jitdump_read(&jd, fd, 0), 0);
	CHECK(!jd.short_read);
	check_sample(&jd);
	kp_jitdump_fini(&jd);
	close(fd);
	free(b.p);
}

/* Eight processes map one jitdump (children of this one, the mapping
 * inherited): the file is opened and read once, its loads counted once,
 * and each process's JIT code is named from it (was: read and stored
 * once per process). */
static void test_mappers(void)
{
	enum { NCHILD = 8 };
	char dir[] = "/tmp/kp-jitdump-dir-XXXXXX", path[96];
	struct kp_symbolizer *sym = kp_sym_new(NULL);
	struct kp_sym_stats st;
	struct buf b = {0};
	pid_t kids[NCHILD];
	struct stat fst;
	void *at;
	int fd, pipefd[2];

	sample_file(&b);
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0 && write(fd, b.p, b.n) == (ssize_t)b.n);
	fstat(fd, &fst);
	at = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(at != MAP_FAILED && pipe(pipefd) == 0);
	for (int i = 0; i < NCHILD; i++) {
		char c;

		kids[i] = fork();
		if (kids[i] == 0) {
			close(pipefd[1]);
			(void)!read(pipefd[0], &c, 1); /* until the parent closes it */
			_exit(0);
		}
	}
	close(pipefd[0]);
	for (int i = 0; i < NCHILD; i++)
		kp_sym_jitdump_mapped(sym, &(struct kp_mapping){
						   .pid = kids[i],
						   .path = path,
						   .start = (uint64_t)(uintptr_t)at,
						   .end = (uint64_t)(uintptr_t)at + 4096,
						   .ino = fst.st_ino,
						   .maj = major(fst.st_dev),
						   .min = minor(fst.st_dev),
					   });
	kp_sym_jit_poll(sym);
	kp_sym_stats(sym, &st);
	CHECK_EQ_INT(st.jitdump_opens, 1);
	CHECK_EQ_INT(st.jitdump_loads, 3);
	for (int i = 0; i < NCHILD; i++) {
		struct kp_loc loc = {.addr = 0x1010, .kind = KP_LOC_JIT};
		struct kp_sym_frames fr = {0};

		loc.obj = kp_sym_jit_get(sym, kids[i]);
		kp_sym_resolve(sym, &loc, &fr);
		CHECK(fr.n == 1 && strcmp(fr.frames[0].name, "JS:*f /a.js:7") == 0);
		kp_sym_frames_fini(&fr);
	}
	close(pipefd[1]);
	for (int i = 0; i < NCHILD; i++)
		waitpid(kids[i], NULL, 0);
	munmap(at, 4096);
	close(fd);
	unlink(path);
	rmdir(dir);
	kp_sym_free(sym);
	free(b.p);
}

/* KP_JITDUMP=FILE: what the reader makes of a real file. */
static void real_file(void)
{
	const char *path = getenv("KP_JITDUMP");
	struct kp_jitdump jd;
	int fd;

	if (!path || (fd = open(path, O_RDONLY)) < 0)
		return;
	kp_jitdump_init(&jd, strings(), NULL, NULL);
	kp_jitdump_read(&jd, fd, 0);
	printf("%s: state %d (%s), offset %llu, %llu loads, %llu bad, %llu unmatched, %zu pieces\n",
	       path, (int)jd.state, jd.error, (unsigned long long)jd.off,
	       (unsigned long long)jd.st.loads, (unsigned long long)jd.st.bad_records,
	       (unsigned long long)jd.st.unmatched, jd.npieces);
	kp_jitdump_fini(&jd);
	close(fd);
}

KP_TEST_MAIN(test_names, test_split, test_truncated, test_refused, test_v8_skew, test_v8_garbled,
	     test_overlap_move, test_absurd, test_growing_file, test_symbolizer, test_descending,
	     test_names_capped, test_state_cap, test_stop, test_mappers, real_file)
