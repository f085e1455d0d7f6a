/* runtimes/v8.c on bytes captured from a real node (tests/fixtures/v8/,
 * made by tests/tools/v8_capture.c, whose header says how): the frames
 * named as they were in the live process (optimized ones with the line of
 * the sampled instruction and the functions TurboFan inlined into them), from the stack copy and
 * the heap reads replayed, through single reads and the batched check alike; named again from the
 * cache; and what V8 moving or a process crafting its heap looks like: a function slot that holds
 * no function, a shared info that is not one, a function moved (another context), a string of a bad
 * length: each frame then unknown or left as it was, never another name; and a heap of random
 * words, which costs bounded reads. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kp_test.h"
#include "runtimes/v8.h"
#include "runtimes/v8meta.h"

#define MAX_RECS 8192
#define MAX_FR	 128

static struct rec {
	uint64_t addr;
	size_t len;
	unsigned char *bytes;
} recs[MAX_RECS];
static size_t nrecs;
static unsigned char stack[65536];
static size_t stack_len;
static uint64_t sp, fp, ips[MAX_FR];
static uint8_t code[MAX_FR];
static size_t nframes;
static char *expect[MAX_FR];
static char *expect_inl[MAX_FR][8];
static size_t nexpect_inl[MAX_FR];
static struct kp_v8meta meta;
static uint64_t rng = 88172645463325252ull;
static bool random_heap;

static size_t unhex(const char *s, unsigned char *out, size_t max)
{
	size_t n = 0;

	while (n < max && s[0] && s[1] && s[0] != '\n') {
		sscanf(s, "%2hhx", &out[n++]);
		s += 2;
	}
	return n;
}

static bool load(const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	const char *names[256];
	int64_t values[256];
	size_t nmeta = 0;
	char why[160];

	if (!f)
		return false;
	while (getline(&line, &cap, f) > 0) {
		char word[128];
		uint64_t a;
		unsigned c;
		size_t i, off;
		int pos;

		if (sscanf(line, "meta %127s %" SCNd64, word, &values[nmeta]) == 2 && nmeta < 256)
			names[nmeta++] = strdup(word);
		else if (sscanf(line, "regs %" SCNx64 " %" SCNx64, &sp, &fp) == 2)
			;
		else if (sscanf(line, "frame %" SCNx64 " %u", &a, &c) == 2 && nframes < MAX_FR) {
			ips[nframes] = a;
			code[nframes++] = (uint8_t)c;
		} else if (sscanf(line, "stack %zx %n", &off, &pos) == 1 && off < sizeof(stack)) {
			size_t n = unhex(line + pos, stack + off, sizeof(stack) - off);

			if (off + n > stack_len)
				stack_len = off + n;
		} else if (sscanf(line, "mem %" SCNx64 " %n", &a, &pos) == 1 && nrecs < MAX_RECS) {
			unsigned char buf[65536];

			recs[nrecs].addr = a;
			recs[nrecs].len = unhex(line + pos, buf, sizeof(buf));
			recs[nrecs].bytes = malloc(recs[nrecs].len);
			memcpy(recs[nrecs].bytes, buf, recs[nrecs].len);
			nrecs++;
		} else if (sscanf(line, "inline %zu %n", &i, &pos) == 1 && i < MAX_FR &&
			   nexpect_inl[i] < 8) {
			line[strcspn(line, "\n")] = '\0';
			expect_inl[i][nexpect_inl[i]++] = strdup(line + pos);
		} else if (sscanf(line, "name %zu %n", &i, &pos) == 1 && i < MAX_FR) {
			line[strcspn(line, "\n")] = '\0';
			expect[i] = strdup(line + pos);
		}
	}
	free(line);
	fclose(f);
	if (kp_v8meta_from(names, values, nmeta, &meta, why, sizeof(why)) < 0) {
		fprintf(stderr, "metadata: %s\n", why);
		return false;
	}
	for (size_t i = 0; i < nmeta; i++)
		free((char *)names[i]);
	return nframes > 0;
}

/* The captured reads replayed: a range inside one of them. */
static bool replay(void *arg, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	if (random_heap) {
		for (size_t i = 0; i < len; i++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			((unsigned char *)buf)[i] = (unsigned char)rng;
		}
		return true;
	}
	for (size_t i = nrecs; i-- > 0;)
		if (addr >= recs[i].addr && addr - recs[i].addr <= recs[i].len &&
		    recs[i].len - (addr - recs[i].addr) >= len) {
			memcpy(buf, recs[i].bytes + (addr - recs[i].addr), len);
			return true;
		}
	return false;
}

