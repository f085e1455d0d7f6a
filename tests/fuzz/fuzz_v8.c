/* runtimes/v8.c over a crafted heap: the input is the whole memory of a
 * process whose every address reads (addr modulo the input's size, so
 * every pointer the input holds leads somewhere), its first bytes the
 * stack copy, frames in JIT code and builtins, with node 20's metadata.
 * What must hold: no crash, every name either left out, a "JS:" name or
 * "[unknown: v8: ...]", no control byte in any, and the reads a sample
 * bounded (kp_v8's MAX_READS, 768, and the batched one). */
#include <stdbool.h>

#include "fuzz.h"
#include "runtimes/v8.h"
#include "runtimes/v8meta.h"

#define NFRAMES 8

static const struct {
	const char *name;
	int64_t value;
} node20[] = {
#include "v8_node20.inc"
};

static const uint8_t *mem;
static size_t mem_size;

static bool rd(void *arg, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	if (len > mem_size)
		return false;
	for (size_t i = 0; i < len; i++)
		((uint8_t *)buf)[i] = mem[(addr + i) % mem_size];
	return true;
}

static size_t rdv(void *arg, const uint64_t *addrs, size_t len, void *bufs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!rd(arg, addrs[i], (char *)bufs + i * len, len))
			break;
	return i;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kp_v8meta m;
	static bool have;
	const char *names[NFRAMES];
	uint64_t ips[NFRAMES];
	uint8_t code[NFRAMES];
	struct kp_v8 *v;
	struct kp_v8_stats st;

	if (!have) {
		const char *n[128];
		int64_t val[128];
		char why[160];
		size_t k = sizeof(node20) / sizeof(node20[0]);

		for (size_t i = 0; i < k; i++) {
			n[i] = node20[i].name;
			val[i] = node20[i].value;
		}
		FUZZ_CHECK(kp_v8meta_from(n, val, k, &m, why, sizeof(why)) == 0);
		have = true;
	}
	if (size < 64)
		return 0;
	mem = data;
	mem_size = size;
	for (size_t i = 0; i < NFRAMES; i++) {
		ips[i] = 0x1000 + i * 0x100 + data[i % size];
		code[i] = (uint8_t)(data[(i + 8) % size] % 3);
	}
	v = kp_v8_new(&m, &(struct kp_v8_mem){rd, data[0] & 1 ? rdv : NULL, NULL});
	for (int round = 0; round < 2; round++) {
		/* the stack at address size*k (so it reads as the input's start),
		 * the frame pointer from the input's bytes 16..23 */
		uint64_t sp = (uint64_t)size * 1024, fp;

		memcpy(&fp, data + 16, 8);
		fp = sp + (fp % size & ~7ull);
		kp_v8_name_frames(v,
				  &(struct kp_v8_stack){sp, fp, data, size < 4096 ? size : 4096,
							ips, code, NFRAMES,
							/* the second round checked by the
							 * first's reads, or read anew */
							round && data[1] & 2 ? 3000000000ull : 1,
							(round + 1) * 2000000000ull},
				  names);
		for (size_t i = 0; i < NFRAMES; i++) {
			if (!names[i] || names[i] == kp_v8_drop)
				continue;
			FUZZ_CHECK(strncmp(names[i], "JS:", 3) == 0 ||
				   strncmp(names[i], "[unknown: v8", 12) == 0);
			for (const char *p = names[i]; *p; p++)
				FUZZ_CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
		}
	}
	kp_v8_stats(v, &st);
	FUZZ_CHECK(st.reads <= 2 * 769);
	kp_v8_free(v);
	return 0;
}
