/* A benchmark of fixed work whose slowed function is called from several
 * places (scripts/bench-gate): its total share is spread over three stacks,
 *   mu_round_kprof -> mu_load_kprof       decode records from text
 *                                         -> mu_callee_kprof
 *                     mu_transform_kprof  a matrix-like mix of the records
 *                                         -> mu_callee_kprof
 *                     mu_store_kprof      encode them back as hex
 *                                         -> mu_callee_kprof
 *                     mu_sort_kprof       insertion sort of record keys
 * where mu_callee_kprof, a hash over a buffer (about 12% of the time in
 * all, a third from each caller), is the shared helper. ROUNDS times.
 * callee=PERCENT (or load, transform, store, sort=PERCENT) makes that
 * function do PERCENT% more work.
 * Usage: multicall [rounds=N] [load|transform|store|sort|callee=PERCENT] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knob.h"

#define RECORDS	   256
#define TEXT_BYTES (RECORDS * 12)

enum { LOAD, TRANSFORM, STORE, SORT, CALLEE, NSTAGES };
/* per round: passes of each caller's own work, sort passes, bytes a callee
 * call hashes */
static struct kp_knob knobs[NSTAGES] = {{"load", 120, 0},
					{"transform", 200, 0},
					{"store", 300, 0},
					{"sort", 30, 0},
					{"callee", 27000, 0}};

static char text[TEXT_BYTES];
static uint32_t records[RECORDS];
static char hex[RECORDS * 9];
static volatile uint64_t sink;

/* A murmur-like hash over bytes of buf, from its start again at its end. */
KP_STAGE static uint64_t mu_callee_kprof(const void *buf, size_t len, unsigned long bytes)
{
	const unsigned char *p = buf;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (unsigned long n = 0, i = 0; n < bytes; n++) {
		h ^= p[i];
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
		if (++i == len)
			i = 0;
	}
	return h;
}

/* Decimal fields of the text into records, then their hash. */
KP_STAGE static void mu_load_kprof(unsigned long passes)
{
	for (unsigned long p = 0; p < passes; p++) {
		uint32_t v = 0;
		unsigned r = 0;

		for (size_t i = 0; i < TEXT_BYTES && r < RECORDS; i++) {
			char c = text[i];

			if (c >= '0' && c <= '9') {
				v = v * 10 + (uint32_t)(c - '0');
			} else if (c == '\n') {
				records[r++] = v;
				v = 0;
			}
		}
	}
	sink += mu_callee_kprof(records, sizeof(records), knobs[CALLEE].work);
}

/* Each record mixed with its neighbours, then their hash. */
KP_STAGE static void mu_transform_kprof(unsigned long passes)
{
	for (unsigned long p = 0; p < passes; p++)
		for (unsigned r = 0; r < RECORDS; r++) {
			uint32_t a = records[r], b = records[(r + 1) % RECORDS];
			uint32_t c = records[(r + 7) % RECORDS];

			for (int k = 0; k < 8; k++)
				a = (a * 2654435761u) ^ (b >> (k + 3)) ^ (c << (k & 7));
			records[r] = a % 1000000007u;
		}
	sink += mu_callee_kprof(records, sizeof(records), knobs[CALLEE].work);
}

/* The records as hex text, then its hash. */
KP_STAGE static void mu_store_kprof(unsigned long passes)
{
	static const char digits[] = "0123456789abcdef";

	for (unsigned long p = 0; p < passes; p++)
		for (unsigned r = 0; r < RECORDS; r++) {
			uint32_t v = records[r];

			for (int d = 7; d >= 0; d--) {
				hex[r * 9 + (unsigned)d] = digits[v & 15];
				v >>= 4;
			}
			hex[r * 9 + 8] = (v & 1) ? '\n' : ' ';
		}
	sink += mu_callee_kprof(hex, sizeof(hex), knobs[CALLEE].work);
}

/* An insertion sort of a copy of the records' low bits. */
KP_STAGE static void mu_sort_kprof(unsigned long passes)
{
	static uint16_t keys[RECORDS];

	for (unsigned long p = 0; p < passes; p++) {
		for (unsigned r = 0; r < RECORDS; r++)
			keys[r] = (uint16_t)(records[r] ^ (uint32_t)p);
		for (unsigned i = 1; i < RECORDS; i++) {
			uint16_t k = keys[i];
			unsigned j = i;

			while (j > 0 && keys[j - 1] > k) {
				keys[j] = keys[j - 1];
				j--;
			}
			keys[j] = k;
		}
	}
	sink += keys[0];
}

KP_STAGE static void mu_round_kprof(void)
{
	mu_load_kprof(knobs[LOAD].work);
	mu_transform_kprof(knobs[TRANSFORM].work);
	mu_store_kprof(knobs[STORE].work);
	mu_sort_kprof(knobs[SORT].work);
	__asm__ volatile("" ::: "memory"); /* keep the last call a call */
}

int main(int argc, char **argv)
{
	unsigned rounds = 1000;
	const char *dir = NULL;
	uint64_t x = 88172645463325252ULL;
	size_t n = 0;

	kp_knob_parse(argc, argv, "multicall", knobs, NSTAGES, &rounds, &dir);
	for (unsigned r = 0; r < RECORDS; r++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%u\n",
				      (unsigned)(x % 1000000000u));
	}
	for (unsigned r = 0; r < rounds; r++)
		mu_round_kprof();
	return 0;
}