static size_t replayv(void *arg, const uint64_t *addrs, size_t len, void *bufs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!replay(arg, addrs[i], (char *)bufs + i * len, len))
			break;
	return i;
}

/* Named as a sample taken at time, named at now (0, 0: no times). */
static void name_at(struct kp_v8 *v, const char **names, uint64_t time, uint64_t now)
{
	kp_v8_name_frames(
		v, &(struct kp_v8_stack){sp, fp, stack, stack_len, ips, code, nframes, time, now},
		names);
}

static void name_all(struct kp_v8 *v, const char **names)
{
	name_at(v, names, 0, 0);
}

static void check_as_captured(bool batched)
{
	struct kp_v8 *v =
		kp_v8_new(&meta, &(struct kp_v8_mem){replay, batched ? replayv : NULL, NULL});
	const char *names[MAX_FR];
	struct kp_v8_stats st;

	for (int round = 0; round < 2; round++) {
		name_all(v, names);
		for (size_t i = 0; i < nframes; i++) {
			size_t ni;
			const char *const *inl = kp_v8_inlined(v, i, &ni);

			if (expect[i])
				CHECK_EQ_STR(names[i], expect[i]);
			else
				CHECK(names[i] == NULL);
			CHECK_EQ_INT(ni, nexpect_inl[i]);
			for (size_t k = 0; k < ni && k < nexpect_inl[i]; k++)
				CHECK_EQ_STR(inl[k], expect_inl[i][k]);
		}
	}
	kp_v8_stats(v, &st);
	CHECK(st.hits > 0); /* the second round from the cache */
	CHECK(st.unknown == 0);
	kp_v8_free(v);
}

/* The record holding addr, and the offset of addr in it. */
static struct rec *rec_at(uint64_t addr, size_t *off)
{
	for (size_t i = nrecs; i-- > 0;)
		if (addr >= recs[i].addr && addr - recs[i].addr + 8 <= recs[i].len) {
			*off = (size_t)(addr - recs[i].addr);
			return &recs[i];
		}
	return NULL;
}

/* The leaf's function, from the stack copy. */
static uint64_t leaf_function(void)
{
	uint64_t fn;

	memcpy(&fn, stack + (fp + (uint64_t)meta.fp_function - sp), 8);
	return fn;
}

/* Word off of object obj replaced by val (every capture of it) while
 * naming; returns frame 0's name (static copy). */
static const char *with_word(uint64_t obj, int64_t off, uint64_t val)
{
	static char out[512];
	struct kp_v8 *v = kp_v8_new(&meta, &(struct kp_v8_mem){replay, replayv, NULL});
	const char *names[MAX_FR];
	uint64_t saved[64];
	size_t n = 0;
	uint64_t addr = obj - 1 + (uint64_t)off;

	for (size_t i = 0; i < nrecs && n < 64; i++)
		if (addr >= recs[i].addr && addr - recs[i].addr + 8 <= recs[i].len) {
			memcpy(&saved[n++], recs[i].bytes + (addr - recs[i].addr), 8);
			memcpy(recs[i].bytes + (addr - recs[i].addr), &val, 8);
		}
	name_all(v, names);
	snprintf(out, sizeof(out), "%s", names[0] ? names[0] : "(null)");
	n = 0;
	for (size_t i = 0; i < nrecs && n < 64; i++)
		if (addr >= recs[i].addr && addr - recs[i].addr + 8 <= recs[i].len)
			memcpy(recs[i].bytes + (addr - recs[i].addr), &saved[n++], 8);
	kp_v8_free(v);
	return out;
}

