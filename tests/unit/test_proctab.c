/* The process table with the pids the kernel may report for a task that
 * is no longer alive or lives in another pid namespace: -1 (u32
 * 0xffffffff), and -2 from a damaged record. They are pids like any other
 * (found by tests/fuzz/fuzz_record: as map keys they were the hash map's
 * reserved "empty" and "deleted" keys, so a lookup read an uninitialised
 * slot and an entry vanished when the map grew). */
#include <stdint.h>

#include "kp_test.h"
#include "profiler/proctab.h"
#include "util/strtab.h"

static void test_reserved_pids(void)
{
	struct kp_strtab *strings = kp_strtab_new();
	struct kp_proctab *pt = kp_proctab_new(strings);
	const pid_t odd[] = {-1, -2};
	struct kp_mapping *m;

	CHECK(!kp_proctab_has(pt, -1));
	CHECK(kp_proctab_find_map(pt, -1, 0x400000) == NULL);
	CHECK(!kp_proctab_has(pt, -2));
	for (size_t i = 0; i < 2; i++) {
		kp_proctab_comm(pt, odd[i], odd[i], i ? "damaged" : "dying", true);
		kp_proctab_mmap(pt, odd[i], 0x400000 + i * 0x10000, 0x1000, 0, 8, 1, 2, "/bin/x",
				NULL, 0);
	}
	/* enough other processes for the maps to grow */
	for (pid_t pid = 1; pid <= 200; pid++)
		kp_proctab_comm(pt, pid, pid, "other", true);
	for (size_t i = 0; i < 2; i++) {
		CHECK(kp_proctab_has(pt, odd[i]));
		m = kp_proctab_find_map(pt, odd[i], 0x400010 + i * 0x10000);
		CHECK(m && m->start == 0x400000 + i * 0x10000);
		CHECK_EQ_STR(kp_strtab_str(strings, kp_proctab_comm_of(pt, odd[i], odd[i])),
			     i ? "damaged" : "dying");
	}
	CHECK(kp_proctab_find_map(pt, 7, 0x400010) == NULL);
	CHECK(kp_proctab_exit(pt, -1, -1));
	CHECK(!kp_proctab_has(pt, -1));
	CHECK(kp_proctab_has(pt, -2));
	kp_proctab_free(pt);
	kp_strtab_free(strings);
}

KP_TEST_MAIN(test_reserved_pids)
