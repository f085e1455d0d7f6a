/* kallsyms parsing and lookup, on fixtures: unsorted module lines,
 * aliases at one address, weak vs strong, data symbols ending text ranges,
 * garbage lines, and a kptr_restrict'ed file with every address zero. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "kp_test.h"
#include "util/xalloc.h"
#include "symbolize/kallsyms.h"
#include "symbolize/symbolize.h"

static char *fixture(const char *name)
{
	static char buf[4096];
	const char *dir = getenv("KP_FIXTURES");

	snprintf(buf, sizeof(buf), "%s/sym/%s", dir ? dir : "tests/fixtures", name);
	return buf;
}

static const char *lookup(const struct kp_kallsyms *ks, uint64_t addr, const char **mod)
{
	const char *n = kp_kallsyms_lookup(ks, addr, mod);

	return n ? n : "(none)";
}

/* The fixture's table, read from path with a read buffer of read_size
 * bytes (0: kp_kallsyms_load and its default). */
static void check_fixture(const char *path, size_t read_size)
{
	struct kp_kallsyms_opts opts = {.read_size = read_size};
	struct kp_kallsyms *ks = NULL;
	struct kp_diag d;
	const char *mod = "x";
	int failed = kp_test_failed;

	if (read_size)
		CHECK_EQ_INT(kp_kallsyms_load_opts(path, NULL, 0, &opts, &ks, &d), 0);
	else
		CHECK_EQ_INT(kp_kallsyms_load(path, &ks, &d), 0);
	if (!ks)
		return;
	CHECK(!kp_kallsyms_restricted(ks));
	/* 2 garbage lines and an address-less one; absolute symbols are not kept */
	CHECK_EQ_INT(kp_kallsyms_bad_lines(ks), 3);
	CHECK_EQ_INT(kp_kallsyms_count(ks), 14);

	/* aliases: global, then fewer underscores, then the longest name */
	CHECK_EQ_STR(lookup(ks, 0xffffffff81000000, &mod), "_stext");
	CHECK(mod == NULL);
	CHECK_EQ_STR(lookup(ks, 0xffffffff810000ff, NULL), "_stext");
	CHECK_EQ_STR(lookup(ks, 0xffffffff81000100, NULL), "do_one");
	CHECK_EQ_STR(lookup(ks, 0xffffffff81000250, NULL), "local_fn");
	/* strong beats weak at the same address */
	CHECK_EQ_STR(lookup(ks, 0xffffffff81000310, NULL), "strong_fn");
	/* a data symbol ends the text range before it */
	CHECK_EQ_STR(lookup(ks, 0xffffffff81000400, NULL), "(none)");
	CHECK_EQ_STR(lookup(ks, 0xffffffff810004ff, NULL), "(none)");
	CHECK_EQ_STR(lookup(ks, 0xffffffff81000500, NULL), "after_data");
	/* next symbol is in a module far away: reach is capped */
	CHECK_EQ_STR(lookup(ks, 0xffffffff81000500 + KP_KALLSYMS_MAX_REACH - 1, NULL),
		     "after_data");
	CHECK_EQ_STR(lookup(ks, 0xffffffff81000500 + KP_KALLSYMS_MAX_REACH, NULL), "(none)");
	/* below the first symbol */
	CHECK_EQ_STR(lookup(ks, 0xffffffff80ffffff, NULL), "(none)");
	CHECK_EQ_STR(lookup(ks, 0x1000, NULL), "(none)");

	/* modules, listed out of order */
	CHECK_EQ_STR(lookup(ks, 0xffffffffc0001010, &mod), "mod_fn1");
	CHECK_EQ_STR(mod ? mod : "(core)", "mymod");
	CHECK_EQ_STR(lookup(ks, 0xffffffffc0001900, &mod), "(none)"); /* mod_data */
	CHECK_EQ_STR(lookup(ks, 0xffffffffc0002abc, &mod), "mod_fn2");
	CHECK_EQ_STR(mod ? mod : "(core)", "mymod");
	CHECK_EQ_STR(lookup(ks, 0xffffffffc0010004, &mod), "other_mod_fn");
	CHECK_EQ_STR(mod ? mod : "(core)", "othermod");
	/* beyond the last symbol's reach */
	CHECK_EQ_STR(lookup(ks, 0xffffffffc0010000 + KP_KALLSYMS_MAX_REACH, NULL), "(none)");
	CHECK_EQ_STR(lookup(ks, UINT64_MAX, NULL), "(none)");
	kp_kallsyms_free(ks);
	if (kp_test_failed != failed)
		fprintf(stderr, "  (%s read %zu bytes at a time)\n", path, read_size);
}

