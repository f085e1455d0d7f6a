/* Off-CPU and wall-clock profiles (profile/wait.h) in the outputs: a
 * value in nanoseconds folds into microseconds, each folded stack's sum
 * rounded once (halves up; under half a microsecond left out), exactly,
 * into a count table or either side of a differential one; marker frames
 * pass through folded text, both ways; the SVG draws frames more than half
 * off-CPU in the io palette's blues and says the split in their titles
 * (">99%" and "<1%" where rounding would hide a side), and a table
 * without markers draws no trace of it; the top table counts "us" and
 * says the off-CPU share; a .kprof keeps the value types and the markers;
 * `kprof diff` reads each profile's first value by default, names the
 * values a file has when --value is not one of them, and refuses sides
 * whose first values differ.
 *
 * tests/fixtures/offcpu/ holds the two profiles built here as .kprof
 * files, for tests/golden/offcpu.sh: they are checked to hold what these
 * functions build, and KP_REGENERATE_FIXTURES=1 writes them again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diff/diff_files.h"
#include "flamegraph/svg.h"
#include "formats/folded_read.h"
#include "formats/folded_write.h"
#include "formats/load.h"
#include "formats/recording.h"
#include "formats/top.h"
#include "kp_test.h"
#include "profile/fold.h"
#include "profile/profile.h"
#include "profile/wait.h"

/* Adds the stack "a;b_[k];c" (root first; _[k] marks a kernel frame) of
 * task server-PID with values v. */
static void add(struct kp_profile *p, uint32_t pid, const char *stack, const kp_count *v)
{
	struct kp_profile_root r = {kp_profile_intern(p, "server", 6), pid, pid};
	uint32_t locs[32];
	size_t n = 0;

	for (const char *s = stack; *s && n < 32;) {
		const char *end = strchr(s, ';');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		bool kernel = len > 4 && memcmp(s + len - 4, "_[k]", 4) == 0;

		locs[n++] = kp_profile_named_location(p, s, kernel ? len - 4 : len,
						      kernel ? KP_FRAME_KERNEL : KP_FRAME_USER);
		s += len + (end != NULL);
	}
	CHECK(kp_profile_add(p, &r, locs, n, v));
}

#define READ  "main;serve;read_request;read;entry_SYSCALL_64_[k];schedule_[k];"
#define FSYNC "main;serve;write_log;fsync;io_schedule_[k];"

/* kprof --off-cpu's values: off-cpu nanoseconds, samples (switches). Two
 * tasks wait in one stack (700 ns each: 1 us once summed, not 2); one
 * stack waits 400 ns (0 us). */
static struct kp_profile *offcpu_profile(void)
{
	struct kp_profile *p = kp_profile_new();

	kp_wait_value_types(p, false);
	add(p, 100, READ "[off-cpu: sleeping]", (kp_count[]){30000000, 12});
	add(p, 100, FSYNC "[off-cpu: uninterruptible]", (kp_count[]){15000400, 3});
	add(p, 100, "main;serve;handle;[off-cpu: preempted]", (kp_count[]){5000500, 7});
	add(p, 100, "main;wait_child;[off-cpu: sleeping]", (kp_count[]){700, 1});
	add(p, 101, "main;wait_child;[off-cpu: sleeping]", (kp_count[]){700, 1});
	add(p, 100, "main;tiny;[off-cpu: other]", (kp_count[]){400, 1});
	kp_profile_set_meta(p, KP_META_COMMAND, "kprof --off-cpu -- ./server");
	return p;
}

/* kprof --wall's: wall, samples, cpu, off-cpu (wall = cpu + off-cpu).
 * serve is 90 ms, 50 of them off CPU (56%); handle 45, 5 off (11%); main
 * 100, half off. */
static struct kp_profile *wall_profile(void)
{
	struct kp_profile *p = kp_profile_new();

