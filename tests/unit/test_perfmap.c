/* Perf map parsing (hex with and without 0x, later lines win, garbage
 * counted, names made safe) and reading through the symbolizer (ownership
 * rule, symlinks, FIFOs, growth, maps written at exit, containers). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kp_test.h"
#include "symbolize/perfmap.h"
#include "symbolize/symbolize.h"
#include "util/strtab.h"

/* The name pm gives addr: "(none)" when no line covers it, "(not read)"
 * when pm was not read for it. */
static const char *look(const struct kp_perfmap *pm, uint64_t addr)
{
	const char *n;

	if (!kp_perfmap_find(pm, addr, &n))
		return "(not read)";
	return n ? n : "(none)";
}

struct probe {
	uint64_t addr;
	const char *name; /* "(none)" when no line covers it */
};

static size_t longest_line(const char *text, size_t len)
{
	size_t best = 0, cur = 0;

	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\n') {
			cur = 0;
			continue;
		}
		if (++cur > best)
			best = cur;
	}
	return best;
}

/* Reads text for the probes' addresses through a buffer of bufsize bytes
 * (0: the default) and checks every name and both counts; says which
 * buffer size failed. */
static void check_read(const char *text, size_t len, const struct probe *pr, size_t n, uint64_t bad,
		       uint64_t entries, size_t bufsize)
{
	struct kp_perfmap pm = {0};
	uint64_t addrs[64] = {0};
	bool ok;

	for (size_t i = 0; i < n && i < 64; i++)
		addrs[i] = pr[i].addr;
	kp_perfmap_parse(&pm, text, len, addrs, n, bufsize);
	ok = pm.bad_lines == bad && pm.entries == entries && pm.bytes == len;
	for (size_t i = 0; i < n; i++)
		ok = ok && strcmp(look(&pm, pr[i].addr), pr[i].name) == 0;
	if (!ok) {
		fprintf(stderr,
			"read through a buffer of %zu bytes: %llu bad lines, %llu entries:\n",
			bufsize, (unsigned long long)pm.bad_lines, (unsigned long long)pm.entries);
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, "  %#llx: \"%s\", expected \"%s\"\n",
				(unsigned long long)pr[i].addr, look(&pm, pr[i].addr), pr[i].name);
	}
	CHECK(ok);
	kp_perfmap_fini(&pm);
}

/* Checks what text says about the probes: read for all of them at once,
 * through the default buffer and through every buffer size from one byte
 * more than its longest line up to the whole text (so every line falls
 * across a buffer boundary, at every position, and ends exactly at one),
 * and read for each probe alone. */
static void check_map(const char *text, size_t len, const struct probe *pr, size_t n, uint64_t bad,
		      uint64_t entries)
{
	size_t min = longest_line(text, len) + 1;

	check_read(text, len, pr, n, bad, entries, 0);
	for (size_t size = min; size <= len + 1 && size < min + 400; size++)
		check_read(text, len, pr, n, bad, entries, size);
	for (size_t i = 0; i < n; i++)
		check_read(text, len, pr + i, 1, bad, entries, min);
}

#define CHECK_MAP(text, bad, entries, ...)                                                \
	do {                                                                              \
		const struct probe pr_[] = {__VA_ARGS__};                                 \
		check_map((text), strlen(text), pr_, sizeof(pr_) / sizeof(pr_[0]), (bad), \
			  (entries));                                                     \
	} while (0)

static void test_formats(void)
{
	alarm(120); /* the process tests fork: never hang a test run */

	CHECK_MAP("7f0000001000 100 LazyCompile:*hot /app/x.js:10\n"
		  "0x7f0000002000 0x20 Interpreter\r\n"
		  "0X7F0000003000 0X10 upper case\n"
		  "\n"
		  "   \t\n"
		  "7f0000004000\t8\ttabbed name with spaces  \n"
		  "\r\n"
		  "0007f0000006000 00010 leading zeros, CRLF  \r\n"
		  "7f0000005000 10 last line without newline",
		  0, 6, {0x7f0000001000, "LazyCompile:*hot /app/x.js:10"},
		  {0x7f00000010ff, "LazyCompile:*hot /app/x.js:10"}, {0x7f0000001100, "(none)"},
		  {0x7f000000201f, "Interpreter"}, {0x7f0000002020, "(none)"},
		  {0x7f0000003000, "upper case"}, {0x7f0000004007, "tabbed name with spaces"},
		  {0x7f000000500f, "last line without newline"},
		  {0x7f0000006000, "leading zeros, CRLF"}, {0x7f0000000fff, "(none)"});
	/* an address nobody asked for is not answered */
	{
		struct kp_perfmap pm = {0};
		uint64_t a = 0x1000;

		kp_perfmap_parse(&pm, "1000 10 a\n2000 10 b\n", 20, &a, 1, 0);
		CHECK_EQ_STR(look(&pm, 0x1000), "a");
		CHECK_EQ_STR(look(&pm, 0x2000), "(not read)");
		CHECK_EQ_INT(pm.entries, 2);
		kp_perfmap_fini(&pm);
		/* read for nothing: every line still read and counted */
		kp_perfmap_parse(&pm, "1000 10 a\nbad\n", 14, NULL, 0, 16);
		CHECK_EQ_INT(pm.entries, 1);
		CHECK_EQ_INT(pm.bad_lines, 1);
		CHECK_EQ_STR(look(&pm, 0x1000), "(not read)");
		kp_perfmap_fini(&pm);
	}
}

