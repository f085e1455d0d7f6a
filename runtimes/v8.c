/* JavaScript frames named from a live V8 heap (see v8.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/v8.h"
#include "util/u64map.h"
#include "util/xalloc.h"

#define MAX_FRAMES    128	/* frames of a sample looked at */
#define MAX_READS     768	/* reads of the process's memory a sample */
#define MAX_CACHE     8192	/* functions cached; then the cache starts over */
#define NAME_CHARS    160	/* a function's name is cut there */
#define SCRIPT_CHARS  400	/* a script's name */
#define STRING_DEPTH  8		/* cons and thin strings followed */
#define MAX_LENGTH    (1 << 28) /* V8's longest string, and array */
#define SOURCE_SCAN   (1 << 20) /* source read to count lines, at most */
#define MAX_BYTES     (2 << 20) /* bytes read a sample, at most */
#define CHUNK	      65536
#define MAX_LOCALS    100000 /* context locals a ScopeInfo may claim */
#define INLINED_NAMES 75     /* V8's kScopeInfoMaxInlinedLocalNamesSize */

#define MAX_INLINE    8		 /* functions inlined into one another a frame */
#define MAX_CODES     512	 /* optimized codes cached; then they start over */
#define MAX_POSITIONS 8192	 /* source positions of one code */
#define CODE_BYTES    (16 << 20) /* held for codes and line ends; then they start over */
#define KIND_MAGLEV   12	 /* V8 11's CodeKind */
#define KIND_TURBOFAN 13

/* A read made for one sample checks another only when it was made this
 * long after the other was taken: the sample's time and the reader's
 * are two readings of CLOCK_MONOTONIC (the kernel's NMI-safe one and
 * clock_gettime), which may differ by far less. */
#define CHECK_MARGIN_NS 1000000

/* Optimized code (V8 11's Code: the layout past the metadata's fields is
 * V8 11's; every value is checked): its instructions, its source position
 * table decoded, and what each of its positions names, made when first
 * asked (outermost first: the function, then what it inlined). */
struct code {
	uint64_t addr, istart, deopt;
	uint32_t isize, n;
	uint8_t kind;
	uint32_t *off;	 /* code offset of each position, ascending */
	uint64_t *pos;	 /* V8's SourcePosition: script offset, inlining id */
	char **names;	 /* n * (MAX_INLINE + 1), made when first asked */
	uint8_t *nnames; /* how many of each; 0: not made yet */
};

/* A function named: by its address while its map and shared info stay. */
struct entry {
	uint64_t fn, map, sfi, context, bytecode, script;
	uint64_t checked;     /* when last found unchanged: a read made after it */
	uint64_t code;	      /* the function's code, as then read */
	uint64_t sfi_checked; /* when its shared info was last found with its name */
	uint64_t nos;	      /* the shared info's name or scope info, as read */
	char *base;	      /* "name script:line" */
	char *named[3];	      /* "JS:~base", "JS:^base", "JS:*base", made when asked */
	bool has_script;
	bool not_function; /* the slot's object is none: kept by its map */
};

struct kp_v8 {
	struct kp_v8meta m;
	struct kp_v8_mem mem;
	struct kp_u64map index;	      /* function address -> entry index + 1 */
	struct kp_u64map by_sfi;      /* shared info address -> entry index + 1 */
	struct kp_u64map fn_maps;     /* maps of functions named so far */
	struct kp_u64map block_index; /* block context -> blocks index + 1 */
	struct block {
		uint64_t outer;	  /* the function's context it was found inside */
		uint64_t checked; /* when: a read made after it */
	} * blocks;
	size_t nblocks, blocks_cap;
	struct entry *e;
	size_t n, cap;
	unsigned budget;     /* reads left this sample */
	size_t bytes_budget; /* bytes left this sample */
	struct kp_v8_stats st;
	unsigned char chunk[CHUNK];  /* source read to count lines */
	struct kp_u64map code_index; /* optimized code address -> codes index + 1 */
	struct code *codes;
	size_t ncodes, codes_cap;
	size_t code_bytes;	     /* what the codes, their names and line ends hold */
	struct kp_u64map line_index; /* script address -> lines index + 1 */
	struct lines {
		uint64_t script, ends; /* the script and its line ends array */
		uint32_t n;
		int32_t *end; /* each line's end */
	} * lines;
	size_t nlines, lines_cap;
	/* the last call's inlined functions of each frame, outermost first */
	const char *const *inl[MAX_FRAMES];
	uint8_t ninl[MAX_FRAMES];
};

struct kp_v8 *kp_v8_new(const struct kp_v8meta *m, const struct kp_v8_mem *mem)
{
	struct kp_v8 *v = kp_xcalloc(1, sizeof(*v));

	v->m = *m;
	v->mem = *mem;
	kp_u64map_init(&v->index);
	kp_u64map_init(&v->by_sfi);
	kp_u64map_init(&v->fn_maps);
	kp_u64map_init(&v->block_index);
	kp_u64map_init(&v->code_index);
	kp_u64map_init(&v->line_index);
	return v;
}

static void cache_clear(struct kp_v8 *v)
{
	for (size_t i = 0; i < v->n; i++) {
		free(v->e[i].base);
		for (int k = 0; k < 3; k++)
			free(v->e[i].named[k]);
	}
	v->n = 0;
	kp_u64map_fini(&v->index);
	kp_u64map_init(&v->index);
	kp_u64map_fini(&v->by_sfi);
	kp_u64map_init(&v->by_sfi);
	kp_u64map_fini(&v->fn_maps);
	kp_u64map_init(&v->fn_maps);
	v->nblocks = 0;
	kp_u64map_fini(&v->block_index);
	kp_u64map_init(&v->block_index);
}

static void codes_clear(struct kp_v8 *v)
{
	for (size_t i = 0; i < v->ncodes; i++) {
		struct code *cd = &v->codes[i];

		for (size_t k = 0; cd->names && k < (size_t)cd->n * (MAX_INLINE + 1); k++)
			free(cd->names[k]);
		free(cd->names);
		free(cd->nnames);
		free(cd->off);
		free(cd->pos);
	}
	v->ncodes = 0;
	v->code_bytes = 0;
	kp_u64map_fini(&v->code_index);
	kp_u64map_init(&v->code_index);
	for (size_t i = 0; i < v->nlines; i++)
		free(v->lines[i].end);
	v->nlines = 0;
	kp_u64map_fini(&v->line_index);
	kp_u64map_init(&v->line_index);
}

