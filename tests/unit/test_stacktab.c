/* The location-stack table: distinct locations get dense ids, equal stacks
 * are summed, roots keep stacks apart, and it survives many rehashes. */
#include "kp_test.h"
#include "profiler/stacktab.h"

static void test_locations(void)
{
	struct kp_stacktab *t = kp_stacktab_new();
	struct kp_loc a = {.addr = 0x10, .obj = 1, .kind = KP_LOC_USER};
	struct kp_loc b = {.addr = 0x10, .obj = 2, .kind = KP_LOC_USER};
	struct kp_loc k = {.addr = 0x10, .obj = 1, .kind = KP_LOC_KERNEL};

	CHECK_EQ_INT(kp_stacktab_loc(t, &a), 0);
	CHECK_EQ_INT(kp_stacktab_loc(t, &b), 1);
	CHECK_EQ_INT(kp_stacktab_loc(t, &k), 2);
	CHECK_EQ_INT(kp_stacktab_loc(t, &a), 0);
	CHECK_EQ_INT(kp_stacktab_nlocs(t), 3);
	CHECK(kp_stacktab_loc_at(t, 1)->obj == 2);
	kp_stacktab_free(t);
}

static void test_stacks(void)
{
	struct kp_stacktab *t = kp_stacktab_new();
	struct kp_stack_root r1 = {.comm = 1}, r2 = {.comm = 2}, r1p = {.comm = 1, .pid = 5};
	uint32_t s1[] = {0, 1, 2}, s2[] = {0, 1};
	struct kp_stack_root root;
	size_t n, found = 0;
	uint64_t count;

	kp_stacktab_add(t, &r1, s1, 3, 1);
	kp_stacktab_add(t, &r1, s1, 3, 2);
	kp_stacktab_add(t, &r1, s2, 2, 1);  /* a prefix is another stack */
	kp_stacktab_add(t, &r2, s1, 3, 1);  /* another comm */
	kp_stacktab_add(t, &r1p, s1, 3, 1); /* another pid */
	CHECK_EQ_INT(kp_stacktab_nstacks(t), 4);
	CHECK_EQ_INT(kp_stacktab_total(t), 6);
	for (size_t i = 0; i < kp_stacktab_nstacks(t); i++) {
		const uint32_t *l = kp_stacktab_stack(t, i, &root, &n, &count);

		if (root.comm == 1 && root.pid == 0 && n == 3) {
			CHECK_EQ_INT(count, 3);
			CHECK(l[0] == 0 && l[2] == 2);
			found++;
		}
	}
	CHECK_EQ_INT(found, 1);
	kp_stacktab_free(t);
}

static void test_many(void)
{
	struct kp_stacktab *t = kp_stacktab_new();
	struct kp_stack_root r = {.comm = 1};
	uint64_t sum = 0;

	for (uint32_t i = 0; i < 100000; i++) {
		struct kp_loc l = {.addr = i % 5000, .kind = KP_LOC_KERNEL};
		uint32_t s[2] = {kp_stacktab_loc(t, &l), i % 20000};

		kp_stacktab_add(t, &r, s, 2, 1);
	}
	CHECK_EQ_INT(kp_stacktab_nlocs(t), 5000);
	CHECK_EQ_INT(kp_stacktab_nstacks(t), 20000);
	for (size_t i = 0; i < kp_stacktab_nstacks(t); i++) {
		struct kp_stack_root root;
		size_t n;
		uint64_t c;

		kp_stacktab_stack(t, i, &root, &n, &c);
		sum += c;
	}
	CHECK_EQ_INT(sum, 100000);
	kp_stacktab_free(t);
}

KP_TEST_MAIN(test_locations, test_stacks, test_many)
