/* kp_outfile: nothing appears under any name before the commit, the final
 * name is replaced in one step, and no file is left when the writer fails,
 * is aborted, is killed (SIGKILL, through O_TMPFILE) or is interrupted
 * (SIGINT/SIGTERM, the named fallback's handler). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kp_test.h"
#include "util/outfile.h"

static char dir[] = "/tmp/kp-outfile-XXXXXX";

/* Entries of dir, "." and ".." left out. */
static int entries(void)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!dp)
		return -1;
	while ((de = readdir(dp)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(dp);
	return n;
}

static void empty_dir(void)
{
	kp_test_sh("rm -f %s/* %s/.[!.]*", dir, dir);
}

static char *slurp(const char *path)
{
	static char buf[256];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void write_and_commit(unsigned flags)
{
	struct kp_outfile out;
	struct kp_diag d;
	char path[128];
	struct stat st;
	mode_t um = umask(022);

	snprintf(path, sizeof(path), "%s/out.svg", dir);
	CHECK_EQ_INT(kp_outfile_open_flags(&out, path, flags, &d), 0);
	fputs("hello\n", out.fp);
	fflush(out.fp);
	/* unnamed until committed (the fallback has its one temporary) */
	CHECK_EQ_INT(entries(), flags & KP_OUTFILE_NAMED_TMP ? 1 : 0);
	CHECK(access(path, F_OK) != 0);
	CHECK_EQ_INT(kp_outfile_commit(&out, &d), 0);
	CHECK_EQ_STR(kp_outfile_name(&out), path);
	kp_outfile_abort(&out);
	CHECK_EQ_INT(entries(), 1);
	CHECK_EQ_STR(slurp(path), "hello\n");
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);

	/* an existing file is replaced whole, and nothing else is left */
	CHECK_EQ_INT(kp_outfile_open_flags(&out, path, flags, &d), 0);
	fputs("second\n", out.fp);
	CHECK_EQ_STR(slurp(path), "hello\n");
	CHECK_EQ_INT(kp_outfile_commit(&out, &d), 0);
	kp_outfile_abort(&out);
	CHECK_EQ_STR(slurp(path), "second\n");
	CHECK_EQ_INT(entries(), 1);

	/* abort without commit: the old file stays, nothing new appears */
	CHECK_EQ_INT(kp_outfile_open_flags(&out, path, flags, &d), 0);
	fputs("third\n", out.fp);
	kp_outfile_abort(&out);
	CHECK_EQ_STR(slurp(path), "second\n");
	CHECK_EQ_INT(entries(), 1);
	umask(um);
	empty_dir();
}

static void test_commit(void)
{
	write_and_commit(0);
	write_and_commit(KP_OUTFILE_NAMED_TMP);
}

/* A child opens an output, writes, and is ended by sig before its commit.
 * Returns the number of entries left in dir. */
static int killed_writer(unsigned flags, int sig)
{
	pid_t pid = fork();
	int status = 0;

	if (pid == 0) {
		struct kp_outfile out;
		struct kp_diag d;
		char path[128];

		snprintf(path, sizeof(path), "%s/killed.folded", dir);
		if (kp_outfile_open_flags(&out, path, flags, &d) != 0)
			_exit(3);
		for (int i = 0; i < 100000; i++)
			fputs("main;work 1\n", out.fp);
		fflush(out.fp);
		raise(sig);
		_exit(4); /* not reached */
	}
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == sig);
	return entries();
}

static void test_signals(void)
{
	/* O_TMPFILE: even SIGKILL leaves nothing */
	CHECK_EQ_INT(killed_writer(0, SIGKILL), 0);
	CHECK_EQ_INT(killed_writer(0, SIGTERM), 0);
	CHECK_EQ_INT(killed_writer(0, SIGINT), 0);
	/* the named fallback: removed on SIGINT, SIGTERM, SIGHUP */
	CHECK_EQ_INT(killed_writer(KP_OUTFILE_NAMED_TMP, SIGTERM), 0);
	CHECK_EQ_INT(killed_writer(KP_OUTFILE_NAMED_TMP, SIGINT), 0);
	CHECK_EQ_INT(killed_writer(KP_OUTFILE_NAMED_TMP, SIGHUP), 0);
	empty_dir();
}

