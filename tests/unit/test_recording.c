/* The .kprof recording: a profile with every kind of content (each location
 * kind, unnamed and placeholder locations, inline frames with files and
 * lines, mappings with build-ids, roots, empty stacks, values past 2^64,
 * decimals, metadata, tables longer than a chunk) comes back identical by
 * every getter; folded text comes back as the same folded text. Damage is
 * refused with one line naming the file: every truncation, every single
 * bit flipped (or the file reads identically: the flip was in a byte that
 * carries nothing), another major version, ids out of their table's range,
 * random bytes, zstd of something else, gzip; a newer minor version with
 * fields and chunks this reader does not know is read identically. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/folded_read.h"
#include "formats/folded_write.h"
#include "profile/folded.h"
#include "profile/fold.h"
#include "formats/load.h"
#include "formats/recording.h"
#include "formats/zstdio.h"
#include "kp_test.h"
#include "profile/profile.h"

/* ---- comparing profiles by every getter ---- */

static char why[512];

#define DIFF(...) (snprintf(why, sizeof(why), __VA_ARGS__), false)

static bool same_profile(const struct kp_profile *a, const struct kp_profile *b)
{
	if (kp_profile_nstrings(a) != kp_profile_nstrings(b))
		return DIFF("strings: %zu != %zu", kp_profile_nstrings(a), kp_profile_nstrings(b));
	for (uint32_t i = 0; i <= kp_profile_nstrings(a); i++) {
		size_t la, lb;
		const char *sa = kp_profile_str(a, i, &la), *sb = kp_profile_str(b, i, &lb);

		if (la != lb || memcmp(sa, sb, la) != 0)
			return DIFF("string %u", i);
	}
	if (kp_profile_nvalues(a) != kp_profile_nvalues(b))
		return DIFF("value types");
	for (size_t i = 0; i < kp_profile_nvalues(a); i++) {
		const struct kp_profile_value_type *ta = kp_profile_value_type(a, i),
						   *tb = kp_profile_value_type(b, i);

		if (ta->type != tb->type || ta->unit != tb->unit || ta->decimals != tb->decimals)
			return DIFF("value type %zu", i);
		if (kp_profile_total(a, i) != kp_profile_total(b, i))
			return DIFF("total %zu", i);
	}
	if (kp_profile_nfunctions(a) != kp_profile_nfunctions(b))
		return DIFF("functions");
	for (uint32_t i = 0; i < kp_profile_nfunctions(a); i++) {
		const struct kp_profile_function *fa = kp_profile_function_at(a, i),
						 *fb = kp_profile_function_at(b, i);

		if (fa->name != fb->name || fa->file != fb->file)
			return DIFF("function %u", i);
	}
	if (kp_profile_nlocations(a) != kp_profile_nlocations(b))
		return DIFF("locations: %zu != %zu", kp_profile_nlocations(a),
			    kp_profile_nlocations(b));
	for (uint32_t i = 0; i < kp_profile_nlocations(a); i++) {
		const struct kp_loc *la = kp_profile_loc(a, i), *lb = kp_profile_loc(b, i);
		size_t na, nb;
		bool ra, rb;
		const struct kp_profile_frame *fa = kp_profile_frames(a, i, &na, &ra),
					      *fb = kp_profile_frames(b, i, &nb, &rb);

		if (la->addr != lb->addr || la->obj != lb->obj || la->kind != lb->kind)
			return DIFF("location %u", i);
		if (!fa != !fb || na != nb || ra != rb)
			return DIFF("location %u: frames", i);
		for (size_t j = 0; j < na; j++)
			if (fa[j].function != fb[j].function || fa[j].line != fb[j].line ||
			    fa[j].kind != fb[j].kind)
				return DIFF("location %u: frame %zu", i, j);
	}
	if (kp_profile_nmappings(a) != kp_profile_nmappings(b))
		return DIFF("mappings");
	for (size_t i = 0; i < kp_profile_nmappings(a); i++) {
		const struct kp_profile_mapping *ma = kp_profile_mapping_at(a, i),
						*mb = kp_profile_mapping_at(b, i);

		if (ma->kind != mb->kind || ma->obj != mb->obj || ma->path != mb->path ||
		    ma->pid != mb->pid || ma->build_id_len != mb->build_id_len ||
		    memcmp(ma->build_id, mb->build_id, ma->build_id_len) != 0)
			return DIFF("mapping %zu", i);
		if (kp_profile_mapping_of(b, ma->kind, ma->obj) != mb)
			return DIFF("mapping %zu: lookup", i);
	}
	if (kp_profile_nsamples(a) != kp_profile_nsamples(b))
		return DIFF("samples: %zu != %zu", kp_profile_nsamples(a), kp_profile_nsamples(b));
	for (size_t i = 0; i < kp_profile_nsamples(a); i++) {
		struct kp_profile_root ra, rb;
		size_t na, nb;
		const kp_count *va, *vb;
		const uint32_t *sa = kp_profile_sample(a, i, &ra, &na, &va),
			       *sb = kp_profile_sample(b, i, &rb, &nb, &vb);

		if (ra.comm != rb.comm || ra.pid != rb.pid || ra.tid != rb.tid)
			return DIFF("sample %zu: root", i);
		if (na != nb || (na && memcmp(sa, sb, na * sizeof(*sa)) != 0))
			return DIFF("sample %zu: stack", i);
		for (size_t v = 0; v < kp_profile_nvalues(a); v++)
			if (va[v] != vb[v])
				return DIFF("sample %zu: value %zu", i, v);
	}
	if (kp_profile_nmeta(a) != kp_profile_nmeta(b))
		return DIFF("metadata");
	for (size_t i = 0; i < kp_profile_nmeta(a); i++) {
		const char *ka, *va, *kb, *vb;

		kp_profile_meta_at(a, i, &ka, &va);
		kp_profile_meta_at(b, i, &kb, &vb);
		if (strcmp(ka, kb) != 0 || strcmp(va, vb) != 0)
			return DIFF("metadata %zu", i);
	}
	if (kp_profile_timed(a) != kp_profile_timed(b) ||
	    kp_profile_time_origin(a) != kp_profile_time_origin(b) ||
	    kp_profile_events_dropped(a) != kp_profile_events_dropped(b))
		return DIFF("time axis");
	{
		size_t na, nb;
		const struct kp_profile_event *ea = kp_profile_events(a, &na),
					      *eb = kp_profile_events(b, &nb);

		if (na != nb)
			return DIFF("events: %zu != %zu", na, nb);
		for (size_t i = 0; i < na; i++)
			if (ea[i].ms != eb[i].ms || ea[i].sample != eb[i].sample ||
			    ea[i].tid != eb[i].tid || ea[i].span != eb[i].span)
				return DIFF("event %zu", i);
	}
	return true;
}

