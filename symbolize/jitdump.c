/* The jitdump parser (jitdump.h). The file is the JIT's and grows while
 * we read it, so every size is checked against the record it is in and
 * against caps, and a record is taken only once it is whole in the file:
 * a partial last record stays for a later read. Loads keep ranges,
 * names, lines and unwinding info; their code bytes are skipped. */
#include "symbolize/jitdump.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/perfmap.h"
#include "util/search.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define JD_MAGIC      0x4A695444u
#define JD_MAGIC_SWAP 0x4454694Au
#define JD_HEADER     40
#define JD_REC	      16
/* What a record's fixed fields take, its header included. */
#define JD_LOAD_FIXED  56
#define JD_MOVE_FIXED  64
#define JD_DEBUG_FIXED 32
#define JD_UNW_FIXED   40
#define JD_DEBUG_ENTRY 16 /* address, line, discriminator; then the file name */

enum { JD_LOAD = 0, JD_MOVE, JD_DEBUG, JD_CLOSE, JD_UNWIND };

/* Caps: a record other than a load (whose code is skipped, not read)
 * past 64 MiB, a code range past 1 GiB, unwinding info past 64 KiB (V8's
 * is under 100 bytes a function) are taken for damage. */
#define MAX_RECORD ((uint64_t)64 << 20)
#define MAX_CODE   ((uint64_t)1 << 30)
#define MAX_UNWIND (64u << 10)
#define MAX_NAME   (64u << 10)
/* V8 writes each debug entry's address 0x40 above its code (its
 * kElfHeaderSize, where perf inject's ELF file puts the code). */
#define V8_LINE_SKEW 0x40
#define V8_RESERVED  0xDEADBEEFu /* V8's header's reserved word */
/* The read buffer: records bigger than it (but a load) grow it. */
#define READ_BUF ((size_t)256 << 10)

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

void kp_jitdump_init(struct kp_jitdump *jd, struct kp_strtab *strings, kp_jitdump_keep_fn keep,
		     void *keep_arg)
{
	memset(jd, 0, sizeof(*jd));
	jd->keep = keep;
	jd->keep_arg = keep_arg;
	jd->strings = strings;
	jd->seed = 0x9e3779b9u;
	jd->fd = -1;
	kp_u64map_init(&jd->by_index);
}

static void code_release(struct kp_jitdump *jd, struct kp_jitdump_code *c)
{
	jd->bytes -= (uint64_t)c->nlines * sizeof(*c->lines) + c->unwind_len;
	free(c->lines);
	free(c->unwind);
	c->lines = NULL;
	c->unwind = NULL;
	c->nlines = c->unwind_len = c->hdr_len = 0;
}

void kp_jitdump_fini(struct kp_jitdump *jd)
{
	for (size_t i = 0; i < jd->ncodes; i++)
		code_release(jd, &jd->codes[i]);
	free(jd->codes);
	free(jd->pieces);
	free(jd->dbg);
	free(jd->unw);
	kp_u64map_fini(&jd->by_index);
	memset(jd, 0, sizeof(*jd));
}

static void set_error(struct kp_jitdump *jd, enum kp_jitdump_state st, const char *msg)
{
	jd->state = st;
	snprintf(jd->error, sizeof(jd->error), "%s", msg);
}

/* ---- the address space: pieces, the last load wins ---- */

/* The pieces are a treap (a search tree by start, balanced by random
 * priorities): inserting, cutting and finding cost O(log n) expected
 * whatever the order loads come in. */

static void unref(struct kp_jitdump *jd, uint32_t code)
{
	if (--jd->codes[code].refs == 0)
		code_release(jd, &jd->codes[code]);
}

#define NODE(jd, i) (&(jd)->pieces[i])

/* Splits tree t into starts below key (*l) and the rest (*r). */
static void split(struct kp_jitdump *jd, uint32_t t, uint64_t key, uint32_t *l, uint32_t *r)
{
	if (!t) {
		*l = *r = 0;
	} else if (NODE(jd, t)->start < key) {
		split(jd, NODE(jd, t)->right, key, &NODE(jd, t)->right, r);
		*l = t;
	} else {
		split(jd, NODE(jd, t)->left, key, l, &NODE(jd, t)->left);
		*r = t;
	}
}

