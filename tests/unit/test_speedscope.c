/* The speedscope writer: a profile built as the recorder and the
 * symbolizer build one (two value types, an inline chain with files and
 * lines, a kernel frame, a location never named, pid and tid) gives exactly
 * the frames, stacks (root first, the root frame as folded text names it)
 * and weights of formats/speedscope.h, per function or per line; values
 * past int64 and decimals become numbers still; hostile names (quotes,
 * control characters, NUL, invalid UTF-8) come out as valid JSON strings;
 * every output validates against speedscope's schema
 * (tests/tools/speedscope-check: skipped without python3-jsonschema, a
 * failure when CI=true). The JSON is read back with jansson. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/speedscope.h"
#include "kp_test.h"
#include "profile/profile.h"

static uint32_t fn(struct kp_profile *p, const char *name, const char *file)
{
	return kp_profile_function(p, kp_profile_intern(p, name, strlen(name)),
				   kp_profile_intern(p, file, strlen(file)));
}

static uint32_t user_loc(struct kp_profile *p, uint64_t off)
{
	struct kp_loc l = {.addr = off, .obj = 1, .kind = KP_LOC_USER};

	return kp_profile_location(p, &l);
}

/* bench (pid 41, tid 42): main -> hot_loop:30 -> inline add_one (90),
 * main -> hot_loop:31 (6), main -> an unnamed location (3), main -> the
 * kernel (1), main -> hot_loop:32 (2: one sample with hot_loop:31's per
 * function, one of its own per line); cpu nanoseconds beside the
 * samples. */
static struct kp_profile *bench_profile(void)
{
	struct kp_profile *p = kp_profile_new();
	struct kp_loc kl = {.addr = 0xffffffff81a00010ull, .kind = KP_LOC_KERNEL};
	uint32_t lmain = user_loc(p, 0x1150), lhot = user_loc(p, 0x1234),
		 lhot2 = user_loc(p, 0x1240), lnone = user_loc(p, 0x2000),
		 lkern = kp_profile_location(p, &kl), lhot3 = user_loc(p, 0x1248);
	struct kp_profile_frame fmain = {fn(p, "main", "/src/bench.c"), 12, KP_FRAME_USER};
	struct kp_profile_frame fhot[2] = {
		{fn(p, "hot_loop", "/src/bench.c"), 30, KP_FRAME_USER},
		{fn(p, "add_one", "/src/util.h"), 7, KP_FRAME_INLINE},
	};
	struct kp_profile_frame fhot2 = {fn(p, "hot_loop", "/src/bench.c"), 31, KP_FRAME_USER};
	struct kp_profile_frame fhot3 = {fn(p, "hot_loop", "/src/bench.c"), 32, KP_FRAME_USER};
	struct kp_profile_frame fk = {fn(p, "entry_SYSCALL_64", ""), 0, KP_FRAME_KERNEL};
	struct kp_profile_root r = {kp_profile_intern(p, "bench", 5), 41, 42};
	uint32_t s1[] = {lmain, lhot}, s2[] = {lmain, lhot2}, s3[] = {lmain, lnone},
		 s4[] = {lmain, lkern}, s5[] = {lmain, lhot3};
	kp_count v1[] = {90, 90090090}, v2[] = {6, 6006006}, v3[] = {3, 3003003},
		 v4[] = {1, 1001001}, v5[] = {2, 2002002};

	kp_profile_add_value_type(p, "samples", "count", 0);
	kp_profile_add_value_type(p, "cpu", "nanoseconds", 0);
	kp_profile_set_frames(p, lmain, &fmain, 1, true);
	kp_profile_set_frames(p, lhot, fhot, 2, true);
	kp_profile_set_frames(p, lhot2, &fhot2, 1, true);
	kp_profile_set_frames(p, lkern, &fk, 1, true);
	kp_profile_set_frames(p, lhot3, &fhot3, 1, true);
	CHECK(kp_profile_add(p, &r, s1, 2, v1));
	CHECK(kp_profile_add(p, &r, s2, 2, v2));
	CHECK(kp_profile_add(p, &r, s3, 2, v3));
	CHECK(kp_profile_add(p, &r, s4, 2, v4));
	CHECK(kp_profile_add(p, &r, s5, 2, v5));
	kp_profile_set_meta(p, KP_META_COMMAND, "kprof -F 999 -- ./bench");
	return p;
}

static int nfiles;