/* ---- profiles and recordings ---- */

static uint32_t fn(struct kp_profile *p, const char *name, const char *file)
{
	return kp_profile_function(p, kp_profile_intern(p, name, strlen(name)),
				   kp_profile_intern(p, file, strlen(file)));
}

/* Every kind of content; big: tables longer than a chunk. */
static struct kp_profile *full_profile(bool big)
{
	struct kp_profile *p = kp_profile_new();
	struct kp_loc lk = {.addr = 0xffffffff81234567ull, .kind = KP_LOC_KERNEL};
	struct kp_loc lu = {.addr = 0x1130, .obj = 1, .kind = KP_LOC_USER};
	struct kp_loc lv = {.addr = 0x2250, .obj = 2, .kind = KP_LOC_USER};
	struct kp_loc lj = {.addr = 0x7f0012345678ull, .obj = 3, .kind = KP_LOC_JIT};
	struct kp_loc lx = {.addr = 0xdeadbeef, .kind = KP_LOC_UNKNOWN};
	struct kp_loc lt = {.kind = KP_LOC_TRUNCATED};
	struct kp_loc lunnamed = {.addr = 0x99, .obj = 1, .kind = KP_LOC_USER};
	uint32_t k = kp_profile_location(p, &lk), u = kp_profile_location(p, &lu),
		 v = kp_profile_location(p, &lv), j = kp_profile_location(p, &lj),
		 x = kp_profile_location(p, &lx), t = kp_profile_location(p, &lt),
		 un = kp_profile_location(p, &lunnamed);
	uint32_t named = kp_profile_named_location(p, "folded;frame", 12, KP_FRAME_INLINE);
	struct kp_profile_frame fu[3] = {
		{fn(p, "main", "/src/main.c"), 12, KP_FRAME_USER},
		{fn(p, "inl_a", "/src/a.h"), 4, KP_FRAME_INLINE},
		{fn(p, "inl_b", ""), 0, KP_FRAME_INLINE},
	};
	struct kp_profile_frame fk = {fn(p, "do_syscall_64", ""), 0, KP_FRAME_KERNEL};
	struct kp_profile_frame fj = {fn(p, "LInterp;run", ""), 0, KP_FRAME_JIT};
	struct kp_profile_frame fv = {fn(p, "[unknown]", ""), 0, KP_FRAME_USER};
	struct kp_profile_frame ft = {fn(p, "[truncated]", ""), 0, KP_FRAME_USER};
	struct kp_profile_mapping mu = {.kind = KP_LOC_USER, .obj = 1, .build_id_len = 20};
	struct kp_profile_mapping mv = {.kind = KP_LOC_USER, .obj = 2};
	struct kp_profile_mapping mj = {.kind = KP_LOC_JIT, .obj = 3, .pid = 4242};
	struct kp_profile_root r1 = {kp_profile_intern(p, "prog", 4), 41, 42};
	struct kp_profile_root r2 = {kp_profile_intern(p, "worker thread", 13), 41, 43};
	struct kp_profile_root none = {0};
	kp_count big_value = (kp_count)1 << 100, vals[3];
	/* a name with a NUL and bytes of any value: strings are bytes */
	static const char odd[] = {'a', 0, 'b', '\xff', '\n'};