static void test_later_wins(void)
{
	/* A [1000,2000), then B inside it, then C overlapping B's end, then D
	 * fully hidden by a later E, then a stale duplicate of A's start that
	 * is overwritten by the final A2 */
	CHECK_MAP("1000 1000 A\n"
		  "1400 200 B\n"
		  "1500 200 C\n"
		  "3000 100 D\n"
		  "2f00 300 E\n"
		  "1000 100 stale\n"
		  "1000 80 A2\n",
		  0, 7, {0x1000, "A2"}, {0x107f, "A2"}, {0x1080, "stale"}, {0x10ff, "stale"},
		  {0x1100, "A"}, {0x13ff, "A"}, {0x1400, "B"}, {0x14ff, "B"}, {0x1500, "C"},
		  {0x16ff, "C"}, {0x1700, "A"}, {0x1fff, "A"}, {0x2000, "(none)"}, {0x2f00, "E"},
		  {0x3050, "E"}, {0x31ff, "E"}, {0x3200, "(none)"}, {0xfff, "(none)"});
	/* one line covering every asked-for address, then lines naming some
	 * of them again; an address below and above all */
	CHECK_MAP("0 ffffffffffffffff everything\n"
		  "2000 1 two\n"
		  "1000 2000 one_to_three\n"
		  "3000 1 three\n",
		  0, 4, {0x0, "everything"}, {0xfff, "everything"}, {0x1000, "one_to_three"},
		  {0x2000, "one_to_three"}, {0x2fff, "one_to_three"}, {0x3000, "three"},
		  {0x3001, "everything"}, {0xfffffffffffffffe, "everything"},
		  {0xffffffffffffffff, "(none)"});
	/* the same line again and again: the last copy, interned once */
	{
		struct kp_perfmap pm = {0};
		uint64_t a[] = {0x100, 0x17f, 0x27f};

		kp_perfmap_parse(&pm, "100 100 f\n180 100 f\n", 20, a, 3, 0);
		CHECK_EQ_STR(look(&pm, 0x27f), "f");
		CHECK_EQ_INT(kp_strtab_count(pm.names), 1);
		kp_perfmap_fini(&pm);
	}
}

/* A line ending exactly where a read of the buffer begins: the last line
 * with its newline fills the first read. */
static void test_chunk_boundary(void)
{
	const char *text = "1000 10 first\n2000 10 second\n";
	const struct probe pr[] = {{0x1000, "first"}, {0x2000, "second"}};

	check_read(text, strlen(text), pr, 2, 0, 2, strlen("2000 10 second\n"));
	check_read(text, strlen(text), pr, 2, 0, 2, strlen("\n2000 10 second\n"));
	check_read(text, strlen(text), pr, 2, 0, 2, strlen("first\n2000 10 second\n"));
	/* one byte short: the longest line is exactly the buffer's size, malformed */
	check_read(text, strlen(text), pr + 0, 1, 1, 1, strlen("2000 10 second"));
}

