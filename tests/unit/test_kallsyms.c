/* kallsyms parsing and lookup, on fixtures: unsorted module lines,
 * aliases at one address, weak vs strong, data symbols ending text ranges,
 * garbage lines, and a kptr_restrict'ed file with every address zero. */
#include <stdlib.h>
#include <string.h>

#include <stdint.h>

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

static void test_parse_and_lookup(void)
{
	struct kp_kallsyms *ks = NULL;
	struct kp_diag d;
	const char *mod = "x";

	CHECK_EQ_INT(kp_kallsyms_load(fixture("kallsyms"), &ks, &d), 0);
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
	loc.addr = 0xffffffff81000450;
	CHECK(!kp_sym_resolve(sym, &loc, &f));
	CHECK_EQ_STR(f.frames[0].name, "[unknown]");
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
	CHECK_EQ_STR(f.frames[0].name, "[unknown]");
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
 * boundaries, below the first and beyond the last symbol. */
static size_t compare_sparse(const char *path, size_t stride)
{
	struct kp_kallsyms *full = NULL, *sparse = NULL;
	struct kp_diag d;
	uint64_t *addrs = NULL;
	size_t n = 0, cap = 0, differ = 0;
	FILE *fp = fopen(path, "r");
	char line[512];

	if (!fp || kp_kallsyms_load(path, &full, &d) != 0) {
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
	CHECK(!sparse || !kp_kallsyms_covers(sparse, 0x1234567));
	kp_kallsyms_free(sparse);
	kp_kallsyms_free(full);
	free(addrs);
	return differ;
}

static void test_sparse_load(void)
{
	size_t differ = compare_sparse(fixture("kallsyms"), 1);

	CHECK_EQ_INT(differ, 0);
	differ = compare_sparse("/proc/kallsyms", 97);
	if (differ == SIZE_MAX)
		printf("skip: /proc/kallsyms unreadable\n");
	else
		CHECK_EQ_INT(differ, 0);
}

KP_TEST_MAIN(test_parse_and_lookup, test_missing_file, test_facade_kernel, test_facade_hidden,
	     test_facade_unreadable, test_real_kallsyms, test_sparse_load)
