/* The profile model: strings, value types, locations and their frames,
 * named locations, samples summed exactly per (root, stack), mappings and
 * metadata; the frames by module (modules.c). */
#include <stdint.h>
#include <string.h>

#include "kp_test.h"
#include "profile/modules.h"
#include "profile/profile.h"
#include "util/xalloc.h"

static void test_strings_and_value_types(void)
{
	struct kp_profile *p = kp_profile_new();
	uint32_t a = kp_profile_intern(p, "main", 4), b = kp_profile_intern(p, "main;x", 4);
	size_t len;

	CHECK_EQ_INT(kp_profile_intern(p, "", 0), 0);
	CHECK_EQ_STR(kp_profile_str(p, 0, &len), "");
	CHECK_EQ_INT(len, 0);
	CHECK_EQ_INT(a, b);
	CHECK_EQ_STR(kp_profile_str(p, a, &len), "main");
	CHECK_EQ_INT(len, 4);
	/* an id never handed out reads as "" rather than crashing */
	CHECK_EQ_STR(kp_profile_str(p, 12345, NULL), "");

	CHECK_EQ_INT(kp_profile_add_value_type(p, "samples", "count", 0), 0);
	CHECK_EQ_INT(kp_profile_add_value_type(p, "cpu", "nanoseconds", 0), 1);
	CHECK_EQ_INT(kp_profile_nvalues(p), 2);
	CHECK_EQ_STR(kp_profile_str(p, kp_profile_value_type(p, 1)->unit, NULL), "nanoseconds");
	CHECK_EQ_INT(kp_profile_find_value(p, "cpu"), 1);
	CHECK_EQ_INT(kp_profile_find_value(p, "wall"), -1);
	CHECK_EQ_INT(kp_profile_add_value_type(p, "c", "u", 0), 2);
	CHECK_EQ_INT(kp_profile_add_value_type(p, "d", "u", 0), 3);
	CHECK_EQ_INT(kp_profile_add_value_type(p, "e", "u", 0), -1);
	CHECK(kp_profile_value_type(p, 4) == NULL);
	kp_profile_free(p);
}

static void test_locations_and_frames(void)
{
	struct kp_profile *p = kp_profile_new();
	struct kp_loc k = {.addr = 0xffffffff81000010ull, .kind = KP_LOC_KERNEL};
	struct kp_loc u = {.addr = 0x1234, .obj = 7, .kind = KP_LOC_USER};
	uint32_t lk = kp_profile_location(p, &k), lu = kp_profile_location(p, &u);
	uint32_t fn_main, fn_inl;
	struct kp_profile_frame fr[2];
	const struct kp_profile_frame *got;
	size_t n;
	bool resolved = true;

	CHECK_EQ_INT(lk, 0);
	CHECK_EQ_INT(lu, 1);
	CHECK_EQ_INT(kp_profile_location(p, &u), 1);
	u.obj = 8; /* same offset in another object: another location */
	CHECK_EQ_INT(kp_profile_location(p, &u), 2);
	CHECK(kp_profile_loc(p, lk)->addr == k.addr);
	CHECK(kp_profile_frames(p, lu, &n, &resolved) == NULL);
	CHECK_EQ_INT(n, 0);
	CHECK(!resolved);

	fn_main = kp_profile_function(p, kp_profile_intern(p, "main", 4),
				      kp_profile_intern(p, "/src/a.c", 8));
	fn_inl = kp_profile_function(p, kp_profile_intern(p, "inl", 3),
				     kp_profile_intern(p, "/src/a.h", 8));
	CHECK_EQ_INT(kp_profile_function(p, kp_profile_intern(p, "main", 4),
					 kp_profile_intern(p, "/src/a.c", 8)),
		     fn_main);
	/* the same name in another file is another function */
	CHECK(kp_profile_function(p, kp_profile_intern(p, "main", 4), 0) != fn_main);
	fr[0] = (struct kp_profile_frame){fn_main, 10, KP_FRAME_USER};
	fr[1] = (struct kp_profile_frame){fn_inl, 3, KP_FRAME_INLINE};
	kp_profile_set_frames(p, lu, fr, 2, true);
	got = kp_profile_frames(p, lu, &n, &resolved);
	CHECK_EQ_INT(n, 2);
	CHECK(resolved);
	CHECK(got && got[1].function == fn_inl && got[1].line == 3 &&
	      got[1].kind == KP_FRAME_INLINE);
	CHECK_EQ_STR(kp_profile_str(p, kp_profile_function_at(p, got[0].function)->file, NULL),
		     "/src/a.c");
	/* renamed: fewer frames reuse the slot, a placeholder is not resolved */
	fr[0] = (struct kp_profile_frame){
		kp_profile_function(p, kp_profile_intern(p, "[unknown]", 9), 0), 0, KP_FRAME_USER};
	kp_profile_set_frames(p, lu, fr, 1, false);
	got = kp_profile_frames(p, lu, &n, &resolved);
	CHECK_EQ_INT(n, 1);
	CHECK(!resolved);
	kp_profile_free(p);
}