	kp_profile_add_value_type(p, "samples", "count", 0);
	kp_profile_add_value_type(p, "cpu", "nanoseconds", 0);
	kp_profile_add_value_type(p, "weight", "", 2);
	kp_profile_set_frames(p, u, fu, 3, true);
	kp_profile_set_frames(p, k, &fk, 1, true);
	kp_profile_set_frames(p, j, &fj, 1, true);
	kp_profile_set_frames(p, v, &fv, 1, false); /* a placeholder */
	kp_profile_set_frames(p, t, &ft, 1, true);
	(void)x; /* never named */
	fn(p, odd, "");
	for (int i = 0; i < 20; i++)
		mu.build_id[i] = (uint8_t)(0xa0 + i);
	mu.path = kp_profile_intern(p, "/usr/bin/prog", 13);
	mv.path = kp_profile_intern(p, "/usr/lib/libc.so.6", 18);
	mj.path = kp_profile_intern(p, "[jit]", 5);
	kp_profile_set_mapping(p, &mu);
	kp_profile_set_mapping(p, &mv);
	kp_profile_set_mapping(p, &mj);

	{
		uint32_t s1[] = {u, v, k}, s2[] = {u, j, x}, s3[] = {t, un, named};

		vals[0] = 3, vals[1] = 3000000, vals[2] = 125;
		kp_profile_add(p, &r1, s1, 3, vals);
		vals[0] = 1, vals[1] = big_value, vals[2] = 1;
		kp_profile_add(p, &r2, s2, 3, vals);
		kp_profile_add(p, &r2, s2, 3, vals); /* summed: past 2^100 */
		vals[0] = 2, vals[1] = 7, vals[2] = 0;
		kp_profile_add(p, &none, s3, 3, vals);
		kp_profile_add(p, &r1, NULL, 0, vals); /* an empty stack */
		kp_profile_add(p, &none, NULL, 0, vals);
	}
	if (big) {
		/* 3 chunks of locations and of samples, stacks sharing callers */
		uint32_t stack[8] = {u, v};

		for (uint32_t i = 0; i < 10000; i++) {
			struct kp_loc l = {
				.addr = 0x400000 + 16 * i, .obj = 2, .kind = KP_LOC_USER};
			uint32_t loc = kp_profile_location(p, &l);
			char name[32];
			struct kp_profile_frame f = {0, i, KP_FRAME_USER};

			snprintf(name, sizeof(name), "fn_%u", i);
			f.function = fn(p, name, i % 3 ? "/src/gen.c" : "");
			if (i % 5)
				kp_profile_set_frames(p, loc, &f, 1, i % 7 != 0);
			stack[2 + i % 6] = loc;
			vals[0] = 1 + i % 3, vals[1] = 1000000ull * (i + 1), vals[2] = i;
			kp_profile_add(p, i % 2 ? &r1 : &r2, stack, 3 + i % 6, vals);
		}
		for (uint32_t i = 0; i < 5000; i++)
			kp_profile_set_meta(p, "many", "%u", i); /* replaced: one entry */
		/* a time axis of 2 chunks: ticks of 0 to 2^31 ms, threads up and down */
		kp_profile_time_start(p, 1796500000123456789ull);
		for (uint32_t i = 0, ms = 0; i < 70000; i++) {
			ms += i == 69999 ? 1u << 31 : i % 1000 ? i % 3 : 60000;
			kp_profile_add_event(p, (i * 7919) % (uint32_t)kp_profile_nsamples(p), ms,
					     i % 5 ? 1000 + i % 4 : 4000000);
		}
		/* (1.2) two threads spinning in one sample each, a ms at a time
		 * (runs), the order of the two in a ms swapped now and then, a
		 * third's waits (spans) between them */
		for (uint32_t i = 0, ms = (1u << 31) + 200000; i < 3000; i++, ms++) {
			bool swap = i % 97 == 5;

			kp_profile_add_event(p, swap ? 4 : 3, ms, swap ? 2002 : 2001);
			kp_profile_add_event(p, swap ? 3 : 4, ms, swap ? 2001 : 2002);
			if (i % 250 == 7)
				kp_profile_add_span(p, 5, ms, 1 + i % 400, 2003);
			if (i % 500 == 9)
				kp_profile_add_event(p, 3, ms, 2001); /* twice in a ms */
		}
		kp_profile_set_events_dropped(p, 12);
	}
	kp_profile_set_meta(p, KP_META_VERSION, "0.1.0");
	kp_profile_set_meta(p, KP_META_COMMAND, "kprof -a -F 999 -o run.kprof -- sleep 30");
	kp_profile_set_meta(p, KP_META_EVENT, "cpu-clock");
	kp_profile_set_meta(p, KP_META_DURATION, "30.02");
	kp_profile_set_meta(p, "empty", "%s", "");
	return p;
}