static void test_parse_and_lookup(void)
{
	check_fixture(fixture("kallsyms"), 0);
}

static void test_missing_file(void)
{
	struct kp_kallsyms *ks = (struct kp_kallsyms *)1;
	struct kp_diag d = {{0}};

	CHECK(kp_kallsyms_load("/nonexistent/kallsyms", &ks, &d) < 0);
	CHECK(ks == NULL);
	CHECK(strstr(d.msg, "/nonexistent/kallsyms") != NULL);
}

static void test_facade_kernel(void)
{
	struct kp_symbolizer *sym = kp_sym_new(NULL);
	struct kp_sym_frames f = {0};
	struct kp_sym_stats st;
	struct kp_loc loc = {.addr = 0xffffffffc0002010, .kind = KP_LOC_KERNEL};

	kp_sym_set_kallsyms_path(sym, fixture("kallsyms"));
	CHECK(kp_sym_resolve(sym, &loc, &f));
	CHECK_EQ_INT(f.n, 1);
	CHECK_EQ_STR(f.frames[0].name, "mod_fn2");
	CHECK_EQ_INT(f.frames[0].kind, KP_FRAME_KERNEL);
	/* kallsyms has no source lines */
	CHECK(f.frames[0].file == NULL && f.frames[0].line == 0);
	loc.addr = 0xffffffff81000450;
	CHECK(!kp_sym_resolve(sym, &loc, &f));
	CHECK_EQ_STR(f.frames[0].name, "[unknown: outside kallsyms]");
	CHECK_EQ_INT(f.frames[0].kind, KP_FRAME_KERNEL);
	/* cached: same answer, counted once */
	CHECK(!kp_sym_resolve(sym, &loc, &f));
	kp_sym_stats(sym, &st);
	CHECK_EQ_INT(st.resolved[KP_LOC_KERNEL], 1);
	CHECK_EQ_INT(st.unresolved[KP_LOC_KERNEL], 1);
	CHECK(!st.kptr_restricted);
	kp_sym_frames_fini(&f);
	kp_sym_free(sym);
}

/* A name while recording (kp_sym_kernel_name): read for that address and
 * let go, so the profile's naming later reads what it needs; its notes
 * said once however often the file is read. */
static void test_facade_name_once(void)
{
	struct kp_symbolizer *sym = kp_sym_new(NULL);
	struct kp_sym_frames f = {0};
	struct kp_loc loc = {.addr = 0xffffffffc0002010, .kind = KP_LOC_KERNEL};
	char name[64];
	size_t n;

	kp_sym_set_kallsyms_path(sym, fixture("kallsyms"));
	CHECK(kp_sym_kernel_name(sym, 0xffffffffc0002010, name, sizeof(name)));
	CHECK_EQ_STR(name, "mod_fn2");
	CHECK(!kp_sym_kernel_name(sym, 0xffffffff81000450, name, sizeof(name)));
	CHECK_EQ_STR(name, "");
	CHECK(kp_sym_resolve(sym, &loc, &f)); /* the whole table now */
	CHECK_EQ_STR(f.frames[0].name, "mod_fn2");
	CHECK(kp_sym_kernel_name(sym, 0xffffffffc0002010, name, sizeof(name)));
	CHECK_EQ_STR(name, "mod_fn2");
	kp_sym_frames_fini(&f);
	kp_sym_free(sym);
	sym = kp_sym_new(NULL);
	kp_sym_set_kallsyms_path(sym, fixture("kallsyms-hidden"));
	CHECK(!kp_sym_kernel_name(sym, 0xffffffff81000100, name, sizeof(name)));
	CHECK(!kp_sym_kernel_name(sym, 0xffffffff81000108, name, sizeof(name)));
	loc.addr = 0xffffffff81000100;
	CHECK(!kp_sym_resolve(sym, &loc, &f));
	kp_sym_notes(sym, &n);
	CHECK_EQ_INT(n, 1);
	kp_sym_frames_fini(&f);
	kp_sym_free(sym);
}

