/* JIT perf maps (/tmp/perf-PID.map): the whole input as one map, asked
 * about the addresses its lines name (each start, last byte and end). The
 * answer must be what the rule says, worked out line by line: the name of
 * the last well-formed line covering the address. Then the name cleaner
 * (kp_perfmap_sanitize_name) on the input, with a buffer size from byte 0.
 *
 * The map is streamed from its end through one read buffer: byte 0 odd
 * makes that buffer 8-135 bytes (from byte 0's other bits), so lines
 * cross buffer ends and lines too long to hold (malformed, for the stream
 * and for the line-by-line rule alike) are common; even, the default
 * KP_PERFMAP_READ_SIZE. */
#include <stdbool.h>

#include "fuzz.h"
#include "symbolize/perfmap.h"

#define MAX_QUERIES 128
#define MAX_LINES   256 /* the line-by-line oracle runs below this */

struct map_stats {
	uint64_t bad_lines, entries;
};

/* Reads text[0..len) as a map and sets names[i] to a heap copy of the
 * name covering addrs[i] (sorted, distinct), or NULL. */
static void map_names(const char *text, size_t len, const uint64_t *addrs, size_t n,
		      size_t read_size, char **names, struct map_stats *st)
{
	struct kp_perfmap pm = {0};

	kp_perfmap_parse(&pm, text, len, addrs, n, read_size);
	FUZZ_CHECK(pm.n == n);
	for (size_t i = 0; i < pm.n; i++)
		FUZZ_CHECK(pm.addrs[i] == addrs[i]);
	for (size_t i = 0; i < n; i++) {
		const char *name = NULL;

		FUZZ_CHECK(kp_perfmap_find(&pm, addrs[i], &name));
		names[i] = name ? strdup(name) : NULL;
		FUZZ_CHECK(!name || (names[i] && *name));
	}
	st->bad_lines = pm.bad_lines;
	st->entries = pm.entries;
	kp_perfmap_fini(&pm);
}

/* A hex number at *p (0x optional), for picking addresses to ask about. */
static bool scan_hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;

	while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
		s++;
	if (end - s >= 2 && s[0] == '0' && (s[1] | 0x20) == 'x')
		s += 2;
	if (s == end || fuzz_hexval(*s) < 0)
		return false;
	*v = 0;
	while (s < end && fuzz_hexval(*s) >= 0)
		*v = *v << 4 | (uint64_t)fuzz_hexval(*s++);
	*p = s;
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void add_query(uint64_t *q, size_t *n, uint64_t v)
{
	if (*n < MAX_QUERIES)
		q[(*n)++] = v;
}

static void check_sanitize(const char *name, size_t len, size_t dstsize)
{
	char dst[260], want[260];
	size_t n = kp_perfmap_sanitize_name(dst, dstsize, name, len), w = 0;

	FUZZ_CHECK(n < dstsize && strlen(dst) == n);
	while (len && (*name == ' ' || *name == '\t'))
		name++, len--;
	while (len && (name[len - 1] == ' ' || name[len - 1] == '\t' || name[len - 1] == '\r'))
		len--;
	for (size_t i = 0; i < len && w < sizeof(want) - 1; i++) {
		unsigned char c = (unsigned char)name[i];

		want[w++] = c == ';' ? ':' : c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	want[w] = '\0';
	if (len < dstsize) {
		FUZZ_CHECK(strcmp(dst, want) == 0);
	} else {
		/* cut: a prefix (not ending inside a UTF-8 sequence) and "..." */
		FUZZ_CHECK(n >= 3 && memcmp(dst + n - 3, "...", 3) == 0);
		FUZZ_CHECK(memcmp(dst, want, n - 3) == 0);
		FUZZ_CHECK(n == 3 || ((unsigned char)want[n - 3] & 0xc0) != 0x80);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t b0 = fuzz_byte(&in);
	size_t dstsize = 4 + b0, read_size = b0 & 1 ? 8 + (b0 >> 1) : 0;
	const char *text = (const char *)in.p, *end = text + in.n, *p;
	uint64_t q[MAX_QUERIES];
	char *names[MAX_QUERIES], *line_names[MAX_QUERIES];
	const char *want[MAX_QUERIES];
	size_t nq = 0, k, nlines = 0;
	struct map_stats st, sum = {0}, one;

	check_sanitize(text, in.n, dstsize);

	/* the addresses each line names */
	for (p = text; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *eol = nl ? nl : end;
		const char *s = p;
		uint64_t start, len;

		nlines++;
		if (scan_hex(&s, eol, &start)) {
			add_query(q, &nq, start);
			add_query(q, &nq, start - 1);
			if (scan_hex(&s, eol, &len) && len) {
				add_query(q, &nq, start + len - 1);
				add_query(q, &nq, start + len);
			}
		}
		p = nl ? nl + 1 : end;
	}
	add_query(q, &nq, 0);
	add_query(q, &nq, UINT64_MAX);
	qsort(q, nq, sizeof(*q), cmp_u64);
	for (k = 0; k + 1 < nq;)
		if (q[k] == q[k + 1])
			memmove(&q[k], &q[k + 1], (--nq - k) * sizeof(*q));
		else
			k++;

	map_names(text, in.n, q, nq, read_size, names, &st);
	FUZZ_CHECK(st.bad_lines + st.entries <= nlines);
	if (nlines <= MAX_LINES) {
		/* the rule, line by line: the last line covering an address wins */
		memset(want, 0, sizeof(want));
		for (p = text; p < end;) {
			const char *nl = memchr(p, '\n', (size_t)(end - p)), *eol = nl ? nl : end;

			size_t n = (size_t)(eol - p);
			/* the default buffer holds any line shorter than itself, as
			 * one just long enough does (and is not 1 MiB a line) */
			size_t rs = read_size || n + 1 >= KP_PERFMAP_READ_SIZE ? read_size : n + 1;

			map_names(p, n, q, nq, rs, line_names, &one);
			sum.bad_lines += one.bad_lines;
			sum.entries += one.entries;
			for (k = 0; k < nq; k++) {
				if (line_names[k]) {
					free((void *)want[k]);
					want[k] = line_names[k];
				}
			}
			p = nl ? nl + 1 : end;
		}
		FUZZ_CHECK(sum.bad_lines == st.bad_lines && sum.entries == st.entries);
		for (k = 0; k < nq; k++) {
			FUZZ_CHECK(!want[k] == !names[k]);
			FUZZ_CHECK(!want[k] || strcmp(want[k], names[k]) == 0);
			free((void *)want[k]);
		}
	}
	for (k = 0; k < nq; k++)
		free(names[k]);
	return 0;
}
