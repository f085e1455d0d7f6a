/* The pprof writer: a profile built as the recorder and the symbolizer
 * build one (two value types, modules with build-ids, a kernel frame, an
 * inline chain with files and lines, a location left unnamed, the run's
 * metadata) decodes (protobuf-c) into exactly the Profile message the
 * mapping in formats/pprof.h describes; `go tool pprof` reads the
 * gzipped file and shows the right top function, its file and line, the
 * stacks, the inlined lines and the labels; values that do not fit
 * pprof's int64 or have decimals are refused; names are valid UTF-8.
 *
 * go is needed for the `go tool pprof` part: skipped without it, a failure
 * when CI=true. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/pprof.h"
#include "kp_test.h"
#include "profile.pb-c.h"
#include "profile/profile.h"

typedef Perftools__Profiles__Profile pb_profile;

static uint32_t fn(struct kp_profile *p, const char *name, const char *file)
{
	return kp_profile_function(p, kp_profile_intern(p, name, strlen(name)),
				   kp_profile_intern(p, file, strlen(file)));
}

static uint32_t user_loc(struct kp_profile *p, uint32_t obj, uint64_t off)
{
	struct kp_loc l = {.addr = off, .obj = obj, .kind = KP_LOC_USER};

	return kp_profile_location(p, &l);
}

/* The profile of a benchmark "bench" (pid 41, tid 42): main -> hot_loop ->
 * inlined add_one (90 samples), main -> hot_loop (6), main -> libc's
 * unnamed location (3), main -> write's kernel entry (1); cpu-clock at
 * 999 Hz, so each sample is about 1001001 ns. */
static struct kp_profile *bench_profile(void)
{
	struct kp_profile *p = kp_profile_new();
	struct kp_profile_mapping bench = {.kind = KP_LOC_USER, .obj = 1, .build_id_len = 20};
	struct kp_profile_mapping libc = {.kind = KP_LOC_USER, .obj = 2};
	struct kp_loc kl = {.addr = 0xffffffff81a00010ull, .kind = KP_LOC_KERNEL};
	uint32_t lmain = user_loc(p, 1, 0x1150), lhot = user_loc(p, 1, 0x1234),
		 lhot2 = user_loc(p, 1, 0x1240), llibc = user_loc(p, 2, 0x2a0f0),
		 lkern = kp_profile_location(p, &kl);
	struct kp_profile_frame fmain = {fn(p, "main", "/src/bench.c"), 12, KP_FRAME_USER};
	struct kp_profile_frame fhot[2] = {
		{fn(p, "hot_loop", "/src/bench.c"), 30, KP_FRAME_USER},
		{fn(p, "add_one", "/src/util.h"), 7, KP_FRAME_INLINE},
	};
	struct kp_profile_frame fhot2 = {fn(p, "hot_loop", "/src/bench.c"), 31, KP_FRAME_USER};
	struct kp_profile_frame fk = {fn(p, "entry_SYSCALL_64", ""), 0, KP_FRAME_KERNEL};
	struct kp_profile_root r = {kp_profile_intern(p, "bench", 5), 41, 42};
	uint32_t s1[] = {lmain, lhot}, s2[] = {lmain, lhot2}, s3[] = {lmain, llibc},
		 s4[] = {lmain, lkern};
	kp_count v1[] = {90, 90090090}, v2[] = {6, 6006006}, v3[] = {3, 3003003},
		 v4[] = {1, 1001001};

