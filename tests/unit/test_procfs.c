/* /proc/PID/maps parsing from a fixture (including truncated and garbage
 * lines), the CPU list parser, /proc/PID/status, and the process table's
 * mapping rules. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "kp_test.h"
#include "procfs/maps.h"
#include "procfs/status.h"
#include "profiler/proctab.h"
#include "profiler/session.h"
#include "util/cpulist.h"
#include "util/strtab.h"

struct collected {
	struct kp_mapping e[16];
	char paths[16][128];
	size_t n;
};

static void collect(void *arg, const struct kp_mapping *e)
{
	struct collected *c = arg;

	if (c->n < 16) {
		c->e[c->n] = *e;
		snprintf(c->paths[c->n], sizeof(c->paths[0]), "%s", e->path);
		c->n++;
	}
}

static void test_maps_fixture(void)
{
	char path[512];
	struct collected c = {.n = 0};
	FILE *f;
	size_t bad;

	snprintf(path, sizeof(path), "%s/proc/maps", getenv("KP_FIXTURES"));
	f = fopen(path, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	bad = kp_maps_read(f, collect, &c);
	fclose(f);
	CHECK_EQ_INT(bad, 2);
	CHECK_EQ_INT(c.n, 6); /* executable mappings only */
	CHECK_EQ_INT(c.e[0].start, 0x55d4f8402000);
	CHECK_EQ_INT(c.e[0].end, 0x55d4f8407000);
	CHECK_EQ_INT(c.e[0].pgoff, 0x2000);
	CHECK_EQ_INT(c.e[0].maj, 0xfe);
	CHECK_EQ_INT(c.e[0].min, 1);
	CHECK_EQ_INT(c.e[0].ino, 1048599);
	CHECK_EQ_STR(c.paths[0], "/usr/bin/cat");
	CHECK_EQ_STR(c.paths[1], ""); /* anonymous rwx: JIT */
	CHECK_EQ_STR(c.paths[3], "/opt/app/lib with space.so (deleted)");
	CHECK_EQ_STR(c.paths[4], "[vdso]");
	CHECK(c.e[0].kind == KP_MAPPING_FILE && c.e[1].kind == KP_MAPPING_ANON &&
	      c.e[3].kind == KP_MAPPING_FILE && c.e[4].kind == KP_MAPPING_VDSO);
	CHECK(c.e[0].pid == 0 && c.e[0].build_id_size == 0 && c.e[0].obj == 0);

	/* a program run from a memfd whose name holds " (deleted)" */
	{
		char line[] = "5601f74da000-5601f74db000 r-xp 00001000 00:01 1470                  "
			      "     /memfd:kprof memfd (deleted) (deleted)\n";
		struct kp_mapping e;

		CHECK_EQ_INT(kp_maps_parse_line(line, &e), 0);
		CHECK(e.exec && e.maj == 0 && e.min == 1 && e.ino == 1470 && e.pgoff == 0x1000);
		CHECK_EQ_STR(e.path, "/memfd:kprof memfd (deleted) (deleted)");
		CHECK(e.kind == KP_MAPPING_MEMFD);
	}
}

static void test_cpulist(void)
{
	int *cpus = NULL;

	CHECK_EQ_INT(kp_cpulist_parse("0-3,6", &cpus), 5);
	CHECK(cpus && cpus[4] == 6);
	free(cpus);
	CHECK_EQ_INT(kp_cpulist_parse("0\n", &cpus), 1);
	free(cpus);
	CHECK_EQ_INT(kp_cpulist_parse("3-1", &cpus), -EINVAL);
	CHECK_EQ_INT(kp_cpulist_parse("x", &cpus), -EINVAL);
	CHECK_EQ_INT(kp_cpulist_parse("", &cpus), -EINVAL);
}

