/* kprof's cache directory (util/cachefile.h): made mode 0700 with its
 * parents; refused, with one note, when it or its subdirectory is a
 * symbolic link, not a directory, of a wider mode or (as root) another
 * user's, and then nothing is written anywhere; a link above it is the
 * user's choice; a directory that cannot be made is refused without a
 * word; a link swapped in after the directory was opened is not followed;
 * files are written whole or not at all, mode 0600, and only trusted
 * regular files are read. */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kp_test.h"
#include "util/cachefile.h"

static char top[64];
static char notes[8][1024];
static int nnotes;

static void note(void *arg, const char *msg)
{
	(void)arg;
	if (nnotes < 8)
		snprintf(notes[nnotes], sizeof(notes[0]), "%s", msg);
	nnotes++;
}

static char *path_of(const char *rel)
{
	static char buf[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", top, rel);
	return buf[i];
}

static unsigned mode_of(const char *rel)
{
	struct stat st;

	return lstat(path_of(rel), &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0;
}

/* Writes name in dir with contents text; true when it is there after. */
static bool write_file(struct kp_cachedir *dir, const char *name, const char *text)
{
	char *tmp;
	int fd = kp_cachefile_begin(dir, "test", &tmp);
	bool ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);

	return kp_cachefile_commit(dir, &tmp, fd, ok, name);
}

/* How many entries the directory rel has (-1 when it cannot be read). */
static int entries(const char *rel)
{
	char cmd[512];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", path_of(rel));
	p = popen(cmd, "r");
	if (p && fscanf(p, "%d", &n) != 1)
		n = -1;
	if (p)
		pclose(p);
	return n;
}

/* A new handle on top/rel (kprof's directory) and its symbols/, the notes
 * cleared. */
static struct kp_cachedir *open_cache(const char *rel, struct kp_cachedir **sub)
{
	struct kp_cachedir *dir = kp_cachedir_new(path_of(rel), note, NULL);

	nnotes = 0;
	if (sub)
		*sub = kp_cachedir_sub(dir, "symbols");
	return dir;
}

/* A refused directory: nothing can be written or read through it, and one
 * note (mentioning what) however often it is tried. */
static void check_refused(struct kp_cachedir *dir, const char *what)
{
	struct stat st;
	char *tmp;

	CHECK_EQ_INT(kp_cachedir_fd(dir, true), -1);
	CHECK_EQ_INT(kp_cachefile_begin(dir, "test", &tmp), -1);
	CHECK(tmp == NULL);
	CHECK(!write_file(dir, "f", "x"));
	CHECK_EQ_INT(kp_cachefile_open(dir, "f", &st), -1);
	CHECK(!kp_cachefile_exists(dir, "f", &st));
	CHECK(kp_cachedir_list(dir) == NULL);
	CHECK_EQ_INT(nnotes, 1);
	CHECK(nnotes >= 1 && strstr(notes[0], "not using the cache in") != NULL);
	CHECK(nnotes >= 1 && strstr(notes[0], what) != NULL);
	if (nnotes >= 1 && !strstr(notes[0], what))
		fprintf(stderr, "note: %s\n", notes[0]);
}

static void test_made_private(void)
{
	struct kp_cachedir *sub, *dir = open_cache("home/.cache/kprof", &sub);
	struct stat st;
	char buf[16] = {0};
	int fd;

	/* reading makes nothing */
	CHECK_EQ_INT(kp_cachedir_fd(sub, false), -1);
	CHECK_EQ_INT(kp_cachefile_open(sub, "f", &st), -1);
	CHECK(access(path_of("home"), F_OK) != 0);
	CHECK(write_file(sub, "f", "hello"));
	CHECK_EQ_INT(mode_of("home"), 0700);
	CHECK_EQ_INT(mode_of("home/.cache"), 0700);
	CHECK_EQ_INT(mode_of("home/.cache/kprof"), 0700);
	CHECK_EQ_INT(mode_of("home/.cache/kprof/symbols"), 0700);
	CHECK_EQ_INT(mode_of("home/.cache/kprof/symbols/f"), 0600);
	CHECK_EQ_INT(entries("home/.cache/kprof/symbols"), 1); /* no temporary left */
	fd = kp_cachefile_open(sub, "f", &st);
	CHECK(fd >= 0 && read(fd, buf, sizeof(buf) - 1) == 5 && strcmp(buf, "hello") == 0);
	if (fd >= 0)
		close(fd);
	CHECK(kp_cachefile_exists(sub, "f", &st));
	/* a failed write leaves nothing, and the old file */
	{
		char *tmp;

		fd = kp_cachefile_begin(sub, "test", &tmp);
		CHECK(fd >= 0 && tmp && tmp[0] == '.');
		CHECK(!kp_cachefile_commit(sub, &tmp, fd, false, "f"));
		CHECK(tmp == NULL);
		CHECK_EQ_INT(entries("home/.cache/kprof/symbols"), 1);
	}
	/* names are one component */
	CHECK(!write_file(sub, "../escape", "x"));
	CHECK(!write_file(sub, "a/b", "x"));
	CHECK(access(path_of("home/.cache/kprof/escape"), F_OK) != 0);
	CHECK_EQ_INT(kp_cachefile_open(sub, "../symbols/f", &st), -1);
	kp_cachefile_remove(sub, "f");
	CHECK_EQ_INT(entries("home/.cache/kprof/symbols"), 0);
	CHECK_EQ_INT(nnotes, 0);
	kp_cachedir_free(sub);
	kp_cachedir_free(dir);
}

/* Files not to be trusted are not read: a link, one others can write, an
 * empty one, a FIFO (not waited on), a directory. */
static void test_files_trusted(void)
{
	struct kp_cachedir *dir = open_cache("files/kprof", NULL);
	struct stat st;

	CHECK(write_file(dir, "good", "x"));
	CHECK(symlink(path_of("files/kprof/good"), path_of("files/kprof/link")) == 0);
	CHECK_EQ_INT(kp_cachefile_open(dir, "link", &st), -1);
	CHECK(!kp_cachefile_exists(dir, "link", &st));
	CHECK(write_file(dir, "shared", "x"));
	CHECK(chmod(path_of("files/kprof/shared"), 0620) == 0);
	CHECK_EQ_INT(kp_cachefile_open(dir, "shared", &st), -1);
	CHECK(!kp_cachefile_exists(dir, "shared", &st));
	CHECK(write_file(dir, "empty", ""));
	CHECK_EQ_INT(kp_cachefile_open(dir, "empty", &st), -1);
	CHECK(mkfifo(path_of("files/kprof/fifo"), 0600) == 0);
	CHECK_EQ_INT(kp_cachefile_open(dir, "fifo", &st), -1);
	CHECK(mkdir(path_of("files/kprof/dir"), 0700) == 0);
	CHECK_EQ_INT(kp_cachefile_open(dir, "dir", &st), -1);
	{
		int fd = kp_cachefile_open(dir, "good", &st);

		CHECK(fd >= 0);
		if (fd >= 0)
			close(fd);
	}
	kp_cachedir_free(dir);
}

static void test_symlinked(void)
{
	struct kp_cachedir *sub, *dir;

	/* kprof's own directory a link: neither it nor symbols/ is used */
	CHECK(mkdir(path_of("elsewhere"), 0700) == 0);
	CHECK(mkdir(path_of("xdg1"), 0700) == 0);
	CHECK(symlink(path_of("elsewhere"), path_of("xdg1/kprof")) == 0);
	dir = open_cache("xdg1/kprof", &sub);
	CHECK(!write_file(sub, "f", "x"));
	check_refused(dir, "is a symbolic link");
	CHECK_EQ_INT(kp_cachedir_fd(sub, true), -1);
	CHECK_EQ_INT(nnotes, 1); /* the parent said it */
	CHECK_EQ_INT(entries("elsewhere"), 0);
	kp_cachedir_free(sub);
	kp_cachedir_free(dir);

	/* its symbols/ a link: that is refused, the directory above is used */
	CHECK(mkdir(path_of("xdg2"), 0700) == 0);
	CHECK(mkdir(path_of("xdg2/kprof"), 0700) == 0);
	CHECK(symlink(path_of("elsewhere"), path_of("xdg2/kprof/symbols")) == 0);
	dir = open_cache("xdg2/kprof", &sub);
	check_refused(sub, "is a symbolic link");
	CHECK(strstr(notes[0], "/kprof/symbols") != NULL);
	CHECK(write_file(dir, "f", "x"));
	CHECK_EQ_INT(nnotes, 1);
	CHECK_EQ_INT(entries("elsewhere"), 0);
	kp_cachedir_free(sub);
	kp_cachedir_free(dir);

	/* a link above kprof's directory is the user's choice */
	CHECK(mkdir(path_of("real-xdg"), 0755) == 0);
	CHECK(symlink(path_of("real-xdg"), path_of("xdg-link")) == 0);
	dir = open_cache("xdg-link/kprof", &sub);
	CHECK(write_file(sub, "f", "x"));
	CHECK(access(path_of("real-xdg/kprof/symbols/f"), F_OK) == 0);
	CHECK_EQ_INT(nnotes, 0);
	kp_cachedir_free(sub);
	kp_cachedir_free(dir);
}

static void test_not_private(void)
{
	static const struct {
		const char *dir; /* made with mode */
		unsigned mode;
		const char *said;
	} cases[] = {
		{"wide1/kprof", 0777, "has mode 0777"},
		{"wide2/kprof", 0750, "has mode 0750"},
		{"wide3/kprof", 0701, "has mode 0701"},
		{"wide4/kprof", 01777, "has mode 1777"},
	};
	struct kp_cachedir *sub, *dir;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char above[64];

		snprintf(above, sizeof(above), "%.*s",
			 (int)(strchr(cases[i].dir, '/') - cases[i].dir), cases[i].dir);
		CHECK(mkdir(path_of(above), 0700) == 0);
		CHECK(mkdir(path_of(cases[i].dir), 0700) == 0);
		CHECK(chmod(path_of(cases[i].dir), cases[i].mode) == 0);
		dir = open_cache(cases[i].dir, &sub);
		CHECK(!write_file(sub, "f", "x"));
		check_refused(dir, cases[i].said);
		CHECK_EQ_INT(entries(cases[i].dir), 0);
		kp_cachedir_free(sub);
		kp_cachedir_free(dir);
	}
	/* symbols/ of a wider mode */
	CHECK(mkdir(path_of("wide5"), 0700) == 0);
	CHECK(mkdir(path_of("wide5/kprof"), 0700) == 0);
	CHECK(mkdir(path_of("wide5/kprof/symbols"), 0700) == 0);
	CHECK(chmod(path_of("wide5/kprof/symbols"), 0777) == 0);
	dir = open_cache("wide5/kprof", &sub);
	check_refused(sub, "has mode 0777");
	CHECK_EQ_INT(entries("wide5/kprof/symbols"), 0);
	kp_cachedir_free(sub);
	kp_cachedir_free(dir);

	/* a file where the directory should be */
	CHECK(mkdir(path_of("file"), 0700) == 0);
	close(open(path_of("file/kprof"), O_WRONLY | O_CREAT, 0600));
	dir = open_cache("file/kprof", NULL);
	check_refused(dir, "is not a directory");
	kp_cachedir_free(dir);
}

