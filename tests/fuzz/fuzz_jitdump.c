/* Jitdump files (symbolize/jitdump.c): the whole input as a file, parsed
 * at once and, as a JIT's file is read while it writes it, in two parts
 * (the first read while the file held only it: a record cut anywhere);
 * the two must agree on the state, the offset, the counts and the name of
 * every address a load covers (each piece's first and last byte). The
 * address space the loads leave must hold: pieces (a tree) sorted, disjoint, each
 * inside its live load, as many as counted; names without ';' or control bytes (empty for
 * a load named with blanks alone).
 *
 * Byte 0 of the input picks the split (k = its value out of 255 of the
 * length); the file is the input from byte 1. */
#include <stdbool.h>

#include "fuzz.h"
#include "symbolize/jitdump.h"

#define MAX_PROBES 64

static void check_space(const struct kp_jitdump *jd)
{
	const struct kp_jitdump_piece *p, *prev = NULL;
	size_t n = 0;

	for (p = kp_jitdump_next(jd, 0); p; prev = p, p = kp_jitdump_next(jd, p->end)) {
		const struct kp_jitdump_code *c;

		FUZZ_CHECK(p->start < p->end);
		FUZZ_CHECK(!prev || prev->end <= p->start);
		FUZZ_CHECK(p->code < jd->ncodes);
		c = &jd->codes[p->code];
		FUZZ_CHECK(c->refs > 0);
		FUZZ_CHECK(p->start >= c->start && p->end - c->start <= c->size);
		FUZZ_CHECK(kp_jitdump_find(jd, p->start) == c);
		FUZZ_CHECK(kp_jitdump_find(jd, p->end - 1) == c);
		n++;
	}
	FUZZ_CHECK(n == jd->npieces);
}

/* The name of addr into buf, checked; "" when no load covers it. */
static void name_of(const struct kp_jitdump *jd, uint64_t addr, char *buf, size_t size)
{
	const struct kp_jitdump_code *c = kp_jitdump_find(jd, addr);
	size_t n;

	buf[0] = 0;
	if (!c)
		return;
	n = kp_jitdump_name(jd, c, addr, buf, size);
	FUZZ_CHECK(n < size && strlen(buf) == n);
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(buf[i] != ';' && (unsigned char)buf[i] >= 0x20 && buf[i] != 0x7f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kp_jitdump whole, parts;
	const uint8_t *file = data + 1;
	size_t len, k, probes = 0;
	uint64_t used;

	/* one table for many inputs (a table's first string costs an arena),
	 * made anew now and then so that hours of inputs do not fill it */
	static struct kp_strtab *strings;
	static unsigned runs;

	if (size < 1)
		return 0;
	if (runs++ % 4096 == 0) {
		kp_strtab_free(strings);
		strings = kp_strtab_new();
	}
	len = size - 1;
	k = len * data[0] / 255;
	kp_jitdump_init(&whole, strings, NULL, NULL);
	used = kp_jitdump_parse(&whole, file, len, len);
	FUZZ_CHECK(used <= len && whole.off == used);
	check_space(&whole);

	kp_jitdump_init(&parts, strings, NULL, NULL);
	used = kp_jitdump_parse(&parts, file, k, k);
	FUZZ_CHECK(used <= k && parts.off == used);
	if (parts.state <= KP_JITDUMP_RECORDS)
		kp_jitdump_parse(&parts, file + parts.off, len - (size_t)parts.off,
				 len - parts.off);
	FUZZ_CHECK(parts.state == whole.state && parts.off == whole.off);
	FUZZ_CHECK(parts.st.loads == whole.st.loads &&
		   parts.st.bad_records == whole.st.bad_records);
	FUZZ_CHECK(parts.npieces == whole.npieces);
	check_space(&parts);
	for (const struct kp_jitdump_piece *p = kp_jitdump_next(&whole, 0);
	     p && probes < MAX_PROBES; p = kp_jitdump_next(&whole, p->end), probes++) {
		char a[512], b[512];

		name_of(&whole, p->start, a, sizeof(a));
		name_of(&parts, p->start, b, sizeof(b));
		FUZZ_CHECK(strcmp(a, b) == 0);
		name_of(&whole, p->end - 1, a, sizeof(a));
		name_of(&parts, p->end - 1, b, sizeof(b));
		FUZZ_CHECK(strcmp(a, b) == 0);
	}
	kp_jitdump_fini(&parts);
	kp_jitdump_fini(&whole);
	return 0;
}