	kp_wait_value_types(p, true);
	add(p, 100, "main;serve;handle;compute", (kp_count[]){40000000, 40, 40000000, 0});
	add(p, 100, READ "[off-cpu: sleeping]", (kp_count[]){30000000, 30, 0, 30000000});
	add(p, 100, FSYNC "[off-cpu: uninterruptible]", (kp_count[]){15000000, 15, 0, 15000000});
	add(p, 100, "main;serve;handle;[off-cpu: preempted]", (kp_count[]){5000000, 5, 0, 5000000});
	add(p, 100, "main;idle_loop", (kp_count[]){10000000, 10, 10000000, 0});
	kp_profile_set_meta(p, KP_META_COMMAND, "kprof --wall -- ./server");
	return p;
}

/* The folded text of f. The caller frees it. */
static char *text_of(const struct kp_folded *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	CHECK_EQ_INT(kp_folded_write(f, out, KP_FOLDED_ANNOTATE_ALL), 0);
	fclose(out);
	return buf;
}

/* The folded text of value v of p. The caller frees it. */
static char *fold_text(const struct kp_profile *p, size_t v)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_fold_opts o = {.value = v};
	char *s;

	CHECK(kp_fold_add_profile(f, p, &o));
	s = text_of(f);
	kp_folded_free(f);
	return s;
}

#define S_READ	"server;" READ "[off-cpu: sleeping] "
#define S_FSYNC "server;" FSYNC "[off-cpu: uninterruptible] "
#define S_PRE	"server;main;serve;handle;[off-cpu: preempted] "

static void test_fold_micros(void)
{
	struct kp_profile *p = offcpu_profile();
	struct kp_folded *f = kp_folded_new();
	struct kp_fold_opts before = {.into = KP_FOLD_BEFORE}, after = {.into = KP_FOLD_AFTER};
	char *s;

	CHECK(kp_fold_micros(p, 0));
	CHECK(!kp_fold_micros(p, 1));
	CHECK(!kp_fold_micros(p, 2));
	/* 15000400 ns: 15000 us; 5000500: 5001 (halves up); wait_child's
	 * 700 + 700 once; tiny's 400 left out */
	s = fold_text(p, 0);
	CHECK_EQ_STR(s, S_PRE "5001\n" S_READ "30000\n" S_FSYNC "15000\n"
			      "server;main;wait_child;[off-cpu: sleeping] 1\n");
	free(s);
	/* counts stay counts */
	s = fold_text(p, 1);
	CHECK_EQ_STR(s, S_PRE "7\n" S_READ "12\n" S_FSYNC "3\n"
			      "server;main;tiny;[off-cpu: other] 1\n"
			      "server;main;wait_child;[off-cpu: sleeping] 2\n");
	free(s);
	/* either side of a differential table (kprof diff) */
	CHECK(kp_fold_add_profile(f, p, &before));
	CHECK(kp_fold_add_profile(f, p, &after));
	s = text_of(f);
	CHECK_EQ_STR(s, S_PRE "5001 5001\n" S_READ "30000 30000\n" S_FSYNC "15000 15000\n"
			      "server;main;wait_child;[off-cpu: sleeping] 1 1\n");
	free(s);
	kp_folded_free(f);
	kp_profile_free(p);
}

static void test_wall_values(void)
{
	struct kp_profile *p = wall_profile();
	char *s;

	CHECK(kp_fold_micros(p, 0) && !kp_fold_micros(p, 1));
	CHECK(kp_fold_micros(p, 2) && kp_fold_micros(p, 3));
	s = fold_text(p, 0);
	CHECK_EQ_STR(s,
		     "server;main;idle_loop 10000\n" S_PRE "5000\n"
		     "server;main;serve;handle;compute 40000\n" S_READ "30000\n" S_FSYNC "15000\n");
	free(s);
	/* cpu: the on-CPU stacks alone (the others are 0 us) */
	s = fold_text(p, 2);
	CHECK_EQ_STR(s, "server;main;idle_loop 10000\nserver;main;serve;handle;compute 40000\n");
	free(s);
	/* off-cpu: the marker stacks alone */
	s = fold_text(p, 3);
	CHECK_EQ_STR(s, S_PRE "5000\n" S_READ "30000\n" S_FSYNC "15000\n");
	free(s);
	kp_profile_free(p);
}