/* The recording of p, in a malloced buffer. */
static char *record(const struct kp_profile *p, size_t *len)
{
	char *buf = NULL;
	FILE *out = open_memstream(&buf, len);
	struct kp_diag d = {{0}};

	CHECK_EQ_INT(kp_recording_write(p, out, &d), 0);
	fclose(out);
	return buf;
}

static struct kp_profile *read_buf(const void *buf, size_t len, struct kp_diag *d, int *err)
{
	FILE *in = fmemopen((void *)buf, len, "r");
	struct kp_profile *p;

	*err = kp_recording_read(in, "mem.kprof", &p, d);
	fclose(in);
	return p;
}

static void test_round_trip(void)
{
	for (int big = 0; big <= 1; big++) {
		struct kp_profile *p = full_profile(big), *q;
		struct kp_diag d = {{0}};
		size_t len;
		char *buf = record(p, &len);
		int err;

		CHECK(kp_recording_magic(buf, len));
		CHECK_EQ_INT(buf[5], KP_RECORDING_MAJOR);
		/* 1.1 with a time axis; without, the 1.0 of before, byte for byte */
		CHECK_EQ_INT(buf[6], big ? KP_RECORDING_MINOR : 0);
		q = read_buf(buf, len, &d, &err);
		CHECK_EQ_INT(err, 0);
		CHECK(q != NULL);
		if (q && !same_profile(p, q))
			fprintf(stderr, "round trip (big %d): %s\n", big, why);
		CHECK(q && same_profile(p, q));
		if (big)
			CHECK_EQ_INT(kp_profile_nsamples(q), 10005);
		kp_profile_free(q);
		kp_profile_free(p);
		free(buf);
	}
}

static void test_empty_profile(void)
{
	struct kp_profile *p = kp_profile_new(), *q;
	struct kp_diag d = {{0}};
	size_t len;
	char *buf = record(p, &len);
	int err;

	q = read_buf(buf, len, &d, &err);
	CHECK_EQ_INT(err, 0);
	CHECK(q && same_profile(p, q));
	kp_profile_free(q);
	kp_profile_free(p);
	free(buf);
}

static char *fold_text(const struct kp_profile *p)
{
	struct kp_folded *f = kp_folded_new();
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	CHECK(kp_fold_add_profile(f, p, NULL));
	CHECK_EQ_INT(kp_folded_write(f, out, KP_FOLDED_ANNOTATE_ALL), 0);
	fclose(out);
	kp_folded_free(f);
	return buf;
}

static void test_folded_round_trip(void)
{
	static const char text[] = "bash;main;work 3\n"
				   "bash;main;work;leaf 9007199254740993\n"
				   "java;Interpreter_[j];[unknown] 5\n"
				   "swapper;secondary_startup_64_[k];cpu_idle_[k] 12\n"
				   "x_[k];y_[i] 1\n";
	static const char decimals[] = "a;b 0.25\na;c 1\n";
	const char *texts[] = {text, decimals};

	for (size_t i = 0; i < 2; i++) {
		struct kp_folded *f = kp_folded_new();
		struct kp_folded_read_opts ro = {.strict = true};
		struct kp_diag d = {{0}};
		FILE *in = fmemopen((void *)texts[i], strlen(texts[i]), "r");
		struct kp_profile *p, *q;
		char *buf, *a, *b;
		size_t len;
		int err;

		CHECK_EQ_INT(kp_folded_read(f, in, "in", &ro, NULL, &d), 0);
		fclose(in);
		p = kp_fold_to_profile(f, NULL);
		buf = record(p, &len);
		q = read_buf(buf, len, &d, &err);
		CHECK_EQ_INT(err, 0);
		CHECK(q && same_profile(p, q));
		a = fold_text(p);
		b = q ? fold_text(q) : NULL;
		CHECK_EQ_STR(b, a);
		free(a);
		free(b);
		free(buf);
		kp_profile_free(p);
		kp_profile_free(q);
		kp_folded_free(f);
	}
}

