/* Perf map parsing (hex with and without 0x, later lines win, garbage
 * counted, names made safe) and reading through the symbolizer (ownership
 * rule, symlinks, FIFOs, growth, maps written at exit, containers). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kp_test.h"
#include "symbolize/perfmap.h"
#include "symbolize/procfs.h"
#include "symbolize/symbolize.h"

static const char *look(const struct kp_perfmap *pm, uint64_t addr)
{
	const char *n = kp_perfmap_lookup(pm, addr);

	return n ? n : "(none)";
}

static void parse(struct kp_perfmap *pm, const char *text)
{
	kp_perfmap_parse(pm, text, strlen(text));
}

static void test_formats(void)
{
	struct kp_perfmap pm = {0};

	alarm(120); /* the process tests fork: never hang a test run */

	parse(&pm, "7f0000001000 100 LazyCompile:*hot /app/x.js:10\n"
		   "0x7f0000002000 0x20 Interpreter\r\n"
		   "0X7F0000003000 0X10 upper case\n"
		   "\n"
		   "   \t\n"
		   "7f0000004000\t8\ttabbed name with spaces  \n"
		   "7f0000005000 10 last line without newline");
	CHECK_EQ_INT(pm.bad_lines, 0);
	CHECK_EQ_INT(pm.entries, 5);
	CHECK_EQ_STR(look(&pm, 0x7f0000001000), "LazyCompile:*hot /app/x.js:10");
	CHECK_EQ_STR(look(&pm, 0x7f00000010ff), "LazyCompile:*hot /app/x.js:10");
	CHECK_EQ_STR(look(&pm, 0x7f0000001100), "(none)");
	CHECK_EQ_STR(look(&pm, 0x7f000000201f), "Interpreter");
	CHECK_EQ_STR(look(&pm, 0x7f0000002020), "(none)");
	CHECK_EQ_STR(look(&pm, 0x7f0000003000), "upper case");
	CHECK_EQ_STR(look(&pm, 0x7f0000004007), "tabbed name with spaces");
	CHECK_EQ_STR(look(&pm, 0x7f000000500f), "last line without newline");
	CHECK_EQ_STR(look(&pm, 0x7f0000000fff), "(none)");
	kp_perfmap_fini(&pm);
}

static void test_later_wins(void)
{
	struct kp_perfmap pm = {0};

	/* A [1000,2000), then B inside it, then C overlapping B's end, then D
	 * fully hidden by a later E, then a stale duplicate of A's start that
	 * is overwritten by the final A2 */
	parse(&pm, "1000 1000 A\n"
		   "1400 200 B\n"
		   "1500 200 C\n"
		   "3000 100 D\n"
		   "2f00 300 E\n"
		   "1000 100 stale\n"
		   "1000 80 A2\n");
	CHECK_EQ_INT(pm.bad_lines, 0);
	CHECK_EQ_STR(look(&pm, 0x1000), "A2");
	CHECK_EQ_STR(look(&pm, 0x107f), "A2");
	CHECK_EQ_STR(look(&pm, 0x1080), "stale");
	CHECK_EQ_STR(look(&pm, 0x10ff), "stale");
	CHECK_EQ_STR(look(&pm, 0x1100), "A");
	CHECK_EQ_STR(look(&pm, 0x13ff), "A");
	CHECK_EQ_STR(look(&pm, 0x1400), "B");
	CHECK_EQ_STR(look(&pm, 0x14ff), "B");
	CHECK_EQ_STR(look(&pm, 0x1500), "C");
	CHECK_EQ_STR(look(&pm, 0x16ff), "C");
	CHECK_EQ_STR(look(&pm, 0x1700), "A");
	CHECK_EQ_STR(look(&pm, 0x1fff), "A");
	CHECK_EQ_STR(look(&pm, 0x2000), "(none)");
	CHECK_EQ_STR(look(&pm, 0x2f00), "E");
	CHECK_EQ_STR(look(&pm, 0x3050), "E");
	CHECK_EQ_STR(look(&pm, 0x31ff), "E");
	CHECK_EQ_STR(look(&pm, 0x3200), "(none)");
	/* ranges are disjoint and sorted */
	for (size_t i = 0; i + 1 < pm.n; i++)
		CHECK(pm.ranges[i].end <= pm.ranges[i + 1].start);
	kp_perfmap_fini(&pm);

	/* the same name re-registered: adjacent pieces merge */
	parse(&pm, "100 100 f\n180 100 f\n");
	CHECK_EQ_INT(pm.n, 1);
	CHECK_EQ_STR(look(&pm, 0x27f), "f");
	kp_perfmap_fini(&pm);
}

