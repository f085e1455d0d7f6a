/* Perf map parsing. JITs append a line each time they (re)compile code, so
 * overlapping entries are normal and the later one is the live code: the
 * ranges are built by a sweep over all boundaries keeping, for each
 * elementary segment, the covering entry with the highest line number. */
#include "symbolize/perfmap.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/strtab.h"
#include "util/xalloc.h"

struct entry {
	uint64_t start, end;
	uint64_t seq; /* line order: higher wins */
	uint32_t name;
};

size_t kp_sym_sanitize_name(char *dst, size_t dstsize, const char *name, size_t len)
{
	size_t n = 0;

	while (len && (*name == ' ' || *name == '\t'))
		name++, len--;
	while (len && (name[len - 1] == ' ' || name[len - 1] == '\t' || name[len - 1] == '\r'))
		len--;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (n + 1 >= dstsize) {
			/* cut, keeping room for the ellipsis */
			n = dstsize - 4;
			/* do not leave half a UTF-8 sequence before "..." */
			while (n > 0 && ((unsigned char)dst[n] & 0xc0) == 0x80)
				n--;
			memcpy(dst + n, "...", 3);
			n += 3;
			break;
		}
		if (c == ';')
			c = ':';
		else if (c < 0x20 || c == 0x7f)
			c = '?';
		dst[n++] = (char)c;
	}
	dst[n] = '\0';
	return n;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parses a hex number with an optional 0x at *p (bounded by end). */
static bool parse_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int digits = 0, h;

	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	while (s < end && *s == '0')
		s++, digits++;
	while (s < end && (h = hexval(*s)) >= 0) {
		if (v >> 60)
			return false; /* more than 64 bits */
		v = v << 4 | (uint64_t)h;
		digits++;
		s++;
	}
	if (!digits)
		return false;
	*p = s;
	*out = v;
	return true;
}

static bool skip_blanks(const char **p, const char *end)
{
	const char *s = *p;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s == *p)
		return false;
	*p = s;
	return true;
}

/* Returns 1 for an entry, 0 for a line to ignore silently, -1 if malformed. */
static int parse_line(const char *s, const char *end, struct entry *e, struct kp_strtab *names)
{
	char buf[KP_PERFMAP_NAME_MAX];
	uint64_t start, size;
	size_t n;

	while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
		s++;
	if (s == end)
		return 0; /* blank line */
	if (!parse_hex(&s, end, &start) || !skip_blanks(&s, end) || !parse_hex(&s, end, &size) ||
	    !skip_blanks(&s, end))
		return -1;
	n = kp_sym_sanitize_name(buf, sizeof(buf), s, (size_t)(end - s));
	if (n == 0)
		return -1;
	if (start + size < start)
		return -1;
	if (size == 0)
		return 0; /* well-formed but covers nothing */
	e->start = start;
	e->end = start + size;
	e->name = kp_strtab_intern(names, buf, n);
	return 1;
}

static int entry_start_cmp(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int u64_cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* Binary max-heap of entry pointers ordered by seq. */
struct heap {
	const struct entry **v;
	size_t n;
};

static void heap_push(struct heap *h, const struct entry *e)
{
	size_t i = h->n++;

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (h->v[parent]->seq >= e->seq)
			break;
		h->v[i] = h->v[parent];
		i = parent;
	}
	h->v[i] = e;
}

static void heap_pop(struct heap *h)
{
	const struct entry *last = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1]->seq > h->v[c]->seq)
			c++;
		if (h->v[c]->seq <= last->seq)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
}

static void build_ranges(struct kp_perfmap *pm, struct entry *ents, size_t n)
{
	uint64_t *pts;
	size_t npts = 0, next = 0, cap = 0;
	struct heap h = {0};

	if (!n)
		return;
	qsort(ents, n, sizeof(*ents), entry_start_cmp);
	pts = kp_xmalloc(2 * n * sizeof(*pts));
	for (size_t i = 0; i < n; i++) {
		pts[npts++] = ents[i].start;
		pts[npts++] = ents[i].end;
	}
	qsort(pts, npts, sizeof(*pts), u64_cmp);
	h.v = kp_xmalloc(n * sizeof(*h.v));
	for (size_t k = 0; k + 1 < npts; k++) {
		uint64_t a = pts[k], b = pts[k + 1];
		const struct entry *top;
		struct kp_perfmap_range *last;

		if (a == b)
			continue;
		while (next < n && ents[next].start <= a)
			heap_push(&h, &ents[next++]);
		while (h.n && h.v[0]->end <= a)
			heap_pop(&h);
		if (!h.n)
			continue;
		top = h.v[0];
		last = pm->n ? &pm->ranges[pm->n - 1] : NULL;
		if (last && last->end == a && last->name == top->name) {
			last->end = b;
			continue;
		}
		kp_xgrow(&pm->ranges, &cap, pm->n + 1, sizeof(*pm->ranges));
		pm->ranges[pm->n++] = (struct kp_perfmap_range){a, b, top->name};
	}
	free(h.v);
	free(pts);
}

void kp_perfmap_parse(struct kp_perfmap *pm, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	struct entry *ents = NULL;
	size_t n = 0, cap = 0;
	uint64_t seq = 0;

	kp_perfmap_fini(pm);
	pm->names = kp_strtab_new();
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		struct entry e;
		int r = parse_line(p, eol, &e, pm->names);

		if (r < 0) {
			pm->bad_lines++;
		} else if (r > 0) {
			e.seq = seq++;
			kp_xgrow(&ents, &cap, n + 1, sizeof(*ents));
			ents[n++] = e;
		}
		p = nl ? nl + 1 : end;
	}
	pm->entries = n;
	build_ranges(pm, ents, n);
	free(ents);
}

void kp_perfmap_fini(struct kp_perfmap *pm)
{
	free(pm->ranges);
	kp_strtab_free(pm->names);
	memset(pm, 0, sizeof(*pm));
}

const char *kp_perfmap_lookup(const struct kp_perfmap *pm, uint64_t addr)
{
	size_t lo = 0, hi = pm->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct kp_perfmap_range *r = &pm->ranges[mid];

		if (addr < r->start)
			hi = mid;
		else if (addr >= r->end)
			lo = mid + 1;
		else
			return kp_strtab_str(pm->names, r->name);
	}
	return NULL;
}