static void test_garbage(void)
{
	struct kp_perfmap pm = {0};
	char huge[10000];
	uint64_t a;

	CHECK_MAP("hello world\n"
		  "1000\n"
		  "1000 10\n"
		  "1000 10   \n"
		  "1000 10 \r\n"
		  "zz00 10 bad start\n"
		  "1000 zz bad size\n"
		  "0x 10 no digits\n"
		  "10000000000000000 10 too big\n"
		  "ffffffffffffffff 10 wraps around\n"
		  "1000 0 empty is ignored silently\n"
		  "2000 10 ok;with;semicolons\n"
		  "3000 10 ctl\x01\x1b[31mred\x7f\n"
		  "4000 10 \xc3\xa9t\xc3\xa9\n",
		  10, 3, {0x1000, "(none)"}, {0x2000, "ok:with:semicolons"},
		  {0x3000, "ctl??[31mred?"}, {0x4000, "\xc3\xa9t\xc3\xa9"});

	/* a huge name is cut, not kept whole and not rejected */
	memcpy(huge, "5000 10 ", 8);
	memset(huge + 8, 'x', sizeof(huge) - 9);
	huge[sizeof(huge) - 1] = '\0';
	a = 0x5000;
	kp_perfmap_parse(&pm, huge, strlen(huge), &a, 1, 0);
	CHECK_EQ_INT(pm.bad_lines, 0);
	CHECK(strlen(look(&pm, 0x5000)) == KP_PERFMAP_NAME_MAX - 1);
	CHECK(strcmp(look(&pm, 0x5000) + KP_PERFMAP_NAME_MAX - 4, "...") == 0);
	kp_perfmap_fini(&pm);

	/* NUL bytes, and a last line of NULs without a newline */
	{
		const struct probe pr[] = {{0x6000, "a?b"}};

		check_map("6000 10 a\0b\n\0\0\0", 15, pr, 1, 1, 1);
	}
	kp_perfmap_parse(&pm, "", 0, &a, 1, 0);
	CHECK_EQ_INT(pm.n, 1);
	CHECK_EQ_STR(look(&pm, 0x5000), "(none)");
	kp_perfmap_fini(&pm);
	kp_perfmap_parse(&pm, NULL, 0, NULL, 0, 0);
	CHECK_EQ_INT(pm.n, 0);
	kp_perfmap_fini(&pm);
}

/* Lines longer than the buffer are skipped as malformed, wherever they
 * are, and never held: the lines around them still count. */
static void test_long_lines(void)
{
	size_t big = 3u << 20, len;
	char *text = malloc(big + 64);
	const struct probe pr[] = {{0x1000, "a"}, {0x2000, "b"}};
	struct kp_perfmap pm = {0};
	uint64_t addrs[] = {0x1000, 0x2000};

	if (!text)
		return;
	/* in the middle, at the start, at the end without a newline, alone:
	 * through a 1000-byte buffer */
	{
		char buf[8000];

		memset(buf, 'x', sizeof(buf));
		memcpy(buf, "1000 10 a\n", 10);
		memcpy(buf + 5000, "\n2000 10 b\n", 11);
		check_read(buf, 5011, pr, 2, 1, 2, 1000);
		memcpy(buf, "1000 10 a\n3000 10 ", 18); /* a long valid-looking line */
		check_read(buf, 5011, pr, 2, 1, 2, 1000);
		check_read(buf + 10, 5001, pr + 1, 1, 1, 1, 1000); /* starts the file */
		check_read(buf, 4000, pr, 1, 1, 1, 1000);	   /* ends it, no newline */
		check_read(buf + 20, 3000, pr, 0, 1, 0, 1000);	   /* is all of it */
		check_read(buf + 20, 1000, pr, 0, 1, 0, 1000);	   /* just the buffer's size */
		check_read(buf + 20, 999, pr, 0, 1, 0, 1000);	   /* fits: still garbage */
		check_read(buf + 20, 2000, pr, 0, 1, 0, 1000);	   /* two buffers exactly */
		memcpy(buf + 3000, "\n", 1);			   /* two long lines in a row */
		check_read(buf, 5011, pr, 2, 2, 2, 1000);
	}
	/* a 3 MiB line through the default buffer; then 3 MiB of NULs (a
	 * sparse tail) without a newline */
	len = (size_t)snprintf(text, 64, "1000 10 a\n");
	memset(text + len, 'y', big);
	len += big;
	len += (size_t)snprintf(text + len, 64, "\n2000 10 b\n");
	kp_perfmap_parse(&pm, text, len, addrs, 2, 0);
	CHECK_EQ_INT(pm.bad_lines, 1);
	CHECK_EQ_STR(look(&pm, 0x1000), "a");
	CHECK_EQ_STR(look(&pm, 0x2000), "b");
	len = (size_t)snprintf(text, 64, "2000 10 b\n1000 10 a\n");
	memset(text + len, 0, big);
	kp_perfmap_parse(&pm, text, len + big, addrs, 2, 0);
	CHECK_EQ_INT(pm.bad_lines, 1);
	CHECK_EQ_INT(pm.entries, 2);
	CHECK_EQ_STR(look(&pm, 0x1000), "a");
	CHECK_EQ_STR(look(&pm, 0x2000), "b");
	kp_perfmap_fini(&pm);
	free(text);
}

/* Sparse files: holes (NUL bytes, found with SEEK_DATA and not read)
 * give the same lines as the same bytes in memory, whatever the buffer
 * size and wherever a hole falls against the buffer. */