/* ---- damage, through kp_load_profile as `kprof report` reads ---- */

static char tmpdir[] = "/tmp/kp_test_recording.XXXXXX";
static char path[sizeof(tmpdir) + 16];

static void put_file(const void *buf, size_t len)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (!f)
		return;
	CHECK_EQ_INT(fwrite(buf, 1, len, f), len);
	fclose(f);
}

/* Loads buf as a file. Returns the profile, or NULL with a message that is
 * one line naming the file (checked). */
static struct kp_profile *load(const void *buf, size_t len, struct kp_diag *d)
{
	struct kp_profile *p;
	int err;

	put_file(buf, len);
	memset(d, 0, sizeof(*d));
	err = kp_load_profile(path, NULL, &p, NULL, d);
	if (err) {
		bool one_line = !strchr(d->msg, '\n') && strncmp(d->msg, path, strlen(path)) == 0;

		if (!one_line)
			fprintf(stderr, "not one line naming the file: %s\n", d->msg);
		CHECK(one_line);
		CHECK(p == NULL);
		return NULL;
	}
	return p;
}

static struct kp_profile *small_profile(void)
{
	struct kp_profile *p = kp_profile_new();
	struct kp_loc lu = {.addr = 0x1130, .obj = 1, .kind = KP_LOC_USER};
	struct kp_loc lk = {.addr = 0xffffffff81000000ull, .kind = KP_LOC_KERNEL};
	uint32_t u = kp_profile_location(p, &lu), k = kp_profile_location(p, &lk);
	struct kp_profile_frame fu[2] = {{fn(p, "main", "m.c"), 3, KP_FRAME_USER},
					 {fn(p, "inl", "m.h"), 9, KP_FRAME_INLINE}};
	struct kp_profile_frame fk = {fn(p, "sys_read", ""), 0, KP_FRAME_KERNEL};
	struct kp_profile_mapping m = {.kind = KP_LOC_USER, .obj = 1, .build_id_len = 4};
	struct kp_profile_root r = {kp_profile_intern(p, "prog", 4), 7, 8};
	uint32_t s1[] = {u, k}, s2[] = {u};
	kp_count v[2] = {5, 5000};

	kp_profile_add_value_type(p, "samples", "count", 0);
	kp_profile_add_value_type(p, "cpu", "nanoseconds", 0);
	kp_profile_set_frames(p, u, fu, 2, true);
	kp_profile_set_frames(p, k, &fk, 1, true);
	memcpy(m.build_id, "\x12\x34\x56\x78", 4);
	m.path = kp_profile_intern(p, "/bin/prog", 9);
	kp_profile_set_mapping(p, &m);
	kp_profile_add(p, &r, s1, 2, v);
	kp_profile_add(p, &r, s2, 1, v);
	kp_profile_set_meta(p, KP_META_EVENT, "cpu-clock");
	return p;
}

static void test_truncated(void)
{
	struct kp_profile *p = small_profile(), *q;
	struct kp_diag d;
	size_t len;
	char *buf = record(p, &len);
	size_t refused = 0;

	q = load(buf, len, &d);
	CHECK(q && same_profile(p, q));
	kp_profile_free(q);
	for (size_t n = 0; n < len; n++) {
		q = load(buf, n, &d);
		refused += !q;
		kp_profile_free(q);
	}
	CHECK_EQ_INT(refused, len);
	/* the messages say what happened */
	load(buf, 6, &d);
	CHECK(strstr(d.msg, "truncated .kprof recording (in its header)") != NULL);
	load(buf, len - 1, &d);
	CHECK(strstr(d.msg, "truncated .kprof recording") != NULL);
	load(buf, KP_RECORDING_HEADER_SIZE, &d);
	CHECK(strstr(d.msg, "truncated .kprof recording (it ends before its end chunk)") != NULL);
	free(buf);
	kp_profile_free(p);
}

static void test_bit_flips(void)
{
	struct kp_profile *p = small_profile(), *q;
	struct kp_diag d;
	size_t len, refused = 0, same = 0, flips = 0;
	char *buf = record(p, &len);

	/* every bit of the file (a few hundred bytes) */
	for (size_t i = 0; i < len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			buf[i] ^= (char)(1 << bit);
			q = load(buf, len, &d);
			flips++;
			if (!q) {
				refused++;
			} else if (same_profile(p, q)) {
				same++;
			} else {
				fprintf(stderr, "flip of bit %d at %zu: read differently: %s\n",
					bit, i, why);
				CHECK(!"a flipped bit gives another profile");
			}
			kp_profile_free(q);
			buf[i] ^= (char)(1 << bit);
		}
	}
	CHECK_EQ_INT(refused + same, flips);
	/* only what carries nothing may change: the minor version, the
	 * reserved byte, a few bits of zstd's frame header */
	CHECK(same < 40);
	printf("bit flips: %zu of %zu refused, %zu read identically (%zu bytes)\n", refused, flips,
	       same, len);
	free(buf);
	kp_profile_free(p);
}