void kp_v8_free(struct kp_v8 *v)
{
	if (!v)
		return;
	codes_clear(v);
	kp_u64map_fini(&v->code_index);
	kp_u64map_fini(&v->line_index);
	free(v->codes);
	free(v->lines);
	cache_clear(v);
	kp_u64map_fini(&v->index);
	kp_u64map_fini(&v->by_sfi);
	kp_u64map_fini(&v->fn_maps);
	kp_u64map_fini(&v->block_index);
	free(v->blocks);
	free(v->e);
	free(v);
}

void kp_v8_stats(const struct kp_v8 *v, struct kp_v8_stats *st)
{
	*st = v->st;
	st->cached = v->n;
}

/* Whether what was found at time checked (a read made after it) holds
 * for sample st: the read was made after st was taken, as a read made
 * for st itself would be. */
static bool checked_for(const struct kp_v8_stack *st, uint64_t checked)
{
	return st->time && checked > CHECK_MARGIN_NS && st->time <= checked - CHECK_MARGIN_NS;
}

/* The word of a function's first words that holds its code; 0: none. */
static size_t code_word(const struct kp_v8 *v)
{
	return v->m.fn_proto > 8 && v->m.fn_proto <= 64 ? (size_t)(v->m.fn_proto - 8) / 8 : 0;
}

/* ---- bounded reads ---- */

static bool rd(struct kp_v8 *v, uint64_t addr, void *buf, size_t len)
{
	if (!v->budget || len > v->bytes_budget)
		return false;
	v->budget--;
	v->bytes_budget -= len;
	v->st.reads++;
	if (addr < 4096 || addr + len < addr || !v->mem.read(v->mem.arg, addr, buf, len)) {
		v->st.read_fails++;
		return false;
	}
	return true;
}

static bool is_obj(const struct kp_v8 *v, uint64_t w)
{
	return (w & (uint64_t)v->m.heap_tag_mask) == (uint64_t)v->m.heap_tag && w > 4096;
}

static bool is_smi(const struct kp_v8 *v, uint64_t w)
{
	return (w & (uint64_t)v->m.smi_tag_mask) == 0;
}

static int64_t smi(uint64_t w)
{
	return (int64_t)w >> 32; /* 31-bit shift over a 1-bit tag */
}

/* The tagged word at field off of object obj. */
static bool field(struct kp_v8 *v, uint64_t obj, int64_t off, uint64_t *out)
{
	return rd(v, obj - 1 + (uint64_t)off, out, 8);
}

/* The instance type of heap object obj, through its map. */
static bool type_of(struct kp_v8 *v, uint64_t obj, unsigned *type)
{
	uint64_t map;
	uint16_t t;

	if (!is_obj(v, obj) || !field(v, obj, v->m.obj_map, &map) || !is_obj(v, map) ||
	    !rd(v, map - 1 + (uint64_t)v->m.map_instance_type, &t, sizeof(t)))
		return false;
	*type = t;
	return true;
}

/* ---- strings ---- */

struct sbuf {
	char *p;
	size_t len, cap; /* cap: bytes for text, one more for the NUL */
	size_t chars;	 /* characters still wanted */
};