static void test_facade_hidden(void)
{
	struct kp_symbolizer *sym = kp_sym_new(NULL);
	struct kp_sym_frames f = {0};
	struct kp_sym_stats st;
	struct kp_loc loc = {.addr = 0xffffffff81000100, .kind = KP_LOC_KERNEL};
	const char *const *notes;
	size_t n;

	kp_sym_set_kallsyms_path(sym, fixture("kallsyms-hidden"));
	CHECK(!kp_sym_resolve(sym, &loc, &f));
	CHECK_EQ_INT(f.n, 1);
	CHECK_EQ_STR(f.frames[0].name, "[kernel]");
	CHECK_EQ_INT(f.frames[0].kind, KP_FRAME_KERNEL);
	kp_sym_stats(sym, &st);
	CHECK(st.kptr_restricted);
	notes = kp_sym_notes(sym, &n);
	CHECK_EQ_INT(n, 1);
	CHECK(n && strstr(notes[0], "kptr_restrict") != NULL);
	kp_sym_frames_fini(&f);
	kp_sym_free(sym);
}

static void test_facade_unreadable(void)
{
	struct kp_symbolizer *sym = kp_sym_new(NULL);
	struct kp_sym_frames f = {0};
	struct kp_loc loc = {.addr = 0xffffffff81000100, .kind = KP_LOC_KERNEL};
	size_t n;

	kp_sym_set_kallsyms_path(sym, "/nonexistent/kallsyms");
	CHECK(!kp_sym_resolve(sym, &loc, &f));
	CHECK_EQ_STR(f.frames[0].name, "[unknown: no kallsyms]");
	kp_sym_notes(sym, &n);
	CHECK_EQ_INT(n, 1);
	kp_sym_frames_fini(&f);
	kp_sym_free(sym);
}

/* The real file: whatever this machine hides, loading must work and a
 * text symbol's own address must name it. */
static void test_real_kallsyms(void)
{
	struct kp_kallsyms *ks = NULL;
	struct kp_diag d;
	FILE *fp;
	char line[512];

	if (kp_kallsyms_load("/proc/kallsyms", &ks, &d) != 0) {
		printf("skip: %s\n", d.msg);
		return;
	}
	CHECK(kp_kallsyms_count(ks) > 1000);
	fp = fopen("/proc/kallsyms", "r");
	while (!kp_kallsyms_restricted(ks) && fp && fgets(line, sizeof(line), fp)) {
		unsigned long long a;
		char t, name[256];

		if (sscanf(line, "%llx %c %255s", &a, &t, name) == 3 && t == 'T' &&
		    strcmp(name, "schedule") == 0) {
			CHECK_EQ_STR(lookup(ks, a + 1, NULL), "schedule");
			break;
		}
	}
	if (fp)
		fclose(fp);
	kp_kallsyms_free(ks);
}

/* A table loaded for some addresses answers exactly as the full table for
 * each of them: symbol starts, inside symbols, aliases, gaps, module
 * boundaries, below the first and beyond the last symbol. The two tables
 * are read full_rs and sparse_rs bytes at a time (0: the default). */