static void test_versions(void)
{
	struct kp_profile *p = small_profile(), *q;
	struct kp_diag d;
	size_t len;
	char *buf = record(p, &len);
	char want[512];

	buf[5] = 3;
	q = load(buf, len, &d);
	CHECK(q == NULL);
	snprintf(want, sizeof(want), "%s: kprof recording format 3.x; this kprof reads 1.x", path);
	CHECK_EQ_STR(d.msg, want);
	buf[5] = 0;
	CHECK(load(buf, len, &d) == NULL);
	buf[5] = KP_RECORDING_MAJOR;
	/* a newer minor of the same major reads */
	buf[6] = 9;
	q = load(buf, len, &d);
	CHECK(q && same_profile(p, q));
	kp_profile_free(q);
	free(buf);
	kp_profile_free(p);
}

/* A recording made of header and the given decompressed body. */
static char *wrap(const void *body, size_t body_len, unsigned minor, size_t *len)
{
	char *buf = NULL;
	FILE *out = open_memstream(&buf, len);
	unsigned char header[KP_RECORDING_HEADER_SIZE] = {
		'K', 'P', 'R', 'O', 'F', KP_RECORDING_MAJOR, (unsigned char)minor};
	struct kp_zstd_writer *z;
	struct kp_diag d;

	fwrite(header, 1, sizeof(header), out);
	z = kp_zstd_writer_new(out, 3);
	fwrite(body, 1, body_len, kp_zstd_writer_file(z));
	CHECK_EQ_INT(kp_zstd_writer_finish(z, &d), 0);
	fclose(out);
	return buf;
}

/* The decompressed body of a recording. */
static char *unwrap(const char *rec, size_t rec_len, size_t *len)
{
	FILE *in = fmemopen((void *)(rec + KP_RECORDING_HEADER_SIZE),
			    rec_len - KP_RECORDING_HEADER_SIZE, "r");
	struct kp_zstd_reader *z = kp_zstd_reader_new(in);
	char *buf = NULL, chunk[4096];
	FILE *out = open_memstream(&buf, len);
	size_t n;

	while ((n = fread(chunk, 1, sizeof(chunk), kp_zstd_reader_file(z))) > 0)
		fwrite(chunk, 1, n, out);
	CHECK(kp_zstd_reader_error(z) == NULL);
	kp_zstd_reader_free(z);
	fclose(in);
	fclose(out);
	return buf;
}

static void test_future_minor(void)
{
	struct kp_profile *p = small_profile(), *q;
	struct kp_diag d;
	size_t len, body_len, first, newlen, out_len;
	char *rec = record(p, &len), *body = unwrap(rec, len, &body_len), *nb, *out;
	/* chunks a newer minor might write: a chunk kind unknown here (field
	 * 9 of Chunk, a message), and a functions chunk with no function but a
	 * field 9 unknown here (a varint) */
	static const unsigned char extra[] = {0x0a, 0x05, 0x4a, 0x03, 0x08, 0x96, 0x01,
					      0x0a, 0x04, 0x1a, 0x02, 0x48, 0x05};

	/* after the first chunk (its length fits in one byte: the strings) */
	CHECK((unsigned char)body[0] == 0x0a && !((unsigned char)body[1] & 0x80));
	first = 2 + (unsigned char)body[1];
	nb = malloc(body_len + sizeof(extra));
	memcpy(nb, body, first);
	memcpy(nb + first, extra, sizeof(extra));
	memcpy(nb + first + sizeof(extra), body + first, body_len - first);
	newlen = body_len + sizeof(extra);
	out = wrap(nb, newlen, KP_RECORDING_MINOR + 1, &out_len);
	q = load(out, out_len, &d);
	if (!q)
		fprintf(stderr, "future minor: %s\n", d.msg);
	CHECK(q && same_profile(p, q));
	kp_profile_free(q);
	free(out);
	/* the same chunks after the end chunk are refused */
	memcpy(nb, body, body_len);
	memcpy(nb + body_len, extra, sizeof(extra));
	out = wrap(nb, newlen, KP_RECORDING_MINOR, &out_len);
	CHECK(load(out, out_len, &d) == NULL);
	CHECK(strstr(d.msg, "data after the end chunk") != NULL);
	free(out);
	free(nb);
	free(body);
	free(rec);
	kp_profile_free(p);
}