static void test_named_locations(void)
{
	struct kp_profile *p = kp_profile_new();
	uint32_t a = kp_profile_named_location(p, "foo", 3, KP_FRAME_USER);
	uint32_t b = kp_profile_named_location(p, "foo", 3, KP_FRAME_KERNEL);
	const struct kp_profile_frame *f;
	size_t n;

	CHECK(a != b);
	CHECK_EQ_INT(kp_profile_named_location(p, "foo", 3, KP_FRAME_USER), a);
	CHECK_EQ_INT(kp_profile_loc(p, a)->kind, KP_LOC_NAMED);
	f = kp_profile_frames(p, b, &n, NULL);
	CHECK_EQ_INT(n, 1);
	CHECK(f && f->kind == KP_FRAME_KERNEL);
	CHECK_EQ_STR(kp_profile_str(p, kp_profile_function_at(p, f->function)->name, NULL), "foo");
	kp_profile_free(p);
}

static void test_samples_sum_per_root_and_stack(void)
{
	struct kp_profile *p = kp_profile_new();
	struct kp_profile_root r1 = {kp_profile_intern(p, "a.out", 5), 0, 0};
	struct kp_profile_root r2 = {r1.comm, 42, 43};
	uint32_t stack[3] = {0, 1, 2}, got_n;
	kp_count v1[2] = {1, 10000000}, v2[2] = {1, 20000000}, big[2] = {~(kp_count)0, 0};
	const kp_count *vals;
	struct kp_profile_root root;
	const uint32_t *locs;
	size_t n;

	kp_profile_add_value_type(p, "samples", "count", 0);
	kp_profile_add_value_type(p, "cpu", "nanoseconds", 0);
	CHECK(kp_profile_add(p, &r1, stack, 3, v1));
	CHECK(kp_profile_add(p, &r1, stack, 3, v2));
	CHECK(kp_profile_add(p, &r2, stack, 3, v1)); /* another task: another sample */
	CHECK(kp_profile_add(p, &r1, stack, 2, v1)); /* a prefix: another sample */
	CHECK(kp_profile_add(p, &r1, NULL, 0, v1));  /* no frames at all */
	CHECK_EQ_INT(kp_profile_nsamples(p), 4);
	locs = kp_profile_sample(p, 0, &root, &n, &vals);
	CHECK_EQ_INT(n, 3);
	CHECK(locs[2] == 2 && root.comm == r1.comm && root.pid == 0);
	CHECK(vals[0] == 2 && vals[1] == 30000000);
	kp_profile_sample(p, 1, &root, &n, &vals);
	CHECK(root.pid == 42 && root.tid == 43 && vals[0] == 1);
	kp_profile_sample(p, 3, NULL, &n, NULL);
	CHECK_EQ_INT(n, 0);
	CHECK(kp_profile_total(p, 0) == 5);
	CHECK(kp_profile_total(p, 1) == 60000000);
	CHECK(kp_profile_total(p, 2) == 0);
	/* a sum past 2^128 is refused whole */
	CHECK(!kp_profile_add(p, &r1, stack, 3, big));
	CHECK(kp_profile_total(p, 0) == 5);
	got_n = (uint32_t)kp_profile_nsamples(p);
	CHECK_EQ_INT(got_n, 4);
	kp_profile_free(p);
}

