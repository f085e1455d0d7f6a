/* formats/timeline_load (several recordings as one timeline): why it
 * refuses, in d, before any profile is made: a directory that cannot be
 * read or holds no recording, files that keep no time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/timeline_load.h"
#include "kp_test.h"

static char dir[] = "/tmp/kp-timeline-load-XXXXXX";

static void test_dir(void)
{
	struct kp_load_opts lo = {0};
	struct kp_profile *p = (struct kp_profile *)&lo; /* set to NULL on failure */
	struct kp_diag d = {""};
	char path[64];

	CHECK_EQ_INT(kp_timeline_load_dir("/nonexistent-kp", &lo, &p, &d), 1);
	CHECK(p == NULL);
	CHECK_EQ_STR(d.msg, "cannot read /nonexistent-kp: No such file or directory");
	CHECK_EQ_INT(kp_timeline_load_dir(dir, &lo, &p, &d), 1);
	snprintf(path, sizeof(path), "%s holds no .kprof recording", dir);
	CHECK_EQ_STR(d.msg, path);
	/* a directory named like a recording is refused, not read (regular
	 * files only) */
	CHECK_EQ_INT(kp_test_sh("mkdir %s/sub.kprof && echo 'a;b 1' >%s/x.folded", dir, dir), 0);
	CHECK_EQ_INT(kp_timeline_load_dir(dir, &lo, &p, &d), 1);
	CHECK(p == NULL);
}

static void test_untimed(void)
{
	struct kp_load_opts lo = {0};
	struct kp_profile *p = NULL;
	struct kp_diag d = {""};
	char a[64], b[64], *paths[] = {a, b};

	snprintf(a, sizeof(a), "%s/a.folded", dir);
	snprintf(b, sizeof(b), "%s/b.folded", dir);
	CHECK_EQ_INT(kp_test_sh("echo 'main;f 3' >%s && echo 'main;g 2' >%s", a, b), 0);
	CHECK_EQ_INT(kp_timeline_load_files(paths, 2, &lo, &p, &d), 1);
	CHECK(p == NULL);
	CHECK(strncmp(d.msg, a, strlen(a)) == 0 && strstr(d.msg, " keeps no time (folded text"));
}

static void setup(void)
{
	CHECK(mkdtemp(dir) != NULL);
}

static void cleanup(void)
{
	kp_test_sh("rm -rf %s", dir);
}

KP_TEST_MAIN(setup, test_dir, test_untimed, cleanup)