/* Writes p, validates the file against the schema, returns it parsed. */
static json_t *write_json(const struct kp_profile *p, const struct kp_speedscope_opts *o)
{
	char path[256], *text = NULL;
	const char *fixtures = getenv("KP_FIXTURES"), *ci = getenv("CI");
	struct kp_diag d = {{0}};
	json_error_t err;
	json_t *doc;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	CHECK_EQ_INT(kp_speedscope_write(p, o, f, &d), 0);
	fclose(f);
	CHECK(len > 0 && text[len - 1] == '\n');
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
	if (!doc)
		fprintf(stderr, "not JSON: %s at %d:%d\n%s", err.text, err.line, err.column, text);
	CHECK(doc != NULL);
	snprintf(path, sizeof(path), "%s/kp-speedscope-%d-%d.json",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid(), nfiles++);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fwrite(text, 1, len, f);
		fclose(f);
		rc = kp_test_sh("python3 %s/../tools/speedscope-check %s",
				fixtures ? fixtures : "tests/fixtures", path);
		if (rc == 77 && !(ci && strcmp(ci, "true") == 0))
			printf("skip: schema validation (python3-jsonschema not installed)\n");
		else
			CHECK_EQ_INT(rc, 0);
		remove(path);
	}
	free(text);
	return doc;
}

/* The frames as "name|file|line" strings joined by ", ". */
static char *frames_text(json_t *doc)
{
	json_t *frames = json_object_get(json_object_get(doc, "shared"), "frames"), *fr;
	char *out = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&out, &len);

	json_array_foreach(frames, i, fr)
	{
		json_t *file = json_object_get(fr, "file"), *line = json_object_get(fr, "line");

		fprintf(f, "%s%s", i ? ", " : "", json_string_value(json_object_get(fr, "name")));
		if (file)
			fprintf(f, "|%s", json_string_value(file));
		if (line)
			fprintf(f, "|%lld", (long long)json_integer_value(line));
	}
	fclose(f);
	return out;
}

/* The compact JSON of a part of the document (the caller frees). */
static char *dump(const json_t *j)
{
	return json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
}

static void check_dump(const json_t *j, const char *want)
{
	char *got = dump(j);

	CHECK_EQ_STR(got, want);
	free(got);
}

static json_t *profile_at(json_t *doc, size_t i)
{
	return json_array_get(json_object_get(doc, "profiles"), i);
}

static void test_bench(void)
{
	struct kp_profile *p = bench_profile();
	struct kp_speedscope_opts o = {.exporter = "kprof 9.9.9"};
	json_t *doc = write_json(p, &o);
	char *s;

	if (!doc)
		goto out;
	CHECK_EQ_STR(json_string_value(json_object_get(doc, "$schema")),
		     "https://www.speedscope.app/file-format-schema.json");
	CHECK_EQ_STR(json_string_value(json_object_get(doc, "exporter")), "kprof 9.9.9");
	CHECK_EQ_STR(json_string_value(json_object_get(doc, "name")), "kprof -F 999 -- ./bench");
	CHECK_EQ_INT(json_integer_value(json_object_get(doc, "activeProfileIndex")), 0);
	/* one frame per function, the root and [unknown] as frames */
	s = frames_text(doc);
	CHECK_EQ_STR(s, "bench, main|/src/bench.c, hot_loop|/src/bench.c, add_one|/src/util.h, "
			"[unknown], entry_SYSCALL_64");
	free(s);
	CHECK_EQ_INT(json_array_size(json_object_get(doc, "profiles")), 2);
	check_dump(profile_at(doc, 0),
		   "{\"type\":\"sampled\",\"name\":\"samples\",\"unit\":\"none\",\"startValue\":0,"
		   "\"endValue\":102,\"samples\":[[0,1,2,3],[0,1,2],[0,1,4],[0,1,5]],"
		   "\"weights\":[90,8,3,1]}");
	check_dump(
		profile_at(doc, 1),
		"{\"type\":\"sampled\",\"name\":\"cpu\",\"unit\":\"nanoseconds\",\"startValue\":0,"
		"\"endValue\":102102102,\"samples\":[[0,1,2,3],[0,1,2],[0,1,4],[0,1,5]],"
		"\"weights\":[90090090,8008008,3003003,1001001]}");
	json_decref(doc);

	/* per line, the second value shown first, comm-PID/TID roots */
	o.lines = true;
	o.fold.value = 1;
	o.fold.root_tid = true;
	doc = write_json(p, &o);
	if (!doc)
		goto out;
	CHECK_EQ_INT(json_integer_value(json_object_get(doc, "activeProfileIndex")), 1);
	s = frames_text(doc);
	CHECK_EQ_STR(
		s, "bench-41/42, main|/src/bench.c|12, hot_loop|/src/bench.c|30, "
		   "add_one|/src/util.h|7, hot_loop|/src/bench.c|31, [unknown], entry_SYSCALL_64, "
		   "hot_loop|/src/bench.c|32");
	free(s);
	check_dump(json_object_get(profile_at(doc, 0), "samples"),
		   "[[0,1,2,3],[0,1,4],[0,1,5],[0,1,6],[0,1,7]]");
	check_dump(json_object_get(profile_at(doc, 0), "weights"), "[90,6,3,1,2]");
	json_decref(doc);

	o.lines = false;
	o.fold.root_tid = false;
	o.fold.root_pid = true;
	doc = write_json(p, &o);
	if (doc) {
		s = frames_text(doc);
		CHECK(strncmp(s, "bench-41, ", 10) == 0);
		free(s);
	}
out:
	json_decref(doc);
	kp_profile_free(p);
}