static size_t compare_sparse(const char *path, size_t stride, size_t full_rs, size_t sparse_rs)
{
	struct kp_kallsyms_opts fo = {.read_size = full_rs}, so = {.read_size = sparse_rs};
	struct kp_kallsyms *full = NULL, *sparse = NULL;
	struct kp_diag d;
	uint64_t *addrs = NULL;
	size_t n = 0, cap = 0, differ = 0;
	FILE *fp = fopen(path, "r");
	char line[512];

	if (!fp || kp_kallsyms_load_opts(path, NULL, 0, &fo, &full, &d) != 0) {
		if (fp)
			fclose(fp);
		return SIZE_MAX;
	}
	for (size_t i = 0; fgets(line, sizeof(line), fp); i++) {
		unsigned long long a;

		if (i % stride || sscanf(line, "%llx", &a) != 1)
			continue;
		kp_xgrow(&addrs, &cap, n + 5, sizeof(*addrs));
		addrs[n++] = a;
		addrs[n++] = a + 1;
		addrs[n++] = a + 0x37;
		addrs[n++] = a - 1;
		addrs[n++] = a + 300000; /* past the reach of most symbols */
	}
	fclose(fp);
	kp_xgrow(&addrs, &cap, n + 2, sizeof(*addrs));
	addrs[n++] = 0;
	addrs[n++] = UINT64_MAX;
	if (sparse_rs)
		CHECK_EQ_INT(kp_kallsyms_load_opts(path, addrs, n, &so, &sparse, &d), 0);
	else
		CHECK_EQ_INT(kp_kallsyms_load_for(path, addrs, n, &sparse, &d), 0);
	for (size_t i = 0; sparse && i < n; i++) {
		const char *mf = NULL, *ms = NULL;
		const char *a = kp_kallsyms_lookup(full, addrs[i], &mf);
		const char *b = kp_kallsyms_lookup(sparse, addrs[i], &ms);

		CHECK(kp_kallsyms_covers(sparse, addrs[i]));
		if ((a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0) ||
		    (mf == NULL) != (ms == NULL) || (mf && strcmp(mf, ms) != 0)) {
			if (differ++ < 5)
				fprintf(stderr, "%s: %#llx: full %s [%s], sparse %s [%s]\n", path,
					(unsigned long long)addrs[i], a ? a : "-", mf ? mf : "",
					b ? b : "-", ms ? ms : "");
		}
	}
	CHECK((sparse && kp_kallsyms_count(sparse) < kp_kallsyms_count(full)) ||
	      kp_kallsyms_count(full) < 50);
	if (sparse && sparse_rs != full_rs) {
		struct kp_kallsyms *ref = NULL;

		/* how the file was cut into reads does not change what is kept */
		CHECK_EQ_INT(kp_kallsyms_load_opts(path, addrs, n, &fo, &ref, &d), 0);
		CHECK(ref && kp_kallsyms_count(ref) == kp_kallsyms_count(sparse));
		kp_kallsyms_free(ref);
	}
	CHECK(!sparse || !kp_kallsyms_covers(sparse, 0x1234567));
	kp_kallsyms_free(sparse);
	kp_kallsyms_free(full);
	free(addrs);
	return differ;
}

static void test_sparse_load(void)
{
	struct kp_kallsyms_opts small = {.read_size = 256};
	struct kp_kallsyms *a = NULL, *b = NULL;
	struct kp_diag d;
	size_t differ = compare_sparse(fixture("kallsyms"), 1, 0, 0);
	bool same = false;

	CHECK_EQ_INT(differ, 0);
	differ = compare_sparse("/proc/kallsyms", 97, 0, 0);
	if (differ == SIZE_MAX) {
		printf("skip: /proc/kallsyms unreadable\n");
		return;
	}
	CHECK_EQ_INT(differ, 0);
	/* a small buffer: thousands of refills, each copying the candidates
	 * out of the buffer before it is overwritten */
	CHECK_EQ_INT(compare_sparse("/proc/kallsyms", 89, 0, 256), 0);
	/* the full table too; a module or BPF program loaded between the two
	 * reads changes the file, hence a second try */
	for (int try = 0; try < 2; try++) {
		CHECK_EQ_INT(kp_kallsyms_load("/proc/kallsyms", &a, &d), 0);
		CHECK_EQ_INT(kp_kallsyms_load_opts("/proc/kallsyms", NULL, 0, &small, &b, &d), 0);
		same = a && b && kp_kallsyms_count(a) == kp_kallsyms_count(b) &&
		       kp_kallsyms_bad_lines(a) == kp_kallsyms_bad_lines(b);
		kp_kallsyms_free(a);
		kp_kallsyms_free(b);
		a = b = NULL;
		if (same)
			break;
	}
	CHECK(same);
}

/* What a sparse load keeps, exactly: for two wanted addresses, the symbol
 * at or below each (do_one, local_fn) and the one above each (local_fn
 * again, strong_fn); local_fn, both the highest and the lowest symbol of
 * its gap, is kept once. */