	for (int i = 0; i < 20; i++)
		bench.build_id[i] = (uint8_t)(0xa0 + i);
	bench.path = kp_profile_intern(p, "/opt/kp-test/bench", 18);
	libc.path = kp_profile_intern(p, "/opt/kp-test/libc.so.6", 22);
	kp_profile_set_mapping(p, &bench);
	kp_profile_set_mapping(p, &libc);
	kp_profile_add_value_type(p, "samples", "count", 0);
	kp_profile_add_value_type(p, "cpu", "nanoseconds", 0);
	kp_profile_set_frames(p, lmain, &fmain, 1, true);
	kp_profile_set_frames(p, lhot, fhot, 2, true);
	kp_profile_set_frames(p, lhot2, &fhot2, 1, true);
	kp_profile_set_frames(p, lkern, &fk, 1, true);
	CHECK(kp_profile_add(p, &r, s1, 2, v1));
	CHECK(kp_profile_add(p, &r, s2, 2, v2));
	CHECK(kp_profile_add(p, &r, s3, 2, v3));
	CHECK(kp_profile_add(p, &r, s4, 2, v4));
	kp_profile_set_meta(p, KP_META_VERSION, "0.1.0");
	kp_profile_set_meta(p, KP_META_COMMAND, "kprof -F 999 -- ./bench");
	kp_profile_set_meta(p, KP_META_EVENT, "cpu-clock");
	kp_profile_set_meta(p, KP_META_FREQUENCY, "999");
	kp_profile_set_meta(p, KP_META_START, "2026-12-01T07:42:53Z");
	kp_profile_set_meta(p, KP_META_DURATION, "30.02");
	return p;
}

static pb_profile *decode(const struct kp_profile *p, const struct kp_pprof_opts *o)
{
	uint8_t *buf;
	size_t len;
	struct kp_diag d = {{0}};
	pb_profile *m;

	CHECK_EQ_INT(kp_pprof_encode(p, o, &buf, &len, &d), 0);
	m = perftools__profiles__profile__unpack(NULL, len, buf);
	CHECK(m != NULL);
	free(buf);
	return m;
}

static const char *s(const pb_profile *m, int64_t i)
{
	return i >= 0 && (size_t)i < m->n_string_table ? m->string_table[i] : "(out of range)";
}

static const char *line_fn(const pb_profile *m, const Perftools__Profiles__Line *ln)
{
	for (size_t i = 0; i < m->n_function; i++)
		if (m->function[i]->id == ln->function_id)
			return s(m, m->function[i]->name);
	return "(no function)";
}

static const char *line_file(const pb_profile *m, const Perftools__Profiles__Line *ln)
{
	for (size_t i = 0; i < m->n_function; i++)
		if (m->function[i]->id == ln->function_id)
			return s(m, m->function[i]->filename);
	return "(no function)";
}