/* Folded text with marker frames reads and writes back as it was, and
 * through a profile too. */
static void test_markers_round_trip(void)
{
	static const char text[] =
		S_PRE "5000\n"
		      "server;main;serve;handle;compute 40000\n" S_READ "30000\n";
	struct kp_folded *f = kp_folded_new();
	struct kp_folded_read_opts ro = {.strict = true};
	struct kp_diag d;
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	struct kp_profile *p;
	char *s;

	CHECK_EQ_INT(kp_folded_read(f, in, "in", &ro, NULL, &d), 0);
	fclose(in);
	s = text_of(f);
	CHECK_EQ_STR(s, text);
	free(s);
	p = kp_fold_to_profile(f, NULL);
	s = fold_text(p, 0);
	CHECK_EQ_STR(s, text);
	free(s);
	CHECK(kp_wait_is_frame("[off-cpu: preempted]", 20));
	CHECK(!kp_wait_is_frame("[off-cpu: ", 10));
	CHECK(!kp_wait_is_frame("[unknown]", 9));
	kp_profile_free(p);
	kp_folded_free(f);
}

/* The SVG of f with countname; the caller frees it. */
static char *svg_of(const struct kp_folded *f, const char *countname)
{
	struct kp_svg_opts o;
	struct kp_diag d;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	kp_svg_opts_init(&o);
	o.countname = countname;
	CHECK_EQ_INT(kp_svg_write(f, &o, out, &d), 0);
	fclose(out);
	return buf;
}

/* The fill of the frame whose title is title: 0 when no such frame, 1
 * when in the io palette's blues (r = g in 80..139, b 190..244), 2 else. */
static int fill_of(const char *svg, const char *title)
{
	const char *t = strstr(svg, title), *fill;
	unsigned r, g, b;

	if (!t || !(fill = strstr(t, "fill=\"#")) ||
	    sscanf(fill, "fill=\"#%2x%2x%2x", &r, &g, &b) != 3)
		return 0;
	return r == g && r >= 80 && r < 140 && b >= 190 && b < 245 ? 1 : 2;
}

static void test_svg(void)
{
	struct kp_profile *p = wall_profile();
	struct kp_folded *f = kp_folded_new(), *g;
	struct kp_fold_opts o = {0};
	struct kp_folded_read_opts ro = {0};
	struct kp_diag d;
	static const char edges[] =
		"a;x 1\na;[off-cpu: sleeping] 999\nb;y 999\nb;[off-cpu: other] 1\n",
			  plain[] = "a;x 1\na;sleeping 999\n";
	FILE *in;
	char *s;

	CHECK(kp_fold_add_profile(f, p, &o));
	s = svg_of(f, "us");
	CHECK(strstr(s, "countname: \"us\"") != NULL);
	CHECK_EQ_INT(fill_of(s, "<title>all (100,000 us, 100%; 50% off-CPU)</title>"), 2);
	CHECK_EQ_INT(fill_of(s, "<title>main (100,000 us, 100.00%; 50% off-CPU)</title>"), 2);
	CHECK_EQ_INT(fill_of(s, "<title>serve (90,000 us, 90.00%; 56% off-CPU)</title>"), 1);
	CHECK_EQ_INT(fill_of(s, "<title>handle (45,000 us, 45.00%; 11% off-CPU)</title>"), 2);
	CHECK_EQ_INT(fill_of(s, "<title>compute (40,000 us, 40.00%)</title>"), 2);
	CHECK_EQ_INT(fill_of(s, "<title>read (30,000 us, 30.00%; 100% off-CPU)</title>"), 1);
	CHECK_EQ_INT(fill_of(s, "<title>[off-cpu: preempted] (5,000 us, 5.00%; 100% off-CPU)"), 1);
	CHECK_EQ_INT(fill_of(s, "<title>idle_loop (10,000 us, 10.00%)</title>"), 2);
	free(s);

	/* a side that rounds to 0 or 100 is still shown */
	g = kp_folded_new();
	in = fmemopen((void *)edges, strlen(edges), "r");
	CHECK_EQ_INT(kp_folded_read(g, in, "in", &ro, NULL, &d), 0);
	fclose(in);
	s = svg_of(g, NULL);
	CHECK_EQ_INT(fill_of(s, "<title>a (1,000 samples, 50.00%; &gt;99% off-CPU)</title>"), 1);
	CHECK_EQ_INT(fill_of(s, "<title>b (1,000 samples, 50.00%; &lt;1% off-CPU)</title>"), 2);
	free(s);
	kp_folded_free(g);

	/* without markers, no word of it */
	g = kp_folded_new();
	in = fmemopen((void *)plain, strlen(plain), "r");
	CHECK_EQ_INT(kp_folded_read(g, in, "in", &ro, NULL, &d), 0);
	fclose(in);
	s = svg_of(g, NULL);
	CHECK(strstr(s, "off-CPU") == NULL);
	CHECK_EQ_INT(fill_of(s, "<title>a (1,000 samples, 100.00%)</title>"), 2);
	free(s);
	kp_folded_free(g);
	kp_folded_free(f);
	kp_profile_free(p);
}