static void test_garbage(void)
{
	struct kp_perfmap pm = {0};
	char huge[10000];

	parse(&pm, "hello world\n"
		   "1000\n"
		   "1000 10\n"
		   "1000 10   \n"
		   "zz00 10 bad start\n"
		   "1000 zz bad size\n"
		   "10000000000000000 10 too big\n"
		   "ffffffffffffffff 10 wraps around\n"
		   "1000 0 empty is ignored silently\n"
		   "2000 10 ok;with;semicolons\n"
		   "3000 10 ctl\x01\x1b[31mred\x7f\n"
		   "4000 10 \xc3\xa9t\xc3\xa9\n");
	CHECK_EQ_INT(pm.bad_lines, 8);
	CHECK_EQ_INT(pm.entries, 3);
	CHECK_EQ_STR(look(&pm, 0x1000), "(none)");
	CHECK_EQ_STR(look(&pm, 0x2000), "ok:with:semicolons");
	CHECK_EQ_STR(look(&pm, 0x3000), "ctl??[31mred?");
	CHECK_EQ_STR(look(&pm, 0x4000), "\xc3\xa9t\xc3\xa9");
	kp_perfmap_fini(&pm);

	/* a huge name is cut, not kept whole and not rejected */
	memcpy(huge, "5000 10 ", 8);
	memset(huge + 8, 'x', sizeof(huge) - 9);
	huge[sizeof(huge) - 1] = '\0';
	parse(&pm, huge);
	CHECK_EQ_INT(pm.bad_lines, 0);
	CHECK(strlen(look(&pm, 0x5000)) == KP_PERFMAP_NAME_MAX - 1);
	CHECK(strcmp(look(&pm, 0x5000) + KP_PERFMAP_NAME_MAX - 4, "...") == 0);
	kp_perfmap_fini(&pm);

	/* NUL bytes and no newline at all */
	kp_perfmap_parse(&pm, "6000 10 a\0b\n\0\0\0", 15);
	CHECK_EQ_STR(look(&pm, 0x6000), "a?b");
	CHECK_EQ_INT(pm.bad_lines, 1);
	kp_perfmap_fini(&pm);
	kp_perfmap_parse(&pm, "", 0);
	CHECK_EQ_INT(pm.n, 0);
	kp_perfmap_fini(&pm);
}

static void test_sanitize(void)
{
	char buf[8];

	CHECK_EQ_INT(kp_sym_sanitize_name(buf, sizeof(buf), "  a;b\t", 6), 3);
	CHECK_EQ_STR(buf, "a:b");
	CHECK_EQ_INT(kp_sym_sanitize_name(buf, sizeof(buf), "abcdefghij", 10), 7);
	CHECK_EQ_STR(buf, "abcd...");
	/* a cut never leaves half a UTF-8 character before the dots */
	kp_sym_sanitize_name(buf, sizeof(buf), "abc\xc3\xa9xyz", 9);
	CHECK_EQ_STR(buf, "abc...");
}