static void test_structure(void)
{
	struct kp_profile *p = bench_profile();
	pb_profile *m = decode(p, NULL);
	const Perftools__Profiles__Location *loc;
	const Perftools__Profiles__Sample *sm;
	bool seen_event = false;

	if (!m)
		goto out;
	CHECK_EQ_STR(s(m, 0), "");
	CHECK_EQ_INT(m->n_sample_type, 2);
	CHECK_EQ_STR(s(m, m->sample_type[0]->type), "samples");
	CHECK_EQ_STR(s(m, m->sample_type[0]->unit), "count");
	CHECK_EQ_STR(s(m, m->sample_type[1]->type), "cpu");
	CHECK_EQ_STR(s(m, m->sample_type[1]->unit), "nanoseconds");
	CHECK_EQ_STR(s(m, m->default_sample_type), "samples");
	CHECK(m->period_type != NULL);
	if (m->period_type) {
		CHECK_EQ_STR(s(m, m->period_type->type), "cpu");
		CHECK_EQ_STR(s(m, m->period_type->unit), "nanoseconds");
	}
	CHECK_EQ_INT(m->period, 1001001); /* 1e9 / 999, rounded */
	CHECK_EQ_INT(m->time_nanos, 1796110973000000000ll);
	CHECK_EQ_INT(m->duration_nanos, 30020000000ll);
	CHECK_EQ_INT(m->n_comment, 6);
	for (size_t i = 0; i < m->n_comment; i++)
		seen_event |= strcmp(s(m, m->comment[i]), "event=cpu-clock") == 0;
	CHECK(seen_event);

	/* mappings: bench, libc, then the kernel's */
	CHECK_EQ_INT(m->n_mapping, 3);
	CHECK_EQ_INT(m->mapping[0]->id, 1);
	CHECK_EQ_STR(s(m, m->mapping[0]->filename), "/opt/kp-test/bench");
	CHECK_EQ_STR(s(m, m->mapping[0]->build_id), "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3");
	CHECK_EQ_INT(m->mapping[0]->memory_start, 0x1150);
	CHECK_EQ_INT(m->mapping[0]->file_offset, 0x1150);
	CHECK_EQ_INT(m->mapping[0]->memory_limit, 0x1241);
	CHECK(m->mapping[0]->has_functions && m->mapping[0]->has_filenames &&
	      m->mapping[0]->has_line_numbers && m->mapping[0]->has_inline_frames);
	CHECK_EQ_STR(s(m, m->mapping[1]->filename), "/opt/kp-test/libc.so.6");
	CHECK_EQ_STR(s(m, m->mapping[1]->build_id), "");
	CHECK(!m->mapping[1]->has_functions); /* for the reader to symbolize */
	CHECK_EQ_STR(s(m, m->mapping[2]->filename), "[kernel.kallsyms]");
	CHECK_EQ_INT(m->mapping[2]->memory_start, 0xffffffff81a00010ull);
	CHECK(m->mapping[2]->has_functions && !m->mapping[2]->has_filenames);

	/* locations: ids from 1 in the profile's order, lines innermost first */
	CHECK_EQ_INT(m->n_location, 5);
	loc = m->location[1];
	CHECK_EQ_INT(loc->id, 2);
	CHECK_EQ_INT(loc->mapping_id, 1);
	CHECK_EQ_INT(loc->address, 0x1234);
	CHECK_EQ_INT(loc->n_line, 2);
	if (loc->n_line == 2) {
		CHECK_EQ_STR(line_fn(m, loc->line[0]), "add_one");
		CHECK_EQ_STR(line_file(m, loc->line[0]), "/src/util.h");
		CHECK_EQ_INT(loc->line[0]->line, 7);
		CHECK_EQ_STR(line_fn(m, loc->line[1]), "hot_loop");
		CHECK_EQ_STR(line_file(m, loc->line[1]), "/src/bench.c");
		CHECK_EQ_INT(loc->line[1]->line, 30);
	}
	/* no linkage names: pprof shows kprof's names as they are */
	for (size_t i = 0; i < m->n_function; i++)
		CHECK_EQ_INT(m->function[i]->system_name, 0);
	CHECK_EQ_INT(m->location[3]->mapping_id, 2);
	CHECK_EQ_INT(m->location[3]->address, 0x2a0f0);
	CHECK_EQ_INT(m->location[3]->n_line, 0);
	CHECK_EQ_INT(m->location[4]->mapping_id, 3);
	CHECK_EQ_INT(m->location[4]->address, 0xffffffff81a00010ull);

	/* samples: leaf first, both values, the task's labels */
	CHECK_EQ_INT(m->n_sample, 4);
	sm = m->sample[0];
	CHECK_EQ_INT(sm->n_location_id, 2);
	CHECK_EQ_INT(sm->location_id[0], 2);
	CHECK_EQ_INT(sm->location_id[1], 1);
	CHECK_EQ_INT(sm->n_value, 2);
	CHECK_EQ_INT(sm->value[0], 90);
	CHECK_EQ_INT(sm->value[1], 90090090);
	CHECK_EQ_INT(sm->n_label, 3);
	if (sm->n_label == 3) {
		CHECK_EQ_STR(s(m, sm->label[0]->key), "comm");
		CHECK_EQ_STR(s(m, sm->label[0]->str), "bench");
		CHECK_EQ_STR(s(m, sm->label[1]->key), "pid");
		CHECK_EQ_INT(sm->label[1]->num, 41);
		CHECK_EQ_STR(s(m, sm->label[2]->key), "tid");
		CHECK_EQ_INT(sm->label[2]->num, 42);
	}
	CHECK(m->sample[3]->label == sm->label || m->sample[3]->n_label == 3);
	perftools__profiles__profile__free_unpacked(m, NULL);

	/* the value kprof draws is the one readers show first */
	m = decode(p, &(struct kp_pprof_opts){.default_value = 1});
	if (m)
		CHECK_EQ_STR(s(m, m->default_sample_type), "cpu");
out:
	perftools__profiles__profile__free_unpacked(m, NULL);
	kp_profile_free(p);
}

