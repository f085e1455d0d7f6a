/* Out of memory (util/xalloc.h): one line, "kprof: out of memory (N
 * bytes)", and exit status 1, never abort()'s 134; a named temporary of
 * util/outfile.h is removed on the way (an unnamed one vanishes anyway).
 * Each case runs in a child, this executable started again, so that under
 * ASan its allocator can be told to return NULL (allocator_may_return_null)
 * instead of reporting the failed allocation itself. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kp_test.h"
#include "util/appendf.h"
#include "util/outfile.h"
#include "util/xalloc.h"

/* What a child does, by name; returns only when no allocation failed. */
static int child(const char *what, const char *dir)
{
	volatile size_t huge = SIZE_MAX / 2; /* no allocator has that much */
	void *p = NULL;

	if (strcmp(what, "malloc") == 0) {
		p = kp_xmalloc(huge);
	} else if (strcmp(what, "calloc") == 0) {
		p = kp_xcalloc(huge, 4);
	} else if (strcmp(what, "oom") == 0) {
		kp_oom(0);
	} else if (strcmp(what, "outfile") == 0) {
		struct kp_outfile out;
		struct kp_diag d;
		char *path = kp_xasprintf("%s/out.svg", dir);

		if (kp_outfile_open_flags(&out, path, KP_OUTFILE_NAMED_TMP, &d) < 0) {
			fprintf(stderr, "%s\n", d.msg);
			return 3;
		}
		fputs("<svg>half of it", out.fp);
		fflush(out.fp);
		p = kp_xrealloc(NULL, huge);
	}
	free(p);
	return 2;
}

/* Removes the lines of ASan's own ("==PID==WARNING: AddressSanitizer
 * failed to allocate ...") from s: what kprof says is the rest. */
static void drop_sanitizer_lines(char *s)
{
	char *w = s;

	for (const char *r = s; *r;) {
		const char *nl = strchr(r, '\n');
		size_t n = nl ? (size_t)(nl - r) + 1 : strlen(r);

		if (strncmp(r, "==", 2) != 0) {
			memmove(w, r, n);
			w += n;
		}
		r += n;
	}
	*w = '\0';
}

/* Runs the child what (with dir) and returns its exit status (-1 when a
 * signal ended it); its stderr in err. */
static int run(const char *what, const char *dir, char *err, size_t size)
{
	int fds[2], status;
	size_t len = 0;
	ssize_t k;
	pid_t pid;

	if (pipe(fds) != 0)
		return -2;
	pid = fork();
	if (pid == 0) {
		const char *asan = getenv("ASAN_OPTIONS");
		char opts[1024];

		snprintf(opts, sizeof(opts), "%s%sallocator_may_return_null=1", asan ? asan : "",
			 asan && *asan ? ":" : "");
		setenv("ASAN_OPTIONS", opts, 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		execl("/proc/self/exe", "test_xalloc", what, dir, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (len + 1 < size && (k = read(fds[0], err + len, size - 1 - len)) > 0)
		len += (size_t)k;
	err[len] = '\0';
	close(fds[0]);
	drop_sanitizer_lines(err);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -2;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_out_of_memory(void)
{
	char err[4096], want[128];

	CHECK_EQ_INT(run("malloc", "", err, sizeof(err)), 1);
	snprintf(want, sizeof(want), "kprof: out of memory (%zu bytes)\n", SIZE_MAX / 2);
	CHECK_EQ_STR(err, want);
	/* nmemb * size past SIZE_MAX is named as SIZE_MAX */
	CHECK_EQ_INT(run("calloc", "", err, sizeof(err)), 1);
	snprintf(want, sizeof(want), "kprof: out of memory (%zu bytes)\n", SIZE_MAX);
	CHECK_EQ_STR(err, want);
	/* a library's allocation, of a size not known */
	CHECK_EQ_INT(run("oom", "", err, sizeof(err)), 1);
	CHECK_EQ_STR(err, "kprof: out of memory\n");
}

static void test_named_temporary_removed(void)
{
	char dir[] = "/tmp/kp-xalloc-XXXXXX", err[4096];
	struct dirent *e;
	int left = 0;
	DIR *dp;

	if (!mkdtemp(dir)) {
		CHECK(!"mkdtemp");
		return;
	}
	CHECK_EQ_INT(run("outfile", dir, err, sizeof(err)), 1);
	CHECK(strncmp(err, "kprof: out of memory (", 22) == 0);
	dp = opendir(dir);
	while (dp && (e = readdir(dp)) != NULL) {
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			fprintf(stderr, "left behind: %s/%s\n", dir, e->d_name);
			left++;
			kp_test_sh("rm -f '%s/%s'", dir, e->d_name);
		}
	}
	if (dp)
		closedir(dp);
	CHECK_EQ_INT(left, 0);
	rmdir(dir);
}

/* kp_xjoin: the command line as given, every word after a space */
static void test_join(void)
{
	char w[][8] = {"diff", "a b", "", "-f"};
	char *argv[] = {w[0], w[1], w[2], w[3]};
	char *s = kp_xjoin("kprof", argv, 4), *none = kp_xjoin("kprof", argv, 0);

	CHECK(strcmp(s, "kprof diff a b  -f") == 0);
	CHECK(strcmp(none, "kprof") == 0);
	free(s);
	free(none);
}

/* Pieces appended past the buffer's end are cut, never written beyond it,
 * and the length stays below the size. */
static void test_appendf(void)
{
	char buf[16] = "", guard[8] = "GUARD";
	size_t len = 0;

	kp_appendf(buf, 12, &len, "%s", "hello");
	CHECK(len == 5 && strcmp(buf, "hello") == 0);
	kp_appendf(buf, 12, &len, "; %d more", 12345);
	CHECK(len == 11 && strcmp(buf, "hello; 1234") == 0);
	kp_appendf(buf, 12, &len, "%s", "more again");
	CHECK(len == 11 && strcmp(buf, "hello; 1234") == 0 && buf[12] == 0);
	CHECK(strcmp(guard, "GUARD") == 0);
	len = 0;
	kp_appendf(buf, 0, &len, "%s", "x");
	CHECK(len == 0);
}

int main(int argc, char **argv)
{
	if (argc == 3)
		return child(argv[1], argv[2]);
	test_out_of_memory();
	test_named_temporary_removed();
	test_join();
	test_appendf();
	printf("%d passed, %d failed\n", kp_test_passed, kp_test_failed);
	return kp_test_failed ? 1 : 0;
}