static void test_proctab(void)
{
	struct kp_strtab *st = kp_strtab_new();
	struct kp_proctab *pt = kp_proctab_new(st);
	struct kp_mapping *m;

	kp_proctab_comm(pt, 100, 100, "server", true);
	kp_proctab_mmap(pt, 100, 0x1000, 0x3000, 0, 8, 1, 5, "/bin/server", NULL, 0);
	kp_proctab_mmap(pt, 100, 0x10000, 0x1000, 0, 0, 0, 0, "//anon", NULL, 0);
	m = kp_proctab_find_map(pt, 100, 0x2500);
	CHECK(m && m->start == 0x1000 && m->kind == KP_MAPPING_FILE);
	/* the one mapping type: what the symbolizer takes as it is */
	CHECK(m && m->pid == 100 && m->exec && m->maj == 8 && m->min == 1 && !m->obj);
	CHECK_EQ_STR(m ? m->path : "", "/bin/server");
	CHECK(kp_proctab_find_map(pt, 100, 0x4000) == NULL);
	m = kp_proctab_find_map(pt, 100, 0x10010);
	CHECK(m && m->kind == KP_MAPPING_ANON);
	/* a memfd is decided at its first sample (ELF or JIT code); a file
	 * merely named like one is a file, /dev/zero anonymous memory */
	kp_proctab_mmap(pt, 100, 0x20000, 0x1000, 0, 0, 1, 7, "/memfd:a b (deleted) (deleted)",
			NULL, 0);
	kp_proctab_mmap(pt, 100, 0x21000, 0x1000, 0, 8, 1, 8, "/memfd:plain", NULL, 0);
	kp_proctab_mmap(pt, 100, 0x22000, 0x1000, 0, 0, 1, 9, "/dev/zero (deleted)", NULL, 0);
	m = kp_proctab_find_map(pt, 100, 0x20000);
	CHECK(m && m->kind == KP_MAPPING_MEMFD && m->ino == 7);
	m = kp_proctab_find_map(pt, 100, 0x21000);
	CHECK(m && m->kind == KP_MAPPING_FILE);
	m = kp_proctab_find_map(pt, 100, 0x22000);
	CHECK(m && m->kind == KP_MAPPING_ANON);

	/* a mapping in the middle splits the old one; offsets stay right */
	kp_proctab_mmap(pt, 100, 0x2000, 0x1000, 0, 8, 1, 6, "/lib/other.so", NULL, 0);
	m = kp_proctab_find_map(pt, 100, 0x1500);
	CHECK(m && m->end == 0x2000 && m->ino == 5);
	m = kp_proctab_find_map(pt, 100, 0x2500);
	CHECK(m && m->ino == 6);
	m = kp_proctab_find_map(pt, 100, 0x3500);
	CHECK(m && m->start == 0x3000 && m->pgoff == 0x2000 && m->ino == 5);

	/* threads keep their own comm; a fork copies the mappings */
	kp_proctab_fork(pt, 100, 100, 101, 100);
	kp_proctab_comm(pt, 100, 101, "worker", false);
	CHECK_EQ_STR(kp_strtab_str(st, kp_proctab_comm_of(pt, 100, 101)), "worker");
	CHECK_EQ_STR(kp_strtab_str(st, kp_proctab_comm_of(pt, 100, 100)), "server");
	kp_proctab_fork(pt, 200, 100, 200, 100);
	CHECK_EQ_STR(kp_strtab_str(st, kp_proctab_comm_of(pt, 200, 200)), "server");
	m = kp_proctab_find_map(pt, 200, 0x2500);
	CHECK(m && m->pid == 200 && m->ino == 6); /* the copy is the child's */
	m = kp_proctab_find_map(pt, 100, 0x2500);
	CHECK(m && m->pid == 100);

	/* exec drops the old image */
	kp_proctab_comm(pt, 200, 200, "sh", true);
	CHECK(kp_proctab_find_map(pt, 200, 0x2500) == NULL);
	CHECK_EQ_STR(kp_strtab_str(st, kp_proctab_comm_of(pt, 200, 200)), "sh");

	/* exit, then pid reuse: nothing of the old process remains */
	CHECK(kp_proctab_exit(pt, 100, 100));
	CHECK(!kp_proctab_has(pt, 100));
	kp_proctab_comm(pt, 100, 100, "newcomer", true);
	CHECK(kp_proctab_find_map(pt, 100, 0x2500) == NULL);
	CHECK_EQ_STR(kp_strtab_str(st, kp_proctab_comm_of(pt, 100, 100)), "newcomer");

	/* unknown everything */
	CHECK_EQ_STR(kp_strtab_str(st, kp_proctab_comm_of(pt, 999999, 999999)), "[unknown]");
	kp_proctab_free(pt);
	kp_strtab_free(st);
}

static void test_synthesize_self(void)
{
	struct kp_strtab *st = kp_strtab_new();
	struct kp_proctab *pt = kp_proctab_new(st);
	struct kp_mapping *m;

	CHECK_EQ_INT(kp_proctab_synthesize(pt, getpid()), 0);
	m = kp_proctab_find_map(pt, getpid(), (uint64_t)(uintptr_t)&test_synthesize_self);
	CHECK(m && m->kind == KP_MAPPING_FILE && m->pid == getpid());
	CHECK_EQ_STR(kp_strtab_str(st, kp_proctab_comm_of(pt, getpid(), getpid())), "test_procfs");
	CHECK(kp_proctab_synthesize(pt, 0x7ffffff0) < 0);
	kp_proctab_free(pt);
	kp_strtab_free(st);
}

static void test_status(void)
{
	struct kp_status st;

	kp_status_parse("\nName:\tjava\nNStgid:\t4242\t17\t1\nUid:\t1000\t1001\t1002\t1003\n", &st);
	CHECK_EQ_INT(st.nspid, 1);
	CHECK_EQ_INT(st.tgid, 0); /* no Tgid line */
	CHECK(st.have_uids);
	CHECK_EQ_INT(st.uids[0], 1000);
	CHECK_EQ_INT(st.uids[3], 1003);
	kp_status_parse("\nName:\tx\nTgid:\t98\nNStgid:\t99\n", &st);
	CHECK_EQ_INT(st.tgid, 98);
	CHECK_EQ_INT(st.nspid, 99);
	CHECK(!st.have_uids);
	CHECK_EQ_INT(st.rss_kib, 0); /* no VmRSS line: a kernel thread's */
	kp_status_parse("\nName:\tx\nVmRSS:\t  123456 kB\nRssAnon:\t7 kB\n", &st);
	CHECK_EQ_INT(st.rss_kib, 123456);
	CHECK(st.sig_pending == 0);
	/* a thread's own pending signals and its process's both count */
	kp_status_parse("\nSigPnd:\t0000000000000100\nShdPnd:\t0000000000040000\n", &st);
	CHECK(st.sig_pending == ((1ull << (9 - 1)) | (1ull << (19 - 1))));
	CHECK_EQ_INT(kp_status_read_self(&st), 0);
	CHECK_EQ_INT(st.tgid, getpid());
	CHECK(st.rss_kib > 0); /* the test's own pages */
	CHECK_EQ_INT(kp_status_read(getpid(), &st), 0);
	CHECK_EQ_INT(st.nspid, getpid()); /* the test runs in the initial namespace */
	CHECK_EQ_INT(st.tgid, getpid());
}

KP_TEST_MAIN(test_maps_fixture, test_cpulist, test_status, test_proctab, test_synthesize_self)