static void test_top(void)
{
	struct kp_profile *p = offcpu_profile();
	struct kp_folded *f = kp_folded_new();
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	CHECK(kp_fold_add_profile(f, p, NULL));
	CHECK_EQ_INT(kp_top_write(f, out, 3, "off-cpu", "us"), 0);
	fclose(out);
	CHECK(strstr(buf, "50002 us of off-cpu in 4 distinct stacks, 100.00% of it off-CPU.\n") ==
	      buf);
	/* a wait's self time is the function's that waited; its kind is in
	 * the total table */
	CHECK(strstr(buf, "    share    off-cpu (us)  function\n"
			  "   60.00%           30000  read\n"
			  "   30.00%           15000  fsync\n") != NULL);
	CHECK(strstr(buf, "   60.00%           30001  [off-cpu: sleeping]\n") != NULL);
	free(buf);
	kp_folded_free(f);
	kp_profile_free(p);
}

/* Writes p as a .kprof at path. */
static void write_kprof(const struct kp_profile *p, const char *path)
{
	FILE *out = fopen(path, "w");
	struct kp_diag d;

	CHECK(out != NULL);
	if (!out)
		return;
	CHECK_EQ_INT(kp_recording_write(p, out, &d), 0);
	CHECK_EQ_INT(fclose(out), 0);
}

/* The .kprof at path holds what p holds: its value types, and each
 * value's folded text. */
static void check_kprof(const struct kp_profile *p, const char *path)
{
	struct kp_profile *q = NULL;
	struct kp_load_opts lo = {0};
	struct kp_load_info info;
	struct kp_diag d = {{0}};
	char a[256], b[256];

	if (kp_load_profile(path, &lo, &q, &info, &d) < 0) {
		fprintf(stderr, "%s: %s\n", path, d.msg);
		CHECK(!"the .kprof loads");
		return;
	}
	CHECK_EQ_STR(kp_profile_value_names(q, a, sizeof(a)),
		     kp_profile_value_names(p, b, sizeof(b)));
	for (size_t v = 0; v < kp_profile_nvalues(p); v++) {
		char *x = fold_text(p, v), *y = fold_text(q, v);

		CHECK_EQ_STR(y, x);
		free(x);
		free(y);
	}
	kp_profile_free(q);
}

static char tmpdir[256];

static void test_kprof_and_fixtures(void)
{
	struct kp_profile *p[2] = {offcpu_profile(), wall_profile()};
	static const char *const names[2] = {"offcpu.kprof", "wall.kprof"};
	const char *fixtures = getenv("KP_FIXTURES");
	bool regenerate = getenv("KP_REGENERATE_FIXTURES") != NULL;
	char path[512];

	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", tmpdir, names[i]);
		write_kprof(p[i], path);
		check_kprof(p[i], path);
		if (!fixtures)
			continue;
		snprintf(path, sizeof(path), "%s/offcpu/%s", fixtures, names[i]);
		if (regenerate)
			write_kprof(p[i], path);
		check_kprof(p[i], path);
	}
	kp_profile_free(p[0]);
	kp_profile_free(p[1]);
}

