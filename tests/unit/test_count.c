/* kp_count: exact parsing and printing of counts, the 128-bit and
 * 19-decimal limits, and shifting by powers of ten. */
#include <errno.h>

#include "kp_test.h"
#include "util/count.h"

static const char *fmt(kp_count v, unsigned decimals)
{
	static char buf[KP_COUNT_BUF];

	kp_count_format(v, decimals, buf);
	return buf;
}

/* parses s and prints it back */
static const char *again(const char *s)
{
	kp_count v;
	unsigned d;

	if (kp_count_parse(s, strlen(s), &v, &d) != 0)
		return "(error)";
	return fmt(v, d);
}

static void test_round_trip(void)
{
	CHECK_EQ_STR(again("0"), "0");
	CHECK_EQ_STR(again("007"), "7");
	CHECK_EQ_STR(again("12."), "12");
	CHECK_EQ_STR(again("0.50"), "0.5");
	CHECK_EQ_STR(again("0.00001"), "0.00001");
	CHECK_EQ_STR(again("123456789012.5"), "123456789012.5");
	CHECK_EQ_STR(again("9007199254740993"), "9007199254740993");
	CHECK_EQ_STR(again("18446744073709551616"), "18446744073709551616");
	CHECK_EQ_STR(again("340282366920938463463374607431768211455"),
		     "340282366920938463463374607431768211455");
	CHECK_EQ_STR(again("0.1234567890123456789"), "0.1234567890123456789");
	/* trailing zeros beyond the limit change nothing */
	CHECK_EQ_STR(again("1.50000000000000000000000000"), "1.5");
}

static void test_errors(void)
{
	kp_count v = 5;
	unsigned d = 3;

	CHECK_EQ_INT(kp_count_parse("", 0, &v, &d), -EINVAL);
	CHECK_EQ_INT(kp_count_parse(".5", 2, &v, &d), -EINVAL);
	CHECK_EQ_INT(kp_count_parse("1e5", 3, &v, &d), -EINVAL);
	CHECK_EQ_INT(kp_count_parse("-1", 2, &v, &d), -EINVAL);
	CHECK_EQ_INT(kp_count_parse("1.2.3", 5, &v, &d), -EINVAL);
	CHECK_EQ_INT(kp_count_parse("340282366920938463463374607431768211456", 39, &v, &d),
		     -ERANGE);
	CHECK_EQ_INT(kp_count_parse("0.12345678901234567891", 22, &v, &d), -ERANGE);
	/* nothing changed on failure */
	CHECK(v == 5 && d == 3);
}

static void test_shift_add_double(void)
{
	kp_count v = 25, max = ~(kp_count)0;

	CHECK(kp_count_shift(&v, 2));
	CHECK_EQ_STR(fmt(v, 0), "2500");
	CHECK_EQ_STR(fmt(v, 4), "0.25");
	CHECK_EQ_STR(fmt(v, 6), "0.0025");
	v = max / 10 + 1;
	CHECK(!kp_count_shift(&v, 1));
	CHECK(v == max / 10 + 1);
	v = max - 1;
	CHECK(kp_count_add(&v, 1));
	CHECK(!kp_count_add(&v, 1));
	CHECK(v == max);
	CHECK(kp_count_double(585, 2) == 5.85);
	CHECK(kp_count_double(1, 1) == 0.1);
	CHECK(kp_count_double((kp_count)1 << 64, 0) == 18446744073709551616.0);
}

KP_TEST_MAIN(test_round_trip, test_errors, test_shift_add_double)