/* Joins a and b, every start in a below every start in b. */
static uint32_t merge(struct kp_jitdump *jd, uint32_t a, uint32_t b)
{
	if (!a || !b)
		return a ? a : b;
	if (NODE(jd, a)->prio > NODE(jd, b)->prio) {
		NODE(jd, a)->right = merge(jd, NODE(jd, a)->right, b);
		return a;
	}
	NODE(jd, b)->left = merge(jd, a, NODE(jd, b)->left);
	return b;
}

static uint32_t node_new(struct kp_jitdump *jd)
{
	uint32_t i = jd->free_node;
	size_t old = jd->pieces_cap;

	if (i) {
		jd->free_node = NODE(jd, i)->left;
		return i;
	}
	i = (uint32_t)(jd->npieces + 1); /* every node from 1 is live: none free */
	kp_xgrow(&jd->pieces, &jd->pieces_cap, (size_t)i + 1, sizeof(*jd->pieces));
	jd->bytes += (jd->pieces_cap - old) * sizeof(*jd->pieces);
	return i;
}

static void piece_insert(struct kp_jitdump *jd, const struct kp_jitdump_piece *p)
{
	uint32_t i = node_new(jd), l, r;

	*NODE(jd, i) = *p;
	NODE(jd, i)->left = NODE(jd, i)->right = 0;
	/* xorshift: priorities the file cannot choose */
	jd->seed ^= jd->seed << 13;
	jd->seed ^= jd->seed >> 17;
	jd->seed ^= jd->seed << 5;
	NODE(jd, i)->prio = jd->seed;
	split(jd, jd->root, p->start, &l, &r);
	jd->root = merge(jd, merge(jd, l, i), r);
	jd->codes[p->code].refs++;
	jd->npieces++;
}

/* Takes the piece starting at start out of the tree; returns it. */
static struct kp_jitdump_piece piece_remove(struct kp_jitdump *jd, uint64_t start)
{
	uint32_t l, m, r;
	struct kp_jitdump_piece old;

	split(jd, jd->root, start, &l, &r);
	split(jd, r, start + 1, &m, &r);
	old = *NODE(jd, m);
	NODE(jd, m)->left = jd->free_node;
	jd->free_node = m;
	jd->root = merge(jd, l, r);
	jd->npieces--;
	return old;
}

const struct kp_jitdump_piece *kp_jitdump_next(const struct kp_jitdump *jd, uint64_t addr)
{
	uint32_t t = jd->root, best = 0;

	/* disjoint and sorted by start, so sorted by end too */
	while (t) {
		if (jd->pieces[t].end > addr) {
			best = t;
			t = jd->pieces[t].left;
		} else {
			t = jd->pieces[t].right;
		}
	}
	return best ? &jd->pieces[best] : NULL;
}

/* Removes [start, end) from the pieces (what is left of one it cuts stays). */
static void pieces_cut(struct kp_jitdump *jd, uint64_t start, uint64_t end)
{
	const struct kp_jitdump_piece *p;

	while ((p = kp_jitdump_next(jd, start)) && p->start < end) {
		struct kp_jitdump_piece old = piece_remove(jd, p->start);

		if (old.start < start) {
			struct kp_jitdump_piece left = old;

			left.end = start;
			piece_insert(jd, &left);
		}
		if (old.end > end) {
			struct kp_jitdump_piece right = old;

			right.start = end;
			piece_insert(jd, &right);
		}
		unref(jd, old.code);
		if (old.end > end)
			break;
	}
}

static void pieces_put(struct kp_jitdump *jd, uint64_t start, uint64_t end, uint32_t code)
{
	struct kp_jitdump_piece p = {.start = start, .end = end, .code = code};

	pieces_cut(jd, start, end);
	piece_insert(jd, &p);
}

const struct kp_jitdump_code *kp_jitdump_find(const struct kp_jitdump *jd, uint64_t addr)
{
	const struct kp_jitdump_piece *p = kp_jitdump_next(jd, addr);

	if (p && p->start <= addr)
		return &jd->codes[p->code];
	return NULL;
}

/* ---- records ---- */

/* Interns s[0..len), cut at KP_JITDUMP_NAME_MAX; a new string's bytes
 * count in the state (roughly: the table's own overhead is left out). */
