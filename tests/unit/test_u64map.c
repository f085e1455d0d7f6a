/* kp_u64map: every key works, the two the slots reserve (UINT64_MAX,
 * UINT64_MAX - 1: a pid or tid of -1 is the first) included; deletion,
 * growth and iteration see each live entry once. */
#include <stdint.h>

#include "kp_test.h"
#include "util/u64map.h"

static void test_reserved_keys(void)
{
	struct kp_u64map m;
	uint64_t v = 7;

	kp_u64map_init(&m);
	/* an empty map knows no key, reserved or not (it once answered
	 * UINT64_MAX with the value of an empty slot) */
	CHECK(!kp_u64map_get(&m, UINT64_MAX, &v));
	CHECK(!kp_u64map_get(&m, UINT64_MAX - 1, &v));
	CHECK(!kp_u64map_get(&m, (uint64_t)(int64_t)-1, &v));
	CHECK_EQ_INT(v, 7);
	kp_u64map_put(&m, 5, 50);
	CHECK(kp_u64map_del(&m, 5));
	/* a deleted slot does not answer for UINT64_MAX - 1 either */
	CHECK(!kp_u64map_get(&m, UINT64_MAX - 1, &v));
	kp_u64map_put(&m, UINT64_MAX, 1);
	kp_u64map_put(&m, UINT64_MAX - 1, 2);
	CHECK(kp_u64map_get(&m, UINT64_MAX, &v) && v == 1);
	CHECK(kp_u64map_get(&m, UINT64_MAX - 1, &v) && v == 2);
	CHECK_EQ_INT(kp_u64map_count(&m), 2);
	kp_u64map_put(&m, UINT64_MAX, 3);
	CHECK(kp_u64map_get(&m, UINT64_MAX, &v) && v == 3);
	CHECK(kp_u64map_del(&m, UINT64_MAX));
	CHECK(!kp_u64map_del(&m, UINT64_MAX));
	CHECK(!kp_u64map_get(&m, UINT64_MAX, &v));
	CHECK_EQ_INT(kp_u64map_count(&m), 1);
	kp_u64map_fini(&m);
}

static void test_growth_deletion_iteration(void)
{
	struct kp_u64map m;
	uint64_t k, v, sum = 0;
	size_t pos = 0, n = 0;

	kp_u64map_init(&m);
	kp_u64map_put(&m, UINT64_MAX - 1, 1000000);
	for (uint64_t i = 0; i < 10000; i++)
		kp_u64map_put(&m, i * 7919, i);
	for (uint64_t i = 0; i < 10000; i += 2)
		CHECK(kp_u64map_del(&m, i * 7919));
	for (uint64_t i = 0; i < 10000; i++)
		CHECK(kp_u64map_get(&m, i * 7919, &v) == (i % 2 == 1) && (i % 2 == 0 || v == i));
	CHECK(kp_u64map_get(&m, UINT64_MAX - 1, &v) && v == 1000000);
	while (kp_u64map_next(&m, &pos, &k, &v)) {
		n++;
		sum += v;
	}
	CHECK_EQ_INT(n, 5001);
	CHECK_EQ_INT(n, kp_u64map_count(&m));
	CHECK_EQ_INT(sum, 25000000 + 1000000); /* 1 + 3 + ... + 9999 */
	kp_u64map_fini(&m);
}

KP_TEST_MAIN(test_reserved_keys, test_growth_deletion_iteration)