static void test_errors(void)
{
	struct kp_outfile out;
	struct kp_diag d = {""};
	char path[128];

	/* a missing folder, a directory as the target: errors naming the path */
	snprintf(path, sizeof(path), "%s/no/such/out.svg", dir);
	CHECK(kp_outfile_open(&out, path, &d) == -ENOENT);
	CHECK(strstr(d.msg, path) != NULL);
	CHECK(kp_outfile_open(&out, dir, &d) == -EISDIR);
	CHECK(strstr(d.msg, "is a directory") != NULL);
	/* not a regular file: written in place */
	CHECK_EQ_INT(kp_outfile_open(&out, "/dev/null", &d), 0);
	fputs("x", out.fp);
	CHECK_EQ_INT(kp_outfile_commit(&out, &d), 0);
	kp_outfile_abort(&out);
	/* stdout */
	CHECK_EQ_INT(kp_outfile_open(&out, "-", &d), 0);
	CHECK(out.fp == stdout);
	CHECK_EQ_STR(kp_outfile_name(&out), "stdout");
	CHECK_EQ_INT(kp_outfile_commit(&out, &d), 0);
	kp_outfile_abort(&out);
	CHECK_EQ_INT(entries(), 0);
}

/* What holds a window's name that kprof --every must not replace
 * (kp_outfile_in_the_way): in a sticky folder others may write, another
 * user's directory, FIFO, link or file; ours, /dev/null and stdout are
 * not in the way. */
static const char *in_the_way(const char *name)
{
	static char what[128];
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (kp_outfile_in_the_way(path, what, sizeof(what)) == 0)
		return "free";
	return what;
}

static void test_in_the_way(void)
{
	char what[128];

	CHECK_EQ_STR(in_the_way("nothing"), "free");
	CHECK_EQ_INT(kp_test_sh("echo ours > %s/ours && mkdir %s/adir", dir, dir), 0);
	CHECK_EQ_STR(in_the_way("ours"), "free");
	CHECK(strncmp(in_the_way("adir"), "a directory of uid ", 19) == 0);
	CHECK_EQ_INT(kp_outfile_in_the_way("/dev/null", what, sizeof(what)), 0);
	CHECK_EQ_INT(kp_outfile_in_the_way("-", what, sizeof(what)), 0);
	if (geteuid() != 0 || kp_test_sh("command -v setpriv >/dev/null")) {
		printf("test_in_the_way: another user's names need root and setpriv, skipped\n");
		kp_test_sh("rm -rf %s/adir", dir);
		empty_dir();
		return;
	}
	chmod(dir, 01777);
#define AS_NOBODY "setpriv --reuid=65534 --regid=65534 --clear-groups "
	CHECK_EQ_INT(kp_test_sh("cd %s && " AS_NOBODY "mkdir theirs-dir && " AS_NOBODY
				"mkfifo theirs-fifo && " AS_NOBODY
				"ln -s /etc/passwd theirs-link && " AS_NOBODY "touch theirs-file",
				dir),
		     0);
#undef AS_NOBODY
	CHECK_EQ_STR(in_the_way("theirs-dir"), "a directory of uid 65534");
	CHECK_EQ_STR(in_the_way("theirs-fifo"), "a FIFO of uid 65534");
	CHECK_EQ_STR(in_the_way("theirs-link"), "a symbolic link of uid 65534");
	CHECK_EQ_STR(in_the_way("theirs-file"), "a file of uid 65534");
	CHECK_EQ_STR(in_the_way("ours"), "free");
	chmod(dir, 0700);
	/* in a folder only we may write, what is there is ours to replace */
	CHECK_EQ_STR(in_the_way("theirs-link"), "free");
	CHECK(strncmp(in_the_way("theirs-dir"), "a directory", 11) == 0);
	kp_test_sh("rm -rf %s/adir %s/theirs-dir", dir, dir);
	empty_dir();
}

static void setup(void)
{
	CHECK(mkdtemp(dir) != NULL);
}

static void teardown(void)
{
	empty_dir();
	rmdir(dir);
}

KP_TEST_MAIN(setup, test_commit, test_signals, test_errors, test_in_the_way, teardown)