static uint32_t intern(struct kp_jitdump *jd, const char *s, size_t len)
{
	uint32_t before = kp_strtab_count(jd->strings), id;

	if (len > KP_JITDUMP_NAME_MAX)
		len = KP_JITDUMP_NAME_MAX;
	id = kp_strtab_intern(jd->strings, s, len);
	if (kp_strtab_count(jd->strings) != before)
		jd->bytes += len + 16;
	return id;
}

static int line_cmp(const void *a, const void *b)
{
	const struct kp_jitdump_line *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* The pending debug entries, for code c, as its line table. */
static void take_lines(struct kp_jitdump *jd, struct kp_jitdump_code *c)
{
	uint64_t skew = 0, lo = UINT64_MAX;
	size_t n = 0;

	if (!jd->have_dbg)
		return;
	jd->have_dbg = false;
	if (jd->dbg_addr != c->start) {
		jd->st.unmatched++;
		return;
	}
	for (size_t i = 0; i < jd->ndbg; i++)
		lo = jd->dbg[i].addr < lo ? jd->dbg[i].addr : lo;
	/* V8's skew, unless its entries already start at the code */
	if (jd->v8 && jd->ndbg && lo >= c->start + V8_LINE_SKEW)
		skew = V8_LINE_SKEW;
	c->lines = jd->ndbg ? kp_xmalloc(jd->ndbg * sizeof(*c->lines)) : NULL;
	for (size_t i = 0; i < jd->ndbg; i++) {
		uint64_t a = jd->dbg[i].addr - skew;

		if (a < c->start || a - c->start >= c->size || jd->dbg[i].line == 0)
			continue;
		c->lines[n++] = (struct kp_jitdump_line){(uint32_t)(a - c->start), jd->dbg[i].line,
							 jd->dbg[i].file};
	}
	qsort(c->lines, n, sizeof(*c->lines), line_cmp);
	c->nlines = (uint32_t)n;
	jd->bytes += n * sizeof(*c->lines);
	if (!n) {
		free(c->lines);
		c->lines = NULL;
	}
}

/* A JIT_CODE_LOAD whose fixed fields and name are in p[0..avail). */
static void load_record(struct kp_jitdump *jd, const uint8_t *p, size_t avail, uint64_t size)
{
	uint64_t addr = rd64(p + 32), csize = rd64(p + 40), index = rd64(p + 48);
	size_t lim = avail < size ? avail : (size_t)size, nlen;
	const uint8_t *nul = memchr(p + JD_LOAD_FIXED, 0, lim - JD_LOAD_FIXED);
	struct kp_jitdump_code *c;
	bool taken;

	if (!nul || csize == 0 || csize > MAX_CODE || addr + csize < addr ||
	    (nlen = (size_t)(nul - (p + JD_LOAD_FIXED))) > MAX_NAME ||
	    csize > size - JD_LOAD_FIXED - nlen - 1) {
		jd->st.bad_records++;
		jd->have_dbg = false;
		jd->unw_len = 0;
		return;
	}
	taken = !jd->keep || jd->keep(jd->keep_arg, addr, addr + csize);
	if (!taken) {
		jd->st.ignored++;
		jd->have_dbg = false;
		jd->unw_len = 0;
		return;
	}
	{
		size_t old = jd->codes_cap;

		kp_xgrow(&jd->codes, &jd->codes_cap, jd->ncodes + 1, sizeof(*jd->codes));
		jd->bytes += (jd->codes_cap - old) * sizeof(*jd->codes);
	}
	c = &jd->codes[jd->ncodes];
	memset(c, 0, sizeof(*c));
	c->start = addr;
	c->size = csize;
	c->index = index;
	c->name_len = (uint32_t)(nlen < KP_JITDUMP_NAME_MAX ? nlen : KP_JITDUMP_NAME_MAX);
	if (jd->fd >= 0) /* read again when named */
		c->name_off = jd->off + JD_LOAD_FIXED;
	else
		c->name = intern(jd, (const char *)p + JD_LOAD_FIXED, nlen);
	take_lines(jd, c);
	if (jd->unw_len) {
		c->unwind = jd->unw;
		c->unwind_len = jd->unw_len;
		c->hdr_len = jd->unw_hdr_len;
		jd->bytes += c->unwind_len;
		jd->unw = NULL;
		jd->unw_len = 0;
	}
	kp_u64map_put(&jd->by_index, index, jd->ncodes);
	pieces_put(jd, addr, addr + csize, (uint32_t)jd->ncodes++);
	jd->st.loads++;
}

/* Drops the pieces of code v (its range may be partly another's now). */
static void pieces_drop_code(struct kp_jitdump *jd, uint32_t v)
{
	uint64_t end = jd->codes[v].start + jd->codes[v].size, at = jd->codes[v].start;
	const struct kp_jitdump_piece *p;

	while ((p = kp_jitdump_next(jd, at)) && p->start < end) {
		at = p->end;
		if (p->code == v) {
			piece_remove(jd, p->start);
			unref(jd, v);
		}
	}
}

/* A JIT_CODE_MOVE: the load of code_index now lies at new_code_addr. */
static void move_record(struct kp_jitdump *jd, const uint8_t *p)
{
	uint64_t to = rd64(p + 40), csize = rd64(p + 48), v;
	struct kp_jitdump_code *c;

	if (!kp_u64map_get(&jd->by_index, rd64(p + 56), &v) || jd->codes[v].refs == 0) {
		jd->st.unmatched++;
		return;
	}
	c = &jd->codes[v];
	if (csize != c->size || to + csize < to) {
		jd->st.bad_records++;
		return;
	}
	if (jd->keep && !jd->keep(jd->keep_arg, to, to + csize)) {
		jd->st.ignored++;
		return;
	}
	c->refs++; /* held while its old pieces go */
	pieces_drop_code(jd, (uint32_t)v);
	c->start = to;
	pieces_put(jd, to, to + csize, (uint32_t)v);
	unref(jd, (uint32_t)v);
}

/* Whether a debug entry's file name is text: valid UTF-8 without
 * control characters. */
static bool text_name(const uint8_t *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = kp_utf8_next((const char *)s + i, len - i, &cp);

		if (cp < 0x20 || cp == 0x7f || (cp == 0xfffd && n == 1))
			return false;
		i += n;
	}
	return true;
}

