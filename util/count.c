#include "util/count.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

static const kp_count ten = 10;
/* x * 10 + digit fits while x < LIMIT, or x == LIMIT and digit <= LAST
 * (constants: no 128-bit division at run time) */
#define LIMIT (~(kp_count)0 / 10)
#define LAST  ((unsigned)(~(kp_count)0 % 10))

static bool times_ten_plus(kp_count *x, unsigned digit)
{
	if (*x > LIMIT || (*x == LIMIT && digit > LAST))
		return false;
	*x = *x * ten + digit;
	return true;
}

bool kp_count_shift(kp_count *v, unsigned digits)
{
	kp_count x = *v;

	for (unsigned i = 0; i < digits; i++)
		if (!times_ten_plus(&x, 0))
			return false;
	*v = x;
	return true;
}

int kp_count_parse(const char *s, size_t len, kp_count *v, unsigned *decimals)
{
	kp_count x = 0;
	size_t i = 0, int_digits = 0, frac_end;
	unsigned d = 0;

	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, int_digits++)
		if (!times_ten_plus(&x, (unsigned)(s[i] - '0')))
			return -ERANGE;
	if (!int_digits)
		return -EINVAL;
	if (i < len) {
		if (s[i] != '.')
			return -EINVAL;
		i++;
		/* trailing zeros of the fraction change nothing */
		for (frac_end = len; frac_end > i && s[frac_end - 1] == '0'; frac_end--)
			;
		for (size_t k = i; k < len; k++)
			if (s[k] < '0' || s[k] > '9')
				return -EINVAL;
		for (; i < frac_end; i++)
			if (++d > KP_COUNT_MAX_DECIMALS ||
			    !times_ten_plus(&x, (unsigned)(s[i] - '0')))
				return -ERANGE;
	}
	*v = x;
	*decimals = d;
	return 0;
}

size_t kp_count_format(kp_count v, unsigned decimals, char *buf)
{
	char tmp[KP_COUNT_BUF];
	size_t n = 0, len = 0, frac;

	/* digits, least significant first; 64-bit arithmetic once it fits */
	while (v > UINT64_MAX) {
		tmp[n++] = (char)('0' + (unsigned)(v % ten));
		v /= ten;
	}
	for (uint64_t w = (uint64_t)v;; w /= 10) {
		tmp[n++] = (char)('0' + (unsigned)(w % 10));
		if (w < 10)
			break;
	}
	while (n <= decimals)
		tmp[n++] = '0';
	/* the fraction's trailing zeros (the first digits made) go */
	for (frac = 0; frac < decimals && tmp[frac] == '0'; frac++)
		;
	for (size_t i = n; i > decimals; i--)
		buf[len++] = tmp[i - 1];
	if (frac < decimals) {
		buf[len++] = '.';
		for (size_t i = decimals; i > frac; i--)
			buf[len++] = tmp[i - 1];
	}
	buf[len] = '\0';
	return len;
}

double kp_count_double(kp_count v, unsigned decimals)
{
	/* powers of ten are exact doubles up to 10^22: one correctly rounded
	 * division for the usual small values */
	static const double pow10[KP_COUNT_MAX_DECIMALS + 1] = {
		1e0,  1e1,  1e2,  1e3,	1e4,  1e5,  1e6,  1e7,	1e8,  1e9,
		1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
	};
	double x = (double)v;

	return decimals ? x / pow10[decimals <= KP_COUNT_MAX_DECIMALS ? decimals
								      : KP_COUNT_MAX_DECIMALS]
			: x;
}