static void test_status(void)
{
	struct kp_sym_proc_status st;

	kp_sym_proc_status_parse(
		"\nName:\tjava\nNStgid:\t4242\t17\t1\nUid:\t1000\t1001\t1002\t1003\n", &st);
	CHECK_EQ_INT(st.nspid, 1);
	CHECK(st.have_uids);
	CHECK_EQ_INT(st.uids[0], 1000);
	CHECK_EQ_INT(st.uids[3], 1003);
	kp_sym_proc_status_parse("\nName:\tx\nNStgid:\t99\n", &st);
	CHECK_EQ_INT(st.nspid, 99);
	CHECK(!st.have_uids);
	CHECK_EQ_INT(kp_sym_proc_status(getpid(), &st), 0);
	CHECK_EQ_INT(st.nspid, getpid()); /* the test runs in the initial namespace */
}

/* Writes text to /tmp/perf-PID.map (replacing it) with the given owner. */
static void write_map(pid_t pid, const char *text, uid_t owner)
{
	char path[64];
	FILE *fp;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	unlink(path);
	fp = fopen(path, "w");
	if (!fp)
		return;
	fputs(text, fp);
	fclose(fp);
	if (owner != getuid())
		CHECK_EQ_INT(chown(path, owner, (gid_t)-1), 0);
}

static void remove_map(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	unlink(path);
}

static const char *jit_name(struct kp_symbolizer *sym, uint32_t id, uint64_t addr, bool *ok)
{
	static struct kp_sym_frames f;
	struct kp_loc loc = {.addr = addr, .obj = id, .kind = KP_LOC_JIT};

	*ok = kp_sym_resolve(sym, &loc, &f);
	CHECK_EQ_INT(f.n, 1);
	CHECK_EQ_INT(f.frames[0].kind, KP_FRAME_JIT);
	CHECK(f.frames[0].file == NULL && f.frames[0].line == 0); /* a perf map has none */
	return f.frames[0].name;
}

static bool any_note(struct kp_symbolizer *sym, const char *needle)
{
	size_t n;
	const char *const *notes = kp_sym_notes(sym, &n);

	for (size_t i = 0; i < n; i++) {
		if (strstr(notes[i], needle))
			return true;
	}
	return false;
}

/* The ownership rule, with this (root) process as the JIT. */
static void test_owner(void)
{
	struct kp_symbolizer *sym;
	uint32_t id;
	bool ok;
	char note[128];
	struct kp_sym_stats st;
	pid_t me = getpid();

	if (geteuid() != 0) {
		printf("skip test_owner: needs root to chown\n");
		return;
	}
	/* owned by the process's user (root): used */
	sym = kp_sym_new(NULL);
	write_map(me, "1000 100 mine\nnot a line\n", 0);
	id = kp_sym_jit_get(sym, me);
	CHECK(id >= 1);
	CHECK_EQ_INT(kp_sym_jit_get(sym, me), id); /* cheap on repeat */
	CHECK_EQ_STR(jit_name(sym, id, 0x1010, &ok), "mine");
	CHECK(ok);
	CHECK_EQ_STR(jit_name(sym, id, 0x2000, &ok), "[unknown]");
	CHECK(!ok);
	kp_sym_stats(sym, &st);
	CHECK_EQ_INT(st.jit_bad_lines, 1);
	snprintf(note, sizeof(note), "/tmp/perf-%d.map: skipped 1 malformed line", (int)me);
	CHECK(any_note(sym, note));
	CHECK_EQ_INT(st.resolved[KP_LOC_JIT], 1);
	CHECK_EQ_INT(st.unresolved[KP_LOC_JIT], 1);
	kp_sym_free(sym);

	/* owned by somebody else: refused, said once */
	sym = kp_sym_new(NULL);
	write_map(me, "1000 100 planted\n", 12345);
	id = kp_sym_jit_get(sym, me);
	CHECK_EQ_STR(jit_name(sym, id, 0x1010, &ok), "[unknown]");
	CHECK(!ok);
	kp_sym_process_exit(sym, me);
	CHECK_EQ_STR(jit_name(sym, id, 0x1020, &ok), "[unknown]");
	snprintf(note, sizeof(note), "ignored /tmp/perf-%d.map: owned by uid 12345", (int)me);
	CHECK(any_note(sym, note));
	{
		size_t n;

		kp_sym_notes(sym, &n);
		CHECK_EQ_INT(n, 1);
	}
	kp_sym_free(sym);

	/* a symlink is not followed, a FIFO does not hang us */
	sym = kp_sym_new(NULL);
	remove_map(me);
	write_map(me + 1000000, "1000 100 target\n", 0);
	{
		char from[64], to[64];

		snprintf(from, sizeof(from), "/tmp/perf-%d.map", (int)me);
		snprintf(to, sizeof(to), "/tmp/perf-%d.map", (int)me + 1000000);
		CHECK_EQ_INT(symlink(to, from), 0);
	}
	id = kp_sym_jit_get(sym, me);
	CHECK_EQ_STR(jit_name(sym, id, 0x1010, &ok), "[unknown]");
	CHECK(any_note(sym, "symbolic link"));
	remove_map(me + 1000000);
	kp_sym_free(sym);

	sym = kp_sym_new(NULL);
	remove_map(me);
	{
		char path[64];

		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)me);
		CHECK_EQ_INT(mkfifo(path, 0600), 0);
	}
	id = kp_sym_jit_get(sym, me);
	CHECK_EQ_STR(jit_name(sym, id, 0x1010, &ok), "[unknown]");
	CHECK(any_note(sym, "not a regular file"));
	remove_map(me);
	kp_sym_free(sym);
}