/* Another user's directory (root can make one): refused. */
static void test_other_owner(void)
{
	struct passwd *nobody = getpwnam("nobody");
	struct kp_cachedir *sub, *dir;

	if (geteuid() != 0 || !nobody) {
		printf("skip test_other_owner: not root, or no user nobody\n");
		return;
	}
	CHECK(mkdir(path_of("owned"), 0700) == 0);
	CHECK(mkdir(path_of("owned/kprof"), 0700) == 0);
	CHECK(chown(path_of("owned/kprof"), nobody->pw_uid, nobody->pw_gid) == 0);
	dir = open_cache("owned/kprof", &sub);
	CHECK(!write_file(sub, "f", "x"));
	check_refused(dir, "is owned by uid");
	CHECK_EQ_INT(entries("owned/kprof"), 0);
	kp_cachedir_free(sub);
	kp_cachedir_free(dir);

	CHECK(mkdir(path_of("owned2"), 0700) == 0);
	CHECK(mkdir(path_of("owned2/kprof"), 0700) == 0);
	CHECK(mkdir(path_of("owned2/kprof/symbols"), 0700) == 0);
	CHECK(chown(path_of("owned2/kprof/symbols"), nobody->pw_uid, nobody->pw_gid) == 0);
	dir = open_cache("owned2/kprof", &sub);
	check_refused(sub, "is owned by uid");
	CHECK(write_file(dir, "f", "x")); /* the one above is fine */
	CHECK_EQ_INT(entries("owned2/kprof/symbols"), 0);
	kp_cachedir_free(sub);
	kp_cachedir_free(dir);
}

