/* The files of kprof --every's windows (output/window_files.c): a
 * pattern's time fields, and a name moved aside, its format's extension
 * kept, from what is in its way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kp_test.h"
#include "output/window_files.h"

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

KP_TEST_MAIN(test_window_paths)
