/* Exact counts (util/count.h): kp_count_parse of the whole input, then
 * kp_count_format, then kp_count_parse again must give the same value and
 * decimals; the formatted text must be the input written in its shortest
 * form (leading zeros and the fraction's trailing zeros gone), and the
 * input must be refused exactly when it is not /\d+(\.\d*)?/ or its value
 * does not fit (2^128 units or more, more than 19 decimals). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>

#include "fuzz.h"
#include "util/count.h"

/* 2^128 - 1, the largest count */
static const char max_units[] = "340282366920938463463374607431768211455";

static bool is_digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	size_t i = 0, int_end, frac_begin = 0, frac_end = 0, lead = 0;
	bool grammar = true, fits = true;
	char want[KP_COUNT_BUF + 64], units[KP_COUNT_BUF + 64], buf[KP_COUNT_BUF];
	size_t wn = 0, un = 0;
	kp_count v = 0, v2 = 0;
	unsigned d = 0, d2 = 0;
	int err;

	/* what the input is, worked out on the text alone */
	while (i < size && is_digit(data[i]))
		i++;
	int_end = i;
	if (int_end == 0)
		grammar = false;
	if (i < size) {
		if (data[i] != '.')
			grammar = false;
		frac_begin = ++i;
		while (i < size && is_digit(data[i]))
			i++;
		if (i < size)
			grammar = false;
		frac_end = i;
		while (frac_end > frac_begin && data[frac_end - 1] == '0')
			frac_end--;
	}
	err = kp_count_parse(s, size, &v, &d);
	if (!grammar) {
		FUZZ_CHECK(err == -EINVAL || err == -ERANGE);
		return 0;
	}
	while (lead + 1 < int_end && data[lead] == '0')
		lead++;
	if (frac_end - frac_begin > KP_COUNT_MAX_DECIMALS || int_end - lead > 64)
		fits = false;
	if (fits) {
		/* the value in units of 10^-decimals, as digits */
		memcpy(units, s + lead, int_end - lead);
		un = int_end - lead;
		memcpy(units + un, s + frac_begin, frac_end - frac_begin);
		un += frac_end - frac_begin;
		units[un] = '\0';
		for (i = 0; i + 1 < un && units[i] == '0'; i++)
			;
		memmove(units, units + i, un - i + 1);
		un -= i;
		if (un > strlen(max_units) ||
		    (un == strlen(max_units) && strcmp(units, max_units) > 0))
			fits = false;
	}
	if (!fits) {
		FUZZ_CHECK(err == -ERANGE);
		return 0;
	}
	FUZZ_CHECK(err == 0);
	FUZZ_CHECK(d == frac_end - frac_begin);
	memcpy(want, s + lead, int_end - lead);
	wn = int_end - lead;
	if (frac_end > frac_begin) {
		want[wn++] = '.';
		memcpy(want + wn, s + frac_begin, frac_end - frac_begin);
		wn += frac_end - frac_begin;
	}
	want[wn] = '\0';

	FUZZ_CHECK(kp_count_format(v, d, buf) == wn);
	FUZZ_CHECK(strcmp(buf, want) == 0);
	FUZZ_CHECK(kp_count_parse(buf, strlen(buf), &v2, &d2) == 0);
	FUZZ_CHECK(v2 == v && d2 == d);
	/* the nearest double, within the two roundings of x / 10^d */
	{
		double x = kp_count_double(v, d), ref = strtod(want, NULL);

		FUZZ_CHECK(x == ref || fabs(x - ref) <= fabs(ref) * 1e-15);
	}
	return 0;
}