/* The debug entries of p[0..size) into jd->dbg; false when they do not
 * hold: an entry past the record, a file name that is not text, or
 * entries that end short of the record's end by more than its padding
 * (node 20's V8 writes some Sparkplug records whose names are heap
 * garbage with NUL bytes inside, which would read as more entries). */
static bool debug_entries(struct kp_jitdump *jd, const uint8_t *p, uint64_t size, uint64_t n)
{
	uint64_t at = JD_DEBUG_FIXED;
	uint32_t prev = 0;

	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *e = p + at, *nul, *name = e + JD_DEBUG_ENTRY;
		size_t len;
		uint32_t file;

		if (size - at < JD_DEBUG_ENTRY + 1 ||
		    !(nul = memchr(name, 0, (size_t)(size - at) - JD_DEBUG_ENTRY)))
			return false;
		len = (size_t)(nul - name);
		/* "\xff": V8's "the same file as the entry before" */
		if (len == 1 && name[0] == 0xff && i > 0)
			file = prev;
		else if (len <= MAX_NAME && text_name(name, len))
			file = intern(jd, (const char *)name, len);
		else
			return false;
		prev = file;
		kp_xgrow(&jd->dbg, &jd->dbg_cap, jd->ndbg + 1, sizeof(*jd->dbg));
		jd->dbg[jd->ndbg++] = (struct kp_jitdump_entry){rd64(e), rd32(e + 8), file};
		at += JD_DEBUG_ENTRY + len + 1;
	}
	return size - at < 8;
}

/* The debug entries of a record of V8's that debug_entries cannot read:
 * node 20's V8 writes the file name of an entry of a user script as
 * bytes of the heap (NUL bytes among them) of the name's length, so the
 * record's entries all have one size. When the record divides into n
 * such entries, each ending in a NUL, their addresses and lines are
 * taken, and a name that is not text stands for the script the load
 * names (KP_JITDUMP_LOAD_SCRIPT). */