static void test_sparse_kept(void)
{
	const uint64_t addrs[] = {0xffffffff81000200, 0xffffffff81000100};
	struct kp_kallsyms *ks = NULL;
	struct kp_diag d;

	for (size_t rs = 0; rs <= 256; rs += 64) {
		struct kp_kallsyms_opts opts = {.read_size = rs};

		CHECK_EQ_INT(kp_kallsyms_load_opts(fixture("kallsyms"), addrs, 2, &opts, &ks, &d),
			     0);
		if (!ks)
			continue;
		CHECK_EQ_INT(kp_kallsyms_count(ks), 3);
		CHECK_EQ_INT(kp_kallsyms_bad_lines(ks), 3);
		CHECK_EQ_STR(lookup(ks, addrs[0], NULL), "local_fn");
		CHECK_EQ_STR(lookup(ks, addrs[1], NULL), "do_one");
		CHECK(!kp_kallsyms_covers(ks, addrs[1] + 1));
		kp_kallsyms_free(ks);
	}
}

static char tmpdir[64];

static const char *write_tmp(const char *name, const char *text, size_t len)
{
	static char path[128];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fp = fopen(path, "w");
	CHECK(fp != NULL);
	if (fp) {
		CHECK_EQ_INT(fwrite(text, 1, len, fp), len);
		fclose(fp);
	}
	return path;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "r");
	char *text = kp_xmalloc(65536);

	*len = fp ? fread(text, 1, 65535, fp) : 0;
	if (fp)
		fclose(fp);
	text[*len] = '\0';
	return text;
}

/* The read buffer ends at every position of every line in turn (all sizes
 * from just above the longest line to the whole file): the same table,
 * full and sparse; and the same without a final newline. */
static void test_split_lines(void)
{
	size_t len, longest = 0, cur = 0;
	char *text = slurp(fixture("kallsyms"), &len);
	const char *path;

	CHECK(len > 200 && len < 65535);
	for (size_t i = 0; i < len; i++) {
		cur = text[i] == '\n' ? 0 : cur + 1;
		if (cur > longest)
			longest = cur;
	}
	for (size_t rs = longest + 1; rs <= len + 1; rs++) {
		check_fixture(fixture("kallsyms"), rs);
		CHECK_EQ_INT(compare_sparse(fixture("kallsyms"), 1, 0, rs), 0);
	}
	while (len && text[len - 1] == '\n')
		len--;
	path = write_tmp("no-final-newline", text, len);
	check_fixture(path, 0);
	for (size_t rs = longest + 1; rs <= len + 1; rs++) {
		check_fixture(path, rs);
		CHECK_EQ_INT(compare_sparse(path, 1, 0, rs), 0);
	}
	free(text);
}

static struct kp_kallsyms *load_rs(const char *path, size_t read_size)
{
	struct kp_kallsyms_opts opts = {.read_size = read_size};
	struct kp_kallsyms *ks = NULL;
	struct kp_diag d;

	CHECK_EQ_INT(kp_kallsyms_load_opts(path, NULL, 0, &opts, &ks, &d), 0);
	return ks;
}

/* A line that does not fit the read buffer is skipped to its newline and
 * counted, whether it spans two buffers or many, ends the file or not; the
 * lines after it are read. */
