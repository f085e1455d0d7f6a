/* A memory-bound benchmark of fixed work (scripts/bench-gate): over a
 * 128 MiB array, the same every run,
 *   mc_round_kprof -> mc_chase_kprof    pointer chasing: each load's address
 *                                       is the last load's value, a cache
 *                                       miss and its full latency a step
 *                                       (about 12% of the time)
 *                     mc_stream_kprof   a sequential sum: memory bandwidth
 *                     mc_scatter_kprof  increments at random places: misses
 *                                       the CPU overlaps
 *                     mc_compute_kprof  arithmetic in registers
 * ROUNDS times. chase=PERCENT (or stream, scatter, compute=PERCENT) makes
 * that stage do PERCENT% more work.
 * Usage: memchase [rounds=N] [chase|stream|scatter|compute=PERCENT] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knob.h"

#define ARRAY_BITS 24 /* 16 Mi entries of 8 bytes */

enum { CHASE, STREAM, SCATTER, COMPUTE, NSTAGES };
/* per round: steps, entries, increments, iterations */
static struct kp_knob knobs[NSTAGES] = {{"chase", 20000, 0},
					{"stream", 9600000, 0},
					{"scatter", 600000, 0},
					{"compute", 6000000, 0}};

static uint64_t *array;
static uint64_t position; /* where the chase goes on from, round to round */
static volatile uint64_t sink;

/* Steps of a chase: the next index is the entry's value mixed with the
 * step (so that no short cycle ever settles in the caches). */
KP_STAGE static void mc_chase_kprof(unsigned long steps)
{
	const uint64_t mask = (1u << ARRAY_BITS) - 1;
	uint64_t i = position;

	for (unsigned long s = 0; s < steps; s++)
		i = (array[i] + s * 0x9e3779b97f4a7c15ULL) & mask;
	position = i;
}

/* A sum over entries, from where the last one stopped. */
KP_STAGE static void mc_stream_kprof(unsigned long entries)
{
	static uint64_t from;
	const uint64_t mask = (1u << ARRAY_BITS) - 1;
	uint64_t sum = 0;

	for (unsigned long e = 0; e < entries; e++)
		sum += array[(from + e) & mask];
	from = (from + entries) & mask;
	sink += sum;
}

/* Increments at random entries, each independent of the last. */
KP_STAGE static void mc_scatter_kprof(unsigned long increments)
{
	const uint64_t mask = (1u << ARRAY_BITS) - 1;
	uint64_t x = 0x2545f4914f6cdd1dULL;

	for (unsigned long n = 0; n < increments; n++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		array[x & mask] += 2;
	}
}

/* A polynomial, in registers. */
KP_STAGE static void mc_compute_kprof(unsigned long iterations)
{
	double a = 1.0001, acc = 0;

	for (unsigned long n = 0; n < iterations; n++) {
		acc = acc * 0.999 + a;
		a = a * 1.0000001 + 1e-9;
	}
	sink += (uint64_t)acc;
}

KP_STAGE static void mc_round_kprof(void)
{
	mc_chase_kprof(knobs[CHASE].work);
	mc_stream_kprof(knobs[STREAM].work);
	mc_scatter_kprof(knobs[SCATTER].work);
	mc_compute_kprof(knobs[COMPUTE].work);
	__asm__ volatile("" ::: "memory"); /* keep the last call a call */
}

int main(int argc, char **argv)
{
	unsigned rounds = 32;
	const char *dir = NULL;
	uint64_t x = 88172645463325252ULL;

	kp_knob_parse(argc, argv, "memchase", knobs, NSTAGES, &rounds, &dir);
	array = malloc(sizeof(*array) << ARRAY_BITS);
	if (!array) {
		fputs("memchase: out of memory\n", stderr);
		return 1;
	}
	for (size_t i = 0; i < (size_t)1 << ARRAY_BITS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		array[i] = x;
	}
	for (unsigned r = 0; r < rounds; r++)
		mc_round_kprof();
	return 0;
}