static bool debug_entries_v8(struct kp_jitdump *jd, const uint8_t *p, uint64_t size, uint64_t n)
{
	for (uint64_t pad = 0; pad < 8 && n; pad++) {
		uint64_t body = size - JD_DEBUG_FIXED - pad, stride = body / n, len;
		bool ok = body % n == 0 && stride > JD_DEBUG_ENTRY;

		len = stride - JD_DEBUG_ENTRY - 1;
		for (uint64_t i = 0; ok && i < n; i++)
			ok = p[JD_DEBUG_FIXED + i * stride + JD_DEBUG_ENTRY + len] == 0;
		if (!ok || len > MAX_NAME)
			continue;
		jd->ndbg = 0;
		for (uint64_t i = 0; i < n; i++) {
			const uint8_t *e = p + JD_DEBUG_FIXED + i * stride,
				      *name = e + JD_DEBUG_ENTRY;
			uint32_t file = KP_JITDUMP_LOAD_SCRIPT;

			if (!memchr(name, 0, (size_t)len) && text_name(name, (size_t)len))
				file = intern(jd, (const char *)name, (size_t)len);
			kp_xgrow(&jd->dbg, &jd->dbg_cap, jd->ndbg + 1, sizeof(*jd->dbg));
			jd->dbg[jd->ndbg++] = (struct kp_jitdump_entry){rd64(e), rd32(e + 8), file};
		}
		return true;
	}
	return false;
}

/* A JIT_CODE_DEBUG_INFO, whole in p[0..size): its entries wait for the
 * next load; a record that does not hold is skipped whole. */
static void debug_record(struct kp_jitdump *jd, const uint8_t *p, uint64_t size)
{
	uint64_t n = rd64(p + 24);
	bool ok;

	jd->have_dbg = false;
	jd->ndbg = 0;
	ok = n <= (size - JD_DEBUG_FIXED) / (JD_DEBUG_ENTRY + 1);
	if (ok && !debug_entries(jd, p, size, n)) {
		jd->ndbg = 0;
		ok = jd->v8 && debug_entries_v8(jd, p, size, n);
	}
	if (!ok) {
		jd->st.bad_records++;
		jd->ndbg = 0;
		return;
	}
	jd->have_dbg = true;
	jd->dbg_addr = rd64(p + 16);
}

/* A JIT_CODE_UNWINDING_INFO, whole in p[0..size): kept for the next load
 * when it holds an .eh_frame (mapped_size 0: a header alone, nothing to
 * step by). */
static void unwind_record(struct kp_jitdump *jd, const uint8_t *p, uint64_t size)
{
	uint64_t len = rd64(p + 16), hdr = rd64(p + 24), mapped = rd64(p + 32);

	jd->unw_len = 0;
	if (len > size - JD_UNW_FIXED || hdr > len) {
		jd->st.bad_records++;
		return;
	}
	if (mapped == 0 || len == hdr || len > MAX_UNWIND)
		return;
	jd->unw = kp_xrealloc(jd->unw, (size_t)len);
	memcpy(jd->unw, p + JD_UNW_FIXED, (size_t)len);
	jd->unw_len = (uint32_t)len;
	jd->unw_hdr_len = (uint32_t)hdr;
}

/* The header at buf (whole). */
static size_t header(struct kp_jitdump *jd, const uint8_t *buf, size_t avail, uint64_t file_left)
{
	uint32_t magic = rd32(buf), version = rd32(buf + 4), size = rd32(buf + 8);
	char msg[96];

	if (magic == JD_MAGIC_SWAP) {
		set_error(jd, KP_JITDUMP_REFUSED, "written in the other byte order");
		return 0;
	}
	if (magic != JD_MAGIC) {
		set_error(jd, KP_JITDUMP_REFUSED, "not a jitdump file");
		return 0;
	}
	if (version != 1) {
		snprintf(msg, sizeof(msg), "version %u, kprof reads version 1", version);
		set_error(jd, KP_JITDUMP_REFUSED, msg);
		return 0;
	}
	if (size < JD_HEADER || size > 4096) {
		snprintf(msg, sizeof(msg), "a header of %u bytes", size);
		set_error(jd, KP_JITDUMP_REFUSED, msg);
		return 0;
	}
	if (size > file_left || size > avail)
		return 0; /* the rest of the header is not written yet */
	jd->v8 = rd32(buf + 16) == V8_RESERVED;
	jd->state = KP_JITDUMP_RECORDS;
	jd->off += size;
	return size;
}

