/* The profile loader of `kprof report` and `kprof diff`
 * (formats/load.h): the input is written to a file in a private
 * temporary directory and loaded by its path, as the CLI loads a file. The
 * loader tells folded text, zstd-compressed folded text and .kprof
 * recordings apart by their first bytes; fuzz_recording covers the
 * recording's body, so here the fuzzer's bytes are either folded text
 * behind a valid zstd frame (the text is what it controls) or the whole
 * file (magic sniffing, the zstd reader and the folded reader get raw
 * bytes).
 *
 * Checks: a refusal is one line naming the file, and gives no profile;
 * the format reported is the one the first bytes say; folded text (plain
 * or decompressed) loads exactly as kp_folded_read reads the same text
 * (refused when it refuses or finds no stack; the same bad-line count, the
 * first bad line named; the same exact total, which for two-count lines is
 * the AFTER counts', with info.differential set); what loads has every id
 * in range (each value folded: the fold looks every location, frame and
 * string up), folds to the profile's exact total, and the folded text
 * written of it reads back, without a bad line, to the same total.
 *
 * Input: byte 0 the mode (bit 0: the rest is the file as is, else folded
 * text wrapped in a zstd frame; bit 1 --strict; bit 2 a count name
 * "cpu" instead of the default), then the data.
 *
 * Seeds (corpus/profile_load/, see its README): small files of
 * tests/golden/data (collapsed and differential folded text) behind 0x00
 * and 0x01, one zstd-compressed and one .kprof recording behind 0x01. In
 * tests/fuzz/CMakeLists.txt: kp_fuzz_target(profile_load
 * fuzz_profile_load.c), KP_FUZZ_RUNS_profile_load (docs/fuzzing.md). */
#include <stdbool.h>

#include "formats/folded_read.h"
#include "formats/folded_write.h"
#include "profile/folded.h"
#include "profile/fold.h"
#include "formats/load.h"
#include "formats/recording.h"
#include "formats/zstdio.h"
#include "fuzz.h"
#include "profile/profile.h"

static char dir[64], path[96];

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_tmpdir(dir, sizeof(dir), "profile_load");
	snprintf(path, sizeof(path), "%s/in.profile", dir);
	atexit(cleanup);
	return 0;
}

/* body[0..n) in a zstd frame (caller frees). */
static char *wrap(const uint8_t *body, size_t n, size_t *len)
{
	struct fuzz_out out;
	struct kp_zstd_writer *z;
	struct kp_diag d;

	fuzz_out_open(&out);
	z = kp_zstd_writer_new(out.f, 1);
	if (n)
		FUZZ_CHECK(fwrite(body, 1, n, kp_zstd_writer_file(z)) == n);
	FUZZ_CHECK(kp_zstd_writer_finish(z, &d) == 0);
	return fuzz_out_close(&out, len);
}

/* The bytes the zstd reader makes of file[0..n) (caller frees), or NULL
 * when it reports an error. */
static char *unwrap(const char *file, size_t n, size_t *len)
{
	FILE *in = fmemopen((void *)file, n, "r");
	struct kp_zstd_reader *z;
	struct fuzz_out out;
	char buf[4096];
	size_t k;
	char *text;

	FUZZ_CHECK(in != NULL);
	z = kp_zstd_reader_new(in);
	fuzz_out_open(&out);
	while ((k = fread(buf, 1, sizeof(buf), kp_zstd_reader_file(z))) > 0)
		FUZZ_CHECK(fwrite(buf, 1, k, out.f) == k);
	text = fuzz_out_close(&out, len);
	if (kp_zstd_reader_error(z)) {
		free(text);
		text = NULL;
	}
	kp_zstd_reader_free(z);
	fclose(in);
	return text;
}

/* v with its decimals in the shortest exact form, to compare counts of
 * different decimals. */
static bool same_count(kp_count a, unsigned da, kp_count b, unsigned db)
{
	char sa[KP_COUNT_BUF], sb[KP_COUNT_BUF];

	kp_count_format(a, da, sa);
	kp_count_format(b, db, sb);
	return strcmp(sa, sb) == 0;
}

/* What kp_folded_read makes of text[0..n). */
struct direct {
	int err;
	uint64_t bad;
	struct kp_folded *f;
};

static void read_direct(const char *text, size_t n, bool strict, struct direct *r)
{
	struct kp_folded_read_opts ro = {.strict = strict};
	struct kp_diag d = {{0}};
	/* fmemopen of 0 bytes is allowed (glibc 2.22 on) but needs a buffer */
	FILE *in = fmemopen((void *)(n ? text : ""), n, "r");

	FUZZ_CHECK(in != NULL);
	r->bad = 0;
	r->f = kp_folded_new();
	r->err = kp_folded_read(r->f, in, path, &ro, &r->bad, &d);
	fclose(in);
}

/* Each value folded (every id looked up) to the profile's exact total;
 * the folded text of the first written and read back to the same. */