/* A directory that cannot be made: refused without a word. */
static void test_cannot_make(void)
{
	struct kp_cachedir *dir;

	close(open(path_of("a-file"), O_WRONLY | O_CREAT, 0600));
	dir = open_cache("a-file/kprof", NULL);
	CHECK(!write_file(dir, "f", "x"));
	CHECK_EQ_INT(kp_cachedir_fd(dir, true), -1);
	CHECK_EQ_INT(nnotes, 0);
	kp_cachedir_free(dir);
	/* a relative path has nothing to be opened below */
	dir = kp_cachedir_new("relative", note, NULL);
	nnotes = 0;
	CHECK_EQ_INT(kp_cachedir_fd(dir, true), -1);
	CHECK(access("relative", F_OK) != 0);
	kp_cachedir_free(dir);
}

/* Once open, the directories are used through their descriptors: kprof's
 * directory and then symbols/ replaced by links to elsewhere, the files
 * still go to the directories that were opened. */
static void test_swapped_later(void)
{
	struct kp_cachedir *sub, *dir;

	CHECK(mkdir(path_of("swap-target"), 0700) == 0);
	dir = open_cache("swap/kprof", &sub);
	CHECK(write_file(sub, "first", "x"));
	CHECK(rename(path_of("swap/kprof"), path_of("swap/kprof.moved")) == 0);
	CHECK(symlink(path_of("swap-target"), path_of("swap/kprof")) == 0);
	CHECK(write_file(dir, "second", "x"));
	CHECK(write_file(sub, "third", "x"));
	CHECK(access(path_of("swap/kprof.moved/second"), F_OK) == 0);
	CHECK(access(path_of("swap/kprof.moved/symbols/third"), F_OK) == 0);
	CHECK(rename(path_of("swap/kprof.moved/symbols"), path_of("swap/symbols.moved")) == 0);
	CHECK(symlink(path_of("swap-target"), path_of("swap/kprof.moved/symbols")) == 0);
	CHECK(write_file(sub, "fourth", "x"));
	CHECK(access(path_of("swap/symbols.moved/fourth"), F_OK) == 0);
	CHECK_EQ_INT(entries("swap-target"), 0);
	CHECK_EQ_INT(nnotes, 0);
	kp_cachedir_free(sub);
	kp_cachedir_free(dir);
}

int main(void)
{
	snprintf(top, sizeof(top), "/tmp/kp-cachefile-XXXXXX");
	if (!mkdtemp(top))
		return 1;
	umask(022);
	test_made_private();
	test_files_trusted();
	test_symlinked();
	test_not_private();
	test_other_owner();
	test_cannot_make();
	test_swapped_later();
	kp_test_sh("rm -rf %s", top);
	printf("%d passed, %d failed\n", kp_test_passed, kp_test_failed);
	return kp_test_failed ? 1 : 0;
}
