/* The files of kprof --every's windows (output/window_files.c): a
 * pattern's time fields, and a name moved aside, its format's extension
 * kept, from what is in its way; the windows written, --keep's oldest
 * removed, and what goes wrong said through the caller. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kp_test.h"
#include "output/output.h"
#include "output/window_files.h"
#include "profile/profile.h"

static void test_window_paths(void)
{
	char dir[] = "/tmp/kp-window-files-XXXXXX", pattern[256], want[256];
	struct kp_diag d = {""}, moved = {""};
	time_t t = 1000000000; /* 2001-09-09 in every time zone */
	char *name;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(pattern, sizeof(pattern), "%s/w-%%Y.kprof", dir);
	name = kp_window_files_path(pattern, t, 0, &d, &moved);
	snprintf(want, sizeof(want), "%s/w-2001.kprof", dir);
	CHECK_EQ_STR(name, want);
	CHECK_EQ_STR(moved.msg, "");
	free(name);
	/* a directory in the way: NAME.1.EXT, the two-part extension kept */
	CHECK_EQ_INT(kp_test_sh("mkdir %s/b.pb.gz %s/c %s/c.1", dir, dir, dir), 0);
	snprintf(pattern, sizeof(pattern), "%s/b.pb.gz", dir);
	name = kp_window_files_path(pattern, t, 7, &d, &moved);
	snprintf(want, sizeof(want), "%s/b.1.pb.gz", dir);
	CHECK_EQ_STR(name, want);
	CHECK(strstr(moved.msg, "window 7: ") == moved.msg);
	CHECK(strstr(moved.msg, "is in the way") != NULL);
	free(name);
	/* no extension of a format: the number goes at the end; c.1 is taken */
	snprintf(pattern, sizeof(pattern), "%s/c", dir);
	name = kp_window_files_path(pattern, t, 1, &d, &moved);
	snprintf(want, sizeof(want), "%s/c.2", dir);
	CHECK_EQ_STR(name, want);
	free(name);
	/* nothing to name a file by */
	CHECK(kp_window_files_path("", t, 0, &d, &moved) == NULL);
	CHECK(strstr(d.msg, "expands to nothing") != NULL);
	kp_test_sh("rm -rf %s", dir);
}

/* What the window files said: the last note and message, and how many. */
struct said {
	enum kp_window_files_note note;
	char msg[512];
	unsigned n;
};

static void say(void *arg, enum kp_window_files_note note, const char *msg)
{
	struct said *s = arg;

	s->note = note;
	snprintf(s->msg, sizeof(s->msg), "%s", msg);
	s->n++;
}

static void test_window_writes(void)
{
	char dir[] = "/tmp/kp-window-files-XXXXXX", pat[2][256];
	const char *pats[2] = {pat[0], pat[1]};
	struct kp_profile *p = kp_profile_new();
	struct kp_loc l = {.addr = 0x10, .obj = 1, .kind = KP_LOC_USER};
	uint32_t loc = kp_profile_location(p, &l);
	struct kp_profile_frame fr = {kp_profile_function(p, kp_profile_intern(p, "main", 4), 0), 1,
				      KP_FRAME_USER};
	struct kp_profile_root r = {kp_profile_intern(p, "prog", 4), 1, 1};
	kp_count v = 3;
	struct kp_output_ctx ctx = {.profile = p, .windows = true};
	struct kp_window_files *w;
	struct said s = {0};

	CHECK(mkdtemp(dir) != NULL);
	kp_profile_add_value_type(p, "samples", "count", 0);
	kp_profile_set_frames(p, loc, &fr, 1, true);
	CHECK(kp_profile_add(p, &r, &loc, 1, &v));
	snprintf(pat[0], sizeof(pat[0]), "%s/w-%%s.folded", dir);
	snprintf(pat[1], sizeof(pat[1]), "%s/w-%%s.txt", dir);
	CHECK(kp_window_files_lines(NULL, pats, 1) == false);
	/* three windows, the last two kept of each pattern */
	w = kp_window_files_new(NULL, pats, 2, 2, say, &s);
	for (unsigned i = 0; i < 3; i++)
		CHECK_EQ_INT(kp_window_files_write(w, &ctx, 1000 + i, i), 0);
	kp_window_files_free(w);
	CHECK_EQ_INT(s.n, 0);
	CHECK_EQ_INT(kp_test_sh("cd %s && test \"$(ls | tr '\\n' ' ')\" = "
				"'w-1001.folded w-1001.txt w-1002.folded w-1002.txt '",
				dir),
		     0);
	CHECK_EQ_INT(kp_test_sh("grep -qx 'prog;main 3' %s/w-1002.txt", dir), 0);
	/* an extension no format has: said so that the caller lists them */
	snprintf(pat[0], sizeof(pat[0]), "%s/w.xyz", dir);
	CHECK_EQ_INT(kp_window_files_check(NULL, pats, 1, say, &s), 2);
	CHECK(s.n == 1 && s.note == KP_WINDOW_FILES_UNKNOWN_EXT && strstr(s.msg, "w.xyz"));
	/* a directory that is not there: an error, at the check and later */
	snprintf(pat[0], sizeof(pat[0]), "%s/no/w.folded", dir);
	CHECK(kp_window_files_check(NULL, pats, 1, say, &s) != 0);
	CHECK(s.n == 2 && s.note == KP_WINDOW_FILES_ERROR);
	w = kp_window_files_new(NULL, pats, 1, 0, say, &s);
	CHECK_EQ_INT(kp_window_files_write(w, &ctx, 1000, 0), -1);
	CHECK(s.n == 3 && s.note == KP_WINDOW_FILES_ERROR);
	kp_window_files_free(w);
	kp_profile_free(p);
	kp_test_sh("rm -rf %s", dir);
}

KP_TEST_MAIN(test_window_paths, test_window_writes)
