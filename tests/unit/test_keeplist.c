/* kp_keeplist (kprof --every --keep): the last K distinct names written
 * are kept, whatever order names repeat in (w-%S.folded repeats every
 * minute, not back to back); only files this process wrote are removed,
 * relative to the folder it wrote them in, even once that folder's path
 * leads elsewhere. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kp_test.h"
#include "util/keeplist.h"

static char dir[] = "/tmp/kp-keeplist-XXXXXX";

/* Writes name in dirfd (a new file: rename over the old one, as
 * kp_outfile does) and adds it to k. */
static int write_add(struct kp_keeplist *k, int dirfd, const char *name)
{
	struct kp_diag d = {""};
	int fd = openat(dirfd, ".tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	(void)!write(fd, name, strlen(name));
	close(fd);
	if (renameat(dirfd, ".tmp", dirfd, name) < 0)
		return -errno;
	return kp_keeplist_add(k, dirfd, name, name, &d);
}

static bool exists(int dirfd, const char *name)
{
	struct stat st;

	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The list's names, oldest first, joined by spaces. */
static const char *names(const struct kp_keeplist *k)
{
	static char buf[256];
	size_t n = 0;
	const char *s;

	buf[0] = '\0';
	for (size_t i = 0; (s = kp_keeplist_at(k, i)) && n < sizeof(buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? " " : "", s);
	return buf;
}

/* Names repeating other than back to back: w-%S.folded at --every 1
 * --keep 65 deleted w-48 ... w-57 written in the last 65 windows, as the
 * old list held a name once per write and removed by its oldest entry. */
static void test_repeats(void)
{
	struct kp_keeplist *k = kp_keeplist_new(3);
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

	CHECK_EQ_INT(write_add(k, fd, "a"), 0);
	CHECK_EQ_INT(write_add(k, fd, "b"), 0);
	CHECK_EQ_INT(write_add(k, fd, "c"), 0);
	CHECK_EQ_INT(write_add(k, fd, "a"), 0); /* again: moves to the end, nothing removed */
	CHECK_EQ_STR(names(k), "b c a");
	CHECK(exists(fd, "a") && exists(fd, "b") && exists(fd, "c"));
	CHECK_EQ_INT(write_add(k, fd, "d"), 1); /* b, the oldest written, goes */
	CHECK_EQ_STR(names(k), "c a d");
	CHECK(!exists(fd, "b") && exists(fd, "a") && exists(fd, "c") && exists(fd, "d"));
	CHECK_EQ_INT(write_add(k, fd, "c"), 0);
	CHECK_EQ_INT(write_add(k, fd, "a"), 0);
	CHECK_EQ_STR(names(k), "d c a");
	CHECK_EQ_INT(write_add(k, fd, "e"), 1);
	CHECK(!exists(fd, "d") && exists(fd, "c") && exists(fd, "a") && exists(fd, "e"));
	/* a cycle of 60 names with 65 kept: none ever removed */
	kp_keeplist_free(k);
	k = kp_keeplist_new(65);
	for (int round = 0; round < 3; round++)
		for (int s = 0; s < 60; s++) {
			char name[16];

			snprintf(name, sizeof(name), "w-%02d", s);
			CHECK_EQ_INT(write_add(k, fd, name), 0);
		}
	CHECK_EQ_INT(kp_test_sh("test $(ls %s | grep -c '^w-') -eq 60", dir), 0);
	kp_keeplist_free(k);
	kp_test_sh("rm -f %s/*", dir);
	close(fd);
}

/* Only what this process wrote goes: a name since replaced by another
 * file, or by a directory, is left; removal is relative to the folder
 * written in, whatever its path now leads to. */
static void test_only_ours(void)
{
	struct kp_keeplist *k = kp_keeplist_new(1);
	char sub[64], moved[64];
	int fd;

	snprintf(sub, sizeof(sub), "%s/sub", dir);
	snprintf(moved, sizeof(moved), "%s/moved", dir);
	CHECK_EQ_INT(mkdir(sub, 0700), 0);
	fd = open(sub, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK_EQ_INT(write_add(k, fd, "x"), 0);
	/* x replaced by another file: not ours any more, left */
	CHECK_EQ_INT(kp_test_sh("cd %s && echo theirs > y && mv y x", sub), 0);
	CHECK_EQ_INT(write_add(k, fd, "z"), 0);
	CHECK(exists(fd, "x") && exists(fd, "z"));
	/* the folder's path now leads elsewhere: z is removed where it was
	 * written, nothing in the new folder under that path */
	CHECK_EQ_INT(kp_test_sh("mv %s %s && mkdir %s && echo other > %s/z", sub, moved, sub, sub),
		     0);
	CHECK_EQ_INT(write_add(k, fd, "w"), 1);
	CHECK_EQ_INT(
		kp_test_sh("test ! -e %s/z && test -e %s/w && test -e %s/z", moved, moved, sub), 0);
	/* a directory put at a kept name: left */
	CHECK_EQ_INT(kp_test_sh("rm %s/w && mkdir %s/w", moved, moved), 0);
	CHECK_EQ_INT(write_add(k, fd, "v"), 0);
	CHECK_EQ_INT(kp_test_sh("test -d %s/w", moved), 0);
	kp_keeplist_free(k);
	close(fd);
	kp_test_sh("rm -rf %s/*", dir);
}

/* --keep 0: nothing followed, nothing removed. */
static void test_keep_all(void)
{
	struct kp_keeplist *k = kp_keeplist_new(0);
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

	for (int i = 0; i < 5; i++) {
		char name[16];

		snprintf(name, sizeof(name), "n%d", i);
		CHECK_EQ_INT(write_add(k, fd, name), 0);
	}
	CHECK(kp_keeplist_at(k, 0) == NULL);
	CHECK_EQ_INT(kp_test_sh("test $(ls %s | wc -l) -eq 5", dir), 0);
	kp_keeplist_free(k);
	kp_keeplist_free(NULL);
	close(fd);
	kp_test_sh("rm -f %s/*", dir);
}

static void setup(void)
{
	CHECK(mkdtemp(dir) != NULL);
}

static void cleanup(void)
{
	kp_test_sh("rm -rf %s", dir);
}

KP_TEST_MAIN(setup, test_repeats, test_only_ours, test_keep_all, cleanup)