static void check_crafted(void)
{
	uint64_t fn = leaf_function(), sfi = 0, nos = 0;
	size_t off;
	struct rec *r;

	CHECK(expect[0] != NULL && code[0] == KP_V8_JIT);
	if (!expect[0])
		return;
	/* the leaf's function and its shared info, as captured */
	CHECK((r = rec_at(fn - 1 + (uint64_t)meta.fn_shared, &off)) != NULL);
	if (r)
		memcpy(&sfi, r->bytes + off, 8);
	CHECK((r = rec_at(sfi - 1 + (uint64_t)meta.sfi_name_or_scope, &off)) != NULL);
	if (r)
		memcpy(&nos, r->bytes + off, 8);
	/* the slot's object has a Smi for a map: no function, left as it was */
	CHECK_EQ_STR(with_word(fn, meta.obj_map, 0), "(null)");
	/* the function's shared info is the function itself */
	CHECK_EQ_STR(with_word(fn, meta.fn_shared, fn), "[unknown: v8: no shared function info]");
	/* another function at the slot's address: another context */
	CHECK_EQ_STR(with_word(fn, meta.fn_context, sfi), "[unknown: v8: function moved]");
	/* the name's ScopeInfo or String points at the function */
	CHECK(strncmp(with_word(sfi, meta.sfi_name_or_scope, fn), "[unknown: v8: ", 14) == 0);
	/* and as captured, after all that */
	CHECK_EQ_STR(with_word(fn, meta.obj_map, 0), "(null)");
	CHECK(nos != 0);
}

/* Word off of object obj set to val in every capture of it; the old
 * values into saved (restored by words_restore). */
static size_t words_set(uint64_t obj, int64_t off, uint64_t val, uint64_t *saved)
{
	uint64_t addr = obj - 1 + (uint64_t)off;
	size_t n = 0;

	for (size_t i = 0; i < nrecs && n < 64; i++)
		if (addr >= recs[i].addr && addr - recs[i].addr + 8 <= recs[i].len) {
			memcpy(&saved[n++], recs[i].bytes + (addr - recs[i].addr), 8);
			memcpy(recs[i].bytes + (addr - recs[i].addr), &val, 8);
		}
	return n;
}

static void words_restore(uint64_t obj, int64_t off, const uint64_t *saved)
{
	uint64_t addr = obj - 1 + (uint64_t)off;
	size_t n = 0;

	for (size_t i = 0; i < nrecs && n < 64; i++)
		if (addr >= recs[i].addr && addr - recs[i].addr + 8 <= recs[i].len)
			memcpy(recs[i].bytes + (addr - recs[i].addr), &saved[n++], 8);
}

/* Whether names are the captured ones (frame 0's excepted when !leaf). */
static bool as_captured(const char *const *names, bool leaf)
{
	for (size_t i = leaf ? 0 : 1; i < nframes; i++)
		if (expect[i] ? !names[i] || strcmp(names[i], expect[i]) : names[i] != NULL)
			return false;
	return true;
}

#define S 1000000000ull /* a second, in ns */

/* A read made for one sample checks the samples taken before it (a
 * round's samples are named after the round): those are named with no
 * read; a sample taken after it is read anew, and a function changed
 * since is then not named from the cache, while a sample taken before
 * the change keeps the name the read then confirmed. */
static void check_shared_checks(void)
{
	struct kp_v8 *v = kp_v8_new(&meta, &(struct kp_v8_mem){replay, replayv, NULL});
	const char *names[MAX_FR];
	struct kp_v8_stats st0, st;
	uint64_t saved[64], fn = leaf_function();
	size_t n;

	name_at(v, names, 1 * S, 2 * S); /* named, and checked, at 2 s */
	CHECK(as_captured(names, true));
	kp_v8_stats(v, &st0);
	CHECK(st0.shared == 0);
	/* taken at 1.5 s, before the check: no read at all */
	name_at(v, names, 3 * S / 2, 3 * S);
	CHECK(as_captured(names, true));
	kp_v8_stats(v, &st);
	CHECK_EQ_INT(st.reads, st0.reads);
	CHECK(st.shared > 0 && st.hits > st0.hits);
	/* taken within the clocks' margin of the check: read */
	name_at(v, names, 2 * S - 1000, 3 * S);
	kp_v8_stats(v, &st0);
	CHECK(st0.reads > st.reads);
	CHECK(as_captured(names, true));
	/* taken at 4 s, after the check at 3 s: one read, the batch */
	name_at(v, names, 4 * S, 5 * S);
	kp_v8_stats(v, &st);
	CHECK_EQ_INT(st.reads, st0.reads + 1);
	CHECK(as_captured(names, true));
	/* no time: read, whatever was checked */
	name_at(v, names, 0, 0);
	kp_v8_stats(v, &st0);
	CHECK_EQ_INT(st0.reads, st.reads + 1);
	/* the leaf's function changed (another context) after the check at
	 * 5 s: a sample taken before it keeps the confirmed name, one taken
	 * after is read and told moved */
	n = words_set(fn, meta.fn_context, leaf_function() ^ 0x100, saved);
	CHECK(n > 0);
	name_at(v, names, 4 * S, 6 * S);
	CHECK(as_captured(names, true));
	name_at(v, names, 7 * S, 8 * S);
	CHECK_EQ_STR(names[0], "[unknown: v8: function moved]");
	CHECK(as_captured(names, false));
	/* and that read was a check too: a sample before it is not named
	 * from what the cache held before */
	name_at(v, names, 7 * S, 9 * S);
	CHECK_EQ_STR(names[0], "[unknown: v8: function moved]");
	words_restore(fn, meta.fn_context, saved);
	name_at(v, names, 10 * S, 11 * S);
	CHECK(as_captured(names, true));
	kp_v8_free(v);
}