/* One record at buf, of which avail bytes are in the buffer and
 * file_left in the file (both >= JD_REC). Returns its size when taken or
 * skipped, 0 when it must wait (or the file is broken: jd->state). */
static size_t record(struct kp_jitdump *jd, const uint8_t *buf, size_t avail, uint64_t file_left)
{
	uint32_t id = rd32(buf);
	uint64_t size = rd32(buf + 4);
	static const uint32_t fixed[] = {JD_LOAD_FIXED, JD_MOVE_FIXED, JD_DEBUG_FIXED, JD_REC,
					 JD_UNW_FIXED};
	char msg[96];

	if (size < JD_REC || (id != JD_LOAD && size > MAX_RECORD)) {
		snprintf(msg, sizeof(msg), "a record of %llu bytes at offset %llu",
			 (unsigned long long)size, (unsigned long long)jd->off);
		set_error(jd, KP_JITDUMP_BROKEN, msg);
		return 0;
	}
	if (size > file_left)
		return 0; /* still being written */
	if (id > JD_UNWIND) {
		jd->st.unknown_types++;
		return (size_t)size;
	}
	if (size < fixed[id]) {
		jd->st.bad_records++;
		return (size_t)size;
	}
	/* a load needs its fixed fields and name in the buffer, the others
	 * the whole record */
	if (size > avail && (id != JD_LOAD || avail <= JD_LOAD_FIXED ||
			     !memchr(buf + JD_LOAD_FIXED, 0, avail - JD_LOAD_FIXED))) {
		if (id == JD_LOAD && avail >= JD_LOAD_FIXED + MAX_NAME + 1) {
			jd->st.bad_records++; /* a name past the cap */
			return (size_t)size;
		}
		jd->need = id == JD_LOAD && size > JD_LOAD_FIXED + MAX_NAME + 1
				   ? JD_LOAD_FIXED + MAX_NAME + 1
				   : size;
		return 0;
	}
	switch (id) {
	case JD_LOAD:
		load_record(jd, buf, avail, size);
		break;
	case JD_MOVE:
		move_record(jd, buf);
		break;
	case JD_DEBUG:
		debug_record(jd, buf, size);
		break;
	case JD_CLOSE:
		jd->state = KP_JITDUMP_CLOSED;
		break;
	default:
		unwind_record(jd, buf, size);
		break;
	}
	return (size_t)size;
}

uint64_t kp_jitdump_parse(struct kp_jitdump *jd, const uint8_t *buf, size_t avail,
			  uint64_t file_left)
{
	uint64_t done = 0;

	jd->need = 0;
	if (avail > file_left)
		avail = (size_t)file_left;
	if (jd->state == KP_JITDUMP_HEADER) {
		if (avail < JD_HEADER)
			return 0;
		done = header(jd, buf, avail, file_left);
	}
	/* a load whose code lies past the buffer ends the loop: done > avail */
	while (jd->state == KP_JITDUMP_RECORDS && done < avail && avail - done >= JD_REC) {
		size_t n = record(jd, buf + done, avail - (size_t)done, file_left - done);

		if (!n)
			break;
		done += n;
		jd->off += n;
		if (jd->max_bytes && jd->bytes > jd->max_bytes) {
			char msg[96];

			snprintf(msg, sizeof(msg), "offset %llu: what it names took %llu MiB",
				 (unsigned long long)jd->off,
				 (unsigned long long)(jd->bytes >> 20));
			set_error(jd, KP_JITDUMP_FULL, msg);
		}
	}
	return done;
}