/* Locations of no module (names from folded text, a raw address never
 * named) share one mapping without a file, which readers must not try to
 * symbolize. */
static void test_no_module(void)
{
	struct kp_profile *p = kp_profile_new();
	struct kp_loc raw = {.addr = 0x7f0012345678ull, .kind = KP_LOC_UNKNOWN};
	uint32_t st[] = {kp_profile_named_location(p, "main", 4, KP_FRAME_USER),
			 kp_profile_location(p, &raw)};
	struct kp_profile_root r = {kp_profile_intern(p, "a", 1), 0, 0};
	kp_count one = 1;
	pb_profile *m;

	kp_profile_add_value_type(p, "samples", "count", 0);
	CHECK(kp_profile_add(p, &r, st, 2, &one));
	m = decode(p, NULL);
	if (m) {
		CHECK_EQ_INT(m->n_mapping, 1);
		CHECK_EQ_STR(s(m, m->mapping[0]->filename), "");
		CHECK(m->mapping[0]->has_functions);
		CHECK_EQ_INT(m->mapping[0]->memory_start, 0);
		CHECK_EQ_INT(m->mapping[0]->memory_limit, 0);
		CHECK_EQ_INT(m->location[0]->mapping_id, 1);
		CHECK_EQ_INT(m->location[0]->address, 0); /* a name has no address */
		CHECK_EQ_INT(m->location[0]->n_line, 1);
		CHECK_EQ_INT(m->location[1]->mapping_id, 1);
		CHECK_EQ_INT(m->location[1]->address, 0x7f0012345678ull);
		CHECK_EQ_INT(m->location[1]->n_line, 0);
		CHECK_EQ_INT(m->sample[0]->n_label, 1);
		perftools__profiles__profile__free_unpacked(m, NULL);
	}
	kp_profile_free(p);
}

/* Values that are no int64 are refused, with the value type named. */
static void test_range(void)
{
	struct kp_profile *p = kp_profile_new();
	uint32_t l = kp_profile_named_location(p, "f", 1, KP_FRAME_USER);
	struct kp_profile_root r = {0};
	kp_count big = (kp_count)INT64_MAX, one = 1;
	uint8_t *buf = NULL;
	size_t len;
	struct kp_diag d = {{0}};

	kp_profile_add_value_type(p, "cpu", "nanoseconds", 0);
	CHECK(kp_profile_add(p, &r, &l, 1, &big));
	CHECK_EQ_INT(kp_pprof_encode(p, NULL, &buf, &len, &d), 0);
	free(buf);
	/* one more and the total no longer fits: readers sum in int64 */
	CHECK(kp_profile_add(p, &r, &l, 1, &one));
	CHECK_EQ_INT(kp_pprof_encode(p, NULL, &buf, &len, &d), -ERANGE);
	CHECK(buf == NULL);
	CHECK(strstr(d.msg, "'cpu' total, 9223372036854775808 nanoseconds") != NULL);
	kp_profile_free(p);

	p = kp_profile_new();
	l = kp_profile_named_location(p, "f", 1, KP_FRAME_USER);
	kp_profile_add_value_type(p, "samples", "count", 2);
	big = 1225; /* 12.25 */
	CHECK(kp_profile_add(p, &r, &l, 1, &big));
	CHECK_EQ_INT(kp_pprof_write(p, NULL, stdout, &d), -ERANGE);
	CHECK(strstr(d.msg, "'samples' values have decimals (total 12.25)") != NULL);
	kp_profile_free(p);
}

