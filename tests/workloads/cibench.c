/* A benchmark shaped like the ones CI jobs record (scripts/bench-gate,
 * e2e/diff_gate): a fixed amount of work, not a fixed time, in five stages
 * with distinctive names,
 *   main -> ci_round_kprof -> ci_parse_kprof   parse decimal numbers from text
 *                            ci_hash_kprof    insert them in a hash table
 *                                             bigger than the caches
 *                            ci_checksum_kprof a checksum over a buffer
 *                            ci_sort_kprof    qsort of records (ci_compare_kprof)
 *                            ci_write_kprof   write a file and fsync it
 * repeated ROUNDS times. checksum=PERCENT (or parse, hash, sort=PERCENT)
 * makes that stage do PERCENT% more work, as a slower change to its code
 * would: checksum=30 is a 30% slowdown of a stage that takes about 15% of
 * the CPU time. dir=PATH is where the written file goes (default $TMPDIR or
 * /tmp; it is removed at the end).
 * Usage: cibench [rounds=N] [dir=PATH] [parse|hash|checksum|sort=PERCENT] */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knob.h"

#define NUMBERS	    (1u << 16) /* distinct numbers in the text */
#define TABLE_BITS  22	       /* 4 Mi slots of 16 bytes: 64 MiB */
#define BLOCK_BYTES (1u << 20) /* the checksummed and written block */
#define SORT_CHUNK  1024       /* records a qsort call */
#define WRITE_BYTES (256u << 10)

enum { PARSE, HASH, CHECKSUM, SORT, NSTAGES };
/* the work of one call of each stage (bytes, keys, bytes, chunks), before a
 * slowdown; a stage's cost is linear in it, so PERCENT% more work is PERCENT%
 * more time */
static struct kp_knob knobs[NSTAGES] = {
	{"parse", 6u << 20, 0}, {"hash", 1u << 17, 0}, {"checksum", 1600000, 0}, {"sort", 80, 0}};

struct slot {
	uint64_t key, value;
};

struct record {
	uint64_t key;
	char name[24];
};

static char *text;
static size_t text_len;
static uint64_t *numbers;
static struct slot *table;
static unsigned char *block;
static struct record *records;
static volatile uint64_t sink;
static char path[4096];

/* Decimal numbers, one a line, into numbers[]: bytes of text, from the
 * start again at its end. */
__attribute__((noinline)) static void ci_parse_kprof(unsigned long bytes)
{
	size_t k = 0, i = 0;
	uint64_t v = 0;

	for (unsigned long n = 0; n < bytes; n++) {
		char c = text[i];

		if (c >= '0' && c <= '9') {
			v = v * 10 + (uint64_t)(c - '0');
		} else {
			numbers[k++ & (NUMBERS - 1)] = v;
			v = 0;
		}
		if (++i == text_len)
			i = 0;
	}
	__asm__ volatile("" ::: "memory");
}

/* Open addressing with linear probing over 64 MiB: a cache miss a key. */
__attribute__((noinline)) static void ci_hash_kprof(unsigned long keys)
{
	const uint64_t mask = (1u << TABLE_BITS) - 1;

	for (unsigned long i = 0; i < keys; i++) {
		uint64_t key = numbers[i & (NUMBERS - 1)] * 0x9e3779b97f4a7c15ULL + i / NUMBERS;
		uint64_t h = (key ^ (key >> 29)) & mask;

		while (table[h].key && table[h].key != key)
			h = (h + 1) & mask;
		table[h].key = key;
		table[h].value++;
	}
}

/* Adler-32-like sums over bytes of the block, from its start again at its
 * end. */
__attribute__((noinline)) static void ci_checksum_kprof(unsigned long bytes)
{
	uint32_t a = 1, b = 0;

	for (unsigned long n = 0; n < bytes; n++) {
		a = (a + block[n & (BLOCK_BYTES - 1)]) % 65521;
		b = (b + a) % 65521;
	}
	sink += ((uint64_t)b << 16) | a;
}

__attribute__((noinline)) static int ci_compare_kprof(const void *pa, const void *pb)
{
	const struct record *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* qsort of chunks of freshly shuffled records. */
__attribute__((noinline)) static void ci_sort_kprof(unsigned long chunks)
{
	for (unsigned long c = 0; c < chunks; c++) {
		for (unsigned i = 0; i < SORT_CHUNK; i++)
			records[i].key = numbers[(i * 7919u + c) & (NUMBERS - 1)] % 1000;
		qsort(records, SORT_CHUNK, sizeof(*records), ci_compare_kprof);
	}
	sink += records[0].key;
}

/* The results to disk, durably: mostly waiting, some kernel CPU. */
__attribute__((noinline)) static void ci_write_kprof(void)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0) {
		perror(path);
		exit(1);
	}
	if (write(fd, block, WRITE_BYTES) != (ssize_t)WRITE_BYTES || fsync(fd) < 0) {
		perror(path);
		exit(1);
	}
	close(fd);
}

__attribute__((noinline)) static void ci_round_kprof(void)
{
	ci_parse_kprof(knobs[PARSE].work);
	ci_hash_kprof(knobs[HASH].work);
	ci_checksum_kprof(knobs[CHECKSUM].work);
	ci_sort_kprof(knobs[SORT].work);
	ci_write_kprof();
	__asm__ volatile("" ::: "memory"); /* keep the last call a call */
}

/* The input: NUMBERS decimal numbers, one a line, the same every run. */
static void setup(void)
{
	uint64_t x = 88172645463325252ULL;
	size_t cap = (size_t)NUMBERS * 21, n = 0;

	text = malloc(cap);
	numbers = calloc(NUMBERS, sizeof(*numbers));
	table = calloc((size_t)1 << TABLE_BITS, sizeof(*table));
	block = malloc(BLOCK_BYTES);
	records = calloc(SORT_CHUNK, sizeof(*records));
	if (!text || !numbers || !table || !block || !records) {
		fputs("cibench: out of memory\n", stderr);
		exit(1);
	}
	for (unsigned i = 0; i < NUMBERS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		n += (size_t)snprintf(text + n, cap - n, "%llu\n",
				      (unsigned long long)(x % 1000000007));
	}
	text_len = n;
	for (size_t i = 0; i < BLOCK_BYTES; i++)
		block[i] = (unsigned char)(i * 131 + (i >> 8));
	for (unsigned i = 0; i < SORT_CHUNK; i++)
		snprintf(records[i].name, sizeof(records[i].name), "record-%u", i * 2654435761u);
}

int main(int argc, char **argv)
{
	unsigned rounds = 40;
	const char *dir = getenv("TMPDIR");

	kp_knob_parse(argc, argv, "cibench", knobs, NSTAGES, &rounds, &dir);
	snprintf(path, sizeof(path), "%s/cibench.%d.out", dir, (int)getpid());
	setup();
	for (unsigned r = 0; r < rounds; r++)
		ci_round_kprof();
	unlink(path);
	return 0;
}