static void test_long_lines(void)
{
	char longname[301], text[4096];
	struct kp_kallsyms *ks;
	const char *path;
	int n;

	memset(longname, 'L', 300);
	longname[300] = '\0';
	n = snprintf(text, sizeof(text),
		     "ffffffff81000000 T first_fn\n"
		     "ffffffff81000100 T %s\n"
		     "ffffffff81000200 T after_long\n"
		     "%s%s\n"
		     "ffffffff81000500 T last_fn",
		     longname, longname, longname);
	path = write_tmp("long-lines", text, (size_t)n);
	for (size_t rs = 64; rs <= 128; rs++) {
		int failed = kp_test_failed;

		ks = load_rs(path, rs);
		if (!ks)
			continue;
		CHECK_EQ_INT(kp_kallsyms_bad_lines(ks), 2);
		CHECK_EQ_INT(kp_kallsyms_count(ks), 3);
		CHECK_EQ_STR(lookup(ks, 0xffffffff81000000, NULL), "first_fn");
		CHECK_EQ_STR(lookup(ks, 0xffffffff81000150, NULL), "first_fn");
		CHECK_EQ_STR(lookup(ks, 0xffffffff81000200, NULL), "after_long");
		CHECK_EQ_STR(lookup(ks, 0xffffffff81000508, NULL), "last_fn");
		kp_kallsyms_free(ks);
		CHECK_EQ_INT(compare_sparse(path, 1, rs, rs), 0);
		if (kp_test_failed != failed)
			fprintf(stderr, "  (long lines read %zu bytes at a time)\n", rs);
	}
	/* with room enough, the long name is a symbol and the other line garbage */
	ks = load_rs(path, 0);
	CHECK(ks && kp_kallsyms_bad_lines(ks) == 1 && kp_kallsyms_count(ks) == 4);
	CHECK(ks && strcmp(lookup(ks, 0xffffffff81000150, NULL), longname) == 0);
	kp_kallsyms_free(ks);

	/* the limit: a line of read_size - 1 bytes fits (with its newline), one
	 * of read_size bytes does not; 19 bytes of address and type */
	n = snprintf(text, sizeof(text),
		     "ffffffff81000000 T %.44s\n"
		     "ffffffff81000100 T %.45s\n"
		     "ffffffff81000200 T after\n",
		     longname, longname);
	path = write_tmp("limit", text, (size_t)n);
	ks = load_rs(path, 64);
	CHECK(ks && kp_kallsyms_bad_lines(ks) == 1 && kp_kallsyms_count(ks) == 2);
	CHECK(ks && strlen(lookup(ks, 0xffffffff81000180, NULL)) == 44);
	kp_kallsyms_free(ks);

	/* a long last line, with and without its newline */
	for (int nl = 0; nl < 2; nl++) {
		n = snprintf(text, sizeof(text), "ffffffff81000000 T first_fn\n%s%s", longname,
			     nl ? "\n" : "");
		path = write_tmp("long-last", text, (size_t)n);
		ks = load_rs(path, 100);
		CHECK(ks && kp_kallsyms_bad_lines(ks) == 1 && kp_kallsyms_count(ks) == 1);
		CHECK(ks && strcmp(lookup(ks, 0xffffffff81000010, NULL), "first_fn") == 0);
		kp_kallsyms_free(ks);
	}
}

/* An empty file (or one of blank lines) is an empty table, not an error,
 * and not a kptr_restrict'ed one. */
static void test_empty(void)
{
	static const char *const texts[] = {"", "\n\n\n"};
	uint64_t addr = 0xffffffff81000000;

	for (size_t i = 0; i < 2; i++) {
		const char *path = write_tmp("empty", texts[i], strlen(texts[i]));
		struct kp_kallsyms *ks = NULL, *sparse = NULL;
		struct kp_diag d;

		CHECK_EQ_INT(kp_kallsyms_load(path, &ks, &d), 0);
		CHECK_EQ_INT(kp_kallsyms_load_for(path, &addr, 1, &sparse, &d), 0);
		for (int k = 0; k < 2; k++) {
			struct kp_kallsyms *t = k ? sparse : ks;

			CHECK(t != NULL);
			if (!t)
				continue;
			CHECK_EQ_INT(kp_kallsyms_count(t), 0);
			CHECK_EQ_INT(kp_kallsyms_bad_lines(t), 0);
			CHECK(!kp_kallsyms_restricted(t));
			CHECK(kp_kallsyms_covers(t, addr));
			CHECK(kp_kallsyms_lookup(t, addr, NULL) == NULL);
		}
		kp_kallsyms_free(ks);
		kp_kallsyms_free(sparse);
	}
}

static void setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/kp-kallsyms-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		exit(1);
	}
}