static void test_sparse_file(void)
{
	char path[] = "/tmp/kp-perfmap-sparse-XXXXXX";
	static const size_t sizes[] = {0, 4096, 5000, 65536 + 7, 3u << 20};
	const size_t total = 16u << 20;
	uint64_t addrs[] = {0x1000, 0x2000, 0x3000, 0x4000};
	char *mem = calloc(1, total);
	int fd = mkstemp(path);

	CHECK(fd >= 0 && mem);
	if (fd < 0 || !mem)
		goto out;
	unlink(path);
	/* a small hole between two lines, a big one, and a hole at the end */
	memcpy(mem, "1000 10 a\n", 10);
	memcpy(mem + (64u << 10), "\n2000 10 b\n", 11);
	memcpy(mem + (8u << 20), "\n3000 10 c\n4000 10 d", 20);
	CHECK(pwrite(fd, mem, 10, 0) == 10);
	CHECK(pwrite(fd, mem + (64u << 10), 11, 64 << 10) == 11);
	CHECK(pwrite(fd, mem + (8u << 20), 20, 8 << 20) == 20);
	CHECK(ftruncate(fd, (off_t)total) == 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct kp_perfmap pf = {0}, pm = {0};

		CHECK_EQ_INT(kp_perfmap_read(&pf, fd, addrs, 4, sizes[i]), 0);
		kp_perfmap_parse(&pm, mem, total, addrs, 4, sizes[i]);
		CHECK_EQ_INT(pf.bad_lines, pm.bad_lines);
		CHECK_EQ_INT(pf.entries, pm.entries);
		CHECK_EQ_INT(pf.bytes, total);
		for (size_t k = 0; k < 4; k++)
			CHECK_EQ_STR(look(&pf, addrs[k]), look(&pm, addrs[k]));
		if (sizes[i] == 0) {
			/* the NULs between "a" and "b", those up to the big
			 * hole's newline, and "4000 10 d" followed by 8 MiB of
			 * NULs (too long) */
			CHECK_EQ_INT(pf.bad_lines, 3);
			CHECK_EQ_STR(look(&pf, 0x1000), "a");
			CHECK_EQ_STR(look(&pf, 0x2000), "b");
			CHECK_EQ_STR(look(&pf, 0x3000), "c");
			CHECK_EQ_STR(look(&pf, 0x4000), "(none)");
		}
		kp_perfmap_fini(&pf);
		kp_perfmap_fini(&pm);
	}
	close(fd);
out:
	free(mem);
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(uint64_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state % n;
}

/* Random maps (overlapping entries in a small range, garbage, blank and
 * empty lines, every spelling) against the rule written plainly: an
 * address is named by the last well-formed line covering it. Read through
 * random buffer sizes. */
static void test_random_maps(void)
{
	enum { LINES = 80, ADDRS = 40 };
	static const char *garbage[] = {"garbage", "1000",	 "1000 10",
					"zz 10 x", "1000 10 \r", "x1000 10 a"};

	for (int iter = 0; iter < 300; iter++) {
		char text[LINES * 64 + 1], names[LINES][16];
		uint64_t start[LINES], end[LINES], addrs[ADDRS];
		struct probe pr[ADDRS];
		size_t len = 0, nlines = 1 + rnd(LINES), maxline;
		uint64_t bad = 0, entries = 0;
		bool good[LINES];

		for (size_t i = 0; i < nlines; i++) {
			good[i] = false;
			switch (rnd(8)) {
			case 0:
				len += (size_t)sprintf(text + len, "%s", garbage[rnd(6)]);
				bad++;
				break;
			case 1:
				len += (size_t)sprintf(text + len, "%s", rnd(2) ? "" : " \t");
				break;
			default:
				start[i] = 0x1000 + rnd(0x400);
				end[i] = start[i] + rnd(0x100);
				snprintf(names[i], sizeof(names[i]), "f%u", (unsigned)(i % 1000));
				len += (size_t)sprintf(text + len, "%s%s%llx%s%s%llx %s%s",
						       rnd(3) ? "" : " ", rnd(2) ? "0x" : "",
						       (unsigned long long)start[i],
						       rnd(3) ? " " : "\t ", rnd(2) ? "0X" : "",
						       (unsigned long long)(end[i] - start[i]),
						       names[i], rnd(3) ? "" : " \r");
				good[i] = end[i] > start[i];
				entries += good[i];
				break;
			}
			if (i + 1 < nlines || rnd(2))
				text[len++] = '\n';
		}
		text[len] = '\0';
		for (size_t k = 0; k < ADDRS; k++) {
			addrs[k] = 0xff0 + rnd(0x520);
			pr[k].addr = addrs[k];
			pr[k].name = "(none)";
			for (size_t i = 0; i < nlines; i++)
				if (good[i] && start[i] <= addrs[k] && addrs[k] < end[i])
					pr[k].name = names[i];
		}
		maxline = longest_line(text, len);
		check_read(text, len, pr, ADDRS, bad, entries, 0);
		check_read(text, len, pr, ADDRS, bad, entries, maxline + 1 + rnd(80));
	}
}

static void test_sanitize(void)
{
	char buf[8];

	CHECK_EQ_INT(kp_perfmap_sanitize_name(buf, sizeof(buf), "  a;b\t", 6), 3);
	CHECK_EQ_STR(buf, "a:b");
	CHECK_EQ_INT(kp_perfmap_sanitize_name(buf, sizeof(buf), "abcdefghij", 10), 7);
	CHECK_EQ_STR(buf, "abcd...");
	/* a cut never leaves half a UTF-8 character before the dots */
	kp_perfmap_sanitize_name(buf, sizeof(buf), "abc\xc3\xa9xyz", 9);
	CHECK_EQ_STR(buf, "abc...");
}

/* Writes text to /tmp/perf-PID.map (replacing it) with the given owner. */
static void write_map(pid_t pid, const char *text, uid_t owner)
{
	char path[64];
	FILE *fp;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	unlink(path);
	fp = fopen(path, "w");
	if (!fp)
		return;
	fputs(text, fp);
	fclose(fp);
	if (owner != getuid())
		CHECK_EQ_INT(chown(path, owner, (gid_t)-1), 0);
}

static void append_map(pid_t pid, const char *text)
{
	char path[64];
	FILE *fp;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	fp = fopen(path, "a");
	if (!fp)
		return;
	fputs(text, fp);
	fclose(fp);
}

static void remove_map(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	unlink(path);
}

static const char *jit_name(struct kp_symbolizer *sym, uint32_t id, uint64_t addr, bool *ok)
{
	static struct kp_sym_frames f;
	struct kp_loc loc = {.addr = addr, .obj = id, .kind = KP_LOC_JIT};

	*ok = kp_sym_resolve(sym, &loc, &f);
	CHECK_EQ_INT(f.n, 1);
	CHECK_EQ_INT(f.frames[0].kind, KP_FRAME_JIT);
	CHECK(f.frames[0].file == NULL && f.frames[0].line == 0); /* a perf map has none */
	return f.frames[0].name;
}

static bool any_note(struct kp_symbolizer *sym, const char *needle)
{
	size_t n;
	const char *const *notes = kp_sym_notes(sym, &n);

	for (size_t i = 0; i < n; i++) {
		if (strstr(notes[i], needle))
			return true;
	}
	return false;
}

/* The ownership rule, with this (root) process as the JIT. */
static void test_owner(void)
{
	struct kp_symbolizer *sym;
	uint32_t id;
	bool ok;
	char note[128];
	struct kp_sym_stats st;
	pid_t me = getpid();

	if (geteuid() != 0) {
		printf("skip test_owner: needs root to chown\n");
		return;
	}
	/* owned by the process's user (root): used */
	sym = kp_sym_new(NULL);
	write_map(me, "1000 100 mine\nnot a line\n", 0);
	id = kp_sym_jit_get(sym, me);
	CHECK(id >= 1);
	CHECK_EQ_INT(kp_sym_jit_get(sym, me), id); /* cheap on repeat */
	CHECK_EQ_STR(jit_name(sym, id, 0x1010, &ok), "mine");
	CHECK(ok);
	CHECK_EQ_STR(jit_name(sym, id, 0x2000, &ok), "[unknown: anonymous, not in perf map]");
	CHECK(!ok);
	kp_sym_stats(sym, &st);
	CHECK_EQ_INT(st.jit_bad_lines, 1);
	snprintf(note, sizeof(note), "/tmp/perf-%d.map: skipped 1 malformed line", (int)me);
	CHECK(any_note(sym, note));
	CHECK_EQ_INT(st.resolved[KP_LOC_JIT], 1);
	CHECK_EQ_INT(st.unresolved[KP_LOC_JIT], 1);
	kp_sym_free(sym);

	/* owned by somebody else: refused, said once */
	sym = kp_sym_new(NULL);
	write_map(me, "1000 100 planted\n", 12345);
	id = kp_sym_jit_get(sym, me);
	CHECK_EQ_STR(jit_name(sym, id, 0x1010, &ok), "[unknown: anonymous, no perf map]");
	CHECK(!ok);
	kp_sym_process_exit(sym, me);
	CHECK_EQ_STR(jit_name(sym, id, 0x1020, &ok), "[unknown: anonymous, no perf map]");
	snprintf(note, sizeof(note), "ignored /tmp/perf-%d.map: owned by uid 12345", (int)me);
	CHECK(any_note(sym, note));
	{
		size_t n;

		kp_sym_notes(sym, &n);
		CHECK_EQ_INT(n, 1);
	}
	kp_sym_free(sym);

	/* a symlink is not followed, a FIFO does not hang us */
	sym = kp_sym_new(NULL);
	remove_map(me);
	write_map(me + 1000000, "1000 100 target\n", 0);
	{
		char from[64], to[64];

		snprintf(from, sizeof(from), "/tmp/perf-%d.map", (int)me);
		snprintf(to, sizeof(to), "/tmp/perf-%d.map", (int)me + 1000000);
		CHECK_EQ_INT(symlink(to, from), 0);
	}
	id = kp_sym_jit_get(sym, me);
	CHECK_EQ_STR(jit_name(sym, id, 0x1010, &ok), "[unknown: anonymous, no perf map]");
	CHECK(any_note(sym, "symbolic link"));
	remove_map(me + 1000000);
	kp_sym_free(sym);

	sym = kp_sym_new(NULL);
	remove_map(me);
	{
		char path[64];

		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)me);
		CHECK_EQ_INT(mkfifo(path, 0600), 0);
	}
	id = kp_sym_jit_get(sym, me);
	CHECK_EQ_STR(jit_name(sym, id, 0x1010, &ok), "[unknown: anonymous, no perf map]");
	CHECK(any_note(sym, "not a regular file"));
	remove_map(me);
	kp_sym_free(sym);
}

