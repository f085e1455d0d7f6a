/* Perf map reading. A long-lived JIT appends to its map for as long as it
 * runs (gigabytes for a Node server with --perf-basic-prof), and a later
 * line covering an address replaces the earlier ones. So the map is read
 * from its end towards its start through one buffer: the first line met
 * that covers an asked-for address is the one that names it, and that
 * address is then settled. Settled addresses are skipped with a "next
 * unsettled" forest (union-find with path halving), so a line covering
 * many addresses costs them once, not once per line. A name is copied out
 * of the buffer only when its line settles an address: what is kept is
 * one name per asked-for address at most, whatever the map holds. */
#include "symbolize/perfmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/search.h"
#include "util/strtab.h"
#include "util/xalloc.h"

size_t kp_perfmap_sanitize_name(char *dst, size_t dstsize, const char *name, size_t len)
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

/* Hex digit value + 1; 0 for anything else. */
static const unsigned char hex1[256] = {
	['0'] = 1,  ['1'] = 2,	['2'] = 3,  ['3'] = 4,	['4'] = 5,  ['5'] = 6,
	['6'] = 7,  ['7'] = 8,	['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12,
	['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12,
	['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* Parses a hex number with an optional 0x at *p (bounded by end): at
 * least one digit, at most 64 significant bits. */
static bool parse_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p, *first, *lim;
	uint64_t v = 0;
	bool zeros = false;
	unsigned d;

	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	while (s < end && *s == '0')
		s++, zeros = true;
	first = s;
	lim = end - s > 16 ? s + 16 : end;
	while (s < lim && (d = hex1[(unsigned char)*s]) != 0) {
		v = v << 4 | (d - 1);
		s++;
	}
	if ((s == first && !zeros) || (s < end && hex1[(unsigned char)*s]))
		return false; /* no digit, or more than 64 bits */
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

/* One read of a map: the map being filled, and which addresses are
 * settled. */
struct reader {
	struct kp_perfmap *pm;
	uint32_t *next; /* next[i] == i: addrs[i] unsettled; else a later index to look at */
	size_t left;	/* addresses not settled yet */
};

/* The first unsettled index at or after i (n when none). */
static size_t unsettled_from(struct reader *rd, size_t i)
{
	uint32_t *next = rd->next;

	while (next[i] != i) {
		next[i] = next[next[i]]; /* path halving */
		i = next[i];
	}
	return i;
}

/* The line [start, end) named name[0..len) is the latest one not yet
 * seen: it names every unsettled address it covers. */
static void cover(struct reader *rd, uint64_t start, uint64_t end, const char *name, size_t len)
{
	struct kp_perfmap *pm = rd->pm;
	size_t i = kp_first_at_or_above(pm->addrs, pm->n, start);
	uint32_t id = 0;

	if (i == pm->n || pm->addrs[i] >= end)
		return; /* most lines: no sampled address inside */
	i = unsettled_from(rd, i);
	while (i < pm->n && pm->addrs[i] < end) {
		if (!id) {
			char buf[KP_PERFMAP_NAME_MAX];
			size_t n = kp_perfmap_sanitize_name(buf, sizeof(buf), name, len);

			id = kp_strtab_intern(pm->names, buf, n);
		}
		pm->name_of[i] = id;
		rd->next[i] = (uint32_t)(i + 1);
		rd->left--;
		i = unsettled_from(rd, i + 1);
	}
}

/* One line, without its newline: an entry, a blank line, or malformed
 * (counted). */
static void take_line(struct reader *rd, const char *s, const char *end)
{
	const char *name_end;
	uint64_t start, size;

	while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
		s++;
	if (s == end)
		return; /* blank line */
	if (!parse_hex(&s, end, &start) || !skip_blanks(&s, end) || !parse_hex(&s, end, &size) ||
	    !skip_blanks(&s, end))
		goto bad;
	/* the name is the rest, without trailing blanks (as sanitized) */
	name_end = end;
	while (name_end > s &&
	       (name_end[-1] == ' ' || name_end[-1] == '\t' || name_end[-1] == '\r'))
		name_end--;
	if (name_end == s || start + size < start)
		goto bad;
	if (size == 0)
		return; /* well-formed but covers nothing */
	rd->pm->entries++;
	if (rd->left)
		cover(rd, start, start + size, s, (size_t)(end - s));
	return;
bad:
	rd->pm->bad_lines++;
}

/* Where the bytes come from: a file (by pread) or memory. */
struct source {
	int fd;
	const char *mem;
};

/* Reads len bytes at off into dst; 0 or a negative errno (-ENODATA when
 * the file ended before: it shrank since its size was taken). */
static int source_read(const struct source *src, char *dst, size_t len, uint64_t off)
{
	if (src->mem) {
		memcpy(dst, src->mem + off, len);
		return 0;
	}
	while (len) {
		ssize_t r = pread(src->fd, dst, len, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ENODATA;
		dst += r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/* Whether [from, to) of a file lies in a hole (sparse file): all NUL
 * bytes, known without reading them (reading a hole costs as much as
 * reading data: the kernel fills page after page with zeros). */
static bool in_hole(const struct source *src, uint64_t from, uint64_t to)
{
	off_t data;

	if (src->mem)
		return false;
	data = lseek(src->fd, (off_t)from, SEEK_DATA);
	if (data < 0)
		return errno == ENXIO; /* no data from here to the end */
	return (uint64_t)data >= to;
}

/* Reads the size bytes of src from the end backwards through one buffer
 * of bufsize bytes, handing each line to take_line, last line first.
 * The buffer's tail holds the part of a line whose end was seen but not
 * its start ("carry"); the next read goes just before it. A line that
 * does not fit (bufsize bytes or more) is skipped back to its start and
 * counted as malformed, never held whole; a hole of a sparse file that
 * would fill the buffer is such a line too, and is not read. */
static int stream_back(struct reader *rd, const struct source *src, uint64_t size, size_t bufsize)
{
	char *buf = kp_xmalloc(bufsize);
	char *const buf_end = buf + bufsize;
	uint64_t pos = size; /* what is before pos is still to be read */
	size_t carry = 0;
	bool skipping = false; /* dropping a long line back to its start */
	int err = 0;

	while (pos > 0) {
		size_t r = bufsize - carry;
		char *lo, *p, *nl;

		if (r > pos)
			r = (size_t)pos;
		lo = buf_end - carry - r;
		if ((skipping || lo == buf) && in_hole(src, pos - r, pos)) {
			/* NUL bytes: no newline, and the line does not fit */
			pos -= r;
			rd->pm->bytes += r;
			skipping = true;
			carry = 0;
			continue;
		}
		err = source_read(src, lo, r, pos - r);
		if (err < 0)
			break;
		pos -= r;
		rd->pm->bytes += r;
		p = buf_end; /* the end of the line whose start is looked for */
		if (skipping) {
			nl = memrchr(lo, '\n', r);
			if (!nl)
				continue; /* still inside the long line */
			skipping = false;
			rd->pm->bad_lines++;
			p = nl;
		}
		while ((nl = memrchr(lo, '\n', (size_t)(p - lo)))) {
			take_line(rd, nl + 1, p);
			p = nl;
		}
		carry = (size_t)(p - lo);
		if (pos == 0) {
			/* the first line of the file */
			if (carry == bufsize)
				rd->pm->bad_lines++;
			else
				take_line(rd, lo, p);
			carry = 0;
		} else if (carry == bufsize) {
			skipping = true;
			carry = 0;
		} else {
			memmove(buf_end - carry, lo, carry);
		}
	}
	if (!err && skipping)
		rd->pm->bad_lines++; /* the long line starts the file */
	free(buf);
	return err;
}

static int read_map(struct kp_perfmap *pm, const struct source *src, uint64_t size,
		    const uint64_t *addrs, size_t n, size_t read_size)
{
	struct reader rd = {.pm = pm};
	int err;

	kp_perfmap_fini(pm);
	pm->names = kp_strtab_new();
	pm->addrs = kp_xmalloc((n ? n : 1) * sizeof(*pm->addrs));
	if (n)
		memcpy(pm->addrs, addrs, n * sizeof(*addrs));
	qsort(pm->addrs, n, sizeof(*pm->addrs), kp_u64_cmp);
	for (size_t i = 0; i < n; i++)
		if (!pm->n || pm->addrs[pm->n - 1] != pm->addrs[i])
			pm->addrs[pm->n++] = pm->addrs[i];
	pm->name_of = kp_xcalloc(pm->n ? pm->n : 1, sizeof(*pm->name_of));
	rd.next = kp_xmalloc((pm->n + 1) * sizeof(*rd.next));
	for (size_t i = 0; i <= pm->n; i++)
		rd.next[i] = (uint32_t)i;
	rd.left = pm->n;
	err = stream_back(&rd, src, size, read_size ? read_size : KP_PERFMAP_READ_SIZE);
	free(rd.next);
	return err;
}

int kp_perfmap_read(struct kp_perfmap *pm, int fd, const uint64_t *addrs, size_t n,
		    size_t read_size)
{
	struct source src = {.fd = fd};
	struct stat st;

	if (fstat(fd, &st) < 0) {
		int err = -errno;

		read_map(pm, &src, 0, addrs, n, read_size);
		return err;
	}
	return read_map(pm, &src, st.st_size > 0 ? (uint64_t)st.st_size : 0, addrs, n, read_size);
}

void kp_perfmap_parse(struct kp_perfmap *pm, const char *buf, size_t len, const uint64_t *addrs,
		      size_t n, size_t read_size)
{
	struct source src = {.fd = -1, .mem = buf ? buf : ""};

	read_map(pm, &src, buf ? len : 0, addrs, n, read_size);
}

void kp_perfmap_fini(struct kp_perfmap *pm)
{
	free(pm->addrs);
	free(pm->name_of);
	kp_strtab_free(pm->names);
	memset(pm, 0, sizeof(*pm));
}

bool kp_perfmap_find(const struct kp_perfmap *pm, uint64_t addr, const char **name)
{
	size_t i = kp_first_at_or_above(pm->addrs, pm->n, addr);

	if (i == pm->n || pm->addrs[i] != addr)
		return false;
	*name = pm->name_of[i] ? kp_strtab_str(pm->names, pm->name_of[i]) : NULL;
	return true;
}