static void check_profile(const struct kp_profile *p)
{
	for (size_t v = 0; v < kp_profile_nvalues(p); v++) {
		const struct kp_profile_value_type *vt = kp_profile_value_type(p, v);
		struct kp_folded *f = kp_folded_new(), *g;
		struct kp_fold_opts o = {.root_pid = v & 1, .root_tid = v & 2, .value = v};
		struct kp_folded_read_opts ro = {0};
		struct fuzz_out out;
		struct kp_diag d;
		uint64_t bad = 0;
		char *text;
		size_t len;
		FILE *in;

		if (!kp_fold_add_profile(f, p, &o)) {
			/* only decimals or sums a table cannot keep exact */
			kp_folded_free(f);
			continue;
		}
		FUZZ_CHECK(!kp_folded_differential(f));
		FUZZ_CHECK(same_count(kp_folded_total_exact(f), kp_folded_decimals(f),
				      kp_profile_total(p, v), vt->decimals));
		fuzz_out_open(&out);
		FUZZ_CHECK(kp_folded_write(f, out.f, KP_FOLDED_ANNOTATE_ALL) == 0);
		text = fuzz_out_close(&out, &len);
		in = fmemopen(len ? text : (char *)"", len, "r");
		FUZZ_CHECK(in != NULL);
		g = kp_folded_new();
		FUZZ_CHECK(kp_folded_read(g, in, "again", &ro, &bad, &d) == 0);
		FUZZ_CHECK(bad == 0);
		FUZZ_CHECK(!kp_folded_differential(g));
		FUZZ_CHECK(kp_folded_nstacks(g) == kp_folded_nstacks(f));
		FUZZ_CHECK(same_count(kp_folded_total_exact(g), kp_folded_decimals(g),
				      kp_folded_total_exact(f), kp_folded_decimals(f)));
		fclose(in);
		free(text);
		kp_folded_free(g);
		kp_folded_free(f);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t mode = fuzz_byte(&in);
	bool raw = mode & 1, strict = mode & 2;
	const char *countname = mode & 4 ? "cpu" : NULL;
	struct kp_load_opts lo = {.strict = strict, .countname = countname};
	struct kp_load_info info;
	struct kp_profile *p = NULL;
	struct kp_diag d = {{0}};
	char *file, *text = NULL;
	size_t len, tlen = 0;
	bool is_kprof, is_zstd, binary, folded;
	struct direct dr = {0};
	FILE *fp;
	int err;

	if (raw) {
		file = fuzz_strndup(in.p, in.n);
		len = in.n;
	} else {
		file = wrap(in.p, in.n, &len);
	}
	fp = fopen(path, "we");
	FUZZ_CHECK(fp != NULL);
	FUZZ_CHECK(!len || fwrite(file, 1, len, fp) == len);
	FUZZ_CHECK(fclose(fp) == 0);

	err = kp_load_profile(path, &lo, &p, &info, &d);

	/* what the first bytes say (the loader looks at 4096 of them) */
	is_kprof = kp_recording_magic(file, len);
	is_zstd = !is_kprof && kp_zstd_magic(file, len);
	binary = !is_kprof && !is_zstd && memchr(file, 0, len < 4096 ? len : 4096);
	folded = !is_kprof && !binary;
	if (is_kprof)
		FUZZ_CHECK(info.format && strcmp(info.format, "kprof") == 0);
	else if (is_zstd)
		FUZZ_CHECK(info.format && strcmp(info.format, "folded (zstd)") == 0);
	else if (binary)
		FUZZ_CHECK(err < 0);
	else
		FUZZ_CHECK(info.format && strcmp(info.format, "folded") == 0);
	FUZZ_CHECK(raw || is_zstd);

	if (err) {
		/* refused: one line that names the file, and no profile */
		FUZZ_CHECK(err < 0 && p == NULL);
		FUZZ_CHECK(strstr(d.msg, path) != NULL);
		FUZZ_CHECK(strchr(d.msg, '\n') == NULL);
	} else {
		FUZZ_CHECK(p != NULL);
		check_profile(p);
	}
	if (info.bad_lines)
		FUZZ_CHECK(strstr(info.first_bad, path) && !strchr(info.first_bad, '\n'));

	/* folded text, plain or decompressed: as kp_folded_read reads it */
	if (folded) {
		if (!raw) {
			text = fuzz_strndup(in.p, in.n);
			tlen = in.n;
		} else if (is_zstd) {
			text = unwrap(file, len, &tlen);
		} else {
			text = fuzz_strndup(in.p, in.n);
			tlen = in.n;
		}
	}
	if (text) {
		read_direct(text, tlen, strict, &dr);
		if (dr.err || !kp_folded_nstacks(dr.f)) {
			FUZZ_CHECK(err < 0);
		} else {
			const struct kp_profile_value_type *vt;

			FUZZ_CHECK(err == 0 && p);
			FUZZ_CHECK(info.bad_lines == dr.bad);
			FUZZ_CHECK(info.differential == kp_folded_differential(dr.f));
			FUZZ_CHECK(kp_profile_nvalues(p) == 1);
			vt = kp_profile_value_type(p, 0);
			FUZZ_CHECK(strcmp(kp_profile_str(p, vt->type, NULL),
					  countname ? countname : "samples") == 0);
			/* two-count lines: the profile holds AFTER, the table's count */
			FUZZ_CHECK(same_count(kp_profile_total(p, 0), vt->decimals,
					      kp_folded_total_exact(dr.f),
					      kp_folded_decimals(dr.f)));
		}
		kp_folded_free(dr.f);
		free(text);
	} else if (folded) {
		/* the zstd reader failed: so did the loader */
		FUZZ_CHECK(err < 0);
	}
	kp_profile_free(p);
	free(file);
	return 0;
}