static void test_mappings_and_meta(void)
{
	struct kp_profile *p = kp_profile_new();
	struct kp_profile_mapping m = {.kind = KP_LOC_USER,
				       .obj = 3,
				       .path = kp_profile_intern(p, "/usr/lib/libc.so.6", 18),
				       .build_id = {0xab, 0xcd},
				       .build_id_len = 2};
	const char *k, *v;

	kp_profile_set_mapping(p, &m);
	m.obj = 4;
	kp_profile_set_mapping(p, &m);
	m.obj = 3;
	m.build_id_len = 20;
	kp_profile_set_mapping(p, &m); /* replaces */
	CHECK_EQ_INT(kp_profile_nmappings(p), 2);
	CHECK(kp_profile_mapping_of(p, KP_LOC_USER, 3)->build_id_len == 20);
	CHECK(kp_profile_mapping_of(p, KP_LOC_JIT, 3) == NULL);
	CHECK(kp_profile_mapping_at(p, 2) == NULL);

	kp_profile_set_meta(p, KP_META_EVENT, "%s", "cpu-clock");
	kp_profile_set_meta(p, KP_META_SAMPLES, "%d", 12);
	kp_profile_set_meta(p, KP_META_EVENT, "%s", "cycles");
	CHECK_EQ_INT(kp_profile_nmeta(p), 2);
	kp_profile_meta_at(p, 0, &k, &v);
	CHECK_EQ_STR(k, "event");
	CHECK_EQ_STR(v, "cycles");
	CHECK_EQ_STR(kp_profile_meta(p, "samples"), "12");
	CHECK(kp_profile_meta(p, "nope") == NULL);
	kp_profile_free(p);
}

/* 100k samples over 5000 locations and 20000 distinct stacks: the tables
 * hold the distinct ones, the values every sample. */
static void test_many(void)
{
	struct kp_profile *p = kp_profile_new();
	struct kp_profile_root r = {.comm = kp_profile_intern(p, "x", 1)};
	kp_count sum = 0, one = 1;

	kp_profile_add_value_type(p, "samples", "count", 0);
	for (uint32_t i = 0; i < 100000; i++) {
		struct kp_loc l = {.addr = i % 5000, .kind = KP_LOC_KERNEL};
		uint32_t stack[2] = {kp_profile_location(p, &l), i % 20000};

		CHECK(kp_profile_add(p, &r, stack, 2, &one));
	}
	CHECK_EQ_INT(kp_profile_nlocations(p), 5000);
	CHECK_EQ_INT(kp_profile_nsamples(p), 20000);
	for (size_t i = 0; i < kp_profile_nsamples(p); i++) {
		const kp_count *v;

		kp_profile_sample(p, i, NULL, NULL, &v);
		sum += v[0];
	}
	CHECK(sum == 100000 && kp_profile_total(p, 0) == 100000);
	kp_profile_free(p);
}

/* Locations of the same frames become one, samples whose stacks then agree
 * are summed; locations never named keep their own; everything else is
 * copied. */