/* Every string of the table is valid UTF-8 without NUL. */
static void test_utf8(void)
{
	struct kp_profile *p = kp_profile_new();
	static const char bad[] = "f\xff\xc3(\xe2\x82;\"\x01\x00x";
	uint32_t l = kp_profile_named_location(p, bad, sizeof(bad) - 1, KP_FRAME_USER);
	uint32_t l2 = kp_profile_named_location(p, "caf\xc3\xa9", 5, KP_FRAME_USER);
	uint32_t st[] = {l2, l};
	struct kp_profile_root r = {kp_profile_intern(p, "c\x80", 2), 0, 0};
	kp_count one = 1;
	pb_profile *m;

	kp_profile_add_value_type(p, "samples", "count", 0);
	CHECK(kp_profile_add(p, &r, st, 2, &one));
	m = decode(p, NULL);
	if (m) {
		CHECK_EQ_STR(
			line_fn(m, m->location[0]->line[0]),
			"f\xef\xbf\xbd\xef\xbf\xbd(\xef\xbf\xbd\xef\xbf\xbd;\"\x01\xef\xbf\xbdx");
		CHECK_EQ_STR(line_fn(m, m->location[1]->line[0]), "caf\xc3\xa9");
		CHECK_EQ_STR(s(m, m->sample[0]->label[0]->str), "c\xef\xbf\xbd");
		perftools__profiles__profile__free_unpacked(m, NULL);
	}
	kp_profile_free(p);
}

/* ---- go tool pprof ---- */

static char tmpdir[64];

/* The output of `go tool pprof ARGS FILE`, or NULL (the caller frees). */
static char *pprof(const char *args, const char *file)
{
	char cmd[1024], *out = NULL;
	size_t len = 0, n;
	char buf[4096];
	FILE *f = open_memstream(&out, &len);
	FILE *pipe;

	snprintf(cmd, sizeof(cmd),
		 "HOME=%s GOCACHE=%s/cache GOFLAGS= PPROF_TMPDIR=%s PPROF_BINARY_PATH=%s "
		 "go tool pprof %s %s 2>%s/stderr",
		 tmpdir, tmpdir, tmpdir, tmpdir, args, file, tmpdir);
	pipe = popen(cmd, "r");
	if (!pipe) {
		fclose(f);
		free(out);
		return NULL;
	}
	while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0)
		fwrite(buf, 1, n, f);
	if (pclose(pipe) != 0) {
		fprintf(stderr, "go tool pprof %s failed:\n", args);
		kp_test_sh("cat %s/stderr >&2", tmpdir);
		fclose(f);
		free(out);
		return NULL;
	}
	fclose(f);
	return out;
}

/* Does text hold a line matching the extended regex re? */
static bool has_line(const char *text, const char *re)
{
	char path[128];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "%s/out.txt", tmpdir);
	f = fopen(path, "w");
	if (!f)
		return false;
	fputs(text, f);
	fclose(f);
	ok = kp_test_sh("grep -Eq -- '%s' %s", re, path) == 0;
	if (!ok)
		fprintf(stderr, "no line matches /%s/ in:\n%s\n", re, text);
	return ok;
}