/* A child running as uid 12345: its own file is fine, root's too. */
/* Forks a child that lives until *release is closed (uid: switch to that
 * user first, or -1 to stay). Returns its pid, or -1. */
static pid_t hold_child(int uid, int *release)
{
	int pfd[2];
	pid_t child;
	char c;

	if (pipe(pfd))
		return -1;
	child = fork();
	if (child == 0) {
		close(pfd[1]);
		if (uid >= 0 && (setresgid((gid_t)uid, (gid_t)uid, (gid_t)uid) ||
				 setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid)))
			_exit(1);
		while (read(pfd[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(pfd[0]);
	*release = pfd[1];
	return child;
}

static void test_other_user_process(void)
{
	struct kp_symbolizer *sym;
	int release;
	pid_t child;
	uint32_t id;
	bool ok;

	if (geteuid() != 0) {
		printf("skip test_other_user_process: needs root\n");
		return;
	}
	child = hold_child(12345, &release);
	if (child < 0)
		return;
	usleep(50000); /* let it drop privileges */
	write_map(child, "1000 100 users_own\n", 12345);
	sym = kp_sym_new(NULL);
	id = kp_sym_jit_get(sym, child);
	CHECK_EQ_STR(jit_name(sym, id, 0x1000, &ok), "users_own");
	kp_sym_free(sym);

	write_map(child, "1000 100 someone_else\n", 23456);
	sym = kp_sym_new(NULL);
	id = kp_sym_jit_get(sym, child);
	CHECK_EQ_STR(jit_name(sym, id, 0x1000, &ok), "[unknown: anonymous, no perf map]");
	CHECK(any_note(sym, "owned by uid 23456"));
	kp_sym_free(sym);
	close(release);
	waitpid(child, NULL, 0);
	remove_map(child);
}

/* Maps that grow, are written only at exit, or are deleted after exit. */
static void test_lifecycle(void)
{
	struct kp_symbolizer *sym = kp_sym_new(NULL);
	int release;
	pid_t child;
	uint32_t id, id2;
	bool ok;

	child = hold_child(-1, &release);
	if (child < 0)
		return;
	remove_map(child);
	id = kp_sym_jit_get(sym, child); /* no map yet */
	/* written at exit (DumpPerfMapAtExit): read when the exit is seen */
	write_map(child, "1000 100 at_exit\n", getuid());
	close(release);
	waitpid(child, NULL, 0);
	kp_sym_process_exit(sym, child);
	remove_map(child); /* deleted after exit: what was read stays */
	CHECK_EQ_STR(jit_name(sym, id, 0x1000, &ok), "at_exit");
	CHECK(ok);
	/* after the exit, the same pid is a new process */
	id2 = kp_sym_jit_get(sym, child);
	CHECK(id2 != id);
	kp_sym_free(sym);

	/* deleted by the JIT before it exits: the map opened while it ran is
	 * read through the descriptor kept since */
	sym = kp_sym_new(NULL);
	child = hold_child(-1, &release);
	if (child < 0)
		return;
	remove_map(child);
	id = kp_sym_jit_get(sym, child); /* no map yet */
	write_map(child, "1000 100 deleted_before_exit\n", getuid());
	usleep(150000);
	CHECK_EQ_INT(kp_sym_jit_get(sym, child), id); /* sees it now */
	remove_map(child);
	close(release);
	waitpid(child, NULL, 0);
	kp_sym_process_exit(sym, child);
	CHECK_EQ_STR(jit_name(sym, id, 0x1000, &ok), "deleted_before_exit");
	kp_sym_free(sym);

	/* nothing is read at the exit (that runs in the recording loop): a
	 * name changed in place after it, the size and times put back as they
	 * were, is what the lookup finds */
	sym = kp_sym_new(NULL);
	write_map(getpid(), "1000 100 old_name\n", getuid());
	id = kp_sym_jit_get(sym, getpid());
	kp_sym_process_exit(sym, getpid());
	{
		char path[64];
		struct stat st;
		int fd;

		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
		fd = open(path, O_WRONLY);
		CHECK(fd >= 0 && fstat(fd, &st) == 0);
		if (fd >= 0) {
			struct timespec times[2] = {st.st_atim, st.st_mtim};

			CHECK(pwrite(fd, "new_name", 8, 9) == 8);
			CHECK(futimens(fd, times) == 0);
			close(fd);
		}
	}
	CHECK_EQ_STR(jit_name(sym, id, 0x1000, &ok), "new_name");
	{
		struct kp_sym_stats st;

		kp_sym_stats(sym, &st);
		CHECK_EQ_INT(st.jit_map_reads, 1);
	}
	remove_map(getpid());
	kp_sym_free(sym);

	/* the map is read when frames are resolved, not at the exit: what it
	 * holds by then counts (a JIT may append after the exit is seen) */
	sym = kp_sym_new(NULL);
	write_map(getpid(), "1000 100 first\n", getuid());
	id = kp_sym_jit_get(sym, getpid());
	kp_sym_process_exit(sym, getpid());
	append_map(getpid(), "2000 100 second\n1000 100 recompiled\n");
	CHECK_EQ_STR(jit_name(sym, id, 0x2000, &ok), "second");
	CHECK_EQ_STR(jit_name(sym, id, 0x1000, &ok), "recompiled");
	/* after the exit the path may name another process's map (same pid):
	 * the file kept at the exit is the one read */
	write_map(getpid(), "1000 100 another_process\n3000 100 other\n", getuid());
	CHECK_EQ_STR(jit_name(sym, id, 0x1010, &ok), "recompiled");
	CHECK_EQ_STR(jit_name(sym, id, 0x3000, &ok), "[unknown: anonymous, not in perf map]");
	remove_map(getpid());
	kp_sym_free(sym);
}

/* The recorder's hints: the map is read once for every hinted address; an
 * address never hinted is still named (the map is read again for it). */
static void test_hints(void)
{
	struct kp_symbolizer *sym = kp_sym_new(NULL);
	uint64_t addrs[] = {0x3010, 0x1000, 0x1000, 0x2fff};
	struct kp_sym_stats st;
	uint32_t id;
	bool ok;

	write_map(getpid(), "1000 100 a\n2000 1000 b\nbad line\n3000 100 c\n2f00 100 b2\n",
		  getuid());
	id = kp_sym_jit_get(sym, getpid());
	kp_sym_jit_hint(sym, id, addrs, 4);
	kp_sym_jit_hint(sym, id + 100, addrs, 4); /* an id never handed out: ignored */
	CHECK_EQ_STR(jit_name(sym, id, 0x1000, &ok), "a");
	CHECK_EQ_STR(jit_name(sym, id, 0x2fff, &ok), "b2");
	CHECK_EQ_STR(jit_name(sym, id, 0x3010, &ok), "c");
	kp_sym_stats(sym, &st);
	CHECK_EQ_INT(st.jit_map_reads, 1); /* one pass for the three */
	/* not hinted: one more pass each */
	CHECK_EQ_STR(jit_name(sym, id, 0x2100, &ok), "b");
	CHECK(ok);
	CHECK_EQ_STR(jit_name(sym, id, 0x5000, &ok), "[unknown: anonymous, not in perf map]");
	CHECK(!ok);
	CHECK_EQ_STR(jit_name(sym, id, 0x10ff, &ok), "a");
	CHECK_EQ_STR(jit_name(sym, id, 0x2100, &ok), "b"); /* cached */
	kp_sym_stats(sym, &st);
	CHECK_EQ_INT(st.jit_map_reads, 4);
	CHECK_EQ_INT(st.jit_bad_lines, 1); /* read four times, counted as one read */
	CHECK_EQ_INT(st.resolved[KP_LOC_JIT], 5);
	remove_map(getpid());
	kp_sym_free(sym);
}

/* A map of entries followed by a 512 MiB hole (a sparse file: no disk):
 * named right, the hole one malformed line, and read through a small
 * buffer: the peak RSS of this process grows by far less than the map. */
static void test_big_sparse_map(void)
{
	const off_t tail = 512ll << 20;
	struct kp_symbolizer *sym;
	struct rusage before, after;
	uint64_t addrs[] = {0x1000, 0x2000, 0x9000};
	char path[64], note[128];
	struct stat st;
	uint32_t id;
	bool ok;
	int fd;

	write_map(getpid(), "1000 100 stale\n1000 100 first\n2000 100 second\n", getuid());
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	fd = open(path, O_WRONLY);
	CHECK(fd >= 0 && fstat(fd, &st) == 0 && ftruncate(fd, st.st_size + tail) == 0);
	if (fd >= 0)
		close(fd);
	sym = kp_sym_new(NULL);
	id = kp_sym_jit_get(sym, getpid());
	kp_sym_process_exit(sym, getpid());
	kp_sym_jit_hint(sym, id, addrs, 3);
	getrusage(RUSAGE_SELF, &before);
	CHECK_EQ_STR(jit_name(sym, id, 0x1000, &ok), "first");
	getrusage(RUSAGE_SELF, &after);
	CHECK_EQ_STR(jit_name(sym, id, 0x2000, &ok), "second");
	CHECK_EQ_STR(jit_name(sym, id, 0x9000, &ok), "[unknown: anonymous, not in perf map]");
	snprintf(note, sizeof(note), "/tmp/perf-%d.map: skipped 1 malformed line", (int)getpid());
	CHECK(any_note(sym, note));
	printf("a map with a 512 MiB hole: peak RSS %ld -> %ld KiB\n", before.ru_maxrss,
	       after.ru_maxrss);
	/* the old reader held the file whole (512 MiB); the buffer is 1 MiB */
	CHECK(after.ru_maxrss - before.ru_maxrss < 64 * 1024);
	remove_map(getpid());
	kp_sym_free(sym);
}

/* A process in its own mount and pid namespace, chrooted into a folder
 * holding its map as /tmp/perf-1.map: found through /proc/PID/root. */
static void test_container(void)
{
	char root[] = "/tmp/kp-jitns-XXXXXX", path[256];
	struct kp_symbolizer *sym;
	int go[2], rep[2];
	pid_t mid, inner = 0;
	uint32_t id;
	bool ok;
	FILE *fp;

	if (geteuid() != 0 || !mkdtemp(root)) {
		printf("skip test_container: needs root\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/tmp", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/tmp/perf-1.map", root);
	fp = fopen(path, "w");
	if (fp) {
		fputs("1000 100 in_container\n", fp);
		fclose(fp);
	}
	if (pipe(go) || pipe(rep))
		goto out_root;
	mid = fork();
	if (mid == 0) {
		int ready[2];
		char c;
		pid_t p;

		close(go[1]);
		close(rep[0]);
		if (pipe(ready) || unshare(CLONE_NEWPID | CLONE_NEWNS))
			_exit(2);
		p = fork();
		if (p == 0) {
			close(ready[0]);
			mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
			if (chroot(root) || chdir("/"))
				_exit(3);
			close(ready[1]); /* chrooted */
			while (read(go[0], &c, 1) > 0)
				;
			_exit(0);
		}
		close(ready[1]);
		/* the pid is sent only once the process is in its new root */
		if (p < 0 || read(ready[0], &c, 1) != 0 ||
		    write(rep[1], &p, sizeof(p)) != sizeof(p))
			_exit(5);
		waitpid(p, NULL, 0);
		_exit(0);
	}
	close(go[0]);
	close(rep[1]);
	if (read(rep[0], &inner, sizeof(inner)) != sizeof(inner) || inner <= 0) {
		printf("skip test_container: cannot create namespaces\n");
		close(go[1]);
		waitpid(mid, NULL, 0);
		goto out_root;
	}
	sym = kp_sym_new(NULL);
	id = kp_sym_jit_get(sym, inner);
	close(go[1]); /* the process exits; its root folder stays reachable */
	waitpid(mid, NULL, 0);
	CHECK_EQ_STR(jit_name(sym, id, 0x1010, &ok), "in_container");
	kp_sym_free(sym);
out_root:
	unlink(path);
	snprintf(path, sizeof(path), "%s/tmp", root);
	rmdir(path);
	rmdir(root);
}

KP_TEST_MAIN(test_formats, test_later_wins, test_chunk_boundary, test_garbage, test_long_lines,
	     test_sparse_file, test_random_maps, test_sanitize, test_owner, test_other_user_process,
	     test_lifecycle, test_hints, test_big_sparse_map, test_container)