static void test_merge_locations(void)
{
	struct kp_profile *p = kp_profile_new(), *q;
	struct kp_loc a1 = {.addr = 0x100, .obj = 1, .kind = KP_LOC_USER};
	struct kp_loc a2 = {.addr = 0x104, .obj = 1, .kind = KP_LOC_USER};
	struct kp_loc b = {.addr = 0x200, .obj = 1, .kind = KP_LOC_USER};
	struct kp_loc other_obj = {.addr = 0x104, .obj = 2, .kind = KP_LOC_USER};
	struct kp_loc u1 = {.addr = 0x300, .obj = 1, .kind = KP_LOC_USER};
	struct kp_loc u2 = {.addr = 0x304, .obj = 1, .kind = KP_LOC_USER};
	uint32_t la1 = kp_profile_location(p, &a1), la2 = kp_profile_location(p, &a2),
		 lb = kp_profile_location(p, &b), lo = kp_profile_location(p, &other_obj),
		 lu1 = kp_profile_location(p, &u1), lu2 = kp_profile_location(p, &u2);
	uint32_t fa = kp_profile_function(p, kp_profile_intern(p, "leaf", 4),
					  kp_profile_intern(p, "a.c", 3));
	struct kp_profile_frame same = {fa, 7, KP_FRAME_USER}, line8 = {fa, 8, KP_FRAME_USER};
	struct kp_profile_root r = {kp_profile_intern(p, "x", 1), 0, 0};
	struct kp_profile_mapping m = {
		.kind = KP_LOC_USER, .obj = 1, .path = kp_profile_intern(p, "/bin/x", 6)};
	uint32_t s1[2] = {lb, la1}, s2[2] = {lb, la2}, s3[2] = {lb, lo}, s4[1] = {lu1},
		 s5[1] = {lu2};
	kp_count v[2] = {1, 10};
	const kp_count *vals;
	size_t n;

	kp_profile_add_value_type(p, "samples", "count", 0);
	kp_profile_add_value_type(p, "cpu", "nanoseconds", 0);
	kp_profile_set_frames(p, la1, &same, 1, true);
	kp_profile_set_frames(p, la2, &same, 1, true);
	kp_profile_set_frames(p, lb, &line8, 1, true);
	kp_profile_set_frames(p, lo, &same, 1, true); /* same frames, another mapping */
	kp_profile_set_mapping(p, &m);
	kp_profile_set_meta(p, KP_META_EVENT, "cpu-clock");
	CHECK(kp_profile_add(p, &r, s1, 2, v));
	CHECK(kp_profile_add(p, &r, s2, 2, v));
	CHECK(kp_profile_add(p, &r, s3, 2, v));
	CHECK(kp_profile_add(p, &r, s4, 1, v));
	CHECK(kp_profile_add(p, &r, s5, 1, v));
	q = kp_profile_merge_locations(p);
	/* a1 and a2 are one; b, the other mapping's and the two unnamed stay */
	CHECK_EQ_INT(kp_profile_nlocations(q), 5);
	CHECK_EQ_INT(kp_profile_nsamples(q), 4);
	kp_profile_sample(q, 0, NULL, &n, &vals);
	CHECK(n == 2 && vals[0] == 2 && vals[1] == 20);
	CHECK(kp_profile_total(q, 0) == 5 && kp_profile_total(q, 1) == 50);
	CHECK(kp_profile_mapping_of(q, KP_LOC_USER, 1) != NULL);
	CHECK_EQ_STR(kp_profile_str(q, kp_profile_mapping_of(q, KP_LOC_USER, 1)->path, NULL),
		     "/bin/x");
	CHECK_EQ_STR(kp_profile_meta(q, KP_META_EVENT), "cpu-clock");
	{
		const struct kp_profile_frame *f = kp_profile_frames(q, 0, &n, NULL);
		const struct kp_profile_function *fn = kp_profile_function_at(q, f->function);

		CHECK(n == 1 && f->line == 7);
		CHECK_EQ_STR(kp_profile_str(q, fn->name, NULL), "leaf");
		CHECK_EQ_STR(kp_profile_str(q, fn->file, NULL), "a.c");
	}
	kp_profile_free(q);
	kp_profile_free(p);
}

/* A test's module of a path: its last component (the symbolizer's drops
 * " (deleted)" too). */
static char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return kp_xstrdup(slash ? slash + 1 : path);
}

static uint32_t named(struct kp_profile *p, const struct kp_loc *l, const char *name, bool ok)
{
	uint32_t loc = kp_profile_location(p, l);
	struct kp_profile_frame f = {
		kp_profile_function(p, kp_profile_intern(p, name, strlen(name)), 0), 0,
		KP_FRAME_USER};

	kp_profile_set_frames(p, loc, &f, 1, ok);
	return loc;
}

/* Each module's frames by how they were named, weighted by the value
 * counted; the heaviest unknown one's name; a Python that ran unnamed. */