static void put_cp(struct sbuf *b, uint32_t c)
{
	char u[4];
	size_t n;

	if (c < 0x20 || c == 0x7f)
		c = '?'; /* a control character would cut or garble a frame */
	if (c < 0x80) {
		u[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xc0 | c >> 6);
		u[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		u[0] = (char)(0xe0 | c >> 12);
		u[1] = (char)(0x80 | (c >> 6 & 0x3f));
		u[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | c >> 18);
		u[1] = (char)(0x80 | (c >> 12 & 0x3f));
		u[2] = (char)(0x80 | (c >> 6 & 0x3f));
		u[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	if (!b->chars || b->len + n > b->cap) {
		b->chars = 0;
		return;
	}
	memcpy(b->p + b->len, u, n);
	b->len += n;
	b->chars--;
}

/* Characters [from, from + count) of a sequential string's payload at
 * addr (two_byte: UTF-16) appended to b. */
static bool seq_chars(struct kp_v8 *v, uint64_t addr, bool two_byte, uint64_t from, uint64_t count,
		      struct sbuf *b)
{
	unsigned char raw[2 * NAME_CHARS + 2 * SCRIPT_CHARS];
	size_t want = count < b->chars ? (size_t)count : b->chars;
	size_t unit = two_byte ? 2 : 1;

	if (want > sizeof(raw) / unit)
		want = sizeof(raw) / unit;
	if (!want)
		return true;
	if (!rd(v, addr + from * unit, raw, want * unit))
		return false;
	for (size_t i = 0; i < want; i++) {
		uint32_t c = two_byte ? (uint32_t)(raw[2 * i] | raw[2 * i + 1] << 8) : raw[i];

		if (two_byte && c >= 0xd800 && c < 0xdc00 && i + 1 < want) {
			uint32_t lo = (uint32_t)(raw[2 * i + 2] | raw[2 * i + 3] << 8);

			if (lo >= 0xdc00 && lo < 0xe000) {
				c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
				i++;
			}
		}
		if (c >= 0xd800 && c < 0xe000)
			c = 0xfffd;
		put_cp(b, c);
	}
	return true;
}

/* Characters [from, from + count) of string obj appended to b; NULL, or
 * why it cannot be read. */
static const char *string_part(struct kp_v8 *v, uint64_t obj, uint64_t from, uint64_t count,
			       struct sbuf *b, int depth)
{
	const struct kp_v8meta *m = &v->m;
	unsigned type, repr;
	int32_t len;

	if (depth > STRING_DEPTH)
		return "string nested too deep";
	if (!type_of(v, obj, &type) || !rd(v, obj - 1 + (uint64_t)m->string_length, &len, 4))
		return "string not readable";
	if ((int64_t)type >= m->first_nonstring_type || (type & (unsigned)m->not_string_mask))
		return "name is not a string";
	if (len < 0 || len > MAX_LENGTH || from > (uint64_t)len)
		return "string length out of range";
	if (count > (uint64_t)len - from)
		count = (uint64_t)len - from;
	repr = type & (unsigned)m->repr_mask;
	if (repr == (unsigned)m->seq_tag) {
		bool one = (type & (unsigned)m->encoding_mask) == (unsigned)m->one_byte_tag;

		return seq_chars(v, obj - 1 + (uint64_t)(one ? m->seq_one_chars : m->seq_two_chars),
				 !one, from, count, b)
			       ? NULL
			       : "string not readable";
	}
	if (repr == (unsigned)m->thin_tag) {
		uint64_t actual;

		if (!field(v, obj, m->thin_actual, &actual))
			return "string not readable";
		return string_part(v, actual, from, count, b, depth + 1);
	}
	if (repr == (unsigned)m->sliced_tag) {
		uint64_t parent, off;

		if (!field(v, obj, m->sliced_parent, &parent) ||
		    !field(v, obj, m->sliced_offset, &off) || !is_smi(v, off) || smi(off) < 0)
			return "string not readable";
		return string_part(v, parent, (uint64_t)smi(off) + from, count, b, depth + 1);
	}
	if (repr == (unsigned)m->cons_tag) {
		uint64_t first, second;
		int32_t flen;
		const char *why;

		if (!field(v, obj, m->cons_first, &first) ||
		    !field(v, obj, m->cons_second, &second) ||
		    !rd(v, first - 1 + (uint64_t)m->string_length, &flen, 4) || flen < 0 ||
		    flen > len)
			return "string not readable";
		if (from < (uint64_t)flen) {
			uint64_t c1 = count < (uint64_t)flen - from ? count : (uint64_t)flen - from;

			if ((why = string_part(v, first, from, c1, b, depth + 1)))
				return why;
			from = (uint64_t)flen;
			count -= c1;
		}
		if (count && b->chars)
			return string_part(v, second, from - (uint64_t)flen, count, b, depth + 1);
		return NULL;
	}
	return "external string"; /* its bytes are the embedder's, not the heap's */
}

/* String obj as UTF-8 into buf[0..size), at most chars characters. */
static const char *string_read(struct kp_v8 *v, uint64_t obj, char *buf, size_t size, size_t chars)
{
	struct sbuf b = {buf, 0, size - 1, chars};
	const char *why = string_part(v, obj, 0, MAX_LENGTH, &b, 0);

	buf[b.len] = '\0';
	return why;
}

/* Whether heap object obj is a string (of any representation). */
static bool is_string(struct kp_v8 *v, uint64_t obj)
{
	unsigned t;

	return type_of(v, obj, &t) && (int64_t)t < v->m.first_nonstring_type &&
	       !(t & (unsigned)v->m.not_string_mask);
}

/* ---- functions ---- */

enum { SCOPE_EVAL = 1, SCOPE_FUNCTION = 2, SCOPE_MODULE = 3, SCOPE_SCRIPT = 4 };

/* A function's name and start position from its ScopeInfo (V8 10-12's
 * layout: flags, parameter count, context local count, the locals' names
 * and infos, then the optional function variable (name, slot), inferred
 * name and position info the flags announce). Each slot must have the
 * kind the layout says, else the layout is not this one. */
static const char *scope_decode(struct kp_v8 *v, uint64_t si, char *name, size_t size, int64_t *pos)
{
	const struct kp_v8meta *m = &v->m;
	uint64_t hdr[16], s[5], flags;
	int64_t ncl, idx, type, k = 0;
	uint64_t fname = 0, inferred = 0;

	*pos = -1;
	name[0] = '\0';
	if (!rd(v, si - 1 + 8, hdr, (size_t)m->scope_first_vars * 8))
		return "scope info not readable";
	if (!is_smi(v, hdr[0]) || !is_smi(v, hdr[m->scope_ncontextlocals]))
		return "scope info not as expected";
	flags = (uint64_t)smi(hdr[0]);
	ncl = smi(hdr[m->scope_ncontextlocals]);
	if (ncl < 0 || ncl > MAX_LOCALS)
		return "scope info not as expected";
	type = (int64_t)(flags & 0xf);
	if (type == SCOPE_MODULE)
		return NULL; /* a module's top level: no name, its variables first */
	idx = m->scope_first_vars + (ncl < INLINED_NAMES ? ncl : 1) + ncl;
	if (flags >> 10 & 1)
		idx++; /* the saved class variable */
	if (!rd(v, si - 1 + 8 + (uint64_t)idx * 8, s, sizeof(s)))
		return "scope info not readable";
	if (flags >> 12 & 3) {
		if (!is_smi(v, s[1]) || (!is_smi(v, s[0]) && !is_string(v, s[0])))
			return "scope info not as expected";
		fname = is_smi(v, s[0]) ? 0 : s[0];
		k = 2;
	}
	if (flags >> 14 & 1) {
		if (is_smi(v, s[k]))
			return "scope info not as expected";
		inferred = is_string(v, s[k]) ? s[k] : 0;
		k++;
	}
	if (type == SCOPE_FUNCTION || type == SCOPE_SCRIPT || type == SCOPE_EVAL) {
		if (!is_smi(v, s[k]) || !is_smi(v, s[k + 1]) || smi(s[k]) < 0 ||
		    smi(s[k]) > smi(s[k + 1]))
			return "scope info not as expected";
		*pos = smi(s[k]);
	}
	if (fname && string_read(v, fname, name, size, NAME_CHARS))
		return "name not readable";
	if (!name[0] && inferred && string_read(v, inferred, name, size, NAME_CHARS))
		return "name not readable";
	return NULL;
}

/* The line (from 1) of source position pos of script: from its line ends
 * when V8 computed them, else counted in its source; 0 when neither can
 * be read. */
/* The line ends of script, whose line ends array is ends of len lines,
 * read whole once (up to 64 Ki lines) and kept while the script keeps
 * that array; NULL when not kept. */
static const struct lines *lines_of(struct kp_v8 *v, uint64_t script, uint64_t ends, int64_t len)
{
	uint64_t i;
	struct lines l = {script, ends, (uint32_t)len, NULL};
	uint64_t *w;

	if (kp_u64map_get(&v->line_index, script, &i) && v->lines[i - 1].ends == ends)
		return &v->lines[i - 1];
	if (len > 65536 || v->nlines >= 32)
		return NULL;
	v->code_bytes += (size_t)len * sizeof(*l.end);
	w = kp_xmalloc((size_t)len * 8);
	if (!rd(v, ends - 1 + (uint64_t)v->m.array_data, w, (size_t)len * 8)) {
		free(w);
		return NULL;
	}
	l.end = kp_xmalloc((size_t)len * sizeof(*l.end));
	for (int64_t k = 0; k < len; k++) {
		if (!is_smi(v, w[k]) || (k && smi(w[k]) < l.end[k - 1])) {
			free(w);
			free(l.end);
			return NULL;
		}
		l.end[k] = (int32_t)smi(w[k]);
	}
	free(w);
	if (kp_u64map_get(&v->line_index, script, &i)) {
		free(v->lines[i - 1].end);
		v->lines[i - 1] = l;
		return &v->lines[i - 1];
	}
	if (v->nlines == v->lines_cap) {
		v->lines_cap = v->lines_cap ? 2 * v->lines_cap : 8;
		v->lines = kp_xrealloc(v->lines, v->lines_cap * sizeof(*v->lines));
	}
	v->lines[v->nlines] = l;
	kp_u64map_put(&v->line_index, script, ++v->nlines);
	return &v->lines[v->nlines - 1];
}

static uint32_t script_line(struct kp_v8 *v, uint64_t script, int64_t pos)
{
	const struct kp_v8meta *m = &v->m;
	uint64_t ends, len, src;
	unsigned type;
	const struct lines *l;

	if (pos < 0)
		return 0;
	if (field(v, script, m->script_line_ends, &ends) && is_obj(v, ends) &&
	    (l = kp_u64map_get(&v->line_index, script, &len) && v->lines[len - 1].ends == ends
			 ? &v->lines[len - 1]
			 : NULL)) {
		uint32_t lo = 0, hi = l->n;

		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (l->end[mid] < pos)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo < l->n ? lo + 1 : 0;
	}
	if (field(v, script, m->script_line_ends, &ends) && type_of(v, ends, &type) &&
	    type == (unsigned)m->type_fixed_array && field(v, ends, m->array_length, &len) &&
	    is_smi(v, len) && smi(len) > 0 && smi(len) <= MAX_LENGTH) {
		/* the first line whose end is at or after pos */
		int64_t lo = 0, hi = smi(len);

		if (lines_of(v, script, ends, smi(len)))
			return script_line(v, script, pos);

		while (lo < hi) {
			int64_t mid = lo + (hi - lo) / 2;
			uint64_t w;

			if (!field(v, ends, m->array_data + mid * 8, &w) || !is_smi(v, w))
				return 0;
			if (smi(w) < pos)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo < smi(len) ? (uint32_t)lo + 1 : 0;
	}
	/* no line ends yet: count the source's newlines before pos */
	if (!m->script_source || !field(v, script, m->script_source, &src) ||
	    !type_of(v, src, &type) || (int64_t)type >= m->first_nonstring_type ||
	    (type & (unsigned)m->repr_mask) != (unsigned)m->seq_tag || pos > SOURCE_SCAN)
		return 0;
	{
		bool one = (type & (unsigned)m->encoding_mask) == (unsigned)m->one_byte_tag;
		uint64_t at = src - 1 + (uint64_t)(one ? m->seq_one_chars : m->seq_two_chars);
		size_t unit = one ? 1 : 2, done = 0, want = (size_t)pos * unit;
		int32_t slen;
		uint32_t line = 1;
		unsigned char *chunk = v->chunk;

		if (!rd(v, src - 1 + (uint64_t)m->string_length, &slen, 4) || slen < pos)
			return 0;
		while (done < want) {
			size_t n = want - done < CHUNK ? want - done : CHUNK;

			if (!rd(v, at + done, chunk, n))
				return 0;
			for (size_t i = 0; i + unit <= n; i += unit)
				line += chunk[i] == '\n' && (one || chunk[i + 1] == 0);
			done += n;
		}
		return line;
	}
}

/* The bytecode of shared info sfi (for telling interpreted and Sparkplug
 * frames from optimized ones), 0 when it has none. */
static uint64_t bytecode_of(struct kp_v8 *v, uint64_t sfi)
{
	const struct kp_v8meta *m = &v->m;
	uint64_t data;
	unsigned type;

	if (!m->sfi_function_data || !field(v, sfi, m->sfi_function_data, &data) ||
	    !type_of(v, data, &type))
		return 0;
	if (type == (unsigned)m->type_bytecode_array)
		return data;
	if (m->type_code && type == (unsigned)m->type_code && m->code_bytecode &&
	    field(v, data, m->code_bytecode, &data) && type_of(v, data, &type) &&
	    type == (unsigned)m->type_bytecode_array)
		return data;
	return 0;
}

/* Shared info sfi (whose name word nos was read): its name into
 * name[4 * NAME_CHARS + 1], its script's name into script[4 *
 * SCRIPT_CHARS + 1] ("" without a script), *scr the script (0: none),
 * *line the line of the function's start (0: unknown). NULL, or why not. */
static const char *sfi_describe(struct kp_v8 *v, uint64_t sfi, uint64_t nos, char *name,
				char *script, uint64_t *scr, uint32_t *line)
{
	const struct kp_v8meta *m = &v->m;
	size_t nsize = 4 * NAME_CHARS + 1, ssize = 4 * SCRIPT_CHARS + 1;
	uint64_t sname;
	unsigned type;
	int64_t pos = -1;
	const char *why = NULL;

	name[0] = script[0] = '\0';
	*scr = 0;
	*line = 0;
	if (!is_smi(v, nos)) {
		if (!type_of(v, nos, &type))
			return "name not readable";
		if (type == (unsigned)m->type_scope_info)
			why = scope_decode(v, nos, name, nsize, &pos);
		else if ((int64_t)type < m->first_nonstring_type)
			why = string_read(v, nos, name, nsize, NAME_CHARS);
		else
			why = "name of an unexpected type";
		if (why)
			return why;
	}
	if (field(v, sfi, m->sfi_script, scr) && type_of(v, *scr, &type) &&
	    type == (unsigned)m->type_script) {
		if (field(v, *scr, m->script_name, &sname) && is_string(v, sname) &&
		    string_read(v, sname, script, ssize, SCRIPT_CHARS))
			return "script name not readable";
		*line = script_line(v, *scr, pos);
	} else {
		*scr = 0;
	}
	return NULL;
}

/* A frame's function slot that holds no function: the frame is not
 * JavaScript's after all (a builtin's frame kept in JIT memory, a
 * generator resumed), and keeps the name its code has. */
static const char not_readable[] = "function not readable", not_function[] = "not a function";

/* Reads function fn into e (fn, map, sfi, bytecode, base); NULL, or why
 * it could not be named. */
static const char *function_read(struct kp_v8 *v, uint64_t fn, struct entry *e)
{
	const struct kp_v8meta *m = &v->m;
	char name[4 * NAME_CHARS + 1], script[4 * SCRIPT_CHARS + 1] = "";
	uint64_t nos, scr;
	unsigned type;
	uint32_t line = 0;
	const char *why;

	memset(e, 0, sizeof(*e));
	e->fn = fn;
	name[0] = '\0';
	if (!is_obj(v, fn) || !field(v, fn, m->obj_map, &e->map) || !type_of(v, fn, &type))
		return not_readable;
	/* JSFunction and its subtypes (class constructors and the like) */
	if ((int64_t)type < m->type_js_function || (int64_t)type >= m->type_js_function + 32)
		return not_function;
	if (!field(v, fn, m->fn_context, &e->context) || !is_obj(v, e->context))
		return "function not readable";
	if (!field(v, fn, m->fn_shared, &e->sfi) || !type_of(v, e->sfi, &type) ||
	    type != (unsigned)m->type_sfi)
		return "no shared function info";
	if (!field(v, e->sfi, m->sfi_name_or_scope, &nos))
		return "shared function info not readable";
	e->nos = nos;
	if ((why = sfi_describe(v, e->sfi, nos, name, script, &scr, &line)))
		return why;
	e->has_script = scr != 0;
	e->script = scr;
	e->bytecode = bytecode_of(v, e->sfi);
	{
		size_t len = strlen(name) + strlen(script) + 16;

		e->base = kp_xmalloc(len);
		if (script[0] && line)
			snprintf(e->base, len, "%s %s:%u", name, script, line);
		else if (script[0])
			snprintf(e->base, len, "%s %s", name, script);
		else
			snprintf(e->base, len, "%s", name);
	}
	return NULL;
}

/* ---- optimized code: the functions it inlined, the sampled line ---- */

static uint32_t u32_at(const unsigned char *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* A signed VLQ of V8's source position tables (zig-zag, 7 bits a byte)
 * at b[*i..n); false past the end or too long. */
static bool vlq(const unsigned char *b, size_t n, size_t *i, int64_t *out)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (*i >= n)
			return false;
		v |= (uint64_t)(b[*i] & 0x7f) << shift;
		if (!(b[(*i)++] & 0x80)) {
			*out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
			return true;
		}
	}
	return false;
}

/* Reads optimized code cd->addr: NULL, or why it is not read. */
static const char *code_read(struct kp_v8 *v, struct code *cd)
{
	const struct kp_v8meta *m = &v->m;
	uint64_t w[8], spt, len;
	unsigned type;
	size_t i = 0;
	int64_t off = 0, pos = 0;
	unsigned char *b;

	if (!type_of(v, cd->addr, &type) || type != (unsigned)m->type_code ||
	    !rd(v, cd->addr - 1, w, sizeof(w)))
		return "not code";
	cd->deopt = w[m->code_deopt / 8];
	spt = w[m->code_positions / 8];
	cd->istart = w[5];		 /* instruction_start */
	cd->kind = (uint8_t)(w[6] & 15); /* flags: the kind first */
	cd->isize = (uint32_t)w[7];	 /* instruction_size */
	if ((cd->kind != KIND_TURBOFAN && cd->kind != KIND_MAGLEV) || !cd->isize ||
	    cd->isize > (64u << 20) || cd->istart < 4096 || !type_of(v, spt, &type) ||
	    type != (unsigned)m->type_byte_array || !field(v, spt, m->array_length, &len) ||
	    !is_smi(v, len) || smi(len) <= 0 || smi(len) > CHUNK)
		return "not optimized code";
	b = v->chunk;
	if (!rd(v, spt - 1 + (uint64_t)m->array_data, b, (size_t)smi(len)))
		return "no positions";
	cd->off = kp_xmalloc(MAX_POSITIONS * sizeof(*cd->off));
	cd->pos = kp_xmalloc(MAX_POSITIONS * sizeof(*cd->pos));
	while (i < (size_t)smi(len) && cd->n < MAX_POSITIONS) {
		int64_t d, p;

		if (!vlq(b, (size_t)smi(len), &i, &d) || !vlq(b, (size_t)smi(len), &i, &p))
			return "positions not as expected";
		off += d < 0 ? -d - 1 : d; /* the sign says whether a statement */
		pos += p;
		if (off < 0 || off > (int64_t)cd->isize || (cd->n && off < cd->off[cd->n - 1]))
			return "positions not as expected";
		cd->off[cd->n] = (uint32_t)off;
		cd->pos[cd->n++] = (uint64_t)pos;
	}
	if (!cd->n)
		return "no positions";
	cd->off = kp_xrealloc(cd->off, cd->n * sizeof(*cd->off));
	cd->pos = kp_xrealloc(cd->pos, cd->n * sizeof(*cd->pos));
	cd->names = kp_xcalloc((size_t)cd->n * (MAX_INLINE + 1), sizeof(*cd->names));
	cd->nnames = kp_xcalloc(cd->n, 1);
	v->code_bytes += (size_t)cd->n * (sizeof(*cd->off) + sizeof(*cd->pos) + 1 +
					  (MAX_INLINE + 1) * sizeof(*cd->names));
	return NULL;
}

static struct code *code_get(struct kp_v8 *v, uint64_t addr)
{
	uint64_t i;
	struct code cd = {.addr = addr};

	if (kp_u64map_get(&v->code_index, addr, &i))
		return i ? &v->codes[i - 1] : NULL;
	if (code_read(v, &cd)) {
		free(cd.off);
		free(cd.pos);
		kp_u64map_put(&v->code_index, addr, 0);
		return NULL;
	}
	if (v->ncodes == v->codes_cap) {
		v->codes_cap = v->codes_cap ? 2 * v->codes_cap : 16;
		v->codes = kp_xrealloc(v->codes, v->codes_cap * sizeof(*v->codes));
	}
	v->codes[v->ncodes] = cd;
	kp_u64map_put(&v->code_index, addr, ++v->ncodes);
	return &v->codes[v->ncodes - 1];
}

/* V8 11's SourcePosition: bit 0 external, then 30 bits of script offset
 * and 16 of inlining id, each stored plus one. */
static int64_t pos_offset(uint64_t p)
{
	return (int64_t)(p >> 1 & 0x3fffffff) - 1;
}

static int pos_inlining(uint64_t p)
{
	return (int)(p >> 31 & 0xffff) - 1;
}

/* "JS:<mk>name script:line" of shared info sfi at script offset off. */
static char *describe_at(struct kp_v8 *v, uint64_t sfi, int64_t off, char mk)
{
	char name[4 * NAME_CHARS + 1], script[4 * SCRIPT_CHARS + 1];
	uint64_t nos, scr;
	uint32_t line;
	unsigned type;
	size_t len;
	char *s;

	if (!type_of(v, sfi, &type) || type != (unsigned)v->m.type_sfi ||
	    !field(v, sfi, v->m.sfi_name_or_scope, &nos) ||
	    sfi_describe(v, sfi, nos, name, script, &scr, &line))
		return NULL;
	line = scr ? script_line(v, scr, off) : 0;
	len = strlen(name) + strlen(script) + 20;
	s = kp_xmalloc(len);
	if (script[0] && line)
		snprintf(s, len, "JS:%c%s %s:%u", mk, name, script, line);
	else if (script[0])
		snprintf(s, len, "JS:%c%s %s", mk, name, script);
	else
		snprintf(s, len, "JS:%c%s", mk, name);
	return s;
}

/* The names of position k of cd, function sfi's code: made from the
 * deoptimization data's inlining positions and literals (each checked);
 * false when they do not check out. */
static bool code_names(struct kp_v8 *v, struct code *cd, uint32_t k, uint64_t sfi)
{
	const struct kp_v8meta *m = &v->m;
	char **out = cd->names + (size_t)k * (MAX_INLINE + 1);
	uint64_t p = cd->pos[k], sfis[MAX_INLINE + 1], ipa = 0, lits = 0, len;
	int64_t offs[MAX_INLINE + 1];
	unsigned type;
	size_t n = 0;
	int inl = pos_inlining(p);

	if (inl >= 0 &&
	    (!type_of(v, cd->deopt, &type) || type != (unsigned)m->type_fixed_array ||
	     !field(v, cd->deopt, m->array_data + 7 * 8, &ipa) ||
	     !field(v, cd->deopt, m->array_data + 2 * 8, &lits) || !type_of(v, ipa, &type) ||
	     type != (unsigned)m->type_byte_array || !type_of(v, lits, &type) ||
	     (type != (unsigned)m->type_weak_fixed_array && type != (unsigned)m->type_fixed_array)))
		return false;
	/* innermost first: each inlined function at its position, then its
	 * caller at the call's */
	while (inl >= 0) {
		unsigned char ip[16];
		uint64_t ilen, llen, f;
		int32_t id;

		if (n == MAX_INLINE || !field(v, ipa, m->array_length, &ilen) || !is_smi(v, ilen) ||
		    (uint64_t)(inl + 1) * 16 > (uint64_t)smi(ilen) ||
		    !rd(v, ipa - 1 + (uint64_t)m->array_data + (uint64_t)inl * 16, ip, sizeof(ip)))
			return false;
		id = (int32_t)u32_at(ip + 8);
		if (!field(v, lits, m->array_length, &llen) || !is_smi(v, llen) || id < 0 ||
		    id >= smi(llen) || !field(v, lits, m->array_data + (int64_t)id * 8, &f))
			return false;
		sfis[n] = f & ~(uint64_t)2; /* a weak reference's tag */
		offs[n++] = pos_offset(p);
		memcpy(&p, ip, 8);
		inl = pos_inlining(p);
	}
	sfis[n] = sfi;
	offs[n++] = pos_offset(p);
	(void)len;
	for (size_t j = 0; j < n; j++) {
		char *s = describe_at(v, sfis[n - 1 - j], offs[n - 1 - j],
				      cd->kind == KIND_MAGLEV ? '+' : '*');

		if (!s) {
			for (size_t q = 0; q < j; q++) {
				free(out[q]);
				out[q] = NULL;
			}
			return false;
		}
		out[j] = s;
		v->code_bytes += strlen(s) + 1;
	}
	cd->nnames[k] = (uint8_t)n;
	return true;
}

/* The names of the optimized frame at pc (a return address when ret) of
 * function e whose code field is code_addr: outermost first, *n of them;
 * NULL where its code is not that (older code) or does not check out. */
static char *const *optimized_names(struct kp_v8 *v, const struct entry *e, uint64_t code_addr,
				    uint64_t pc, bool ret, size_t *n)
{
	struct code *cd;
	uint64_t off;
	uint32_t lo = 0, hi;

	if (!v->m.fn_proto || !v->m.code_positions || !v->m.type_byte_array ||
	    !is_obj(v, code_addr) || !(cd = code_get(v, code_addr)))
		return NULL;
	if (ret)
		pc--;
	if (pc < cd->istart || pc - cd->istart >= cd->isize)
		return NULL;
	off = pc - cd->istart;
	/* the last position at or before the instruction */
	hi = cd->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (cd->off[mid] <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	lo--;
	if (!cd->nnames[lo] && !code_names(v, cd, lo, e->sfi))
		return NULL;
	*n = cd->nnames[lo];
	return cd->names + (size_t)lo * (MAX_INLINE + 1);
}

const char *const *kp_v8_inlined(const struct kp_v8 *v, size_t i, size_t *n)
{
	*n = i < MAX_FRAMES ? v->ninl[i] : 0;
	return *n ? v->inl[i] : NULL;
}

/* ---- frames ---- */

const char kp_v8_drop[] = "";

/* The word at addr of the sampled stack: from the copy when it holds it. */
static bool stack_word(struct kp_v8 *v, const struct kp_v8_stack *st, uint64_t addr, uint64_t *w)
{
	if (st->stack && addr >= st->sp && addr - st->sp <= st->stack_len &&
	    st->stack_len - (addr - st->sp) >= 8) {
		memcpy(w, st->stack + (addr - st->sp), 8);
		return true;
	}
	return rd(v, addr, w, 8);
}

/* Whether the function in the frame at fp has the optimized code the
 * sampled ip is in: then fp is the leaf's own frame, not its caller's
 * (which a leaf in its prologue would leave). */
static bool leaf_owns(struct kp_v8 *v, const struct kp_v8_stack *st, uint64_t fp)
{
	uint64_t fn, w[8], i, dummy;
	size_t at = code_word(v);
	struct code *cd;

	if (!at || !stack_word(v, st, fp + (uint64_t)v->m.fp_function, &fn) || !is_obj(v, fn))
		return false;
	/* a function cached and checked after this sample: its code as then
	 * read; else one read: a map known as a function's, and its code */
	if (kp_u64map_get(&v->index, fn, &i) && !v->e[i - 1].not_function &&
	    checked_for(st, v->e[i - 1].checked)) {
		w[0] = v->e[i - 1].map;
		w[at] = v->e[i - 1].code;
	} else if (!rd(v, fn - 1, w, (at + 1) * 8)) {
		return false;
	}
	if (!kp_u64map_get(&v->fn_maps, w[0], &dummy) || !is_obj(v, w[at]) ||
	    !(cd = code_get(v, w[at])))
		return false;
	return st->ips[0] >= cd->istart && st->ips[0] - cd->istart < cd->isize;
}

/* The frame pointer of each frame of st (0: not found), by the chain of
 * saved frame pointers from the sampled one: a frame's fp is the one
 * whose saved return address is the next frame's ip. The chain goes up
 * the stack strictly; a link that matches no frame near the last one
 * ends it. */
static void frame_pointers(struct kp_v8 *v, const struct kp_v8_stack *st, uint64_t *fps, size_t n,
			   bool *suspect)
{
	uint64_t fp = st->fp;
	size_t k = 0;

	*suspect = false;
	memset(fps, 0, n * sizeof(*fps));
	for (int steps = 0; steps < MAX_FRAMES && k + 1 < n; steps++) {
		uint64_t next, ret;
		size_t j;

		if (fp < st->sp || fp % 8 || !stack_word(v, st, fp, &next) ||
		    !stack_word(v, st, fp + 8, &ret))
			return;
		/* the leaf may not have set its frame up yet: then fp is its
		 * caller's, and a frame or two may be skipped */
		for (j = k; j + 1 < n && j < k + 3; j++)
			if (st->ips[j + 1] == ret)
				break;
		if (j + 1 >= n || j >= k + 3 || st->ips[j + 1] != ret)
			return;
		/* a JIT leaf whose "caller" is other code, which the walk took
		 * from a stale word at sp: fp may be the leaf's own (told by
		 * its function slot, kp_v8_name_frames) */
		if (k == 0 && j == 1 && st->code[0] == KP_V8_JIT && st->code[1] == KP_V8_NOT_JS) {
			*suspect = true;
			j = 0;
		} else if (k == 0 && j == 1 && st->code[0] == KP_V8_JIT &&
			   st->code[1] == KP_V8_BUILTIN && leaf_owns(v, st, fp)) {
			*suspect = true; /* a builtin (CEntry) the walk took: told by the code */
			j = 0;
		}
		fps[j] = fp;
		if (*suspect)
			j = 1;
		k = j + 1;
		if (next <= fp)
			return;
		fp = next;
	}
}

static const char *unknown_name(const char *why)
{
	static const char *const known[] = {
		"no shared function info",
		"shared function info not readable",
		"name not readable",
		"name of an unexpected type",
		"script name not readable",
		"scope info not readable",
		"scope info not as expected",
		"string nested too deep",
		"string not readable",
		"name is not a string",
		"string length out of range",
		"external string",
		"function moved",
	};
	static char names[sizeof(known) / sizeof(known[0])][64];

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(why, known[i]) == 0) {
			if (!names[i][0])
				snprintf(names[i], sizeof(names[i]), "[unknown: v8: %s]", why);
			return names[i];
		}
	return "[unknown: v8]";
}

/* The cached entry of function fn, checked against the words of it
 * (its map, shared info and context): read after now, or, when !read,
 * the entry's own (checked by an earlier read). NULL when not cached or
 * changed. */
static struct entry *cached(struct kp_v8 *v, uint64_t fn, const uint64_t *words, bool read,
			    uint64_t now)
{
	uint64_t i;
	struct entry *e;

	if (!kp_u64map_get(&v->index, fn, &i))
		return NULL;
	e = &v->e[i - 1];
	if (e->not_function ? words[0] != e->map
			    : words[0] != e->map || words[v->m.fn_shared / 8] != e->sfi ||
				      words[v->m.fn_context / 8] != e->context) {
		kp_u64map_del(&v->index, fn);
		return NULL;
	}
	if (read) {
		/* the latest check serves the most samples (0: a read at a
		 * time not known, which leaves the last known one) */
		if (now > e->checked)
			e->checked = now;
		e->code = code_word(v) ? words[code_word(v)] : 0;
	}
	return e;
}

/* Whether a frame's context ctx is function e's, or a block's inside it
 * (a few links of previous contexts up): else the function slot's
 * address holds another function than the frame's (V8 moved the frame's
 * since the sample, and put this one there). */
static bool context_of(struct kp_v8 *v, const struct kp_v8_stack *st, uint64_t ctx,
		       const struct entry *e)
{
	uint64_t block = ctx, k;

	if (ctx == e->context)
		return true;
	/* a block found inside it by a read made after this sample */
	if (kp_u64map_get(&v->block_index, block, &k) && v->blocks[k - 1].outer == e->context &&
	    checked_for(st, v->blocks[k - 1].checked))
		return true;
	for (int i = 0; i < 4 && is_obj(v, ctx); i++) {
		if (ctx == e->context) {
			if (!st->now || v->nblocks >= MAX_CACHE)
				return true;
			if (!kp_u64map_get(&v->block_index, block, &k)) {
				if (v->nblocks == v->blocks_cap) {
					v->blocks_cap = v->blocks_cap ? 2 * v->blocks_cap : 64;
					v->blocks = kp_xrealloc(v->blocks,
								v->blocks_cap * sizeof(*v->blocks));
				}
				kp_u64map_put(&v->block_index, block, k = ++v->nblocks);
			}
			v->blocks[k - 1] = (struct block){e->context, st->now};
			return true;
		}
		if (!field(v, ctx, v->m.array_data + v->m.context_prev * 8, &ctx))
			return false;
	}
	return false;
}

/* A new function (words: its first words, read) of a shared info named
 * before: named as that one, once its map is a function's map seen
 * before and the shared info still has the name it had (one read, where
 * reading the function anew takes a dozen: a closure made at each call,
 * an async function's resolve closures). false when not so. */
static bool from_shared(struct kp_v8 *v, const struct kp_v8_stack *st, uint64_t fn,
			const uint64_t *words, struct entry *out)
{
	uint64_t i, nos, dummy;
	struct entry *s;

	if (!kp_u64map_get(&v->fn_maps, words[0], &dummy) ||
	    !kp_u64map_get(&v->by_sfi, words[v->m.fn_shared / 8], &i))
		return false;
	s = &v->e[i - 1];
	if (s->not_function)
		return false;
	/* the name word read after the sample: now, or for an earlier one */
	if (!checked_for(st, s->sfi_checked)) {
		if (!field(v, s->sfi, v->m.sfi_name_or_scope, &nos) || nos != s->nos)
			return false;
		if (st->now > s->sfi_checked)
			s->sfi_checked = st->now;
	}
	*out = *s;
	out->fn = fn;
	out->map = words[0];
	out->context = words[v->m.fn_context / 8];
	out->base = kp_xstrdup(s->base);
	memset(out->named, 0, sizeof(out->named));
	return true;
}

static struct entry *cache_add(struct kp_v8 *v, const struct entry *in)
{
	uint64_t old;

	if (kp_u64map_get(&v->index, in->fn, &old)) {
		struct entry *e = &v->e[old - 1];

		free(e->base);
		for (int k = 0; k < 3; k++)
			free(e->named[k]);
		*e = *in;
		return e;
	}
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 256;
		v->e = kp_xrealloc(v->e, v->cap * sizeof(*v->e));
	}
	v->e[v->n] = *in;
	kp_u64map_put(&v->index, in->fn, ++v->n);
	if (!in->not_function) {
		kp_u64map_put(&v->by_sfi, in->sfi, v->n);
		kp_u64map_put(&v->fn_maps, in->map, 1);
	}
	return &v->e[v->n - 1];
}

/* The name of e for a frame with marker mk ('~', '^', '*'). */
static const char *marked(struct entry *e, char mk)
{
	int k = mk == '~' ? 0 : mk == '^' ? 1 : 2;

	if (!e->named[k]) {
		size_t len = strlen(e->base) + 5;

		e->named[k] = kp_xmalloc(len);
		snprintf(e->named[k], len, "JS:%c%s", mk, e->base);
	}
	return e->named[k];
}

/* The name of a JavaScript frame (frame pointer fp, running code) whose
 * slots hold function fn and context ctx, w the function's first words
 * as read this sample: NULL where the frame keeps its name. */
static const char *frame_name(struct kp_v8 *v, const struct kp_v8_stack *st, size_t i, uint64_t fp,
			      uint8_t code, uint64_t fn, uint64_t ctx, const uint64_t *w, bool read)
{
	struct entry *e = cached(v, fn, w, read, st->now), tmp;
	uint64_t bc = 0;
	bool has_bc;

	v->st.frames++;
	if (e && e->not_function)
		return NULL;
	if (e) {
		v->st.hits++;
	} else if (from_shared(v, st, fn, w, &tmp)) {
		v->st.hits++;
		tmp.checked = read ? st->now : 0;
		tmp.code = read && code_word(v) ? w[code_word(v)] : 0;
		e = cache_add(v, &tmp);
	} else {
		const char *why = function_read(v, fn, &tmp);

		tmp.checked = tmp.sfi_checked = st->now; /* function_read's reads are after it */
		tmp.code = read && code_word(v) ? w[code_word(v)] : 0;

		if (why == not_readable || why == not_function) {
			/* a frame kept as it is, by its map (0: not readable, a
			 * slot that held a young object's address, freed since) */
			free(tmp.base);
			tmp.base = NULL;
			tmp.not_function = true;
			cache_add(v, &tmp);
			return NULL;
		}
		if (why) {
			free(tmp.base);
			v->st.unknown++;
			return unknown_name(why);
		}
		e = cache_add(v, &tmp);
	}
	/* a builtin running a function of no script (forEach) keeps its
	 * own name */
	if (code == KP_V8_BUILTIN && !e->has_script)
		return NULL;
	has_bc = e->bytecode && stack_word(v, st, fp + (uint64_t)v->m.fp_bytecode_array, &bc) &&
		 bc == e->bytecode;
	if (!context_of(v, st, ctx, e) || (code == KP_V8_BUILTIN && !has_bc)) {
		/* not the frame's function, or a builtin's frame of another
		 * shape than the interpreter's: the builtin keeps its name */
		if (code != KP_V8_JIT)
			return NULL;
		v->st.unknown++;
		return unknown_name("function moved");
	}
	if (code == KP_V8_JIT && !has_bc && v->m.fn_proto) {
		/* optimized code: the sampled line, and what it inlined */
		size_t n;
		char *const *on = optimized_names(v, e, e->code, st->ips[i], i > 0, &n);

		if (on) {
			v->inl[i] = (const char *const *)on + 1;
			v->ninl[i] = (uint8_t)(n - 1);
			return on[0];
		}
	}
	return marked(e, code == KP_V8_BUILTIN ? '~' : has_bc ? '^' : '*');
}

void kp_v8_name_frames(struct kp_v8 *v, const struct kp_v8_stack *st, const char **names)
{
	const struct kp_v8meta *m = &v->m;
	size_t n = st->n < MAX_FRAMES ? st->n : MAX_FRAMES;
	uint64_t fps[MAX_FRAMES], fns[MAX_FRAMES], ctxs[MAX_FRAMES], addrs[MAX_FRAMES];
	uint64_t words[MAX_FRAMES * 8], got_words[MAX_FRAMES * 8];
	size_t idx[MAX_FRAMES], toread[MAX_FRAMES], nfn = 0, nread = 0, got;
	bool read[MAX_FRAMES];
	int64_t last = m->fn_shared > m->fn_context ? m->fn_shared : m->fn_context;
	size_t wlen;
	bool any = false, suspect;

	if (m->fn_proto && m->fn_proto - 8 > last)
		last = m->fn_proto - 8; /* the function's code, for optimized frames */
	wlen = (size_t)last + 8;
	memset(v->ninl, 0, sizeof(v->ninl));
	for (size_t i = 0; i < st->n; i++)
		names[i] = NULL;
	for (size_t i = 0; i < n && !any; i++)
		any = st->code[i] != KP_V8_NOT_JS;
	if (!any)
		return;
	if (v->n >= MAX_CACHE)
		cache_clear(v);
	if (v->ncodes >= MAX_CODES || v->code_bytes > CODE_BYTES)
		codes_clear(v);
	v->budget = MAX_READS;
	v->bytes_budget = MAX_BYTES;
	frame_pointers(v, st, fps, n, &suspect);
	/* each JavaScript frame's function: a tagged context where other
	 * frames keep their type's marker */
	for (size_t i = 0; i < n; i++) {
		uint64_t ctx, fn;

		if (!fps[i] || st->code[i] == KP_V8_NOT_JS ||
		    !stack_word(v, st, fps[i] + (uint64_t)m->fp_context, &ctx) || !is_obj(v, ctx) ||
		    !stack_word(v, st, fps[i] + (uint64_t)m->fp_function, &fn))
			continue;
		if (!is_obj(v, fn))
			continue;
		fns[nfn] = fn;
		ctxs[nfn] = ctx;
		idx[nfn++] = i;
	}
	if (!nfn || wlen > 8 * sizeof(words[0]))
		return;
	/* the cache's check: each function's first words as read after the
	 * sample was taken, all at once; or, for a function found unchanged
	 * by a read made for an earlier sample but after this one was taken
	 * (a round's samples are named after the round), as then found */
	memset(words, 0, nfn * 8 * sizeof(words[0]));
	for (size_t f = 0; f < nfn; f++) {
		uint64_t k;
		const struct entry *e;

		read[f] = true;
		if (kp_u64map_get(&v->index, fns[f], &k) &&
		    checked_for(st, (e = &v->e[k - 1])->checked)) {
			uint64_t *w = words + f * 8;

			read[f] = false;
			v->st.shared++;
			w[0] = e->map;
			if (!e->not_function) {
				w[m->fn_shared / 8] = e->sfi;
				w[m->fn_context / 8] = e->context;
				if (code_word(v))
					w[code_word(v)] = e->code;
			}
			continue;
		}
		addrs[nread] = fns[f] - 1;
		toread[nread++] = f;
	}
	got = 0;
	if (nread && v->mem.readv && v->budget) {
		v->budget--;
		v->st.reads++;
		got = v->mem.readv(v->mem.arg, addrs, wlen, got_words, nread);
	}
	for (size_t r = 0; r < nread; r++)
		if (r < got || rd(v, addrs[r], (char *)got_words + r * wlen, wlen))
			memcpy(words + toread[r] * 8, (char *)got_words + r * wlen, wlen);
	for (size_t f = 0; f < nfn; f++) {
		size_t i = idx[f];

		names[i] = frame_name(v, st, i, fps[i], st->code[i], fns[f], ctxs[f], words + f * 8,
				      read[f]);
		if (i == 0 && suspect && names[0] && strncmp(names[0], "JS:", 3) == 0)
			names[1] = kp_v8_drop; /* the leaf's frame is set up: no caller between */
	}
}