static void test_go_tool_pprof(void)
{
	struct kp_profile *p;
	struct kp_diag d = {{0}};
	char file[128];
	char *out;
	FILE *f;
	const char *ci = getenv("CI");

	if (kp_test_sh("command -v go >/dev/null") != 0) {
		if (ci && strcmp(ci, "true") == 0) {
			fprintf(stderr, "go is not installed (golang-go), and CI=true\n");
			CHECK(!"go tool pprof available in CI");
		} else {
			printf("skip: go tool pprof (golang-go not installed)\n");
		}
		return;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s/kp-pprof-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		CHECK(!"mkdtemp");
		return;
	}
	snprintf(file, sizeof(file), "%s/bench.pb.gz", tmpdir);
	p = bench_profile();
	f = fopen(file, "w");
	CHECK(f != NULL);
	if (!f)
		goto out;
	CHECK_EQ_INT(kp_pprof_write(p, NULL, f, &d), 0);
	CHECK_EQ_INT(fclose(f), 0);

	/* -top: hot_loop's own 96 of 100 samples (inline add_one 90 of them) */
	out = pprof("-top", file);
	CHECK(out != NULL);
	if (out) {
		CHECK(has_line(out, "^Type: samples$"));
		CHECK(has_line(out, "^File: bench$"));
		CHECK(has_line(out, "^Build ID: a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3$"));
		CHECK(has_line(out, "^Duration: 30\\.02s, Total samples = 100 *$"));
		CHECK(has_line(out, "Showing nodes accounting for 100, 100% of 100 total"));
		CHECK(has_line(out, "^ +90 90\\.00% 90\\.00% +90 90\\.00% +add_one \\(inline\\)$"));
		CHECK(has_line(out, "^ +6 +6\\.00% 96\\.00% +96 96\\.00% +hot_loop$"));
		CHECK(has_line(out, "^ +0 +0% +100% +100 +100% +main$"));
	}
	free(out);
	/* -lines: the top function's file and line */
	out = pprof("-top -lines", file);
	CHECK(out != NULL);
	if (out) {
		CHECK(has_line(out, "^ +90 90\\.00% 90\\.00% +90 90\\.00% +add_one /src/util.h:7 "
				    "\\(inline\\)$"));
		CHECK(has_line(out,
			       "^ +6 +6\\.00% 96\\.00% +6 +6\\.00% +hot_loop /src/bench.c:31$"));
		CHECK(has_line(out, "^ +0 +0% +100% +90 90\\.00% +hot_loop /src/bench.c:30$"));
		CHECK(has_line(out, " main /src/bench.c:12$"));
		CHECK(has_line(out, " entry_SYSCALL_64$"));
	}
	free(out);
	/* the other value */
	out = pprof("-top -sample_index=cpu", file);
	CHECK(out != NULL);
	if (out)
		CHECK(has_line(out, "^Type: cpu$") && has_line(out, "of 100.10ms total"));
	free(out);
	/* -traces: each stack leaf first, the inlined frame inside its caller,
	 * the task's labels */
	out = pprof("-traces", file);
	CHECK(out != NULL);
	if (out) {
		CHECK(strstr(out, "      comm:  bench\n"
				  "       pid:  41\n"
				  "       tid:  42\n"
				  "        90   add_one (inline)\n"
				  "             hot_loop\n"
				  "             main\n") != NULL);
		CHECK(strstr(out, "         1   entry_SYSCALL_64\n"
				  "             main\n") != NULL);
		/* libc's location was left unnamed: pprof shows its address */
		CHECK(strstr(out, "         3   [libc.so.6]\n"
				  "             main\n") != NULL);
	}
	free(out);
	/* -tagroot comm: the task as the root frame of flame views */
	out = pprof("-traces -tagroot=comm", file);
	CHECK(out != NULL);
	if (out)
		CHECK(strstr(out, "             main\n"
				  "             bench\n") != NULL);
	free(out);
	/* -raw: the structure as pprof parsed it */
	out = pprof("-raw", file);
	CHECK(out != NULL);
	if (out) {
		CHECK(has_line(out, "^PeriodType: cpu nanoseconds$"));
		CHECK(has_line(out, "^Period: 1001001$"));
		CHECK(has_line(out, "^Time: 2026-12-01 07:42:53 \\+0000 UTC$"));
		CHECK(has_line(out, "^Duration: 30\\.0$"));
		CHECK(has_line(out, "^samples/count\\[dflt\\] cpu/nanoseconds$"));
		/* (pprof numbers the locations again, as the samples use them) */
		CHECK(has_line(out, "^ +90 +90090090: [0-9]+ [0-9]+ $"));
		CHECK(has_line(out, "^ +[0-9]+: 0x1234 M=1 add_one /src/util.h:7 s=0\\(\\)$"));
		CHECK(has_line(out, "^ +hot_loop /src/bench.c:30 s=0\\(\\)$"));
		CHECK(has_line(out, "^1: 0x1150/0x1241/0x1150 /opt/kp-test/bench "
				    "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3 "
				    "\\[FN\\]\\[FL\\]\\[LN\\]\\[IN\\]$"));
		CHECK(has_line(out, "^Comment: command=kprof -F 999 -- \\./bench$"));
	}
	free(out);
out:
	if (!getenv("KP_KEEP"))
		kp_test_sh("rm -rf %s", tmpdir);
	kp_profile_free(p);
}

KP_TEST_MAIN(test_structure, test_no_module, test_range, test_utf8, test_go_tool_pprof)