static void test_modules(void)
{
	struct kp_profile *p = kp_profile_new();
	struct kp_loc sym = {.addr = 0x10, .obj = 1, .kind = KP_LOC_USER},
		      start = {.addr = 0x20, .obj = 1, .kind = KP_LOC_USER},
		      unk = {.addr = 0x30, .obj = 1, .kind = KP_LOC_USER},
		      unk2 = {.addr = 0x40, .obj = 1, .kind = KP_LOC_USER},
		      kern = {.addr = 0xffff0000, .kind = KP_LOC_KERNEL},
		      jit = {.addr = 0x7000, .obj = 5, .kind = KP_LOC_JIT};
	struct kp_profile_mapping m = {.kind = KP_LOC_USER,
				       .obj = 1,
				       .path = kp_profile_intern(p, "/usr/bin/python3.12", 19)};
	struct kp_profile_root r = {kp_profile_intern(p, "x", 1), 0, 0};
	uint32_t ls = named(p, &sym, "main", true), lt = named(p, &start, "python3.12+0x20", true),
		 lu = named(p, &unk, "[python3.12 stripped]", false),
		 lu2 = named(p, &unk2, "[other]", false), lk = named(p, &kern, "schedule", true),
		 lj = named(p, &jit, "[unknown]", false);
	uint32_t s1[3] = {ls, lt, lk}, s2[2] = {ls, lu}, s3[2] = {lu2, lj};
	kp_count one[2] = {1, 100}, three[2] = {3, 1};
	struct kp_module *mods;
	kp_count all;
	char py[32];
	size_t n;

	kp_profile_add_value_type(p, "samples", "count", 0);
	kp_profile_add_value_type(p, "cpu", "nanoseconds", 0);
	kp_profile_set_mapping(p, &m);
	CHECK(kp_profile_add(p, &r, s1, 3, one));
	CHECK(kp_profile_add(p, &r, s2, 2, three));
	CHECK(kp_profile_add(p, &r, s3, 2, one));
	mods = kp_modules_count(p, 0, base_name, &n);
	CHECK_EQ_INT(n, 3); /* the file, the kernel, the JIT code */
	CHECK(mods[0].kind == KP_LOC_USER && mods[0].obj == 1);
	CHECK_EQ_STR(mods[0].start_prefix, "python3.12+0x");
	CHECK(mods[0].frames == 9);
	CHECK(mods[0].by[KP_MODULE_SYMBOL] == 4 && mods[0].by[KP_MODULE_START] == 1 &&
	      mods[0].by[KP_MODULE_UNKNOWN] == 4);
	CHECK_EQ_STR(mods[0].why, "[python3.12 stripped]"); /* 3 against 1 */
	CHECK(mods[1].kind == KP_LOC_KERNEL && mods[1].frames == 1 && !mods[1].start_prefix);
	kp_modules_sort_by_unnamed(mods, n);
	CHECK(mods[0].kind == KP_LOC_USER && mods[1].kind == KP_LOC_JIT);
	/* 11 frames: the file's 5 and the JIT code's 1 unnamed, the kernel's none */
	CHECK_EQ_INT(kp_modules_to_say(mods, n, 5, &all), 2);
	CHECK(all == 11 && mods[0].kind == KP_LOC_USER);
	CHECK_EQ_INT(kp_modules_to_say(mods, n, 1, &all), 1);
	kp_modules_free(mods, n);
	/* the other value weighs the other way: [other] 100 against 1 */
	mods = kp_modules_count(p, 1, base_name, &n);
	CHECK(mods[0].by[KP_MODULE_SYMBOL] == 101 && mods[0].by[KP_MODULE_START] == 100 &&
	      mods[0].by[KP_MODULE_UNKNOWN] == 101);
	CHECK_EQ_STR(mods[0].why, "[other]");
	kp_modules_free(mods, n);
	CHECK(kp_modules_python_unnamed(p, py, sizeof(py)));
	CHECK_EQ_STR(py, "python3.12");
	named(p, &(struct kp_loc){.addr = 0x7100, .obj = 5, .kind = KP_LOC_JIT}, "py::f:x.py",
	      true);
	CHECK(!kp_modules_python_unnamed(p, py, sizeof(py)));
	kp_profile_free(p);
}

KP_TEST_MAIN(test_many, test_merge_locations, test_modules, test_strings_and_value_types,
	     test_locations_and_frames, test_named_locations, test_samples_sum_per_root_and_stack,
	     test_mappings_and_meta)