/* Exact counts that are no int64 are written as the nearest double. */
static void test_numbers(void)
{
	struct kp_profile *p = kp_profile_new();
	uint32_t a = kp_profile_named_location(p, "a", 1, KP_FRAME_USER),
		 b = kp_profile_named_location(p, "b", 1, KP_FRAME_KERNEL);
	struct kp_profile_root r = {0};
	kp_count big[] = {(kp_count)1 << 70, 1225}, one[] = {1, 50};
	json_t *doc;

	kp_profile_add_value_type(p, "space", "bytes", 0);
	kp_profile_add_value_type(p, "wall", "milliseconds", 2);
	CHECK(kp_profile_add(p, &r, &a, 1, big));
	CHECK(kp_profile_add(p, &r, &b, 1, one));
	doc = write_json(p, NULL);
	if (doc) {
		json_t *w0 = json_object_get(profile_at(doc, 0), "weights"),
		       *w1 = json_object_get(profile_at(doc, 1), "weights");

		CHECK(json_is_real(json_array_get(w0, 0)));
		CHECK(json_real_value(json_array_get(w0, 0)) == 1180591620717411303424.0);
		CHECK(json_is_integer(json_array_get(w0, 1)));
		CHECK(json_real_value(json_array_get(w1, 0)) == 12.25);
		CHECK(json_real_value(json_array_get(w1, 1)) == 0.5);
		CHECK(json_real_value(json_object_get(profile_at(doc, 1), "endValue")) == 12.75);
		CHECK_EQ_STR(json_string_value(json_object_get(profile_at(doc, 0), "unit")),
			     "bytes");
		CHECK_EQ_STR(json_string_value(json_object_get(profile_at(doc, 1), "unit")),
			     "milliseconds");
		/* no root: no root frame; no command: no name */
		check_dump(json_object_get(profile_at(doc, 0), "samples"), "[[0],[1]]");
		CHECK(json_object_get(doc, "name") == NULL);
		CHECK_EQ_STR(json_string_value(json_object_get(doc, "exporter")), "kprof");
	}
	json_decref(doc);
	kp_profile_free(p);
}

/* Names JSON must escape, and bytes that are no UTF-8. */
static void test_hostile_names(void)
{
	struct kp_profile *p = kp_profile_new();
	static const char ctl[] = "q\"b\\s\x01\t\n</script>\xe2\x80\xa8";
	static const char bad[] = "f\xff\xc3(\xe2\x82;\x00x\xef\xbf\xbd";
	uint32_t st[] = {
		kp_profile_named_location(p, ctl, sizeof(ctl) - 1, KP_FRAME_USER),
		kp_profile_named_location(p, bad, sizeof(bad) - 1, KP_FRAME_USER),
	};
	struct kp_profile_root r = {kp_profile_intern(p, "c\x80", 2), 0, 0};
	kp_count one = 1;
	json_t *doc;

	kp_profile_add_value_type(p, "samples", "count", 0);
	CHECK(kp_profile_add(p, &r, st, 2, &one));
	doc = write_json(p, NULL);
	if (doc) {
		json_t *frames = json_object_get(json_object_get(doc, "shared"), "frames");

		CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(frames, 0), "name")),
			     "c\xef\xbf\xbd");
		CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(frames, 1), "name")),
			     ctl);
		CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(frames, 2), "name")),
			     "f\xef\xbf\xbd\xef\xbf\xbd(\xef\xbf\xbd\xef\xbf\xbd;"
			     "\xef\xbf\xbdx\xef\xbf\xbd");
	}
	json_decref(doc);
	kp_profile_free(p);
}

/* An empty profile is a valid file with empty profiles. */
static void test_empty(void)
{
	struct kp_profile *p = kp_profile_new();
	json_t *doc;

	kp_profile_add_value_type(p, "samples", "count", 0);
	doc = write_json(p, NULL);
	if (doc)
		check_dump(profile_at(doc, 0),
			   "{\"type\":\"sampled\",\"name\":\"samples\",\"unit\":\"none\","
			   "\"startValue\":0,\"endValue\":0,\"samples\":[],\"weights\":[]}");
	json_decref(doc);
	kp_profile_free(p);
}

KP_TEST_MAIN(test_bench, test_numbers, test_hostile_names, test_empty)