/* Bodies whose ids point past their tables: refused, naming what. */
static void test_ids_checked(void)
{
	static const struct {
		const char *what;
		unsigned char body[64];
		size_t len;
	} cases[] = {
		/* Timeline {origin 1, tick 5, sample 0, tid 0} with no samples */
		{"names sample 0 of 0",
		 {0x0a, 0x0d, 0x42, 0x0b, 0x08, 0x01, 0x12, 0x01, 0x05, 0x1a, 0x01, 0x00, 0x22,
		  0x01, 0x00},
		 15},
		/* a sample with an empty stack, then timelines at 5 ms and at 3 ms */
		{"event 1 at 3 ms, before the one before it (5 ms)",
		 {0x0a, 0x14, 0x32, 0x12, 0x0a, 0x01, 0x00, 0x12, 0x01, 0x00, 0x1a, 0x01, 0x00,
		  0x22, 0x01, 0x00, 0x2a, 0x01, 0x00, 0x32, 0x01, 0x00, 0x0a, 0x0d, 0x42, 0x0b,
		  0x08, 0x01, 0x12, 0x01, 0x05, 0x1a, 0x01, 0x00, 0x22, 0x01, 0x00, 0x0a, 0x0d,
		  0x42, 0x0b, 0x08, 0x01, 0x12, 0x01, 0x03, 0x1a, 0x01, 0x00, 0x22, 0x01, 0x00},
		 52},
		/* the same, the second timeline of origin 2 */
		{"a timeline of another origin",
		 {0x0a, 0x14, 0x32, 0x12, 0x0a, 0x01, 0x00, 0x12, 0x01, 0x00, 0x1a, 0x01, 0x00,
		  0x22, 0x01, 0x00, 0x2a, 0x01, 0x00, 0x32, 0x01, 0x00, 0x0a, 0x0d, 0x42, 0x0b,
		  0x08, 0x01, 0x12, 0x01, 0x05, 0x1a, 0x01, 0x00, 0x22, 0x01, 0x00, 0x0a, 0x0d,
		  0x42, 0x0b, 0x08, 0x02, 0x12, 0x01, 0x06, 0x1a, 0x01, 0x00, 0x22, 0x01, 0x00},
		 52},
		/* Timeline {tick 1, 2} but one sample id: columns differ */
		{"columns of different lengths",
		 {0x0a, 0x0c, 0x42, 0x0a, 0x12, 0x02, 0x01, 0x02, 0x1a, 0x01, 0x00, 0x22, 0x01,
		  0x00},
		 14},
		/* Samples {comm 0, pid 0, tid 0, back 0, shared 0, depth 1,
		 * location +5 (zigzag 10)} */
		{"names location 5 of 0",
		 {0x0a, 0x17, 0x32, 0x15, 0x0a, 0x01, 0x00, 0x12, 0x01, 0x00, 0x1a, 0x01, 0x00,
		  0x22, 0x01, 0x00, 0x2a, 0x01, 0x00, 0x32, 0x01, 0x01, 0x3a, 0x01, 0x0a},
		 25},
		/* Samples {comm 3 ...} with no strings */
		{"names string 3 of 0",
		 {0x0a, 0x14, 0x32, 0x12, 0x0a, 0x01, 0x03, 0x12, 0x01, 0x00, 0x1a,
		  0x01, 0x00, 0x22, 0x01, 0x00, 0x2a, 0x01, 0x00, 0x32, 0x01, 0x00},
		 22},
		/* Samples {shared 2} with no earlier sample to share with */
		{"0 back, 2 shared locations",
		 {0x0a, 0x14, 0x32, 0x12, 0x0a, 0x01, 0x00, 0x12, 0x01, 0x00, 0x1a,
		  0x01, 0x00, 0x22, 0x01, 0x00, 0x2a, 0x01, 0x02, 0x32, 0x01, 0x00},
		 22},
		/* two samples: an empty stack, then one sharing 3 locations of it */
		{"shares 3 locations of 0",
		 {0x0a, 0x1a, 0x32, 0x18, 0x0a, 0x02, 0x00, 0x00, 0x12, 0x02,
		  0x00, 0x00, 0x1a, 0x02, 0x00, 0x00, 0x22, 0x02, 0x00, 0x01,
		  0x2a, 0x02, 0x00, 0x03, 0x32, 0x02, 0x00, 0x00},
		 28},
		/* Locations {kind 2, object 0, address 0, state 1, frames 1,
		 * function +7 (zigzag 14), line 0, frame_kind 0} */
		{"names function 7 of 0",
		 {0x0a, 0x1a, 0x22, 0x18, 0x0a, 0x01, 0x02, 0x12, 0x01, 0x00,
		  0x1a, 0x01, 0x00, 0x22, 0x01, 0x01, 0x2a, 0x01, 0x01, 0x32,
		  0x01, 0x0e, 0x3a, 0x01, 0x00, 0x42, 0x01, 0x00},
		 28},
		/* Locations {kind 9 ...} */
		{"location 0 has kind 9",
		 {0x0a, 0x11, 0x22, 0x0f, 0x0a, 0x01, 0x09, 0x12, 0x01, 0x00, 0x1a, 0x01, 0x00,
		  0x22, 0x01, 0x00, 0x2a, 0x01, 0x00},
		 19},
		/* Functions {name 9, file 0} */
		{"names string 9 of 0",
		 {0x0a, 0x08, 0x1a, 0x06, 0x0a, 0x01, 0x09, 0x12, 0x01, 0x00},
		 10},
		/* Strings {"a", "a"} */
		{"string 2 repeats string 1",
		 {0x0a, 0x08, 0x0a, 0x06, 0x0a, 0x01, 'a', 0x0a, 0x01, 'a'},
		 10},
		/* a chunk claiming 2^30 bytes */
		{"a chunk of 1073741824 bytes", {0x0a, 0x80, 0x80, 0x80, 0x80, 0x04}, 6},
		/* bytes that are no chunk */
		{"no chunk starts here", {0x12, 0x00}, 2},
		/* a chunk that does not decode: Strings with a length past its end */
		{"do not decode", {0x0a, 0x03, 0x0a, 0x05, 0x0a}, 5},
		/* End {samples 4} with no samples */
		{"4 samples said, 0 read", {0x0a, 0x04, 0x7a, 0x02, 0x38, 0x04}, 6},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kp_diag d;
		size_t len;
		char *rec = wrap(cases[i].body, cases[i].len, 0, &len);

		CHECK(load(rec, len, &d) == NULL);
		if (!strstr(d.msg, cases[i].what))
			fprintf(stderr, "expected \"%s\" in: %s\n", cases[i].what, d.msg);
		CHECK(strstr(d.msg, cases[i].what) != NULL);
		free(rec);
	}
}