int kp_jitdump_read(struct kp_jitdump *jd, int fd, uint64_t budget)
{
	uint64_t from = jd->off;
	size_t cap = READ_BUF;
	uint8_t *buf;
	struct stat st;
	int err = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	/* polled every round: nothing new costs a fstat, not a buffer */
	jd->short_read = false;
	if (jd->state > KP_JITDUMP_RECORDS || jd->off >= (uint64_t)st.st_size)
		return 0;
	jd->fd = fd;
	buf = kp_xmalloc(cap);
	while (jd->state <= KP_JITDUMP_RECORDS && jd->off < (uint64_t)st.st_size &&
	       (!budget || jd->off - from < budget)) {
		uint64_t left = (uint64_t)st.st_size - jd->off;
		ssize_t n;

		/* a buffer's parsing takes a millisecond or so: a stop is seen soon */
		if (jd->stop && jd->stop()) {
			err = -EINTR;
			break;
		}
		n = pread(fd, buf, left < cap ? (size_t)left : cap, (off_t)jd->off);

		if (n <= 0) {
			err = n < 0 ? -errno : 0; /* shrunk: what is there is read */
			break;
		}
		if (kp_jitdump_parse(jd, buf, (size_t)n, left))
			continue;
		/* a record whole in the file but not in the buffer */
		if (jd->need <= cap || jd->need > MAX_RECORD || (size_t)n < cap)
			break;
		cap = (size_t)jd->need;
		buf = kp_xrealloc(buf, cap);
	}
	free(buf);
	jd->short_read = jd->state <= KP_JITDUMP_RECORDS && jd->off < (uint64_t)st.st_size &&
			 (err == -EINTR || (budget && jd->off - from >= budget));
	jd->size_seen = (uint64_t)st.st_size;
	return err;
}

bool kp_jitdump_line(const struct kp_jitdump *jd, const struct kp_jitdump_code *code, uint64_t addr,
		     const char **file, uint32_t *line)
{
	size_t lo = 0, hi = code->nlines;
	uint64_t off = addr - code->start;

	if (addr < code->start || off >= code->size)
		return false;
	/* the first entry past off, then the one before it */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (code->lines[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return false;
	*file = code->lines[lo - 1].file == KP_JITDUMP_LOAD_SCRIPT
			? NULL
			: kp_strtab_str(jd->strings, code->lines[lo - 1].file);
	*line = code->lines[lo - 1].line;
	return true;
}

/* Whether [p, end) reads "SCRIPT:LINE" or "SCRIPT:LINE:COLUMN"; *script
 * gets SCRIPT's length. */
static bool is_position(const char *p, const char *end, size_t *script)
{
	for (int field = 0; field < 2; field++) {
		const char *q = end;

		while (q > p && q[-1] >= '0' && q[-1] <= '9')
			q--;
		if (q == end || q - p < 2 || q[-1] != ':')
			return false;
		end = q - 1;
		*script = (size_t)(end - p);
		/* SCRIPT:LINE: what is left is the script */
		if (field == 0 && !(end > p && end[-1] >= '0' && end[-1] <= '9'))
			return true;
	}
	return end > p;
}

size_t kp_jitdump_name(const struct kp_jitdump *jd, const struct kp_jitdump_code *code,
		       uint64_t addr, char *buf, size_t size)
{
	const char *name, *file, *sp;
	size_t nlen, keep, flen, n;
	uint32_t line;
	char *full, read[KP_JITDUMP_NAME_MAX];

	if (code->name) {
		name = kp_strtab_str(jd->strings, code->name);
		nlen = kp_strtab_len(jd->strings, code->name);
	} else {
		/* the file is the JIT's: a name no longer there is none */
		ssize_t got = jd->fd >= 0
				      ? pread(jd->fd, read, code->name_len, (off_t)code->name_off)
				      : -1;

		if (got != (ssize_t)code->name_len)
			return 0;
		name = read;
		nlen = (size_t)got;
	}
	keep = nlen;

	if (!kp_jitdump_line(jd, code, addr, &file, &line))
		return kp_perfmap_sanitize_name(buf, size, name, nlen);
	sp = nlen ? memrchr(name, ' ', nlen) : NULL;
	if (sp && is_position(sp + 1, name + nlen, &flen)) {
		keep = (size_t)(sp - name);
		if (!file) /* the script the load names */
			file = kp_xstrndup(sp + 1, flen);
		else
			file = kp_xstrdup(file);
	} else if (!file) {
		return kp_perfmap_sanitize_name(buf, size, name, nlen);
	} else {
		file = kp_xstrdup(file);
	}
	full = kp_xasprintf("%.*s %s:%u", (int)keep, name, file, line);
	n = kp_perfmap_sanitize_name(buf, size, full, strlen(full));
	free(full);
	free((char *)file);
	return n;
}