/* A child running as uid 12345: its own file is fine, root's too. */
/* Forks a child that lives until *release is closed (uid: switch to that
 * user first, or -1 to stay). Returns its pid, or -1. */
static pid_t hold_child(int uid, int *release)
{
	int pfd[2];
	pid_t child;
	char c;

	if (pipe(pfd))
		return -1;
	child = fork();
	if (child == 0) {
		close(pfd[1]);
		if (uid >= 0 && (setresgid((gid_t)uid, (gid_t)uid, (gid_t)uid) ||
				 setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid)))
			_exit(1);
		while (read(pfd[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(pfd[0]);
	*release = pfd[1];
	return child;
}

static void test_other_user_process(void)
{
	struct kp_symbolizer *sym;
	int release;
	pid_t child;
	uint32_t id;
	bool ok;

	if (geteuid() != 0) {
		printf("skip test_other_user_process: needs root\n");
		return;
	}
	child = hold_child(12345, &release);
	if (child < 0)
		return;
	usleep(50000); /* let it drop privileges */
	write_map(child, "1000 100 users_own\n", 12345);
	sym = kp_sym_new(NULL);
	id = kp_sym_jit_get(sym, child);
	CHECK_EQ_STR(jit_name(sym, id, 0x1000, &ok), "users_own");
	kp_sym_free(sym);

	write_map(child, "1000 100 someone_else\n", 23456);
	sym = kp_sym_new(NULL);
	id = kp_sym_jit_get(sym, child);
	CHECK_EQ_STR(jit_name(sym, id, 0x1000, &ok), "[unknown]");
	CHECK(any_note(sym, "owned by uid 23456"));
	kp_sym_free(sym);
	close(release);
	waitpid(child, NULL, 0);
	remove_map(child);
}

/* Maps that grow, are written only at exit, or are deleted after exit. */
static void test_lifecycle(void)
{
	struct kp_symbolizer *sym = kp_sym_new(NULL);
	int release;
	pid_t child;
	uint32_t id, id2;
	bool ok;

	child = hold_child(-1, &release);
	if (child < 0)
		return;
	remove_map(child);
	id = kp_sym_jit_get(sym, child); /* no map yet */
	/* written at exit (DumpPerfMapAtExit): read when the exit is seen */
	write_map(child, "1000 100 at_exit\n", getuid());
	close(release);
	waitpid(child, NULL, 0);
	kp_sym_process_exit(sym, child);
	remove_map(child); /* deleted after exit: what was read stays */
	CHECK_EQ_STR(jit_name(sym, id, 0x1000, &ok), "at_exit");
	CHECK(ok);
	/* after the exit, the same pid is a new process */
	id2 = kp_sym_jit_get(sym, child);
	CHECK(id2 != id);
	kp_sym_free(sym);

	/* deleted by the JIT before it exits: the map opened while it ran is
	 * read through the descriptor kept since */
	sym = kp_sym_new(NULL);
	child = hold_child(-1, &release);
	if (child < 0)
		return;
	remove_map(child);
	id = kp_sym_jit_get(sym, child); /* no map yet */
	write_map(child, "1000 100 deleted_before_exit\n", getuid());
	usleep(150000);
	CHECK_EQ_INT(kp_sym_jit_get(sym, child), id); /* sees it now */
	remove_map(child);
	close(release);
	waitpid(child, NULL, 0);
	kp_sym_process_exit(sym, child);
	CHECK_EQ_STR(jit_name(sym, id, 0x1000, &ok), "deleted_before_exit");
	kp_sym_free(sym);

	/* a map that grows after the exit read is re-read at resolve time */
	sym = kp_sym_new(NULL);
	write_map(getpid(), "1000 100 first\n", getuid());
	id = kp_sym_jit_get(sym, getpid());
	kp_sym_process_exit(sym, getpid());
	write_map(getpid(), "1000 100 first\n2000 100 second\n1000 100 recompiled\n", getuid());
	CHECK_EQ_STR(jit_name(sym, id, 0x2000, &ok), "second");
	CHECK_EQ_STR(jit_name(sym, id, 0x1000, &ok), "recompiled");
	remove_map(getpid());
	kp_sym_free(sym);
}

/* A process in its own mount and pid namespace, chrooted into a folder
 * holding its map as /tmp/perf-1.map: found through /proc/PID/root. */
static void test_container(void)
{
	char root[] = "/tmp/kp-jitns-XXXXXX", path[256];
	struct kp_symbolizer *sym;
	int go[2], rep[2];
	pid_t mid, inner = 0;
	uint32_t id;
	bool ok;
	FILE *fp;

	if (geteuid() != 0 || !mkdtemp(root)) {
		printf("skip test_container: needs root\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/tmp", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/tmp/perf-1.map", root);
	fp = fopen(path, "w");
	if (fp) {
		fputs("1000 100 in_container\n", fp);
		fclose(fp);
	}
	if (pipe(go) || pipe(rep))
		goto out_root;
	mid = fork();
	if (mid == 0) {
		int ready[2];
		char c;
		pid_t p;

		close(go[1]);
		close(rep[0]);
		if (pipe(ready) || unshare(CLONE_NEWPID | CLONE_NEWNS))
			_exit(2);
		p = fork();
		if (p == 0) {
			close(ready[0]);
			mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
			if (chroot(root) || chdir("/"))
				_exit(3);
			close(ready[1]); /* chrooted */
			while (read(go[0], &c, 1) > 0)
				;
			_exit(0);
		}
		close(ready[1]);
		/* the pid is sent only once the process is in its new root */
		if (p < 0 || read(ready[0], &c, 1) != 0 ||
		    write(rep[1], &p, sizeof(p)) != sizeof(p))
			_exit(5);
		waitpid(p, NULL, 0);
		_exit(0);
	}
	close(go[0]);
	close(rep[1]);
	if (read(rep[0], &inner, sizeof(inner)) != sizeof(inner) || inner <= 0) {
		printf("skip test_container: cannot create namespaces\n");
		close(go[1]);
		waitpid(mid, NULL, 0);
		goto out_root;
	}
	sym = kp_sym_new(NULL);
	id = kp_sym_jit_get(sym, inner);
	close(go[1]); /* the process exits; its root folder stays reachable */
	waitpid(mid, NULL, 0);
	CHECK_EQ_STR(jit_name(sym, id, 0x1010, &ok), "in_container");
	kp_sym_free(sym);
out_root:
	unlink(path);
	snprintf(path, sizeof(path), "%s/tmp", root);
	rmdir(path);
	rmdir(root);
}

KP_TEST_MAIN(test_formats, test_later_wins, test_garbage, test_sanitize, test_status, test_owner,
	     test_other_user_process, test_lifecycle, test_container)
