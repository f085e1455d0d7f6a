/* Sorted uint64_t keys: kp_first_above, binary search over an array of
 * structs sorted by a uint64_t key, the one search behind every "which
 * range holds this address" lookup (symbols, kallsyms, DWARF pieces,
 * mappings); kp_first_at_or_above over sorted addresses (the sampled ones
 * a kallsyms or perf map stream keeps); kp_u64_cmp, the qsort order of
 * such addresses. */
#ifndef KP_UTIL_SEARCH_H
#define KP_UTIL_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Index of the first of base[0..n) (elements of size bytes, sorted by the
 * uint64_t at key_off) whose key is greater than addr; n when none is.
 * The element before it, if any, is the last one at or below addr. */
static inline size_t kp_first_above(const void *base, size_t n, size_t size, size_t key_off,
				    uint64_t addr)
{
	const unsigned char *p = base;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t key;

		memcpy(&key, p + mid * size + key_off, sizeof(key));
		if (key <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The same over an array of structs: KP_FIRST_ABOVE(syms, nsyms, addr, addr). */
#define KP_FIRST_ABOVE(arr, n, field, addr) \
	kp_first_above((arr), (n), sizeof(*(arr)), offsetof(__typeof__(*(arr)), field), (addr))

/* First index of w[0..n) (sorted) at or above a; n when none is.
 * Branch-free: it runs once per line of a kallsyms or perf map stream,
 * and with the lines' addresses in no order the branches of a plain
 * binary search would be mispredicted half the time. */
static inline size_t kp_first_at_or_above(const uint64_t *w, size_t n, uint64_t a)
{
	const uint64_t *base = w;

	if (!n)
		return 0;
	while (n > 1) {
		size_t half = n / 2;

		base = base[half - 1] < a ? base + half : base;
		n -= half;
	}
	return (size_t)(base - w) + (*base < a);
}

/* qsort's comparison of two uint64_t, ascending. */
static inline int kp_u64_cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

#endif