/* Every word of every capture swapped with another tagged word of the
 * capture (V8 moved an object, or the process crafted one): no crash,
 * and every name unknown, left out, or a name of valid text. */
static void check_swaps(void)
{
	size_t tried = 0, bad = 0;

	for (size_t i = 0; i < nrecs; i++)
		for (size_t o = 0; o + 8 <= recs[i].len && o < 64; o += 8) {
			uint64_t old, val;
			struct kp_v8 *v =
				kp_v8_new(&meta, &(struct kp_v8_mem){replay, replayv, NULL});
			const char *names[MAX_FR];
			struct kp_v8_stats st;

			memcpy(&old, recs[i].bytes + o, 8);
			const struct rec *o2 = &recs[(i + 7) % nrecs];

			val = 0x100000001ull; /* a word of another capture, when it has one */
			if (o2->len >= 8)
				memcpy(&val, o2->bytes, 8);
			val = old & 1 ? val | 1 : val ^ 0xffffffff00000000ull;
			memcpy(recs[i].bytes + o, &val, 8);
			name_all(v, names);
			for (size_t f = 0; f < nframes; f++)
				for (const char *p = names[f]; p && *p; p++)
					bad += (unsigned char)*p < 0x20 || *p == 0x7f;
			kp_v8_stats(v, &st);
			bad += st.reads > 800;
			memcpy(recs[i].bytes + o, &old, 8);
			kp_v8_free(v);
			tried++;
		}
	CHECK(tried > 100);
	CHECK_EQ_INT(bad, 0);
}

/* A heap of random bytes that reads back whatever is asked: bounded. */
static void check_random_heap(void)
{
	struct kp_v8 *v = kp_v8_new(&meta, &(struct kp_v8_mem){replay, replayv, NULL});
	const char *names[MAX_FR];
	struct kp_v8_stats st;

	random_heap = true;
	for (int i = 0; i < 200; i++)
		name_all(v, names);
	random_heap = false;
	kp_v8_stats(v, &st);
	CHECK(st.reads <= 200ull * 800);
	kp_v8_free(v);
}

int main(void)
{
	const char *dir = getenv("KP_FIXTURES");
	char path[4096];

	snprintf(path, sizeof(path), "%s/v8/service.capture", dir ? dir : "tests/fixtures");
	CHECK(load(path));
	if (kp_test_failed)
		return 1;
	CHECK(meta.fp_function == -16 && meta.tagged_size == 8);
	check_as_captured(false);
	check_as_captured(true);
	check_crafted();
	check_shared_checks();
	check_swaps();
	check_random_heap();
	for (size_t i = 0; i < nrecs; i++)
		free(recs[i].bytes);
	for (size_t i = 0; i < MAX_FR; i++) {
		free(expect[i]);
		for (size_t k = 0; k < nexpect_inl[i]; k++)
			free(expect_inl[i][k]);
	}
	printf("%d passed, %d failed\n", kp_test_passed, kp_test_failed);
	return kp_test_failed != 0;
}