/* kprof diff of base and new (file names in tmpdir) with --value value:
 * 0 and the sides' value names, or the error. */
static int diff_of(const char *base, const char *new, const char *value, char *msg, size_t size)
{
	struct kp_diff_files_opts o = {.diff.alpha = 0.01, .value = value, .fold = true};
	struct kp_diff_files files;
	struct kp_diag d = {{0}};
	char p0[512], p1[512];
	int err;

	snprintf(p0, sizeof(p0), "%s/%s", tmpdir, base);
	snprintf(p1, sizeof(p1), "%s/%s", tmpdir, new);
	o.path[0] = p0;
	o.path[1] = p1;
	err = kp_diff_files_read(&files, &o, &d);
	if (!err)
		err = kp_diff_files_finish(&files, &o, &d);
	if (err)
		snprintf(msg, size, "%.*s", (int)(size - 1), d.msg);
	else
		snprintf(msg, size, "%s/%s %s/%s", files.side[0].value, files.side[0].unit,
			 files.side[1].value, files.side[1].unit);
	if (!err && value && strcmp(value, "wall") == 0) {
		char *s = text_of(files.fold);

		/* the differential table in microseconds too */
		CHECK(strstr(s, "server;main;serve;handle;compute 40000 40000\n") != NULL);
		free(s);
	}
	kp_diff_files_fini(&files);
	return err;
}

static void test_diff_values(void)
{
	struct kp_profile *cpu = kp_profile_new();
	char path[512], msg[1024];

	kp_profile_add_value_type(cpu, "samples", "count", 0);
	kp_profile_add_value_type(cpu, "cpu", "nanoseconds", 0);
	add(cpu, 7, "main;serve;handle;compute", (kp_count[]){40, 40000000});
	snprintf(path, sizeof(path), "%s/cpu.kprof", tmpdir);
	write_kprof(cpu, path);
	kp_profile_free(cpu);

	CHECK_EQ_INT(diff_of("wall.kprof", "wall.kprof", NULL, msg, sizeof(msg)), 0);
	CHECK_EQ_STR(msg, "wall/nanoseconds wall/nanoseconds");
	CHECK_EQ_INT(diff_of("wall.kprof", "wall.kprof", "wall", msg, sizeof(msg)), 0);
	CHECK_EQ_INT(diff_of("offcpu.kprof", "offcpu.kprof", NULL, msg, sizeof(msg)), 0);
	CHECK_EQ_STR(msg, "off-cpu/nanoseconds off-cpu/nanoseconds");
	CHECK_EQ_INT(diff_of("wall.kprof", "offcpu.kprof", "off-cpu", msg, sizeof(msg)), 0);
	CHECK_EQ_INT(diff_of("cpu.kprof", "cpu.kprof", NULL, msg, sizeof(msg)), 0);
	CHECK_EQ_STR(msg, "samples/count samples/count");
	CHECK_EQ_INT(diff_of("cpu.kprof", "wall.kprof", "cpu", msg, sizeof(msg)), 0);
	CHECK_EQ_STR(msg, "cpu/nanoseconds cpu/nanoseconds");
	/* a value the file lacks: the values it has */
	CHECK(diff_of("cpu.kprof", "offcpu.kprof", "cpu", msg, sizeof(msg)) < 0);
	CHECK(strstr(msg, "offcpu.kprof has no value 'cpu' (it has: off-cpu, samples)") != NULL);
	/* first values of other names: not compared unless told */
	CHECK(diff_of("cpu.kprof", "offcpu.kprof", NULL, msg, sizeof(msg)) < 0);
	CHECK(strstr(msg, "would be of 'samples'") && strstr(msg, "of 'off-cpu'") &&
	      strstr(msg, "--value"));
}

static void test_files(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "%s/kp-offcpu-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		CHECK(!"mkdtemp");
		return;
	}
	test_kprof_and_fixtures();
	test_diff_values();
	kp_test_sh("rm -rf '%s'", tmpdir);
}

KP_TEST_MAIN(test_fold_micros, test_wall_values, test_markers_round_trip, test_svg, test_top,
	     test_files)