static void test_foreign(void)
{
	unsigned char rnd[4096];
	unsigned seed = 20261201;
	struct kp_diag d;
	size_t len;
	char *rec;

	for (size_t i = 0; i < sizeof(rnd); i++) {
		seed = seed * 1103515245 + 12345;
		rnd[i] = (unsigned char)(seed >> 16);
	}
	/* random bytes */
	CHECK(load(rnd, sizeof(rnd), &d) == NULL);
	/* random bytes behind a recording's header */
	memcpy(rnd, "KPROF\x01\x00\x00", 8);
	CHECK(load(rnd, sizeof(rnd), &d) == NULL);
	CHECK(strstr(d.msg, "damaged .kprof recording") != NULL);
	/* valid zstd of random bytes behind the header */
	rec = wrap(rnd + 8, sizeof(rnd) - 8, 0, &len);
	CHECK(load(rec, len, &d) == NULL);
	CHECK(strstr(d.msg, "damaged .kprof recording") != NULL);
	free(rec);
	/* a .zst of something else than folded text */
	rec = wrap(rnd + 8, sizeof(rnd) - 8, 0, &len);
	CHECK(load(rec + KP_RECORDING_HEADER_SIZE, len - KP_RECORDING_HEADER_SIZE, &d) == NULL);
	free(rec);
	/* gzip (a pprof profile is gzip-compressed protobuf) */
	memcpy(rnd, "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10);
	CHECK(load(rnd, 200, &d) == NULL);
	CHECK(strstr(d.msg, "binary data") != NULL);
	/* a recording's magic damaged: binary, not folded text */
	{
		struct kp_profile *p = small_profile();
		char *buf = record(p, &len);

		buf[0] = 'k';
		CHECK(load(buf, len, &d) == NULL);
		CHECK(strstr(d.msg, "binary data") != NULL);
		free(buf);
		kp_profile_free(p);
	}
}

static void setup(void)
{
	CHECK(mkdtemp(tmpdir) != NULL);
	snprintf(path, sizeof(path), "%s/r.kprof", tmpdir);
}

static void teardown(void)
{
	unlink(path);
	rmdir(tmpdir);
}

KP_TEST_MAIN(setup, test_round_trip, test_empty_profile, test_folded_round_trip, test_truncated,
	     test_bit_flips, test_versions, test_future_minor, test_ids_checked, test_foreign,
	     teardown)