static void cleanup(void)
{
	if (!getenv("KP_KEEP_TMP"))
		kp_test_sh("rm -rf %s", tmpdir);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double cpu_ms(const struct rusage *ru)
{
	return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1e3 +
	       (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e3;
}

/* Every stride-th text symbol of path, plus one byte (where a sample
 * lands). */
static uint64_t *bench_addrs(const char *path, unsigned long stride, size_t *n)
{
	uint64_t *addrs = NULL;
	size_t cap = 0, ntext = 0;
	char line[512];
	FILE *fp = fopen(path, "r");

	*n = 0;
	if (!fp) {
		perror(path);
		exit(1);
	}
	while (fgets(line, sizeof(line), fp)) {
		unsigned long long a;
		char t;

		if (sscanf(line, "%llx %c", &a, &t) == 2 && (t == 't' || t == 'T') &&
		    ntext++ % (stride ? stride : 1) == 0) {
			kp_xgrow(&addrs, &cap, *n + 1, sizeof(*addrs));
			addrs[(*n)++] = a + 1;
		}
	}
	fclose(fp);
	return addrs;
}

/* KP_BENCH=1: what kprof pays at the end of a recording. Takes every
 * KP_BENCH_STRIDE-th (default 400: ~300 here) text symbol of
 * KP_BENCH_FILE (default /proc/kallsyms), plus one byte, as the sampled
 * addresses; loads the file sparse for them once and prints the load's own
 * wall, CPU and page-fault figures, then exits. KP_BENCH_READ sets the
 * read buffer size (bytes), KP_BENCH_FULL=1 times a full load instead,
 * KP_BENCH_ADDRS=FILE keeps
 * the addresses in FILE (written on the first run, read on the next ones)
 * so that /usr/bin/time of the whole process measures the load alone. */
static void bench(void)
{
	const char *path = getenv("KP_BENCH_FILE") ? getenv("KP_BENCH_FILE") : "/proc/kallsyms";
	const char *keep = getenv("KP_BENCH_ADDRS");
	unsigned long stride =
		getenv("KP_BENCH_STRIDE") ? strtoul(getenv("KP_BENCH_STRIDE"), NULL, 10) : 400;
	struct kp_kallsyms_opts opts = {
		.read_size =
			getenv("KP_BENCH_READ") ? strtoul(getenv("KP_BENCH_READ"), NULL, 0) : 0,
	};
	bool full = getenv("KP_BENCH_FULL") != NULL;
	struct kp_kallsyms *ks = NULL;
	uint64_t *addrs = NULL;
	size_t n = 0, cap = 0, found = 0;
	struct rusage r0, r1;
	struct kp_diag d;
	double t0, t1;
	FILE *fp;
	int err;

	if (!getenv("KP_BENCH"))
		return;
	if (keep && (fp = fopen(keep, "r"))) {
		unsigned long long a;

		while (fscanf(fp, "%llx", &a) == 1) {
			kp_xgrow(&addrs, &cap, n + 1, sizeof(*addrs));
			addrs[n++] = a;
		}
		fclose(fp);
	} else {
		addrs = bench_addrs(path, stride, &n);
		if (keep && (fp = fopen(keep, "w"))) {
			for (size_t i = 0; i < n; i++)
				fprintf(fp, "%llx\n", (unsigned long long)addrs[i]);
			fclose(fp);
		}
	}
	getrusage(RUSAGE_SELF, &r0);
	t0 = now_ms();
	err = kp_kallsyms_load_opts(path, full ? NULL : addrs, n, &opts, &ks, &d);
	t1 = now_ms();
	getrusage(RUSAGE_SELF, &r1);
	if (err) {
		fprintf(stderr, "%s\n", d.msg);
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		found += kp_kallsyms_lookup(ks, addrs[i], NULL) != NULL;
	printf("%s %zu addrs (%zu named, %zu kept): %.2f ms wall, %.2f ms cpu, %ld minor "
	       "faults, maxrss %ld KiB\n",
	       full ? "load" : "load_for", n, found, kp_kallsyms_count(ks), t1 - t0,
	       cpu_ms(&r1) - cpu_ms(&r0), r1.ru_minflt - r0.ru_minflt, r1.ru_maxrss);
	kp_kallsyms_free(ks);
	free(addrs);
	exit(0);
}

KP_TEST_MAIN(bench, setup, test_parse_and_lookup, test_missing_file, test_facade_kernel,
	     test_facade_name_once, test_facade_hidden, test_facade_unreadable, test_real_kallsyms,
	     test_sparse_load, test_sparse_kept, test_split_lines, test_long_lines, test_empty,
	     cleanup)
